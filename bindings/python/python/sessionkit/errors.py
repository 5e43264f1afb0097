"""The exceptions of sessionkit: one class per error kind of the core.

Every class subclasses :class:`SessionkitError` and the builtin exception it is
like, so ``except LookupError`` catches a missing session as it would a missing
key. ``code`` is the kind's name, the same as the C ABI's status name
(``"NOT_FOUND"``, ...); ``errno`` is the operating system's error number behind
the error (``errno.ENOSPC``, ...) or ``None``.

The classes are raised by the native module from the core's one table of error
kinds (``sessionkit._native.error_kinds()``); a test holds this module to it.
"""

from __future__ import annotations


class SessionkitError(Exception):
    """Base class of every error sessionkit raises."""

    code: str = ""
    """The error kind's name, as the C ABI's status name."""
    errno: int | None
    """The operating system's error number behind the error, if any."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.errno = None


class NotFoundError(SessionkitError, LookupError):
    """A session, message, agent, snapshot or file that was asked for does not exist."""

    code = "NOT_FOUND"


class BusyError(SessionkitError, BlockingIOError):
    """Another writer, in this or another process, holds the session's lock.

    Like the ``BlockingIOError`` of a non-blocking ``flock``: waiting for the
    other writer to close, or forking the session, are the ways on.
    """

    code = "BUSY"


class ConflictError(SessionkitError, RuntimeError):
    """The operation clashes with the state on disk (an existing id, files changed outside the agent)."""

    code = "CONFLICT"


class InvalidInputError(SessionkitError, ValueError, TypeError):
    """The caller passed something invalid: a wrong type, bad JSON, a bad id, a value over a limit.

    Also a ``TypeError``, since a wrong type is one kind of invalid input.
    """

    code = "INVALID_INPUT"


class CorruptError(SessionkitError, RuntimeError):
    """Stored data cannot be understood and cannot be repaired automatically."""

    code = "CORRUPT"


class IoError(SessionkitError, OSError):
    """The operating system reported an I/O error; ``errno`` says which."""

    code = "IO"


class UnsupportedError(SessionkitError, RuntimeError):
    """The store was written by a newer, incompatible format version."""

    code = "UNSUPPORTED"


class InternalError(SessionkitError, RuntimeError):
    """A bug in sessionkit (a panic caught at a boundary, a broken invariant)."""

    code = "INTERNAL"


_BY_CODE: dict[str, type[SessionkitError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        BusyError,
        ConflictError,
        InvalidInputError,
        CorruptError,
        IoError,
        UnsupportedError,
        InternalError,
    )
}
"""The class of each error kind name; the native module raises through it."""


def error_from_code(code: str, message: str, errno: int | None = None) -> SessionkitError:
    """The exception for an error the core reported as data (a refused group of
    :meth:`Session.append_groups`): the class of its kind's ``code``."""
    exc = _BY_CODE.get(code, InternalError)(message)
    exc.errno = errno
    return exc

__all__ = [
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
