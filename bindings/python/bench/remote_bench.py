#!/usr/bin/env python3
"""Sessions shared through PostgreSQL: ``sessionkit.Remote`` against the OpenAI
Agents SDK's ``SQLAlchemySession`` on the same server, in one run.

1. Push: ``--messages`` items of about 4 KB, already in a local session,
   copied to the server by one ``Remote.push``; the SDK stores the same items
   with ``add_items`` (one call per item, as an agent adds a turn, and one call
   for all of them, its best case).
2. Pull of a 50 MiB session into a store that lacks it (``Remote.pull``: the
   log byte for byte, then readable locally); the SDK reads the same items
   back with ``get_items()``.
3. A local append with a remote attached costs what it costs without one: the
   remote is not on the append path (measured: ``append`` of the push's items
   into a store with and without a connected ``Remote``, and while
   ``push_in_background`` sends them).

Each figure is the median of ``--rounds`` rounds. Needs a server
(``SESSIONKIT_TEST_PG``, e.g. from ``tests/pg/server.sh``), the package
(``bash tests/python/run.sh`` makes ``target/py-venv``) and the SDK's database
extras in that venv::

    target/py-venv/bin/pip install 'sqlalchemy[asyncio]==2.0.58' asyncpg==0.30.0
    SESSIONKIT_TEST_PG="$(bash tests/pg/server.sh url DIR)" \\
        target/py-venv/bin/python bindings/python/bench/remote_bench.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import sessionkit


def asyncpg_url(libpq: str) -> str:
    """The SQLAlchemy URL of a libpq keyword/value connection string."""
    kv = dict(part.split("=", 1) for part in libpq.split())
    return (
        f"postgresql+asyncpg://{kv.get('user', '')}@/{kv.get('dbname', '')}"
        f"?host={kv.get('host', 'localhost')}&port={kv.get('port', '5432')}"
    )


def item(i: int, size: int) -> dict[str, Any]:
    role = ("user", "assistant", "tool")[i % 3]
    return {"role": role, "content": f"message {i} " + "lorem ipsum " * (size // 12)}


def timed(f: Any) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


async def sdk_round(url: str, items: list[dict[str, Any]], big: list[dict[str, Any]]) -> dict[str, float]:
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    out: dict[str, float] = {}
    one = SQLAlchemySession.from_url(f"one-{uuid.uuid4()}", url=url, create_tables=True)
    t = time.perf_counter()
    for it in items:
        await one.add_items([it])  # type: ignore[list-item]
    out["push_each"] = time.perf_counter() - t
    await one.engine.dispose()
    all_ = SQLAlchemySession.from_url(f"all-{uuid.uuid4()}", url=url, create_tables=True)
    t = time.perf_counter()
    await all_.add_items(items)  # type: ignore[arg-type]
    out["push_all"] = time.perf_counter() - t
    await all_.engine.dispose()
    sid = f"big-{uuid.uuid4()}"
    w = SQLAlchemySession.from_url(sid, url=url, create_tables=True)
    await w.add_items(big)  # type: ignore[arg-type]
    await w.engine.dispose()
    r = SQLAlchemySession.from_url(sid, url=url, create_tables=True)
    t = time.perf_counter()
    got = await r.get_items()
    out["pull"] = time.perf_counter() - t
    assert len(got) == len(big)
    await r.engine.dispose()
    return out


def sessionkit_round(url: str, tmp: Path, items: list[dict[str, Any]], big: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    project = f"bench-{uuid.uuid4()}"
    root = tmp / project
    (root / "project").mkdir(parents=True)

    def store(name: str) -> sessionkit.Store:
        return sessionkit.Store(root / "project", home=root / name, durability="never")

    a, b = store("a"), store("b")
    ra = sessionkit.Remote(a, url=url, project=project, holder="a")
    rb = sessionkit.Remote(b, url=url, project=project, holder="b")
    # Appends without and with a remote connected (ra is, for store a), and
    # while a background push sends them (every 50 ms). A first, untimed
    # session warms the page cache and the allocator for all three.
    plain = store("plain")
    with plain.create_session() as s:
        for it in items:
            s.append(it)
    with plain.create_session() as s:
        out["append_alone"] = timed(lambda: [s.append(it) for it in items])
    with a.create_session() as s:
        out["append_with_remote"] = timed(lambda: [s.append(it) for it in items])
        out["push"] = timed(lambda: ra.push(s.id))
    with a.create_session() as s, ra.push_in_background(s.id, interval=0.05) as pusher:
        out["append_background"] = timed(lambda: [s.append(it) for it in items])
        # What was still to send when the writer finished.
        out["background_flush"] = timed(pusher.flush)
        assert pusher.pushed == Path(a.log_path(s.id)).stat().st_size
    with a.create_session() as s:
        s.append_batch(big)
        ra.push(s.id)
        out["pull"] = timed(lambda: rb.pull(s.id))
        assert Path(b.log_path(s.id)).read_bytes() == Path(a.log_path(s.id)).read_bytes()
        out["pull_bytes"] = Path(b.log_path(s.id)).stat().st_size
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--pull-mib", type=int, default=50)
    a = ap.parse_args()
    libpq = os.environ["SESSIONKIT_TEST_PG"]
    url = asyncpg_url(libpq)
    items = [item(i, 4000) for i in range(a.messages)]
    big = [item(i, 4000) for i in range(a.pull_mib * 1024 * 1024 // 4000)]
    push_mb = sum(len(str(it)) for it in items) / 1e6
    sk: list[dict[str, float]] = []
    sdk: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as t:
        for _ in range(a.rounds):
            sk.append(sessionkit_round(libpq, Path(t), items, big))
            sdk.append(asyncio.run(sdk_round(url, items, big)))

    def med(rows: list[dict[str, float]], k: str) -> float:
        return statistics.median(r[k] for r in rows)

    n = a.messages
    print(f"{a.rounds} rounds, medians; push: {n} messages ({push_mb:.1f} MB); "
          f"pull: {len(big)} messages ({med(sk, 'pull_bytes') / 2**20:.1f} MiB of log)")
    rows = [
        ("push, sessionkit Remote.push (one call)", med(sk, "push")),
        ("push, SDK add_items per item", med(sdk, "push_each")),
        ("push, SDK add_items all at once", med(sdk, "push_all")),
    ]
    for name, s in rows:
        print(f"  {name:42} {s * 1000:9.0f} ms  {n / s:9.0f} msg/s  {push_mb / s:7.1f} MB/s")
    print(f"  {'pull, sessionkit Remote.pull':42} {med(sk, 'pull') * 1000:9.0f} ms")
    print(f"  {'pull, SDK get_items()':42} {med(sdk, 'pull') * 1000:9.0f} ms")
    print(f"  push ratio (SDK per item / sessionkit): {med(sdk, 'push_each') / med(sk, 'push'):.1f}x; "
          f"(SDK all at once / sessionkit): {med(sdk, 'push_all') / med(sk, 'push'):.1f}x; "
          f"pull ratio: {med(sdk, 'pull') / med(sk, 'pull'):.1f}x")
    print(f"  local append of {n} messages: alone {med(sk, 'append_alone') * 1000:.0f} ms, "
          f"with a remote connected {med(sk, 'append_with_remote') * 1000:.0f} ms, "
          f"while a background push sends them {med(sk, 'append_background') * 1000:.0f} ms "
          f"(then its flush {med(sk, 'background_flush') * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
