"""A user program typed as users write it: results used without casts, list
results iterated, errors caught by class. ``mypy --strict`` and pyright both
check it (tests/python/run.sh); test_typed_user.py runs it."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import sessionkit
from sessionkit import (
    BusyError,
    InvalidInputError,
    MemoryEntry,
    SearchResults,
    SessionEntry,
    SessionkitError,
    StoreInfo,
)


def main(root: Path) -> list[str]:
    seen: list[str] = []
    project = root / "project"
    project.mkdir()
    with sessionkit.Store(project, home=root / "home", durability="never") as store:
        info: StoreInfo = store.info()
        seen.append(info["projectCode"])
        with store.create_session(title="Typed") as s:
            stored = s.user_input({"role": "user", "content": "Why is CI red?"})
            parent: str = stored["id"]
            for result in s.append_groups([[{"role": "assistant", "content": "A flaky test."}]]):
                if isinstance(result, SessionkitError):
                    seen.append(f"refused: {result.code}")
                else:
                    seen.extend(str(m.get("content")) for m in result)
            try:
                store.open_session(s.id)
            except BusyError as e:
                seen.append(e.code)
            plan = s.select_compaction(10)
            if plan is not None:
                seen.append(str(plan["tokensBefore"]))
            for candidate in s.undo_candidates():
                seen.append(candidate["messageId"][:4] + str(candidate["stats"]["linesAdded"]))
            preview = s.rewind_preview(parent)
            seen.append(str(preview["head"]["from"] is not None))
            for item in s.responses_items(limit=5):
                seen.append(str(item.get("role")))
        entries: list[SessionEntry] = store.list_sessions()
        for entry in entries:
            seen.append(f"{entry.title} {entry.status.value} {entry.message_count} {entry.log_bytes}")
            seen.append(entry.raw["createdAt"][:4])
        view = store.read_session(entries[0].id)
        for node in view.tree():
            seen.append(f"{node['role']}:{node['children']}")
        for m in view.iter_model_view(last_n=1):
            seen.append(str(m.get("role")))
        memory: MemoryEntry = store.add_memory("style", "Use tabs.")
        seen.append(f"{memory['name']} {memory['bytes']}")
        results: SearchResults = store.search("flaky")
        for hit in results["hits"]:
            seen.append(f"{hit['sessionId'] == entries[0].id} {hit['score'] > 0}")
        settings = store.settings()
        for source in settings["sources"]:
            seen.append(f"{source['source']}={source['status']}")
        report = store.doctor()
        seen.append(f"ok={report['ok']} logs={len(report['logs'])}")
        gc = store.gc()
        seen.append(f"trash={len(gc['trashPurged'])} blobs={gc['blobs']['blobsRemoved']}")
        try:
            store.export_session(entries[0].id, "pdf")
        except InvalidInputError as e:
            seen.append(e.code)
    return seen


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for line in main(Path(tmp)):
            print(line)
    sys.exit(0)
