"""An OpenAI Agents SDK ``Session`` kept in sessionkit.

``SessionkitSession`` implements the SDK's session protocol (``session_id``,
``session_settings``, ``get_items``, ``add_items``, ``pop_item``,
``clear_session``). The SDK's items are stored as ordinary sessionkit messages
(see ``sessionkit.responses`` in the core), so the session shows in the index
and the ``sessionkit`` CLI and can be compacted, forked and undone; the items
come back equal to what was added.

- ``add_items`` is one ``write(2)``: an item is durable against a killed
  process when it returns (against power loss too with
  ``durability="always"``).
- ``pop_item`` moves the head back over the latest item: the item stays in the
  log, nothing is rewritten (the runner pops to roll back a retry).
- ``clear_session`` moves the head to before the first item: ``get_items``
  returns nothing, but the old items stay in the log on a dead branch,
  recoverable (``Session.read().branches()``, ``resume_at``, a fork) until the
  session is deleted. :meth:`SessionkitSession.erase` deletes them for good.

Requires the SDK: ``pip install "sessionkit[openai-agents]"``.

The protocol's small print, as the SDK's own ``SQLiteSession`` has it:

- ``session_settings`` is a ``SessionSettings`` (a dict is turned into one, an
  unknown key raises ``TypeError``; absent, ``SessionSettings()``).
- ``get_items(limit)``: ``limit=None`` takes the settings' limit, and ``None``
  there means every item; ``0`` gives none; a negative limit gives every item
  (SQLite's ``LIMIT -1``); items come oldest first.
- ``close()`` twice does nothing; ``async with`` closes the session off the
  event loop.

Nothing touches the disk on the event loop: the adapter is built on
:mod:`sessionkit.aio`. Constructing it does no I/O at all (bad settings are
still refused there); the store and the session are opened by the first call
that needs them (or :meth:`SessionkitSession.open`), on a worker thread.
Closing is ``aclose()`` or ``async with``; a plain ``close()`` (it waits for
the index entry's flush) stays for synchronous code.

Concurrency, as the SDK's own stores allow it: any number of
``SessionkitSession`` objects, in any number of threads and worker processes,
may work on one conversation. Each is a *shared writer*
(``Store.open_conversation``): a write takes the session's lock only for its
moment (waiting up to the store's busy timeout, 5 s, before ``BusyError``),
first reads what the others added, and lands whole after them; ``pop_item`` and
``clear_session`` act on the newest item whoever added it. Reads take no lock.
The calls of one ``SessionkitSession`` run in the order they were started, from
any event loop or thread.

Any ``session_id`` string (up to 1,024 UTF-8 bytes: ``"user@example.com"``,
``"tenant/123"``) is accepted and kept as ``session_id``; the store files it
under a file-safe session id (``sessionkit.conversation_session_id``) and
``sessionkit list`` shows the original.

Retention: nothing is ever pruned by the adapter. A store keeps every session
unless its host opts in to a limit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, cast

try:
    from agents.memory.session_settings import (
        SessionSettings,
        coerce_session_settings,
        resolve_session_limit,
    )
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "sessionkit.integrations.openai_agents needs the OpenAI Agents SDK: "
        'pip install "sessionkit[openai-agents]"'
    ) from e

from .. import _native, aio
from .._api import Store as _SyncStore
from .._types import _default_str
from .._types import Durability, RewindMode
from ..errors import InvalidInputError

if TYPE_CHECKING:
    from agents.items import TResponseInputItem


def _new_session_id() -> str:
    """A fresh session id from the core (a UUIDv7), made without I/O."""
    return _native.new_session_id()


class SessionkitSession:
    """An OpenAI Agents SDK session stored by sessionkit.

    ``session_id=None`` makes a new session id; a given id (any string) that
    does not exist yet is created on first use; an existing one is opened. Any
    number of instances may work on one id, in any threads and processes.
    ``project`` picks the project store (the directory whose sessions these
    are) and ``home`` the sessionkit home (default ``$SESSIONKIT_HOME``, else
    ``~/.sessionkit``); ``store`` (a :class:`sessionkit.aio.Store` or a
    :class:`sessionkit.Store`) is used instead when given.

    ``model_view=True`` makes ``get_items`` return the model view instead of
    the raw history: compaction applied, and a ``limit`` that never cuts a tool
    output from its call (leading system items are always kept).

    ``session_settings`` (a ``SessionSettings`` or a dict of its fields) holds
    the default ``limit`` of ``get_items``.

    The constructor does no I/O: the first call opens the session.
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str | None = None,
        *,
        project: str | os.PathLike[str] = _default_str("project"),
        home: str | os.PathLike[str] | None = None,
        durability: Durability | str | None = None,
        model_view: bool = False,
        session_settings: SessionSettings | dict[str, object] | None = None,
        store: aio.Store | _SyncStore | None = None,
    ) -> None:
        # First, as SQLiteSession does: bad settings open nothing.
        settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        if store is None:
            store = aio.Store(project, home=home, durability=durability)
        elif isinstance(store, _SyncStore):
            store = aio.Store.wrap(store)
        self.store: aio.Store = store
        """The sessionkit store holding the session (opened on first use)."""
        self.session_id = session_id if session_id is not None else _new_session_id()
        self.session_settings = settings
        self.model_view = model_view
        self._session: aio.Session | None = None
        self._closed = False
        self._lock = threading.Lock()

    @classmethod
    def _wrap(cls, session: aio.Session, like: SessionkitSession) -> SessionkitSession:
        new = cls.__new__(cls)
        new.store = like.store
        new._session = session
        new._closed = False
        new._lock = threading.Lock()
        new.session_id = session.id
        new.session_settings = like.session_settings
        new.model_view = like.model_view
        return new

    def _open_on_thread(self) -> aio.Session:
        # Runs on the store's worker thread, whose calls take turns: the
        # first call opens, the others find it open.
        with self._lock:
            if self._closed:
                raise InvalidInputError(f"SessionkitSession {self.session_id!r} is closed")
            if self._session is None:
                sync = self.store._sync_handle().open_conversation(self.session_id)
                self._session = aio.Session(sync)
            return self._session

    async def open(self) -> aio.Session:
        """The sessionkit session (a shared writer), opened on a worker thread
        by the first call that needs it: for everything beyond the SDK's
        protocol."""
        session = self._session
        if session is not None:
            return session
        return await self.store._run(self._open_on_thread)

    @property
    def session(self) -> aio.Session:
        """The sessionkit session, once a call opened it (:meth:`open` opens
        it); ``InvalidInputError`` before."""
        session = self._session
        if session is None:
            raise InvalidInputError(
                f"SessionkitSession {self.session_id!r} is not open yet: await its open()"
            )
        return session

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` or :meth:`close` was called."""
        return self._closed

    # -- the SDK's Session protocol ------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The latest ``limit`` items, oldest first: ``None`` takes the
        settings' limit (``None`` there: all), ``0`` none, a negative limit all."""
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit < 0:
            limit = None
        session = await self.open()
        items = await session.responses_items(limit, model_view=self.model_view)
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items in one write; durable when this returns."""
        session = await self.open()
        await session.append_responses_items(cast("list[Mapping[str, object]]", items))

    async def pop_item(self) -> TResponseInputItem | None:
        """Move the head back over the latest item and return it (None if empty)."""
        session = await self.open()
        item = await session.pop_responses_item()
        return cast("TResponseInputItem | None", item)

    async def clear_session(self) -> None:
        """Empty what ``get_items`` returns; the items stay recoverable in the
        log until the session is deleted (see :meth:`erase`)."""
        session = await self.open()
        await session.set_head(None)

    # -- beyond the protocol --------------------------------------------------------

    async def erase(self) -> None:
        """Delete the session's log, sidecars and file history for good, and
        start it again empty under the same id. Large items stored as blobs are
        freed by the store's next ``gc`` once 15 minutes old."""
        session = await self.open()
        self._session = await session.erase()

    async def fork(self, *, title: str | None = None) -> SessionkitSession:
        """A new session holding the same items, open for writing (a branch to
        try something without touching this one)."""
        session = await self.open()
        fork = await session.fork(title=title)
        return SessionkitSession._wrap(fork, self)

    async def rewind(self, turns: int = 1) -> None:
        """Go back to before the ``turns``-th latest user input: the turn and
        everything after it leave the history (they stay in the log)."""
        session = await self.open()
        await session.rewind_turns(turns, RewindMode.CONVERSATION)

    async def aclose(self) -> None:
        """Release the session (its index entry flushed), off the event loop,
        after the calls started before. Closing twice does nothing; a closed
        adapter that was never used opens nothing."""
        with self._lock:
            self._closed = True
            session = self._session
        if session is not None:
            await session.aclose()

    def close(self) -> None:
        """:meth:`aclose` for synchronous code: waits for the index entry's
        flush on the calling thread."""
        with self._lock:
            self._closed = True
            session = self._session
        if session is not None:
            session.blocking.close()

    async def __aenter__(self) -> SessionkitSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __enter__(self) -> SessionkitSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._session is not None else "not opened yet"
        return f"<SessionkitSession {self.session_id!r} ({state})>"


__all__ = ["SessionkitSession"]

