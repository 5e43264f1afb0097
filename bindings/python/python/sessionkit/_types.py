"""Typed shapes of what the store hands back: the enums, the index entry and a
``TypedDict`` for every result. The result dicts are the core's JSON objects
as they are (camelCase keys, every field): plain dicts at run time, typed for
mypy and pyright. The enums' values and the defaults come from the core's
table (:func:`sessionkit.defaults`); a test holds the enums to it.
"""

from __future__ import annotations

import enum
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypeAlias, Union

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # the package's one dependency, on 3.10 only (pyproject.toml)
    from typing_extensions import NotRequired, TypedDict

from . import _native
from .errors import SessionkitError

JsonValue: TypeAlias = Union[None, bool, int, float, str, list["JsonValue"], dict[str, "JsonValue"]]
"""Any value JSON holds, as Python gives it back: None, bool, int, float, str,
lists and dicts of these."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object: a dict with str keys."""



Message = TypedDict(
    "Message",
    {
        "id": str,
        "type": NotRequired[str],  # "message" on lines the library wrote
        "parentId": NotRequired[Union[str, None]],
        "sessionId": NotRequired[str],
        "role": NotRequired[str],
        "timestamp": NotRequired[str],
        "content": NotRequired[JsonValue],
        "contentParams": NotRequired[JsonValue],
        "messageParams": NotRequired[Union[JsonObject, None]],
        "visible": NotRequired[bool],
        "compacted": NotRequired[bool],
        "checkpointHash": NotRequired[Union[str, None]],
        "meta": NotRequired[Union[JsonObject, None]],
        "agentId": NotRequired[str],
        "contentBlob": NotRequired[JsonObject],
        "contentParamsBlob": NotRequired[JsonObject],
        "import": NotRequired[JsonObject],
    },
)
"""A message as stored (docs/FORMAT.md §6.2), a plain dict with the fields the
format defines. Fields it does not define are kept and come back as given;
read them through ``cast(JsonObject, message)``."""

MessageInput: TypeAlias = Mapping[str, object]
"""A message to append: any mapping of str keys to JSON-able values (dicts,
lists, str, int, float, bool, None); the core checks it."""

DEFAULTS: JsonObject = json.loads(_native.defaults())
"""The core's table: ``{"enums": {name: [values]}, "defaults": {name: value}}``.
Every default of the API below is taken from it."""


def default(name: str) -> JsonValue:
    """The core's default for the parameter ``name`` (a key of the table)."""
    table = DEFAULTS["defaults"]
    assert isinstance(table, dict)
    return table[name]


def _default_int(name: str) -> int:
    value = default(name)
    assert isinstance(value, int)
    return value


def _default_str(name: str) -> str:
    value = default(name)
    assert isinstance(value, str)
    return value


class Durability(str, enum.Enum):
    """When appends reach the disk itself (not only the OS)."""

    NEVER = "never"
    """Never fsync: a killed process loses nothing, a power loss may."""
    ON_SYNC = "onSync"
    """fsync on :meth:`Session.sync` (the default)."""
    ALWAYS = "always"
    """fsync before each append returns (concurrent appends share one fsync)."""


class Status(str, enum.Enum):
    """A session's status in the index, as the host reports it."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    ASK_PERMISSION = "ask_permission"
    WAITING_FOR_USER = "waiting_for_user"


class RewindMode(str, enum.Enum):
    """What a rewind to before a user message restores."""

    CONVERSATION = "conversation"
    FILES = "files"
    BOTH = "both"


class ExportFormat(str, enum.Enum):
    """The form of :meth:`Store.export_session`."""

    JSONL = "jsonl"
    MARKDOWN = "markdown"
    JSON = "json"


class ImportFormat(str, enum.Enum):
    """The transcript formats :func:`sessionkit.import_transcripts` reads."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    DEEPCODE = "deepcode"
    PI = "pi"
    GEMINI_CLI = "gemini-cli"
    COPILOT_CLI = "copilot-cli"
    OPENCODE = "opencode"


class ExportTarget(str, enum.Enum):
    """The agents :meth:`Store.export_to` writes a session for."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"


class MemoryScope(str, enum.Enum):
    """Whose memories: the project's or the user's (every project's)."""

    PROJECT = "project"
    USER = "user"


class SettingSource(str, enum.Enum):
    """Where a setting comes from, lowest precedence first; ``HOST`` is the
    overrides a host passes and cannot be written."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"
    HOST = "host"


def parse_time(text: str) -> datetime:
    """A store timestamp (RFC 3339, UTC, ``Z``) as an aware ``datetime``."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Lineage:
    """Where a fork came from."""

    session_id: str
    message_id: str | None


@dataclass(frozen=True)
class SessionEntry:
    """One session in the project's index. Every field is rebuilt from the log."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    status: Status
    message_count: int
    head_id: str | None
    forked_from: Lineage | None
    last_assistant_reply: str | None
    token_usage: JsonObject
    active_tokens: int | None
    raw: IndexEntryDict = field(repr=False, compare=False)
    """The entry as the core gives it (camelCase keys, every field)."""
    conversation_id: str | None = None
    """The host's own id for the conversation, when the session id was mapped
    from it (:meth:`Store.open_conversation`); None otherwise."""
    title_set: bool = False
    """Whether the title was set by a host (else it was derived from the first message)."""
    thinking: str | None = None
    """What the agent is thinking about, as the host last reported it."""
    refusal_reason: str | None = None
    """Why the model refused, as the host last reported it."""
    failure_reason: str | None = None
    """Why the session failed, as the host last reported it."""
    last_tool_call: JsonValue = None
    """The last tool call the host reported."""
    child_processes: list[JsonValue] = field(default_factory=list)
    """The child processes the host reported."""
    log_bytes: int = 0
    """The size of the session's log when the entry was written."""

    @classmethod
    def from_dict(cls, d: IndexEntryDict) -> SessionEntry:
        lineage = d.get("forkedFrom")
        return cls(
            id=d["id"],
            title=d["title"],
            created_at=parse_time(d["createdAt"]),
            updated_at=parse_time(d["updatedAt"]),
            status=Status(d["status"]),
            message_count=d["messageCount"],
            head_id=d.get("headId"),
            forked_from=(
                Lineage(lineage["sessionId"], lineage.get("messageId")) if lineage else None
            ),
            last_assistant_reply=d.get("lastAssistantReply"),
            token_usage=d.get("tokenUsage", {}),
            active_tokens=d.get("activeTokens"),
            raw=d,
            conversation_id=d.get("conversationId"),
            title_set=d.get("titleSet", False),
            thinking=d.get("thinking"),
            refusal_reason=d.get("refusalReason"),
            failure_reason=d.get("failureReason"),
            last_tool_call=d.get("lastToolCall"),
            child_processes=d.get("childProcesses", []),
            log_bytes=d.get("logBytes", 0),
        )


@dataclass(frozen=True)
class SessionPage:
    """A page of the project's sessions (:meth:`Store.list_page`)."""

    sessions: list[SessionEntry]
    """The entries of the page, newest first."""
    total: int
    """How many sessions the project has."""


# -- the index -------------------------------------------------------------------

class LineageDict(TypedDict):
    """Where a fork came from."""

    sessionId: str
    messageId: str | None


class IndexEntryDict(TypedDict):
    """One session's index entry as the core gives it (also
    :attr:`SessionEntry.raw`). Keys a host added to the entry come back too."""

    id: str
    conversationId: NotRequired[str]
    title: str
    titleSet: bool
    createdAt: str
    updatedAt: str
    status: str
    lastAssistantReply: str | None
    thinking: str | None
    refusalReason: str | None
    failureReason: str | None
    lastToolCall: JsonValue
    tokenUsage: JsonObject
    activeTokens: int | None
    childProcesses: list[JsonValue]
    headId: str | None
    messageCount: int
    forkedFrom: LineageDict | None
    logBytes: int


class SessionPageDict(TypedDict):
    """A page of the listing as the core gives it."""

    sessions: list[IndexEntryDict]
    total: int


class TrashedSession(TypedDict):
    """A session pruned into the trash (:meth:`Store.list_trash`)."""

    id: str
    trashedAt: str
    reason: str
    title: str
    updatedAt: str
    messageCount: int
    purgeAfter: str


class ProjectSessions(TypedDict):
    """One project's sessions in :func:`sessionkit.list_all_sessions`."""

    projectCode: str
    projectRoot: str | None
    sessions: list[IndexEntryDict]
    error: str | None


# -- reading a log ---------------------------------------------------------------

class SkippedLine(TypedDict):
    line: int
    offset: int
    length: int
    kind: str
    reason: str


class BrokenChain(TypedDict):
    messageId: str
    missingParentId: str


class MissingBlob(TypedDict):
    messageId: str
    field: str
    sha256: str | None


class ReadReport(TypedDict):
    """What reading a log found."""

    skipped: list[SkippedLine]
    tornTail: SkippedLine | None
    brokenChains: list[BrokenChain]
    duplicateIds: list[str]
    unknownRecords: int
    missingBlobs: list[MissingBlob]
    warnings: list[str]


class StoreInfo(TypedDict):
    projectRoot: str
    dir: str
    projectCode: str
    indexPath: str


class SessionInfo(TypedDict):
    id: str
    path: str
    head: str | None
    entry: IndexEntryDict
    openReport: ReadReport
    pruned: list[str]


class ViewInfo(TypedDict):
    head: str | None
    header: JsonObject | None
    messageCount: int
    report: ReadReport
    records: list[JsonObject]


class TreeNode(TypedDict):
    id: str
    parentId: str | None
    role: str
    timestamp: str | None
    preview: str
    children: int
    onActivePath: bool
    isHead: bool
    compacted: bool


class Branch(TypedDict):
    leafId: str
    length: int
    forkPointId: str | None
    isActive: bool
    lastTimestamp: str | None


class CompactionPlan(TypedDict):
    replaces: list[str]
    messages: list[Message]
    tokensBefore: int
    tokensAfter: int


# -- file history and undo ---------------------------------------------------------

class DiffStats(TypedDict):
    filesChanged: int
    linesAdded: int
    linesRemoved: int


class FilePlan(TypedDict):
    path: str
    action: str
    conflict: NotRequired[str]
    linesAdded: int
    linesRemoved: int
    binary: bool


class RewindPlan(TypedDict):
    messageId: str | None
    snapshot: str
    files: list[FilePlan]
    conflicts: list[str]
    stats: DiffStats


class RewindResult(TypedDict):
    mode: str
    messageId: str | None
    snapshot: str | None
    undoSnapshot: str | None
    snapshotAfter: str | None
    previousHead: str | None
    head: str | None
    restored: list[str]
    recreated: list[str]
    deleted: list[str]
    skipped: list[FilePlan]


HeadMove = TypedDict("HeadMove", {"from": Union[str, None], "to": Union[str, None]})
"""Where a rewind moves the head."""


class RewindPreview(TypedDict):
    messageId: str
    mode: str
    plan: RewindPlan | None
    head: HeadMove


class UndoCandidate(TypedDict):
    messageId: str
    timestamp: str | None
    preview: str
    checkpointHash: str | None
    restorable: bool
    reason: NotRequired[str]
    stats: DiffStats


class ExternalChange(TypedDict):
    path: str
    status: str


class HistorySize(TypedDict):
    sessionId: str
    snapshots: int
    objects: int
    bytes: int
    exclusiveBytes: int


class HistorySizeReport(TypedDict):
    diskBytes: int
    sessions: list[HistorySize]


HistoryRef = TypedDict("HistoryRef", {"sessionId": str, "ref": str, "target": str})

BrokenRef = TypedDict(
    "BrokenRef", {"sessionId": str, "ref": str, "target": str, "missingCommit": str}
)


class CheckpointSummary(TypedDict):
    """A checkpoint as ``Store.checkpoint_summaries`` lists it: no values."""

    ns: str
    id: str
    parentId: str | None
    ts: str | None
    metadata: JsonObject
    channels: list[str]
    writes: int


class DanglingCheckpoint(TypedDict):
    sessionId: str
    messageId: str
    checkpointHash: str
    reason: str


class FileHistoryCheck(TypedDict):
    exists: bool
    branches: int
    orphanRefs: list[HistoryRef]
    brokenRefs: list[BrokenRef]
    danglingCheckpoints: list[DanglingCheckpoint]


# -- maintenance -----------------------------------------------------------------

class BlobGcReport(TypedDict):
    blobsBefore: int
    bytesBefore: int
    blobsRemoved: int
    bytesFreed: int
    keptYoung: int


class TempGcReport(TypedDict):
    removed: int
    bytesFreed: int
    keptYoung: int


class GcReport(TypedDict):
    """:meth:`Store.gc`: the file history's figures, blobs, temp files and
    the trashed sessions purged."""

    branches: int
    objectsBefore: int
    objectsAfter: int
    bytesBefore: int
    bytesAfter: int
    bytesFreed: int
    blobs: BlobGcReport
    tempFiles: TempGcReport
    trashPurged: list[str]


class RebuildReport(TypedDict):
    sessions: int
    problems: list[tuple[str, ReadReport]]


class JournalReport(TypedDict):
    generation: int | None
    applied: int
    skipped: list[SkippedLine]
    tornTail: SkippedLine | None


class IndexCheck(TypedDict):
    state: str
    error: NotRequired[str]
    missingEntries: list[str]
    orphanEntries: list[str]
    staleEntries: list[str]
    journal: NotRequired[JournalReport]
    needsRebuild: bool


class LogCheck(TypedDict):
    id: str
    sessionId: str
    agentId: NotRequired[str]
    path: str
    messages: int
    ok: bool
    error: NotRequired[str]
    tornTail: SkippedLine | None
    skipped: list[SkippedLine]
    unquarantined: int
    quarantined: int
    brokenChains: list[BrokenChain]
    duplicateIds: list[str]
    warnings: list[str]
    badBlobs: list[str]
    danglingCheckpoints: list[str]
    fileHistoryUnchecked: NotRequired[str]
    problems: list[str]
    notices: list[str]
    repaired: list[str]


class HistoryCheck(FileHistoryCheck):
    state: str
    error: NotRequired[str]


class DoctorReport(TypedDict):
    store: str
    ok: bool
    repair: bool
    index: IndexCheck
    logs: list[LogCheck]
    fileHistory: HistoryCheck
    repaired: list[str]


# -- import ------------------------------------------------------------------------

class LineNote(TypedDict):
    line: int
    reason: str


class SourceReport(TypedDict):
    path: str
    format: str | None
    outcome: str
    error: str | None
    project: str | None
    notice: str | None
    sessionId: str | None
    agentId: str | None
    created: bool
    lines: int
    messagesAdded: int
    recordsAdded: int
    skipped: list[LineNote]
    unmapped: list[LineNote]


class ImportReport(TypedDict):
    sources: list[SourceReport]
    messagesAdded: int
    failed: int


class NativeExport(TypedDict):
    """What :meth:`Store.export_to` wrote (FORMAT.md §22.9, §22.10)."""

    to: str
    path: str
    nativeId: str
    idSource: Literal["session", "derived"]
    items: int
    dropped: int
    written: bool
    resumeCommand: str
    notice: str | None


# -- settings, instructions, memory ------------------------------------------------

class SettingsSourceReport(TypedDict):
    source: str
    path: str | None
    status: str
    version: int | None
    migrations: list[str]
    readOnly: bool
    error: str | None
    warning: str | None


class Settings(TypedDict):
    values: JsonObject
    origins: dict[str, str]
    sources: list[SettingsSourceReport]


class SettingsWrite(TypedDict):
    path: str
    existed: bool
    backup: str | None
    migrations: list[str]


class InstructionFile(TypedDict):
    path: str
    level: str
    includedFrom: str | None
    depth: int
    content: str


class InstructionProblem(TypedDict):
    kind: str
    path: str
    includedFrom: str | None
    message: str


class Instructions(TypedDict):
    dir: str
    root: str
    names: list[str]
    maxIncludeDepth: int
    files: list[InstructionFile]
    problems: list[InstructionProblem]


class MemoryEntry(TypedDict):
    name: str
    path: str
    bytes: int
    summary: str


# -- search ------------------------------------------------------------------------

class SearchHit(TypedDict):
    project: str
    sessionId: str
    agentId: str | None
    messageId: str
    role: str | None
    timestamp: str | None
    tools: list[str]
    snippet: str
    score: float


class SearchResults(TypedDict):
    hits: list[SearchHit]
    indexedBytes: int
    setAside: list[str]
    stale: list[str]


# -- remote ------------------------------------------------------------------------

class Lease(TypedDict):
    sessionId: str
    holder: str
    token: int
    expiresMs: int


class RemoteSession(TypedDict):
    id: str
    pushedBytes: int
    entry: IndexEntryDict | None
    leaseHolder: str | None


PushReport = TypedDict(
    "PushReport",
    {"sessionId": str, "from": int, "to": int, "batches": int, "blobs": int},
)
"""A push: the log's bytes ``from`` .. ``to`` sent, in ``batches``, with ``blobs``."""

PullReport = TypedDict("PullReport", {"sessionId": str, "from": int, "to": int, "blobs": int})
"""A pull: the log's bytes ``from`` .. ``to`` fetched, with ``blobs``."""


# -- appends of several groups -------------------------------------------------------

GroupResult: TypeAlias = Union[list[Message], SessionkitError]
"""One group of :meth:`Session.append_groups`: the messages as stored, or the
error (a :class:`~sessionkit.SessionkitError` subclass) that refused it."""
