"""The handles as a user holds them: appends of several groups with a result
per group, close and ``with`` on every handle, their reprs, the Responses
items, every index field, and bad arguments raising ``InvalidInputError``."""

from __future__ import annotations

from pathlib import Path

import pytest

import sessionkit
from sessionkit import BusyError, InvalidInputError, SessionkitError


def test_append_groups_reports_per_group_and_writes_only_the_accepted(
    store: sessionkit.Store,
) -> None:
    with store.create_session() as s:
        results = s.append_groups(
            [
                [{"role": "user", "content": "one"}],
                [{"role": "nobody", "content": "refused"}],
                [{"role": "assistant", "content": "two"}, {"role": "user", "content": "three"}],
            ]
        )
        assert len(results) == 3
        first, refused, last = results
        assert isinstance(first, list) and first[0]["content"] == "one"
        assert isinstance(refused, InvalidInputError)
        assert refused.code == "INVALID_INPUT" and "role" in str(refused)
        assert isinstance(last, list) and [m["content"] for m in last] == ["two", "three"]
        contents = [m["content"] for m in s.active_path()]
        assert contents == ["one", "two", "three"]
        # Each accepted group continues from the one before it.
        assert last[0]["parentId"] == first[0]["id"]


def test_append_groups_of_a_subagent_and_bad_shapes(store: sessionkit.Store) -> None:
    with store.create_session() as s, s.spawn_subagent("helper") as a:
        (ok,) = a.append_groups([[{"role": "user", "content": "go"}]])
        assert isinstance(ok, list) and ok[0]["content"] == "go"
        assert [m["content"] for m in a.read().active_path()] == ["go"]
        for bad in ([{"role": "user"}], [["not a dict"]], "text"):
            with pytest.raises(InvalidInputError, match="groups"):
                s.append_groups(bad)  # type: ignore[arg-type]
        assert s.active_path() == []


def test_every_handle_closes_once_refuses_later_use_and_shows_itself(
    store: sessionkit.Store,
) -> None:
    s = store.create_session(title="Fix the build")
    assert s.id in repr(s) and "Fix the build" in repr(s)
    with s:
        s.append({"role": "user", "content": "hi"})
        view = s.read()
        assert s.id in repr(view) and "messages=1" in repr(view)
        with s.spawn_subagent("helper") as a:
            assert "helper" in repr(a) and s.id in repr(a)
        assert "closed" in repr(a)
    assert s.closed and "closed" in repr(s)
    s.close()
    with pytest.raises(InvalidInputError, match="closed"):
        s.append({"role": "user", "content": "late"})

    with store:
        assert store.project_code in repr(store)
        assert store.list_sessions()[0].id == s.id
    assert store.closed and "closed" in repr(store)
    store.close()
    with pytest.raises(InvalidInputError, match="closed"):
        store.list_sessions()
    with pytest.raises(InvalidInputError, match="closed"):
        store.open_session(s.id)


def test_session_entry_keeps_every_index_field(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        s.append({"role": "user", "content": "hi"})
        s.update_state(
            {
                "status": "failed",
                "thinking": "about tests",
                "failureReason": "the disk is full",
                "lastToolCall": {"name": "bash"},
                "childProcesses": [{"pid": 42}],
            }
        )
        s.rename("Named")
    entry = store.session_entry(s.id)
    assert entry.status is sessionkit.Status.FAILED
    assert entry.title_set is True and entry.title == "Named"
    assert entry.thinking == "about tests"
    assert entry.failure_reason == "the disk is full"
    assert entry.refusal_reason is None
    assert entry.last_tool_call == {"name": "bash"}
    assert entry.child_processes == [{"pid": 42}]
    assert entry.log_bytes > 0
    # Every key of the core's entry has its field.
    fields = {
        "id", "conversationId", "title", "titleSet", "createdAt", "updatedAt", "status",
        "lastAssistantReply", "thinking", "refusalReason", "failureReason", "lastToolCall",
        "tokenUsage", "activeTokens", "childProcesses", "headId", "messageCount",
        "forkedFrom", "logBytes",
    }  # fmt: skip
    assert set(entry.raw) <= fields


def test_responses_items_on_the_public_session(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        s.append_responses_items(
            [
                {"role": "user", "content": "What is 2+2?"},
                {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "4"},
            ]
        )
        items = s.responses_items()
        assert [i.get("type") for i in items][1:] == ["function_call", "function_call_output"]
        assert s.responses_items(1) == items[-1:]
        assert s.responses_items(model_view=True) == items
        popped = s.pop_responses_item()
        assert popped is not None and popped["call_id"] == "c1"
        assert len(s.responses_items()) == 2


def test_replace_responses_items_with_compaction_keeps_the_originals(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        s.append_responses_items([{"role": "user", "content": "long history"}])
        s.replace_responses_items_with_compaction(
            [{"type": "compaction", "encrypted_content": "abc"}, {"role": "user", "content": "kept"}]
        )
        model = s.responses_items(model_view=True)
        assert [i.get("type") for i in model] == ["compaction", None]
        assert model[1]["content"] == "kept"
        assert len(s.responses_items()) == 3, "the original stays on the active path"
        with pytest.raises(sessionkit.InvalidInputError):
            s.replace_responses_items_with_compaction([{"role": "user", "content": "no compaction"}])


def test_memory_path_checkpoint_summaries_and_fresh_ids(
    store: sessionkit.Store, home: Path, project: Path
) -> None:
    assert store.memory_path(scope="user").startswith(str(home))
    assert store.memory_path() != store.memory_path(scope="user")
    with pytest.raises(sessionkit.InvalidInputError):
        store.memory_path(scope="team")
    with store.create_session() as s:
        assert store.checkpoint_summaries(s.id) == []
    from sessionkit.integrations.langgraph import SessionkitSaver

    saver = SessionkitSaver(project=project, home=home)
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    checkpoint = {"v": 1, "id": "cp-1", "ts": "2026-01-01T00:00:00+00:00", "channel_values": {"a": 1},
                  "channel_versions": {"a": "1"}, "versions_seen": {}}  # fmt: skip
    saver.put(config, checkpoint, {"source": "input", "step": -1}, {"a": "1"})  # type: ignore[arg-type]
    thread = [e.id for e in store.list_sessions()][0]
    [summary] = store.checkpoint_summaries(thread)
    assert summary["id"] == "cp-1" and summary["channels"] == ["a"] and summary["writes"] == 0
    a, b = sessionkit._native.new_session_id(), sessionkit._native.new_session_id()
    assert a != b and a < b and len(a) == 36 and a[14] == "7", "time-ordered UUIDv7s"


@pytest.mark.parametrize(
    "call",
    [
        lambda st, s: s.rewind_turns(-1),
        lambda st, s: s.rewind_turns(2**64),
        lambda st, s: s.rewind_turns("1"),
        lambda st, s: s.rewind_turns(1, "sideways"),
        lambda st, s: s.rewind("x", mode="sideways"),
        lambda st, s: s.rewind_preview("x", "nope"),
        lambda st, s: s.restore_snapshot("x", force="yes"),
        lambda st, s: s.responses_items(-1),
        lambda st, s: s.responses_items(2**70),
        lambda st, s: st.export_session(s.id, "pdf"),
        lambda st, s: st.add_memory("n", "text", scope="galaxy"),
        lambda st, s: st.set_setting("everywhere", "a", 1),
        lambda st, s: st.settings(sources=["nowhere"]),
        lambda st, s: sessionkit.Store(".", durability="sometimes"),
        lambda st, s: sessionkit.Store(".", home=st.info()["dir"], max_sessions=-1),
        lambda st, s: sessionkit.Store(".", home=st.info()["dir"], busy_timeout_ms=2**64),
        lambda st, s: sessionkit.import_transcripts([], format="word"),
        lambda st, s: st.search("x", limit=-5),
        lambda st, s: s.spawn_subagent("a").finish("done", failed="no"),
        lambda st, s: s.model_view(last_n=-1),
        lambda st, s: s.select_compaction(5, keep_last_turns=-1),
        lambda st, s: s.rewind_turns(True),
        lambda st, s: st.doctor(repair="yes"),
        lambda st, s: sessionkit.import_transcripts(5),  # type: ignore[arg-type]
        lambda st, s: sessionkit.list_all_sessions(home=5),  # type: ignore[arg-type]
    ],
)
def test_every_bad_argument_is_invalid_input(store: sessionkit.Store, call: object) -> None:
    with store.create_session() as s:
        with pytest.raises(InvalidInputError) as raised:
            call(store, s)  # type: ignore[operator]
        assert isinstance(raised.value, SessionkitError)


def test_busy_is_a_sessionkit_error_a_user_catches(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        try:
            store.open_session(s.id)
        except BusyError as e:
            assert e.code == "BUSY"
        else:
            pytest.fail("a second writer was let in")
