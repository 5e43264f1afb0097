#!/usr/bin/env python3
"""Simulated power loss: a disk that keeps, drops or garbles what was not made durable.

A workload of CLI commands (create a session, appends, a batch, state, rename,
a fork, a subagent) runs under ``durability: always``, each command traced by
strace with the bytes it writes. The traces, in order, are one timeline of file
system calls. A model disk replays it: at a crash point it keeps what an fsync
made durable, and of the rest

- each data write (or truncate) since its file's last fsync is kept, dropped,
  or garbled (its bytes replaced with zeros), independently of the others;
- directory changes (create, rename, link, unlink, mkdir) survive as a prefix of
  their order (a journaling file system commits metadata in order), at least up
  to the last fsync of a directory they touched.

Each crash state is written out as a store, and the CLI must then list it and
read every session, and every message acknowledged before the crash point (its
command had exited) must be in its log, whole. The crash points are every call
of the timeline, and random states are drawn at each until the count asked for.

Usage: powerloss.py [--cli PATH] [--states N] [--seed S] [--appends K]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# The same reading of a log as the crash and error runs (this directory).
from run import message_ids

TRACED = ("openat,write,pwrite64,writev,lseek,read,pread64,fsync,fdatasync,"
          "rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,ftruncate,close")


@dataclass
class Ev:
    """One call of the timeline, resolved to inodes."""

    kind: str  # write, trunc, fsync, ns (a directory change), ack
    ino: int = -1
    off: int = 0
    data: bytes = b""
    size: int = 0
    dirs: tuple[str, ...] = ()
    ns: tuple[str, ...] = ()  # ("link", path, ino) | ("unlink", path) | ("mkdir", path)
    ack: list[tuple[str, str]] = field(default_factory=list)


HEX = re.compile(r"\\x([0-9a-f]{2})")


def unhex(s: str) -> bytes:
    return bytes(int(h, 16) for h in HEX.findall(s))


def strings(args: str) -> list[str]:
    return re.findall(r'"((?:\\x[0-9a-f]{2})*)"', args)


def path_args(args: str) -> list[str]:
    return [unhex(s).decode("utf-8", "replace") for s in strings(args)]


class Timeline:
    """Replays strace output into events on inodes and a live namespace."""

    def __init__(self, home: Path) -> None:
        self.home = str(home)
        self.events: list[Ev] = []
        self.ns: dict[str, int] = {}  # live path -> inode (files under home)
        self.dirs: set[str] = {self.home}
        self.next_ino = 0
        self.fds: dict[tuple[int, int], tuple[int, int, bool, str]] = {}  # ino, pos, append, path

    def _new_ino(self) -> int:
        self.next_ino += 1
        return self.next_ino

    def _mine(self, p: str) -> bool:
        return p == self.home or p.startswith(self.home + "/")

    def size_of(self, ino: int) -> int:
        size = 0
        for e in self.events:
            if e.ino == ino and e.kind == "write":
                size = max(size, e.off + len(e.data))
            elif e.ino == ino and e.kind == "trunc":
                size = e.size
        return size

    def feed(self, text: str) -> None:
        pending: dict[str, str] = {}
        for raw in text.splitlines():
            m = re.match(r"^(\d+)\s+(.*)$", raw)
            if not m:
                continue
            pid, rest = m.group(1), m.group(2)
            if rest.endswith("<unfinished ...>"):
                pending[pid] = rest[: -len("<unfinished ...>")]
                continue
            r = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest)
            if r:
                rest = pending.pop(pid, "") + r.group(1)
            c = re.match(r"^(\w+)\((.*)\)\s+= (-?\d+|0x[0-9a-f]+)", rest, re.S)
            if not c:
                continue
            ret = int(c.group(3), 0)
            if ret < 0:
                continue
            self.call(int(pid), c.group(1), c.group(2), ret)

    def call(self, pid: int, name: str, args: str, ret: int) -> None:
        fdm = re.match(r"^(\d+)", args)
        fd = int(fdm.group(1)) if fdm else -1
        key = (pid, fd)
        if name == "openat":
            p = path_args(args)[0]
            if not self._mine(p):
                return
            if "O_DIRECTORY" in args or p in self.dirs:
                self.fds[(pid, ret)] = (-1, 0, False, p)
                return
            ino = self.ns.get(p)
            if ino is None:
                if "O_CREAT" not in args:
                    return
                ino = self._new_ino()
                self.ns[p] = ino
                self.events.append(Ev("ns", ns=("link", p, str(ino)), dirs=(os.path.dirname(p),)))
            if "O_TRUNC" in args:
                self.events.append(Ev("trunc", ino=ino, size=0))
            self.fds[(pid, ret)] = (ino, 0, "O_APPEND" in args, p)
        elif name == "close":
            self.fds.pop(key, None)
        elif key not in self.fds and name not in ("rename", "renameat", "renameat2", "link",
                                                   "linkat", "unlink", "unlinkat", "mkdir",
                                                   "mkdirat"):
            return
        elif name in ("read",):
            ino, pos, app, p = self.fds[key]
            self.fds[key] = (ino, pos + ret, app, p)
        elif name == "lseek":
            ino, pos, app, p = self.fds[key]
            self.fds[key] = (ino, ret, app, p)
        elif name in ("write", "writev", "pwrite64"):
            ino, pos, app, p = self.fds[key]
            if ino < 0:
                return
            data = b"".join(unhex(s) for s in strings(args))[:ret]
            if name == "pwrite64":
                off = int(args.rsplit(",", 1)[1])
            else:
                off = self.size_of(ino) if app else pos
                self.fds[key] = (ino, off + ret, app, p)
            self.events.append(Ev("write", ino=ino, off=off, data=data))
        elif name == "ftruncate":
            ino = self.fds[key][0]
            self.events.append(Ev("trunc", ino=ino, size=int(args.rsplit(",", 1)[1])))
        elif name in ("fsync", "fdatasync"):
            ino, _, _, p = self.fds[key]
            if ino < 0:
                self.events.append(Ev("fsync", dirs=(p,)))
            else:
                self.events.append(Ev("fsync", ino=ino))
        elif name.startswith("rename"):
            ps = path_args(args)
            if len(ps) >= 2 and self._mine(ps[-1]):
                src, dst = ps[0], ps[-1]
                ino = self.ns.pop(src, None)
                if ino is not None:
                    self.ns[dst] = ino
                    self.events.append(Ev("ns", ns=("rename", src, dst),
                                          dirs=(os.path.dirname(src), os.path.dirname(dst))))
        elif name in ("link", "linkat"):
            # A second name for a file (a fork's log, written under a temporary name).
            ps = path_args(args)
            if len(ps) >= 2 and self._mine(ps[-1]):
                ino = self.ns.get(ps[0])
                if ino is not None:
                    self.ns[ps[-1]] = ino
                    self.events.append(Ev("ns", ns=("link", ps[-1], str(ino)),
                                          dirs=(os.path.dirname(ps[-1]),)))
        elif name.startswith("unlink"):
            ps = path_args(args)
            if ps and self._mine(ps[-1]):
                p = ps[-1]
                if "AT_REMOVEDIR" in args:
                    self.dirs.discard(p)
                    self.events.append(Ev("ns", ns=("rmdir", p), dirs=(os.path.dirname(p),)))
                elif self.ns.pop(p, None) is not None:
                    self.events.append(Ev("ns", ns=("unlink", p), dirs=(os.path.dirname(p),)))
        elif name.startswith("mkdir"):
            ps = path_args(args)
            if ps and self._mine(ps[-1]):
                self.dirs.add(ps[-1])
                self.events.append(Ev("ns", ns=("mkdir", ps[-1]), dirs=(os.path.dirname(ps[-1]),)))


def crash_state(tl: Timeline, k: int, rng: random.Random) -> tuple[dict[str, bytes], set[str]]:
    """Files and directories of a disk that lost power just before event k."""
    evs = tl.events[:k]
    # Directory changes: a prefix, at least up to the last one a directory fsync forced.
    ns_idx = [i for i, e in enumerate(evs) if e.kind == "ns"]
    forced = -1
    for i, e in enumerate(evs):
        if e.kind == "fsync" and e.dirs:
            for j in ns_idx:
                if j < i and set(evs[j].dirs) & set(e.dirs):
                    forced = max(forced, j)
    cut_choices = [j for j in ns_idx if j >= forced]
    cut = rng.choice(cut_choices + [forced]) if cut_choices else forced
    names: dict[str, int] = {}
    dirs = {tl.home}
    for i in ns_idx:
        if i > cut:
            break
        op = evs[i].ns
        if op[0] == "link":
            names[op[1]] = int(op[2])
        elif op[0] == "rename":
            if op[1] in names:
                names[op[2]] = names.pop(op[1])
        elif op[0] == "unlink":
            names.pop(op[1], None)
        elif op[0] == "mkdir":
            dirs.add(op[1])
        elif op[0] == "rmdir":
            dirs.discard(op[1])
    # Data: writes before a file's last fsync are durable; later ones each kept,
    # dropped or garbled.
    last_sync: dict[int, int] = {}
    for i, e in enumerate(evs):
        if e.kind == "fsync" and e.ino >= 0:
            last_sync[e.ino] = i
    content: dict[int, bytearray] = {}
    for i, e in enumerate(evs):
        if e.kind not in ("write", "trunc"):
            continue
        buf = content.setdefault(e.ino, bytearray())
        if i > last_sync.get(e.ino, -1):
            fate = rng.random()
            if fate < 0.4:
                continue  # dropped
            garble = fate < 0.55
        else:
            garble = False
        if e.kind == "trunc":
            del buf[e.size:]
            continue
        data = bytes(len(e.data)) if garble else e.data
        if len(buf) < e.off:
            buf.extend(bytes(e.off - len(buf)))
        buf[e.off:e.off + len(data)] = data
    files = {p: bytes(content.get(ino, b"")) for p, ino in names.items()}
    return files, dirs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.environ.get("SESSIONKIT_CLI", "target/debug/sessionkit"))
    ap.add_argument("--states", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--appends", type=int, default=6)
    ap.add_argument("--durability", default="always",
                    help="the store's durability mode; with `never`, the run must find losses "
                         "(a check that the simulation can see one)")
    a = ap.parse_args()
    cli = str(Path(a.cli).resolve())
    rng = random.Random(a.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sk-powerloss-") as t:
        tmp = Path(t)
        home, project = tmp / "home", tmp / "project"
        home.mkdir()
        project.mkdir()
        tl = Timeline(home)
        acked: dict[str, list[str]] = {}

        def run(*args: str) -> object:
            trace = tmp / "trace.txt"
            argv = ["strace", "-f", "-qq", "-y", "-xx", "-s", "16777216", "-e", "trace=" + TRACED,
                    "-e", "raw=read,pread64", "-o", str(trace),
                    cli, "--home", str(home), "--project", str(project),
                    "--store-options", json.dumps({"durability": a.durability}), "--json", *args]
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise RuntimeError(f"{args} failed: {p.stderr}")
            tl.feed(trace.read_text(errors="replace"))
            out = json.loads(p.stdout) if p.stdout.strip() else None
            tl.events.append(Ev("ack"))
            return out

        sid = run("new", "--title", "power")["id"]  # type: ignore[index]
        acked[sid] = []
        acks: list[tuple[int, str, str]] = []  # (event index of the ack, session, message)

        def note(session: str, out: object) -> None:
            rows = out if isinstance(out, list) else [out]
            for r in rows:
                acked.setdefault(session, []).append(r["id"])  # type: ignore[index]
                acks.append((len(tl.events), session, r["id"]))  # type: ignore[index]

        for i in range(a.appends):
            note(sid, run("append", sid, json.dumps({"role": "user", "content": f"turn {i} " * 40})))
        note(sid, run("append", sid, '[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]'))
        run("state", sid, '{"status":"processing"}')
        run("rename", sid, "renamed")
        fork = run("fork", sid)["id"]  # type: ignore[index]
        note(fork, run("append", fork, '{"role":"user","content":"on the fork"}'))
        agent = run("subagent", "spawn", sid)["id"]  # type: ignore[index]
        run("subagent", "append", sid, agent, '{"role":"assistant","content":"sub"}')
        run("subagent", "finish", sid, agent, '"done"')
        note(sid, run("append", sid, '{"role":"user","content":"last"}'))

        n_events = len(tl.events)
        kinds: dict[str, int] = {}
        for e in tl.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        print("timeline:", ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())))
        out = tmp / "state"
        lost = 0
        states = 0
        problems: list[str] = []
        while states < a.states:
            k = rng.randrange(1, n_events + 1)
            files, dirs = crash_state(tl, k, rng)
            shutil.rmtree(out, ignore_errors=True)
            rel = lambda p: out / os.path.relpath(p, home)  # noqa: E731
            for d in sorted(dirs):
                rel(d).mkdir(parents=True, exist_ok=True, mode=0o700)
            for p, data in files.items():
                f = rel(p)
                f.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                f.write_bytes(data)
            states += 1
            must = [(s, m) for (i, s, m) in acks if i <= k]
            base = [cli, "--home", str(out), "--project", str(project), "--json"]
            ls = subprocess.run(base + ["list"], capture_output=True, text=True)
            if ls.returncode != 0:
                problems.append(f"crash before event {k}: list failed: {ls.stderr.strip()[:200]}")
                continue
            stores = list((out / "projects").glob("*")) if (out / "projects").exists() else []
            for s, m in must:
                logs = [d / f"{s}.jsonl" for d in stores if (d / f"{s}.jsonl").exists()]
                have = message_ids(logs[0].read_bytes()) if logs else set()
                if m not in have:
                    lost += 1
                    problems.append(f"crash before event {k}: acknowledged message {m} of {s} lost")
            for s in {s for s, _ in must}:
                sh = subprocess.run(base + ["show", s], capture_output=True, text=True)
                if sh.returncode != 0:
                    problems.append(f"crash before event {k}: show {s} failed: {sh.stderr.strip()[:200]}")
        elapsed = time.monotonic() - started
        print(f"{states} simulated power losses over a timeline of {n_events} events "
              f"({len(acks)} acknowledged messages) in {elapsed:.0f} s: "
              f"{lost} acknowledged messages lost, {len(problems)} problems")
        for p in problems[:40]:
            print("  " + p)
        if a.durability == "never":
            # Nothing is fsynced: a simulation that finds no loss cannot see one.
            return 0 if lost else 1
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
