"""The CLI runner of the scenario protocol (docs/FORMAT.md §21): each request
becomes one `sessionkit --json` invocation, so the CLI is checked through its
own interface only. Standard library only. Run by tests/scenarios/run.py:

    python3 tests/scenarios/runners/cli_runner.py PATH/TO/sessionkit

Every op has a command: what a person does to a stored session (new, fork,
resume-at, rewind, rename, delete, gc, doctor, show), what an agent writes
(append, user-input, snapshot, state, compact, subagent) and what a graph
checkpointer does (checkpoint). Each invocation is its own process: the deterministic run is carried from one to the
next in a state file (`--deterministic-state FILE`, read before a command and
written back after it), and the other store options go in `--store-options`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

# Exit codes: an error kind's number plus 2 (bindings/cli/README.md).
KINDS = ["NOT_FOUND", "BUSY", "CONFLICT", "INVALID_INPUT", "CORRUPT", "IO", "UNSUPPORTED", "INTERNAL"]


class Failure(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class CliRunner:
    def __init__(self, exe: str) -> None:
        self.exe = exe
        self.globals: list[str] = []
        # Sessions a scenario holds open. A command opens and closes what it
        # writes, so nothing is held between commands: an op whose outcome is
        # the BUSY of a held session cannot be shown by the CLI.
        self.held: set[str] = set()
        # Outside the work directory, whose trees the driver compares.
        self.state_dir = tempfile.TemporaryDirectory(prefix="sk-cli-runner-")

    def cli(self, *args: str) -> Any:
        argv = [self.exe, "--json", *self.globals]
        out = subprocess.run(argv + list(args), capture_output=True, text=True,
                             env={**os.environ, "NO_COLOR": "1"})
        if out.returncode in (0, 1) and out.stdout.strip():
            return json.loads(out.stdout)
        if 3 <= out.returncode < 3 + len(KINDS):
            raise Failure(KINDS[out.returncode - 3], out.stderr.strip())
        raise Failure("INTERNAL", f"sessionkit {' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")

    def run(self, op: str, a: dict[str, Any]) -> Any:
        fn = getattr(self, "op_" + op, None)
        if fn is None:
            raise Failure("UNSUPPORTED_OP", f"op {op!r} has no sessionkit CLI command")
        return fn(a)

    def op_open_store(self, a: dict[str, Any]) -> Any:
        o = dict(a.get("options", {}))
        self.globals = ["--project", a["project"]]
        d = o.pop("deterministic", None)
        if d is not None:
            state = os.path.join(self.state_dir.name, "deterministic.json")
            with open(state, "w", encoding="utf-8") as f:
                json.dump(d, f)
            self.globals += ["--deterministic-state", state]
        if o:
            self.globals += ["--store-options", json.dumps(o, ensure_ascii=False)]
        # `doctor` names the store directory, whose name is the project code.
        return {"projectCode": os.path.basename(self.cli("doctor")["store"])}

    def hold(self, session: str) -> Any:
        self.held.add(session)
        return {"id": session}

    def not_held(self, session: str) -> None:
        if session in self.held:
            raise Failure("UNSUPPORTED_OP", "the CLI holds no session between commands, so it cannot meet a held one")

    def op_open_session(self, a: dict[str, Any]) -> Any:
        return self.hold(self.cli("show", a["session"])["session"]["id"])

    def op_close_session(self, a: dict[str, Any]) -> Any:
        self.held.discard(a["session"])
        return None  # each command closed what it opened

    def op_create_session(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        args = ["new"]
        if "title" in o:
            args += ["--title", o["title"]]
        if "id" in o:
            args += ["--id", o["id"]]
        return self.hold(self.cli(*args)["id"])

    def op_append(self, a: dict[str, Any]) -> Any:
        return self.cli("append", a["session"], json.dumps(a["message"], ensure_ascii=False))

    def op_append_batch(self, a: dict[str, Any]) -> Any:
        return self.cli("append", a["session"], json.dumps(a["messages"], ensure_ascii=False))

    def op_user_input(self, a: dict[str, Any]) -> Any:
        return self.cli("user-input", a["session"], json.dumps(a["message"], ensure_ascii=False))

    def op_before_edit(self, a: dict[str, Any]) -> Any:
        return self.cli("snapshot", a["session"], "--before", *a["paths"])

    def op_after_edit(self, a: dict[str, Any]) -> Any:
        return self.cli("snapshot", a["session"], "--after", *a["paths"])

    def op_update_state(self, a: dict[str, Any]) -> Any:
        return self.cli("state", a["session"], json.dumps(a["set"], ensure_ascii=False))

    def op_select_compaction(self, a: dict[str, Any]) -> Any:
        p = dict(a["policy"])
        args = ["compact", "select", a["session"], "--token-budget", str(p.pop("tokenBudget"))]
        for key, flag in (("keepLastTurns", "--keep-last-turns"), ("summaryTokens", "--summary-tokens")):
            if key in p:
                args += [flag, str(p.pop(key))]
        if p:
            raise Failure("INVALID_INPUT", f"compaction policy fields the CLI has no flag for: {sorted(p)}")
        return self.cli(*args)

    def op_apply_compaction(self, a: dict[str, Any]) -> Any:
        summary = json.dumps(a["summary"], ensure_ascii=False)
        return self.cli("compact", "apply", a["session"], summary, *a["replaces"])

    def op_spawn_subagent(self, a: dict[str, Any]) -> Any:
        args = ["subagent", "spawn", a["session"]]
        if "agent" in a:
            args += ["--agent", a["agent"]]
        if "meta" in a:
            args += ["--meta", json.dumps(a["meta"], ensure_ascii=False)]
        return {"id": self.cli(*args)["id"]}

    def op_subagent_append(self, a: dict[str, Any]) -> Any:
        message = json.dumps(a["message"], ensure_ascii=False)
        return self.cli("subagent", "append", a["session"], a["agent"], message)

    def op_subagent_finish(self, a: dict[str, Any]) -> Any:
        args = ["subagent", "finish", a["session"], a["agent"], json.dumps(a["result"], ensure_ascii=False)]
        if a.get("failed"):
            args.append("--failed")
        self.cli(*args)
        return None

    def op_subagent_active_path(self, a: dict[str, Any]) -> Any:
        return self.cli("subagent", "show", a["session"], a["agent"])["messages"]

    def op_active_path(self, a: dict[str, Any]) -> Any:
        return self.cli("show", a["session"], "--active-path")["messages"]

    def op_fork_session(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        args = ["fork", a["session"]]
        if "at" in o:
            args += ["--at", o["at"]]
        if "title" in o:
            args += ["--title", o["title"]]
        return self.hold(self.cli(*args)["id"])

    def op_resume_at(self, a: dict[str, Any]) -> Any:
        self.cli("resume-at", a["session"], a["message"])
        return None

    def op_rewind_plan(self, a: dict[str, Any]) -> Any:
        return self.cli("rewind", a["session"], "--to", a["message"], "--files", "--dry-run")["plan"]

    def op_rewind(self, a: dict[str, Any]) -> Any:
        args = ["rewind", a["session"], "--to", a["message"], "--" + a["mode"]]
        if a.get("force"):
            args.append("--force")
        return self.cli(*args)["result"]

    def op_rename_session(self, a: dict[str, Any]) -> Any:
        self.not_held(a["session"])
        return self.cli("rename", a["session"], a["title"])

    def op_delete_session(self, a: dict[str, Any]) -> Any:
        self.not_held(a["session"])
        self.cli("delete", a["session"])
        return None

    def op_list_trash(self, a: dict[str, Any]) -> Any:
        return self.cli("trash")

    def op_restore_session(self, a: dict[str, Any]) -> Any:
        return self.cli("restore", a["session"])

    def op_gc(self, a: dict[str, Any]) -> Any:
        return self.cli("gc")

    def op_doctor(self, a: dict[str, Any]) -> Any:
        repair = a.get("options", {}).get("repair", False)
        return self.cli("doctor", *(["--repair"] if repair else []))

    def op_list_sessions(self, a: dict[str, Any]) -> Any:
        return self.cli("list")

    def op_session_entry(self, a: dict[str, Any]) -> Any:
        return self.cli("show", a["session"])["session"]

    def op_ui_view(self, a: dict[str, Any]) -> Any:
        return self.cli("show", a["session"])["messages"]

    def op_read_report(self, a: dict[str, Any]) -> Any:
        return self.cli("show", a["session"])["report"]

    def op_list_subagents(self, a: dict[str, Any]) -> Any:
        return self.cli("show", a["session"])["subagents"]

    def op_model_view(self, a: dict[str, Any]) -> Any:
        o = dict(a.get("options", {}))
        args = ["show", a["session"], "--model-view"]
        for key, flag in (("lastN", "--last"), ("tokenBudget", "--token-budget")):
            if key in o:
                args += [flag, str(o.pop(key))]
        if o:
            raise Failure("INVALID_INPUT", f"model view options the CLI has no flag for: {sorted(o)}")
        return self.cli(*args)["messages"]

    # Graph checkpoints: `sessionkit checkpoint` takes and prints the C ABI's JSON.
    def op_checkpoint_put(self, a: dict[str, Any]) -> Any:
        self.cli("checkpoint", "put", a["thread"], json.dumps(a["put"], ensure_ascii=False))
        return None

    def op_checkpoint_put_writes(self, a: dict[str, Any]) -> Any:
        self.cli("checkpoint", "writes", a["thread"], json.dumps(a["writes"], ensure_ascii=False))
        return None

    def op_checkpoint_get(self, a: dict[str, Any]) -> Any:
        args = ["checkpoint", "get", a["thread"]]
        if "ns" in a:
            args.append("--ns=" + a["ns"])  # one word: a namespace may start with "-"
        if "checkpointId" in a:
            args.append("--id=" + a["checkpointId"])
        return self.cli(*args)

    def op_checkpoint_list(self, a: dict[str, Any]) -> Any:
        query = [json.dumps(a["query"], ensure_ascii=False)] if "query" in a else []
        return self.cli("checkpoint", "list", *query)

    def op_checkpoint_copy_thread(self, a: dict[str, Any]) -> Any:
        self.cli("checkpoint", "copy", "--", a["source"], a["target"])
        return None

    def op_checkpoint_prune(self, a: dict[str, Any]) -> Any:
        self.cli("checkpoint", "prune", "--strategy", a["strategy"], "--", *a["threads"])
        return None

    def op_checkpoint_delete_for_runs(self, a: dict[str, Any]) -> Any:
        self.cli("checkpoint", "delete-runs", "--", *a["runs"])
        return None

    def op_checkpoint_delete_thread(self, a: dict[str, Any]) -> Any:
        self.cli("checkpoint", "delete", "--", a["thread"])
        return None


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: cli_runner.py PATH/TO/sessionkit", file=sys.stderr)
        return 2
    runner = CliRunner(sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            answer: dict[str, Any] = {"ok": runner.run(req.get("op", ""), req.get("args", {}))}
        except Failure as e:
            answer = {"error": {"code": e.code, "message": str(e)}}
        except (KeyError, TypeError, ValueError) as e:
            answer = {"error": {"code": "INVALID_INPUT", "message": f"{type(e).__name__}: {e}"}}
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
