#!/usr/bin/env python3
"""Listing through the Python package at the scale of a heavy user: the store
``core/examples/list_bench.rs`` writes (``list_bench gen DIR``: one project of
10,000 sessions, a home of 100 projects × 100 sessions), listed as a picker
does, beside the same calls of the Rust API in the same run
(``list_bench time DIR``).

- ``Store.list_page(limit=50)``: the first screen, checked against every log;
- ``Store.list_sessions()``: every entry, as ``SessionEntry`` objects;
- ``sessionkit.list_all_sessions()`` over the home of 100 projects.

Each figure is the median of 11 calls in this process. Run from the
repository root, with the package installed:

    cargo run --release -p sessionkit --example list_bench -- gen DIR
    python bindings/python/bench/list_bench.py DIR
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import sessionkit

ROUNDS = 11


def median_ms(f: Callable[[], object]) -> float:
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path, help="the directory `list_bench gen DIR` wrote")
    args = ap.parse_args()
    big = args.dir / "big"
    store = sessionkit.Store(big / "project", home=big / "home", durability="never")
    page = store.list_page(limit=50)
    print(f"one project: {page.total} sessions")
    print(f"  list_page(limit=50)      {median_ms(lambda: store.list_page(limit=50)):.2f} ms")
    print(f"  list_sessions()          {median_ms(store.list_sessions):.2f} ms")
    many = args.dir / "many" / "home"
    projects = sessionkit.list_all_sessions(home=many)
    total = sum(len(p["sessions"]) for p in projects)
    print(f"home: {len(projects)} projects, {total} sessions")
    print(f"  list_all_sessions()      {median_ms(lambda: sessionkit.list_all_sessions(home=many)):.2f} ms")


if __name__ == "__main__":
    main()
