"""sessionkit: a crash-safe, multi-process session store for coding agents.

Open the store of a project, write a session, read its views, fork, compact
and undo it::

    import sessionkit

    store = sessionkit.Store(".", home="/tmp/sk-home")
    with store.create_session(title="Fix the test") as s:
        s.append({"role": "user", "content": "Why is CI red?"})
        s.append({"role": "assistant", "content": "A flaky test."})
    for entry in store.list_sessions():
        print(entry.id, entry.title, entry.updated_at)

Every call that touches the disk releases the GIL. Errors are subclasses of
:class:`SessionkitError` (see :mod:`sessionkit.errors`).
"""

import os
from collections.abc import Mapping, Sequence

from . import _native
from ._api import BackgroundPush, Follower, Remote, Session, SessionView, Store, Subagent
from ._types import (
    DEFAULTS,
    BlobGcReport,
    Branch,
    BrokenChain,
    BrokenRef,
    CompactionPlan,
    CheckpointSummary,
    DanglingCheckpoint,
    DiffStats,
    DoctorReport,
    Durability,
    ExportFormat,
    ExportTarget,
    ExternalChange,
    FileHistoryCheck,
    FilePlan,
    GcReport,
    GroupResult,
    HeadMove,
    HistoryCheck,
    HistoryRef,
    HistorySize,
    HistorySizeReport,
    ImportFormat,
    ImportReport,
    IndexCheck,
    IndexEntryDict,
    InstructionFile,
    InstructionProblem,
    Instructions,
    JournalReport,
    JsonObject,
    JsonValue,
    Lease,
    LineageDict,
    Lineage,
    LineNote,
    LogCheck,
    MemoryEntry,
    MemoryScope,
    Message,
    MessageInput,
    MissingBlob,
    NativeExport,
    ProjectSessions,
    PullReport,
    PushReport,
    ReadReport,
    RebuildReport,
    RemoteSession,
    RewindMode,
    RewindPlan,
    RewindPreview,
    RewindResult,
    SearchHit,
    SearchResults,
    SessionEntry,
    SessionInfo,
    SessionPage,
    SettingSource,
    Settings,
    SettingsSourceReport,
    SettingsWrite,
    SkippedLine,
    SourceReport,
    Status,
    StoreInfo,
    TempGcReport,
    TrashedSession,
    TreeNode,
    UndoCandidate,
    ViewInfo,
)
from ._api import _enum, _mappings, _path, _paths
from .errors import (
    BusyError,
    ConflictError,
    CorruptError,
    InternalError,
    InvalidInputError,
    IoError,
    NotFoundError,
    SessionkitError,
    UnsupportedError,
)

__version__: str = _native.version()
"""The package's version: the Rust crate's, from Cargo.toml."""


def conversation_session_id(conversation_id: str) -> str:
    """The session id that holds the conversation ``conversation_id`` (any
    non-empty string of at most 1,024 UTF-8 bytes): the id itself when it is a
    valid session id, else a readable prefix and a hash (FORMAT.md §3.3). The
    same rule in every interface."""
    return _native.conversation_session_id(conversation_id)


def project_code(canonical_root: str) -> str:
    """The directory name of a project under ``<home>/projects/``."""
    return _native.project_code(canonical_root)


def import_transcripts(
    paths: Sequence[str | os.PathLike[str]],
    *,
    project: str | os.PathLike[str] | None = None,
    format: ImportFormat | str | None = None,
    home: str | os.PathLike[str] | None = None,
    map_paths: Mapping[str | os.PathLike[str], str | os.PathLike[str]] | None = None,
) -> ImportReport:
    """Import Claude Code, Codex or seed-style transcripts (files, or
    directories searched for ``*.jsonl``) into the project each names, or
    ``project``; a source's directory need not exist here. ``map_paths``
    (``{old: new}``, absolute paths) remaps a prefix of the directory a source
    names, in whole components, the longest ``old`` winning. Importing again
    adds only what a source gained. Returns the
    report: ``sources`` (each with ``outcome``, ``sessionId``, ``skipped`` and
    ``unmapped`` lines), ``messagesAdded``, ``failed``."""
    options: dict[str, object] = {}
    if project is not None:
        options["project"] = _path(project)
    if format is not None:
        options["from"] = _enum(ImportFormat, format, "format").value
    if home is not None:
        options["store"] = {"home": _path(home)}
    if map_paths is not None:
        options["mapPaths"] = _mappings(map_paths)
    return _native.import_transcripts(_paths(paths), options)


def list_all_sessions(*, home: str | os.PathLike[str] | None = None) -> list[ProjectSessions]:
    """The sessions of every project in the home: ``projectCode``,
    ``projectRoot``, ``sessions`` (index entries as dicts) and ``error``."""
    return _native.list_all_sessions({} if home is None else {"home": _path(home)})


def defaults() -> JsonObject:
    """The core's table of enum values and defaults, which every interface
    (C, Python, Node) takes its own from: ``{"enums": {name: [values]},
    "defaults": {name: value}}``."""
    import json

    table: JsonObject = json.loads(_native.defaults())
    return table


__all__ = [
    "__version__",
    "defaults",
    "DEFAULTS",
    "project_code",
    "conversation_session_id",
    "import_transcripts",
    "list_all_sessions",
    "ExportTarget",
    "ImportFormat",
    "Store",
    "BackgroundPush",
    "Remote",
    "Follower",
    "Session",
    "SessionView",
    "Subagent",
    "SessionEntry",
    "SessionPage",
    "Lineage",
    "Message",
    "Durability",
    "Status",
    "RewindMode",
    "ExportFormat",
    "MemoryScope",
    "SettingSource",
    "JsonValue",
    "JsonObject",
    "MessageInput",
    "LineageDict",
    "IndexEntryDict",
    "TrashedSession",
    "ProjectSessions",
    "SkippedLine",
    "BrokenChain",
    "MissingBlob",
    "ReadReport",
    "StoreInfo",
    "SessionInfo",
    "ViewInfo",
    "TreeNode",
    "Branch",
    "CompactionPlan",
    "DiffStats",
    "FilePlan",
    "RewindPlan",
    "RewindResult",
    "HeadMove",
    "RewindPreview",
    "UndoCandidate",
    "ExternalChange",
    "HistorySize",
    "HistorySizeReport",
    "HistoryRef",
    "BrokenRef",
    "CheckpointSummary",
    "DanglingCheckpoint",
    "FileHistoryCheck",
    "BlobGcReport",
    "TempGcReport",
    "GcReport",
    "RebuildReport",
    "JournalReport",
    "IndexCheck",
    "LogCheck",
    "HistoryCheck",
    "DoctorReport",
    "LineNote",
    "SourceReport",
    "ImportReport",
    "NativeExport",
    "SettingsSourceReport",
    "Settings",
    "SettingsWrite",
    "InstructionFile",
    "InstructionProblem",
    "Instructions",
    "MemoryEntry",
    "SearchHit",
    "SearchResults",
    "Lease",
    "RemoteSession",
    "PushReport",
    "PullReport",
    "GroupResult",
    "SessionkitError",
    "NotFoundError",
    "BusyError",
    "ConflictError",
    "InvalidInputError",
    "CorruptError",
    "IoError",
    "UnsupportedError",
    "InternalError",
]
