#!/usr/bin/env python3
"""Replay the scenarios of tests/scenarios/ through every runner and compare.

A runner is a program that speaks the scenario protocol of docs/FORMAT.md §21
(one JSON request per line on stdin, one JSON answer per line on stdout). For
each scenario and each runner this driver makes a fresh store and project,
streams the steps, checks each step's `expect`, and then compares what every
runner left behind: the step results (a gc report without its file-history byte
counts, which must only add up), and the store and project trees byte for
byte (the file-history repository by its refs and objects, since git packs the
same objects in different files). It prints a table of scenarios x runners.

    python3 tests/scenarios/run.py --runner rust=PATH [--runner python='python3 runner.py'] ...
    python3 tests/scenarios/run.py --self-test --runner rust=PATH

Every answer is checked against tests/scenarios/schemas/results.schema.json
(with the `jsonschema` package, which tests/scenarios/run.sh installs); every
UNSUPPORTED_OP must be listed in tests/scenarios/expected-na.json.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any


HERE = Path(__file__).resolve().parent
ANSWER_TIMEOUT = 120  # seconds for one answer: a debug build's gc can be slow
DRIVER_OPS = {"write_file", "delete_file", "expect_file"}
EXPECTED_NA = HERE / "expected-na.json"  # the allowed n/a cells, not a scenario


SCHEMAS = HERE / "schemas" / "results.schema.json"
FORMAT_MD = HERE.parent.parent / "docs" / "FORMAT.md"


def scenario_files() -> list[Path]:
    return sorted(p for p in HERE.glob("*.json") if p != EXPECTED_NA)


def protocol_ops() -> list[str]:
    """The ops of docs/FORMAT.md §21.2's table, from its first column."""
    text = FORMAT_MD.read_text(encoding="utf-8")
    start = text.index("### 21.2 Operations")
    table = text[start : text.index("\n### ", start + 1)]
    ops: list[str] = []
    for row in table.splitlines():
        if row.startswith("| ") and not row.startswith(("| op ", "| ---")):
            ops += re.findall(r"`([a-z_]+)`", row.split(" | ")[0])
    return ops


def readings_ops() -> tuple[list[str], list[str]]:
    """The ops of docs/FORMAT.md §21.5: those with a row in its table of clock
    readings and ids, and those it lists as taking none."""
    text = FORMAT_MD.read_text(encoding="utf-8")
    start = text.index("### 21.5 The deterministic clock and ids")
    section = text[start : text.index("\n### ", start + 1)]
    none_list = re.search(r"take none: (.*?)\.\n\n", section, re.S)
    if none_list is None:
        raise ScenarioError(f"{FORMAT_MD} §21.5 has no list of the ops that take no reading")
    rows: list[str] = []
    for row in section.splitlines():
        if row.startswith("| ") and not row.startswith(("| op ", "|---", "| ---")):
            # "`rewind`, mode `files`", "`checkpoint_prune` (`keep_latest`)":
            # a row per mode names its op first; a named non-runner op is left out.
            first = re.sub(r"`[a-z_]+` \(not a runner op\)|\([^)]*\)|, mode `[a-z_]+`", "", row.split(" | ")[0])
            rows += [o for o in re.findall(r"`([a-z_]+)`", first) if o not in rows]
    return rows, re.findall(r"`([a-z_]+)`", none_list.group(1))


def check_readings_table() -> None:
    """Every op of §21.2 is in §21.5, once: a row of the readings table or the
    list of ops that take none, so a foreign writer knows its clock for each."""
    ops = protocol_ops()
    rows, none = readings_ops()
    listed = rows + none
    missing = [o for o in ops if o not in listed]
    twice = sorted(set(rows) & set(none))
    unknown = sorted(set(listed) - set(ops))
    if missing or twice or unknown:
        raise ScenarioError(
            f"{FORMAT_MD} §21.5 and §21.2 disagree: ops with no readings row {missing}, "
            f"ops both in the table and among those that take none {twice}, ops of no §21.2 row {unknown}"
        )


class Schemas:
    """The result schemas of tests/scenarios/schemas/results.schema.json: one
    per op of §21.2 (checked when loaded), and the error answer's."""

    def __init__(self) -> None:
        # Imported here: the self-test's wrapped runners import this module too.
        try:
            import jsonschema  # type: ignore[import-untyped]
        except ImportError:
            raise ScenarioError(
                "the jsonschema package is missing: tests/scenarios/run.sh installs it into its "
                "virtualenv (or: python3 -m pip install jsonschema==4.26.0)"
            ) from None
        root = json.loads(SCHEMAS.read_text(encoding="utf-8"))
        self.validator = jsonschema.Draft202012Validator(root)
        self.error = jsonschema.Draft202012Validator({**root, **root["$defs"]["errorAnswer"]})
        ops, schemas = protocol_ops(), set(root["properties"])
        if not ops:
            raise ScenarioError(f"no ops found in the table of {FORMAT_MD} §21.2")
        missing, extra = [o for o in ops if o not in schemas], sorted(schemas - set(ops))
        if missing or extra:
            raise ScenarioError(
                f"{SCHEMAS} and {FORMAT_MD} §21.2 disagree: ops without a result schema {missing}, "
                f"schemas of no op {extra}"
            )

    def mismatch(self, op: str, answer: dict[str, Any]) -> str | None:
        """Where an answer does not match its schema (None when it does)."""
        if "error" in answer:
            errors = list(self.error.iter_errors(answer["error"]))
        elif op not in self.validator.schema["properties"]:
            return f"no result schema for op {op!r}"
        else:
            errors = list(self.validator.iter_errors({op: answer["ok"]}))
        if not errors:
            return None
        e = min(errors, key=lambda e: len(e.absolute_path))
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in list(e.absolute_path)[1 if "ok" in answer else 0 :])
        return f"{'error' if 'error' in answer else 'result'}{where}: {e.message[:300]}"


_schemas: Schemas | None = None


def schemas() -> Schemas:
    global _schemas
    if _schemas is None:
        _schemas = Schemas()
    return _schemas


class ScenarioError(Exception):
    """A run that went wrong: a failed expectation, a runner crash, a bad scenario."""


class Unsupported(Exception):
    """The runner answered UNSUPPORTED_OP to an op the scenario needs."""

    def __init__(self, runner: str, op: str, label: str, message: str) -> None:
        super().__init__(f"{label}: {message}")
        self.runner = runner
        self.op = op


class NotGiven(Exception):
    """A phase names a runner that this run was not given (a hand-off scenario
    run with some of the runners only)."""


# -- talking to a runner -------------------------------------------------------


class RunnerProcess:
    def __init__(self, name: str, command: list[str], cwd: Path) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read_out, daemon=True).start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def request(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        line = json.dumps({"op": op, "args": args}, ensure_ascii=False)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise ScenarioError(f"{self.name} runner exited early{self._err()}") from None
        try:
            answer = self.lines.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            raise ScenarioError(f"{self.name} runner gave no answer to {op} in {ANSWER_TIMEOUT}s")
        if answer is None:
            raise ScenarioError(f"{self.name} runner exited without answering {op}{self._err()}")
        try:
            parsed = json.loads(answer)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"{self.name} runner answered {op} with non-JSON ({e}): {answer[:200]!r}")
        if not isinstance(parsed, dict) or ("ok" in parsed) == ("error" in parsed):
            raise ScenarioError(f"{self.name} runner's answer to {op} has neither ok nor error: {answer[:200]!r}")
        return parsed

    def finish(self) -> None:
        """End of input: the runner closes its handles and exits 0."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            rc = self.proc.wait(timeout=ANSWER_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise ScenarioError(f"{self.name} runner did not exit at end of input")
        if rc != 0:
            raise ScenarioError(f"{self.name} runner exited with {rc}{self._err()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _err(self) -> str:
        if self.proc.poll() is not None:
            self._err_reader.join(timeout=5)  # the rest of what a dead runner wrote
        text = "".join(self.stderr).strip()
        return f"; its stderr:\n{text[-2000:]}" if text else ""


# -- values, variables, expectations ----------------------------------------------


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """"$name" is replaced by the saved value; "${name}" inside a string by its
    text; {"$repeat": text, "times": n} by the text n times (large payloads);
    {"$base64": text} by the base64 of the text's UTF-8 (readable bytes)."""
    if isinstance(value, dict) and "$repeat" in value:
        return str(value["$repeat"]) * int(value.get("times", 1))
    if isinstance(value, dict) and "$base64" in value:
        text = substitute(value["$base64"], variables)
        return base64.b64encode(str(text).encode("utf-8")).decode("ascii")
    if isinstance(value, str):
        if value.startswith("$") and value[1:] in variables:
            return variables[value[1:]]
        for name, v in variables.items():
            if isinstance(v, str):
                value = value.replace("${" + name + "}", v)
        if "${" in value:
            raise ScenarioError(f"unknown variable in {value!r} (saved: {sorted(variables)})")
        return value
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def pick(result: Any, path: str) -> Any:
    """The value at a dotted path ("id", "0.id", "files.0.action"; "" is all)."""
    for part in [p for p in path.split(".") if p]:
        if isinstance(result, list) and part.lstrip("-").isdigit():
            result = result[int(part)]
        elif isinstance(result, dict) and part in result:
            result = result[part]
        else:
            raise ScenarioError(f"the result has no {path!r} (at {part!r})")
    return result


def mismatch(expected: Any, actual: Any, where: str = "") -> str | None:
    """Where `actual` fails `expected`: objects match on the keys expected names,
    lists element by element with equal lengths, everything else by equality.
    {"$absent": true} says a key must be missing; {"$len": n} a list's length."""
    if isinstance(expected, dict):
        if expected.get("$absent") is True:
            return f"{where or 'value'}: expected absent, got {json.dumps(actual, ensure_ascii=False)[:200]}"
        if "$len" in expected and len(expected) == 1:
            if not isinstance(actual, list) or len(actual) != expected["$len"]:
                return f"{where or 'value'}: expected a list of {expected['$len']}, got {json.dumps(actual, ensure_ascii=False)[:200]}"
            return None
        if not isinstance(actual, dict):
            return f"{where or 'value'}: expected an object, got {json.dumps(actual, ensure_ascii=False)[:200]}"
        for k, v in expected.items():
            if isinstance(v, dict) and v.get("$absent") is True:
                if k in actual:
                    return f"{where}.{k}: expected absent, got {json.dumps(actual[k], ensure_ascii=False)[:200]}"
                continue
            if k not in actual:
                return f"{where}.{k}: missing"
            m = mismatch(v, actual[k], f"{where}.{k}")
            if m:
                return m
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            n = len(actual) if isinstance(actual, list) else "not a list"
            return f"{where or 'value'}: expected a list of {len(expected)}, got {n}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            m = mismatch(e, a, f"{where}[{i}]")
            if m:
                return m
        return None
    if expected != actual or type(expected) is not type(actual):
        return f"{where or 'value'}: expected {json.dumps(expected, ensure_ascii=False)}, got {json.dumps(actual, ensure_ascii=False)[:200]}"
    return None


# -- running one scenario with one assignment of runners ------------------------------


def phases_of(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    if "phases" in scenario:
        return list(scenario["phases"])
    return [{"steps": scenario["steps"]}]


def make_project(project: Path, files: dict[str, str]) -> None:
    project.mkdir(parents=True)
    for rel, content in files.items():
        p = project / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, encoding="utf-8")


def driver_step(op: str, args: dict[str, Any], project: Path) -> None:
    path = project / args["path"]
    if op == "write_file":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"], encoding="utf-8")
    elif op == "delete_file":
        path.unlink()
    elif op == "expect_file":
        want = args.get("content")
        got = path.read_text(encoding="utf-8") if path.exists() else None
        if want != got:
            raise ScenarioError(f"file {args['path']}: expected {want!r}, found {got!r}")


def run_once(
    scenario: dict[str, Any],
    work: Path,
    runners: dict[str, list[str]],
    by: str | None,
    store_override: dict[str, Any] | None = None,
    ops: list[str] | None = None,
) -> list[Any]:
    """Run the scenario in `work` (emptied first); the results of its steps.
    `by` runs every phase with that runner; None, as each phase says. When
    `ops` is given, each result's op is appended to it (see `comparable`)."""
    if work.exists():
        shutil.rmtree(work)
    project = work / "project"
    home = work / "home"
    make_project(project, scenario.get("project", {}).get("files", {}))
    variables: dict[str, Any] = {}
    results: list[Any] = []
    for number, phase in enumerate(phases_of(scenario)):
        name = by or phase.get("by")
        if name is None:
            raise ScenarioError(f"phase {number} names no runner (by)")
        if name not in runners:
            raise NotGiven(f"phase {number} wants runner {name}, not given")
        options = {**scenario.get("store", {}), **phase.get("store", {}), **(store_override or {})}
        options["home"] = str(home)
        proc = RunnerProcess(name, runners[name], work)
        try:
            opened = proc.request("open_store", {"project": str(project), "options": options})
            if "error" in opened:
                raise ScenarioError(f"open_store: {opened['error']}")
            bad = schemas().mismatch("open_store", opened)
            if bad:
                raise ScenarioError(f"open_store ({name}) answered outside {SCHEMAS.name}: {bad}")
            for i, step in enumerate(phase["steps"]):
                label = f"phase {number} step {i} ({step['op']})" if "phases" in scenario else f"step {i} ({step['op']})"
                args = substitute(step.get("args", {}), variables)
                if step["op"] in DRIVER_OPS:
                    try:
                        driver_step(step["op"], args, project)
                    except ScenarioError as e:
                        raise ScenarioError(f"{label}: {e}") from None
                    continue
                answer = proc.request(step["op"], args)
                bad = schemas().mismatch(step["op"], answer)
                if bad:
                    raise ScenarioError(f"{label} ({name}) answered outside {SCHEMAS.name}: {bad}")
                if "error" in answer:
                    err = answer["error"]
                    code = err.get("code") if isinstance(err, dict) else None
                    if code == "UNSUPPORTED_OP":
                        raise Unsupported(name, step["op"], label, str(err.get("message", "")))
                    if step.get("expectError") != code:
                        raise ScenarioError(f"{label} ({name}): error {code}: {err.get('message', '')}")
                    results.append({"error": code})
                    if ops is not None:
                        ops.append(step["op"])
                    continue
                if "expectError" in step:
                    raise ScenarioError(f"{label} ({name}): expected error {step['expectError']}, got a result")
                result = answer["ok"]
                if "expect" in step:
                    m = mismatch(substitute(step["expect"], variables), result)
                    if m:
                        raise ScenarioError(f"{label} ({name}): {m}")
                for var, path in step.get("save", {}).items():
                    try:
                        variables[var] = pick(result, path)
                    except ScenarioError as e:
                        raise ScenarioError(f"{label}: save {var}: {e}") from None
                if step["op"] == "gc":
                    bad = gc_bytes_mismatch(result)
                    if bad:
                        raise ScenarioError(f"{label} ({name}): {bad}")
                results.append(result)
                if ops is not None:
                    ops.append(step["op"])
            proc.finish()
        finally:
            proc.kill()
    return results


# -- what a run leaves behind ---------------------------------------------------------


def git(git_dir: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(git_dir)},
    )
    if out.returncode != 0:
        raise ScenarioError(f"git {' '.join(args)} in {git_dir}: {out.stderr.strip()}")
    return out.stdout


INDEX = "sessions-index.json"
JOURNAL = re.compile(r"\.sessions-index\.\d+\.journal")
# The change feed (FORMAT.md §10.8) is a hint for search, not compared (§21.4).
FEED = ".sessions-feed"


def index_as_read(project_dir: Path) -> bytes:
    """The sessions index as readers see it (docs/FORMAT.md §10.7): the file with
    its journal applied, each entry as compact JSON in key order, by session id,
    without the `journal` generation. How many generations a run went through
    depends on how often its writers closed (the CLI closes after every
    command), not on what the store holds."""
    index = json.loads((project_dir / INDEX).read_text(encoding="utf-8"))
    entries = {e["id"]: e for e in index.pop("sessions")}
    generation = index.pop("journal", None)
    journal = project_dir / f".sessions-index.{generation}.journal"
    if generation is not None and journal.exists():
        for line in journal.read_text(encoding="utf-8").split("\n")[:-1]:
            change = json.loads(line)
            if "entry" in change:
                entries[change["entry"]["id"]] = change["entry"]
            else:
                entries.pop(change["remove"], None)
    lines = [json.dumps(index, ensure_ascii=False, separators=(",", ":"))]
    lines += [json.dumps(entries[k], ensure_ascii=False, separators=(",", ":")) for k in sorted(entries)]
    return ("\n".join(lines) + "\n").encode()


def without_journal_bookkeeping(result: Any) -> Any:
    """A step result without the index journal's generation and line count (in
    doctor's report), for the reason given in `index_as_read`."""
    if isinstance(result, list):
        return [without_journal_bookkeeping(v) for v in result]
    if isinstance(result, dict):
        out = {k: without_journal_bookkeeping(v) for k, v in result.items()}
        journal = out.get("journal")
        if isinstance(journal, dict) and "generation" in journal:
            out["journal"] = {k: v for k, v in journal.items() if k not in ("generation", "applied")}
        return out
    return result


GC_BYTES = ("bytesBefore", "bytesAfter", "bytesFreed")


def gc_bytes_mismatch(result: Any) -> str | None:
    """Why a gc report's file-history byte counts do not add up, or None. They
    are not compared between runners (`comparable`), but each runner's must
    be non-negative integers with bytesFreed = max(bytesBefore - bytesAfter, 0)
    (a gc that grows the repository frees nothing, FORMAT.md §19.9)."""
    if not isinstance(result, dict):
        return "gc answered no report"
    counts = [result.get(k) for k in GC_BYTES]
    numbers = [v for v in counts if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    if len(numbers) != len(GC_BYTES):
        return f"gc report's {', '.join(GC_BYTES)} must be non-negative integers, got {counts}"
    before, after, freed = numbers
    if freed != max(before - after, 0):
        return f"gc report's bytesFreed {freed} is not max(bytesBefore {before} - bytesAfter {after}, 0)"
    return None


def comparable(results: list[Any], ops: list[str]) -> list[Any]:
    """The results as compared between runners (docs/FORMAT.md §21.4): a gc
    report without its file-history byte counts, which depend on how a writer
    stores its objects (loose or packed, which deltas), not on what they are."""
    return [
        {k: v for k, v in result.items() if k not in GC_BYTES} if op == "gc" and isinstance(result, dict) else result
        for op, result in zip(ops, results, strict=True)
    ]


def snapshot(work: Path) -> dict[str, bytes]:
    """Every file of the store and the project, by path relative to `work`; a
    git repository as the text of its refs and of its objects' ids, types and
    sizes; the sessions index as read (`index_as_read`)."""
    tree: dict[str, bytes] = {}
    for root, dirs, files in os.walk(work):
        rel_root = Path(root).relative_to(work)
        if Path(root).name == ".git" and (Path(root) / "HEAD").exists():
            dirs.clear()
            refs = git(Path(root), "for-each-ref", "--format=%(refname) %(objectname)")
            objects = git(Path(root), "cat-file", "--batch-all-objects", "--batch-check")
            tree[str(rel_root / "<refs>")] = refs.encode()
            tree[str(rel_root / "<objects>")] = objects.encode()
            continue
        dirs.sort()
        for f in sorted(files):
            p = Path(root) / f
            if f == INDEX:
                tree[str(rel_root / f)] = index_as_read(Path(root))
            elif JOURNAL.fullmatch(f) or f == FEED:
                continue
            elif p.is_symlink():
                tree[str(rel_root / f)] = b"symlink -> " + os.readlink(p).encode()
            else:
                tree[str(rel_root / f)] = p.read_bytes()
    return tree


def first_difference(a: dict[str, bytes], b: dict[str, bytes]) -> str | None:
    for path in sorted(set(a) | set(b)):
        if path not in a:
            return f"{path}: only in the second"
        if path not in b:
            return f"{path}: only in the first"
        if a[path] != b[path]:
            la, lb = a[path].split(b"\n"), b[path].split(b"\n")
            for n, (x, y) in enumerate(zip(la, lb), 1):
                if x != y:
                    return f"{path} line {n}:\n      {x[:300]!r}\n    vs {y[:300]!r}"
            return f"{path}: {len(la)} lines vs {len(lb)} lines"
    return None


def json_difference(x: Any, y: Any, where: str = "") -> str:
    """The first place two JSON values differ, as a path and both values there."""
    if isinstance(x, dict) and isinstance(y, dict):
        for k in list(x) + [k for k in y if k not in x]:
            if k not in x or k not in y or x[k] != y[k]:
                if k in x and k in y:
                    return json_difference(x[k], y[k], f"{where}.{k}")
                return f"{where}.{k}: {'absent' if k not in x else 'present'} vs {'absent' if k not in y else 'present'}"
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (a, b) in enumerate(zip(x, y)):
            if a != b:
                return json_difference(a, b, f"{where}[{i}]")
    def show(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False)[:300]

    return f"{where or 'value'}:\n      {show(x)}\n    vs {show(y)}"


def first_result_difference(a: list[Any], b: list[Any]) -> str | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"result {i}: {json_difference(x, y)}"
    if len(a) != len(b):
        return f"{len(a)} results vs {len(b)}"
    return None


# -- the table ---------------------------------------------------------------------


NaKey = tuple[str, str, str]  # (scenario, column, op)


def load_expected_na(paths: list[Path]) -> dict[NaKey, str]:
    """The cells allowed to be `n/a`, with their reasons: a runner may answer
    UNSUPPORTED_OP only to the ops these files list, for that scenario and
    runner column (tests/scenarios/expected-na.json; docs/FORMAT.md §21)."""
    out: dict[NaKey, str] = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(data.get("cells", [])):
            where = f"{path} cells[{i}]"
            if not isinstance(cell, dict) or set(cell) != {"scenario", "runner", "op", "reason"}:
                raise ScenarioError(f"{where}: expected exactly scenario, runner, op and reason")
            if not all(isinstance(v, str) and v for v in cell.values()):
                raise ScenarioError(f"{where}: every field must be a non-empty string")
            if not (HERE / f"{cell['scenario']}.json").is_file():
                raise ScenarioError(f"{where}: no scenario {cell['scenario']!r} in {HERE}")
            key = (cell["scenario"], cell["runner"], cell["op"])
            if key in out:
                raise ScenarioError(f"{where}: {key} is listed twice")
            out[key] = cell["reason"]
    return out


def run_scenario(
    path: Path, runners: dict[str, list[str]], base: Path, expected_na: dict[NaKey, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """Cells ("ok", "FAIL", "DIFF", "n/a", "skip") by column, and the
    failures' explanations. A cell is `n/a` only when its runner answered
    UNSUPPORTED_OP to an op that `expected_na` lists for it; any other
    UNSUPPORTED_OP fails, and so does a listed cell whose runner did the op."""
    expected_na = expected_na or {}
    scenario = json.loads(path.read_text(encoding="utf-8"))
    name = path.stem
    work = base / "work"
    cells: dict[str, str] = {}
    notes: list[str] = []
    outputs: dict[str, tuple[list[Any], dict[str, bytes]]] = {}
    columns: list[tuple[str, str | None]] = [(r, r) for r in runners]
    if any("by" in p for p in phases_of(scenario)):
        columns.append(("mixed", None))
    for column, by in columns:
        unsupported_op = None
        try:
            ops: list[str] = []
            results = run_once(scenario, work, runners, by, ops=ops)
            outputs[column] = (without_journal_bookkeeping(comparable(results, ops)), snapshot(work))
            cells[column] = "ok"
        except Unsupported as e:
            unsupported_op = e.op
            reason = expected_na.get((name, column, e.op))
            if reason is not None:
                cells[column] = "n/a"
                notes.append(f"n/a [{column}] {e.op}: {reason}\t{name}")
            else:
                cells[column] = "FAIL"
                notes.append(
                    f"{name} [{column}] {e.runner} answered UNSUPPORTED_OP, which is no expected n/a (neither "
                    f"tests/scenarios/expected-na.json nor an --expected-na file lists this scenario, column and op): {e}"
                )
        except NotGiven as e:
            cells[column] = "skip"
            notes.append(f"skip [{column}] {e}\t{name}")
        except ScenarioError as e:
            cells[column] = "FAIL"
            notes.append(f"{name} [{column}] {e}")
        # A listed n/a that did not happen: the list must say what runners lack.
        for (s, c, op), reason in expected_na.items():
            if s == name and c == column and op != unsupported_op and cells[column] != "skip":
                cells[column] = "FAIL"
                notes.append(
                    f"{name} [{column}] was expected to answer UNSUPPORTED_OP to {op} ({reason}), "
                    f"and did not: remove it from the expected n/a cells"
                )
    # Every run that finished must match the first one byte for byte.
    done = [c for c, _ in columns if c in outputs]
    if done:
        ref = done[0]
        for other in done[1:]:
            diffs = [
                d
                for d in (
                    first_result_difference(outputs[ref][0], outputs[other][0]),
                    first_difference(outputs[ref][1], outputs[other][1]),
                )
                if d
            ]
            if diffs:
                diff = "\n  ".join(diffs)
                cells[other] = "DIFF"
                notes.append(f"{name} [{other}] differs from [{ref}]: {diff}")
    if work.exists():
        shutil.rmtree(work)
    return cells, notes


def print_table(rows: list[tuple[str, dict[str, str]]], columns: list[str]) -> None:
    width = max([len("scenario")] + [len(r) for r, _ in rows])
    print("scenario".ljust(width) + "".join(f"  {c:>6}" for c in columns))
    for name, cells in rows:
        print(name.ljust(width) + "".join(f"  {cells.get(c, '-'):>6}" for c in columns))


UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
MASK64 = (1 << 64) - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def deterministic_id(seed: int, n: int, ms: int) -> str:
    """Id number `n` of a deterministic run, made at clock reading `ms`
    (docs/FORMAT.md §21.5), written from the spec alone."""
    r = splitmix64(seed ^ n).to_bytes(8, "little") + (n & 0xFFFF).to_bytes(2, "little")
    b = ms.to_bytes(6, "big") + bytes([0x70 | (r[0] & 0x0F), r[1], 0x80 | (r[2] & 0x3F)]) + r[3:10]
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def generated_ids(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(generated_ids(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(generated_ids(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) and UUID7.fullmatch(value) else set()


def check_deterministic_ids(results: list[Any], det: dict[str, int]) -> str | None:
    """Every generated id in `results` is the one §21.5 gives for its number
    (its last two bytes) and its time (its first six), on the run's clock."""
    start, step, seed = det["startMs"], det.get("stepMs", 1), det.get("seed", 0)
    ids = generated_ids(results)
    for i in sorted(ids):
        raw = bytes.fromhex(i.replace("-", ""))
        n, ms = int.from_bytes(raw[14:16], "little"), int.from_bytes(raw[:6], "big")
        if deterministic_id(seed, n, ms) != i or (ms - start) % step or ms < start:
            return f"id {i} is not id {n} of the run at {ms} ms (startMs {start}, stepMs {step}, seed {seed})"
    return None if ids else "the run generated no ids"


def self_test(runners: dict[str, list[str]], base: Path) -> int:
    """The comparison must catch one runner writing different bytes: run a
    scenario twice with one runner, the second time with another id seed; then
    through two runners and copies of the first that differ in one byte of an
    answer, one byte of the store, or one op answered UNSUPPORTED_OP."""
    name = next(iter(runners))
    path = HERE / "create-append.json"
    scenario = json.loads(path.read_text(encoding="utf-8"))
    work = base / "work"
    results = run_once(scenario, work, runners, name)
    bad_id = check_deterministic_ids(results, scenario["store"]["deterministic"])
    if bad_id is not None:
        print(f"self-test FAILED: {name} does not make ids as docs/FORMAT.md §21.5 says: {bad_id}")
        return 1
    same = snapshot(work)
    seed = dict(scenario["store"]["deterministic"])
    seed["seed"] = seed.get("seed", 0) + 1
    run_once(scenario, work, runners, name, {"deterministic": seed})
    diff = first_difference(same, snapshot(work))
    if diff is None:
        print("self-test FAILED: a run with another id seed wrote the same bytes, unnoticed")
        return 1
    # One byte of one log line changed: named by file and line.
    tampered = dict(same)
    log = next(p for p in tampered if p.endswith(".jsonl"))
    tampered[log] = tampered[log].replace(b'"role":"user"', b'"role":"User"', 1)
    line = first_difference(same, tampered)
    if line is None or f"{log} line 3:" not in line:
        print(f"self-test FAILED: a changed byte in {log} was reported as {line!r}")
        return 1
    # The schemas see a member too many, one missing, and an unknown error kind.
    report: dict[str, Any] = {"skipped": [], "tornTail": None, "brokenChains": [], "duplicateIds": [], "unknownRecords": 0,
              "missingBlobs": [], "warnings": []}
    cases: list[tuple[dict[str, Any], bool]] = [
        ({"ok": report}, False),
        ({"ok": {**report, "extra": 1}}, True),
        ({"ok": {k: v for k, v in report.items() if k != "warnings"}}, True),
        ({"error": {"code": "NOPE", "message": ""}}, True),
    ]
    for answer, caught in cases:
        if (schemas().mismatch("read_report", answer) is not None) != caught:
            print(f"self-test FAILED: the result schema of read_report {'missed' if caught else 'refused'} {answer}")
            return 1
    failure = compare_self_test(runners, base, path)
    if failure is not None:
        print(f"self-test FAILED: {failure}")
        return 1
    print(f"self-test ok: ids as §21.5 says; another seed is caught ({diff.splitlines()[0]}); "
          f"a changed byte is named ({line.splitlines()[0]}); two runners and an unchanged copy match, "
          f"a one-byte difference in an answer or the store is DIFF, an unlisted n/a fails, a listed one passes; "
          f"the result schemas catch a wrong answer")
    return 0


# What `perturbed` changes: one byte of the answer to this op, or of the store.
PERTURBED_OP = "list_sessions"
UNSUPPORTED_IN_SELF_TEST = "read_report"


def compare_self_test(runners: dict[str, list[str]], base: Path, path: Path) -> str | None:
    """Two runners, and copies of the first that differ by one byte, through the
    same comparison as a real run (`run_scenario`); what went unnoticed."""
    names = list(runners)[:2]
    first = runners[names[0]]

    def copy(mode: str) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--perturbed", mode, "--", *first]

    # "lacks" and "listed" answer UNSUPPORTED_OP to one op; only "listed" and
    # "stale" are listed as n/a there, and "stale" does the op.
    listed = {(path.stem, c, UNSUPPORTED_IN_SELF_TEST): "self-test" for c in ("listed", "stale")}
    table = {n: runners[n] for n in names}
    table.update({"same": copy("none"), "differs": copy("answer+store"), "lacks": copy("unsupported"),
                  "listed": copy("unsupported"), "stale": copy("none")})
    cells, notes = run_scenario(path, table, base, listed)
    want = {**{n: "ok" for n in names}, "same": "ok", "differs": "DIFF", "lacks": "FAIL", "listed": "n/a", "stale": "FAIL"}
    said = "\n".join(notes)
    if cells != want:
        return f"expected cells {want}, got {cells}; notes:\n{said}"
    if f"[differs] differs from [{names[0]}]: result" not in said:
        return f"a changed byte in the answer to {PERTURBED_OP} was not named as a result:\n{said}"
    if ".jsonl line " not in said:
        return f"a changed byte in the store was not named by file and line:\n{said}"
    if "UNSUPPORTED_OP, which is no expected n/a" not in said:
        return f"an unlisted UNSUPPORTED_OP was not reported as such:\n{said}"
    if "[stale] was expected to answer UNSUPPORTED_OP" not in said:
        return f"a listed n/a whose runner did the op was not reported:\n{said}"
    return None


def flip_first_letter(value: Any) -> tuple[Any, bool]:
    """`value` with the case of the first ASCII letter of its first string that
    has one swapped (one byte), depth first; and whether one was found."""
    if isinstance(value, str):
        for i, ch in enumerate(value):
            if ch.isascii() and ch.isalpha():
                return value[:i] + ch.swapcase() + value[i + 1 :], True
        return value, False
    if isinstance(value, list):
        for i, v in enumerate(value):
            new, done = flip_first_letter(v)
            if done:
                return value[:i] + [new] + value[i + 1 :], True
    if isinstance(value, dict):
        for k, v in value.items():
            new, done = flip_first_letter(v)
            if done:
                return {**value, k: new}, True
    return value, False


def perturbed(mode: str, command: list[str]) -> int:
    """A runner for the self-test: passes every request to `command` and its
    answers back, except with "answer" in `mode` (modes joined by "+") one byte
    of the answer to PERTURBED_OP, with "store" one byte of the first session log
    (after the real runner exits), with "unsupported" an UNSUPPORTED_OP for
    UNSUPPORTED_IN_SELF_TEST; "none" changes nothing."""
    modes = set(mode.split("+"))
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
    assert proc.stdin is not None and proc.stdout is not None
    home: str | None = None
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "open_store":
            home = request["args"]["options"]["home"]
        if "unsupported" in modes and request["op"] == UNSUPPORTED_IN_SELF_TEST:
            answer = json.dumps({"error": {"code": "UNSUPPORTED_OP", "message": "the self-test's copy lacks it"}})
        else:
            proc.stdin.write(line)
            proc.stdin.flush()
            answer = proc.stdout.readline().rstrip("\n")
            if "answer" in modes and request["op"] == PERTURBED_OP:
                parsed = json.loads(answer)
                parsed["ok"], _ = flip_first_letter(parsed["ok"])
                answer = json.dumps(parsed, ensure_ascii=False)
        print(answer, flush=True)
    proc.stdin.close()
    rc = proc.wait()
    if "store" in modes and home is not None:
        log = sorted(Path(home).glob("projects/*/*.jsonl"))[0]
        log.write_bytes(log.read_bytes().replace(b'"role":"user"', b'"role":"User"', 1))
    return rc


def main() -> int:
    if sys.argv[1:2] == ["--perturbed"] and sys.argv[3:4] == ["--"]:
        return perturbed(sys.argv[2], sys.argv[4:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", action="append", default=[], metavar="NAME=COMMAND",
                    help="a runner and the command that starts it (shell words); repeatable")
    ap.add_argument("--self-test", action="store_true", help="check that the comparison catches a difference")
    ap.add_argument("--expected-na", action="append", default=[], type=Path, metavar="FILE",
                    help="more allowed n/a cells, as in tests/scenarios/expected-na.json (which always applies); repeatable")
    ap.add_argument("scenarios", nargs="*", type=Path, help="scenario files [default: tests/scenarios/*.json]")
    opts = ap.parse_args()
    runners: dict[str, list[str]] = {}
    for spec in opts.runner:
        name, sep, command = spec.partition("=")
        if not sep or not command:
            ap.error(f"--runner {spec!r}: expected NAME=COMMAND")
        if name in runners or name == "mixed":
            ap.error(f"--runner {spec!r}: the name {name!r} is taken (runner names must differ, and not be mixed)")
        # Runners start in the work directory: paths given relative to here are made absolute.
        runners[name] = [os.path.abspath(w) if os.path.exists(w) else w for w in shlex.split(command)]
    if not runners:
        ap.error("no runner given (--runner NAME=COMMAND)")
    if shutil.which("git") is None:
        print("git is needed to compare the file-history repositories", file=sys.stderr)
        return 2
    try:
        expected_na = load_expected_na([EXPECTED_NA, *opts.expected_na])
        check_readings_table()
        schemas()
    except (OSError, ValueError, ScenarioError) as e:
        print(f"tests/scenarios/run.py: {e}", file=sys.stderr)
        return 2
    base = Path(tempfile.mkdtemp(prefix="sk-scenarios-"))
    try:
        if opts.self_test:
            return self_test(runners, base)
        paths = opts.scenarios or scenario_files()
        rows: list[tuple[str, dict[str, str]]] = []
        notes: list[str] = []
        for path in paths:
            cells, scenario_notes = run_scenario(path, runners, base, expected_na)
            rows.append((path.stem, cells))
            notes.extend(scenario_notes)
            print(f"{path.stem}: " + " ".join(f"{c}={v}" for c, v in cells.items()), flush=True)
        columns = list(runners) + (["mixed"] if any("mixed" in c for _, c in rows) else [])
        print()
        print_table(rows, columns)
        print("(mixed: the phases of a hand-off scenario, each by the runner it names)")
        # Why a runner could not take part, once per reason.
        not_applicable: dict[str, list[str]] = {}
        for n in notes:
            if n.startswith(("n/a ", "skip ")):
                reason, _, scenario = n.partition("\t")
                not_applicable.setdefault(reason, []).append(scenario)
            else:
                print("\n" + n)
        for reason, scenarios in not_applicable.items():
            print(f"\n{reason}\n  ({', '.join(scenarios)})")
        failed = sum(v in ("FAIL", "DIFF") for _, c in rows for v in c.values())
        na = sum(v == "n/a" for _, c in rows for v in c.values())
        print(f"\n{len(rows)} scenarios, {len(runners)} runners: {failed} failed, {na} expected n/a")
        return 1 if failed else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
