"""The shared fixture corpus (tests/fixtures/manifest.json, schema in
tests/fixtures/README.md) replayed through Python: the same views, reports and
index entries as the Rust replay (core/tests/fixtures.rs)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Mapping
from typing import Any

import pytest

import sessionkit

FIXTURES = Path(__file__).parents[1] / "fixtures"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "manifest.json").read_text())

REASON_KINDS = [
    ("NUL run", "nul"),
    ("invalid UTF-8", "utf8"),
    ("invalid JSON", "json"),
    ("message has no", "noId"),
    ("patch record needs", "badPatch"),
    ("compaction record needs", "badCompaction"),
    ("last line has no newline", "torn"),
]


def reason_kind(reason: str) -> str:
    return next((k for p, k in REASON_KINDS if reason.startswith(p)), f"other: {reason}")


def kind_of(e: sessionkit.SessionkitError) -> str:
    """The manifest's name of an error kind (the Rust `ErrorKind` variant)."""
    return "".join(w.capitalize() for w in e.code.split("_"))


def skipped(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "line": s["line"],
        "offset": s["offset"],
        "length": s["length"],
        "kind": s.get("kind") or reason_kind(s["reason"]),
    }


class Check:
    """Collects mismatches, so that one replay reports all of them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.failures: list[str] = []

    def eq(self, at: str, got: Any, want: Any) -> None:
        if got != want:
            self.failures.append(f"{self.name}: {at}: got {got!r}, want {want!r}")

    def fail(self, what: str) -> None:
        self.failures.append(f"{self.name}: {what}")

    def done(self) -> None:
        assert not self.failures, "\n".join(self.failures)


def ids_or_error(f: Any) -> Any:
    try:
        return [m["id"] for m in f()]
    except sessionkit.SessionkitError as e:
        return {"error": kind_of(e)}


def check_report(c: Check, at: str, report: Mapping[str, Any], want: dict[str, Any]) -> None:
    actual = {
        "skipped": [skipped(s) for s in report["skipped"]],
        "tornTail": skipped(report["tornTail"]) if report["tornTail"] else None,
        "brokenChains": report["brokenChains"],
        "duplicateIds": report["duplicateIds"],
        "unknownRecords": report["unknownRecords"],
        "missingBlobs": report.get("missingBlobs", []),
        "warnings": len(report["warnings"]),
    }
    for k, v in want.items():
        c.eq(f"{at}.{k}", actual[k], v)


def check_view(
    c: Check,
    at: str,
    view: sessionkit.SessionView,
    want: dict[str, Any],
    resume: tuple[sessionkit.Store, str] | None,
) -> None:
    info = view.info()
    if "header" in want:
        h = want["header"]
        if isinstance(h, dict):
            for k, v in h.items():
                c.eq(f"{at}.header.{k}", (info["header"] or {}).get(k), v)
        else:
            c.eq(f"{at}.header", info["header"], h)
    if "head" in want:
        c.eq(f"{at}.head", view.head, want["head"])
    if "messageCount" in want:
        c.eq(f"{at}.messageCount", view.message_count, want["messageCount"])
    if "activePath" in want:
        c.eq(f"{at}.activePath", ids_or_error(view.active_path), want["activePath"])
        if isinstance(want["activePath"], list):
            lazy = [m["id"] for m in view.iter_active_path()]
            c.eq(f"{at}.activePath (iterated)", lazy, want["activePath"])
    if "ui" in want:
        try:
            ui: Any = [[m["id"], m["visible"], m["compacted"]] for m in view.ui_view()]
        except sessionkit.SessionkitError as e:
            ui = {"error": kind_of(e)}
        c.eq(f"{at}.ui", ui, want["ui"])
    if "modelView" in want:
        c.eq(f"{at}.modelView", ids_or_error(view.model_view), want["modelView"])
        if resume is not None:
            store, sid = resume
            got = ids_or_error(lambda: store.model_view(sid))
            c.eq(f"{at}.modelViewResume", got, want["modelView"])
    for case in want.get("modelViewWith", []):
        opts = case["options"]
        got = ids_or_error(
            lambda: view.model_view(last_n=opts.get("lastN"), token_budget=opts.get("tokenBudget"))
        )
        c.eq(f"{at}.modelViewWith {opts}", got, case["ids"])
    for mid, fields in want.get("modelViewMessages", {}).items():
        found = [m for m in view.model_view() if m["id"] == mid]
        if not found:
            c.fail(f"{at}.modelViewMessages.{mid}: not in the model view")
            continue
        for k, v in fields.items():
            c.eq(f"{at}.modelViewMessages.{mid}.{k}", found[0].get(k), v)
    for mid, fields in want.get("messages", {}).items():
        try:
            m = view.message(mid)
        except sessionkit.SessionkitError as e:
            c.fail(f"{at}.messages.{mid}: {e}")
            continue
        for k, v in fields.items():
            c.eq(f"{at}.messages.{mid}.{k}", m.get(k), v)
    if "report" in want:
        check_report(c, f"{at}.report", info["report"], want["report"])
    if "records" in want:
        c.eq(f"{at}.records", [r["type"] for r in view.records()], want["records"])


def check_entry(c: Check, at: str, entry: sessionkit.SessionEntry, want: dict[str, Any]) -> None:
    for k, v in want.items():
        c.eq(f"{at}.{k}", entry.raw.get(k), v)


def format_ms(ms: int) -> str:
    t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def check_open(c: Check, store: sessionkit.Store, sid: str, want: dict[str, Any]) -> None:
    path = Path(store.log_path(sid))
    qpath = Path(f"{path}.corrupt")
    before = path.read_bytes()
    try:
        session = store.open_session(sid)
    except sessionkit.SessionkitError as e:
        c.eq("open.error", kind_of(e), want.get("error"))
        c.eq("open.error leaves the log", path.read_bytes(), before)
        c.eq("open.error writes no quarantine", qpath.exists(), False)
        return
    if "error" in want:
        c.fail(f"open succeeded, expected {want['error']}")
        session.close()
        return
    with session:
        after = path.read_bytes()
        c.eq("open.repairedTail", after != before, want["repairedTail"])
        if after != before:
            c.eq("open: the repair appends one newline", after, before + b"\n")
        if "openReport" in want:
            check_report(c, "open.openReport", session.info()["openReport"], want["openReport"])
        records = [json.loads(x) for x in qpath.read_text().splitlines()] if qpath.exists() else []
        got = []
        for r in records:
            off, n = r["offset"], r["length"]
            if base64.b64decode(r["bytesBase64"]) != before[off : off + n]:
                c.fail(f"quarantine record at {off} does not hold the log's bytes")
            got.append({"line": r["line"], "offset": off, "length": n, "kind": r.get("kind") or reason_kind(r["reason"])})
        c.eq("open.quarantine", got, want["quarantine"])
        if "secondOpen" in want:
            try:
                store.open_session(sid).close()
                c.fail("a second writer was let in")
            except sessionkit.SessionkitError as e:
                c.eq("open.secondOpen", kind_of(e), want["secondOpen"])
        appended = session.append({"role": "user", "content": "appended by the fixture test"})
        c.eq("open.appendParentId", appended["parentId"], want["appendParentId"])
    c.eq("open: an append keeps what was there", path.read_bytes().startswith(after), True)
    if "reread" in want:
        view = store.read_session(sid)
        c.eq("open.reread.head", view.head, appended["id"])
        check_view(c, "open.reread", view, want["reread"], None)


@pytest.mark.parametrize("entry", MANIFEST["logs"], ids=[e["name"] for e in MANIFEST["logs"]])
def test_log_replays_as_the_manifest_says(entry: dict[str, Any], tmp_path: Path) -> None:
    c = Check(entry["name"])
    project = tmp_path / "project"
    project.mkdir()
    store = sessionkit.Store(project, home=tmp_path / "home")
    for dst, src in entry.get("files", {}).items():
        to = Path(store.dir) / dst
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / src, to)
    sid = entry["session"]
    if "lines" in entry:
        # The log's exact text, one string per line (tests/fixtures/README.md).
        text = "".join(line + "\n" for line in entry["lines"])
        (Path(store.dir) / f"{sid}.jsonl").write_bytes(text.encode())
    want = entry["read"]
    try:
        view = store.read_session(sid)
    except sessionkit.SessionkitError as e:
        c.eq("read.error", kind_of(e), want.get("error"))
    else:
        if "error" in want:
            c.fail(f"read succeeded, expected {want['error']}")
        check_view(c, "read", view, want, (store, sid))
    if "listSessions" in entry:
        try:
            store.list_sessions()
            c.fail("list_sessions succeeded")
        except sessionkit.SessionkitError as e:
            c.eq("listSessions.error", kind_of(e), entry["listSessions"]["error"])
    if "index" in entry:
        store.rebuild_index()
        rebuilt = store.session_entry(sid)
        check_entry(c, "index", rebuilt, entry["index"])
        if entry.get("timesFromFileMtime"):
            ms = os.stat(store.log_path(sid)).st_mtime_ns // 1_000_000
            c.eq("index.createdAt", rebuilt.raw["createdAt"], format_ms(ms))
            c.eq("index.updatedAt", rebuilt.raw["updatedAt"], format_ms(ms))
            c.eq("index.created_at", rebuilt.created_at, datetime.fromtimestamp(ms / 1000, timezone.utc))
    if "open" in entry:
        check_open(c, store, sid, entry["open"])
    c.done()


@pytest.mark.parametrize("golden", MANIFEST["stores"], ids=[g["name"] for g in MANIFEST["stores"]])
def test_golden_store_replays_as_the_manifest_says(golden: dict[str, Any], tmp_path: Path) -> None:
    c = Check(golden["name"])
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / golden["home"], home)
    store = sessionkit.Store(golden["projectRoot"], home=home)
    c.eq("projectCode", store.project_code, golden["projectCode"])
    index_path = Path(store.info()["indexPath"])
    index_bytes = index_path.read_bytes()
    listed = store.list_sessions()
    c.eq("indexOrder", [e.id for e in listed], golden["indexOrder"])
    c.eq("listing a fresh index leaves it", index_path.read_bytes(), index_bytes)
    cont = store.continue_session()
    c.eq("continueSession", cont.id if cont else None, golden["continueSession"])
    blobs = {
        p.parent.name + p.name: p.stat().st_size for p in (Path(store.dir) / "blobs").rglob("*") if p.is_file()
    }
    c.eq("blobs", blobs, golden["blobs"])
    store.rebuild_index()
    for s in golden["sessions"]:
        sid = s["session"]
        view = store.read_session(sid)
        check_view(c, f"{sid}.read", view, s["read"], (store, sid))
        stored = next(e for e in listed if e.id == sid)
        check_entry(c, f"{sid}.storedIndex", stored, s["index"])
        check_entry(c, f"{sid}.index", store.session_entry(sid), s["index"])
        for a in s.get("subagents", []):
            agent = a["agentId"]
            metas = [m for m in store.list_subagents(sid) if m["agentId"] == agent]
            c.eq(f"{sid}.subagents.{agent}.meta", metas[0] if metas else None, a["meta"])
            sub = store.read_subagent(sid, agent)
            check_view(c, f"{sid}.subagents.{agent}.read", sub, a["read"], None)
        if "open" in s:
            check_open(c, store, sid, s["open"])
    c.done()


def test_project_codes_and_ids_agree_with_the_manifest() -> None:
    for pc in MANIFEST["projectCodes"]:
        assert sessionkit.project_code(pc["path"]) == pc["code"]


def checkpoints_read(store: sessionkit.Store, thread: str) -> dict[str, Any]:
    """A checkpointer's thread as the manifest spells it (FORMAT.md §24)."""

    def sha(b: bytes) -> str:
        return hashlib.sha256(b).hexdigest()

    records = store._native.checkpoint_list(thread)
    checkpoints: list[dict[str, object]] = [
        {
            "ns": r["ns"],
            "id": r["id"],
            "parentId": r["parent_id"],
            "step": r["metadata"].get("step"),
            "values": {
                ch: {"type": t, "sha256": sha(b), "size": len(b)} for ch, (t, b) in r["values"].items()
            },
            "writes": [[task, ch, idx, sha(v[1])] for task, ch, v, _path, idx in r["writes"]],
        }
        for r in records
    ]
    return {"threadId": records[0]["thread_id"] if records else None, "checkpoints": checkpoints}


@pytest.mark.parametrize("fixture", MANIFEST["checkpointStores"], ids=lambda g: str(g["name"]))
def test_checkpoint_store_replays_as_the_manifest_says(fixture: dict[str, Any], tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / fixture["home"], home)
    store = sessionkit.Store(fixture["projectRoot"], home=home)
    for t in fixture["threads"]:
        assert checkpoints_read(store, t["threadId"]) == t["read"], t["threadId"]
