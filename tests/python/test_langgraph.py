"""SessionkitSaver, the LangGraph checkpointer, call by call: what it returns
against LangGraph's own InMemorySaver given the same calls, the delta-channel
history, the async forms, ids, metadata, the serde, delete_thread's trash,
close(), and the message when langgraph-checkpoint is missing."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, RESUME, TASKS
from langgraph.types import Send

import sessionkit
from sessionkit.integrations.langgraph import SessionkitSaver

from conftest import run_python


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SessionkitSaver]:
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home", durability="never") as s:
        yield s


def checkpoint(
    cid: str, versions: ChannelVersions, values: dict[str, Any], seen: dict[str, Any] | None = None
) -> Checkpoint:
    return {
        "v": 4,
        "id": cid,
        "ts": "2026-05-01T12:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": seen or {},
        "updated_channels": sorted(values),
    }


def cfg(thread: str, ns: str = "", cid: str | None = None, **extra: Any) -> RunnableConfig:
    c: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if cid is not None:
        c["checkpoint_id"] = cid
    return {"configurable": {**c, **extra}}


def shape(t: CheckpointTuple | None) -> Any:
    """What a caller reads from a tuple (the configs' three keys)."""
    if t is None:
        return None

    def keys(c: RunnableConfig | None) -> Any:
        if c is None:
            return None
        conf = c["configurable"]
        return (conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"])

    return (keys(t.config), t.checkpoint, t.metadata, keys(t.parent_config), t.pending_writes)


def listed(s: BaseCheckpointSaver[Any], config: RunnableConfig | None, **kw: Any) -> Any:
    """What ``list`` answers, as far as LangGraph defines it: newest first in
    each thread's namespace; the order across namespaces and threads is the
    saver's own, and ``limit`` takes the first of that order."""
    got = [shape(t) for t in s.list(config, **kw)]
    if config is not None and "checkpoint_ns" in config["configurable"]:
        return got
    limit = kw.pop("limit", None)
    whole = [shape(t) for t in s.list(config, **kw)]
    # Each namespace's (thread's) checkpoints in their order, a stable sort by it.
    by_ns = sorted(whole, key=lambda t: t[0][:2])
    return (by_ns, len(got), got == whole[:limit]) if limit is not None else by_ns


def scenario(s: BaseCheckpointSaver[Any], seed: int) -> list[Any]:
    """The same calls, random but seeded, on a saver; everything it answered."""
    rng = random.Random(seed)
    seen: list[Any] = []
    heads: dict[tuple[str, str], str] = {}
    versions: dict[tuple[str, str], dict[str, int]] = {}
    n = 0
    for _ in range(60):
        thread, ns = rng.choice(["t1", "t2", "user@example.com"]), rng.choice(["", "child:1"])
        key = (thread, ns)
        op = rng.random()
        if op < 0.45 or key not in heads:
            n += 1
            cid = f"1ef{n:05d}-0000-6000-8000-000000000000"
            vs = dict(versions.get(key, {}))
            new: dict[str, int] = {}
            values: dict[str, Any] = {}
            for ch in ("messages", "count", "gone"):
                if rng.random() < 0.5:
                    new[ch] = vs.get(ch, 0) + 1
            vs.update(new)
            for ch in vs:
                if ch != "gone" or rng.random() < 0.5:  # "gone": sometimes empty
                    values[ch] = [ch, n] if ch == "messages" else n
            parent: str | None
            if rng.random() < 0.2:  # a time-travel: a branch from an older checkpoint
                parent = rng.choice([None, heads.get(key)])
            else:
                parent = heads.get(key)
            md: CheckpointMetadata = {"source": rng.choice(["input", "loop"]), "step": n, "parents": {}}
            out = s.put(
                cfg(thread, ns, parent, run_id=f"run-{n % 3}"),
                checkpoint(cid, {**vs}, values, {"node": {**vs}}), md, {**new},
            )
            seen.append(("put", out["configurable"]))
            heads[key], versions[key] = cid, vs
        elif op < 0.75:
            task = rng.choice(["task-a", "task-b"])
            path = rng.choice(["", "~a", "~b"])
            writes = [(rng.choice(["messages", "count", ERROR, INTERRUPT, RESUME]), rng.random())
                      for _ in range(rng.randint(1, 3))]
            s.put_writes(cfg(thread, ns, heads[key]), writes, task, path)
        else:
            seen.append(("get", shape(s.get_tuple(cfg(thread, ns)))))
            seen.append(("get id", shape(s.get_tuple(cfg(thread, ns, heads[key])))))
            seen.append(("get missing", shape(s.get_tuple(cfg(thread, ns, "nope")))))
    for thread in ("t1", "t2", "user@example.com", "none"):
        for which in (None, "", "child:1"):
            c: RunnableConfig = {"configurable": {"thread_id": thread}}
            if which is not None:
                c["configurable"]["checkpoint_ns"] = which
            seen.append(("list", listed(s, c)))
            seen.append(("list 2", listed(s, c, limit=2)))
            seen.append(("list src", listed(s, c, filter={"source": "loop"})))
            seen.append(("list md", listed(s, c, filter={"source": "input", "run_id": "run-1"})))
            mid = f"1ef{n // 2:05d}-0000-6000-8000-000000000000"
            seen.append(("before", listed(s, c, before=cfg(thread, "", mid), limit=3)))
            for key, head in heads.items():
                if key[0] == thread:
                    seen.append(("list id", listed(s, cfg(thread, key[1], head))))
                    seen.append(("delta", s.get_delta_channel_history(
                        config=cfg(thread, key[1], head), channels=["messages", "count", "gone"])))
    return seen


@pytest.mark.parametrize("seed", range(4))
def test_it_answers_as_the_in_memory_saver(saver: SessionkitSaver, seed: int) -> None:
    ours, theirs = scenario(saver, seed), scenario(InMemorySaver(), seed)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"call {i}"


def test_list_of_every_thread(saver: SessionkitSaver) -> None:
    memory = InMemorySaver()
    for s in (saver, memory):
        scenario(s, 7)
    # Across threads and namespaces the order is each thread's own, newest first.
    assert listed(saver, None) == listed(memory, None)
    assert listed(saver, None, limit=5) == listed(memory, None, limit=5)
    assert listed(saver, None, filter={"source": "loop"}) == listed(memory, None, filter={"source": "loop"})
    ours = [shape(t) for t in saver.list(None)]
    assert [shape(t) for t in saver.list(None, filter={"source": "loop"})] == [
        t for t in ours if t[2]["source"] == "loop"]


def test_the_async_forms_give_what_the_sync_ones_give(saver: SessionkitSaver, tmp_path: Path) -> None:
    async def main() -> None:
        c = cfg("async")
        stored = await saver.aput(c, checkpoint("1ef00001-0000-6000-8000-000000000000", {"a": 1}, {"a": "x"}),
                                  {"source": "input", "step": -1, "parents": {}, "run_id": "r1"}, {"a": 1})
        await saver.aput_writes(stored, [("a", "y"), (INTERRUPT, {"why": "ask"})], "task")
        assert shape(await saver.aget_tuple(c)) == shape(saver.get_tuple(c))
        assert [shape(t) async for t in saver.alist(c)] == [shape(t) for t in saver.list(c)]
        assert await saver.aget_delta_channel_history(config=stored, channels=["a"]) == (
            saver.get_delta_channel_history(config=stored, channels=["a"]))
        await saver.acopy_thread("async", "copy")
        assert [shape(t)[1] async for t in saver.alist(cfg("copy"))] == [shape(t)[1] for t in saver.list(c)]
        await saver.aprune(["copy"], strategy="delete")
        assert [t async for t in saver.alist(cfg("copy"))] == []
        await saver.adelete_for_runs(["r1"])
        assert await saver.aget_tuple(c) is None
        await saver.aput(c, checkpoint("1ef00002-0000-6000-8000-000000000000", {}, {}),
                         {"source": "input", "step": -1, "parents": {}}, {})
        await saver.adelete_thread("async")
        assert await saver.aget_tuple(c) is None

    asyncio.run(main())


def test_metadata_from_the_config_and_thread_ids(saver: SessionkitSaver, tmp_path: Path) -> None:
    c: RunnableConfig = {
        "configurable": {"thread_id": 42, "checkpoint_ns": "", "user": "ann", "__private": "x"},
        "metadata": {"tenant": "acme\x00", "n": 3, "nested": {"no": 1}},
    }
    md: CheckpointMetadata = {"source": "loop", "step": 1, "parents": {}}
    out = saver.put(c, checkpoint("1ef00001-0000-6000-8000-000000000000", {}, {}), md, {})
    assert out["configurable"]["thread_id"] == "42"  # any id, kept as its string
    got = saver.get_tuple(cfg("42"))
    assert got is not None
    assert got.metadata == {"source": "loop", "step": 1, "parents": {}, "user": "ann", "tenant": "acme", "n": 3}
    assert [t.config for t in saver.list(None, filter={"tenant": "acme", "n": 3})] == [got.config]
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as again:
        assert shape(again.get_tuple(cfg("42"))) == shape(got)


def test_values_and_writes_go_through_the_saver_serde(tmp_path: Path) -> None:
    class Counting(JsonPlusSerializer):
        def __init__(self) -> None:
            super().__init__()
            self.dumped: list[Any] = []

        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            self.dumped.append(obj)
            return super().dumps_typed(obj)

    serde = Counting()
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home", serde=serde) as s:
        assert s.serde is serde
        stored = s.put(cfg("t"), checkpoint("1ef00001-0000-6000-8000-000000000000", {"a": 1}, {"a": {1, 2}}),
                       {"source": "input", "step": -1, "parents": {}}, {"a": 1})
        s.put_writes(stored, [("a", b"\x00bytes")], "task")
        got = s.get_tuple(stored)
        assert got is not None
        assert got.checkpoint["channel_values"] == {"a": {1, 2}}  # a set: the serde's, not JSON's
        assert got.pending_writes == [("task", "a", b"\x00bytes")]
        assert serde.dumped == [{1, 2}, b"\x00bytes"]


def test_next_versions_increase(saver: SessionkitSaver) -> None:
    v: str | None = None
    seen = []
    for _ in range(12):
        v = saver.get_next_version(v, None)
        seen.append(v)
    assert all(isinstance(x, str) for x in seen) and sorted(seen) == seen and len(set(seen)) == 12
    assert [int(x.split(".")[0]) for x in seen] == list(range(1, 13))
    # From LangGraph's default integer versions too.
    assert int(saver.get_next_version(7, None).split(".")[0]) == 8  # type: ignore[arg-type]


def test_delete_thread_moves_it_to_the_trash(saver: SessionkitSaver) -> None:
    c = cfg("chat-9")
    saver.put(c, checkpoint("1ef00001-0000-6000-8000-000000000000", {"a": 1}, {"a": "kept"}),
              {"source": "input", "step": -1, "parents": {}}, {"a": 1})
    saver.delete_thread("chat-9")
    assert saver.get_tuple(c) is None and list(saver.list(c)) == []
    saver.delete_thread("chat-9")  # twice, or a thread never seen: nothing happens
    saver.delete_thread("never")
    (trashed,) = saver.store.list_trash()
    saver.store.restore_session(trashed["id"])
    back = saver.get_tuple(c)
    assert back is not None and back.checkpoint["channel_values"] == {"a": "kept"}


def test_close(tmp_path: Path) -> None:
    async def main() -> None:
        async with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as s:
            assert s.get_tuple(cfg("t")) is None
        s.close()  # twice: nothing happens
        with pytest.raises(sessionkit.InvalidInputError, match="closed"):
            s.get_tuple(cfg("t"))
        with pytest.raises(sessionkit.InvalidInputError, match="closed"):
            await s.aget_tuple(cfg("t"))
        with pytest.raises(sessionkit.InvalidInputError, match="closed"):
            [t async for t in s.alist(None)]

    asyncio.run(main())
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as s:
        pass
    with pytest.raises(sessionkit.InvalidInputError, match="closed"):
        s.put_writes(cfg("t", cid="x"), [], "task")


def test_without_langgraph_checkpoint_the_import_says_what_to_install() -> None:
    done = run_python(
        "import sys\n"
        "sys.modules['langgraph'] = None  # as if not installed\n"
        "import sessionkit.integrations.langgraph\n"
    )
    assert done.returncode == 1
    assert 'needs langgraph-checkpoint: pip install "sessionkit[langgraph]"' in done.stderr


def test_a_checkpoint_before_format_4_reads_its_sends_from_its_parents_writes(saver: SessionkitSaver) -> None:
    # LangGraph before checkpoint format 4 kept a step's Sends as writes of the
    # parent's tasks; a saver reads them back as the tasks channel.
    md: CheckpointMetadata = {"source": "loop", "step": 1, "parents": {}}
    ids = [f"1ef0000{i}-0000-6000-8000-000000000000" for i in range(1, 5)]
    old = {"v": 1}
    parent = saver.put(cfg("old"), {**checkpoint(ids[0], {"a": 2}, {"a": "x"}), **old}, md, {"a": 2})  # type: ignore[typeddict-item]
    saver.put_writes(parent, [(TASKS, Send("node", {"n": 1})), ("a", "y"), (TASKS, Send("node", {"n": 2}))],
                     "task-b", "~1")
    saver.put_writes(parent, [(TASKS, Send("other", 3))], "task-a", "~0")
    versions: ChannelVersions = {"a": 2, "b": 5}
    child = saver.put(cfg("old", cid=ids[0]), {**checkpoint(ids[1], versions, {}), **old}, md, {})  # type: ignore[typeddict-item]
    got = saver.get_tuple(child)
    assert got is not None
    # In the order the tasks ran: by task path, then task id, then index.
    assert got.checkpoint["channel_values"][TASKS] == [Send("other", 3), Send("node", {"n": 1}), Send("node", {"n": 2})]
    assert got.checkpoint["channel_versions"] == {"a": 2, "b": 5, TASKS: 5}
    # A checkpoint without versions takes the first version.
    bare = saver.put(cfg("old", cid=ids[0]), {**checkpoint(ids[2], {}, {}), **old}, md, {})  # type: ignore[typeddict-item]
    got = saver.get_tuple(bare)
    assert got is not None
    (first,) = got.checkpoint["channel_versions"].items()
    assert first[0] == TASKS and int(str(first[1]).split(".")[0]) == 1
    # The format of today keeps its sends itself: nothing is added.
    new = saver.put(cfg("old", cid=ids[0]), checkpoint(ids[3], versions, {}), md, {})
    got = saver.get_tuple(new)
    assert got is not None and TASKS not in got.checkpoint["channel_values"]
    assert got.checkpoint["channel_versions"] == versions
