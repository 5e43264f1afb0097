"""The CLI runner of the scenario protocol (docs/FORMAT.md §21): each request
becomes one `sessionkit --json` invocation, so the CLI is checked through its
own interface only. Standard library only. Run by tests/scenarios/run.py:

    python3 tests/scenarios/runners/cli_runner.py PATH/TO/sessionkit

The CLI has commands for what a person or a script does to a stored session
(new, append, fork, resume at, rewind, rename, delete, gc, doctor, and the
views), not for the rest of what an agent writes (user inputs with snapshots,
edits, compaction, subagents, state); those ops answer UNSUPPORTED_OP. Each invocation is its own
process and restarts the deterministic clock (`--deterministic START` means
startMs START, stepMs 1000, seed START), so a phase run by the CLI holds at
most one op that writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

# Exit codes: an error kind's number plus 2 (bindings/cli/README.md).
KINDS = ["NOT_FOUND", "BUSY", "CONFLICT", "INVALID_INPUT", "CORRUPT", "IO", "UNSUPPORTED", "INTERNAL"]
READS = {"list_sessions", "session_entry", "ui_view", "model_view", "read_report",
         "list_subagents", "rewind_plan", "open_session", "close_session"}


class Failure(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class CliRunner:
    def __init__(self, exe: str) -> None:
        self.exe = exe
        self.globals: list[str] = []
        self.start_ms: int | None = None
        self.cannot_write = ""
        self.writes = 0

    def cli(self, *args: str, write: bool = False) -> Any:
        argv = [self.exe, "--json", *self.globals]
        if write and self.start_ms is not None:
            argv += ["--deterministic", str(self.start_ms)]
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
        if op != "open_store" and op not in READS and not (op == "doctor" and not a.get("options", {}).get("repair")):
            if self.cannot_write:
                raise Failure("UNSUPPORTED_OP", self.cannot_write)
            self.writes += 1
            if self.writes > 1:
                raise Failure("UNSUPPORTED_OP", "the CLI restarts its deterministic clock in every process: one writing op per phase")
        return fn(a)

    def op_open_store(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        self.globals = ["--home", o["home"], "--project", a["project"]] if "home" in o else ["--project", a["project"]]
        # The CLI has flags for these two store options only.
        others = sorted(set(o) - {"home", "deterministic"})
        if others:
            self.cannot_write = f"the CLI has no flag for the store options {others}"
        d = o.get("deterministic")
        if d is not None:
            self.start_ms = d["startMs"]
            if d.get("stepMs", 1) != 1000 or d.get("seed", 0) != d["startMs"]:
                self.cannot_write = "the CLI's --deterministic START gives stepMs 1000 and seed START only"
        # `doctor` names the store directory, whose name is the project code.
        return {"projectCode": os.path.basename(self.cli("doctor")["store"])}

    def op_open_session(self, a: dict[str, Any]) -> Any:
        return {"id": self.cli("show", a["session"])["session"]["id"]}

    def op_close_session(self, a: dict[str, Any]) -> Any:
        return None  # each command closed what it opened

    def op_create_session(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        args = ["new"]
        if "title" in o:
            args += ["--title", o["title"]]
        if "id" in o:
            args += ["--id", o["id"]]
        return {"id": self.cli(*args, write=True)["id"]}

    def op_append(self, a: dict[str, Any]) -> Any:
        return self.cli("append", a["session"], json.dumps(a["message"], ensure_ascii=False), write=True)

    def op_fork_session(self, a: dict[str, Any]) -> Any:
        o = a.get("options", {})
        args = ["fork", a["session"]]
        if "at" in o:
            args += ["--at", o["at"]]
        if "title" in o:
            args += ["--title", o["title"]]
        return {"id": self.cli(*args, write=True)["id"]}

    def op_resume_at(self, a: dict[str, Any]) -> Any:
        self.cli("resume-at", a["session"], a["message"], write=True)
        return None

    def op_rewind_plan(self, a: dict[str, Any]) -> Any:
        return self.cli("rewind", a["session"], "--to", a["message"], "--files", "--dry-run")["plan"]

    def op_rewind(self, a: dict[str, Any]) -> Any:
        args = ["rewind", a["session"], "--to", a["message"], "--" + a["mode"]]
        if a.get("force"):
            args.append("--force")
        return self.cli(*args, write=True)["result"]

    def op_rename_session(self, a: dict[str, Any]) -> Any:
        return self.cli("rename", a["session"], a["title"], write=True)

    def op_delete_session(self, a: dict[str, Any]) -> Any:
        self.cli("delete", a["session"], write=True)
        return None

    def op_gc(self, a: dict[str, Any]) -> Any:
        return self.cli("gc", write=True)

    def op_doctor(self, a: dict[str, Any]) -> Any:
        repair = a.get("options", {}).get("repair", False)
        return self.cli("doctor", *(["--repair"] if repair else []), write=repair)

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
        if a.get("options"):
            raise Failure("UNSUPPORTED_OP", "show --model-view takes no lastN or tokenBudget")
        return self.cli("show", a["session"], "--model-view")["messages"]


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
