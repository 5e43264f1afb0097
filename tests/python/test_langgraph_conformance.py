"""LangGraph's own conformance suite judges SessionkitSaver.

``langgraph-checkpoint-conformance`` (PyPI, pinned in tests/python/run.sh) runs
its spec against a checkpointer: the base capabilities every checkpointer must
pass (put, put_writes, get_tuple, list, delete_thread) and the extended ones it
implements (copy_thread, prune, delete_for_runs). Each capability's suite gets
a saver of its own, on a fresh home. No test of the suite is kept here.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path

try:
    from langgraph.checkpoint.conformance import checkpointer_test, validate
    from langgraph.checkpoint.conformance.capabilities import (
        ALL_CAPABILITIES,
        BASE_CAPABILITIES,
        EXTENDED_CAPABILITIES,
    )
    from langgraph.checkpoint.conformance.report import CapabilityReport
except ImportError as e:  # the suite must run, never skip
    raise ImportError(
        "this test needs langgraph-checkpoint-conformance==0.0.2 "
        "(tests/python/run.sh installs it)"
    ) from e

from sessionkit.integrations.langgraph import SessionkitSaver

homes: list[Path] = []


@checkpointer_test(name="SessionkitSaver")
async def sessionkit_saver() -> AsyncGenerator[SessionkitSaver, None]:
    root = Path(tempfile.mkdtemp(prefix="sessionkit-lg-conformance-"))
    homes.append(root)
    try:
        async with SessionkitSaver(project=root, home=root / "home", durability="never") as saver:
            yield saver
    finally:
        shutil.rmtree(root)


def run() -> CapabilityReport:
    return asyncio.run(validate(sessionkit_saver))


def test_the_conformance_suite_passes() -> None:
    report = run()
    results = report.results
    failures = {
        name: r.failures for name, r in results.items() if r.detected and r.passed is not True
    }
    # Every capability is implemented, so every one is run.
    assert {c.value for c in ALL_CAPABILITIES} == {n for n, r in results.items() if r.detected}
    assert report.passed_all_base(), failures
    for cap in EXTENDED_CAPABILITIES:
        r = results[cap.value]
        assert r.passed is True and r.tests_failed == 0, (cap.value, r.failures)
    assert report.passed_all() and report.conformance_level() == "FULL", failures
    # Each suite ran tests, on a fresh home of its own.
    for cap in ALL_CAPABILITIES:
        assert results[cap.value].tests_passed > 0, cap.value
    assert len(homes) == len(ALL_CAPABILITIES) and not any(h.exists() for h in homes)
    passed = sum(r.tests_passed for r in results.values())
    base = sum(results[c.value].tests_passed for c in BASE_CAPABILITIES)
    print(f"langgraph-checkpoint-conformance: {passed} tests passed ({base} base)")
