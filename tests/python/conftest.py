"""Shared fixtures: a temporary home and project, and a store on them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import sessionkit


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
