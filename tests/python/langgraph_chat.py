"""The LangGraph graphs the tests drive on SessionkitSaver, and a command line
to drive them from another process.

- ``review_graph``: a chat that answers, asks a human (``interrupt``) and
  answers again: ``START -> answer -> ask_human -> answer_again -> END``.
- ``loop_graph``: a chat of ``n`` turns, one message per step (the node loops
  on itself): the shape of a long agent thread.

    python langgraph_chat.py resume ROOT THREAD ANSWER   # resume the review graph
    python langgraph_chat.py loop ROOT THREAD N GO       # run the loop graph once GO exists

Each prints the thread's final messages as JSON lines ``[type, content]``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from sessionkit.integrations.langgraph import SessionkitSaver


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def last_text(state: Chat) -> str:
    return str(state["messages"][-1].content)


def answer(state: Chat) -> dict[str, Any]:
    return {"messages": [AIMessage(f"echo: {last_text(state)}")]}


def ask_human(state: Chat) -> dict[str, Any]:
    reply = interrupt({"question": f"approve {last_text(state)!r}?"})
    return {"messages": [HumanMessage(str(reply))]}


def review_graph(saver: SessionkitSaver) -> CompiledStateGraph[Chat, None, Chat, Chat]:
    g = StateGraph(Chat)
    g.add_node("answer", answer)
    g.add_node("ask_human", ask_human)
    g.add_node("answer_again", answer)
    g.add_edge(START, "answer")
    g.add_edge("answer", "ask_human")
    g.add_edge("ask_human", "answer_again")
    g.add_edge("answer_again", END)
    return g.compile(checkpointer=saver)


def turn(i: int, who: str) -> AnyMessage:
    text = f"{who} turn {i}: " + "lorem ipsum dolor sit amet " * 10
    return AIMessage(text) if i % 2 else HumanMessage(text)


def loop_graph(
    saver: SessionkitSaver, n: int, who: str = "chat"
) -> CompiledStateGraph[Chat, None, Chat, Chat]:
    def step(state: Chat) -> dict[str, Any]:
        return {"messages": [turn(len(state["messages"]), who)]}

    def more(state: Chat) -> str:
        return "step" if len(state["messages"]) < n else END

    g = StateGraph(Chat)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", more, ["step", END])
    return g.compile(checkpointer=saver)


def config(thread: str, steps: int = 1000) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}, "recursion_limit": steps}


def saver(root: str) -> SessionkitSaver:
    return SessionkitSaver(project=root, home=Path(root) / "home")


def dump(state: dict[str, Any]) -> None:
    for m in state["messages"]:
        print(json.dumps([m.type, m.content]))


def main(argv: list[str]) -> None:
    role, root, thread, *rest = argv
    with saver(root) as s:
        if role == "resume":
            (reply,) = rest
            dump(review_graph(s).invoke(Command(resume=reply), config(thread)))
        elif role == "loop":
            n, go = int(rest[0]), Path(rest[1])
            # Both processes start their runs together.
            while not go.exists():
                time.sleep(0.01)
            dump(loop_graph(s, n, who=thread).invoke({"messages": []}, config(thread)))
        else:
            raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
