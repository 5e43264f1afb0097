#!/usr/bin/env python3
"""A crash, or an I/O error, at every file-system call of every operation.

Each operation of the store is run by the `sessionkit` CLI under strace, which
stops it at the Nth call of one system call (write, fsync, rename, openat, ...)
for every N until the operation completes untouched:

- ``crash``: SIGKILL before the call runs (what a killed agent leaves behind).
- ``error``: the call fails once with ENOSPC, EIO, EDQUOT or EINTR.
- ``persist``: the call and every later one of its kind fail with EIO.

Every operation runs with ``--json``: when it exits 0, what it answered (the
ids of the messages it appended, the session it created, forked, imported or
pulled, the title, state or head it set) is acknowledged and joins the record the
checks compare against, beside everything the setup acknowledged.

After every stop, before anything repairs the store, the bytes are checked: every
log still begins with every byte it held before the operation, no existing blob
changed, and no blob disappeared (only gc removes blobs, and only those no log
names). Then, through the CLI: the index lists, every acknowledged session is
readable, every acknowledged message is in its log exactly once (no log holds a
message id twice), every acknowledged effect is there, the project's files are
those of before (or, for a rewind, each file is either its before or its after),
nothing appeared outside the store and the project, and the operation, retried,
succeeds, keeps what the stopped run acknowledged, and leaves a store that
`doctor` finds clean. An error must come back as the CLI's IO exit code with the OS error in
its message, never as a panic, an abort or INTERNAL; an error injected into a
call on the stored truth (a log, a blob, a sidecar, the file history) must not
be reported as success.

A run that injects nothing fails: an operation and mode whose calls were counted
and that yields no injection point, or a system call counted and never reached
at its first call. Calls outside the store and the project (the loader, /proc)
are counted and reported apart, and do not count as points.

Without SESSIONKIT_TEST_PG, ``pull`` is reported as skipped, never as passed;
with SESSIONKIT_REQUIRE_PG=1 as well, the run fails.

``--audit`` also reads an uninjected trace of each operation under
``durability: always`` and checks that every write to a log, a sidechain, a blob
or a sidecar is followed by an fsync of that file, and every rename by an fsync
of its directory, before the process exits (FORMAT.md §14 lists the exceptions:
the index, and directory entries of B11).

Usage: run.py [--cli PATH] [--ops a,b] [--modes crash,error,persist]
              [--errnos ENOSPC,EIO,EDQUOT,EINTR] [--max-n N] [--audit] [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

SYSCALLS = [
    "openat", "write", "pwrite64", "writev", "fsync", "fdatasync", "rename",
    "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat",
    "ftruncate", "linkat", "fchmod",
]
ERRNOS = ["ENOSPC", "EIO", "EDQUOT", "EINTR"]
ERRNO_NUMBERS = {"ENOSPC": 28, "EIO": 5, "EDQUOT": 122, "EINTR": 4}
EXIT_IO = 8
EXIT_NOT_FOUND = 3
DURABLE = '{"durability":"always"}'


@dataclass
class Acks:
    """What was acknowledged: the record the checks compare against."""

    # A log (its path under the store directory) -> the ids of the messages
    # acknowledged in it: each must be there exactly once.
    logs: dict[str, list[str]] = field(default_factory=dict)
    sessions: set[str] = field(default_factory=set)  # listed and readable
    gone: set[str] = field(default_factory=set)  # deleted: not readable any more
    # What an answer said that the store must now show: (what, check).
    facts: list[tuple[str, Callable[["Env"], bool]]] = field(default_factory=list)

    def add(self, other: "Acks") -> "Acks":
        out = Acks({k: list(v) for k, v in self.logs.items()}, set(self.sessions),
                   set(self.gone), list(self.facts))
        for k, v in other.logs.items():
            out.logs.setdefault(k, [])
            out.logs[k] += [i for i in v if i not in out.logs[k]]
        out.sessions |= other.sessions
        out.gone |= other.gone
        out.facts += other.facts
        return out


@dataclass
class Ctx:
    """What the setup created: ids, and what was acknowledged."""

    sid: str = ""
    msgs: dict[str, str] = field(default_factory=dict)
    acked: Acks = field(default_factory=Acks)
    extra: dict[str, str] = field(default_factory=dict)
    remote_msgs: list[str] = field(default_factory=list)  # what the other machine pushed


@dataclass
class Op:
    name: str
    argv: Callable[[Ctx], list[str]]
    setup: Callable[["Env", Ctx], None] | None = None
    # What the op's --json answer acknowledges, when it exits 0.
    acks: Callable[[Ctx, object], Acks] | None = None
    deletes: bool = False  # the op removes the base session
    removes_blobs: bool = False  # the op may delete blobs (gc: only those no log names)
    touches_project: bool = False  # a rewind restores a.txt
    repairs_log: bool = False  # doctor --repair cuts the torn tail it set aside
    # Whether the op's effect is already in the store: a retry of an op that a
    # crash stopped after its commit point may then be refused as a repeat.
    done: Callable[["Env", Ctx], bool] | None = None
    # The op reports failures in its report and exits 1 (import: per source;
    # doctor: as problems found); the report must still name the OS error.
    reports: bool = False
    # Modes not run for this op, with why.
    skip: dict[str, str] = field(default_factory=dict)


class Env:
    def __init__(self, cli: str, root: Path) -> None:
        self.cli_path = cli
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.template = root.parent / (root.name + "-template")

    def cli(self, *args: str, inject: list[str] | None = None,
            trace: Path | None = None, durable: bool = True,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        argv = [self.cli_path, "--home", str(self.home), "--project", str(self.project)]
        if durable:
            argv += ["--store-options", DURABLE]
        argv += list(args)
        if inject is not None or trace is not None:
            st = ["strace", "-f", "-qq", "-y", "-e", "trace=" + ",".join(SYSCALLS)]
            for i in inject or []:
                st += ["-e", "inject=" + i]
            st += ["-o", str(trace or os.devnull)]
            argv = st + argv
        return subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=120)

    def ok(self, *args: str, stdin: str | None = None) -> object:
        p = self.cli("--json", *args, stdin=stdin)
        if p.returncode != 0:
            raise RuntimeError(f"setup step {args} failed ({p.returncode}): {p.stderr}")
        return json.loads(p.stdout) if p.stdout.strip() else None

    def save_template(self) -> None:
        shutil.rmtree(self.template, ignore_errors=True)
        shutil.copytree(self.root, self.template, symlinks=True)

    def restore(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.template, self.root, symlinks=True)

    def store_dir(self) -> Path:
        dirs = [d for d in (self.home / "projects").iterdir() if d.is_dir()]
        assert len(dirs) == 1, dirs
        return dirs[0]


def files_under(p: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    if not p.exists():
        return out
    for f in sorted(p.rglob("*")):
        if f.is_file() and not f.is_symlink():
            out[str(f.relative_to(p))] = f.read_bytes()
    return out


def message_counts(log: bytes) -> dict[str, int]:
    """How many message records of each id a log holds."""
    ids: dict[str, int] = {}
    for line in log.split(b"\n"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("type") == "message":
            i = str(rec.get("id"))
            ids[i] = ids.get(i, 0) + 1
    return ids


def message_ids(log: bytes) -> set[str]:
    return set(message_counts(log))


BLOB_REF = re.compile(rb'"sha256":"([0-9a-f]{64})","bytes":')


def blob_digest(path: str) -> str | None:
    """The digest a blob file is named by (blobs/<hh>/<62 hex>), or None."""
    m = re.search(r"(?:^|/)blobs/([0-9a-f]{2})/([0-9a-f]{62})$", path)
    return m.group(1) + m.group(2) if m else None


def named_blobs(files: dict[str, bytes]) -> dict[str, str]:
    """Digest -> a log that names it, over every log and sidechain (live or trash)."""
    out: dict[str, str] = {}
    for path, data in files.items():
        if path.endswith(".jsonl"):
            for d in BLOB_REF.findall(data):
                out.setdefault(d.decode(), path)
    return out


# ---- setup and operations -------------------------------------------------


def base_setup(env: Env) -> Ctx:
    """One session: two user turns (undo points) with a snapshot of an edit."""
    env.project.mkdir(parents=True)
    (env.project / "a.txt").write_text("before\n")
    c = Ctx()
    c.sid = env.ok("new", "--title", "base")["id"]  # type: ignore[index]
    u1 = env.ok("user-input", c.sid, '{"role":"user","content":"edit a.txt"}')
    env.ok("snapshot", "--before", c.sid, "a.txt")
    (env.project / "a.txt").write_text("after\n")
    env.ok("snapshot", "--after", c.sid, "a.txt")
    a1 = env.ok("append", c.sid, '{"role":"assistant","content":"edited a.txt"}')
    u2 = env.ok("user-input", c.sid, '{"role":"user","content":"now the parser"}')
    a2 = env.ok("append", c.sid, '{"role":"assistant","content":"parse_config is in src/main.rs"}')
    # Over the blob threshold: a blob that only this log names.
    t2 = env.ok("append", c.sid, "-", stdin=json.dumps(
        {"role": "assistant", "content": "the build log: " + "y" * 300_000}))
    for k, m in (("u1", u1), ("a1", a1), ("u2", u2), ("a2", a2), ("t2", t2)):
        c.msgs[k] = m["id"]  # type: ignore[index]
    c.acked = Acks(logs={f"{c.sid}.jsonl": list(c.msgs.values())}, sessions={c.sid})
    return c


def age_blobs(env: Env) -> None:
    """Blobs past gc's 15-minute grace (FORMAT §7): only a reference keeps them."""
    old = time.time() - 3600
    blobs = env.store_dir() / "blobs"
    for f in blobs.rglob("*") if blobs.exists() else []:
        if f.is_file():
            os.utime(f, (old, old))


def with_subagent(env: Env, c: Ctx) -> None:
    c.extra["agent"] = env.ok("subagent", "spawn", c.sid)["id"]  # type: ignore[index]


def with_torn_tail(env: Env, c: Ctx) -> None:
    log = env.store_dir() / f"{c.sid}.jsonl"
    with open(log, "ab") as f:
        f.write(b'{"type":"message","id":"torn","role":"user","cont')


def without_index(env: Env, c: Ctx) -> None:
    for name in ("sessions-index.json", "sessions-index.journal"):
        p = env.store_dir() / name
        if p.exists():
            p.unlink()


def with_garbage_history(env: Env, c: Ctx) -> None:
    other = env.ok("new", "--title", "other")["id"]  # type: ignore[index]
    env.ok("user-input", other, '{"role":"user","content":"edit b.txt"}')
    (env.project / "b.txt").write_text("b1\n")
    env.ok("snapshot", "--before", other, "b.txt")
    (env.project / "b.txt").write_text("b2 " * 500 + "\n")
    env.ok("snapshot", "--after", other, "b.txt")
    # A blob that only this session named: garbage once it is deleted.
    env.ok("append", other, "-", stdin=json.dumps(
        {"role": "assistant", "content": "garbage: " + "g" * 300_000}))
    env.ok("delete", other)


def import_file() -> str:
    d = Path(__file__).resolve().parents[1] / "fixtures" / "import" / "claude-code"
    files = sorted(f for f in d.rglob("*.jsonl") if "malformed" not in str(f))
    return str(files[0])


REMOTE = os.environ.get("SESSIONKIT_TEST_PG", "")


def with_remote_session(env: Env, c: Ctx) -> None:
    """A session of the same project pushed by another machine (a home of its
    own, outside what the checks watch): the pull under test brings it here."""
    other = env.root.parent / "machine-a"
    shutil.rmtree(other, ignore_errors=True)

    def a(*args: str, stdin: str | None = None) -> object:
        p = subprocess.run([env.cli_path, "--home", str(other), "--project", str(env.project),
                            "--json", *args], input=stdin, capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"machine A: {args} failed ({p.returncode}): {p.stderr}")
        return json.loads(p.stdout) if p.stdout.strip() else None

    sid = a("new", "--title", "shared")["id"]  # type: ignore[index]
    c.remote_msgs = [
        a("append", sid, '{"role":"user","content":"summarise the build log"}')["id"],  # type: ignore[index]
        # Over the blob threshold, and new to the server: a blob to fetch.
        a("append", sid, "-", stdin=json.dumps(
            {"role": "tool", "content": f"{env.root} " + "x" * 300_000}))["id"],  # type: ignore[index]
        a("append", sid, '{"role":"assistant","content":"it passed"}')["id"],  # type: ignore[index]
    ]
    a("push", sid, "--remote", REMOTE, "--holder", "machine-a")
    c.extra["remote"] = sid


# ---- what an answer acknowledges -----------------------------------------------


def listed_entry(env: Env, sid: str) -> dict[str, object] | None:
    p = env.cli("--json", "list")
    if p.returncode != 0:
        return None
    return next((e for e in json.loads(p.stdout) if e.get("id") == sid), None)


def shows(sid: str, key: str, want: object) -> tuple[str, Callable[[Env], bool]]:
    """A fact: the index lists session `sid` with `key` as answered."""
    def check(env: Env) -> bool:
        e = listed_entry(env, sid)
        return e is not None and e.get(key) == want
    return (f"session {sid} listed with {key} {want!r}", check)


def appended(log: Callable[[Ctx], str]) -> Callable[[Ctx, object], Acks]:
    """An answer that is the stored message, or a batch of them."""
    def acks(c: Ctx, out: object) -> Acks:
        rows = out if isinstance(out, list) else [out]
        return Acks(logs={log(c): [r["id"] for r in rows]})  # type: ignore[index]
    return acks


def entry(*keys: str, messages: Callable[[Ctx], list[str]] | None = None) -> Callable[[Ctx, object], Acks]:
    """An answer that is a session's index entry: the session is there, with the
    fields `keys` as answered (and, for a new session, its log with `messages`)."""
    def acks(c: Ctx, out: object) -> Acks:
        e: dict[str, object] = out  # type: ignore[assignment]
        sid = str(e["id"])
        a = Acks(sessions={sid}, facts=[shows(sid, k, e.get(k)) for k in keys])
        if messages is not None:
            a.logs[f"{sid}.jsonl"] = messages(c)
        return a
    return acks


def imported(c: Ctx, out: object) -> Acks:
    """Each source the report says it imported: its session, with at least the
    messages it added."""
    a = Acks()
    for src in out["sources"]:  # type: ignore[index]
        sid = src.get("sessionId")
        if not sid or src.get("outcome") in ("failed", "changed"):
            continue
        n = int(src.get("messagesAdded", 0))

        def check(env: Env, sid: str = sid, n: int = n) -> bool:
            # The count covers the session's sidechains too (its subagents).
            logs = list((env.home / "projects").glob(f"*/{sid}.jsonl"))
            chains = list((env.home / "projects").glob(f"*/{sid}/subagents/*.jsonl"))
            held = sum(sum(message_counts(f.read_bytes()).values()) for f in logs + chains)
            return len(logs) == 1 and held >= n
        a.facts.append((f"imported session {sid} holds its {n} messages", check))
    return a


def main_log(c: Ctx) -> str:
    return f"{c.sid}.jsonl"


def sub_log(c: Ctx) -> str:
    return f"{c.sid}/subagents/{c.extra['agent']}.jsonl"


def project_file(name: str, want: bytes) -> tuple[str, Callable[[Env], bool]]:
    return (f"{name} restored to {want!r}", lambda env: (env.project / name).read_bytes() == want)


USER = '{"role":"user","content":"one more"}'
OPS: list[Op] = [
    Op("create", lambda c: ["new", "--title", "fresh"],
       acks=entry("title", messages=lambda c: [])),
    Op("append", lambda c: ["append", c.sid, USER], acks=appended(main_log)),
    Op("batch", lambda c: ["append", c.sid,
                           '[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]'],
       acks=appended(main_log)),
    Op("state", lambda c: ["state", c.sid, '{"status":"processing","thinking":"reading"}'],
       acks=entry("status", "thinking")),
    Op("rename", lambda c: ["rename", c.sid, "renamed"], acks=entry("title")),
    Op("user-input", lambda c: ["user-input", c.sid, USER], acks=appended(main_log)),
    Op("snapshot", lambda c: ["snapshot", "--before", c.sid, "a.txt"]),
    Op("compaction", lambda c: ["compact", "apply", c.sid, '"the first turn"',
                                c.msgs["u1"], c.msgs["a1"]],
       acks=appended(main_log),
       done=lambda env, c: b'"type":"compaction"' in (env.store_dir() / f"{c.sid}.jsonl").read_bytes()),
    Op("resume-at", lambda c: ["resume-at", c.sid, c.msgs["a1"]], acks=entry("headId")),
    Op("rewind-files", lambda c: ["rewind", "--files", "--force", "--to", c.msgs["u1"], c.sid],
       acks=lambda c, out: Acks(facts=[project_file("a.txt", b"before\n")]),
       touches_project=True),
    Op("rewind-conversation", lambda c: ["rewind", "--conversation", "--to", c.msgs["u2"], c.sid],
       acks=lambda c, out: Acks(facts=[shows(c.sid, "headId", c.msgs["a1"])])),
    Op("rewind-both", lambda c: ["rewind", "--both", "--force", "--to", c.msgs["u1"], c.sid],
       acks=lambda c, out: Acks(facts=[project_file("a.txt", b"before\n"),
                                       shows(c.sid, "headId", None)]),
       touches_project=True),
    Op("fork", lambda c: ["fork", "--at", c.msgs["a1"], c.sid],
       acks=entry("headId", "messageCount", messages=lambda c: [c.msgs["u1"], c.msgs["a1"]])),
    Op("subagent-spawn", lambda c: ["subagent", "spawn", c.sid],
       acks=lambda c, out: Acks(logs={f"{c.sid}/subagents/{out['id']}.jsonl": []})),  # type: ignore[index]
    Op("subagent-append", lambda c: ["subagent", "append", c.sid, c.extra["agent"],
                                     '{"role":"assistant","content":"sub"}'],
       setup=with_subagent, acks=appended(sub_log)),
    Op("subagent-finish", lambda c: ["subagent", "finish", c.sid, c.extra["agent"], '"done"'],
       setup=with_subagent),
    Op("delete", lambda c: ["delete", c.sid], deletes=True,
       acks=lambda c, out: Acks(gone={out["deleted"]})),  # type: ignore[index]
    Op("gc", lambda c: ["gc"], setup=with_garbage_history, removes_blobs=True),
    Op("doctor-repair", lambda c: ["doctor", "--repair"], setup=with_torn_tail, repairs_log=True,
       reports=True),
    Op("index-rebuild", lambda c: ["list"], setup=without_index,
       acks=lambda c, out: Acks(facts=[(f"the rebuilt index lists {c.sid}",
                                        lambda env: any(e["id"] == c.sid for e in out))])),  # type: ignore[attr-defined]
    Op("import", lambda c: ["import", import_file()], reports=True, acks=imported),
    # Needs the PostgreSQL server of tests/pg/server.sh (SESSIONKIT_TEST_PG).
    # Not `persist`: a write failing for good on every descriptor also fails the
    # PostgreSQL driver's wake-up of its own runtime (an eventfd, which no kernel
    # fails with EIO), and tokio panics on that; a crash and a single error at
    # every call do run.
    Op("pull", lambda c: ["pull", c.extra["remote"], "--remote", REMOTE],
       setup=with_remote_session,
       acks=lambda c, out: Acks(sessions={out["sessionId"]},  # type: ignore[index]
                                logs={f"{out['sessionId']}.jsonl": c.remote_msgs}),  # type: ignore[index]
       skip={"persist": "EIO on every write also hits the database driver's eventfd"}),
]


# ---- checks ------------------------------------------------------------------


@dataclass
class Before:
    store: dict[str, bytes]
    project: dict[str, bytes]


def snapshot(env: Env) -> Before:
    return Before(files_under(env.home), files_under(env.project))


def raw_checks(env: Env, c: Ctx, op: Op, pre: Before) -> list[str]:
    """Before anything opens the store again: old bytes kept."""
    bad: list[str] = []
    now = files_under(env.home)
    for path, old in pre.store.items():
        new = now.get(path)
        if path.endswith(".jsonl") and "/quarantine" not in path:
            if new is None:
                if not op.deletes:
                    bad.append(f"log {path} disappeared")
            elif not new.startswith(old) and not op.repairs_log:
                bad.append(f"log {path} lost bytes it held before ({len(old)} -> {len(new)})")
        elif blob_digest(path) and new is not None and new != old:
            bad.append(f"blob {path} changed")
        elif blob_digest(path) and new is None:
            if not op.removes_blobs:
                bad.append(f"blob {path} disappeared (only gc removes blobs)")
            else:
                named = named_blobs(now).get(blob_digest(path) or "")
                if named:
                    bad.append(f"blob {path} removed while {named} names it")
    if not op.touches_project:
        proj = files_under(env.project)
        if proj != pre.project:
            changed = sorted(k for k in set(proj) | set(pre.project)
                             if proj.get(k) != pre.project.get(k))
            bad.append(f"project files changed: {changed}")
    else:
        for k, v in files_under(env.project).items():
            if k == "a.txt" and v not in (b"before\n", b"after\n"):
                bad.append(f"a.txt is neither its before nor its after: {v[:40]!r}")
    extra = sorted(p.name for p in env.root.iterdir() if p.name not in ("home", "project"))
    if extra:
        bad.append(f"files outside the store and project: {extra}")
    return bad


def store_checks(env: Env, c: Ctx, op: Op, acked: Acks, final: bool) -> list[str]:
    """Through the CLI: lists, reads, every acknowledged message there exactly once,
    every acknowledged effect there."""
    bad: list[str] = []
    p = env.cli("--json", "list")
    if p.returncode != 0:
        return [f"list failed ({p.returncode}): {p.stderr.strip()}"]
    listed = {e["id"] for e in json.loads(p.stdout)}
    for sid in sorted(acked.gone):
        q = env.cli("show", sid)
        if q.returncode != EXIT_NOT_FOUND:
            bad.append(f"acknowledged delete of {sid} undone: show exits {q.returncode}")
    for sid in sorted(acked.sessions - acked.gone):
        if op.deletes and sid == c.sid:
            q = env.cli("show", sid)
            if q.returncode not in (0, EXIT_NOT_FOUND):
                bad.append(f"a half-deleted session is neither readable nor gone: {q.stderr.strip()}")
            continue
        if sid not in listed:
            bad.append(f"acknowledged session {sid} is not listed")
        q = env.cli("--json", "show", sid)
        if q.returncode != 0:
            bad.append(f"show {sid} failed ({q.returncode}): {q.stderr.strip()}")
    store = env.store_dir()
    for rel, ids in sorted(acked.logs.items()):
        sid = rel.split("/", 1)[0].removesuffix(".jsonl")
        if sid in acked.gone or (op.deletes and sid == c.sid):
            continue
        log = store / rel
        if not log.exists():
            bad.append(f"acknowledged log {rel} is missing")
            continue
        have = message_counts(log.read_bytes())
        missing = [i for i in ids if have.get(i, 0) == 0]
        if missing:
            bad.append(f"acknowledged messages lost from {rel}: {missing}")
    # No log holds a message twice: a retried write, or a retried pull or import,
    # must not duplicate what an earlier try wrote.
    for log in sorted(store.rglob("*.jsonl")):
        twice = {i: n for i, n in message_counts(log.read_bytes()).items() if n > 1}
        if twice:
            bad.append(f"messages duplicated in {log.relative_to(store)}: {twice}")
    for what, check in acked.facts:
        if not check(env):
            bad.append(f"acknowledged, not there: {what}")
    if final:
        d = env.cli("doctor")
        if d.returncode != 0:
            bad.append(f"doctor after the retry ({d.returncode}): {(d.stdout + d.stderr).strip()[:300]}")
        names = named_blobs(files_under(store))
        gone = sorted(d for d in names if not (store / "blobs" / d[:2] / d[2:]).exists())
        if gone:
            bad.append(f"blobs named by a log are missing: {[(d, names[d]) for d in gone]}")
    return bad


def answer(op: Op, ctx: Ctx, p: subprocess.CompletedProcess[str]) -> tuple[Acks, list[str]]:
    """What a run that exited 0 acknowledged, from its --json answer."""
    if p.returncode != 0 or op.acks is None:
        return Acks(), []
    try:
        out = json.loads(p.stdout)
        return op.acks(ctx, out), []
    except (ValueError, KeyError, TypeError) as e:
        return Acks(), [f"exit 0 without its answer ({e!r}): {p.stdout.strip()[:200]!r}"]


def classify(path: str, env: Env) -> str:
    """'truth' for what a store may not lose, 'derived' for caches and the index,
    'answer' for the CLI's output, 'outside' for everything else."""
    home = str(env.home)
    if path.startswith("pipe:"):
        return "answer"  # the CLI's stdout or stderr: the acknowledgement itself
    if not path.startswith(home) and not path.startswith(str(env.project)):
        return "outside"
    name = path.rsplit("/", 1)[-1]
    if name.startswith((".tmp-", "pack_git2_", "tmp_")):
        return "derived"  # a temporary file: garbage until renamed into place
    # The change feed (FORMAT.md §10.8) is a hint for search, never synced: a
    # lost line costs a full check of the store, never data.
    if "sessions-index" in name or name.endswith(".structure") or ".cache" in name or name.endswith(".lock") \
            or name == ".lock" or "search" in name or name == ".sessions-feed":
        return "derived"
    return "truth"


INJECTED = re.compile(r"^\d+\s+(\w+)\((.*)\)\s+= .*\(INJECTED\)$", re.M)
KILLED = re.compile(r"^\d+\s+(\w+)\((.*)\)\s+= \?$", re.M)
PATH_IN = re.compile(r"<([^>]*)>")


def hit(trace: str, mode: str) -> tuple[bool, str]:
    m = (KILLED if mode == "crash" else INJECTED).search(trace)
    if mode == "crash" and "+++ killed by SIGKILL" not in trace:
        return False, ""
    if not m:
        return False, ""
    paths = PATH_IN.findall(m.group(2))
    quoted = re.findall(r'"([^"]*)"', m.group(2))
    target = (quoted[-1] if quoted and quoted[-1].startswith("/") else (paths[-1] if paths else ""))
    return True, target


# Behaviour of libgit2 that the file history cannot change from outside; each
# is listed in docs/RELIABILITY.md. A stop that matches one is counted apart.
KNOWN = [
    ("libgit2 deletes a ref without reporting the OS error (IO, with no number)",
     re.compile(r"unlink:.*refs/heads/.*: the error does not carry the OS error")),
    ("libgit2 reports an object in a pack it cannot read as missing "
     "(NOT_FOUND or CORRUPT instead of IO; nothing is written or deleted)",
     re.compile(r"persist openat:.*objects/pack.*: (exit [37] instead of IO|"
                r"the report does not name the OS error)")),
]


@dataclass
class Tally:
    points: int = 0
    # Stops on a call outside the store and the project (the loader, /proc, the
    # terminal): counted and reported, not points.
    outside: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    known: dict[str, int] = field(default_factory=dict)


def run_point(env: Env, ctx: Ctx, op: Op, pre: Before, mode: str, sc: str, n: int,
              errno: str, tally: Tally, tmp: Path) -> bool:
    """One injected run. Returns False when the op completed without reaching call n."""
    env.restore()
    if mode == "crash":
        spec = f"{sc}:signal=KILL:when={n}"
    elif mode == "error":
        spec = f"{sc}:error={errno}:when={n}"
    else:
        spec = f"{sc}:error=EIO:when={n}+"
    trace = tmp / "trace.txt"
    p = env.cli("--json", *op.argv(ctx), inject=[spec], trace=trace)
    text = trace.read_text(errors="replace")
    was_hit, target = hit(text, mode)
    inj = INJECTED.search(text)
    writes = sc != "openat" or (inj is not None and re.search(r"O_WRONLY|O_RDWR|O_CREAT", inj.group(2)) is not None)
    if not was_hit:
        return False
    kind = classify(target, env)
    if kind == "outside":
        # The loader, /proc, the terminal: not a call of the library. Counted
        # and reported apart; the answer on stdout is a pipe, "answer" below.
        key = f"{sc} {re.sub(r'[0-9]+', 'N', target) or '?'}"
        tally.outside[key] = tally.outside.get(key, 0) + 1
        return True
    tally.points += 1
    where = f"{op.name} {mode} {spec} on {target or '?'}"
    acked, bad = answer(op, ctx, p)
    acked = ctx.acked.add(acked)
    if mode != "crash":
        if p.returncode == 101 or "panicked" in p.stderr or p.returncode < 0:
            bad.append(f"panic or abort (exit {p.returncode}): {p.stderr.strip()[:300]}")
        elif op.reports and p.returncode == 1:
            n = ERRNO_NUMBERS[errno if mode == "error" else "EIO"]
            out = p.stdout + p.stderr
            if f"os error {n}" not in out and os.strerror(n) not in out:
                bad.append(f"the report does not name the OS error: {out.strip()[:300]}")
        elif p.returncode not in (0, EXIT_IO) and not (op.deletes and p.returncode == EXIT_NOT_FOUND):
            bad.append(f"exit {p.returncode} instead of IO: {p.stderr.strip()[:300]}")
        elif p.returncode == EXIT_IO and not (mode == "persist" and sc.startswith("write")):
            # (a persistent write error also silences stderr)
            e = errno if mode == "error" else "EIO"
            # std's "os error N", or the system's text for it (libgit2's
            # messages, from which the core reads the number back).
            n = ERRNO_NUMBERS[e]
            if f"os error {n}" not in p.stderr and os.strerror(n) not in p.stderr:
                bad.append(f"the error does not carry the OS error {e}: {p.stderr.strip()[:300]}")
        elif p.returncode == 0 and kind == "truth" and writes and \
                (mode == "persist" or errno != "EINTR"):
            # (a failed read-only open may be worked around: libgit2 looks for
            # an object in its other packs; the checks below see any damage)
            bad.append("an error on the stored truth was reported as success")
    bad += raw_checks(env, ctx, op, pre)
    bad += store_checks(env, ctx, op, acked, final=False)
    # The retry keeps what the stopped run acknowledged, and adds its own.
    r = env.cli("--json", *op.argv(ctx))
    if r.returncode != 0 and op.done is not None and op.done(env, ctx):
        bad += store_checks(env, ctx, op, acked, final=True)
    elif r.returncode != 0 and not (op.deletes and r.returncode == EXIT_NOT_FOUND):
        bad.append(f"the retry failed ({r.returncode}): {r.stderr.strip()[:300]}")
    else:
        again, wrong = answer(op, ctx, r)
        bad += [f"the retry: {w}" for w in wrong]
        bad += store_checks(env, ctx, op, acked.add(again), final=True)
    for b in bad:
        line = f"{where}: {b}"
        why = next((w for w, pat in KNOWN if pat.search(line)), None)
        if why:
            tally.known[why] = tally.known.get(why, 0) + 1
        else:
            tally.failures.append(line)
    return True


def count_calls(env: Env, ctx: Ctx, op: Op, tmp: Path) -> dict[str, int]:
    env.restore()
    trace = tmp / "count.txt"
    p = env.cli("--json", *op.argv(ctx), trace=trace)
    if p.returncode != 0:
        raise RuntimeError(f"{op.name} fails uninjected ({p.returncode}): {p.stderr}")
    counts: dict[str, int] = {}
    for line in trace.read_text(errors="replace").splitlines():
        m = re.match(r"^\d+\s+(\w+)\(", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def audit(env: Env, ctx: Ctx, op: Op, tmp: Path) -> list[str]:
    """Every durable write is fsynced, every rename's directory too, before exit."""
    env.restore()
    trace = tmp / "audit.txt"
    env.cli("--json", *op.argv(ctx), trace=trace)
    # Keyed by descriptor: a file renamed after its write is fsynced under its
    # new name, through the same descriptor.
    pending_files: dict[str, str] = {}
    pending_dirs: dict[str, str] = {}
    modes: list[str] = []
    for line in trace.read_text(errors="replace").splitlines():
        m = re.match(r"^(\d+)\s+(\w+)\((\d+)?(.*)\)\s+= (-?\d+)", line)
        if not m or int(m.group(5)) < 0:
            continue
        pid, call, fd, args = m.group(1), m.group(2), m.group(3), m.group(4)
        paths = PATH_IN.findall(args)
        key = f"{pid}:{fd}"
        if call in ("openat", "mkdir", "mkdirat") and ("O_CREAT" in args or call != "openat"):
            # A transcript is never readable by others, not even for a moment:
            # files are created 0600 and directories 0700 (before any umask).
            quoted = re.findall(r'"([^"]*)"', args)
            mode = re.search(r", (0[0-7]+)$", args)
            # libgit2 picks its own modes inside the file history's .git, a
            # directory created 0700 that nobody else can enter.
            if quoted and quoted[-1].startswith(str(env.home)) and mode \
                    and "/.git/" not in quoted[-1]:
                want = "0700" if call != "openat" else "0600"
                if int(mode.group(1), 8) & 0o077:
                    modes.append(f"{op.name}: {call} of {quoted[-1]} with mode {mode.group(1)}, "
                                 f"not {want}")
            continue
        if call in ("write", "pwrite64", "writev") and paths:
            f = paths[0]
            # FORMAT.md §14: a quarantine file is not synced (its bytes stay
            # in the log); temporary files are synced before their rename.
            if classify(f, env) == "truth" and f.startswith(str(env.home)) \
                    and not f.endswith(".corrupt"):
                pending_files.setdefault(key, f)
        elif call in ("fsync", "fdatasync") and paths:
            pending_files.pop(key, None)
            pending_dirs.pop(paths[0], None)
        elif call.startswith("rename"):
            quoted = re.findall(r'"([^"]*)"', args)
            if quoted:
                dst = quoted[-1]
                if classify(dst, env) == "derived":
                    # A temporary file that becomes the index (or a cache): derived.
                    for k in [k for k, f in pending_files.items() if f == quoted[0]]:
                        del pending_files[k]
                if dst.startswith(str(env.home)) and classify(dst, env) == "truth":
                    pending_dirs.setdefault(os.path.dirname(dst), f"rename to {dst}")
    return modes + [f"{op.name}: {why} is not followed by an fsync"
                    for why in [f"a write to {f}" for f in pending_files.values()]
                    + list(pending_dirs.values())]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.environ.get("SESSIONKIT_CLI", "target/debug/sessionkit"))
    ap.add_argument("--ops", default="")
    ap.add_argument("--modes", default="crash,error,persist")
    ap.add_argument("--errnos", default=",".join(ERRNOS),
                    help="the errors of mode `error`, taken in turn")
    ap.add_argument("--max-n", type=int, default=0,
                    help="test at most this many call numbers per system call (0: all)")
    ap.add_argument("--audit", action="store_true")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    if shutil.which("strace") is None:
        print("strace is missing (apt-get install strace)", file=sys.stderr)
        return 2
    cli = str(Path(a.cli).resolve())
    names = [n for n in a.ops.split(",") if n]
    unknown = sorted(set(names) - {o.name for o in OPS})
    if unknown:
        print(f"unknown operations: {unknown}", file=sys.stderr)
        return 2
    errnos = a.errnos.split(",")
    if not errnos or set(errnos) - set(ERRNOS):
        print(f"--errnos takes some of {ERRNOS}", file=sys.stderr)
        return 2
    ops = [o for o in OPS if not names or o.name in names]
    skipped: dict[str, str] = {}
    if not REMOTE and any(o.name == "pull" for o in ops):
        if os.environ.get("SESSIONKIT_REQUIRE_PG") == "1":
            print("pull: SESSIONKIT_REQUIRE_PG=1 and SESSIONKIT_TEST_PG is not set: no server "
                  "to pull from (tests/pg/server.sh starts one)", file=sys.stderr)
            return 1
        skipped["pull"] = "SESSIONKIT_TEST_PG is not set (tests/pg/server.sh starts a server)"
        print(f"pull: SKIPPED, {skipped['pull']}")
        ops = [o for o in ops if o.name != "pull"]
    if os.environ.get("SESSIONKIT_PLANT_BUG"):
        print(f"planted bug on: SESSIONKIT_PLANT_BUG={os.environ['SESSIONKIT_PLANT_BUG']}")
    modes = a.modes.split(",")
    started = time.monotonic()
    report: dict[str, dict[str, object]] = {}
    failures: list[str] = []
    known: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="sk-faults-") as t:
        tmp = Path(t)
        for op in ops:
            env = Env(cli, tmp / "w")
            shutil.rmtree(env.root, ignore_errors=True)
            env.root.mkdir()
            ctx = base_setup(env)
            if op.setup:
                op.setup(env, ctx)
            age_blobs(env)
            env.save_template()
            pre = snapshot(env)
            counts = count_calls(env, ctx, op, tmp)
            row: dict[str, object] = {"calls": counts}
            if a.audit:
                problems = audit(env, ctx, op, tmp)
                row["audit"] = problems
                failures += problems
            for mode in modes:
                if mode in op.skip:
                    row[mode] = {"points": 0, "failures": 0, "skipped": op.skip[mode]}
                    continue
                tally = Tally()
                k = 0  # the errors of mode `error` in turn, over every point
                for sc in SYSCALLS:
                    total = counts.get(sc, 0)
                    ns = list(range(1, total + 1))
                    if a.max_n and len(ns) > a.max_n:
                        step = len(ns) / a.max_n
                        ns = sorted({ns[int(i * step)] for i in range(a.max_n)} | {ns[-1]})
                    for i, n in enumerate(ns):
                        errno = errnos[k % len(errnos)]
                        k += 1
                        if not run_point(env, ctx, op, pre, mode, sc, n, errno, tally, tmp):
                            if i == 0:
                                # Counted uninjected, never reached injected: the
                                # harness would pass without testing the call.
                                tally.failures.append(
                                    f"{op.name} {mode}: {total} {sc} calls counted, and the "
                                    f"injection at call 1 was never reached")
                            break
                outside = sum(tally.outside.values())
                if tally.points == 0 and sum(counts.get(sc, 0) for sc in SYSCALLS):
                    tally.failures.append(
                        f"{op.name} {mode}: {sum(counts.get(sc, 0) for sc in SYSCALLS)} calls "
                        f"counted, 0 injection points in the store"
                        + (f" ({outside} outside it, not counted)" if outside else ""))
                row[mode] = {"points": tally.points, "outside": tally.outside,
                             "failures": len(tally.failures)}
                failures += tally.failures
                for w, n in tally.known.items():
                    known[w] = known.get(w, 0) + n
            report[op.name] = row
            print(f"{op.name:22} " + "  ".join(
                f"{m} {row[m]['points']} points"  # type: ignore[index]
                + (f" (+{sum(row[m]['outside'].values())} outside)"  # type: ignore[index]
                   if row[m].get("outside") else "")  # type: ignore[attr-defined]
                + f", {row[m]['failures']} bad"  # type: ignore[index]
                for m in modes) + (f"  audit {len(row['audit'])} bad" if a.audit else ""),  # type: ignore[arg-type]
                flush=True)
    elapsed = time.monotonic() - started
    total_points = sum(r[m]["points"] for r in report.values() for m in modes)  # type: ignore[index]
    total_outside = sum(sum(r[m].get("outside", {}).values())  # type: ignore[attr-defined]
                        for r in report.values() for m in modes)
    print(f"\n{total_points} injected stops over {len(ops)} operations in {elapsed:.0f} s; "
          f"{len(failures)} problems")
    if total_outside:
        where: dict[str, int] = {}
        for r in report.values():
            for m in modes:
                for w, n in r[m].get("outside", {}).items():  # type: ignore[attr-defined]
                    where[w] = where.get(w, 0) + n
        top = sorted(where.items(), key=lambda kv: -kv[1])[:6]
        print(f"  {total_outside} stops outside the store and the project, not counted as "
              f"points: " + ", ".join(f"{w} {n}" for w, n in top)
              + (", ..." if len(where) > len(top) else ""))
    for name, why in skipped.items():
        print(f"  skipped: {name}, {why}")
    for w, n in known.items():
        print(f"  known ({n} stops): {w}")
    for f in failures:
        print("  " + f)
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"ops": report, "skipped": skipped, "failures": failures}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
