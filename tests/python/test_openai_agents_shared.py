"""SessionkitSession the way servers use it: many instances and worker
processes on one conversation, thousands of users, any id they pass."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest


import sessionkit
from sessionkit.integrations.openai_agents import SessionkitSession

WORKER = r"""
import asyncio, sys
from sessionkit.integrations.openai_agents import SessionkitSession
project, home, conv, tag, n = sys.argv[1:6]

async def main() -> None:
    s = SessionkitSession(conv, project=project, home=home)
    for i in range(int(n)):
        await s.add_items([
            {"role": "user", "content": f"{tag} {i} q"},
            {"role": "assistant", "content": f"{tag} {i} a"},
        ])
        print(f"ACK {tag} {i}", flush=True)
    s.close()

asyncio.run(main())
"""


def _spawn(project: Path, home: Path, conv: str, tag: str, n: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(project), str(home), conv, tag, str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _content(item: Any) -> Any:
    """An item's content (the SDK types items as a union of TypedDicts)."""
    return item["content"]


def _acked(out: str) -> list[str]:
    return [line[4:] for line in out.splitlines() if line.startswith("ACK ")]


def _items(project: Path, home: Path, conv: str) -> list[Any]:
    async def read() -> list[Any]:
        async with SessionkitSession(conv, project=project, home=home) as s:
            return await s.get_items()

    return asyncio.run(read())


def _check_batches(items: list[Any], acked: list[str], victim: str | None = None) -> None:
    contents = [i["content"] for i in items]
    assert len(set(contents)) == len(contents), "an item was written twice"
    present = set(contents)
    for a in acked:
        assert f"{a} q" in present and f"{a} a" in present, f"acknowledged {a} is lost"
    for k in range(0, len(contents), 2):
        q = contents[k]
        if k + 1 == len(contents):
            assert victim is not None and q.startswith(victim), f"batch {q} cut short"
            continue
        assert contents[k + 1] == q.removesuffix(" q") + " a", f"batch {q} interleaved"


def test_four_processes_and_a_reader(project: Path, home: Path) -> None:
    workers = [_spawn(project, home, "user@example.com", f"p{w}", 200) for w in range(4)]
    acked: list[str] = []
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
        acked += _acked(out)
    assert len(acked) == 800
    items = _items(project, home, "user@example.com")
    assert len(items) == 1600
    _check_batches(items, acked)


def test_a_worker_killed_mid_write_loses_nothing_acknowledged(project: Path, home: Path) -> None:
    victim = _spawn(project, home, "conv:7", "victim", 100_000)
    workers = [_spawn(project, home, "conv:7", f"p{w}", 200) for w in range(3)]
    # Kill it once it is writing, in the middle of the others' writes.
    assert victim.stdout is not None
    for _ in range(20):
        victim.stdout.readline()
    time.sleep(0.2)
    os.kill(victim.pid, signal.SIGKILL)
    out, _ = victim.communicate()
    acked = _acked(out)
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
        got = _acked(out)
        assert len(got) == 200
        acked += got
    items = _items(project, home, "conv:7")
    _check_batches(items, acked, victim="victim")
    # The conversation goes on after the kill.
    async def more() -> None:
        async with SessionkitSession("conv:7", project=project, home=home) as s:
            await s.add_items([{"role": "user", "content": "after"}])
            assert _content((await s.get_items(1))[0]) == "after"

    asyncio.run(more())


def test_sixty_users_keep_their_histories(project: Path, home: Path) -> None:
    async def run() -> None:
        for u in range(60):
            async with SessionkitSession(f"user_{u}", project=project, home=home) as s:
                await s.add_items([{"role": "user", "content": f"hello from {u}"}])
        for u in range(60):
            async with SessionkitSession(f"user_{u}", project=project, home=home) as s:
                assert [_content(i) for i in await s.get_items()] == [f"hello from {u}"]

    asyncio.run(run())
    assert len(sessionkit.Store(project, home=home).list_sessions()) == 60


def test_a_thread_and_a_process_on_one_conversation(project: Path, home: Path) -> None:
    child = _spawn(project, home, "tenant/123", "child", 100)
    errors: list[BaseException] = []

    def in_thread() -> None:
        async def work() -> None:
            async with SessionkitSession("tenant/123", project=project, home=home) as s:
                for i in range(100):
                    await s.add_items([
                        {"role": "user", "content": f"thread {i} q"},
                        {"role": "assistant", "content": f"thread {i} a"},
                    ])
                    assert len(await s.get_items()) >= 2 * (i + 1)

        try:
            asyncio.run(work())
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=in_thread)
    t.start()
    out, err = child.communicate(timeout=300)
    t.join()
    assert not errors, errors
    assert child.returncode == 0, err
    acked = _acked(out) + [f"thread {i}" for i in range(100)]
    items = _items(project, home, "tenant/123")
    assert len(items) == 400
    _check_batches(items, acked)


def test_pop_and_clear_act_on_the_newest_item_whoever_added_it(project: Path, home: Path) -> None:
    async def run() -> None:
        a = SessionkitSession("shared", project=project, home=home)
        b = SessionkitSession("shared", project=project, home=home)
        await a.add_items([{"role": "user", "content": "one"}])
        await b.add_items([{"role": "user", "content": "two"}])
        popped = await a.pop_item()
        assert popped is not None and _content(popped) == "two"
        assert [_content(i) for i in await b.get_items()] == ["one"]
        await b.clear_session()
        assert await a.get_items() == []
        a.close()
        a.close()  # twice is fine
        b.close()

    asyncio.run(run())


@pytest.mark.parametrize(
    "conv", ["user@example.com", "conv:42", "tenant/123", "with space", "日本語", "../x"]
)
def test_any_id_round_trips(project: Path, home: Path, tmp_path: Path, conv: str) -> None:
    async def run() -> None:
        async with SessionkitSession(conv, project=project, home=home) as s:
            assert s.session_id == conv
            await s.add_items([{"role": "user", "content": conv}])
        async with SessionkitSession(conv, project=project, home=home) as s:
            assert [_content(i) for i in await s.get_items()] == [conv]

    asyncio.run(run())
    (entry,) = sessionkit.Store(project, home=home).list_sessions()
    assert (entry.conversation_id or entry.id) == conv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "project"]
