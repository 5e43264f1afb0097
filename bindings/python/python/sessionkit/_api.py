"""The typed handles: :class:`Store`, :class:`Session`, :class:`SessionView` and
:class:`Subagent`. Each method converts its arguments, calls one operation of
the native core (which releases the GIL while it works) and converts the
result; the logic is in the core.

Thread safety: every handle may be shared by any number of threads at once.
A :class:`Session` or :class:`Subagent` serialises appends; closing it waits
for calls in flight, and any call after it raises ``InvalidInputError``.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from types import TracebackType
from typing import Generic, TypeVar, Union

from . import _native
from ._native import Session as _NativeSession
from ._native import SessionView as _NativeView
from ._native import Subagent as _NativeSubagent
from ._types import (
    Branch,
    CheckpointSummary,
    CompactionPlan,
    DoctorReport,
    Durability,
    ExportFormat,
    ExportTarget,
    ExternalChange,
    FileHistoryCheck,
    GcReport,
    GroupResult,
    HistoryRef,
    HistorySizeReport,
    IndexEntryDict,
    Instructions,
    JsonObject,
    JsonValue,
    Lease,
    MemoryEntry,
    MemoryScope,
    Message,
    MessageInput,
    NativeExport,
    PullReport,
    PushReport,
    ReadReport,
    RebuildReport,
    RemoteSession,
    RewindMode,
    RewindPlan,
    RewindPreview,
    RewindResult,
    SearchResults,
    SessionEntry,
    SessionInfo,
    SessionPage,
    SettingSource,
    Settings,
    SettingsWrite,
    StoreInfo,
    TrashedSession,
    TreeNode,
    UndoCandidate,
    ViewInfo,
    _default_int,
    _default_str,
)
from .errors import InvalidInputError, error_from_code

StrPath = Union[str, "os.PathLike[str]"]

_E = TypeVar("_E", bound=enum.Enum)


def _enum(cls: type[_E], value: object, name: str) -> _E:
    """``value`` as a member of ``cls``; ``InvalidInputError`` naming the
    accepted values otherwise."""
    try:
        return cls(value)
    except ValueError:
        accepted = ", ".join(repr(m.value) for m in cls)
        raise InvalidInputError(
            f"argument `{name}` must be one of {accepted}, not {value!r}"
        ) from None




def _path(p: StrPath) -> str:
    return os.fspath(p) if isinstance(p, os.PathLike) else p


def _mappings(map_paths: Mapping[StrPath, StrPath]) -> object:
    """``{old: new}`` as the core's ``mapPaths`` (``[{"from", "to"}]``); any
    other value is passed on for the native side to refuse, saying why."""
    if not isinstance(map_paths, Mapping):
        return map_paths
    return [{"from": _path(k), "to": _path(v)} for k, v in map_paths.items()]


def _paths(paths: Iterable[StrPath]) -> object:
    if isinstance(paths, (str, bytes)) or not isinstance(paths, Iterable):
        return paths  # refused by the native side, which says why
    return [_path(p) if isinstance(p, os.PathLike) else p for p in paths]


def _model_options(last_n: int | None, token_budget: int | None) -> JsonObject:
    opts: JsonObject = {}
    if last_n is not None:
        opts["lastN"] = last_n
    if token_budget is not None:
        opts["tokenBudget"] = token_budget
    return opts


def _entry(d: IndexEntryDict) -> SessionEntry:
    return SessionEntry.from_dict(d)


_SCOPE = MemoryScope(_default_str("memoryScope"))


def _scope(scope: MemoryScope | str) -> str:
    return _enum(MemoryScope, scope, "scope").value


class Store:
    """The sessions of one project: its index, its logs, blobs and file history.

    Opening creates ``<home>/projects/<project code>/`` if needed and takes no
    lock. ``home`` defaults to ``$SESSIONKIT_HOME``, else ``~/.sessionkit``.
    Every session is kept unless ``max_sessions`` is set: then creating a
    session moves the oldest beyond it to the trash (:meth:`list_trash`,
    :meth:`restore_session`), and :meth:`gc` purges them after
    ``trash_grace_secs`` (7 days).

    Thread-safe: share one store between threads.
    """

    def __init__(
        self,
        project: StrPath = _default_str("project"),
        *,
        home: StrPath | None = None,
        durability: Durability | str | None = None,
        max_sessions: int | None = None,
        trash_grace_secs: int | None = None,
        blob_threshold: int | None = None,
        max_record_bytes: int | None = None,
        deterministic: dict[str, int] | None = None,
        busy_timeout_ms: int | None = None,
    ) -> None:
        opts: dict[str, object] = {}
        if home is not None:
            opts["home"] = _path(home)
        if durability is not None:
            opts["durability"] = _enum(Durability, durability, "durability").value
        if max_sessions is not None:
            opts["maxSessions"] = max_sessions
        if trash_grace_secs is not None:
            opts["trashGraceSecs"] = trash_grace_secs
        if blob_threshold is not None:
            opts["blobThreshold"] = blob_threshold
        if max_record_bytes is not None:
            opts["maxRecordBytes"] = max_record_bytes
        if deterministic is not None:
            opts["deterministic"] = deterministic
        if busy_timeout_ms is not None:
            opts["busyTimeoutMs"] = busy_timeout_ms
        self._native = _native.Store(_path(project), opts)

    def __repr__(self) -> str:
        return repr(self._native)

    def close(self) -> None:
        """Close the handle: every later call raises ``InvalidInputError``.
        Sessions opened from it stay open. Closing twice does nothing."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return self._native.closed

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- where it is ------------------------------------------------------------

    def info(self) -> StoreInfo:
        """``projectRoot``, ``dir`` (holding the logs), ``projectCode``, ``indexPath``."""
        return self._native.info()

    @property
    def dir(self) -> str:
        """The directory holding this project's session logs."""
        return self.info()["dir"]

    @property
    def project_root(self) -> str:
        """The canonical project root."""
        return self.info()["projectRoot"]

    @property
    def project_code(self) -> str:
        """The project's directory name under ``<home>/projects/``."""
        return self._native.project_code

    def log_path(self, session_id: str) -> str:
        """Where the log of ``session_id`` lives (whether or not it exists)."""
        return self._native.log_path(session_id)

    # -- sessions ---------------------------------------------------------------

    def create_session(self, *, id: str | None = None, title: str | None = None) -> Session:
        """Start a new session, open for writing (it holds the session's lock).

        Raises ``ConflictError`` if ``id`` is taken, ``InvalidInputError`` if it
        is not a valid id.
        """
        opts: JsonObject = {}
        if id is not None:
            opts["id"] = id
        if title is not None:
            opts["title"] = title
        return Session(self._native.create_session(opts), self)

    def open_session(self, session_id: str) -> Session:
        """Open a session for writing; ``BusyError`` while another writer holds it."""
        return Session(self._native.open_session(session_id), self)

    def open_shared(self, session_id: str) -> Session:
        """Open a session as a *shared writer*: the handle takes the session's
        writer lock only for the moment of each write, waiting up to
        ``busy_timeout_ms`` (5 s) for another holder, then ``BusyError``. Any
        number of shared handles, in any threads and processes, write one
        session; each write continues from the head at that moment."""
        return Session(self._native.open_shared(session_id), self)

    def open_conversation(self, conversation_id: str) -> Session:
        """The conversation named ``conversation_id`` (any non-empty string of at
        most 1,024 UTF-8 bytes) as a shared writer (see :meth:`open_shared`),
        created on first use. Its session id is
        :func:`sessionkit.conversation_session_id`; the original id is kept in
        the index (``SessionEntry.conversation_id``)."""
        return Session(self._native.open_conversation(conversation_id), self)

    def open_or_create_session(self, session_id: str) -> Session:
        """Open session ``session_id`` for writing, creating it with that id if needed."""
        return Session(self._native.open_or_create_session(session_id), self)

    def fork_session(
        self, source_id: str, *, at: str | None = None, title: str | None = None
    ) -> Session:
        """Fork a session (whole, or up to message ``at``) into a new one, open for writing."""
        opts: JsonObject = {}
        if at is not None:
            opts["at"] = at
        if title is not None:
            opts["title"] = title
        return Session(self._native.fork_session(source_id, opts), self)

    def read_session(self, session_id: str) -> SessionView:
        """Load a session for reading, without a lock (a writer may be appending)."""
        return SessionView(self._native.read_session(session_id))

    def model_view(
        self, session_id: str, *, last_n: int | None = None, token_budget: int | None = None
    ) -> list[Message]:
        """What goes to the model on resume, read from the end of the log."""
        return self._native.model_view(session_id, _model_options(last_n, token_budget))

    def list_sessions(self) -> list[SessionEntry]:
        """The project's sessions, newest first."""
        return [_entry(d) for d in self._native.list_sessions()]

    def list_page(self, *, limit: int | None = None, offset: int = 0) -> SessionPage:
        """``limit`` entries of :meth:`list_sessions` from ``offset``, and how many
        sessions there are: a picker's first screen of a project of thousands."""
        opts: JsonObject = {"offset": offset}
        if limit is not None:
            opts["limit"] = limit
        page = self._native.list_page(opts)
        return SessionPage([_entry(d) for d in page["sessions"]], page["total"])

    def session_entry(self, session_id: str) -> SessionEntry:
        """One session's index entry; ``NotFoundError`` for an unknown session."""
        return _entry(self._native.session_entry(session_id))

    def session_ids(self) -> list[str]:
        """Ids of the project's session logs, sorted, read from the directory."""
        return self._native.session_ids()

    def resolve_session(self, prefix: str) -> str:
        """The full id of the session ``prefix`` names (an id or a unique prefix)."""
        return self._native.resolve_session(prefix)

    def continue_session(self) -> SessionEntry | None:
        """The session a ``/continue`` would pick: the latest one with messages."""
        d = self._native.continue_session()
        return None if d is None else _entry(d)

    def rename_session(self, session_id: str, title: str) -> SessionEntry:
        """Rename a session no writer holds (``BusyError`` otherwise)."""
        return _entry(self._native.rename_session(session_id, title))

    def delete_session(self, session_id: str) -> None:
        """Delete a session: its entry, log, sidecars and file-history branch.

        Its blobs go with the next :meth:`gc` once 15 minutes old.
        """
        self._native.delete_session(session_id)

    def list_trash(self) -> list[TrashedSession]:
        """The sessions pruned into the trash, most recently trashed first:
        ``{"id", "trashedAt", "reason", "title", "updatedAt", "messageCount",
        "purgeAfter"}`` each."""
        return self._native.list_trash()

    def restore_session(self, session_id: str) -> SessionEntry:
        """Move a trashed session back, with its subagents and file history.

        ``NotFoundError`` if it is not in the trash, ``ConflictError`` if a live
        session has that id.
        """
        return _entry(self._native.restore_session(session_id))

    def export_session(
        self,
        session_id: str,
        format: ExportFormat | str = ExportFormat(_default_str("exportFormat")),
    ) -> str:
        """The active path as seed-style JSONL, JSON or a Markdown transcript."""
        return self._native.export_session(
            session_id, _enum(ExportFormat, format, "format").value
        )

    def export_to(
        self,
        session_id: str,
        to: ExportTarget | str,
        home: StrPath | None = None,
        model_provider: str | None = None,
    ) -> NativeExport:
        """Write the session's active path where another agent keeps its own
        sessions, so that it lists and resumes it: ``claude-code`` (under
        ``home``, default ``$CLAUDE_CONFIG_DIR`` else ``~/.claude``) or
        ``codex`` (default ``$CODEX_HOME`` else ``~/.codex``; ``model_provider``
        is for it only). Exporting again writes nothing when the file holds
        the same bytes; ``ConflictError`` when it holds others (left alone)."""
        options: dict[str, object] = {"to": _enum(ExportTarget, to, "to").value}
        if home is not None:
            options["home"] = _path(home)
        if model_provider is not None:
            options["modelProvider"] = model_provider
        return self._native.export_to(session_id, options)

    # -- subagents --------------------------------------------------------------

    def list_subagents(self, session_id: str) -> list[JsonObject]:
        """The subagents of a session: their metadata, oldest first."""
        return self._native.list_subagents(session_id)

    def read_subagent(self, session_id: str, agent_id: str) -> SessionView:
        """Load a subagent's sidechain for reading, without a lock."""
        return SessionView(self._native.read_subagent(session_id, agent_id))

    # -- settings, instruction files, memory (docs/SETTINGS.md) -----------------

    def settings(
        self,
        *,
        sources: Iterable[SettingSource | str] | None = None,
        overrides: Mapping[str, object] | None = None,
    ) -> Settings:
        """The effective settings: ``values``, the ``origins`` of each dotted key,
        and each source's state (a malformed file is reported there, not raised)."""
        options: dict[str, object] = {}
        if sources is not None:
            options["sources"] = [_enum(SettingSource, x, "sources").value for x in sources]
        if overrides is not None:
            options["overrides"] = _obj(overrides)
        return self._native.settings(options)

    def set_setting(self, source: SettingSource | str, key: str, value: object) -> SettingsWrite:
        """Set a dotted key in the file of ``source`` (user, project or local);
        ``None`` is written as null and removes the key from the sources below."""
        return self._native.set_setting(_enum(SettingSource, source, "source").value, key, value)

    def unset_setting(self, source: SettingSource | str, key: str) -> SettingsWrite:
        """Remove a dotted key from the file of ``source``."""
        return self._native.unset_setting(_enum(SettingSource, source, "source").value, key)

    def migrate_settings(self, source: SettingSource | str) -> SettingsWrite:
        """Rewrite the file of ``source`` in the current shape, its older
        original kept as ``<file>.v<N>.bak``: ``{"path", "existed", "backup",
        "migrations"}``. A file of a newer version is ``UnsupportedError``."""
        return self._native.migrate_settings(_enum(SettingSource, source, "source").value)

    def instructions(
        self,
        dir: str | os.PathLike[str],
        *,
        names: list[str] | None = None,
        max_include_depth: int | None = None,
    ) -> Instructions:
        """The instruction files that apply to ``dir``, in order, with their
        ``@path`` includes; what was not read is in ``problems``."""
        options: dict[str, object] = {}
        if names is not None:
            options["names"] = names
        if max_include_depth is not None:
            options["maxIncludeDepth"] = max_include_depth
        return self._native.instructions(os.fspath(dir), options)

    def add_memory(self, name: str, content: str, *, scope: MemoryScope | str = _SCOPE) -> MemoryEntry:
        """Add a memory ``<name>.md`` (``ConflictError`` if the name is taken)."""
        return self._native.memory_write(_scope(scope), name, content, False)

    def update_memory(self, name: str, content: str, *, scope: MemoryScope | str = _SCOPE) -> MemoryEntry:
        """Replace a memory's text (``NotFoundError`` if there is none)."""
        return self._native.memory_write(_scope(scope), name, content, True)

    def delete_memory(self, name: str, *, scope: MemoryScope | str = _SCOPE) -> None:
        """Delete a memory (``NotFoundError`` if there is none)."""
        self._native.memory_delete(_scope(scope), name)

    def checkpoint_summaries(self, session_id: str) -> list[CheckpointSummary]:
        """The checkpoints session ``session_id`` holds (a LangGraph thread),
        without their values, oldest first in each namespace."""
        return self._native.checkpoint_summaries(session_id)

    def memory_path(self, *, scope: MemoryScope | str = _SCOPE) -> str:
        """The directory holding the memories of ``scope`` (no disk access)."""
        return self._native.memory_path(_scope(scope))

    def list_memories(self, *, scope: MemoryScope | str = _SCOPE) -> list[MemoryEntry]:
        """The memories of ``scope`` (project or user), by name."""
        return self._native.memory_list(_scope(scope))

    def read_memory(self, name: str, *, scope: MemoryScope | str = _SCOPE) -> str:
        """A memory's text."""
        return self._native.memory_read(_scope(scope), name)

    # -- search -----------------------------------------------------------------

    def search(
        self,
        text: str,
        *,
        all: bool = False,
        role: str | None = None,
        session: str | None = None,
        since: str | None = None,
        until: str | None = None,
        tool: str | None = None,
        limit: int = _default_int("searchLimit"),
    ) -> SearchResults:
        """Full-text search over this project's sessions (every project's with
        ``all``), best first: ``{"hits": [{"project", "sessionId", "agentId",
        "messageId", "role", "timestamp", "tools", "snippet", "score"}], "indexedBytes",
        "setAside", "stale"}``. ``text`` holds words (all must match),
        ``"phrases"``, ``prefix*`` and ``OR``; matches are between « and » in a
        snippet. Times are RFC 3339 or ``YYYY-MM-DD``."""
        query: dict[str, object] = {"text": text, "all": all, "limit": limit}
        for key, value in (
            ("role", role),
            ("session", session),
            ("since", since),
            ("until", until),
            ("tool", tool),
        ):
            if value is not None:
                query[key] = value
        return self._native.search(query)

    # -- maintenance ------------------------------------------------------------

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Verify the store (index, logs, blobs, file history); with ``repair``, fix
        what can be fixed without loss. Problems are in the report (``ok``)."""
        return self._native.doctor({"repair": repair})

    def gc(self) -> GcReport:
        """Collect the project's garbage: trashed sessions past their grace
        period (``trashPurged``), unreachable file-history objects, unreferenced
        blobs and stale temp files (those two once 15 minutes old)."""
        return self._native.gc()

    def rebuild_index(self) -> RebuildReport:
        """Rebuild the index from the session logs: how many ``sessions`` it
        holds, and the ``problems`` found, as ``(session id, read report)``."""
        report = self._native.rebuild_index()
        problems: list[tuple[str, ReadReport]] = [(p[0], p[1]) for p in report["problems"]]
        return {"sessions": report["sessions"], "problems": problems}

    def file_history_sizes(self) -> HistorySizeReport:
        """The size of each session's file history."""
        return self._native.file_history_sizes()

    def check_file_history(self) -> FileHistoryCheck:
        """Check the links between the logs and the file history, reading only."""
        return self._native.check_file_history()

    def prune_orphan_file_history(self) -> list[HistoryRef]:
        """Delete the file-history refs of sessions whose log is gone."""
        return self._native.prune_orphan_file_history()

    def branch_file_history(self, session_id: str, snapshot: str) -> None:
        """Start the file-history branch of a session at a snapshot."""
        self._native.branch_file_history(session_id, snapshot)


class SessionView:
    """A session read from disk without a lock, as it was when read.

    Thread-safe and immutable: share it freely. For long views, the ``iter_*``
    methods hand out one message at a time.
    """

    def __init__(self, native: _NativeView) -> None:
        self._native = native

    def __repr__(self) -> str:
        info = self._native.info()
        header = info["header"] or {}
        return (
            f"<sessionkit SessionView {header.get('id', '(no header)')} "
            f"head={info['head']} messages={info['messageCount']}>"
        )

    def info(self) -> ViewInfo:
        """``head``, ``header``, ``messageCount``, ``report`` (what reading found),
        ``records`` (state and subagent records)."""
        return self._native.info()

    @property
    def head(self) -> str | None:
        """The head message id; None before the first message."""
        return self.info()["head"]

    @property
    def header(self) -> JsonObject | None:
        """The log's ``session`` header record (format version, id, project,
        lineage); None for a plain transcript without one."""
        return self.info()["header"]

    @property
    def message_count(self) -> int:
        """How many messages the log holds, on every branch."""
        return self.info()["messageCount"]

    @property
    def report(self) -> ReadReport:
        """What reading found: skipped lines, a torn tail, broken chains."""
        return self.info()["report"]

    def active_path(self) -> list[Message]:
        """The messages from the root to the head, as stored."""
        return self._native.active_path()

    def ui_view(self) -> list[Message]:
        """The active path for display, with ``visible`` and ``compacted`` flags."""
        return self._native.ui_view()

    def model_view(
        self, *, last_n: int | None = None, token_budget: int | None = None
    ) -> list[Message]:
        """What goes to the model: compaction applied, open tool calls answered."""
        return self._native.model_view(_model_options(last_n, token_budget))

    def iter_active_path(self) -> Iterator[Message]:
        """:meth:`active_path`, one message at a time."""
        return self._native.iter("active")

    def iter_ui_view(self) -> Iterator[Message]:
        """:meth:`ui_view`, one message at a time."""
        return self._native.iter("ui")

    def iter_model_view(
        self, *, last_n: int | None = None, token_budget: int | None = None
    ) -> Iterator[Message]:
        """:meth:`model_view`, one message at a time."""
        return self._native.iter("model", _model_options(last_n, token_budget))

    def __iter__(self) -> Iterator[Message]:
        return self.iter_active_path()

    def message(self, message_id: str) -> Message:
        """One message by id, on any branch; ``NotFoundError`` if the log lacks it."""
        return self._native.message(message_id)

    def resolve_message(self, prefix: str) -> str:
        """The full id of the message ``prefix`` names."""
        return self._native.resolve_message(prefix)

    def tree(self) -> list[TreeNode]:
        """Every message with its place in the tree, in log order."""
        return self._native.tree()

    def branches(self) -> list[Branch]:
        """One branch per leaf (and one ending at the head), the active one marked."""
        return self._native.branches()

    def records(self) -> list[JsonObject]:
        """State and subagent records, in log order."""
        return self._native.records()


def _obj(value: object) -> object:
    """A dict of a mapping that is not one; anything else is handed on for
    the native side to convert or refuse."""
    if isinstance(value, Mapping) and not isinstance(value, dict):
        return dict(value)
    return value


def _list(items: object) -> object:
    """A list of ``items`` when it is an iterable other than a str or a
    mapping; anything else is handed on for the native side to refuse."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        return items
    return list(items)


_N = TypeVar("_N", _NativeSession, _NativeSubagent)


class _Writer(Generic[_N]):
    """What a session and a subagent share: a lock held until closed."""

    _native: _N

    def close(self) -> None:
        """Release the lock (a session flushes its index entry first). Closing
        twice does nothing."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return bool(self._native.closed)

    def append(self, message: MessageInput) -> Message:
        """Append one message (a dict with a ``role``); returns it as stored.

        One ``write(2)``: once it returns, a killed process has lost nothing.
        """
        return self._native.append(_obj(message))

    def append_batch(self, messages: Iterable[MessageInput]) -> list[Message]:
        """Append messages in one write: all of them, or nothing if one is invalid."""
        return self._native.append_batch(_list(messages))

    def append_groups(self, groups: Iterable[Iterable[MessageInput]]) -> list[GroupResult]:
        """Append groups of messages in one write, with a result per group: the
        messages as stored, or the error that refused the group (a
        :class:`~sessionkit.SessionkitError` subclass, returned, not raised).
        Each group is checked as if appended alone after the groups accepted
        before it; a refused group is not written and the others are. An
        error of the write itself (or a closed handle) is raised."""
        arg: object = groups
        if not isinstance(groups, (str, bytes, Mapping)):
            arg = [[_obj(m) for m in g] if isinstance(g, list) else _list(g) for g in groups]
        text = self._native.append_groups(arg)
        results: list[GroupResult] = []
        for r in json.loads(text):
            if "ok" in r:
                results.append(r["ok"])
            else:
                e = r["error"]
                results.append(error_from_code(e["code"], e["message"], e["errno"]))
        return results

    def read(self) -> SessionView:
        """Read the log back (the view every reader gets)."""
        return SessionView(self._native.read())


class Session(_Writer[_NativeSession]):
    """A session open for writing. Holds the session's exclusive lock until it is
    closed: use it as a context manager (``with store.create_session() as s:``).

    Thread-safe: share it between threads; appends are serialised.
    """

    _native: _NativeSession

    def __init__(self, native: _NativeSession, store: Store) -> None:
        self._native = native
        self.store = store
        """The store the session belongs to."""

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._native)

    @property
    def id(self) -> str:
        """The session id."""
        return self._native.id

    @property
    def head(self) -> str | None:
        """The current head message id."""
        return self._native.head()

    @property
    def shared(self) -> bool:
        """Whether this handle is a shared writer (:meth:`Store.open_shared`),
        which holds the session's lock only while it writes."""
        return self._native.shared

    def info(self) -> SessionInfo:
        """``id``, ``path``, ``head``, ``entry``, ``openReport`` (what opening
        found) and ``pruned`` (sessions deleted when this one was created)."""
        return self._native.info()

    @property
    def path(self) -> str:
        """The path of the session's log."""
        return self.info()["path"]

    @property
    def open_report(self) -> ReadReport:
        """What opening found: skipped lines (now quarantined), a torn tail (now
        terminated), broken chains."""
        return self.info()["openReport"]

    @property
    def entry(self) -> SessionEntry:
        """The session's index entry as this writer knows it."""
        return _entry(self.info()["entry"])

    @property
    def pruned(self) -> list[str]:
        """Sessions removed from the project when this one was created."""
        return self.info()["pruned"]

    @property
    def fsync_count(self) -> int:
        """How many times this handle fsynced its log."""
        return self._native.fsync_count()

    def update_state(self, state: Mapping[str, object]) -> SessionEntry:
        """Update host-reported state (``status``, reasons, ``lastToolCall``,
        ``activeTokens``, ``childProcesses``, ``title``)."""
        return _entry(self._native.update_state(_obj(state)))

    def patch_message(self, message_id: str, patch: Mapping[str, object]) -> None:
        """Change fields of a stored message (an RFC 7396 merge patch)."""
        self._native.patch_message(message_id, _obj(patch))

    def set_head(self, message_id: str | None) -> None:
        """Move the head (None: before the first message). The old branch stays."""
        self._native.set_head(message_id)

    def resume_at(self, message_id: str) -> None:
        """Move the head to a message so the conversation resumes from there."""
        self._native.resume_at(message_id)

    def rename(self, title: str) -> SessionEntry:
        """Set the session's title."""
        return _entry(self._native.rename(title))

    def sync(self) -> None:
        """Make every append so far durable (fsync)."""
        self._native.sync()

    def flush_index(self) -> None:
        """Write this session's entry to the index."""
        self._native.flush_index()

    def active_path(self) -> list[Message]:
        """The messages from the root to the head, read back from the log."""
        return self._native.active_path()

    def model_view(
        self, *, last_n: int | None = None, token_budget: int | None = None
    ) -> list[Message]:
        """What goes to the model on resume."""
        return self._native.model_view(_model_options(last_n, token_budget))

    def fork(self, *, at: str | None = None, title: str | None = None) -> Session:
        """Fork this session (up to message ``at``) into a new one, open for writing."""
        return self.store.fork_session(self.id, at=at, title=title)

    def erase(self) -> Session:
        """Delete this session for good (log, sidecars, file history) and start
        it again, empty, under the same id: this handle is closed, the new one
        is returned. Blobs are freed by the store's next ``gc``."""
        return Session(self._native.erase(), self.store)

    # -- compaction -------------------------------------------------------------

    def select_compaction(
        self,
        token_budget: int,
        *,
        keep_last_turns: int = _default_int("keepLastTurns"),
        summary_tokens: int = _default_int("summaryTokens"),
    ) -> CompactionPlan | None:
        """Ask the policy what to compact (``replaces``, ...); None if nothing. Changes nothing."""
        policy = {
            "tokenBudget": token_budget,
            "keepLastTurns": keep_last_turns,
            "summaryTokens": summary_tokens,
        }
        return self._native.select_compaction(policy)

    def apply_compaction(self, replaces: list[str], summary: str | MessageInput) -> Message:
        """Replace ``replaces`` by ``summary`` in the model's view; returns the
        summary message. Nothing is rewritten: the old messages stay in the log."""
        return self._native.apply_compaction(replaces, _obj(summary))

    # -- subagents --------------------------------------------------------------

    def spawn_subagent(
        self, agent_id: str | None = None, meta: Mapping[str, object] | None = None
    ) -> Subagent:
        """Start a subagent: its own sidechain log, open for writing."""
        return Subagent(self._native.spawn_subagent(agent_id, _obj(meta)))

    def open_subagent(self, agent_id: str) -> Subagent:
        """Reopen a subagent for writing."""
        return Subagent(self._native.open_subagent(agent_id))

    # -- file history and undo --------------------------------------------------

    def user_input(self, message: MessageInput) -> Message:
        """Append a user message, snapshotting the tracked files first."""
        return self._native.user_input(_obj(message))

    def track_read(self, paths: Iterable[StrPath]) -> None:
        """Record that the agent's tools read these files."""
        self._native.track_read(_paths(paths))

    def before_edit(self, paths: Iterable[StrPath]) -> str:
        """Track these files and snapshot every tracked file; returns the snapshot id."""
        return self._native.before_edit(_paths(paths))

    def after_edit(self, paths: Iterable[StrPath]) -> str:
        """Snapshot every tracked file after a tool edited ``paths``."""
        return self._native.after_edit(_paths(paths))

    def tracked_files(self) -> list[str]:
        """The files this session tracks, relative to the project root."""
        return self._native.tracked_files()

    def last_snapshot(self) -> str | None:
        """The session's latest snapshot id, if any."""
        return self._native.last_snapshot()

    def external_changes(self, paths: Iterable[StrPath]) -> list[ExternalChange]:
        """For each path, whether it changed on disk since the agent last read it."""
        return self._native.external_changes(_paths(paths))

    def ensure_unchanged(self, paths: Iterable[StrPath]) -> None:
        """``ConflictError`` naming the files if any changed since the agent read it."""
        self._native.ensure_unchanged(_paths(paths))

    def undo_candidates(self) -> list[UndoCandidate]:
        """The user messages a rewind can go back to, oldest first."""
        return self._native.undo_candidates()

    def rewind_plan(self, message_id: str) -> RewindPlan:
        """The dry run of restoring the files to before a user message."""
        return self._native.rewind_plan(message_id)

    def rewind_preview(
        self, message_id: str, mode: RewindMode | str = RewindMode(_default_str("rewindMode"))
    ) -> RewindPreview:
        """What :meth:`rewind` would do, changing nothing."""
        return self._native.rewind_preview(message_id, _enum(RewindMode, mode, "mode").value)

    def rewind(
        self,
        message_id: str,
        mode: RewindMode | str = RewindMode(_default_str("rewindMode")),
        *,
        force: bool = False,
    ) -> RewindResult:
        """Rewind to before a user message; the result says how to undo it."""
        return self._native.rewind(message_id, _enum(RewindMode, mode, "mode").value, force)

    def rewind_turns(
        self,
        turns: int = _default_int("rewindTurns"),
        mode: RewindMode | str = RewindMode(_default_str("rewindTurnsMode")),
        *,
        force: bool = False,
    ) -> RewindResult:
        """Rewind to before the ``turns``-th latest user input (1: the latest turn);
        ``InvalidInputError`` when there are fewer."""
        return self._native.rewind_turns(turns, _enum(RewindMode, mode, "mode").value, force)

    def snapshot_plan(self, snapshot: str) -> RewindPlan:
        """The dry run of restoring the tracked files to a snapshot."""
        return self._native.snapshot_plan(snapshot)

    def restore_snapshot(self, snapshot: str, *, force: bool = False) -> RewindResult:
        """Restore the tracked files to a snapshot (a rewind's ``undoSnapshot`` undoes it)."""
        return self._native.restore_snapshot(snapshot, force)

    # -- OpenAI Responses items (the core's responses module) --------------------

    def responses_items(
        self, limit: int | None = None, *, model_view: bool = False
    ) -> list[JsonObject]:
        """The session's messages as OpenAI Responses input items, oldest first:
        the latest ``limit`` items (all when None), from the active path, or
        from the model view (compaction applied) with ``model_view``."""
        return self._native.responses_items(limit, model_view)

    def append_responses_items(self, items: Iterable[Mapping[str, object]]) -> None:
        """Append Responses items (messages, function calls and their outputs,
        reasoning, ...) as messages, in one write."""
        self._native.append_responses_items(_list(items))

    def replace_responses_items_with_compaction(
        self, items: Iterable[Mapping[str, object]]
    ) -> None:
        """Make ``items`` (a Responses ``compaction`` item, then the items kept
        after it) the history as the model sees it, in one write, keeping the
        originals: the OpenAI Agents SDK's ``replace_history_with_compaction``."""
        self._native.replace_responses_items_with_compaction(_list(items))

    def pop_responses_item(self) -> JsonObject | None:
        """Remove the latest item (moving the head back past it) and return
        it; None when the session has none."""
        return self._native.pop_responses_item()


class Subagent(_Writer[_NativeSubagent]):
    """A subagent's sidechain, open for writing; a context manager like
    :class:`Session`. Thread-safe."""

    _native: _NativeSubagent

    def __init__(self, native: _NativeSubagent) -> None:
        self._native = native

    def __enter__(self) -> Subagent:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def id(self) -> str:
        """The agent id."""
        return self._native.id

    @property
    def session_id(self) -> str:
        """The id of the session that spawned it."""
        return self._native.session_id

    def __repr__(self) -> str:
        return repr(self._native)

    def finish(self, result: object, *, failed: bool = False) -> None:
        """Record the subagent's result, in its metadata and the session's log."""
        self._native.finish(result, failed)


class Remote:
    """A project's sessions shared through PostgreSQL (docs/DISTRIBUTED.md):
    push this store's sessions, list and pull the project's sessions from any
    machine, and hold a session's lease so that one machine writes it at a time.

    ``url`` is a libpq connection string (``host=… dbname=…`` or a
    ``postgresql://`` URI), default ``$SESSIONKIT_REMOTE``. ``project`` is the
    name the sessions are shared under (default: the store's project code);
    ``holder`` names this machine and process in leases; ``lease_ttl_ms`` is how
    long a lease lasts unless renewed (default 60 s). ``map_paths``
    (``{old: new}``, absolute paths) says where this project sat on the machines
    that share it: without ``project``, the name is that of the root with the
    longest ``new`` prefix replaced by its ``old``. Connecting creates or
    migrates the schema. Calls take turns on one connection; share it freely.
    """

    def __init__(
        self,
        store: Store,
        *,
        url: str | None = None,
        project: str | None = None,
        holder: str | None = None,
        lease_ttl_ms: int | None = None,
        map_paths: Mapping[StrPath, StrPath] | None = None,
    ) -> None:
        opts: dict[str, object] = {}
        for key, value in (
            ("url", url),
            ("project", project),
            ("holder", holder),
            ("leaseTtlMs", lease_ttl_ms),
            ("mapPaths", None if map_paths is None else _mappings(map_paths)),
        ):
            if value is not None:
                opts[key] = value
        self._native = _native.Remote(store._native, opts)

    def close(self) -> None:
        """Close the connection (after the calls in flight); later calls raise
        ``InvalidInputError``. Followers and background pushes have their own
        connections and stay open. Closing twice does nothing."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return self._native.closed

    def __repr__(self) -> str:
        return repr(self._native)

    def __enter__(self) -> Remote:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def project(self) -> str:
        """The name the project's sessions are shared under."""
        return self._native.project

    @property
    def holder(self) -> str:
        """Who this handle takes leases as."""
        return self._native.holder

    def schema_version(self) -> int:
        """The database's schema version (this library's, after migration)."""
        return self._native.schema_version()

    def list(self) -> list[RemoteSession]:
        """The project's remote sessions: ``{"id", "pushedBytes", "entry",
        "leaseHolder"}`` (``entry`` is the index entry as last pushed)."""
        return self._native.list()

    def acquire(self, session_id: str) -> Lease:
        """Take a session's lease: ``{"sessionId", "holder", "token",
        "expiresMs"}``. ``BusyError`` while another holder's has not expired."""
        return self._native.acquire(session_id)

    def renew(self, lease: Lease) -> Lease:
        """Extend a lease; ``BusyError`` when another holder took it since."""
        return self._native.renew(lease)

    def release(self, lease: Lease) -> None:
        """Give a lease back."""
        self._native.release(lease)

    def push(self, session_id: str, lease: Lease | None = None) -> PushReport:
        """Copy the lines of a session the remote lacks: ``{"sessionId",
        "from", "to", "batches", "blobs"}``. Without ``lease`` the session's
        lease is taken for the push and given back (``BusyError`` while another
        machine holds it); with one, a lease taken over since is ``BusyError``
        and nothing is pushed."""
        return self._native.push(session_id, lease)

    def pull(self, session_id: str) -> PullReport:
        """Bring the local copy of a session up to the remote's, byte for byte:
        ``{"sessionId", "from", "to", "blobs"}``. ``NotFoundError`` when the
        remote lacks it; ``ConflictError`` when the local log is not a prefix
        of the remote one."""
        return self._native.pull(session_id)

    def follow(self, session_id: str, start: int | None = None) -> Follower:
        """Follow a session as others push it, from byte ``start`` of its log
        (0, or the length of a local copy; default: where the remote stands).
        ``follower.next_lines(timeout)`` returns the lines pushed since, each as
        its bytes with its newline, waiting up to ``timeout`` seconds (a
        notification of each push wakes it; it also reads every second).
        ``follower.offset`` is where the next lines start."""
        return Follower(self._native.follow(session_id, start))

    def push_in_background(
        self, session_id: str, interval: float = _default_int("pushIntervalMs") / 1000
    ) -> BackgroundPush:
        """Push a session while this process writes it: take its lease on a
        connection of its own (``BusyError`` while another holder has it), then
        push what its log gained every ``interval`` seconds (from 0.01 to a
        third of the lease time) and renew the lease on time, on a thread of
        its own, so that an append never waits for the network. Use it as a
        context manager, or call ``stop()``: the rest is pushed and the lease
        given back."""
        return BackgroundPush(self._native.push_in_background(session_id, interval))


class BackgroundPush:
    """A session pushed in the background (``Remote.push_in_background``)."""

    def __init__(self, native: _native.BackgroundPush) -> None:
        self._native = native

    @property
    def pushed(self) -> int:
        """Bytes of the session's log the remote holds, as of the last push."""
        return self._native.pushed

    def flush(self) -> PushReport:
        """Push what the log holds now and wait for it: ``{"sessionId",
        "from", "to", "batches", "blobs"}``. ``BusyError`` once the lease was
        taken over by another holder (nothing more is pushed)."""
        return self._native.flush()

    def stop(self) -> PushReport:
        """Push the rest, give the lease back and end the push (once)."""
        return self._native.stop()

    def close(self) -> None:
        """:meth:`stop` unless it was stopped; closing twice does nothing."""
        if not self._native.stopped:
            self.stop()

    @property
    def closed(self) -> bool:
        return self._native.stopped

    @property
    def session_id(self) -> str:
        """The session pushed."""
        return self._native.session_id

    def __repr__(self) -> str:
        return repr(self._native)

    def __enter__(self) -> BackgroundPush:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Follower:
    """A session followed as others push it (:meth:`Remote.follow`), on a
    connection of its own. Iterate it (``for lines in follower``) to get each
    batch of pushed lines as it comes, until it is closed; or call
    :meth:`next_lines`. Use it as a context manager, or call :meth:`close`.
    Thread-safe: :attr:`offset` and :meth:`close` never wait for a
    :meth:`next_lines` in flight (the wait releases the GIL)."""

    poll_seconds: float = 1.0
    """How long iteration waits in each :meth:`next_lines` call; iteration
    ends within that time of :meth:`close`."""

    def __init__(self, native: _native.Follower) -> None:
        self._native = native

    @property
    def offset(self) -> int:
        """The byte offset of the log where the next lines start."""
        return self._native.offset

    @property
    def session_id(self) -> str:
        """The session followed."""
        return self._native.session_id

    @property
    def closed(self) -> bool:
        return self._native.closed

    def next_lines(self, timeout: float) -> list[bytes]:
        """The lines pushed since the offset, each as its bytes with its
        newline, waiting up to ``timeout`` seconds for some (a push's
        notification wakes it; it also reads every second); ``[]`` if none
        came. ``InvalidInputError`` once closed."""
        return self._native.next_lines(timeout)

    def close(self) -> None:
        """Close the follower's connection; closing twice does nothing."""
        self._native.close()

    def __iter__(self) -> Iterator[list[bytes]]:
        while not self._native.closed:
            try:
                lines = self._native.next_lines(self.poll_seconds)
            except InvalidInputError:
                if self._native.closed:
                    return
                raise
            if lines:
                yield lines

    def __repr__(self) -> str:
        return repr(self._native)

    def __enter__(self) -> Follower:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
