"""Threads and processes: parallel writers on one store, one writer per session."""

from __future__ import annotations

import threading
from collections.abc import Callable
import time
from pathlib import Path

import pytest

import sessionkit

from conftest import run_python

THREADS = 8
PER_THREAD = 200


def test_eight_threads_append_to_eight_sessions_of_one_store(store: sessionkit.Store) -> None:
    sessions = [store.create_session(title=f"thread {i}") for i in range(THREADS)]
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(s: sessionkit.Session, n: int) -> None:
        try:
            start.wait()
            for k in range(PER_THREAD):
                s.append({"role": "user" if k % 2 == 0 else "assistant", "content": f"{n}:{k}"})
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s, i)) for i, s in enumerate(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sessions:
        s.close()
    assert errors == []
    for i, s in enumerate(sessions):
        path = store.read_session(s.id).active_path()
        assert [m["content"] for m in path] == [f"{i}:{k}" for k in range(PER_THREAD)]
    entries = {e.id: e for e in store.list_sessions()}
    assert all(entries[s.id].message_count == PER_THREAD for s in sessions)


def test_threads_share_one_session_and_every_append_lands(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        threads = [
            threading.Thread(
                target=lambda n=n: [s.append({"role": "user", "content": f"{n}"}) for _ in range(50)]
            )
            for n in range(THREADS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(s.active_path()) == THREADS * 50


def test_the_gil_is_released_while_the_core_works(store: sessionkit.Store) -> None:
    """A Python thread keeps running while another waits in a long core call
    (reading a 20 MB log into a view, which hands nothing back to convert).

    Its counting rate during the reads is compared with its rate over windows
    of the same length without them, measured here, each right after the reads
    it is compared with: a change in the machine's load weighs on both alike,
    and the windows add up to seconds, not a fraction of one."""
    with store.create_session() as s:
        s.append_batch([{"role": "user", "content": "x" * 1000} for _ in range(20_000)])
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    def window(work: Callable[[], object]) -> tuple[int, float]:
        t0, start = ticks, time.perf_counter()
        work()
        return ticks - t0, time.perf_counter() - start

    def reads() -> None:
        # At least a quarter of a second of reads per window.
        until = time.perf_counter() + 0.25
        while time.perf_counter() < until:
            store.read_session(s.id)

    busy = [0, 0.0]
    free = [0, 0.0]
    t = threading.Thread(target=count)
    t.start()
    try:
        for _ in range(4):
            n, took = window(reads)
            busy[0] += n
            busy[1] += took
            n, took = window(lambda: time.sleep(took))
            free[0] += n
            free[1] += took
    finally:
        done.set()
        t.join()
    busy_rate, free_rate = busy[0] / busy[1], free[0] / free[1]
    # Were the GIL held through each read, the counter would stand still
    # but for the moments between calls.
    assert busy_rate > 0.1 * free_rate, (busy, free)


def test_a_second_writer_is_busy(store: sessionkit.Store) -> None:
    with store.create_session() as s:
        with pytest.raises(sessionkit.BusyError) as e:
            store.open_session(s.id)
        assert e.value.code == "BUSY" and s.id in str(e.value)
        other = sessionkit.Store(store.project_root, home=Path(store.dir).parents[1])
        with pytest.raises(BlockingIOError):
            other.open_session(s.id)
        with pytest.raises(sessionkit.BusyError):
            store.delete_session(s.id)
        # Readers are never blocked, and a fork is the way to write on.
        assert store.read_session(s.id).active_path() == []
        with store.fork_session(s.id) as f:
            f.append({"role": "user", "content": "in the fork"})


def test_a_second_process_gets_busy(store: sessionkit.Store, home: Path) -> None:
    code = """
import sys, sessionkit
store = sessionkit.Store(sys.argv[1], home=sys.argv[2])
try:
    store.open_session(sys.argv[3])
except sessionkit.BusyError as e:
    print("busy", e.code, isinstance(e, BlockingIOError))
"""
    with store.create_session() as s:
        r = run_python(code, store.project_root, str(home), s.id)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["busy", "BUSY", "True"]
    r = run_python(code.replace("print(\"busy\"", "print('unexpected'"), store.project_root, str(home), s.id)
    assert r.returncode == 0 and r.stdout == "", (r.stdout, r.stderr)
