"""Typed shapes of what the store hands back: enums and the index entry."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Message = dict[str, Any]
"""A message as stored: a plain dict whose unknown fields come back as given."""


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

    FILES = "files"
    CONVERSATION = "conversation"
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
    token_usage: dict[str, Any]
    active_tokens: int | None
    raw: dict[str, Any] = field(repr=False, compare=False)
    """The entry as the C ABI gives it (camelCase keys, every field)."""
    conversation_id: str | None = None
    """The host's own id for the conversation, when the session id was mapped
    from it (:meth:`Store.open_conversation`); None otherwise."""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionEntry:
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
        )
