"""The Python runner of the scenario protocol (docs/FORMAT.md §21), through the
public API of the ``sessionkit`` package only, but for the checkpoint ops: those
go to the native Store's ``checkpoint_*`` methods, which the LangGraph saver
calls. Run by tests/scenarios/run.py:

    python tests/scenarios/runners/runner.py
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from typing import Any

import sessionkit

# Store option keys of the protocol (camelCase, as FORMAT §21) -> Store keywords.
STORE_KEYWORDS = {
    "home": "home",
    "durability": "durability",
    "maxSessions": "max_sessions",
    "blobThreshold": "blob_threshold",
    "maxRecordBytes": "max_record_bytes",
    "deterministic": "deterministic",
}


class Unsupported(Exception):
    pass


class Runner:
    def __init__(self) -> None:
        self.store: sessionkit.Store | None = None
        self.sessions: dict[str, sessionkit.Session] = {}
        self.subagents: dict[tuple[str, str], sessionkit.Subagent] = {}

    def st(self) -> sessionkit.Store:
        if self.store is None:
            raise sessionkit.InvalidInputError("no store: send open_store first")
        return self.store

    def session(self, a: dict[str, Any]) -> sessionkit.Session:
        try:
            return self.sessions[a["session"]]
        except KeyError:
            raise sessionkit.InvalidInputError(f"session {a['session']} is not open in this runner") from None

    def keep(self, s: sessionkit.Session) -> dict[str, str]:
        self.sessions[s.id] = s
        return {"id": s.id}

    # -- the ops ---------------------------------------------------------------

    def open_store(self, a: dict[str, Any]) -> Any:
        options = a.get("options", {})
        unknown = set(options) - set(STORE_KEYWORDS)
        if unknown:
            raise sessionkit.InvalidInputError(f"store options: unknown keys {sorted(unknown)}")
        kw = {STORE_KEYWORDS[k]: v for k, v in options.items()}
        self.store = sessionkit.Store(a["project"], **kw)
        return {"projectCode": self.store.project_code}

    def create_session(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        return self.keep(self.st().create_session(id=o.get("id"), title=o.get("title")))

    def open_session(self, a: dict[str, Any]) -> Any:
        return self.keep(self.st().open_session(a["session"]))

    def fork_session(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        return self.keep(self.st().fork_session(a["session"], at=o.get("at"), title=o.get("title")))

    def close_session(self, a: dict[str, Any]) -> Any:
        s = self.session(a)
        for key in [k for k in self.subagents if k[0] == s.id]:
            self.subagents.pop(key).close()
        del self.sessions[s.id]
        s.close()
        return None

    def rename_session(self, a: dict[str, Any]) -> Any:
        return self.st().rename_session(a["session"], a["title"]).raw

    def delete_session(self, a: dict[str, Any]) -> Any:
        self.st().delete_session(a["session"])
        return None

    def list_trash(self, a: dict[str, Any]) -> Any:
        return self.st().list_trash()

    def restore_session(self, a: dict[str, Any]) -> Any:
        return self.st().restore_session(a["session"]).raw

    def gc(self, a: dict[str, Any]) -> Any:
        return self.st().gc()

    def doctor(self, a: dict[str, Any]) -> Any:
        return self.st().doctor(repair=a.get("options", {}).get("repair", False))

    def list_sessions(self, a: dict[str, Any]) -> Any:
        return [e.raw for e in self.st().list_sessions()]

    def session_entry(self, a: dict[str, Any]) -> Any:
        return self.st().session_entry(a["session"]).raw

    def list_subagents(self, a: dict[str, Any]) -> Any:
        return self.st().list_subagents(a["session"])

    def active_path(self, a: dict[str, Any]) -> Any:
        return self.st().read_session(a["session"]).active_path()

    def ui_view(self, a: dict[str, Any]) -> Any:
        return self.st().read_session(a["session"]).ui_view()

    def model_view(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        return self.st().model_view(a["session"], last_n=o.get("lastN"), token_budget=o.get("tokenBudget"))

    def read_report(self, a: dict[str, Any]) -> Any:
        return self.st().read_session(a["session"]).report

    def subagent_active_path(self, a: dict[str, Any]) -> Any:
        return self.st().read_subagent(a["session"], a["agent"]).active_path()

    def append(self, a: dict[str, Any]) -> Any:
        return self.session(a).append(a["message"])

    def append_batch(self, a: dict[str, Any]) -> Any:
        return self.session(a).append_batch(a["messages"])

    def user_input(self, a: dict[str, Any]) -> Any:
        return self.session(a).user_input(a["message"])

    def update_state(self, a: dict[str, Any]) -> Any:
        return self.session(a).update_state(a["set"]).raw

    def before_edit(self, a: dict[str, Any]) -> Any:
        return self.session(a).before_edit(a["paths"])

    def after_edit(self, a: dict[str, Any]) -> Any:
        return self.session(a).after_edit(a["paths"])

    def select_compaction(self, a: dict[str, Any]) -> Any:
        p = a["policy"]
        kw = {}
        if "keepLastTurns" in p:
            kw["keep_last_turns"] = p["keepLastTurns"]
        if "summaryTokens" in p:
            kw["summary_tokens"] = p["summaryTokens"]
        return self.session(a).select_compaction(p["tokenBudget"], **kw)

    def apply_compaction(self, a: dict[str, Any]) -> Any:
        return self.session(a).apply_compaction(a["replaces"], a["summary"])

    def resume_at(self, a: dict[str, Any]) -> Any:
        self.session(a).resume_at(a["message"])
        return None

    def rewind_plan(self, a: dict[str, Any]) -> Any:
        return self.session(a).rewind_plan(a["message"])

    def rewind(self, a: dict[str, Any]) -> Any:
        return self.session(a).rewind(a["message"], a["mode"], force=a.get("force", False))

    def spawn_subagent(self, a: dict[str, Any]) -> Any:
        sub = self.session(a).spawn_subagent(a.get("agent"), a.get("meta"))
        self.subagents[(sub.session_id, sub.id)] = sub
        return {"id": sub.id}

    def subagent(self, a: dict[str, Any]) -> sessionkit.Subagent:
        try:
            return self.subagents[(a["session"], a["agent"])]
        except KeyError:
            raise sessionkit.InvalidInputError(f"subagent {a['agent']} is not open in this runner") from None

    def subagent_append(self, a: dict[str, Any]) -> Any:
        return self.subagent(a).append(a["message"])

    def subagent_finish(self, a: dict[str, Any]) -> Any:
        self.subagent(a).finish(a["result"], failed=a.get("failed", False))
        return None

    # -- graph checkpoints (FORMAT.md §24) -------------------------------------
    # The arguments are the JSON the C ABI takes (bytes in base64) and the
    # results its JSON: here converted to and from the native module's
    # (type, bytes) tuples and snake_case dicts, which LangGraph's saver uses.

    def native(self) -> Any:
        # Any: the stub of the native Store does not declare these methods yet.
        return self.st()._native

    def checkpoint_put(self, a: dict[str, Any]) -> Any:
        p = a["put"]
        values = [
            (v["channel"], v["version"], None if v.get("value") is None else typed_in(v["value"]))
            for v in p.get("values", [])
        ]
        self.native().checkpoint_put(
            a["thread"], p.get("ns", ""), p.get("checkpoint", {}), p.get("metadata", {}), p.get("parentId"), values
        )
        return None

    def checkpoint_put_writes(self, a: dict[str, Any]) -> Any:
        w = a["writes"]
        writes = [(x["channel"], typed_in(x["value"])) for x in w.get("writes", [])]
        self.native().checkpoint_put_writes(
            a["thread"], w.get("ns", ""), w.get("checkpointId", ""), w.get("taskId", ""), w.get("taskPath", ""), writes
        )
        return None

    def checkpoint_get(self, a: dict[str, Any]) -> Any:
        t = self.native().checkpoint_get(a["thread"], a.get("ns", ""), a.get("checkpointId"))
        return None if t is None else tuple_out(t)

    def checkpoint_list(self, a: dict[str, Any]) -> Any:
        q = a.get("query") or {}
        ts = self.native().checkpoint_list(
            q.get("threadId"), q.get("ns"), q.get("checkpointId"), q.get("filter"), q.get("before"), q.get("limit")
        )
        return [tuple_out(t) for t in ts]

    def checkpoint_copy_thread(self, a: dict[str, Any]) -> Any:
        self.native().checkpoint_copy_thread(a["source"], a["target"])
        return None

    def checkpoint_prune(self, a: dict[str, Any]) -> Any:
        self.native().checkpoint_prune(a["threads"], a["strategy"])
        return None

    def checkpoint_delete_for_runs(self, a: dict[str, Any]) -> Any:
        self.native().checkpoint_delete_for_runs(a["runs"])
        return None

    def checkpoint_delete_thread(self, a: dict[str, Any]) -> Any:
        self.native().checkpoint_delete_thread(a["thread"])
        return None

    def close_all(self) -> None:
        for sub in self.subagents.values():
            sub.close()
        for s in self.sessions.values():  # dicts keep the order they were opened in
            s.close()


def typed_in(v: dict[str, Any]) -> tuple[str, bytes]:
    """A value as JSON ({type, bytes: base64}) -> the native (type, bytes)."""
    return (v["type"], base64.b64decode(v["bytes"], validate=True))


def typed_out(v: tuple[str, bytes]) -> dict[str, str]:
    return {"type": v[0], "bytes": base64.b64encode(v[1]).decode("ascii")}


def tuple_out(t: dict[str, Any]) -> dict[str, Any]:
    """A stored checkpoint as the native module gives it -> the library's JSON."""
    return {
        "threadId": t["thread_id"],
        "ns": t["ns"],
        "id": t["id"],
        "parentId": t["parent_id"],
        "checkpoint": t["checkpoint"],
        "metadata": t["metadata"],
        "values": {c: typed_out(v) for c, v in t["values"].items()},
        "writes": [
            {"taskId": task, "channel": ch, "value": typed_out(v), "taskPath": path, "idx": idx}
            for task, ch, v, path, idx in t["writes"]
        ],
        "pendingSends": [typed_out(v) for v in t["pending_sends"]],
    }


def main() -> int:
    runner = Runner()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op", "")
            helper = op.startswith("_") or op in ("st", "session", "keep", "subagent", "native", "close_all")
            fn: Callable[[dict[str, Any]], Any] | None = None if helper else getattr(runner, op, None)
            if fn is None:
                raise Unsupported(f"op {op!r} is not known to the Python runner")
            answer: dict[str, Any] = {"ok": fn(req.get("args", {}))}
        except Unsupported as e:
            answer = {"error": {"code": "UNSUPPORTED_OP", "message": str(e)}}
        except sessionkit.SessionkitError as e:
            answer = {"error": {"code": e.code, "message": str(e)}}
        except (KeyError, TypeError, ValueError) as e:
            answer = {"error": {"code": "INVALID_INPUT", "message": f"{type(e).__name__}: {e}"}}
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    runner.close_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
