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

from . import _native
from ._api import Session, SessionView, Store, Subagent
from ._types import (
    Durability,
    ExportFormat,
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


def project_code(canonical_root: str) -> str:
    """The directory name of a project under ``<home>/projects/``."""
    return _native.project_code(canonical_root)


__all__ = [
    "__version__",
    "project_code",
    "Store",
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
