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

Concurrency, as the SDK's own stores allow it: any number of
``SessionkitSession`` objects, in any number of threads and worker processes,
may work on one conversation. Each is a *shared writer*
(``Store.open_conversation``): a write takes the session's lock only for its
moment (waiting up to the store's busy timeout, 5 s, before ``BusyError``),
first reads what the others added, and lands whole after them; ``pop_item`` and
``clear_session`` act on the newest item whoever added it. Reads take no lock.
Calls run off the event loop, in ``asyncio.to_thread``, with the GIL released.

Any ``session_id`` string (up to 1,024 UTF-8 bytes: ``"user@example.com"``,
``"tenant/123"``) is accepted and kept as ``session_id``; the store files it
under a file-safe session id (``sessionkit.conversation_session_id``) and
``sessionkit list`` shows the original.

Retention: nothing is ever pruned by the adapter. A store keeps every session
unless its host opts in to a limit.
"""

from __future__ import annotations

import asyncio
import os
from types import TracebackType
from typing import TYPE_CHECKING, Any

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

from .._api import Session, Store
from .._types import Durability, RewindMode

if TYPE_CHECKING:
    from agents.items import TResponseInputItem


class SessionkitSession:
    """An OpenAI Agents SDK session stored by sessionkit.

    ``session_id=None`` creates a new session; a given id (any string) that
    does not exist yet is created; an existing one is opened. Any number of
    instances may work on one id, in any threads and processes. ``project`` picks
    the project store (the directory whose sessions these are) and ``home``
    the sessionkit home (default ``$SESSIONKIT_HOME``, else ``~/.sessionkit``).

    ``model_view=True`` makes ``get_items`` return the model view instead of
    the raw history: compaction applied, and a ``limit`` that never cuts a tool
    output from its call (leading system items are always kept).

    ``session_settings`` (a ``SessionSettings`` or a dict of its fields) holds
    the default ``limit`` of ``get_items``.
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str | None = None,
        *,
        project: str | os.PathLike[str] = ".",
        home: str | os.PathLike[str] | None = None,
        durability: Durability | str | None = None,
        model_view: bool = False,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        store: Store | None = None,
    ) -> None:
        # First, as SQLiteSession does: bad settings open nothing.
        settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.store = store if store is not None else Store(project, home=home, durability=durability)
        """The sessionkit store holding the session."""
        if session_id is None:
            # A fresh id from the core, then shared like any other.
            fresh = self.store.create_session()
            session_id = fresh.id
            fresh.close()
        self.session: Session = self.store.open_conversation(session_id)
        """The sessionkit session (a shared writer), for everything beyond the
        SDK's protocol."""
        self.session_id = session_id
        self.session_settings = settings
        self.model_view = model_view

    @classmethod
    def _wrap(cls, session: Session, like: SessionkitSession) -> SessionkitSession:
        new = cls.__new__(cls)
        new.store = session.store
        new.session = session
        new.session_id = session.id
        new.session_settings = like.session_settings
        new.model_view = like.model_view
        return new

    # -- the SDK's Session protocol ------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The latest ``limit`` items, oldest first: ``None`` takes the
        settings' limit (``None`` there: all), ``0`` none, a negative limit all."""
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit < 0:
            limit = None
        native = self.session._native
        items = await asyncio.to_thread(native.responses_items, limit, self.model_view)
        return items  # type: ignore[no-any-return]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items in one write; durable when this returns."""
        await asyncio.to_thread(self.session._native.append_responses_items, items)

    async def pop_item(self) -> TResponseInputItem | None:
        """Move the head back over the latest item and return it (None if empty)."""
        item = await asyncio.to_thread(self.session._native.pop_responses_item)
        return item  # type: ignore[no-any-return]

    async def clear_session(self) -> None:
        """Empty what ``get_items`` returns; the items stay recoverable in the
        log until the session is deleted (see :meth:`erase`)."""
        await asyncio.to_thread(self.session.set_head, None)

    # -- beyond the protocol --------------------------------------------------------

    async def erase(self) -> None:
        """Delete the session's log, sidecars and file history for good, and
        start it again empty under the same id. Large items stored as blobs are
        freed by the store's next ``gc`` once 15 minutes old."""
        self.session = await asyncio.to_thread(self.session.erase)

    async def fork(self, *, title: str | None = None) -> SessionkitSession:
        """A new session holding the same items, open for writing (a branch to
        try something without touching this one)."""
        fork = await asyncio.to_thread(self.session.fork, title=title)
        return SessionkitSession._wrap(fork, self)

    async def rewind(self, turns: int = 1) -> None:
        """Go back to before the ``turns``-th latest user input: the turn and
        everything after it leave the history (they stay in the log)."""
        await asyncio.to_thread(self.session.rewind_turns, turns, RewindMode.CONVERSATION)

    def close(self) -> None:
        """Release the session's lock. Closing twice does nothing."""
        self.session.close()

    async def __aenter__(self) -> SessionkitSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Closing flushes the index entry: disk work, kept off the event loop.
        await asyncio.to_thread(self.close)

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
        return f"<SessionkitSession {self.session_id}>"


__all__ = ["SessionkitSession"]

