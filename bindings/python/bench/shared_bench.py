#!/usr/bin/env python3
"""Four worker processes on one conversation, as a web server runs them:
``SessionkitSession`` against the OpenAI Agents SDK's own ``SQLiteSession`` on
the same work, in one run.

Each of 4 processes opens its own session object for one conversation id and
calls ``add_items`` 200 times with a batch of two ~1 KB items (a user input
and its reply); a fifth process then reads the conversation back and checks
that all 800 batches are there, whole and once. ``SessionkitSession`` runs on
the store's default durability (an append survives a killed process; fsync on
``sync()``) and with ``durability="always"`` (fsync before ``add_items``
returns). The figure is the wall time
from the moment all workers start together (each has imported and opened its
session first, which is not timed) to the last worker's last ``add_items``
(the median of ``--rounds``), and
the time per ``add_items``. Run with the package and the SDK
installed (``bash tests/python/run.sh`` makes a venv):

    python bindings/python/bench/shared_bench.py [--rounds 5] [--workers 4] [--batches 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time

WORKER = r"""
import asyncio, sys, time
kind, where, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

async def main() -> None:
    if kind.startswith("sessionkit"):
        from sessionkit.integrations.openai_agents import SessionkitSession
        durability = "always" if kind.endswith("always") else None
        s = SessionkitSession(
            "user@example.com", project=where, home=where + "/home", durability=durability
        )
    else:
        from agents import SQLiteSession
        s = SQLiteSession("user@example.com", where + "/sdk.db")
    pad = "x" * 1000
    await s.get_items(1)  # opened and ready, as a server's handle is
    # All workers start together, once every one has imported and opened.
    print("READY", flush=True)
    sys.stdin.readline()
    for i in range(n):
        await s.add_items([
            {"role": "user", "content": f"{tag} {i} q {pad}"},
            {"role": "assistant", "content": f"{tag} {i} a {pad}"},
        ])
    print(time.time(), flush=True)
    s.close()

asyncio.run(main())
"""


async def read_back(kind: str, where: str) -> list[str]:
    if kind.startswith("sessionkit"):
        from sessionkit.integrations.openai_agents import SessionkitSession

        s = SessionkitSession("user@example.com", project=where, home=where + "/home")
    else:
        from agents import SQLiteSession

        s = SQLiteSession("user@example.com", where + "/sdk.db")
    items = await s.get_items()
    s.close()
    return [str(i["content"]).split(" x")[0] for i in items]  # type: ignore[index]


def check(contents: list[str], workers: int, batches: int) -> None:
    assert len(contents) == 2 * workers * batches, len(contents)
    assert len(set(contents)) == len(contents), "an item was written twice"
    for q, a in zip(contents[::2], contents[1::2]):
        assert q.removesuffix(" q") == a.removesuffix(" a"), (q, a)


def one_round(kind: str, workers: int, batches: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, kind, d, f"w{w}", str(batches)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for w in range(workers)
        ]
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "READY":
                raise SystemExit(f"a {kind} worker failed to open its session")
        start = time.time()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        ends = []
        for p in procs:
            out, _ = p.communicate()
            if p.returncode != 0:
                raise SystemExit(f"a {kind} worker failed")
            ends.append(float(out.split()[-1]))
        ms = (max(ends) - start) * 1e3
        check(asyncio.run(read_back(kind, d)), workers, batches)
        return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--batches", type=int, default=200)
    a = ap.parse_args()
    res: dict[str, list[float]] = {"sessionkit": [], "sessionkit-always": [], "sqlite": []}
    for _ in range(a.rounds):
        for kind in res:  # interleaved, so load on the machine hits both alike
            res[kind].append(one_round(kind, a.workers, a.batches))
    n = a.workers * a.batches
    sk, ska, sq = (statistics.median(res[k]) for k in ("sessionkit", "sessionkit-always", "sqlite"))
    print(f"{a.workers} processes x {a.batches} add_items (2 items each) on one conversation, "
          f"median of {a.rounds}; every batch checked whole and once")
    print(f"  SessionkitSession                      {sk:8.0f} ms  ({sk * 1e3 / n:6.0f} µs per add_items)")
    print(f"  SessionkitSession, durability=always   {ska:8.0f} ms  ({ska * 1e3 / n:6.0f} µs per add_items)")
    print(f"  SQLiteSession (the SDK's defaults)     {sq:8.0f} ms  ({sq * 1e3 / n:6.0f} µs per add_items)")
    print(f"  ratio SQLiteSession / SessionkitSession: {sq / sk:.2f} (durability=always: {sq / ska:.2f})")


if __name__ == "__main__":
    main()
