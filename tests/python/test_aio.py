"""sessionkit.aio: the calls run off the event loop, one handle's calls in the
order they were started, with the sync API's errors."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest

import sessionkit
from sessionkit import aio

T = TypeVar("T")

URL = os.environ.get("SESSIONKIT_TEST_PG")


class Ticker:
    """A task that counts its turns on the event loop until stopped."""

    def __init__(self) -> None:
        self.ticks = 0
        self.events: list[str] = []
        self._stop = False
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while not self._stop:
            self.ticks += 1
            self.events.append("tick")
            await asyncio.sleep(0)

    def __enter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


def test_the_loop_runs_while_a_call_waits_for_a_lock(home: Path, project: Path) -> None:
    # An exclusive writer holds the session; a shared writer's append waits
    # for it on its thread. The exclusive one is released from the event loop
    # itself: the append can only succeed if the loop ran while it waited.
    sync_store = sessionkit.Store(project, home=home, busy_timeout_ms=30_000)
    with sync_store.create_session() as created:
        sid = created.id

    async def main() -> None:
        store = aio.Store.wrap(sync_store)
        async with await store.open_shared(sid) as shared:
            holder = sync_store.open_session(sid)
            with Ticker() as ticker:
                append = asyncio.ensure_future(shared.append({"role": "user", "content": "after"}))
                while ticker.ticks < 50:
                    await asyncio.sleep(0)
                assert not append.done()  # still waiting for the lock
                holder.close()
                stored = await append
            assert stored["content"] == "after"
            assert [m["content"] for m in await shared.active_path()] == ["after"]

    run(main())


def test_a_large_view_streams_between_turns_of_the_loop(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        s.append_batch([{"role": "user", "content": f"m{i} " + "x" * 200} for i in range(3000)])
        sid = s.id

    async def main() -> None:
        view = await aio.Store.wrap(store).read_session(sid)
        with Ticker() as ticker:
            got: list[str] = []
            whole = asyncio.ensure_future(view.active_path())
            async for m in view.iter_active_path():
                got.append(str(m["content"]).split()[0])
                ticker.events.append("message")
            ticks_before_whole = ticker.ticks
            assert len(await whole) == 3000
        assert got == [f"m{i}" for i in range(3000)]
        # The loop turned between the messages: they came in several pieces,
        # with the ticker's turns between them, not in one stall.
        first = ticker.events.index("message")
        last = len(ticker.events) - 1 - ticker.events[::-1].index("message")
        assert "tick" in ticker.events[first:last]
        assert ticks_before_whole > 0

    run(main())


def test_one_handles_calls_keep_their_order(store: sessionkit.Store) -> None:
    async def main() -> None:
        astore = aio.Store.wrap(store)
        async with await astore.create_session(title="order") as s:
            # Started together; each would race the others on threads of its own.
            await asyncio.gather(
                *(s.append({"role": "user", "content": f"{i}"}) for i in range(60))
            )
            assert [m["content"] for m in await s.active_path()] == [f"{i}" for i in range(60)]
            # A read started after an append sees it, however the two are awaited.
            _, view = await asyncio.gather(s.append({"role": "assistant", "content": "late"}), s.read())
            assert (await view.info())["messageCount"] == 61

    run(main())


def test_calls_from_several_event_loops_and_threads_share_one_handle(store: sessionkit.Store) -> None:
    session = aio.Session(store.create_session())

    def in_a_thread(i: int) -> None:
        async def appends() -> None:
            for k in range(10):
                await session.append({"role": "user", "content": f"{i}.{k}"})

        asyncio.run(appends())

    threads = [threading.Thread(target=in_a_thread, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    contents = [str(m["content"]) for m in run(session.active_path())]
    assert len(contents) == 40
    for i in range(4):  # each thread's appends in its order
        assert [c for c in contents if c.startswith(f"{i}.")] == [f"{i}.{k}" for k in range(10)]
    run(session.aclose())
    assert session.closed


def test_a_store_does_no_io_until_its_first_call(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    store = aio.Store(project, home=home)
    assert not home.exists() and not store.opened
    assert "not opened yet" in repr(store)

    async def main() -> None:
        assert await store.session_ids() == []
        assert store.opened and home.is_dir()
        async with store:
            pass
        assert store.closed
        with pytest.raises(sessionkit.InvalidInputError, match="closed"):
            await store.list_sessions()
        await store.aclose()  # twice: nothing happens

    run(main())


def test_async_with_and_aclose_close_the_writers(store: sessionkit.Store) -> None:
    async def main() -> None:
        astore = aio.Store.wrap(store)
        async with await astore.create_session() as s:
            await s.append({"role": "user", "content": "hi"})
            async with await s.spawn_subagent("helper") as sub:
                await sub.append({"role": "user", "content": "sub"})
                assert sub.session_id == s.id
            assert sub.closed
        assert s.closed
        with pytest.raises(sessionkit.InvalidInputError, match="closed"):
            await s.append({"role": "user", "content": "too late"})
        # The lock went with the close.
        again = await astore.open_session(s.id)
        assert [m["content"] for m in await again.active_path()] == ["hi"]
        await again.aclose()
        await again.aclose()
        # An exception in the block closes too, and goes through.
        with pytest.raises(KeyError):
            async with await astore.open_session(s.id) as failing:
                raise KeyError("boom")
        assert failing.closed

    run(main())


def test_errors_are_the_sessionkit_errors(store: sessionkit.Store) -> None:
    async def main() -> None:
        astore = aio.Store.wrap(store)
        with pytest.raises(sessionkit.NotFoundError):
            await astore.session_entry("0190a4b0-0000-7000-8000-000000000000")
        with pytest.raises(sessionkit.InvalidInputError):
            await astore.open_session("../etc")
        async with await astore.create_session() as s:
            with pytest.raises(sessionkit.BusyError):
                await astore.open_session(s.id)
            with pytest.raises(sessionkit.InvalidInputError):
                await s.append({"content": float("nan")})
            view = await s.read()
            with pytest.raises(sessionkit.NotFoundError):
                await view.message("nope")

    run(main())


def test_a_call_cancelled_before_it_starts_never_runs(home: Path, project: Path) -> None:
    sync_store = sessionkit.Store(project, home=home, busy_timeout_ms=30_000)
    with sync_store.create_session() as created:
        sid = created.id

    async def main() -> None:
        async with await aio.Store.wrap(sync_store).open_shared(sid) as shared:
            holder = sync_store.open_session(sid)
            first = asyncio.ensure_future(shared.append({"role": "user", "content": "first"}))
            second = asyncio.ensure_future(shared.append({"role": "user", "content": "second"}))
            await asyncio.sleep(0.05)  # the first waits for the lock; the second is queued
            assert not first.done() and not second.done()
            second.cancel()
            # The cancel reaches the queued call before the lock is released:
            # no race with the first call finishing.
            with pytest.raises(asyncio.CancelledError):
                await second
            await asyncio.to_thread(holder.close)
            await first
            assert [m["content"] for m in await shared.active_path()] == ["first"]

    run(main())


def test_typed_results_and_handles(store: sessionkit.Store) -> None:
    async def main() -> None:
        astore = aio.Store.wrap(store)
        s = await astore.create_session(title="typed")
        stored: sessionkit.Message = await s.append({"role": "user", "content": "q"})
        fork: aio.Session = await s.fork()
        entries: list[sessionkit.SessionEntry] = await astore.list_sessions()
        assert {e.id for e in entries} == {s.id, fork.id}
        assert stored["role"] == "user"
        # The sync handles' properties are coroutines here.
        assert await s.shared() is False and (await s.entry()).id == s.id
        assert await s.path() == store.log_path(s.id)
        assert await (await s.read()).message_count() == 1
        assert await astore.project_code() == store.project_code
        assert s.blocking is not None and s.id in repr(s)
        await fork.aclose()
        await s.aclose()

    run(main())


@pytest.mark.pg
def test_a_follower_is_an_async_iterator(tmp_path: Path) -> None:
    name = f"py-aio-{uuid.uuid4()}"
    stores = []
    for machine in ("a", "b"):
        root = tmp_path / machine / "project"
        root.mkdir(parents=True)
        stores.append(aio.Store(root, home=tmp_path / machine / "home", durability="never"))
    a, b = stores

    async def main() -> None:
        async with aio.Remote(a, url=URL, project=name) as ra, aio.Remote(
            b, url=URL, project=name
        ) as rb:
            s = await a.create_session()
            await s.append({"role": "user", "content": "first"})
            await ra.push(s.id)
            follower = await rb.follow(s.id)
            start = follower.offset
            assert await follower.next_lines(0) == []
            with Ticker() as ticker:
                got: list[bytes] = []

                async def writer() -> None:
                    for i in range(3):
                        await s.append({"role": "assistant", "content": f"line {i}"})
                        await ra.push(s.id)

                writing = asyncio.ensure_future(writer())
                log = Path(await a.log_path(s.id))
                async with follower:
                    async for lines in follower:
                        got += lines
                        await writing
                        if len(b"".join(got)) >= log.stat().st_size - start:
                            break
                assert ticker.ticks > 0
            assert b"".join(got) == log.read_bytes()[start:]
            assert follower.offset == log.stat().st_size and follower.closed
            with pytest.raises(sessionkit.InvalidInputError, match="closed"):
                await follower.next_lines(0)
            follower2 = await rb.follow(s.id)
            with pytest.raises(sessionkit.InvalidInputError, match="timeout"):
                await follower2.next_lines(-1)
            with pytest.raises(sessionkit.NotFoundError):
                await rb.follow("0190a4b0-0000-7000-8000-000000000000")
            await s.aclose()

    asyncio.run(main())


@pytest.mark.parametrize(
    "name", ["Store", "Session", "SessionView", "Subagent", "Remote", "BackgroundPush", "Follower"]
)
def test_every_sync_method_and_property_has_its_async_twin(name: str) -> None:
    sync_names = {n for n in dir(getattr(sessionkit, name)) if not n.startswith("_")}
    async_names = {n for n in dir(getattr(aio, name)) if not n.startswith("_")}
    # close() is aclose() here.
    assert sync_names - {"close"} <= async_names, sorted(sync_names - async_names)
    if "close" in sync_names:
        assert "aclose" in async_names
