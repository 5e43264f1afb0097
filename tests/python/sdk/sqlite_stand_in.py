"""A pytest plugin that runs the OpenAI Agents SDK's own session tests (from
its sdist, see run.sh) against ``SessionkitSession``.

The SDK's tests build their sessions with ``SQLiteSession(session_id,
db_path=":memory:", sessions_table=..., messages_table=...,
session_settings=None)``. Before each test, the name ``SQLiteSession`` in the
test's module is replaced by ``SQLiteSessionStandIn``: a ``SessionkitSession``
taking those arguments.

- ``db_path=":memory:"`` is a database of its own for every instance, so each
  such instance gets a store of its own (a scratch directory removed at the
  end of the run).
- A file ``db_path`` is one database shared by every instance naming it, so
  it maps to one sessionkit home beside it (``<db_path>.sessionkit``), with
  the database's directory as the project: two ids in one database are two
  sessions of one store, as in SQLite. Other table names are another namespace
  in the same file, hence another home.
- ``session_settings`` is passed on as it is; the adapter does what
  ``SQLiteSession`` does with it.

The tests listed in ``excluded.txt`` (those about SQLite's internals, each
with its reason) are deselected; a listed test that no longer exists stops the
run, and so does a run in which no test passed or no test built a session.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.memory.session_settings import SessionSettings

from sessionkit.integrations.openai_agents import SessionkitSession

EXCLUDED = Path(__file__).with_name("excluded.txt")

_scratch: Path | None = None
_built = 0
_passed = 0


def _scratch_dir() -> Path:
    global _scratch
    if _scratch is None:
        _scratch = Path(tempfile.mkdtemp(prefix="sessionkit-sdk-tests-"))
    return _scratch


class SQLiteSessionStandIn(SessionkitSession):
    """``SQLiteSession``'s constructor over a sessionkit store."""

    def __init__(
        self,
        session_id: str,
        db_path: str | os.PathLike[str] = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        global _built
        if str(db_path) == ":memory:":
            home = Path(tempfile.mkdtemp(prefix="memory-", dir=_scratch_dir()))
            project = home
        else:
            db = Path(db_path).absolute()
            tables = (
                ""
                if (sessions_table, messages_table) == ("agent_sessions", "agent_messages")
                else f".{sessions_table}.{messages_table}"
            )
            home = db.with_name(f"{db.name}{tables}.sessionkit")
            project = db.parent
        super().__init__(
            session_id, project=project, home=home, session_settings=session_settings
        )
        _built += 1


@pytest.fixture(autouse=True)
def _sqlite_session_is_sessionkit(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    module = getattr(request, "module", None)
    if module is not None and hasattr(module, "SQLiteSession"):
        monkeypatch.setattr(module, "SQLiteSession", SQLiteSessionStandIn)
    yield


def _excluded() -> dict[str, str]:
    """``file.py::test_name`` (every parametrisation of it) -> reason."""
    out: dict[str, str] = {}
    for line in EXCLUDED.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, reason = line.partition(" -- ")
        if not sep or not reason.strip():
            raise pytest.UsageError(f"{EXCLUDED}: no reason given for {line!r}")
        out[name.strip()] = reason.strip()
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    excluded = _excluded()
    seen: set[str] = set()
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        name = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if name in excluded:
            seen.add(name)
            dropped.append(item)
        else:
            kept.append(item)
    stale = sorted(set(excluded) - seen)
    if stale:
        raise pytest.UsageError(
            f"{EXCLUDED} lists tests the SDK's suite does not have (any more): {stale}"
        )
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _passed
    if report.when == "call" and report.passed:
        _passed += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus != 0:
        return
    if _passed == 0 or _built == 0:
        print(
            f"\nthe SDK's session tests ran nothing against sessionkit "
            f"({_passed} passed, {_built} sessions built): failing the run"
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)
