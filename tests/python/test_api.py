"""The whole API, method by method, as a Python host uses it."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import sessionkit
from sessionkit import RewindMode, Status


def test_version_is_the_crates() -> None:
    cargo = (Path(__file__).parents[2] / "Cargo.toml").read_text()
    assert f'version = "{sessionkit.__version__}"' in cargo
    assert sessionkit._native.version() == sessionkit.__version__


def test_store_info_and_project_code(store: sessionkit.Store, project: Path, home: Path) -> None:
    info = store.info()
    assert info["projectRoot"] == str(project.resolve())
    assert store.project_root == str(project.resolve())
    assert store.project_code == sessionkit.project_code(str(project.resolve()))
    assert store.dir == str(home / "projects" / store.project_code)
    assert info["indexPath"].startswith(store.dir)
    assert store.log_path("abc") == str(Path(store.dir) / "abc.jsonl")
    assert "Store" in repr(store)


def test_messages_round_trip_unknown_fields_as_plain_dicts(store: sessionkit.Store) -> None:
    odd = {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
        "x-custom": {"nested": [1, 2.5, None, True, "é", {"deep": []}]},
        "big": 2**53,
    }
    with store.create_session() as s:
        stored = s.append(odd)
        plain: dict[str, object] = dict(stored)
        assert {k: plain[k] for k in odd} == odd
        assert stored["sessionId"] == s.id and stored["parentId"] is None
        datetime.fromisoformat(stored["timestamp"].replace("Z", "+00:00"))
    got: dict[str, object] = dict(store.read_session(s.id).active_path()[0])
    assert {k: got[k] for k in odd} == odd


def test_stored_messages_load_as_the_stdlib_loads_their_lines(store: sessionkit.Store) -> None:
    # What the package returns is what json.loads makes of the stored line:
    # the same values, types and key order, escapes and edge numbers included.
    odd = {
        "role": "assistant",
        "content": 'quote " backslash \\ newline \n tab \t nul \u0000 é 😀 \u2028',
        "ints": [0, -1, 2**63 - 1, -(2**63), 2**64 - 1],
        "floats": [0.1, -0.0, 1e300, 5e-324, 1.5],
        "ключ": {"": [], "nested": [{}, [[]], None, False]},
        "z": 1,
        "a": 2,
    }
    with store.create_session() as s:
        appended = [s.append(odd), s.append({"role": "user", "content": ""})]
        batch = s.append_batch([{"role": "user", "content": "x" * 5000}])
    # split("\n"), not splitlines(): U+2028 is not a line end in a log.
    lines = Path(store.log_path(s.id)).read_text(encoding="utf-8").split("\n")[:-1]
    by_id = {m["id"]: m for m in map(json.loads, lines) if m.get("type") == "message"}
    for got in [*appended, *batch, *store.read_session(s.id).active_path(), *store.model_view(s.id)]:
        want = by_id[got["id"]]
        assert got == want
        assert list(got) == list(want)
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    first: Any = appended[0]  # fields the format does not define
    assert first["ints"][4] == 2**64 - 1 and str(first["floats"][1]) == "-0.0"


def test_rewind_turns_and_erase(store: sessionkit.Store) -> None:
    with store.create_session(id="t") as s:
        for i in range(3):
            s.append({"role": "user", "content": f"q{i}"})
            s.append({"role": "assistant", "content": f"a{i}"})
        with pytest.raises(sessionkit.InvalidInputError, match="3 user input"):
            s.rewind_turns(4)
        s.rewind_turns(2)
        assert [m["content"] for m in s.active_path()] == ["q0", "a0"]
        fresh = s.erase()
    assert s.closed and fresh.id == "t" and fresh.active_path() == []
    with fresh:
        fresh.append({"role": "user", "content": "again"})
    text = Path(store.log_path("t")).read_text(encoding="utf-8")
    assert "q0" not in text and "again" in text
    with pytest.raises(sessionkit.InvalidInputError, match="closed"):
        s.erase()


def test_create_open_list_rename_delete(store: sessionkit.Store) -> None:
    before = datetime.now(timezone.utc)
    with store.create_session(id="s-1", title="First") as s:
        assert s.id == "s-1"
        q = s.append({"role": "user", "content": "question"})
        a = s.append({"role": "assistant", "content": "answer"})
        assert a["parentId"] == q["id"] and s.head == a["id"]
        assert s.entry.message_count == 2
        assert s.pruned == []
        assert s.info()["path"] == s.path == store.log_path("s-1")
        assert s.open_report["skipped"] == []
    entry = store.session_entry("s-1")
    assert isinstance(entry, sessionkit.SessionEntry)
    assert (entry.title, entry.status, entry.message_count) == ("First", Status.PENDING, 2)
    assert entry.created_at >= before.replace(microsecond=0) and entry.updated_at >= entry.created_at
    assert entry.last_assistant_reply == "answer"
    assert [e.id for e in store.list_sessions()] == ["s-1"]
    assert store.session_ids() == ["s-1"]
    assert store.resolve_session("s-") == "s-1"
    cont = store.continue_session()
    assert cont is not None and cont.id == "s-1"
    assert store.rename_session("s-1", "Renamed").title == "Renamed"
    with store.open_session("s-1") as again:
        assert again.head == a["id"]
        assert again.rename("Third").title == "Third"
        st = again.update_state({"status": "completed", "activeTokens": 12})
        assert (st.status, st.active_tokens) == (Status.COMPLETED, 12)
    store.delete_session("s-1")
    assert store.list_sessions() == []
    with pytest.raises(sessionkit.NotFoundError):
        store.session_entry("s-1")


def test_open_or_create_keeps_a_given_id(store: sessionkit.Store) -> None:
    with store.open_or_create_session("chat-7") as s:
        s.append({"role": "user", "content": "hi"})
    with store.open_or_create_session("chat-7") as s:
        assert len(s.active_path()) == 1


def test_batch_patch_head_and_views(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        sys_m, u1, a1 = s.append_batch(
            [
                {"role": "system", "content": "be terse"},
                {"role": "user", "content": "one"},
                {"role": "assistant", "content": "1", "visible": False},
            ]
        )
        s.patch_message(a1["id"], {"meta": {"usage": {"output_tokens": 3}}})
        s.set_head(u1["id"])
        a2 = s.append({"role": "assistant", "content": "uno"})
        s.resume_at(a2["id"])
        s.sync()
        s.flush_index()
        assert s.fsync_count == 0  # durability "never"
        assert [m["id"] for m in s.active_path()] == [sys_m["id"], u1["id"], a2["id"]]
        assert [m["id"] for m in s.model_view(last_n=1)] == [sys_m["id"], a2["id"]]
        view = s.read()
    assert view.head == a2["id"] and view.message_count == 4
    assert view.header is not None and view.header["id"] == s.id
    assert view.message(a1["id"])["meta"] == {"usage": {"output_tokens": 3}}
    assert view.resolve_message(a1["id"][:-2]) == a1["id"]
    assert [m["id"] for m in view] == [sys_m["id"], u1["id"], a2["id"]]
    ui = list(view.iter_ui_view())
    assert all(m["visible"] is True and m["compacted"] is False for m in ui)
    assert [m["id"] for m in view.iter_model_view(token_budget=10_000)] == [
        m["id"] for m in view.model_view()
    ]
    it = view.iter_active_path()
    assert it.__length_hint__() == 3  # type: ignore[attr-defined]
    assert next(it)["id"] == sys_m["id"]
    assert len(view.tree()) == 4
    branches = view.branches()
    assert len(branches) == 2 and sum(1 for b in branches if b["isActive"]) == 1
    assert view.report["skipped"] == [] and view.records() == view.info()["records"]
    assert len(store.model_view(s.id, last_n=1)) == 2


def test_fork_and_lineage(store: sessionkit.Store) -> None:
    with store.create_session(title="source") as s:
        first = s.append({"role": "user", "content": "plan A"})
        s.append({"role": "assistant", "content": "failed"})
        with s.fork(at=first["id"]) as f:
            assert len(f.active_path()) == 1
            assert f.entry.forked_from == sessionkit.Lineage(s.id, first["id"])
        with store.fork_session(s.id, title="copy") as g:
            assert len(g.active_path()) == 2 and g.entry.title == "copy"


def test_compaction(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        for i in range(6):
            s.append({"role": "user", "content": f"question {i} " + "x" * 400})
            s.append({"role": "assistant", "content": f"answer {i} " + "y" * 400})
        assert s.select_compaction(1_000_000) is None
        plan = s.select_compaction(300, keep_last_turns=1, summary_tokens=50)
        assert plan is not None and len(plan["replaces"]) >= 2
        summary = s.apply_compaction(plan["replaces"], "The user asked six questions.")
        assert summary["role"] == "system"
        model = s.model_view()
        assert model[0]["id"] == summary["id"]
        assert len(model) == 12 - len(plan["replaces"]) + 1
        ui = s.read().ui_view()
        assert sum(1 for m in ui if m["compacted"]) == len(plan["replaces"])


def test_subagents(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        with s.spawn_subagent("helper", {"task": "search"}) as a:
            assert (a.id, a.session_id) == ("helper", s.id)
            a.append({"role": "user", "content": "find x"})
            a.append_batch([{"role": "assistant", "content": "found"}])
            assert len(a.read().active_path()) == 2
            a.finish({"answer": "x"})
        assert a.closed
        with s.open_subagent("helper") as again:
            again.append({"role": "user", "content": "more"})
    subs = store.list_subagents(s.id)
    assert [x["agentId"] for x in subs] == ["helper"]
    assert subs[0]["status"] == "completed"
    assert len(store.read_subagent(s.id, "helper").active_path()) == 3


def test_file_history_rewind_and_restore(store: sessionkit.Store, project: Path) -> None:
    notes = project / "notes.txt"
    notes.write_text("one\n")
    with store.create_session() as s:
        s.track_read(["notes.txt"])
        ask = s.user_input({"content": "Add a line"})
        assert ask["checkpointHash"]
        before = s.before_edit([Path("notes.txt")])
        notes.write_text("one\ntwo\n")
        after = s.after_edit(["notes.txt"])
        assert before != after and s.last_snapshot() == after
        assert s.tracked_files() == ["notes.txt"]
        assert s.external_changes(["notes.txt"])[0]["path"] == "notes.txt"
        s.ensure_unchanged(["notes.txt"])
        assert [c["messageId"] for c in s.undo_candidates()] == [ask["id"]]
        plan = s.rewind_plan(ask["id"])
        assert plan["files"][0]["path"] == "notes.txt"
        assert plan["files"][0]["action"] == "restore"
        assert notes.read_text() == "one\ntwo\n"  # a dry run changes nothing
        preview = s.rewind_preview(ask["id"], RewindMode.CONVERSATION)
        assert preview["plan"] is None and preview["head"]["to"] is None
        assert s.snapshot_plan(after)["files"] == []
        done = s.rewind(ask["id"], "files")
        assert notes.read_text() == "one\n"
        assert done["undoSnapshot"] is not None
        s.restore_snapshot(done["undoSnapshot"])
        assert notes.read_text() == "one\ntwo\n"
        notes.write_text("changed outside\n")
        with pytest.raises(sessionkit.ConflictError, match="notes.txt"):
            s.ensure_unchanged(["notes.txt"])
        with pytest.raises(sessionkit.ConflictError):
            s.rewind(ask["id"], RewindMode.BOTH)
        s.rewind(ask["id"], RewindMode.BOTH, force=True)
        assert notes.read_text() == "one\n" and s.head is None
    assert isinstance(store.file_history_sizes(), dict)
    assert isinstance(store.check_file_history(), dict)
    assert store.prune_orphan_file_history() == []


def test_branch_file_history_of_a_fork(store: sessionkit.Store, project: Path) -> None:
    (project / "a.txt").write_text("a")
    with store.create_session() as s:
        s.track_read(["a.txt"])
        snap = s.before_edit(["a.txt"])
    with store.create_session() as other:
        store.branch_file_history(other.id, snap)
        assert other.last_snapshot() == snap
        with pytest.raises(sessionkit.ConflictError):
            store.branch_file_history(other.id, snap)


def test_doctor_gc_rebuild_export(store: sessionkit.Store) -> None:
    with store.create_session(title="t") as s:
        s.append({"role": "user", "content": "hello"})
        s.append({"role": "assistant", "content": "hi"})
    report = store.doctor()
    assert report["ok"] is True and report["repair"] is False
    assert store.doctor(repair=True)["ok"] is True
    gc = store.gc()
    assert {"bytesFreed", "blobs", "tempFiles"} <= gc.keys()
    assert store.rebuild_index()["sessions"] == 1
    lines = store.export_session(s.id).splitlines()
    assert [json.loads(x)["content"] for x in lines] == ["hello", "hi"]
    md = store.export_session(s.id, sessionkit.ExportFormat.MARKDOWN)
    assert "hello" in md and "hi" in md


def test_durability_option(home: Path, project: Path) -> None:
    store = sessionkit.Store(project, home=home, durability=sessionkit.Durability.ALWAYS)
    with store.create_session() as s:
        s.append({"role": "user", "content": "x"})
        assert s.fsync_count >= 1


def test_every_session_is_kept_by_default(home: Path, project: Path) -> None:
    store = sessionkit.Store(project, home=home, durability="never")
    for i in range(55):
        with store.create_session() as s:
            assert s.pruned == []
    assert len(store.list_sessions()) == 55
    assert store.list_trash() == []


def test_max_sessions_moves_to_the_trash_and_restore_brings_back(
    home: Path, project: Path
) -> None:
    store = sessionkit.Store(project, home=home, max_sessions=1)
    with store.create_session(id="old", title="the old one") as s:
        s.append({"role": "user", "content": "x"})
    with store.create_session(id="new") as s:
        assert s.pruned == ["old"]
    assert [e.id for e in store.list_sessions()] == ["new"]
    (t,) = store.list_trash()
    assert (t["id"], t["reason"], t["title"], t["messageCount"]) == (
        "old",
        "pruned",
        "the old one",
        1,
    )
    assert t["purgeAfter"] > t["trashedAt"]
    assert store.gc()["trashPurged"] == []
    entry = store.restore_session("old")
    assert entry.id == "old" and entry.title == "the old one"
    assert store.list_trash() == []
    assert [m["content"] for m in store.read_session("old").active_path()] == ["x"]
    with pytest.raises(sessionkit.NotFoundError, match="old"):
        store.restore_session("old")
    with pytest.raises(sessionkit.InvalidInputError):
        store.restore_session("../x")


def test_restore_over_a_live_session_is_a_conflict_and_gc_purges(
    home: Path, project: Path
) -> None:
    store = sessionkit.Store(project, home=home, max_sessions=1)
    store.create_session(id="a").close()
    store.create_session(id="b").close()
    store.create_session(id="a").close()
    with pytest.raises(sessionkit.ConflictError, match="a"):
        store.restore_session("a")
    now = sessionkit.Store(project, home=home, max_sessions=1, trash_grace_secs=0)
    assert sorted(now.gc()["trashPurged"]) == ["a", "b"]
    assert now.list_trash() == []


def test_blobs_hold_large_content(home: Path, project: Path) -> None:
    store = sessionkit.Store(project, home=home, blob_threshold=1024)
    big = "z" * 100_000
    with store.create_session() as s:
        s.append({"role": "tool", "content": big, "messageParams": {"tool_call_id": "c"}})
        assert len(Path(s.info()["path"]).read_bytes()) < 10_000
    assert store.read_session(s.id).active_path()[0]["content"] == big


def test_closed_handles_raise_and_close_twice_is_fine(store: sessionkit.Store) -> None:
    s = store.create_session()
    s.close()
    s.close()
    assert s.closed
    with pytest.raises(sessionkit.InvalidInputError, match=f"session {s.id} is closed"):
        s.append({"role": "user", "content": "late"})
    with pytest.raises(ValueError):
        _ = s.head
    with store.open_session(s.id):  # the lock was released
        pass


def test_threads_overlap_in_disk_work(home: Path, project: Path) -> None:
    """asyncio.to_thread runs calls in parallel: the GIL is released.

    Four appends, each on a thread of its own, wait inside the core for a
    session that another handle holds. The holders are released from the event
    loop only after all four have started and a further ``hold`` seconds have
    passed, so the four calls are inside the core together for at least that
    long. Were the GIL held through a call, the loop could not run to release
    the holders: that call would wait out its busy timeout and fail with Busy.
    """
    store = sessionkit.Store(project, home=home, durability="never", busy_timeout_ms=20_000)
    ids: list[str] = []
    for _ in range(4):
        with store.create_session() as created:
            ids.append(created.id)
    shared = [store.open_shared(sid) for sid in ids]
    holders = [store.open_session(sid) for sid in ids]
    hold = 0.5
    started: list[float] = []

    def append(s: sessionkit.Session, k: int) -> sessionkit.Message:
        started.append(time.monotonic())
        return s.append({"role": "user", "content": f"from thread {k}"})

    async def main() -> tuple[float, list[sessionkit.Message]]:
        calls = [asyncio.ensure_future(asyncio.to_thread(append, s, k)) for k, s in enumerate(shared)]
        while len(started) < 4:
            await asyncio.sleep(0.001)
        await asyncio.sleep(hold)
        waiting = [not c.done() for c in calls]
        assert all(waiting), f"a call did not wait for the holder's lock: {waiting}"
        released = time.monotonic()
        for h in holders:
            h.close()
        return released, await asyncio.gather(*calls)

    try:
        released, stored = asyncio.run(main())
    finally:
        for s in [*holders, *shared]:
            if not s.closed:
                s.close()
    # Every call was in progress from the last one's start to the release.
    overlap = released - max(started)
    assert overlap >= hold, (overlap, started, released)
    assert sorted(str(m["content"]) for m in stored) == [f"from thread {k}" for k in range(4)]
    for k, sid in enumerate(ids):
        assert [m["content"] for m in store.read_session(sid).active_path()] == [f"from thread {k}"]


def test_list_page_is_a_slice_of_the_listing_with_the_total(home: Path, project: Path) -> None:
    store = sessionkit.Store(project, home=home, durability="never")
    for i in range(5):
        with store.create_session() as s:
            s.append({"role": "user", "content": f"task {i}"})
    whole = [e.id for e in store.list_sessions()]
    page = store.list_page(limit=2, offset=1)
    assert isinstance(page, sessionkit.SessionPage)
    assert page.total == 5
    assert [e.id for e in page.sessions] == whole[1:3]
    assert all(isinstance(e, sessionkit.SessionEntry) for e in page.sessions)
    assert [e.id for e in store.list_page().sessions] == whole
    assert store.list_page(offset=9).sessions == []
    with pytest.raises(sessionkit.InvalidInputError, match="offset"):
        store.list_page(offset=-1)
