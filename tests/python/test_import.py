"""Import of other agents' transcripts, listing every project, export as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sessionkit

FIXTURES = Path(__file__).parents[1] / "fixtures" / "import"
CODEX = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def test_import_a_codex_rollout_then_again(store: sessionkit.Store, project: Path, home: Path) -> None:
    src = FIXTURES / "codex" / "2025" / "10" / "29"
    report = sessionkit.import_transcripts([src], project=project, home=home)
    assert report["failed"] == 0
    assert report["sources"][0]["sessionId"] == CODEX
    assert report["messagesAdded"] == 11
    entry = store.session_entry(CODEX)
    assert entry.title == "Why does the greeting test fail?"

    again = sessionkit.import_transcripts([src], project=project, home=home, format="codex")
    assert again["messagesAdded"] == 0
    assert [s["outcome"] for s in again["sources"]] == ["upToDate"]

    path = json.loads(store.export_session(CODEX, sessionkit.ExportFormat.JSON))
    assert path[-1]["id"] == "line-16"
    assert "<details><summary>Tool call <code>shell</code>" in store.export_session(CODEX, "markdown")

    projects = sessionkit.list_all_sessions(home=home)
    assert [p["projectRoot"] for p in projects] == [str(project.resolve())]
    assert projects[0]["sessions"][0]["id"] == CODEX


def test_import_errors_are_the_packages(project: Path, home: Path) -> None:
    with pytest.raises(sessionkit.NotFoundError):
        sessionkit.import_transcripts([project / "missing.jsonl"], project=project, home=home)
    with pytest.raises(ValueError):
        sessionkit.import_transcripts([project], format="cursor")
    junk = project / "notes.jsonl"
    junk.write_text('{"hello": 1}\n')
    report = sessionkit.import_transcripts([junk], project=project, home=home)
    assert report["sources"][0]["outcome"] == "failed"
    assert "not recognised" in (report["sources"][0]["error"] or "")
