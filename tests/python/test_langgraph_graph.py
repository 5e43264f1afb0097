"""Real LangGraph graphs on SessionkitSaver: an interrupt resumed by another
process, the state history, time travel (update_state on an old checkpoint,
then a run from there), two processes running two threads of one store at
once, a value that did not change stored once, and a DeltaChannel rebuilt
from the saver's history as LangGraph's own in-memory saver rebuilds it."""

from __future__ import annotations

import asyncio
import json
import operator
import os
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

import sessionkit
from sessionkit.integrations.langgraph import SessionkitSaver

import langgraph_chat
from langgraph_chat import config, loop_graph, review_graph, saver

HELPER = Path(langgraph_chat.__file__).resolve()


def drive(*args: str, timeout: float = 300) -> list[list[str]]:
    """Run langgraph_chat.py in a new process; its printed messages."""
    done = subprocess.run(
        [sys.executable, str(HELPER), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def texts(state: dict[str, Any]) -> list[list[str]]:
    return [[m.type, m.content] for m in state["messages"]]


def test_an_interrupt_is_resumed_by_a_new_process(tmp_path: Path) -> None:
    with saver(str(tmp_path)) as s:
        graph = review_graph(s)
        out = graph.invoke({"messages": [HumanMessage("deploy v2")]}, config("review"))
        (pending,) = out["__interrupt__"]
        assert pending.value == {"question": "approve 'echo: deploy v2'?"}
        state = graph.get_state(config("review"))
        assert state.next == ("ask_human",)
        assert texts(state.values) == [["human", "deploy v2"], ["ai", "echo: deploy v2"]]

    # The process that paused is gone; another one picks the thread up.
    final = drive("resume", str(tmp_path), "review", "yes, ship it")
    expected = [
        ["human", "deploy v2"], ["ai", "echo: deploy v2"],
        ["human", "yes, ship it"], ["ai", "echo: yes, ship it"],
    ]
    assert final == expected

    with saver(str(tmp_path)) as s:
        state = review_graph(s).get_state(config("review"))
        assert state.next == () and texts(state.values) == expected
        # The thread is a sessionkit session like any other.
        assert len(s.store.list_sessions()) == 1


def test_state_history_and_a_fork_from_an_old_checkpoint(tmp_path: Path) -> None:
    with saver(str(tmp_path)) as s:
        graph = review_graph(s)
        cfg = config("fork")
        graph.invoke({"messages": [HumanMessage("deploy v2")]}, cfg)
        graph.invoke(Command(resume="yes"), cfg)
        original = texts(graph.get_state(cfg).values)

        history = list(graph.get_state_history(cfg))
        # Newest first: the end, each node's step, the input.
        assert [h.next for h in history] == [
            (), ("answer_again",), ("ask_human",), ("answer",), ("__start__",),
        ]
        assert [h.metadata["step"] for h in history if h.metadata] == [3, 2, 1, 0, -1]
        assert texts(history[0].values) == original
        for older, newer in zip(history[1:], history):
            # Each checkpoint names the one before it.
            assert newer.parent_config is not None
            assert newer.parent_config["configurable"]["checkpoint_id"] == (
                older.config["configurable"]["checkpoint_id"])
            assert texts(newer.values)[: len(older.values.get("messages", []))] == (
                texts(older.values) if older.values else [])

        # Time travel: at the interrupt, the human answers "no" instead.
        at_interrupt = history[2]
        forked = graph.update_state(
            at_interrupt.config, {"messages": [HumanMessage("no, wait")]}, as_node="ask_human")
        assert forked["configurable"]["checkpoint_id"] != history[0].config["configurable"]["checkpoint_id"]
        out = graph.invoke(None, forked)
        assert texts(out) == [
            ["human", "deploy v2"], ["ai", "echo: deploy v2"],
            ["human", "no, wait"], ["ai", "echo: no, wait"],
        ]
        # The thread's latest state is the fork's; the original branch is intact.
        assert texts(graph.get_state(cfg).values) == texts(out)
        assert texts(graph.get_state(history[0].config).values) == original
        after = list(graph.get_state_history(cfg))
        assert len(after) == len(history) + 2  # the update, and the answer after it
        fork_point = graph.get_state(forked)
        assert fork_point.parent_config is not None
        assert fork_point.parent_config["configurable"]["checkpoint_id"] == (
            at_interrupt.config["configurable"]["checkpoint_id"])


def test_two_processes_run_two_threads_of_one_store_at_once(tmp_path: Path) -> None:
    go = tmp_path / "go"
    n = 60
    runs = {
        thread: subprocess.Popen(
            [sys.executable, str(HELPER), "loop", str(tmp_path), thread, str(n), str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for thread in ("alice", "bob")
    }
    go.touch()
    printed = {}
    for thread, p in runs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        printed[thread] = [json.loads(line) for line in out.splitlines()]

    with saver(str(tmp_path)) as s:
        for thread in ("alice", "bob"):
            expected = [[m.type, m.content] for m in (langgraph_chat.turn(i, thread) for i in range(n))]
            assert printed[thread] == expected
            graph = loop_graph(s, n, who=thread)
            assert texts(graph.get_state(config(thread)).values) == expected
            # The input, the start, then one checkpoint per step.
            assert len(list(graph.get_state_history(config(thread)))) == n + 2
        assert sorted(e.conversation_id or e.id for e in s.store.list_sessions()) == ["alice", "bob"]


class Document(TypedDict):
    document: str
    edits: int


def store_bytes(home: Path) -> int:
    return sum(f.stat().st_size for f in home.rglob("*") if f.is_file())


def test_a_value_that_did_not_change_is_stored_once(tmp_path: Path) -> None:
    # A large document in the state, and a counter that changes at every step.
    doc = os.urandom(200_000).hex()  # 400 kB that no compression shrinks
    steps = 20

    def edit(state: Document) -> dict[str, Any]:
        return {"edits": state["edits"] + 1}

    g = StateGraph(Document)
    g.add_node("edit", edit)
    g.add_edge(START, "edit")
    g.add_conditional_edges("edit", lambda s: "edit" if s["edits"] < steps else END, ["edit", END])
    home = tmp_path / "home"
    with SessionkitSaver(project=tmp_path, home=home) as s:
        graph = g.compile(checkpointer=s)
        graph.invoke({"document": doc, "edits": 0}, config("doc"))
        history = list(graph.get_state_history(config("doc")))
        assert len(history) == steps + 2
        # Every checkpoint but the input's (before any channel was written) has it.
        assert history[-1].values == {}
        assert all(h.values["document"] == doc for h in history[:-1])
    # 22 checkpoints hold the document; the store holds it once (and the rest
    # is small), where a saver storing it at every checkpoint would hold 22.
    assert store_bytes(home) < 1.5 * len(doc)


def batch_add(state: Sequence[str], writes: Sequence[Sequence[str]]) -> list[str]:
    return [*state, *(x for w in writes for x in w)]


class Delta(TypedDict):
    log: Annotated[list[str], DeltaChannel(batch_add, snapshot_frequency=3)]
    n: Annotated[int, operator.add]


def delta_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    def step(state: Delta) -> dict[str, Any]:
        return {"log": [f"line {state['n']}"], "n": 1}

    g = StateGraph(Delta)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < 10 else END, ["step", END])
    return g.compile(checkpointer=checkpointer)


def test_a_delta_channel_is_rebuilt_as_the_in_memory_saver_rebuilds_it(tmp_path: Path) -> None:
    # A DeltaChannel stores only its writes between snapshots: reading the state
    # back replays them through get_delta_channel_history.
    runs = {}
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as s:
        for name, cp in (("sessionkit", s), ("memory", InMemorySaver())):
            graph = delta_graph(cp)
            out = graph.invoke({"log": [], "n": 0}, config("delta"))
            runs[name] = (out, [h.values for h in graph.get_state_history(config("delta"))])
        assert runs["sessionkit"] == runs["memory"]
        assert runs["sessionkit"][0]["log"] == [f"line {i}" for i in range(10)]
    # Read back in a new saver: the rebuilt value comes from the store.
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as again:
        assert delta_graph(again).get_state(config("delta")).values == runs["memory"][0]


def test_sessionkit_sees_the_thread(tmp_path: Path) -> None:
    with saver(str(tmp_path)) as s:
        loop_graph(s, 3).invoke({"messages": []}, config("user@example.com/1"))
        (entry,) = s.store.list_sessions()
        assert (entry.conversation_id or entry.id) == "user@example.com/1"
        assert entry.id == sessionkit.conversation_session_id("user@example.com/1")


class Outer(TypedDict):
    log: Annotated[list[str], operator.add]


def nested_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    """A parent graph whose second node is a subgraph that asks a human."""

    def inner_ask(state: Outer) -> dict[str, Any]:
        return {"log": [f"inner got {interrupt('which way?')}"]}

    inner = StateGraph(Outer)
    inner.add_node("inner_prep", lambda s: {"log": ["inner prep"]})
    inner.add_node("inner_ask", inner_ask)
    inner.add_edge(START, "inner_prep")
    inner.add_edge("inner_prep", "inner_ask")
    outer = StateGraph(Outer)
    outer.add_node("first", lambda s: {"log": ["first"]})
    outer.add_node("sub", inner.compile())
    outer.add_node("last", lambda s: {"log": ["last"]})
    outer.add_edge(START, "first")
    outer.add_edge("first", "sub")
    outer.add_edge("sub", "last")
    return outer.compile(checkpointer=checkpointer)


def look(graph: Any, thread: str) -> list[Any]:
    """A thread as a user inspects it: its state with the subgraph's, its history."""
    state = graph.get_state(config(thread), subgraphs=True)
    inner = [(t.name, t.state.values if t.state else None) for t in state.tasks]
    return [
        (state.values, state.next, inner),
        [(h.values, h.next, h.metadata and h.metadata["step"])
         for h in graph.get_state_history(config(thread))],
    ]


def plain(out: dict[str, Any]) -> dict[str, Any]:
    """A run's output, with each interrupt as its value (its id is random)."""
    return {k: [i.value for i in v] if k == "__interrupt__" else v for k, v in out.items()}


def story(checkpointer: BaseCheckpointSaver[Any]) -> list[Any]:
    """A subgraph's interrupt and its resume, then a fork from before the
    subgraph, interrupted and resumed too: what a user sees at each point."""
    graph = nested_graph(checkpointer)
    seen: list[Any] = [plain(graph.invoke({"log": ["start"]}, config("nested")))]
    seen += look(graph, "nested")
    seen.append(plain(graph.invoke(Command(resume="left"), config("nested"))))
    seen += look(graph, "nested")
    history = list(graph.get_state_history(config("nested")))
    at_first = next(h for h in history if h.next == ("sub",))
    forked = graph.update_state(at_first.config, {"log": ["edited"]})
    seen.append(plain(graph.invoke(None, forked)))
    seen.append(plain(graph.invoke(Command(resume="right"), config("nested"))))
    seen += look(graph, "nested")
    return seen


def test_a_subgraph_interrupt_and_a_fork_as_the_in_memory_saver(tmp_path: Path) -> None:
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as s:
        ours = story(s)
    theirs = story(InMemorySaver())
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"step {i}"
    # What the story did, as a user reads it.
    assert ours[0] == {"log": ["start", "first"], "__interrupt__": ["which way?"]}
    # The subgraph's own state, read from its namespace of the thread.
    assert ours[1] == ({"log": ["start", "first"]}, ("sub",), [("sub", {"log": ["start", "first", "inner prep"]})])
    assert ours[3]["log"][-2:] == ["inner got left", "last"]
    final = ours[-2][0]["log"]
    assert final[:3] == ["start", "first", "edited"] and final[-3:] == ["inner prep", "inner got right", "last"]


def test_a_copied_thread_goes_on_alone_and_a_pruned_one_keeps_its_state(tmp_path: Path) -> None:
    with SessionkitSaver(project=tmp_path, home=tmp_path / "home") as s:
        graph = nested_graph(s)
        graph.invoke({"log": ["start"]}, config("original"))
        s.copy_thread("original", "copy")
        assert look(graph, "copy") == look(graph, "original")
        # Each goes on alone: the copy is resumed one way, the original another.
        copy_out = graph.invoke(Command(resume="left"), config("copy"))
        original_out = graph.invoke(Command(resume="right"), config("original"))
        assert copy_out["log"][-2:] == ["inner got left", "last"]
        assert original_out["log"][-2:] == ["inner got right", "last"]
        full = look(graph, "original")
        s.prune(["original"], strategy="keep_latest")
        state, history = look(graph, "original")
        assert state == full[0] and history == full[1][:1]
        assert len(look(graph, "copy")[1]) == len(full[1])  # the copy keeps its history


def test_one_saver_serves_many_threads_at_once_from_an_event_loop(tmp_path: Path) -> None:
    # The async path: ainvoke calls the saver's a* methods, off the event loop.
    async def main() -> list[Any]:
        with saver(str(tmp_path)) as s:
            runs = [loop_graph(s, 12, who=f"t{i}").ainvoke({"messages": []}, config(f"t{i}"))
                    for i in range(8)]
            outs = await asyncio.gather(*runs)
            states = [await loop_graph(s, 12).aget_state(config(f"t{i}")) for i in range(8)]
            return [(texts(o), texts(st.values)) for o, st in zip(outs, states)]

    for i, (out, state) in enumerate(asyncio.run(main())):
        expected = [[m.type, m.content] for m in (langgraph_chat.turn(j, f"t{i}") for j in range(12))]
        assert out == state == expected


PG_URL = os.environ.get("SESSIONKIT_TEST_PG")


@pytest.mark.pg
def test_a_thread_pushed_from_one_machine_is_resumed_on_another(tmp_path: Path) -> None:
    # Two homes stand for two machines sharing through one PostgreSQL server.
    project = f"py-lg-{uuid.uuid4()}"
    a, b = (SessionkitSaver(project=tmp_path, home=tmp_path / name) for name in ("a", "b"))
    thread = "review/42"
    session_id = sessionkit.conversation_session_id(thread)
    with a, b:
        review_graph(a).invoke({"messages": [HumanMessage("deploy v2")]}, config(thread))
        sessionkit.Remote(a.store, url=PG_URL, project=project, holder="laptop").push(session_id)
        sessionkit.Remote(b.store, url=PG_URL, project=project, holder="ci").pull(session_id)
        graph = review_graph(b)
        assert graph.get_state(config(thread)).next == ("ask_human",)
        out = graph.invoke(Command(resume="yes"), config(thread))
        assert texts(out)[-2:] == [["human", "yes"], ["ai", "echo: yes"]]
        assert len(list(graph.get_state_history(config(thread)))) == len(
            list(review_graph(a).get_state_history(config(thread)))) + 2
