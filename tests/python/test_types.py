"""The package's public signatures are typed without ``Any``, and every
result shape it exports is a TypedDict (a plain dict at run time)."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from pathlib import Path

import sessionkit

ANY = re.compile(r"\bAny\b")


def annotations_of(fn: Callable[..., object]) -> list[str]:
    sig = inspect.signature(fn)
    texts = [str(p.annotation) for p in sig.parameters.values()]
    return [*texts, str(sig.return_annotation)]


def test_no_any_in_the_public_signatures() -> None:
    checked = 0
    for name in sessionkit.__all__:
        obj = getattr(sessionkit, name)
        members: list[tuple[str, object]] = [(name, obj)]
        if inspect.isclass(obj) and not typing.is_typeddict(obj):
            members = [(f"{name}.{m}", v) for m, v in vars(obj).items() if not m.startswith("_")]
            members.append((f"{name}.__init__", vars(obj).get("__init__")))
        for where, member in members:
            if isinstance(member, property):
                member = member.fget
            if inspect.isfunction(member):
                assert not any(ANY.search(a) for a in annotations_of(member)), where
                checked += 1
        if typing.is_typeddict(obj):
            for field, hint in obj.__annotations__.items():
                assert not ANY.search(str(hint)), f"{name}.{field}"
    assert checked > 100


def test_no_any_in_the_native_stubs() -> None:
    stubs = Path(sessionkit.__file__).with_name("_native.pyi").read_text()
    assert not ANY.search(stubs)


def test_results_are_plain_dicts_of_their_shape(store: sessionkit.Store) -> None:
    info = store.info()
    assert type(info) is dict
    assert set(info) == set(sessionkit.StoreInfo.__annotations__)
    with store.create_session() as s:
        s.append({"role": "user", "content": "hi"})
        got = s.info()
    assert set(got) == set(sessionkit.SessionInfo.__annotations__)
    assert set(got["openReport"]) == set(sessionkit.ReadReport.__annotations__)
    entry_keys = set(sessionkit.IndexEntryDict.__annotations__)
    assert set(got["entry"]) == entry_keys - {"conversationId"}
    assert set(store.doctor()) == set(sessionkit.DoctorReport.__annotations__)
    assert set(store.gc()) == set(sessionkit.GcReport.__annotations__)
    assert set(store.search("hi")) == set(sessionkit.SearchResults.__annotations__)
