#!/usr/bin/env python3
"""LangGraph checkpointers on one long chat thread: SessionkitSaver against
langgraph-checkpoint-sqlite's SqliteSaver and langgraph-checkpoint-postgres's
PostgresSaver.

The workload: a chat-shaped graph of ``--steps`` steps (200), each step
appending one message of ~300 bytes of English-like text to the thread's
message list (``add_messages``), run with ``durability="sync"`` (each
checkpoint is saved before the next step starts, so each ``put`` is timed
alone). Each saver runs it on a fresh store; then, on the finished thread:

- bytes on disk: the sessionkit home (every file), the SQLite database (its
  files, after the last connection closed), the PostgreSQL tables
  (``pg_total_relation_size``, indexes and TOAST included);
- median latency of ``put`` (the graph's own calls, one per step),
  ``get_tuple`` (the latest checkpoint, and one picked at random by id) and
  ``list`` (a page of 10, and the whole history), and how much of each went
  to the serde (LangGraph's ``JsonPlusSerializer``, the same for all).

SessionkitSaver runs twice: with the store's default durability (``onSync``:
safe from a killed process at each checkpoint, no ``fsync``) and with
``always`` (an ``fsync`` per checkpoint, as SQLite's default
``synchronous=FULL`` does in WAL mode).

PostgreSQL is measured when ``SESSIONKIT_TEST_PG`` holds a connection string
(``tests/pg/server.sh`` starts a throw-away server); its tables go in a schema
of their own, dropped at the end. Without it the script says so and skips it.

Not a test: it asserts nothing. Run from the repository root, with the package
and the savers installed (``bash tests/python/run.sh`` makes such a venv):

    python bindings/python/bench/langgraph_bench.py [--steps 200] [--rounds 5]
    SESSIONKIT_TEST_PG="$(bash tests/pg/server.sh url "$dir")" \\
        python bindings/python/bench/langgraph_bench.py
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from sessionkit.integrations.langgraph import SessionkitSaver

WORDS = (
    "the of and to in is that it for on with as was at by this be are from or have an they "
    "which one you had not but what all were when we there can been has more if will would "
    "about their so up out into time could than other then its only over also after new "
    "file test build error function return value change update check run config path line "
    "module import class type string list thread step graph state message model tool call "
    "result output input agent user assistant review deploy branch commit merge fix issue"
).split()


def text(i: int, size: int = 300) -> str:
    """~``size`` bytes of English-like words, different for every ``i``."""
    rng = random.Random(i)
    words = [f"[{i}]"]
    while sum(len(w) + 1 for w in words) < size:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:size]


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def chat_graph(saver: BaseCheckpointSaver[Any], steps: int) -> Any:
    def step(state: Chat) -> dict[str, Any]:
        i = len(state["messages"])
        return {"messages": [AIMessage(text(i)) if i % 2 else HumanMessage(text(i))]}

    g = StateGraph(Chat)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if len(s["messages"]) < steps else END, ["step", END])
    return g.compile(checkpointer=saver)


class TimedSerde(JsonPlusSerializer):
    """LangGraph's serializer, adding up the time spent in it."""

    def __init__(self) -> None:
        super().__init__()
        self.spent = 0.0

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        t = time.perf_counter()
        try:
            return super().dumps_typed(obj)
        finally:
            self.spent += time.perf_counter() - t

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        t = time.perf_counter()
        try:
            return super().loads_typed(data)
        finally:
            self.spent += time.perf_counter() - t


Samples = dict[str, list[tuple[float, float]]]  # call -> [(total s, serde s)]


def timed(serde: TimedSerde, samples: Samples, name: str, call: Callable[[], Any]) -> Any:
    before, t = serde.spent, time.perf_counter()
    out = call()
    samples[name].append((time.perf_counter() - t, serde.spent - before))
    return out


def measure(saver: BaseCheckpointSaver[Any], serde: TimedSerde, steps: int, rounds: int) -> tuple[Samples, float]:
    samples: Samples = defaultdict(list)
    put = saver.put

    def timed_put(*args: Any, **kwargs: Any) -> Any:
        return timed(serde, samples, "put", lambda: put(*args, **kwargs))

    saver.put = timed_put  # type: ignore[method-assign]
    config: RunnableConfig = {"configurable": {"thread_id": "chat"}, "recursion_limit": steps + 10}
    t = time.perf_counter()
    out = chat_graph(saver, steps).invoke({"messages": []}, config, durability="sync")
    run = time.perf_counter() - t
    saver.put = put  # type: ignore[method-assign]
    assert len(out["messages"]) == steps
    ids = [c.config["configurable"]["checkpoint_id"] for c in saver.list(config)]
    assert len(ids) == steps + 2, len(ids)  # the input, the start, each step
    rng = random.Random(0)
    for _ in range(rounds):
        for _ in range(10):  # each round: 10 of each small call, one whole history
            timed(serde, samples, "get_tuple latest", lambda: saver.get_tuple(config))
            old: RunnableConfig = {"configurable": {"thread_id": "chat", "checkpoint_ns": "",
                                                    "checkpoint_id": rng.choice(ids)}}
            timed(serde, samples, "get_tuple by id", lambda: saver.get_tuple(old))
            timed(serde, samples, "list limit=10", lambda: list(saver.list(config, limit=10)))
        timed(serde, samples, "list all", lambda: list(saver.list(config)))
    return samples, run


def files_bytes(paths: list[Path]) -> tuple[int, int]:
    """Apparent bytes and bytes allocated on disk (du)."""
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return sum(f.stat().st_size for f in files), sum(f.stat().st_blocks * 512 for f in files)


@contextmanager
def sessionkit_saver(tmp: Path, durability: str, serde: TimedSerde) -> Iterator[tuple[Any, Callable[[], str]]]:
    home = tmp / f"home-{durability}"
    with SessionkitSaver(project=tmp, home=home, durability=durability, serde=serde) as s:
        yield s, lambda: "{:,} B apparent, {:,} B on disk (the home)".format(*files_bytes([home]))


@contextmanager
def sqlite_saver(tmp: Path, serde: TimedSerde) -> Iterator[tuple[Any, Callable[[], str]]]:
    db = tmp / "checkpoints.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)
    sync = conn.execute("PRAGMA synchronous").fetchone()[0]

    def size() -> str:
        conn.close()  # the last connection checkpoints the WAL into the database
        files = sorted(tmp.glob("checkpoints.sqlite*"))
        a, d = files_bytes(files)
        return f"{a:,} B apparent, {d:,} B on disk ({', '.join(f.name for f in files)}; synchronous={sync})"

    try:
        yield SqliteSaver(conn, serde=serde), size
    finally:
        conn.close()


@contextmanager
def postgres_saver(dsn: str, serde: TimedSerde) -> Iterator[tuple[Any, Callable[[], str]]]:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.conninfo import make_conninfo

    schema = f"sessionkit_lgbench_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            with PostgresSaver.from_conn_string(make_conninfo(dsn, options=f"-c search_path={schema}")) as s:
                s.serde = serde
                s.setup()

                def size() -> str:
                    row = admin.execute(
                        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                        (schema,),
                    ).fetchone()
                    return f"{int(row[0]) if row else 0:,} B (pg_total_relation_size of its tables)"

                yield s, size
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1e3:.3f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    dsn = os.environ.get("SESSIONKIT_TEST_PG")
    tmp = Path(tempfile.mkdtemp(prefix="sessionkit-lgbench-"))
    savers: list[tuple[str, Callable[[TimedSerde], Any]]] = [
        ("SessionkitSaver (durability onSync, the default)", lambda d: sessionkit_saver(tmp, "onSync", d)),
        ("SessionkitSaver (durability always)", lambda d: sessionkit_saver(tmp, "always", d)),
        ("SqliteSaver", lambda d: sqlite_saver(tmp, d)),
    ]
    if dsn:
        savers.append(("PostgresSaver", lambda d: postgres_saver(dsn, d)))
    print(f"{args.steps} steps, one ~300-byte message each; the message list ends at "
          f"{sum(len(text(i)) for i in range(args.steps)):,} bytes of text")
    if not dsn:
        print("PostgresSaver: skipped, SESSIONKIT_TEST_PG is not set "
              "(tests/pg/server.sh starts a server and prints its url)")
    # A warm-up run, so that the first saver measured does not pay for the
    # first calls into LangGraph, langchain-core and msgpack.
    warm = TimedSerde()
    measure(InMemorySaver(serde=warm), warm, args.steps, 1)
    try:
        for name, make in savers:
            serde = TimedSerde()
            with make(serde) as (saver, size):
                samples, run = measure(saver, serde, args.steps, args.rounds)
                on_disk = size()
            print(f"\n{name}")
            print(f"  bytes: {on_disk}")
            print(f"  the run: {run:.2f} s")
            for call, xs in samples.items():
                total = [x for x, _ in xs]
                serde_part = [s for _, s in xs]
                print(f"  {call:17} median {ms(total)}  (serde {ms(serde_part)}, {len(xs)} calls)")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
