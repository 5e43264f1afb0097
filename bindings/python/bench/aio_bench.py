#!/usr/bin/env python3
"""How long the event loop stalls while ``sessionkit.aio`` works: the longest
gap between two turns of a task that does nothing but ``await
asyncio.sleep(0)``, while

1. a session of ``--mib`` MiB (200; messages of ~4 KiB) is read whole on the
   loop with the sync API (``view.active_path()``): the stall aio avoids;
2. the same, awaited through aio (``await view.active_path()``): the read runs
   on a thread, but building the Python list holds the GIL, so the loop still
   waits for that part;
3. the same, streamed (``async for m in view.iter_active_path()``): batches of
   256 messages, one trip to a thread each;
4. an aio ``Follower`` waits 2 s for lines nobody pushes (only when
   ``SESSIONKIT_TEST_PG`` holds a connection string; ``tests/pg/server.sh``
   starts a server).

Figures are measured, not asserted. Run from the repository root, with the
package installed:

    python bindings/python/bench/aio_bench.py [--mib 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import sessionkit
from sessionkit import aio


async def longest_gap(work: Callable[[], Awaitable[object]]) -> tuple[float, float, int]:
    """(longest gap between the ticker's turns, the work's time, turns) in seconds."""
    gaps: list[float] = []
    done = False

    async def ticker() -> None:
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    start = time.perf_counter()
    await work()
    took = time.perf_counter() - start
    done = True
    await task
    return max(gaps, default=0.0), took, len(gaps)


def build(store: sessionkit.Store, mib: int) -> str:
    body = "x" * 4000
    per_batch = 1000
    total = mib * 1024 * 1024 // 4096
    with store.create_session(title="aio bench") as s:
        for start in range(0, total, per_batch):
            n = min(per_batch, total - start)
            s.append_batch(
                [{"role": "user" if i % 2 else "assistant", "content": f"{start + i} {body}"} for i in range(n)]
            )
        return s.id


async def main(mib: int) -> None:
    with tempfile.TemporaryDirectory(prefix="sessionkit-aio-bench-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        store = sessionkit.Store(project, home=Path(tmp) / "home", durability="never")
        sid = build(store, mib)
        size = Path(store.log_path(sid)).stat().st_size
        print(f"session: {size / 2**20:.0f} MiB log")
        astore = aio.Store.wrap(store)
        view = await astore.read_session(sid)
        sync_view = view.blocking

        async def sync_on_loop() -> None:
            sync_view.active_path()

        async def awaited() -> None:
            await view.active_path()

        async def streamed() -> None:
            async for _ in view.iter_active_path():
                pass

        for name, work in (
            ("sync active_path() on the loop", sync_on_loop),
            ("await aio active_path()", awaited),
            ("async for aio iter_active_path()", streamed),
        ):
            gap, took, turns = await longest_gap(work)
            print(f"{name:36} longest loop gap {gap * 1000:9.1f} ms   call {took:6.2f} s   {turns} turns")

        url = os.environ.get("SESSIONKIT_TEST_PG")
        if not url:
            print("follower: SESSIONKIT_TEST_PG is not set, not measured")
            return
        with store.create_session() as s:
            s.append({"role": "user", "content": "first"})
            followed = s.id
        async with aio.Remote(astore, url=url, project=f"aio-bench-{uuid.uuid4()}") as remote:
            await remote.push(followed)
            async with await remote.follow(followed) as follower:

                async def wait() -> None:
                    await follower.next_lines(2.0)

                gap, took, turns = await longest_gap(wait)
                print(f"{'aio follower waits 2 s':36} longest loop gap {gap * 1000:9.1f} ms   call {took:6.2f} s   {turns} turns")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=200)
    asyncio.run(main(parser.parse_args().mib))
