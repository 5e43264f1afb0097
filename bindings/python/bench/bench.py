#!/usr/bin/env python3
"""The Python package against what Python agents use today, in one run.

1. The OpenAI Agents SDK adapter (``SessionkitSession``) against the SDK's own
   ``SQLiteSession`` (a database file, the SDK's defaults: WAL, a commit per
   call): 10,000 ``add_items`` calls of one ~4 KB item each, and ``get_items()``
   of a 50 MiB history.
2. The plain API against JSONL as agents write it: append = ``json.dumps`` and a
   flushed write per message to a file kept open; resume = read the file and
   ``json.loads`` each line. Resume (``Store.model_view``, what goes to the
   model) is measured on a 50 MiB session whole, and with its first 95 %
   compacted (the JSONL agent still reads every line); for the whole session
   also the active path (``read_session(id).active_path()``), which is exactly
   what the JSONL agent gets.
3. The binding's overhead over the Rust API on the same work (the append loop
   and the resume), the Rust side timed by ``core/examples/same_work.rs``.

Each figure is the median of ``--rounds`` rounds (sizes and orders fixed; the
machine this was written on is shared, hence medians). Run from the repository
root, with the package installed (``bash tests/python/run.sh`` makes a venv):

    python bindings/python/bench/bench.py [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sessionkit
from agents import SQLiteSession
from sessionkit.integrations.openai_agents import SessionkitSession

REPO = Path(__file__).resolve().parents[3]
MIB = 1 << 20
ITEM_BYTES = 4000


def message(i: int, size: int = ITEM_BYTES) -> dict[str, Any]:
    """The message core/examples/same_work.rs makes too."""
    head = f"{i} "
    return {"role": "user" if i % 2 == 0 else "assistant", "content": head + "x" * (size - len(head))}


def timed(f: Callable[[], Any]) -> float:
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1e3


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def rust_same_work(*args: str) -> float:
    return rust_same_work_runs(*args)[0]


def rust_same_work_runs(*args: str) -> tuple[float, float]:
    """The Rust side's median, and its first run (whose memory is fresh from
    the kernel; a resume's only)."""
    exe = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "examples" / "same_work"
    out = json.loads(subprocess.run([str(exe), *args], capture_output=True, text=True, check=True).stdout)
    return float(out["ms"]), float(out.get("first") or 0.0)


def build_rust() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-q", "-p", "sessionkit", "--example", "same_work"],
        cwd=REPO,
        check=True,
    )


# -- 1. the adapter against SQLiteSession ------------------------------------------


async def add_items_ms(session: Any, n: int) -> float:
    items = [message(i) for i in range(n)]
    t = time.perf_counter()
    for item in items:
        await session.add_items([item])
    return (time.perf_counter() - t) * 1e3


async def fill(session: Any, mib: int) -> int:
    n = mib * MIB // ITEM_BYTES
    for start in range(0, n, 500):
        await session.add_items([message(i) for i in range(start, min(n, start + 500))])
    return n


async def get_items_ms(session: Any, expect: int) -> float:
    t = time.perf_counter()
    items = await session.get_items()
    ms = (time.perf_counter() - t) * 1e3
    assert len(items) == expect, (len(items), expect)
    return ms


def adapter_vs_sqlite(tmp: Path, rounds: int, adds: int, mib: int) -> dict[str, Any]:
    res: dict[str, list[float]] = {k: [] for k in ("sk_add", "sk_add_always", "sqlite_add", "sk_get", "sqlite_get")}

    async def main() -> None:
        for r in range(rounds):
            d = tmp / f"adapter-{r}"
            d.mkdir()
            sk = SessionkitSession(project=d, home=d / "home")
            res["sk_add"].append(await add_items_ms(sk, adds))
            sk.close()
            ska = SessionkitSession(project=d, home=d / "home", durability="always")
            res["sk_add_always"].append(await add_items_ms(ska, adds))
            ska.close()
            sq = SQLiteSession("bench", str(d / "sdk.db"))
            res["sqlite_add"].append(await add_items_ms(sq, adds))
            sq.close()
            shutil.rmtree(d)
        d = tmp / "adapter-big"
        d.mkdir()
        sk = SessionkitSession(project=d, home=d / "home")
        sq = SQLiteSession("bench", str(d / "sdk.db"))
        n = await fill(sk, mib)
        await fill(sq, mib)
        for r in range(rounds):
            pair = [("sk_get", sk), ("sqlite_get", sq)]
            for name, s in pair if r % 2 == 0 else reversed(pair):
                res[name].append(await get_items_ms(s, n))
        sk.close()
        sq.close()

    asyncio.run(main())
    return {k: median(v) for k, v in res.items()}


# -- 2. and 3. the plain API against JSONL, and against Rust -----------------------


def jsonl_append_ms(path: Path, messages: list[dict[str, Any]]) -> float:
    with open(path, "a", encoding="utf-8") as f:
        t = time.perf_counter()
        for m in messages:
            f.write(json.dumps(m) + "\n")
            f.flush()
        return (time.perf_counter() - t) * 1e3


def copy_floor_ms(messages: list[dict[str, Any]]) -> tuple[float, float]:
    """The least any binding does to carry these messages across: copy each
    one's text out of its ``str`` (in), and build a new dict holding a new
    ``str`` of it (out). Returns (in ms, out ms) for all of them."""
    texts = [m["content"].encode("utf-8") for m in messages]
    t_in = timed(lambda: [m["content"].encode("utf-8") for m in messages])
    t_out = timed(lambda: [
        {"type": "message", "id": "i", "parentId": None, "sessionId": "s", "role": "user",
         "timestamp": "t", "content": b.decode("utf-8")}
        for b in texts
    ])
    return t_in, t_out


def jsonl_resume(path: Path) -> list[Any]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def plain_api(tmp: Path, rounds: int, adds: int, mib: int) -> dict[str, Any]:
    res: dict[str, list[float]] = {
        k: []
        for k in (
            "sk_append", "jsonl_append", "rust_append",
            "sk_resume", "jsonl_resume", "rust_resume", "rust_resume_first", "sk_active", "rust_active",
            "sk_resume_compacted", "jsonl_resume_compacted", "rust_resume_compacted",
            "floor_read", "floor_loads", "floor_append_copy", "floor_resume_copy",
        )
    }
    messages = [message(i) for i in range(adds)]
    for r in range(rounds):
        d = tmp / f"plain-{r}"
        (d / "project").mkdir(parents=True)
        store = sessionkit.Store(d / "project", home=d / "home", durability="never", max_sessions=0)
        with store.create_session() as s:
            res["sk_append"].append(timed(lambda: [s.append(m) for m in messages]))
        res["jsonl_append"].append(jsonl_append_ms(d / "agent.jsonl", messages))
        res["floor_append_copy"].append(sum(copy_floor_ms(messages)))
        res["rust_append"].append(
            rust_same_work("append", "--project", str(d / "project"), "--home", str(d / "home"),
                           "--n", str(adds), "--bytes", str(ITEM_BYTES))
        )
        shutil.rmtree(d)

    # Two 50 MiB sessions of the same messages: one whole, one whose first 95 %
    # a compaction replaced; and the JSONL file an agent would have written.
    d = tmp / "resume"
    (d / "project").mkdir(parents=True)
    store = sessionkit.Store(d / "project", home=d / "home", durability="never", max_sessions=0)
    n = mib * MIB // ITEM_BYTES
    big = [message(i) for i in range(n)]
    with store.create_session() as whole, store.create_session() as compacted:
        for start in range(0, n, 1000):
            whole.append_batch(big[start : start + 1000])
            compacted.append_batch(big[start : start + 1000])
        ids = [m["id"] for m in compacted.active_path()]
        compacted.apply_compaction(ids[: n * 95 // 100], "The first 95 % of the session.")
    jsonl = d / "agent.jsonl"
    jsonl_append_ms(jsonl, big)
    jsonl_append_ms(jsonl, [{"role": "system", "content": "The first 95 % of the session."}])
    where = ["--project", str(d / "project"), "--home", str(d / "home")]
    # The floors of a resume that returns dicts: reading the lines (the I/O),
    # and building the dicts from text already in memory (what any resume
    # returning Python objects pays, measured with the stdlib's C parser).
    lines = jsonl.read_text(encoding="utf-8").splitlines()

    def read_lines() -> list[str]:
        with open(jsonl, encoding="utf-8") as f:
            return f.readlines()

    # Warm once, as the Rust side does (it reports the median of five).
    store.model_view(whole.id), store.model_view(compacted.id), jsonl_resume(jsonl)
    for r in range(rounds):
        res["sk_resume"].append(timed(lambda: store.model_view(whole.id)))
        res["sk_active"].append(timed(lambda: store.read_session(whole.id).active_path()))
        res["sk_resume_compacted"].append(timed(lambda: store.model_view(compacted.id)))
        t = timed(lambda: jsonl_resume(jsonl))
        res["jsonl_resume"].append(t)
        res["jsonl_resume_compacted"].append(t)
        res["floor_read"].append(timed(read_lines))
        res["floor_loads"].append(timed(lambda: [json.loads(x) for x in lines]))
        res["floor_resume_copy"].append(copy_floor_ms(big)[1])
    rust_resume, rust_resume_first = rust_same_work_runs("resume", *where, "--id", whole.id)
    res["rust_resume"].append(rust_resume)
    res["rust_resume_first"].append(rust_resume_first)
    res["rust_active"].append(rust_same_work("active", *where, "--id", whole.id))
    res["rust_resume_compacted"].append(rust_same_work("resume", *where, "--id", compacted.id))
    assert len(store.model_view(compacted.id)) == n - n * 95 // 100 + 1
    return {k: median(v) for k, v in res.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--adds", type=int, default=10_000)
    ap.add_argument("--mib", type=int, default=50)
    ap.add_argument("--json", help="also write the medians here")
    a = ap.parse_args()
    build_rust()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        adapter = adapter_vs_sqlite(tmp, a.rounds, a.adds, a.mib)
        plain = plain_api(tmp, a.rounds, a.adds, a.mib)
    rows = [
        ("adapter add_items x%d, 4 KB items (ms)" % a.adds, adapter["sk_add"], adapter["sqlite_add"], "SQLiteSession"),
        ("  ... with durability=always (fsync each)", adapter["sk_add_always"], adapter["sqlite_add"], "SQLiteSession"),
        (f"adapter get_items() of {a.mib} MiB (ms)", adapter["sk_get"], adapter["sqlite_get"], "SQLiteSession"),
        (f"append x{a.adds}, 4 KB messages (ms)", plain["sk_append"], plain["jsonl_append"], "JSONL"),
        (f"resume {a.mib} MiB, whole: model view (ms)", plain["sk_resume"], plain["jsonl_resume"], "JSONL"),
        (f"resume {a.mib} MiB, whole: active path (ms)", plain["sk_active"], plain["jsonl_resume"], "JSONL"),
        (f"resume {a.mib} MiB, 95 % compacted (ms)", plain["sk_resume_compacted"], plain["jsonl_resume_compacted"], "JSONL"),
    ]
    print(f"sessionkit {sessionkit.__version__}, Python {sys.version.split()[0]}, medians of {a.rounds} rounds")
    print(f"{'':48} {'sessionkit':>11} {'peer':>11}  peer/sessionkit")
    for name, ours, peer, who in rows:
        print(f"{name:48} {ours:11.1f} {peer:11.1f}  {peer / ours:5.2f}x ({who})")
    print(f"floors of a {a.mib} MiB resume to dicts: reading the lines {plain['floor_read']:.1f} ms, "
          f"json.loads of the lines in memory {plain['floor_loads']:.1f} ms "
          f"(so at most {plain['jsonl_resume'] / plain['floor_loads']:.2f}x over JSONL for any resume returning dicts)")
    print()
    print("binding overhead (Python API / Rust API, same work):")
    for name, py, rust, copy in [
        (f"append x{a.adds}", plain["sk_append"], plain["rust_append"], plain["floor_append_copy"]),
        (f"resume {a.mib} MiB whole, model view", plain["sk_resume"], plain["rust_resume"], plain["floor_resume_copy"]),
        (f"resume {a.mib} MiB whole, active path", plain["sk_active"], plain["rust_active"], plain["floor_resume_copy"]),
        (f"resume {a.mib} MiB, 95 % compacted", plain["sk_resume_compacted"], plain["rust_resume_compacted"], 0.0),
    ]:
        print(f"  {name:40} python {py:9.1f} ms  rust {rust:9.1f} ms  {py / rust:5.2f}x"
              f"  (floor: rust + copying across {copy:7.1f} ms = {(rust + copy) / rust:5.2f}x)")
    first = plain["rust_resume_first"]
    print(f"  the Rust model view's first run in its process (memory fresh from the kernel): {first:.1f} ms; "
          f"python / that: {plain['sk_resume'] / first:.2f}x")
    if a.json:
        Path(a.json).write_text(json.dumps({"adapter": adapter, "plain": plain}, indent=1))


if __name__ == "__main__":
    main()
