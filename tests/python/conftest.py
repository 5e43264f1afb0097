"""Shared fixtures: a temporary home and project, and a store on them; and the
rule for tests marked ``pg`` (they need the PostgreSQL test server,
``SESSIONKIT_TEST_PG``): without it they are skipped, and they fail instead
under ``SESSIONKIT_REQUIRE_PG=1``, which the test command exports."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import sessionkit


def _pg_missing() -> tuple[bool, str] | None:
    """None when the server is there; else whether to fail, and why."""
    if os.environ.get("SESSIONKIT_TEST_PG"):
        return None
    why = "SESSIONKIT_TEST_PG is not set (tests/pg/server.sh starts a server; tests/run-all.sh sets it)"
    required = os.environ.get("SESSIONKIT_REQUIRE_PG", "")
    if required in ("", "0"):
        return False, why
    if required == "1":
        return True, f"SESSIONKIT_REQUIRE_PG=1, and {why}"
    return True, f"SESSIONKIT_REQUIRE_PG must be 1 or 0, not {required!r}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    missing = _pg_missing() if item.get_closest_marker("pg") else None
    if missing is not None and not missing[0]:
        pytest.skip(missing[1])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    # A failure of the test itself, not an error of its setup.
    missing = _pg_missing() if item.get_closest_marker("pg") else None
    if missing is not None:
        pytest.fail(missing[1], pytrace=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


@pytest.fixture
def store(home: Path, project: Path) -> Iterator[sessionkit.Store]:
    yield sessionkit.Store(project, home=home, durability="never")


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new Python process of this interpreter."""
    env = dict(os.environ)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def log_bytes(store: sessionkit.Store, session_id: str) -> bytes:
    return Path(store.log_path(session_id)).read_bytes()
