"""The typed user program (typed_user.py, which mypy --strict and pyright
check in run.sh) also runs, and sees what its types promise."""

from __future__ import annotations

from pathlib import Path

import typed_user


def test_the_typed_user_program_runs(tmp_path: Path) -> None:
    seen = typed_user.main(tmp_path)
    assert "A flaky test." in seen
    assert "BUSY" in seen and "INVALID_INPUT" in seen
    assert any(s.startswith("Typed ") and s.split()[2] == "2" for s in seen)
    assert "True True" in seen  # the search hit is the session's
    assert any(s.startswith("ok=True") for s in seen)
