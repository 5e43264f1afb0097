"""A LangGraph checkpointer kept in sessionkit.

``SessionkitSaver`` is a ``BaseCheckpointSaver`` (langgraph-checkpoint 4.x):
pass it as ``checkpointer=`` to ``StateGraph.compile`` and a graph's threads
are sessionkit sessions, resumable from any process, listed by the
``sessionkit`` CLI, pushed and pulled through the PostgreSQL remote like any
other session.

How a thread is stored (all of it decided by the core; this module only
converts LangGraph's dicts and tuples to the core's calls and back):

- A thread is a session. Any ``thread_id`` is accepted and kept; the store
  files it under a file-safe session id, as it does conversation ids.
- Each checkpoint is a record naming its parent: a thread's checkpoints form a
  tree, and time travel from an old checkpoint (``update_state`` on it, then a
  run) is a branch. ``checkpoint_ns`` (subgraphs) is kept inside the thread.
- Channel values are content-addressed blobs of the bytes of the saver's
  ``serde``: a value that did not change between checkpoints, or that forks
  share, is stored once. A chat thread's growing message list does not grow
  the store by the whole list at every step.
- Pending writes are records too; ``get_tuple`` returns them in LangGraph's
  replay order.

Beyond the base protocol: ``copy_thread`` (a sessionkit fork of the thread's
checkpoints), ``prune`` (``"keep_latest"`` or ``"delete"``),
``delete_for_runs`` and ``get_delta_channel_history`` (for ``DeltaChannel``).
``delete_thread`` moves the thread's session to the store's trash, from which
``Store.restore_session`` brings it back until the store's ``gc`` purges it.

Every method has its ``a*`` form, which runs the call off the event loop in
``asyncio.to_thread`` (the core releases the GIL while it works). One saver
may be shared by any number of threads and graphs; any number of savers, in
any number of processes, may work on one store, and on one thread.

Requires langgraph-checkpoint: ``pip install "sessionkit[langgraph]"``.
"""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import (
        BaseCheckpointSaver,
        ChannelVersions,
        Checkpoint,
        CheckpointMetadata,
        CheckpointTuple,
        DeltaChannelHistory,
        PendingWrite,
        get_checkpoint_id,
        get_checkpoint_metadata,
    )
    from langgraph.checkpoint.serde.base import SerializerProtocol
    from langgraph.checkpoint.serde.types import TASKS
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "sessionkit.integrations.langgraph needs langgraph-checkpoint: "
        'pip install "sessionkit[langgraph]"'
    ) from e

from .. import _native
from .._api import Store
from .._types import Durability, _default_str
from ..errors import InvalidInputError

if TYPE_CHECKING:
    from .._native import CheckpointRecord
    from .._native import PendingWrite as NativePendingWrite

# `list` is a method of the saver: inside its class the builtin needs a name.
_List = builtins.list


def _thread_id(config: RunnableConfig) -> str:
    # LangGraph lets a thread id be any value with a string form (a UUID, an int).
    return str(config["configurable"]["thread_id"])


def _ns(config: RunnableConfig) -> str:
    return cast(str, config["configurable"].get("checkpoint_ns", ""))


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


class SessionkitSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer storing threads as sessionkit sessions.

    ``project`` picks the project store (the directory whose sessions these
    are) and ``home`` the sessionkit home (default ``$SESSIONKIT_HOME``, else
    ``~/.sessionkit``). ``durability`` is the store's: ``"onSync"`` (the
    default: a checkpoint is safe from a killed process once ``put`` returns),
    ``"always"`` (from a power loss too: ``fsync`` before ``put`` returns) or
    ``"never"``.
    ``serde`` serializes channel values and writes, as for any LangGraph
    saver (default: LangGraph's ``JsonPlusSerializer``).

    ``close()`` (or leaving ``with`` / ``async with``) ends the saver's use;
    any call after it raises ``InvalidInputError``. Closing twice does nothing.
    """

    def __init__(
        self,
        *,
        project: str | os.PathLike[str] = _default_str("project"),
        home: str | os.PathLike[str] | None = None,
        durability: Durability | str | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.store: Store = Store(project, home=home, durability=durability)
        """The sessionkit store holding the threads."""
        self._closed = False

    def _core(self) -> _native.Store:
        if self._closed:
            raise InvalidInputError("this SessionkitSaver is closed")
        return self.store._native

    # -- records to LangGraph's types --------------------------------------------

    def _tuple(self, record: CheckpointRecord) -> CheckpointTuple:
        loads = self.serde.loads_typed
        thread_id, ns = record["thread_id"], record["ns"]
        values = {ch: loads(v) for ch, v in record["values"].items()}
        checkpoint = cast(Checkpoint, {**record["checkpoint"], "channel_values": values})
        if sends := record["pending_sends"]:
            # A checkpoint of a format before 4 kept its pending sends in its
            # parent's writes (the core finds them): LangGraph reads them as the
            # tasks channel, at the checkpoint's newest version.
            values[TASKS] = [loads(v) for v in sends]
            versions = checkpoint["channel_versions"]
            versions[TASKS] = max(versions.values()) if versions else self.get_next_version(None, None)
        parent_id = record["parent_id"]
        return CheckpointTuple(
            config=_config(thread_id, ns, record["id"]),
            checkpoint=checkpoint,
            metadata=cast(CheckpointMetadata, record["metadata"]),
            parent_config=_config(thread_id, ns, parent_id) if parent_id is not None else None,
            pending_writes=self._pending_writes(record["writes"]),
        )

    def _pending_writes(self, writes: _List[NativePendingWrite]) -> _List[PendingWrite]:
        loads = self.serde.loads_typed
        return [(task_id, channel, loads(value)) for task_id, channel, value, _, _ in writes]

    # -- the base protocol ---------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the thread's latest in its
        namespace when it names none; ``None`` if there is none."""
        record = self._core().checkpoint_get(
            _thread_id(config), _ns(config), get_checkpoint_id(config)
        )
        return self._tuple(record) if record is not None else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of the thread (and namespace, and
        checkpoint) ``config`` names, or of every thread when it is ``None``;
        with metadata equal to ``filter``'s, older than ``before``, at most
        ``limit``."""
        configurable = config["configurable"] if config is not None else {}
        thread_id = configurable.get("thread_id")
        records = self._core().checkpoint_list(
            str(thread_id) if thread_id is not None else None,
            configurable.get("checkpoint_ns"),
            configurable.get("checkpoint_id"),
            filter,
            get_checkpoint_id(before) if before is not None else None,
            limit,
        )
        for record in records:
            yield self._tuple(record)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint as a child of the one ``config`` names, with the
        values of the channels in ``new_versions``; returns its config."""
        thread_id, ns = _thread_id(config), _ns(config)
        record = dict(checkpoint)
        channel_values = cast(dict[str, Any], record.pop("channel_values"))
        dumps = self.serde.dumps_typed
        values = [
            (channel, version, dumps(channel_values[channel]) if channel in channel_values else None)
            for channel, version in new_versions.items()
        ]
        self._core().checkpoint_put(
            thread_id,
            ns,
            record,
            dict(get_checkpoint_metadata(config, metadata)),
            get_checkpoint_id(config),
            values,
        )
        return _config(thread_id, ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes against the checkpoint ``config`` names."""
        dumps = self.serde.dumps_typed
        self._core().checkpoint_put_writes(
            _thread_id(config),
            _ns(config),
            cast(str, config["configurable"]["checkpoint_id"]),
            task_id,
            task_path,
            [(channel, dumps(value)) for channel, value in writes],
        )

    def delete_thread(self, thread_id: str) -> None:
        """Move the thread's session, every checkpoint and write, to the trash."""
        self._core().checkpoint_delete_thread(str(thread_id))

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The version after ``current``: strings that sort as they increase."""
        return _native.next_channel_version(current)

    # -- the extended capabilities ------------------------------------------------

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and value of one thread into another."""
        self._core().checkpoint_copy_thread(str(source_thread_id), str(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep only the newest checkpoint of each namespace
        (with its writes); ``"delete"``: remove every checkpoint."""
        self._core().checkpoint_prune([str(t) for t in thread_ids], strategy)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Remove, in every thread, the checkpoints (and their writes) whose
        metadata's ``run_id`` is listed."""
        self._core().checkpoint_delete_for_runs([str(r) for r in run_ids])

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """For each channel, the writes on the path to the checkpoint
        ``config`` names, oldest first, and the nearest stored value before
        them (``seed``), as ``BaseCheckpointSaver`` defines them."""
        history = self._core().checkpoint_delta_history(
            _thread_id(config), _ns(config), get_checkpoint_id(config), _List(channels)
        )
        result: dict[str, DeltaChannelHistory] = {}
        for channel, found in history.items():
            entry: DeltaChannelHistory = {"writes": self._pending_writes(found["writes"])}
            if "seed" in found:
                entry["seed"] = self.serde.loads_typed(found["seed"])
            result[channel] = entry
        return result

    # -- the async forms, off the event loop --------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        # The core answers with the whole list: one trip to a thread.
        tuples = await asyncio.to_thread(
            lambda: _List(self.list(config, filter=filter, before=before, limit=limit))
        )
        for t in tuples:
            yield t

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )

    # -- its life ------------------------------------------------------------------

    def close(self) -> None:
        """End the saver's use: later calls raise ``InvalidInputError``. The
        store takes no lock between calls, so there is nothing to release;
        closing twice does nothing."""
        self._closed = True

    def __enter__(self) -> SessionkitSaver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> SessionkitSaver:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SessionkitSaver {self.store.dir}>"


__all__ = ["SessionkitSaver"]
