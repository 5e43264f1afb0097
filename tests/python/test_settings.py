"""Settings, instruction files and memory through the Python package: the
same calls as the core, plain dicts out, errors as the package's classes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sessionkit
from sessionkit import errors


def test_settings_layers_origins_and_removal(store: sessionkit.Store, project: Path) -> None:
    store.set_setting("user", "model", "small")
    written = store.set_setting("project", "model", "large")
    assert written["path"] == str(project.resolve() / ".sessionkit" / "settings.json")
    s = store.settings()
    assert s["values"]["model"] == "large"
    assert s["origins"]["model"] == "project"
    assert store.settings(sources=["user"])["values"]["model"] == "small"
    assert store.settings(overrides={"model": "host"})["origins"]["model"] == "host"
    # None is written as null: it removes the key from the sources below.
    store.set_setting("local", "model", None)
    assert "model" not in store.settings()["values"]
    assert store.unset_setting("local", "model")["existed"] is True
    assert store.settings()["values"]["model"] == "large"
    with pytest.raises(errors.InvalidInputError, match="team"):
        store.set_setting("team", "model", 1)
    with pytest.raises(errors.InvalidInputError):
        store.settings(sources=["nope"])


def test_a_malformed_file_is_reported_and_writes_refuse_it(
    store: sessionkit.Store, project: Path
) -> None:
    store.set_setting("project", "theme", "dark")
    local = project / ".sessionkit" / "settings.local.json"
    local.write_text('{\n  "a": ]\n}')
    s = store.settings()
    assert s["values"] == {"theme": "dark"}
    assert s["sources"][2]["status"] == "error"
    assert "line 2, column 8" in (s["sources"][2]["error"] or "")
    with pytest.raises(errors.CorruptError, match="line 2"):
        store.set_setting("local", "a", 1)


def test_an_older_file_is_backed_up_and_migrated(store: sessionkit.Store, home: Path) -> None:
    user = home / "settings.json"
    user.write_text('{"instructionFiles": ["TEAM.md"]}')
    assert store.settings()["values"] == {"instructions": {"names": ["TEAM.md"]}}
    store.set_setting("user", "model", "x")
    assert (home / "settings.json.v1.bak").read_text() == '{"instructionFiles": ["TEAM.md"]}'
    assert json.loads(user.read_text()) == {
        "schemaVersion": 3,
        "instructions": {"names": ["TEAM.md"]},
        "model": "x",
    }


def test_migrate_settings_rewrites_an_older_file_once(store: sessionkit.Store, home: Path) -> None:
    user = home / "settings.json"
    user.write_text('{"instructionFiles": ["TEAM.md"]}')
    w = store.migrate_settings("user")
    assert w["backup"] == str(home / "settings.json.v1.bak")
    assert len(w["migrations"]) == 2
    assert json.loads(user.read_text()) == {"schemaVersion": 3, "instructions": {"names": ["TEAM.md"]}}
    assert store.migrate_settings("user")["backup"] is None
    user.write_text('{"schemaVersion": 99}')
    with pytest.raises(errors.UnsupportedError, match="99"):
        store.migrate_settings("user")
    assert user.read_text() == '{"schemaVersion": 99}'
    with pytest.raises(errors.InvalidInputError, match="host"):
        store.migrate_settings("host")


def test_instruction_files_in_order_with_a_cycle(store: sessionkit.Store, project: Path) -> None:
    root = project.resolve()
    (root / "sub").mkdir()
    (root / "AGENTS.md").write_text("Be brief. @loop.md")
    (root / "loop.md").write_text("@AGENTS.md")
    (root / "sub" / "CLAUDE.md").write_text("In sub.")
    got = store.instructions(root / "sub")
    assert [(f["path"], f["level"]) for f in got["files"]] == [
        (str(root / "AGENTS.md"), "project"),
        (str(root / "loop.md"), "include"),
        (str(root / "sub" / "CLAUDE.md"), "project"),
    ]
    assert [p["kind"] for p in got["problems"]] == ["cycle"]
    assert store.instructions(root, names=["CLAUDE.md"])["files"] == []
    with pytest.raises(errors.NotFoundError):
        store.instructions(root / "missing")


def test_memory_add_update_list_read_delete(store: sessionkit.Store) -> None:
    entry = store.add_memory("build", "# Build\nRun make.")
    assert entry["summary"] == "Build"
    with pytest.raises(errors.ConflictError):
        store.add_memory("build", "again")
    store.update_memory("build", "Run cargo.")
    assert store.read_memory("build") == "Run cargo."
    store.add_memory("me", "Short answers.", scope="user")
    assert [m["name"] for m in store.list_memories()] == ["build"]
    assert [m["name"] for m in store.list_memories(scope="user")] == ["me"]
    for bad in ["../escape", "/etc/passwd", "a/b", "a\0b"]:
        with pytest.raises(errors.InvalidInputError, match="memory name"):
            store.add_memory(bad, "x")
    store.delete_memory("build")
    with pytest.raises(errors.NotFoundError):
        store.read_memory("build")
