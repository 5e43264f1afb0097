"""Shared writers from Python: many handles on one conversation, in threads and
processes, each write continuing from the head the others left."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import sessionkit

from conftest import run_python


def _linear(store: sessionkit.Store, session_id: str) -> list[sessionkit.Message]:
    """The active path, checked to be one unbroken chain holding every message."""
    view = store.read_session(session_id)
    path = view.active_path()
    assert len(view.tree()) == len(path), "a write forked the session"
    parent = None
    for m in path:
        assert m.get("parentId") == parent, m
        parent = m["id"]
    return path


def test_two_handles_on_one_conversation_take_turns(store: sessionkit.Store) -> None:
    a = store.open_conversation("user@example.com")
    b = store.open_conversation("user@example.com")
    assert a.shared and b.shared and a.id == b.id
    for i in range(5):
        a.append({"role": "user", "content": f"q{i}"})
        b.append({"role": "assistant", "content": f"a{i}"})
    contents = [m["content"] for m in _linear(store, a.id)]
    assert contents == [x for i in range(5) for x in (f"q{i}", f"a{i}")]
    a.close()
    b.close()
    entry = store.session_entry(a.id)
    assert entry.conversation_id == "user@example.com"
    assert entry.message_count == 10
    assert a.id == sessionkit.conversation_session_id("user@example.com")


def test_threads_each_with_a_handle(store: sessionkit.Store) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(n: int) -> None:
        try:
            s = store.open_conversation("conv:42")
            start.wait()
            for k in range(50):
                s.append_batch(
                    [
                        {"role": "user", "content": f"{n}:{k} q"},
                        {"role": "assistant", "content": f"{n}:{k} a"},
                    ]
                )
            s.close()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    path = _linear(store, sessionkit.conversation_session_id("conv:42"))
    assert len(path) == 400
    for q, a in zip(path[::2], path[1::2]):
        assert str(q["content"]).removesuffix(" q") == str(a["content"]).removesuffix(" a")


CHILD = """
import sys, sessionkit
store = sessionkit.Store(sys.argv[1], home=sys.argv[2])
s = store.open_conversation(sys.argv[3])
for k in range(int(sys.argv[4])):
    s.append({"role": "user", "content": f"child {k}"})
s.close()
print("done")
"""


def test_a_thread_and_another_process_share_a_conversation(
    store: sessionkit.Store, project: Path, home: Path
) -> None:
    mine = store.open_conversation("tenant/123")
    result: list[Any] = []
    child = threading.Thread(
        target=lambda: result.append(
            run_python(CHILD, str(project), str(home), "tenant/123", "100")
        )
    )
    child.start()
    for k in range(100):
        mine.append({"role": "assistant", "content": f"parent {k}"})
        assert mine.read().message_count >= k + 1
    child.join()
    assert result[0].returncode == 0, result[0].stderr
    path = _linear(store, mine.id)
    assert sorted(str(m["content"]) for m in path) == sorted(
        [f"child {k}" for k in range(100)] + [f"parent {k}" for k in range(100)]
    )


@pytest.mark.parametrize(
    "conversation",
    ["user@example.com", "conv:42", "tenant/123", "with space", "日本語", "../x", "..", "ok-id"],
)
def test_any_conversation_id_stays_in_the_store(
    store: sessionkit.Store, tmp_path: Path, conversation: str
) -> None:
    s = store.open_conversation(conversation)
    s.append({"role": "user", "content": conversation})
    assert Path(store.log_path(s.id)).parent == Path(store.dir)
    s.close()
    (entry,) = store.list_sessions()
    assert (entry.conversation_id or entry.id) == conversation
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "project"]


def test_bad_conversation_ids_are_refused(store: sessionkit.Store) -> None:
    for bad in ["", "x" * 1025]:
        with pytest.raises(sessionkit.InvalidInputError):
            store.open_conversation(bad)
    assert store.list_sessions() == []


def test_a_shared_writer_names_an_exclusive_holder(home: Path, project: Path) -> None:
    impatient = sessionkit.Store(project, home=home, busy_timeout_ms=100)
    held = impatient.create_session(id="held")
    assert not held.shared
    shared_store = sessionkit.Store(project, home=home, busy_timeout_ms=100)
    with pytest.raises(sessionkit.BusyError):
        shared_store.open_shared("held")
    held.close()
    s = shared_store.open_shared("held")
    s.append({"role": "user", "content": "now"})
    assert [m["content"] for m in _linear(shared_store, "held")] == ["now"]
