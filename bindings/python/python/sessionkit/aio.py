"""sessionkit for asyncio: the handles of :mod:`sessionkit`, whose calls never
block the event loop.

Each handle here wraps the synchronous handle of the same name and runs its
calls on worker threads (where the native core releases the GIL), one call of
a handle at a time, in the order the calls were started: two appends started
one after the other land in that order, whatever the event loop does
meanwhile. A call starts when its coroutine first runs: awaited, or in
``asyncio.gather``, in the order given; a task from ``create_task`` starts
when the loop next runs it. Calls on different handles run side by side. A
handle may be used from any event loop and any thread.

Constructing a :class:`Store` or a :class:`Remote` does no I/O: the store is
opened (its directory created) or the database connected by the first call,
on a worker thread. Call :meth:`Store.open` to do it at a moment of your
choosing and see its errors there.

Errors are the same :class:`~sessionkit.SessionkitError` subclasses the
synchronous API raises. Cancelling a call that has not started yet keeps it
from running; a call already running on its thread runs to its end.

::

    import asyncio
    from sessionkit import aio

    async def main() -> None:
        store = aio.Store(".", home="/tmp/sk-home")
        async with await store.create_session(title="Fix the test") as s:
            await s.append({"role": "user", "content": "Why is CI red?"})
            view = await s.read()
            async for message in view.iter_active_path():
                print(message["role"], message["content"])

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from . import _api
from ._api import Follower as _SyncFollower
from ._types import Durability, JsonObject, Message, ReadReport, SessionEntry, _default_str
from .errors import InvalidInputError

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")
_S = TypeVar("_S")
_S_co = TypeVar("_S_co", covariant=True)
_H = TypeVar("_H")

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="sessionkit-aio")
"""The threads every handle's calls run on (made as needed). More than
asyncio's default, because a call may wait for a lock (a shared writer, up to
its busy timeout) that another handle's queued call is about to release."""

_BATCH = 256
"""Messages an async view iterator fetches per trip to a worker thread."""

_FOLLOW_WAIT = 0.5
"""Seconds one wait of a follower holds its thread, at most: a longer wait is
several, so that followers never hold the pool's threads for long."""


class _Serial:
    """A handle's queue of calls: one runs at a time, in the order submitted,
    on the shared pool. After each call the queue goes to the back of the
    pool's line, so a busy handle does not starve the others."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: deque[tuple[concurrent.futures.Future[object], Callable[[], object]]] = deque()
        self._running = False

    def submit(self, fn: Callable[[], _R]) -> concurrent.futures.Future[_R]:
        fut: concurrent.futures.Future[_R] = concurrent.futures.Future()
        with self._lock:
            self._jobs.append((fut, fn))  # type: ignore[arg-type]  # stored untyped, returned typed
            start = not self._running
            self._running = True
        if start:
            _POOL.submit(self._step)
        return fut

    def _step(self) -> None:
        with self._lock:
            fut, fn = self._jobs.popleft()
        if fut.set_running_or_notify_cancel():  # False: cancelled before it ran
            try:
                fut.set_result(fn())
            except BaseException as e:  # handed to the awaiting caller
                fut.set_exception(e)
        with self._lock:
            more = bool(self._jobs)
            self._running = more
        if more:
            _POOL.submit(self._step)


class _Handle(Generic[_S_co]):
    """What every async handle has: the sync handle and a queue of calls."""

    _serial: _Serial

    def _sync_handle(self) -> _S_co:
        """The synchronous handle (opened first if need be); on a worker thread."""
        raise NotImplementedError

    async def _run(self, fn: Callable[[], _R]) -> _R:
        return await asyncio.wrap_future(self._serial.submit(fn))


class _Closing:
    """``async with`` closes the handle (its ``aclose``)."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self: _H) -> _H:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _Lazy(_Handle[_S], _Closing):
    """A handle opened by its first call (no I/O on construction): a store,
    a remote. Closing refuses later calls and closes what it opened."""

    _lock: threading.Lock
    _sync: _S | None
    _closed: bool
    _owned: bool
    _open: Callable[[], _S]
    _what: str

    def _lazy(self, open_: Callable[[], _S], what: str) -> None:
        self._serial = _Serial()
        self._lock = threading.Lock()
        self._sync = None
        self._closed = False
        self._owned = True
        self._open = open_
        self._what = what

    def _sync_handle(self) -> _S:
        with self._lock:
            if self._closed:
                raise InvalidInputError(f"{self._what} is closed")
            if self._sync is None:
                self._sync = self._open()
            return self._sync

    async def aclose(self) -> None:
        """Refuse every later call (``InvalidInputError``), after the calls
        started before it, and close what this handle opened (not a handle
        given to ``wrap``). Twice does nothing."""

        def close() -> None:
            with self._lock:
                self._closed = True
                sync = self._sync if self._owned else None
            if sync is not None:
                getattr(sync, "close")()

        await self._run(close)

    @property
    def closed(self) -> bool:
        return self._closed


class _Forward(Generic[_S, _P, _R]):
    """A method of an async handle that runs the sync handle's method of the
    same name, with the same parameters and result, off the event loop."""

    def __init__(self, method: Callable[Concatenate[_S, _P], _R]) -> None:
        self._method = method

    @overload
    def __get__(self, obj: None, owner: type[object]) -> _Forward[_S, _P, _R]: ...

    @overload
    def __get__(
        self, obj: _Handle[_S], owner: type[object]
    ) -> Callable[_P, Coroutine[object, object, _R]]: ...

    def __get__(
        self, obj: _Handle[_S] | None, owner: type[object]
    ) -> _Forward[_S, _P, _R] | Callable[_P, Coroutine[object, object, _R]]:
        if obj is None:
            return self
        method = self._method
        handle = obj

        @functools.wraps(method)
        async def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            return await handle._run(lambda: method(handle._sync_handle(), *args, **kwargs))

        return call


class _ForwardAs(Generic[_S, _P, _R, _T]):
    """As :class:`_Forward`, with the sync result turned into an async handle."""

    def __init__(self, method: Callable[Concatenate[_S, _P], _R], wrap: Callable[[_R], _T]) -> None:
        self._method = method
        self._wrap = wrap

    @overload
    def __get__(self, obj: None, owner: type[object]) -> _ForwardAs[_S, _P, _R, _T]: ...

    @overload
    def __get__(
        self, obj: _Handle[_S], owner: type[object]
    ) -> Callable[_P, Coroutine[object, object, _T]]: ...

    def __get__(
        self, obj: _Handle[_S] | None, owner: type[object]
    ) -> _ForwardAs[_S, _P, _R, _T] | Callable[_P, Coroutine[object, object, _T]]:
        if obj is None:
            return self
        method = self._method
        wrap = self._wrap
        handle = obj

        @functools.wraps(method)
        async def call(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            result = await handle._run(lambda: method(handle._sync_handle(), *args, **kwargs))
            return wrap(result)

        return call


class _Opened(_Handle[_S_co]):
    """A handle around a sync handle that is open from the start."""

    def __init__(self, sync: _S_co) -> None:
        self._sync = sync
        self._serial = _Serial()

    def _sync_handle(self) -> _S_co:
        return self._sync

    @property
    def blocking(self) -> _S_co:
        """The synchronous handle this one wraps (its calls block)."""
        return self._sync

    def __repr__(self) -> str:
        return f"<sessionkit.aio {self._sync!r}>"


# -- views -----------------------------------------------------------------------


class SessionView(_Opened[_api.SessionView]):
    """:class:`sessionkit.SessionView`, off the event loop. Immutable: a
    session as it was when read. ``iter_*`` hand out one message at a time,
    fetched in batches on a worker thread, so that a long session never stalls
    the event loop in one piece."""

    info = _Forward(_api.SessionView.info)
    active_path = _Forward(_api.SessionView.active_path)
    ui_view = _Forward(_api.SessionView.ui_view)
    model_view = _Forward(_api.SessionView.model_view)
    message = _Forward(_api.SessionView.message)
    resolve_message = _Forward(_api.SessionView.resolve_message)
    tree = _Forward(_api.SessionView.tree)
    branches = _Forward(_api.SessionView.branches)
    records = _Forward(_api.SessionView.records)

    async def _iterate(self, start: Callable[[], Iterator[Message]]) -> AsyncIterator[Message]:
        it = await self._run(start)

        def batch() -> list[Message]:
            out: list[Message] = []
            for m in it:
                out.append(m)
                if len(out) == _BATCH:
                    break
            return out

        while True:
            messages = await self._run(batch)
            for m in messages:
                yield m
            if len(messages) < _BATCH:
                return

    def iter_active_path(self) -> AsyncIterator[Message]:
        """:meth:`active_path`, one message at a time."""
        return self._iterate(self._sync.iter_active_path)

    def iter_ui_view(self) -> AsyncIterator[Message]:
        """:meth:`ui_view`, one message at a time."""
        return self._iterate(self._sync.iter_ui_view)

    def iter_model_view(
        self, *, last_n: int | None = None, token_budget: int | None = None
    ) -> AsyncIterator[Message]:
        """:meth:`model_view`, one message at a time."""
        sync = self._sync
        return self._iterate(lambda: sync.iter_model_view(last_n=last_n, token_budget=token_budget))

    def __aiter__(self) -> AsyncIterator[Message]:
        return self.iter_active_path()

    # The sync view's properties, as coroutines.

    async def head(self) -> str | None:
        """The head message id; None before the first message."""
        return await self._run(lambda: self._sync.head)

    async def header(self) -> JsonObject | None:
        """The log's ``session`` header record; None for a plain transcript."""
        return await self._run(lambda: self._sync.header)

    async def message_count(self) -> int:
        """How many messages the log holds, on every branch."""
        return await self._run(lambda: self._sync.message_count)

    async def report(self) -> ReadReport:
        """What reading found: skipped lines, a torn tail, broken chains."""
        return await self._run(lambda: self._sync.report)


# -- writers ---------------------------------------------------------------------


class _Writer(_Opened[_S_co], _Closing):
    """What a session and a subagent share: a lock held until closed."""

    _sync: _api.Session | _api.Subagent  # type: ignore[assignment]  # narrowed by each subclass


    async def aclose(self) -> None:
        """Release the lock, after the calls started before it (a session
        flushes its index entry first). Closing twice does nothing."""
        await self._run(self._sync.close)

    @property
    def closed(self) -> bool:
        """Whether the handle is closed (read without waiting for calls in flight)."""
        return self._sync.closed


class Subagent(_Writer[_api.Subagent]):
    """:class:`sessionkit.Subagent`, off the event loop; ``async with`` closes it."""

    _sync: _api.Subagent

    append = _Forward(_api.Subagent.append)
    append_batch = _Forward(_api.Subagent.append_batch)
    append_groups = _Forward(_api.Subagent.append_groups)
    read = _ForwardAs(_api.Subagent.read, SessionView)
    finish = _Forward(_api.Subagent.finish)

    @property
    def id(self) -> str:
        """The agent id."""
        return self._sync.id

    @property
    def session_id(self) -> str:
        """The id of the session that spawned it."""
        return self._sync.session_id


class Session(_Writer[_api.Session]):
    """:class:`sessionkit.Session`, off the event loop; ``async with`` closes it."""

    _sync: _api.Session

    append = _Forward(_api.Session.append)
    append_batch = _Forward(_api.Session.append_batch)
    append_groups = _Forward(_api.Session.append_groups)
    read = _ForwardAs(_api.Session.read, SessionView)
    info = _Forward(_api.Session.info)
    update_state = _Forward(_api.Session.update_state)
    patch_message = _Forward(_api.Session.patch_message)
    set_head = _Forward(_api.Session.set_head)
    resume_at = _Forward(_api.Session.resume_at)
    rename = _Forward(_api.Session.rename)
    sync = _Forward(_api.Session.sync)
    flush_index = _Forward(_api.Session.flush_index)
    active_path = _Forward(_api.Session.active_path)
    model_view = _Forward(_api.Session.model_view)
    fork = _ForwardAs(_api.Session.fork, lambda s: Session(s))
    erase = _ForwardAs(_api.Session.erase, lambda s: Session(s))
    select_compaction = _Forward(_api.Session.select_compaction)
    apply_compaction = _Forward(_api.Session.apply_compaction)
    spawn_subagent = _ForwardAs(_api.Session.spawn_subagent, Subagent)
    open_subagent = _ForwardAs(_api.Session.open_subagent, Subagent)
    user_input = _Forward(_api.Session.user_input)
    track_read = _Forward(_api.Session.track_read)
    before_edit = _Forward(_api.Session.before_edit)
    after_edit = _Forward(_api.Session.after_edit)
    tracked_files = _Forward(_api.Session.tracked_files)
    last_snapshot = _Forward(_api.Session.last_snapshot)
    external_changes = _Forward(_api.Session.external_changes)
    ensure_unchanged = _Forward(_api.Session.ensure_unchanged)
    undo_candidates = _Forward(_api.Session.undo_candidates)
    rewind_plan = _Forward(_api.Session.rewind_plan)
    rewind_preview = _Forward(_api.Session.rewind_preview)
    rewind = _Forward(_api.Session.rewind)
    rewind_turns = _Forward(_api.Session.rewind_turns)
    snapshot_plan = _Forward(_api.Session.snapshot_plan)
    restore_snapshot = _Forward(_api.Session.restore_snapshot)

    @property
    def id(self) -> str:
        """The session id."""
        return self._sync.id

    # The sync session's properties, as coroutines.

    async def head(self) -> str | None:
        """The current head message id."""
        return await self._run(lambda: self._sync.head)

    async def shared(self) -> bool:
        """Whether this handle is a shared writer."""
        return await self._run(lambda: self._sync.shared)

    async def path(self) -> str:
        """The path of the session's log."""
        return await self._run(lambda: self._sync.path)

    async def open_report(self) -> ReadReport:
        """What opening found: skipped lines, a torn tail, broken chains."""
        return await self._run(lambda: self._sync.open_report)

    async def entry(self) -> SessionEntry:
        """The session's index entry as this writer knows it."""
        return await self._run(lambda: self._sync.entry)

    async def pruned(self) -> list[str]:
        """Sessions removed from the project when this one was created."""
        return await self._run(lambda: self._sync.pruned)

    async def fsync_count(self) -> int:
        """How many times this handle fsynced its log."""
        return await self._run(lambda: self._sync.fsync_count)

    # The OpenAI Responses items of the session (the OpenAI Agents adapter's
    # storage).
    responses_items = _Forward(_api.Session.responses_items)
    append_responses_items = _Forward(_api.Session.append_responses_items)
    replace_responses_items_with_compaction = _Forward(
        _api.Session.replace_responses_items_with_compaction
    )
    pop_responses_item = _Forward(_api.Session.pop_responses_item)


# -- store -----------------------------------------------------------------------


class Store(_Lazy[_api.Store]):
    """:class:`sessionkit.Store`, off the event loop.

    Takes the arguments of :class:`sessionkit.Store` but does no I/O: the
    store is opened (``<home>/projects/<code>/`` created) by the first call, or
    by :meth:`open`, on a worker thread. :meth:`wrap` makes one of an open
    sync store. Share it freely: it holds no lock. ``aclose()`` (or ``async
    with``) refuses further calls.
    """

    def __init__(
        self,
        project: _api.StrPath = _default_str("project"),
        *,
        home: _api.StrPath | None = None,
        durability: Durability | str | None = None,
        max_sessions: int | None = None,
        trash_grace_secs: int | None = None,
        blob_threshold: int | None = None,
        max_record_bytes: int | None = None,
        deterministic: dict[str, int] | None = None,
        busy_timeout_ms: int | None = None,
    ) -> None:
        self._project = os.fspath(project)
        self._lazy(
            lambda: _api.Store(
                project,
            home=home,
            durability=durability,
            max_sessions=max_sessions,
            trash_grace_secs=trash_grace_secs,
            blob_threshold=blob_threshold,
            max_record_bytes=max_record_bytes,
                deterministic=deterministic,
                busy_timeout_ms=busy_timeout_ms,
            ),
            f"the store of {self._project}",
        )

    @classmethod
    def wrap(cls, store: _api.Store) -> Store:
        """An async store around an open sync one (the two share everything)."""
        new = cls.__new__(cls)
        new._project = store.project_root
        new._lazy(lambda: store, f"the store of {new._project}")
        new._sync = store
        new._owned = False  # the caller's: closing this one leaves it open
        return new

    async def open(self) -> _api.Store:
        """Open the store now, if no call did yet; returns the sync store."""
        return await self._run(self._sync_handle)

    @property
    def opened(self) -> bool:
        """Whether the store was opened (by a call or :meth:`open`)."""
        return self._sync is not None

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._sync is not None else "not opened yet"
        return f"<sessionkit.aio.Store {self._project!r} ({state})>"

    # The sync store's properties, as coroutines (they open the store).

    async def dir(self) -> str:
        """The directory holding this project's session logs."""
        return await self._run(lambda: self._sync_handle().dir)

    async def project_root(self) -> str:
        """The canonical project root."""
        return await self._run(lambda: self._sync_handle().project_root)

    async def project_code(self) -> str:
        """The project's directory name under ``<home>/projects/``."""
        return await self._run(lambda: self._sync_handle().project_code)

    info = _Forward(_api.Store.info)
    log_path = _Forward(_api.Store.log_path)
    create_session = _ForwardAs(_api.Store.create_session, Session)
    open_session = _ForwardAs(_api.Store.open_session, Session)
    open_shared = _ForwardAs(_api.Store.open_shared, Session)
    open_conversation = _ForwardAs(_api.Store.open_conversation, Session)
    open_or_create_session = _ForwardAs(_api.Store.open_or_create_session, Session)
    fork_session = _ForwardAs(_api.Store.fork_session, Session)
    read_session = _ForwardAs(_api.Store.read_session, SessionView)
    model_view = _Forward(_api.Store.model_view)
    list_sessions = _Forward(_api.Store.list_sessions)
    list_page = _Forward(_api.Store.list_page)
    session_entry = _Forward(_api.Store.session_entry)
    session_ids = _Forward(_api.Store.session_ids)
    resolve_session = _Forward(_api.Store.resolve_session)
    continue_session = _Forward(_api.Store.continue_session)
    rename_session = _Forward(_api.Store.rename_session)
    delete_session = _Forward(_api.Store.delete_session)
    list_trash = _Forward(_api.Store.list_trash)
    restore_session = _Forward(_api.Store.restore_session)
    export_session = _Forward(_api.Store.export_session)
    export_to = _Forward(_api.Store.export_to)
    list_subagents = _Forward(_api.Store.list_subagents)
    read_subagent = _ForwardAs(_api.Store.read_subagent, SessionView)
    settings = _Forward(_api.Store.settings)
    set_setting = _Forward(_api.Store.set_setting)
    unset_setting = _Forward(_api.Store.unset_setting)
    migrate_settings = _Forward(_api.Store.migrate_settings)
    instructions = _Forward(_api.Store.instructions)
    add_memory = _Forward(_api.Store.add_memory)
    update_memory = _Forward(_api.Store.update_memory)
    delete_memory = _Forward(_api.Store.delete_memory)
    list_memories = _Forward(_api.Store.list_memories)
    memory_path = _Forward(_api.Store.memory_path)
    checkpoint_summaries = _Forward(_api.Store.checkpoint_summaries)
    read_memory = _Forward(_api.Store.read_memory)
    search = _Forward(_api.Store.search)
    doctor = _Forward(_api.Store.doctor)
    gc = _Forward(_api.Store.gc)
    rebuild_index = _Forward(_api.Store.rebuild_index)
    file_history_sizes = _Forward(_api.Store.file_history_sizes)
    check_file_history = _Forward(_api.Store.check_file_history)
    prune_orphan_file_history = _Forward(_api.Store.prune_orphan_file_history)
    branch_file_history = _Forward(_api.Store.branch_file_history)


# -- remote ----------------------------------------------------------------------


class Follower(_Closing):
    """A session followed as others push it (:meth:`Remote.follow`), off the
    event loop: ``async for lines in follower`` yields each batch of lines
    pushed since (each line its bytes with its newline), as it arrives.
    :attr:`offset` is read without waiting for a wait in progress.
    ``aclose()`` (or ``async with``) ends the iteration."""

    def __init__(self, sync: _SyncFollower, offset: int) -> None:
        self._sync_follower = sync
        self._serial = _Serial()
        self._offset = offset
        self._closed = False
        self._pending: concurrent.futures.Future[list[bytes]] | None = None
        self._waiting = False

    poll_seconds: float = _FOLLOW_WAIT
    """How long iteration waits in each :meth:`next_lines` call."""

    @property
    def blocking(self) -> _SyncFollower:
        """The synchronous follower this one wraps (its calls block)."""
        return self._sync_follower

    @property
    def session_id(self) -> str:
        """The session followed."""
        return self._sync_follower.session_id

    @property
    def offset(self) -> int:
        """Where the next lines start: the end of the lines handed out so far."""
        return self._offset

    @property
    def closed(self) -> bool:
        return self._closed

    def _wait(self, timeout: float) -> list[bytes]:
        lines = self._sync_follower.next_lines(timeout)
        if lines:
            self._offset = self._sync_follower.offset
        return lines

    async def next_lines(self, timeout: float) -> list[bytes]:
        """The lines pushed since :attr:`offset`, waiting up to ``timeout``
        seconds for some (``[]`` if none came). Cancelling the wait loses no
        line: the next call hands out what it had got."""
        if self._closed:
            raise InvalidInputError("the follower is closed")
        if self._waiting:
            raise InvalidInputError("the follower is already waiting in another next_lines")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # A bad timeout goes to the sync follower as it is, which says why.
        wait = timeout if not timeout >= 0 else min(timeout, _FOLLOW_WAIT)
        self._waiting = True
        try:
            while True:
                if self._pending is None:
                    self._pending = self._serial.submit(functools.partial(self._wait, wait))
                # Shielded: a cancelled caller leaves the wait to finish, and
                # its lines to the next call.
                lines = await asyncio.shield(asyncio.wrap_future(self._pending))
                self._pending = None
                if lines or loop.time() >= deadline or self._closed:
                    return lines
                wait = min(max(deadline - loop.time(), 0.0), _FOLLOW_WAIT)
        finally:
            self._waiting = False

    def __aiter__(self) -> AsyncIterator[list[bytes]]:
        return self

    async def __anext__(self) -> list[bytes]:
        while not self._closed:
            lines = await self.next_lines(_FOLLOW_WAIT)
            if lines:
                return lines
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """End the iteration (after the wait in progress, at most
        half a second) and close the follower's connection. Twice does
        nothing."""
        self._closed = True
        pending = self._pending
        if pending is not None:
            await asyncio.shield(asyncio.wrap_future(pending))
        await asyncio.to_thread(self._sync_follower.close)

    def __repr__(self) -> str:
        return f"<sessionkit.aio.Follower at {self._offset}{' (closed)' if self._closed else ''}>"


class BackgroundPush(_Opened[_api.BackgroundPush]):
    """:class:`sessionkit.BackgroundPush`, off the event loop. ``async with``
    (or :meth:`stop`) pushes the rest and gives the lease back."""

    flush = _Forward(_api.BackgroundPush.flush)
    stop = _Forward(_api.BackgroundPush.stop)

    @property
    def pushed(self) -> int:
        """Bytes of the session's log the remote holds, as of the last push."""
        return self._sync.pushed

    @property
    def session_id(self) -> str:
        """The session pushed."""
        return self._sync.session_id

    @property
    def closed(self) -> bool:
        """Whether it was stopped or closed."""
        return self._sync.closed

    async def aclose(self) -> None:
        """Stop pushing (the rest is pushed, the lease given back) unless
        stopped already. Twice does nothing."""
        await self._run(self._sync.close)

    async def __aenter__(self: _H) -> _H:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def _follower(pair: tuple[_SyncFollower, int]) -> Follower:
    return Follower(*pair)


class Remote(_Lazy[_api.Remote]):
    """:class:`sessionkit.Remote`, off the event loop.

    Takes the arguments of :class:`sessionkit.Remote` but does no I/O: the
    database is connected (its schema created or migrated) by the first call,
    or by :meth:`open`, on a worker thread. Calls take turns on one
    connection. ``aclose()`` (or ``async with``) refuses further calls.
    """

    def __init__(
        self,
        store: Store,
        *,
        url: str | None = None,
        project: str | None = None,
        holder: str | None = None,
        lease_ttl_ms: int | None = None,
        map_paths: Mapping[_api.StrPath, _api.StrPath] | None = None,
    ) -> None:
        self._lazy(
            lambda: _api.Remote(
                store._sync_handle(),
                url=url,
                project=project,
                holder=holder,
                lease_ttl_ms=lease_ttl_ms,
                map_paths=map_paths,
            ),
            "the remote",
        )

    async def open(self) -> _api.Remote:
        """Connect now, if no call did yet; returns the sync remote."""
        return await self._run(self._sync_handle)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self._sync is not None else "not connected yet"
        return f"<sessionkit.aio.Remote ({state})>"

    schema_version = _Forward(_api.Remote.schema_version)
    list = _Forward(_api.Remote.list)
    acquire = _Forward(_api.Remote.acquire)
    renew = _Forward(_api.Remote.renew)
    release = _Forward(_api.Remote.release)
    push = _Forward(_api.Remote.push)
    pull = _Forward(_api.Remote.pull)
    push_in_background = _ForwardAs(_api.Remote.push_in_background, BackgroundPush)

    async def project(self) -> str:
        """The name the project's sessions are shared under."""
        return await self._run(lambda: self._sync_handle().project)

    async def holder(self) -> str:
        """Who this handle takes leases as."""
        return await self._run(lambda: self._sync_handle().holder)

    async def follow(self, session_id: str, start: int | None = None) -> Follower:
        """Follow a session as others push it, from byte ``start`` of its log
        (default: where the remote stands); see :class:`Follower`."""

        def follow() -> tuple[_SyncFollower, int]:
            f = self._sync_handle().follow(session_id, start)
            return f, f.offset

        return _follower(await self._run(follow))


__all__ = [
    "Call",
    "Store",
    "Session",
    "SessionView",
    "Subagent",
    "Remote",
    "Follower",
    "BackgroundPush",
]
