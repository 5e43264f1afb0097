"""Sessions shared through PostgreSQL from Python (docs/DISTRIBUTED.md): two
homes stand for two machines on one real server (``SESSIONKIT_TEST_PG``, which
``tests/run-all.sh`` starts)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import sessionkit

URL = os.environ.get("SESSIONKIT_TEST_PG")
# Skipped without the server, failed under SESSIONKIT_REQUIRE_PG=1 (conftest.py).
needs_server = pytest.mark.pg


@dataclass
class Machines:
    a: sessionkit.Store
    b: sessionkit.Store
    project: str
    home_b: Path


@pytest.fixture
def machines(tmp_path: Path) -> Machines:
    # Each test shares under a name of its own: tests on one server never meet.
    project = f"py-{uuid.uuid4()}"
    stores = []
    for name in ("a", "b"):
        root = tmp_path / name / "project"
        root.mkdir(parents=True)
        stores.append(sessionkit.Store(root, home=tmp_path / name / "home", durability="never"))
    return Machines(stores[0], stores[1], project, tmp_path / "b" / "home")


def remote(m: Machines, store: sessionkit.Store, holder: str, ttl_ms: int = 60_000) -> sessionkit.Remote:
    return sessionkit.Remote(store, url=URL, project=m.project, holder=holder, lease_ttl_ms=ttl_ms)


def log_bytes(store: sessionkit.Store, session_id: str) -> bytes:
    return Path(store.log_path(session_id)).read_bytes()


@needs_server
def test_push_then_pull_is_byte_identical_and_pulls_only_new_lines(machines: Machines) -> None:
    m = machines
    ra, rb = remote(m, m.a, "laptop"), remote(m, m.b, "ci")
    assert (ra.project, ra.holder) == (m.project, "laptop")
    assert ra.schema_version() >= 1
    with m.a.create_session() as s:
        s.append({"role": "user", "content": "Summarise the build log"})
        # Over the blob threshold: the blob travels with the line.
        s.append({"role": "tool", "content": "x" * (300 * 1024)})
        pushed = ra.push(s.id)
        total = len(log_bytes(m.a, s.id))
        assert (pushed["sessionId"], pushed["from"], pushed["to"]) == (s.id, 0, total)

        listed = rb.list()
        assert [r["id"] for r in listed] == [s.id]
        assert listed[0]["pushedBytes"] == total
        entry = listed[0]["entry"]
        assert entry is not None and entry["title"] == "Summarise the build log"

        pulled = rb.pull(s.id)
        assert (pulled["from"], pulled["to"]) == (0, total)
        assert log_bytes(m.b, s.id) == log_bytes(m.a, s.id)
        assert m.b.read_session(s.id).active_path()[1]["content"] == "x" * (300 * 1024)

        s.append({"role": "assistant", "content": "It passed."})
        more = ra.push(s.id)
        assert more["from"] == total
        again = rb.pull(s.id)
        assert (again["from"], again["to"], again["blobs"]) == (total, more["to"], 0)
        assert log_bytes(m.b, s.id) == log_bytes(m.a, s.id)


@needs_server
def test_a_follower_gets_exactly_the_lines_pushed_elsewhere(machines: Machines) -> None:
    m = machines
    ra, rb = remote(m, m.a, "laptop"), remote(m, m.b, "dashboard")
    with m.a.create_session() as s:
        s.append({"role": "user", "content": "first"})
        ra.push(s.id)
        start = len(log_bytes(m.a, s.id))
        follower = rb.follow(s.id)
        assert follower.offset == start
        assert follower.next_lines(0) == []
        for i in range(3):
            s.append({"role": "assistant", "content": f"line {i}"})
        ra.push(s.id)
        got: list[bytes] = []
        while len(b"".join(got)) < len(log_bytes(m.a, s.id)) - start:
            more = follower.next_lines(10)
            assert more, "no lines within 10 s of a push"
            got += more
        assert b"".join(got) == log_bytes(m.a, s.id)[start:]
        assert all(line.endswith(b"\n") for line in got)
        assert follower.offset == len(log_bytes(m.a, s.id))
        with pytest.raises(sessionkit.InvalidInputError, match="timeout"):
            follower.next_lines(-1)
    with pytest.raises(sessionkit.NotFoundError):
        rb.follow("0190a4b0-0000-7000-8000-000000000000")


@needs_server
def test_a_held_lease_is_busy_elsewhere_and_a_stale_one_is_refused(machines: Machines) -> None:
    m = machines
    # A lease no load outlasts: it ends below because the test shortens it.
    ra, rb = remote(m, m.a, "laptop"), remote(m, m.b, "sandbox")
    s = m.a.create_session()
    s.append({"role": "user", "content": "one"})
    lease = ra.acquire(s.id)
    assert (lease["sessionId"], lease["holder"]) == (s.id, "laptop")
    ra.push(s.id, lease)
    rb.pull(s.id)

    with pytest.raises(sessionkit.BusyError, match="laptop"):
        rb.acquire(s.id)
    with pytest.raises(sessionkit.BusyError):
        rb.push(s.id)

    # A vanishes and its lease runs out, without the test racing a clock: A's
    # last renewal asked for 1 ms, and B tries once the database's clock (this
    # machine's) is past it. B takes over with a larger token.
    lapsing = remote(m, m.a, "laptop", ttl_ms=1).renew(lease)
    assert lapsing["token"] == lease["token"]
    while time.time() * 1000 <= lapsing["expiresMs"] + 1:
        time.sleep(0.005)
    taken = rb.acquire(s.id)
    assert taken["token"] > lease["token"]
    with m.b.open_session(s.id) as w:
        w.append({"role": "assistant", "content": "B's line"})
    rb.push(s.id, taken)

    s.append({"role": "assistant", "content": "A's late line"})
    with pytest.raises(sessionkit.BusyError):
        ra.push(s.id, lease)
    with pytest.raises(sessionkit.BusyError):
        ra.renew(lease)
    assert rb.list()[0]["pushedBytes"] == len(log_bytes(m.b, s.id))
    rb.release(rb.renew(taken))
    s.close()


@needs_server
def test_bad_input_is_refused_with_what_was_wrong(machines: Machines) -> None:
    m = machines
    rb = remote(m, m.b, "ci")
    for bad in ["../escape", "/etc/passwd", "a/b", "", "blobs"]:
        with pytest.raises(sessionkit.InvalidInputError):
            rb.pull(bad)
        with pytest.raises(sessionkit.InvalidInputError):
            rb.acquire(bad)
    assert not (m.home_b / "escape").exists()
    with pytest.raises(sessionkit.NotFoundError):
        rb.pull("0190a4b0-0000-7000-8000-000000000000")
    with pytest.raises(sessionkit.InvalidInputError, match="lease"):
        rb.release({"sessionId": "x", "token": "not a number"})  # type: ignore[typeddict-item]
    with pytest.raises(sessionkit.InvalidInputError, match="lease time"):
        remote(m, m.b, "ci", ttl_ms=0)


def test_no_remote_and_an_unreachable_server_say_what_failed(
    store: sessionkit.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SESSIONKIT_REMOTE", raising=False)
    with pytest.raises(sessionkit.InvalidInputError, match="SESSIONKIT_REMOTE"):
        sessionkit.Remote(store)
    with pytest.raises(sessionkit.IoError, match=str(tmp_path)):
        sessionkit.Remote(store, url=f"host={tmp_path} port=1 dbname=x user=x")
    with pytest.raises(sessionkit.InvalidInputError, match="unknown field"):
        sessionkit._native.Remote(store._native, {"uri": "x"})


@needs_server
def test_a_background_push_keeps_up_with_the_writer_and_hands_the_lease_back(machines: Machines) -> None:
    m = machines
    ra, rb = remote(m, m.a, "laptop"), remote(m, m.b, "ci")
    with m.a.create_session() as s:
        with pytest.raises(sessionkit.InvalidInputError):
            ra.push_in_background(s.id, interval=0.001)
        with ra.push_in_background(s.id, interval=0.02) as pusher:
            # The writer appends, never waiting for the network, until the
            # pusher has pushed on its interval, unasked. (Its renewal of the
            # lease is the core's; core/tests/remote.rs waits for one.)
            deadline = time.monotonic() + 120
            n = 0
            while pusher.pushed == 0:
                assert time.monotonic() < deadline, "nothing pushed on the interval in 120 s"
                s.append({"role": "user", "content": f"turn {n}"})
                n += 1
                time.sleep(0.005)
            with pytest.raises(sessionkit.BusyError, match="laptop"):
                rb.acquire(s.id)
            assert pusher.pushed > 0
            report = pusher.flush()
            assert report["to"] == len(log_bytes(m.a, s.id)) == pusher.pushed
            s.append({"role": "assistant", "content": "done"})
        # Leaving the block pushed the rest and gave the lease back.
        with pytest.raises(sessionkit.InvalidInputError, match="stopped already"):
            pusher.stop()
        rb.pull(s.id)
        assert log_bytes(m.b, s.id) == log_bytes(m.a, s.id)
        rb.release(rb.acquire(s.id))


@needs_server
def test_remote_handles_close_iterate_and_never_block_on_offset(machines: Machines) -> None:
    m = machines
    with remote(m, m.a, "laptop") as ra, remote(m, m.b, "ci") as rb:
        assert m.project in repr(ra) and "laptop" in repr(ra)
        with m.a.create_session() as s:
            s.append({"role": "user", "content": "first"})
            ra.push(s.id)
            with rb.follow(s.id, 0) as follower:
                assert s.id in repr(follower)
                before = follower.next_lines(0)
                assert b"first" in before[-1]
                assert follower.offset == sum(map(len, before)) == len(log_bytes(m.a, s.id))
                # A waiting next_lines holds neither the GIL nor the offset:
                # the offset is read while it still waits.
                waiter = threading.Thread(target=follower.next_lines, args=(3,))
                waiter.start()
                time.sleep(0.3)
                offsets = [follower.offset for _ in range(100)]
                assert waiter.is_alive()
                waiter.join()
                assert offsets == [sum(map(len, before))] * 100
                with pytest.raises(sessionkit.InvalidInputError, match="start"):
                    rb.follow(s.id, -1)
                s.append({"role": "assistant", "content": "second"})
                with ra.push_in_background(s.id, interval=0.02) as pusher:
                    assert s.id in repr(pusher)
                    pusher.flush()
                got: list[bytes] = []
                for lines in follower:
                    got.extend(lines)
                    if b"second" in lines[-1]:
                        follower.close()
                assert follower.offset == len(log_bytes(m.a, s.id))
            assert follower.closed
            pusher.close()  # stopped already: closing again does nothing
            with pytest.raises(sessionkit.InvalidInputError, match="closed"):
                follower.next_lines(0)
    assert ra.closed and "closed" in repr(ra)
    ra.close()
    with pytest.raises(sessionkit.InvalidInputError, match="closed"):
        ra.list()
