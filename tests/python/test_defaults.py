"""The Python package takes its enums and defaults from the core's table
(``sessionkit.defaults()``), so that C, Python and Node agree."""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable

import sessionkit
from sessionkit._types import JsonValue

TABLE = sessionkit.defaults()


def table(part: str) -> dict[str, JsonValue]:
    got = TABLE[part]
    assert isinstance(got, dict)
    return got


ENUMS: dict[str, type[enum.Enum]] = {
    "durability": sessionkit.Durability,
    "status": sessionkit.Status,
    "rewindMode": sessionkit.RewindMode,
    "exportFormat": sessionkit.ExportFormat,
    "importFormat": sessionkit.ImportFormat,
    "exportTarget": sessionkit.ExportTarget,
    "memoryScope": sessionkit.MemoryScope,
    "settingSource": sessionkit.SettingSource,
}


def test_every_enum_has_the_values_of_the_core_table() -> None:
    enums = table("enums")
    for name, cls in ENUMS.items():
        assert [m.value for m in cls] == enums[name], name
    assert list(sessionkit.errors._BY_CODE) == enums["errorKind"]
    # The table names no enum the package lacks (bar the writable subset).
    assert set(enums) - set(ENUMS) == {"writableSettingSource", "errorKind"}


def param_default(fn: Callable[..., object], param: str) -> object:
    default = inspect.signature(fn).parameters[param].default
    assert default is not inspect.Parameter.empty, f"{fn.__qualname__}({param}) has no default"
    return default.value if isinstance(default, enum.Enum) else default


# Every default of the public API, by the key of the core's table.
DEFAULTED: list[tuple[str, Callable[..., object], str]] = [
    ("project", sessionkit.Store.__init__, "project"),
    ("memoryScope", sessionkit.Store.add_memory, "scope"),
    ("memoryScope", sessionkit.Store.update_memory, "scope"),
    ("memoryScope", sessionkit.Store.delete_memory, "scope"),
    ("memoryScope", sessionkit.Store.list_memories, "scope"),
    ("memoryScope", sessionkit.Store.read_memory, "scope"),
    ("exportFormat", sessionkit.Store.export_session, "format"),
    ("rewindMode", sessionkit.Session.rewind, "mode"),
    ("rewindMode", sessionkit.Session.rewind_preview, "mode"),
    ("rewindTurns", sessionkit.Session.rewind_turns, "turns"),
    ("rewindTurnsMode", sessionkit.Session.rewind_turns, "mode"),
    ("keepLastTurns", sessionkit.Session.select_compaction, "keep_last_turns"),
    ("summaryTokens", sessionkit.Session.select_compaction, "summary_tokens"),
    ("searchLimit", sessionkit.Store.search, "limit"),
]


def test_every_default_of_the_api_is_the_core_tables() -> None:
    defaults = table("defaults")
    for key, fn, param in DEFAULTED:
        assert param_default(fn, param) == defaults[key], (key, fn.__qualname__, param)
    interval = param_default(sessionkit.Remote.push_in_background, "interval")
    ms = defaults["pushIntervalMs"]
    assert isinstance(ms, int) and interval == ms / 1000
    # Each key the brief lists for every binding is used above.
    used = {key for key, _, _ in DEFAULTED} | {"pushIntervalMs"}
    assert used == set(defaults) - {"storeOptions", "leaseTtlMs"}


def test_defaults_is_a_fresh_copy_of_the_table() -> None:
    a = sessionkit.defaults()
    a["enums"] = None
    assert sessionkit.defaults() == TABLE != a
