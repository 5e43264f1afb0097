"""The OpenAI Agents SDK adapter, driven by the SDK itself, offline: the
runner with the SDK's ScriptedModel, a function tool, new processes and a
SIGKILL in the middle of a run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.memory import Session as SdkSession
from agents.memory.session_settings import SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call

import sessionkit
from sessionkit.integrations.openai_agents import SessionkitSession

from conftest import run_python

set_tracing_disabled(True)

ITEMS: list[Any] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "function_call", "call_id": "c1", "name": "weather",
     "arguments": '{"city":"Paris"}', "id": "fc_1", "status": "completed"},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Sunny.", "annotations": [], "logprobs": []}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hm"}],
     "encrypted_content": None},
    {"role": "developer", "content": [{"type": "input_text", "text": "be brief"}], "x-extra": {"k": [1.5, None]}},
]


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def adapter(tmp_path: Path, session_id: str | None = "chat-1", **kw: Any) -> SessionkitSession:
    return SessionkitSession(session_id, project=tmp_path, home=tmp_path / "home", **kw)


def test_it_is_an_sdk_session(tmp_path: Path) -> None:
    with adapter(tmp_path) as s:
        assert isinstance(s, SdkSession)
        assert s.session_id == "chat-1" and s.session_settings == SessionSettings()
    with adapter(tmp_path, None) as fresh:
        assert fresh.session_id != "chat-1"


def test_items_come_back_as_the_sdk_sqlite_session_gives_them(tmp_path: Path) -> None:
    async def main() -> None:
        ours = adapter(tmp_path)
        theirs = SQLiteSession("chat-1", str(tmp_path / "sdk.db"))
        for s in (ours, theirs):
            await s.add_items(ITEMS[:2])
            await s.add_items(ITEMS[2:])
        assert await ours.get_items() == await theirs.get_items() == ITEMS
        for limit in (0, 1, 3, 100):
            assert await ours.get_items(limit) == await theirs.get_items(limit)
        assert await ours.pop_item() == await theirs.pop_item() == ITEMS[-1]
        assert await ours.get_items() == ITEMS[:-1]
        await ours.clear_session()
        await theirs.clear_session()
        assert await ours.get_items() == await theirs.get_items() == []
        assert await ours.pop_item() is None
        ours.close()
        theirs.close()

    asyncio.run(main())


def test_pop_and_clear_rewrite_nothing_and_stay_recoverable(tmp_path: Path) -> None:
    async def main() -> None:
        with adapter(tmp_path) as s:
            await s.add_items(ITEMS[:4])
            log = Path(await s.store.log_path(s.session_id))
            size = log.stat().st_size
            before = log.read_bytes()
            await s.pop_item()
            await s.clear_session()
            assert log.read_bytes().startswith(before) and log.stat().st_size > size
            view = await s.session.read()
            assert (await view.info())["messageCount"] == 4
            leaf = max(await view.branches(), key=lambda b: b["length"])["leafId"]
            await s.session.resume_at(leaf)
            assert await s.get_items() == ITEMS[:4]
            await s.erase()
            assert await s.get_items() == []
            assert (await (await s.session.read()).info())["messageCount"] == 0
            assert await s.store.session_ids() == ["chat-1"]

    asyncio.run(main())


def test_session_settings_as_the_sdk_sqlite_session_takes_them(tmp_path: Path) -> None:
    for given in (None, SessionSettings(limit=3), {"limit": 0}, {}):
        ours = adapter(tmp_path, session_settings=given)
        theirs = SQLiteSession("x", session_settings=given)
        assert type(ours.session_settings) is type(theirs.session_settings) is SessionSettings
        assert ours.session_settings == theirs.session_settings
        ours.close()
        theirs.close()
    # An unknown key is refused before anything is opened or created.
    for bad in ({"limitt": 1}, {"limit": 1, "other": 2}):
        with pytest.raises(TypeError) as theirs_err:
            SQLiteSession("x", session_settings=bad)
        with pytest.raises(TypeError) as ours_err:
            adapter(tmp_path, "never-created", session_settings=bad)
        assert str(ours_err.value) == str(theirs_err.value)
    assert "never-created" not in sessionkit.Store(tmp_path, home=tmp_path / "home").session_ids()


def test_get_items_limit_as_the_sdk_sqlite_session(tmp_path: Path) -> None:
    async def main() -> None:
        for settings in (None, SessionSettings(limit=2), SessionSettings(limit=0),
                         SessionSettings(limit=-1)):
            ours = adapter(tmp_path, f"limits-{settings and settings.limit}",
                           session_settings=settings)
            theirs = SQLiteSession("limits", session_settings=settings)
            for s in (ours, theirs):
                await s.add_items(ITEMS[:4])
            for limit in (None, -5, -1, 0, 1, 2, 4, 5, 1000):
                got = await ours.get_items(limit)
                assert got == await theirs.get_items(limit), (settings, limit)
            ours.close()
            theirs.close()
        # The cases spelled out: oldest first; 0 none; negative all.
        with adapter(tmp_path, "spelled-out") as s:
            await s.add_items(ITEMS[:4])
            assert await s.get_items(2) == ITEMS[2:4]
            assert await s.get_items(0) == []
            assert await s.get_items(-1) == ITEMS[:4]

    asyncio.run(main())


def test_close_twice_async_with_and_a_closed_session(tmp_path: Path) -> None:
    async def main() -> None:
        async with adapter(tmp_path) as s:
            await s.add_items(ITEMS[:1])
        assert s.closed and s.session.closed
        s.close()  # twice: nothing happens
        await s.__aexit__(None, None, None)
        await s.aclose()
        # Closed is closed, even for nothing to add (as SQLiteSession's add_items([])).
        calls: list[Callable[[], Awaitable[object]]] = [
            lambda: s.add_items([]), lambda: s.add_items(ITEMS[:1]), s.get_items, s.pop_item,
        ]
        for call in calls:
            with pytest.raises(sessionkit.InvalidInputError, match="closed"):
                await call()
        # The lock went with the close: a new adapter opens the session.
        async with adapter(tmp_path) as again:
            assert await again.get_items() == ITEMS[:1]
        # async with closes on an exception too, and lets it through.
        with pytest.raises(KeyError):
            async with adapter(tmp_path) as failing:
                await failing.get_items()
                raise KeyError("boom")
        assert failing.closed and failing.session.closed
        # Closed before any use: nothing is opened, and every call says closed.
        unused = adapter(tmp_path)
        await unused.aclose()
        with pytest.raises(sessionkit.InvalidInputError, match="closed"):
            await unused.get_items()
        with pytest.raises(sessionkit.InvalidInputError, match="not open yet"):
            unused.session

    asyncio.run(main())


def test_one_adapter_serves_several_threads_and_event_loops(tmp_path: Path) -> None:
    # The SDK's run_sync and its tests use one session from new event loops in
    # other threads.
    with adapter(tmp_path) as s:
        for i in range(3):
            asyncio.run(s.add_items([{"role": "user", "content": f"loop {i}"}]))

        def in_a_thread(i: int) -> None:
            asyncio.run(s.add_items([{"role": "user", "content": f"thread {i}"}]))

        threads = [threading.Thread(target=in_a_thread, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        contents = [cast(dict[str, Any], i)["content"] for i in asyncio.run(s.get_items())]
        assert contents[:3] == ["loop 0", "loop 1", "loop 2"]
        assert sorted(contents[3:]) == [f"thread {i}" for i in range(4)]


def test_session_settings_limit_and_the_model_view(tmp_path: Path) -> None:
    async def main() -> None:
        with adapter(tmp_path, session_settings=SessionSettings(limit=2)) as s:
            await s.add_items(ITEMS[:4])
            assert await s.get_items() == ITEMS[2:4]
            assert await s.get_items(3) == ITEMS[1:4]
        # The model view never hands out an output without its call.
        with adapter(tmp_path, model_view=True) as m:
            assert await m.get_items(2) == ITEMS[3:4]
            assert await m.get_items(3) == ITEMS[1:4]
            await m.add_items([{"type": "function_call", "call_id": "c2", "name": "weather",
                                "arguments": "{}"}])
            last = cast(dict[str, Any], (await m.get_items())[-1])
            assert (last["type"], last["call_id"]) == ("function_call_output", "c2")
            assert "interrupted" in last["output"]

    asyncio.run(main())


def test_sessions_show_in_the_index_and_can_be_compacted_forked_rewound(tmp_path: Path) -> None:
    async def main() -> None:
        with adapter(tmp_path, model_view=True) as s:
            await s.add_items(ITEMS[:4])
            await s.add_items([{"role": "user", "content": "And tomorrow?"},
                               {"role": "assistant", "content": "Rain."}])
            entry = await s.store.session_entry("chat-1")
            assert entry.title == "Weather in Paris?" and entry.message_count == 6
            fork = await s.fork(title="what if")
            assert await fork.get_items() == await s.get_items()
            await fork.add_items([{"role": "user", "content": "only in the fork"}])
            assert len(await s.get_items()) == 6
            fork.close()
            plan = await s.session.select_compaction(1, keep_last_turns=1, summary_tokens=1)
            assert plan is not None
            await s.session.apply_compaction(plan["replaces"], "Asked about the weather in Paris.")
            items = await s.get_items()
            assert items[0] == {"role": "system", "content": "Asked about the weather in Paris."}
            assert items[-2:] == [{"role": "user", "content": "And tomorrow?"},
                                  {"role": "assistant", "content": "Rain."}]
            await s.rewind(1)
            assert await s.get_items() == ITEMS[:4]

    asyncio.run(main())


def test_bad_items_raise_and_write_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        with adapter(tmp_path) as s:
            await s.add_items(ITEMS[:1])
            for bad in ([ITEMS[0], "text"], [{"content": float("nan")}], "not a list"):
                with pytest.raises(sessionkit.InvalidInputError):
                    await s.add_items(bad)  # type: ignore[arg-type]
            assert await s.get_items() == ITEMS[:1]

    asyncio.run(main())


def scripted(turns: int) -> ScriptedModel:
    """Per turn: a call of the weather tool, then an answer."""
    steps: list[Any] = []
    for t in range(turns):
        steps.append([function_call("weather", {"city": f"City{t}"}, call_id=f"call_{t}")])
        steps.append([assistant_message(f"Answer {t}.", item_id=f"msg_{t}")])
    return ScriptedModel(steps)


def test_the_runner_keeps_history_across_turns_and_processes(tmp_path: Path) -> None:
    async def first_two_turns() -> list[Any]:
        model = scripted(2)
        agent = Agent(name="Assistant", model=model, tools=[weather])
        with adapter(tmp_path) as s:
            r = await Runner.run(agent, "Weather in City0?", session=s)
            assert r.final_output == "Answer 0."
            r = await Runner.run(agent, "Weather in City1?", session=s)
            assert r.final_output == "Answer 1."
            model.assert_complete()
            call = model.last_call
            assert call is not None
            # The second turn's last model call saw the whole first turn.
            assert [i.get("call_id") for i in call.input if isinstance(i, dict)].count("call_0") == 2
            return await s.get_items()

    history = asyncio.run(first_two_turns())
    assert len(history) == 8
    assert history[2] == {"type": "function_call_output", "call_id": "call_0", "output": "sunny in City0"}

    code = textwrap.dedent(
        """
        import asyncio, json, sys
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.testing import ScriptedModel, assistant_message
        from sessionkit.integrations.openai_agents import SessionkitSession
        set_tracing_disabled(True)

        async def main():
            model = ScriptedModel([[assistant_message("You asked about two cities.")]])
            s = SessionkitSession("chat-1", project=sys.argv[1], home=sys.argv[2])
            r = await Runner.run(Agent(name="Assistant", model=model), "What did I ask?", session=s)
            print(json.dumps({"out": r.final_output, "seen": model.last_call.input}))
            s.close()

        asyncio.run(main())
        """
    )
    r = run_python(code, str(tmp_path), str(tmp_path / "home"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["out"] == "You asked about two cities."
    assert got["seen"][:-1] == history
    assert got["seen"][-1]["content"] == "What did I ask?"


KILLED_RUN = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call
    from sessionkit.integrations.openai_agents import SessionkitSession
    set_tracing_disabled(True)

    class Reporting(SessionkitSession):
        async def add_items(self, items):
            await super().add_items(items)
            # Acknowledged: durable from here on.
            print(json.dumps(items), flush=True)

    @function_tool
    def slow(n: int) -> str:
        \"\"\"A tool that hangs on its third call.\"\"\"
        if n == 2:
            print("IN_TOOL", flush=True)
            time.sleep(600)
        return f"done {n}"

    async def main():
        steps = []
        for t in range(3):
            steps.append([function_call("slow", {"n": t}, call_id=f"k{t}")])
            steps.append([assistant_message(f"turn {t}", item_id=f"m{t}")])
        agent = Agent(name="A", model=ScriptedModel(steps), tools=[slow])
        s = Reporting("chat-kill", project=sys.argv[1], home=sys.argv[2])
        for t in range(3):
            await Runner.run(agent, f"go {t}", session=s)

    asyncio.run(main())
    """
)


def test_a_run_killed_with_sigkill_loses_no_acknowledged_item(tmp_path: Path) -> None:
    acknowledged: list[Any] = []
    with subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(tmp_path), str(tmp_path / "home")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            for line in child.stdout:
                if line.strip() == "IN_TOOL":
                    break
                acknowledged.extend(json.loads(line))
            else:
                pytest.fail("the child ended before its tool hung")
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.kill()
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    # Two whole turns and the third's input, at least.
    assert len(acknowledged) >= 9, acknowledged

    async def reopen() -> list[Any]:
        with adapter(tmp_path, "chat-kill") as s:  # the lock died with the child
            return await s.get_items()

    assert asyncio.run(reopen())[: len(acknowledged)] == acknowledged


def test_the_constructor_does_no_io(tmp_path: Path) -> None:
    project = tmp_path / "not-yet"
    home = tmp_path / "home-not-yet"

    async def main() -> None:
        for session_id in ("chat-1", None):
            s = SessionkitSession(session_id, project=project, home=home)
            async with s:
                assert not project.exists() and not home.exists()
                assert "not opened yet" in repr(s)
        project.mkdir()
        s = SessionkitSession("chat-1", project=project, home=home)
        assert not home.exists()
        # The first call opens the store and the session, on a thread.
        assert await s.get_items() == []
        assert home.is_dir()
        await s.add_items(ITEMS[:1])
        await s.aclose()
        # A fresh id is a valid session id of the core, kept as it is.
        async with SessionkitSession(None, project=project, home=home) as fresh:
            await fresh.add_items(ITEMS[:1])
            assert sessionkit.conversation_session_id(fresh.session_id) == fresh.session_id
            ids = await fresh.store.session_ids()
        assert sorted(ids) == sorted(["chat-1", fresh.session_id])

    asyncio.run(main())
