"""Full-text search from Python: the same call and the same result shape as
the C ABI and the CLI (``sessionkit search --json``)."""

from __future__ import annotations

import pytest

import sessionkit


def fill(store: sessionkit.Store) -> None:
    with store.create_session(id="s-find") as s:
        s.append(
            {
                "id": "u1",
                "role": "user",
                "timestamp": "2026-03-01T10:00:00Z",
                "content": "Why does parse_config fail?",
            }
        )
        s.append(
            {
                "id": "a1",
                "role": "assistant",
                "timestamp": "2026-03-02T10:00:00Z",
                "content": "Look at src/main.rs first",
                "messageParams": {
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "src/main.rs"}'},
                        }
                    ]
                },
            }
        )
    with store.create_session(id="s-other") as s:
        s.append({"id": "o1", "role": "user", "content": "parse_config again, in another session"})


def test_hits_carry_session_message_and_highlighted_snippet(store: sessionkit.Store) -> None:
    fill(store)
    found = store.search("parse_config", session="s-find")
    assert [(h["sessionId"], h["messageId"], h["role"]) for h in found["hits"]] == [
        ("s-find", "u1", "user")
    ]
    hit = found["hits"][0]
    assert "«parse_config»" in hit["snippet"]
    assert hit["project"] == store.project_code
    assert hit["timestamp"] == "2026-03-01T10:00:00.000Z"
    assert hit["score"] > 0
    assert found["indexedBytes"] > 0 and found["setAside"] == [] and found["stale"] == []
    both = store.search("parse_config")
    assert sorted(h["sessionId"] for h in both["hits"]) == ["s-find", "s-other"]
    assert both["indexedBytes"] == 0  # nothing appended since the first query


def test_filters_narrow_the_hits(store: sessionkit.Store) -> None:
    fill(store)
    assert [h["messageId"] for h in store.search("src/main.rs")["hits"]] == ["a1"]
    assert store.search("src/main.rs", role="user")["hits"] == []
    called = store.search("src/main.rs", tool="read_file")["hits"]
    assert [(h["messageId"], h["tools"]) for h in called] == [("a1", ["read_file"])]
    assert store.search("src/main.rs", tool="write_file")["hits"] == []
    assert store.search("src/main.rs", since="2026-03-02")["hits"] != []
    assert store.search("src/main.rs", until="2026-03-01")["hits"] == []
    assert len(store.search("parse_config", limit=1)["hits"]) == 1


def test_bad_queries_are_invalid_input(store: sessionkit.Store) -> None:
    with pytest.raises(sessionkit.InvalidInputError, match="soon"):
        store.search("x", since="soon")
    with pytest.raises(sessionkit.InvalidInputError, match="no word"):
        store.search(" * ")
