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


def test_import_from_another_machine_and_map_paths(tmp_path: Path) -> None:
    src = FIXTURES / "another-machine"
    home = tmp_path / "home"
    report = sessionkit.import_transcripts([src], home=home)
    assert report["failed"] == 0
    assert {s["project"] for s in report["sources"]} == {"/Users/dana/code/demo"}
    assert all("does not exist here" in (s["notice"] or "") for s in report["sources"])
    projects = {p["projectCode"]: p for p in sessionkit.list_all_sessions(home=home)}
    titles = {e["title"] for e in projects["-Users-dana-code-demo"]["sessions"]}
    assert "/orchestrator fix the flaky CI build" in titles
    assert not any("<" in t for t in titles)

    demo = tmp_path / "code" / "demo"
    demo.mkdir(parents=True)
    mapped = sessionkit.import_transcripts([src], home=tmp_path / "home2", map_paths={"/Users/dana": tmp_path})
    assert {s["project"] for s in mapped["sources"]} == {str(demo.resolve())}

    with pytest.raises(sessionkit.InvalidInputError, match="mapPaths"):
        sessionkit.import_transcripts([src], home=tmp_path / "home3", map_paths={"Users/dana": "/x"})
    assert not (tmp_path / "home3").exists()


def test_export_to_each_agent_writes_its_file(store: sessionkit.Store, project: Path, home: Path, tmp_path: Path) -> None:
    src = FIXTURES / "codex" / "2025" / "10" / "29"
    sessionkit.import_transcripts([src], project=project, home=home)
    for to, resume in [(sessionkit.ExportTarget.CLAUDE_CODE, "claude --resume "), ("codex", "codex resume ")]:
        agent = tmp_path / f"agent-{to}"
        out = store.export_to(CODEX, to=to, home=agent)
        assert out["to"] == sessionkit.ExportTarget(to).value
        assert out["nativeId"] == CODEX and out["idSource"] == "session"
        assert out["written"] is True and out["items"] > 0
        assert resume + CODEX in out["resumeCommand"]
        path = Path(out["path"])
        assert path.is_relative_to(agent) and CODEX in path.name
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(lines) >= out["items"]
        again = store.export_to(CODEX, to=to, home=agent)
        assert again["written"] is False and again["path"] == out["path"]
    # The Claude Code file: one chain of user and assistant lines of this session.
    claude = Path(store.export_to(CODEX, to="claude-code", home=tmp_path / "agent-claude-code")["path"])
    lines = [json.loads(line) for line in claude.read_text().splitlines()]
    assert {line["sessionId"] for line in lines} == {CODEX}
    assert lines[0]["parentUuid"] is None and lines[0]["type"] == "user"
    with pytest.raises(sessionkit.InvalidInputError, match="modelProvider"):
        store.export_to(CODEX, to="claude-code", home=tmp_path, model_provider="openai")
    with pytest.raises(sessionkit.InvalidInputError, match="rel/x"):
        store.export_to(CODEX, to="codex", home="rel/x")
    with pytest.raises(sessionkit.InvalidInputError):
        store.export_to(CODEX, to="cursor", home=tmp_path)
    with pytest.raises(sessionkit.NotFoundError):
        store.export_to("no-such-session", to="codex", home=tmp_path)
