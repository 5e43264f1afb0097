"""Every operation of the Rust facade, reachable from C, Python and Node.

Reads the facade from core/src/api/*.rs (each `pub fn` of the public handles),
the C functions from include/sessionkit.h, the Python package as imported and
the Node package as required (tests/parity/node-surface.cjs), and finds each
operation in every interface: by name where the interfaces follow the naming
rule (`sk_<handle>_<op>`, `op`, `opInCamelCase`), else by the table below. An
operation that an interface leaves out is listed in RUST_ONLY with the reason.

It then checks that Python and Node agree on which parameters have defaults
(the count of arguments a call needs), and that every default the Python API
states for a parameter named in the core's table equals the table's value.

Prints the table; with --check-doc FILE, fails unless FILE holds it verbatim
between the markers (docs/ARCHITECTURE.md); --write-doc FILE rewrites it.

Usage: python tests/parity/parity.py [--check-doc F | --write-doc F]
(run with the Python that has sessionkit installed; `node` on PATH).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import sessionkit
from sessionkit import _native

ROOT = Path(__file__).resolve().parents[2]

# The handles of the facade and their prefix in the C ABI.
HANDLES = {
    "Store": "sk_store_",
    "Session": "sk_session_",
    "Subagent": "sk_subagent_",
    "SessionView": "sk_view_",
    "Remote": "sk_remote_",
}

# Operations the facade has for Rust hosts only, with why.
RUST_ONLY = {
    "Store.options": "the options the store was opened with: the host passed them",
    "Store.blobs": "the blob store's handle, for the core's own layers",
    "Store.index_path": "a path inside the store, for tests and the CLI's doctor",
    "Store.read_index": "the raw index file, for tests",
    "Store.gc_with_progress": "gc with a Rust progress callback (the CLI's progress bar)",
    "Store.gc_blobs": "one phase of gc, for the CLI's maintenance commands",
    "Store.gc_all": "gc of every project, for the CLI",
    "Store.gc_temp_files": "one phase of gc, for the CLI",
    "Store.deterministic_state": "the fixed clock's state between CLI processes (FORMAT §21.5)",
    "Session.store": "the store a session belongs to: a binding's handle keeps its own",
    "SessionView.log": "the loaded log, hidden, for the test suites",
    "RemoteOptions.from_json": "parses the options the bindings pass as JSON",
}

# Operations an interface reaches otherwise than by the naming rule: a name,
# or "name: how" when another call carries it.
C_NAMES = {
    "Store.create_session": "sk_session_create",
    "Store.open_session": "sk_session_open",
    "Store.open_shared": "sk_session_open_shared",
    "Store.open_conversation": "sk_session_open_conversation",
    "Store.open_or_create_session": "sk_session_open_or_create",
    "Store.fork_session": "sk_session_fork",
    "Store.project_root": "sk_store_info: projectRoot",
    "Store.dir": "sk_store_info: dir",
    "Store.project_code": "sk_store_info: projectCode",
    "Store.add_memory": "sk_store_memory_write",
    "Store.update_memory": "sk_store_memory_write: replace",
    "Store.delete_memory": "sk_store_memory_delete",
    "Store.list_memories": "sk_store_memory_list",
    "Store.read_memory": "sk_store_memory_read",
    "Store.checkpoint_put_task_writes": "sk_checkpoint_put_writes",
    "Session.is_shared": "sk_session_open_shared: the handle's kind",
    "Session.path": "sk_session_info: path",
    "Session.head": "sk_session_info: head",
    "Session.entry": "sk_session_info: entry",
    "Session.open_report": "sk_session_info: openReport",
    "Session.pruned": "sk_session_info: pruned",
    "Session.patch_message": "sk_session_patch",
    "Session.ensure_unchanged_since_read": "sk_session_ensure_unchanged",
    "Session.close": "sk_session_close",
    "SessionView.ui_view": "sk_view_ui",
    "SessionView.model_view": "sk_view_model",
    "SessionView.head": "sk_view_info: head",
    "SessionView.header": "sk_view_info: header",
    "SessionView.report": "sk_view_info: report",
    "SessionView.message_count": "sk_view_info: messageCount",
    "SessionView.records": "sk_view_info: records",
    "Remote.connect": "sk_remote_open",
    "Remote.push_with": "sk_remote_push: with a lease",
}
SAVER = "integrations.langgraph.SessionkitSaver"
PY_NAMES = {
    "Store.open": "Store.__init__",
    "Session.ensure_unchanged_since_read": "Session.ensure_unchanged",
    "Session.is_shared": "Session.shared",
    "Remote.connect": "Remote.__init__",
    "Remote.push_with": "Remote.push: with a lease",
    "<free>.import": "import_transcripts",
    "Store.checkpoint_put": f"{SAVER}.put",
    "Store.checkpoint_put_writes": f"{SAVER}.put_writes",
    "Store.checkpoint_put_task_writes": f"{SAVER}.put_writes",
    "Store.checkpoint_get": f"{SAVER}.get_tuple",
    "Store.checkpoint_list": f"{SAVER}.list",
    "Store.checkpoint_delete_thread": f"{SAVER}.delete_thread",
    "Store.checkpoint_copy_thread": f"{SAVER}.copy_thread",
    "Store.checkpoint_prune": f"{SAVER}.prune",
    "Store.checkpoint_delete_for_runs": f"{SAVER}.delete_for_runs",
    "Store.checkpoint_delta_history": f"{SAVER}.get_delta_channel_history",
}
NODE_NAMES = {
    "Store.open": "Store.static open",
    "Session.ensure_unchanged_since_read": "Session.ensureUnchanged",
    "Session.is_shared": "Session.shared",
    "Session.path": "Session.info: path",
    "Session.entry": "Session.info: entry",
    "Session.open_report": "Session.info: openReport",
    "Session.pruned": "Session.info: pruned",
    "Session.append_groups": "Session.append: concurrent calls go as groups",
    "Subagent.append_groups": "Subagent.append: concurrent calls go as groups",
    "Store.project_root": "Store.info: projectRoot",
    "Store.dir": "Store.info: dir",
    "SessionView.head": "SessionView.info: head",
    "SessionView.header": "SessionView.info: header",
    "SessionView.report": "SessionView.info: report",
    "SessionView.message_count": "SessionView.info: messageCount",
    "Remote.connect": "Store.connectRemote",
    "Remote.push_with": "Remote.push: with a lease",
    "Store.checkpoint_put_task_writes": "Store.checkpointPutWrites",
    "<free>.import": "importTranscripts",
}

# Constructors: the receiver is an argument in one interface and not in another.
NO_ARITY = {"Store.open", "Remote.connect"}


def facade() -> list[tuple[str, str]]:
    """(handle, op) for every `pub fn` of the facade's handles."""
    ops: list[tuple[str, str]] = []
    for path in sorted((ROOT / "core/src/api").glob("*.rs")):
        handle: str | None = None
        for line in path.read_text().splitlines():
            m = re.match(r"^impl(?:<[^>]*>)? (\w+)(?:<[^>]*>)? \{", line)
            if m:
                handle = m.group(1)
                continue
            if re.match(r"^impl\b", line) or line.startswith("#[cfg(test)]"):
                handle = None
                continue
            m = re.match(r"^    pub fn (\w+)", line)
            if m and handle:
                ops.append((handle, m.group(1)))
            m = re.match(r"^pub fn (\w+)", line)
            if m:
                ops.append(("<free>", m.group(1)))
    return ops


def c_functions() -> set[str]:
    header = (ROOT / "include/sessionkit.h").read_text()
    return set(re.findall(r"\b(sk_\w+)\(", header))


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def swapped(name: str) -> list[str]:
    """`create_session` -> `session_create`: the C ABI puts the noun first."""
    parts = name.split("_")
    return ["_".join(parts[i:] + parts[:i]) for i in range(1, len(parts))]


def find_c(key: str, handle: str, op: str, have: set[str]) -> str | None:
    if key in C_NAMES:
        return C_NAMES[key] if C_NAMES[key].split(":")[0] in have else None
    prefix = HANDLES.get(handle, "sk_")
    for name in [op, *swapped(op)]:
        for p in (prefix, "sk_"):
            if p + name in have:
                return p + name
    return None


def split_top(text: str) -> list[str]:
    """`text` split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def dts_required(path: Path) -> dict[str, int]:
    """`Class.method` (and module functions) -> the arguments its declaration in
    index.d.ts requires: those without `?`, a default or `...`."""
    text = path.read_text()
    out: dict[str, int] = {}
    owner = ""
    for m in re.finditer(
        r"^export declare class (\w+)|^export declare function (\w+)\(|^  (?:static )?(?:async )?(\w+)\(",
        text,
        re.M,
    ):
        if m.group(1):
            owner = m.group(1)
            continue
        name = m.group(2) or m.group(3)
        start = m.end()
        depth, i = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params = split_top(text[start : i - 1])
        need = sum(1 for p in params if not p.strip().startswith("...") and "?" not in p.split(":")[0])
        out[f"{owner}.{name}" if m.group(3) else name] = need
    return out


def py_member(cls: object, name: str) -> object | None:
    return inspect.getattr_static(cls, name, None)


def find_py(key: str, handle: str, op: str) -> tuple[str, object] | None:
    target = PY_NAMES.get(key)
    if target is None:
        target = f"{handle}.{op}" if handle != "<free>" else op
    owner, _, name = target.split(":")[0].rpartition(".")
    holder: object = sessionkit
    for part in owner.split(".") if owner else []:
        if part == "integrations":
            importlib.import_module("sessionkit.integrations.langgraph")
        holder = getattr(holder, part, None)
        if holder is None:
            return None
    member = py_member(holder, name) if owner else getattr(holder, name, None)
    return (target, member) if member is not None else None


def find_node(key: str, handle: str, op: str, surface: dict) -> tuple[str, object] | None:
    target = NODE_NAMES.get(key)
    if target is None:
        target = f"{handle}.{camel(op)}" if handle != "<free>" else camel(op)
    ref = target.split(":")[0]
    owner, _, name = ref.partition(".") if "." in ref else ("", "", ref)
    if owner:
        members = surface["classes"].get(owner, {})
        return (target, members[name]) if name in members else None
    return (target, surface["functions"][name]) if name in surface["functions"] else None


def py_required(member: object) -> int | None:
    """Arguments a call must pass (None for a property)."""
    f = member.fget if isinstance(member, property) else member
    if isinstance(member, property):
        return None
    if isinstance(f, (staticmethod, classmethod)):
        f = f.__func__
    try:
        sig = inspect.signature(f)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return sum(
        1
        for p in sig.parameters.values()
        if p.name != "self"
        and p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


def py_defaults(member: object) -> dict[str, object]:
    f = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
    try:
        sig = inspect.signature(f)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.default is not inspect.Parameter.empty
    }


# Python parameter names whose default the core's table states.
TABLE_KEYS = {
    "scope": "memoryScope",
    "keep_last_turns": "keepLastTurns",
    "summary_tokens": "summaryTokens",
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check-doc", type=Path)
    ap.add_argument("--write-doc", type=Path)
    ap.add_argument("--node-package", type=Path, default=ROOT / "bindings/node")
    args = ap.parse_args()

    node = subprocess.run(
        ["node", str(ROOT / "tests/parity/node-surface.cjs"), str(args.node_package)],
        check=True,
        capture_output=True,
        text=True,
    )
    surface = json.loads(node.stdout)
    have_c = c_functions()
    dts = dts_required(args.node_package / "index.d.ts")
    table = json.loads(_native.defaults())
    problems: list[str] = []
    rows: list[tuple[str, str, str, str]] = []
    for handle, op in facade():
        key = f"{handle}.{op}"
        if key in RUST_ONLY:
            rows.append((key, "—", "—", "— " + RUST_ONLY[key]))
            continue
        c = find_c(key, handle, op, have_c)
        py = find_py(key, handle, op)
        js = find_node(key, handle, op, surface)
        for iface, found in (("C", c), ("Python", py), ("Node", js)):
            if not found:
                problems.append(f"{key}: not reachable from {iface}")
        if py and js and key not in NO_ARITY and ":" not in py[0] + js[0]:
            need_py = py_required(py[1])
            need_js = dts.get(js[0].replace("static ", ""))
            if py[0].startswith(SAVER):
                need_py = None
            if need_js is not None and need_py is not None and need_py != need_js:
                problems.append(
                    f"{key}: Python {py[0]} needs {need_py} arguments, Node {js[0]} needs {need_js}"
                )
        if py:
            for name, value in py_defaults(py[1]).items():
                want_key = TABLE_KEYS.get(name)
                if key == "Store.export_session" and name == "format":
                    want_key = "exportFormat"
                elif key == "Store.search" and name == "limit":
                    want_key = "searchLimit"
                elif key == "Remote.push_in_background" and name == "interval":
                    want_key = "pushIntervalMs"
                    value = round(value * 1000) if isinstance(value, float) else value
                elif key.endswith("rewind_turns") and name in ("turns", "mode"):
                    want_key = "rewindTurns" if name == "turns" else "rewindTurnsMode"
                elif name == "mode" and "rewind" in op:
                    want_key = "rewindMode"
                if want_key and want_key in table["defaults"]:
                    got = getattr(value, "value", value)
                    if got != table["defaults"][want_key]:
                        problems.append(
                            f"{key}: Python's default {name}={got!r}, the core's {want_key} is "
                            f"{table['defaults'][want_key]!r}"
                        )
        rows.append((key, c or "MISSING", py[0] if py else "MISSING", js[0] if js else "MISSING"))

    lines = ["| Rust | C | Python | Node |", "|---|---|---|---|"]
    lines += [f"| `{k}` | `{c}` | `{p}` | `{n}` |".replace("`—`", "—").replace("`— ", "— ").replace(" |`", " |") for k, c, p, n in rows]
    text = "\n".join(lines) + "\n"
    print(text)

    begin, end = "<!-- parity table: tests/parity/parity.py -->\n", "<!-- end of parity table -->\n"
    if args.write_doc:
        doc = args.write_doc.read_text()
        a, b = doc.index(begin) + len(begin), doc.index(end)
        args.write_doc.write_text(doc[:a] + text + doc[b:])
    if args.check_doc:
        doc = args.check_doc.read_text()
        if begin + text + end not in doc:
            problems.append(
                f"{args.check_doc} does not hold this table: run tests/parity/parity.py --write-doc {args.check_doc}"
            )
    for p in problems:
        print("parity:", p, file=sys.stderr)
    print(f"{len(rows)} operations; {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
