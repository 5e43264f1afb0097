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
from collections.abc import Sequence
from typing import Any

from . import _native
from ._api import BackgroundPush, Remote, Session, SessionView, Store, Subagent
from ._native import Follower
from ._types import (
    Durability,
    ExportFormat,
    ImportFormat,
    Lineage,
    Message,
    RewindMode,
    SessionEntry,
    Status,
)
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
) -> dict[str, Any]:
    """Import Claude Code, Codex or seed-style transcripts (files, or
    directories searched for ``*.jsonl``) into the project each names, or
    ``project``. Importing again adds only what a source gained. Returns the
    report: ``sources`` (each with ``outcome``, ``sessionId``, ``skipped`` and
    ``unmapped`` lines), ``messagesAdded``, ``failed``."""
    options: dict[str, Any] = {}
    if project is not None:
        options["project"] = os.fspath(project)
    if format is not None:
        options["from"] = ImportFormat(format).value
    if home is not None:
        options["store"] = {"home": os.fspath(home)}
    return _native.import_transcripts([os.fspath(p) for p in paths], options)


def list_all_sessions(*, home: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The sessions of every project in the home: ``projectCode``,
    ``projectRoot``, ``sessions`` (index entries as dicts) and ``error``."""
    return _native.list_all_sessions({} if home is None else {"home": os.fspath(home)})


__all__ = [
    "__version__",
    "project_code",
    "conversation_session_id",
    "import_transcripts",
    "list_all_sessions",
    "ImportFormat",
    "Store",
    "BackgroundPush",
    "Remote",
    "Follower",
    "Session",
    "SessionView",
    "Subagent",
    "SessionEntry",
    "Lineage",
    "Message",
    "Durability",
    "Status",
    "RewindMode",
    "ExportFormat",
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
