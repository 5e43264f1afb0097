"""Errors: one class per core error kind, from the core's table; bad input
raises the right class with a message naming it, and changes nothing."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

import sessionkit
from sessionkit import errors

from conftest import log_bytes

BUILTIN_OF = {
    "NOT_FOUND": LookupError,
    "BUSY": BlockingIOError,
    "CONFLICT": RuntimeError,
    "INVALID_INPUT": ValueError,
    "CORRUPT": RuntimeError,
    "IO": OSError,
    "UNSUPPORTED": RuntimeError,
    "INTERNAL": RuntimeError,
}


def test_every_kind_of_the_core_table_has_its_class() -> None:
    kinds = sessionkit._native.error_kinds()
    assert [code for code, _, _ in kinds] == list(range(1, len(kinds) + 1))
    assert [name for _, name, _ in kinds] == list(errors._BY_CODE)
    for _, name, description in kinds:
        cls = errors._BY_CODE[name]
        assert cls.code == name
        assert issubclass(cls, sessionkit.SessionkitError)
        assert issubclass(cls, BUILTIN_OF[name])
        assert cls.__doc__ is not None and cls.__doc__.startswith(description.split(",")[0][:30])
        assert getattr(sessionkit, cls.__name__) is cls
    assert issubclass(sessionkit.InvalidInputError, TypeError)


def test_an_io_error_carries_its_errno(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the home directory should be")
    with pytest.raises(sessionkit.IoError) as e:
        sessionkit.Store(tmp_path, home=home)
    assert e.value.errno == errno.ENOTDIR and e.value.code == "IO"
    assert isinstance(e.value, OSError) and str(home) in str(e.value)


def test_a_missing_project_root_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(sessionkit.NotFoundError) as e:
        sessionkit.Store(tmp_path / "nope", home=tmp_path / "h")
    assert e.value.errno is None and isinstance(e.value, LookupError)


BAD_MESSAGES: list[tuple[Any, str]] = [
    ({"role": "user", "content": float("nan")}, "`message[\"content\"]` cannot be stored as JSON: the float NaN"),
    ({"role": "user", "content": [1, {"a": float("inf")}]}, '`message["content"][1]["a"]`'),
    ({"role": "user", "content": {1: "int key"}}, "a dict key must be a str, not int"),
    ({"role": "user", "content": 2**64}, "beyond the 64 bits"),
    ({"role": "user", "content": b"bytes"}, "bytes is not JSON serializable"),
    ({"role": "user", "content": {1, 2}}, "set is not JSON serializable"),
    ({"role": "user", "content": object()}, "object is not JSON serializable"),
    ({"role": "wizard", "content": "x"}, "role"),
    ({"content": "no role"}, "role"),
    ("just text", "object"),
    ([{"role": "user"}], "object"),
    ({"role": "user", "content": "x", "parentId": "nope"}, "nope"),
    ({"role": "user", "content": "x", "contentBlob": {}}, "contentBlob"),
]


@pytest.mark.parametrize("message,needle", BAD_MESSAGES)
def test_bad_messages_raise_invalid_input_and_write_nothing(
    store: sessionkit.Store, message: Any, needle: str
) -> None:
    with store.create_session() as s:
        s.append({"role": "user", "content": "first"})
        before = log_bytes(store, s.id)
        with pytest.raises((sessionkit.InvalidInputError, sessionkit.NotFoundError)) as e:
            s.append(message)
        assert needle in str(e.value)
        with pytest.raises((sessionkit.InvalidInputError, sessionkit.NotFoundError)):
            s.append_batch([{"role": "user", "content": "fine"}, message])
        assert log_bytes(store, s.id) == before


def test_a_value_that_contains_itself_is_refused(store: sessionkit.Store) -> None:
    loop: list[Any] = []
    loop.append(loop)
    with store.create_session() as s:
        with pytest.raises(sessionkit.InvalidInputError, match="contains itself"):
            s.append({"role": "user", "content": loop})
        assert s.active_path() == []


def test_a_duplicate_id_is_a_conflict(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        s.append({"role": "user", "content": "x", "id": "m1"})
        with pytest.raises(sessionkit.ConflictError, match="m1"):
            s.append({"role": "user", "content": "y", "id": "m1"})
    with pytest.raises(sessionkit.ConflictError):
        store.create_session(id=s.id)


@pytest.mark.parametrize(
    "bad_id,cls",
    [
        ("../escape", sessionkit.InvalidInputError),
        ("a/b", sessionkit.InvalidInputError),
        (".hidden", sessionkit.InvalidInputError),
        ("", sessionkit.InvalidInputError),
        ("x" * 129, sessionkit.InvalidInputError),
        (b"bytes-id", sessionkit.InvalidInputError),
        (42, sessionkit.InvalidInputError),
        (None, sessionkit.InvalidInputError),
        ("no-such-session", sessionkit.NotFoundError),
    ],
)
def test_bad_and_unknown_session_ids(
    store: sessionkit.Store, home: Path, bad_id: Any, cls: type[Exception]
) -> None:
    snapshot = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    for call in (store.open_session, store.read_session, store.session_entry, store.delete_session):
        with pytest.raises(cls) as e:
            call(bad_id)
        assert str(e.value)
        if isinstance(bad_id, bytes):
            assert "must be a str, not bytes" in str(e.value)
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == snapshot
    assert not (home.parent / "escape.jsonl").exists()


def test_wrong_types_of_other_arguments(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        with pytest.raises(sessionkit.InvalidInputError, match="`paths`.*single str"):
            s.track_read("notes.txt")
        with pytest.raises(sessionkit.InvalidInputError, match=r"paths\[0\].*int"):
            s.track_read([7])  # type: ignore[list-item]
        with pytest.raises(sessionkit.InvalidInputError, match=r'`policy\["tokenBudget"\]`.*not a JSON number'):
            s.select_compaction(float("nan"))  # type: ignore[arg-type]
        with pytest.raises(sessionkit.InvalidInputError, match="`replaces`"):
            s.apply_compaction("m1", "summary")  # type: ignore[arg-type]
        with pytest.raises(sessionkit.InvalidInputError):
            s.update_state({"status": "exploded"})
        with pytest.raises(sessionkit.InvalidInputError):
            s.update_state([1])  # type: ignore[arg-type]
        with pytest.raises(sessionkit.NotFoundError):
            s.set_head("missing-message")
        with pytest.raises(ValueError):
            s.rewind("x", "sideways")
        with pytest.raises(sessionkit.InvalidInputError, match="which"):
            s.read()._native.iter("sideways")
        assert s.active_path() == []
    with pytest.raises(sessionkit.InvalidInputError, match="maxRecordBytes"):
        sessionkit.Store(".", home=os.devnull + "-x", max_record_bytes=1)
    with pytest.raises(ValueError):
        sessionkit.Store(".", durability="sometimes")


def test_a_message_over_the_record_limit(home: Path, project: Path) -> None:
    store = sessionkit.Store(project, home=home, max_record_bytes=2048, blob_threshold=1 << 20)
    with store.create_session() as s:
        with pytest.raises(sessionkit.InvalidInputError, match="2048"):
            s.append({"role": "user", "content": "x" * 5000})
        assert s.active_path() == []
