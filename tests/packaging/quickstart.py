#!/usr/bin/env python3
"""Print a quick-start of the README, verbatim, so the packaging tests run exactly
what a user copies.

    python3 tests/packaging/quickstart.py NAME [README]

A quick-start is the fenced code block right after a `<!-- quickstart: NAME -->`
line. A name that is missing, repeated, or not followed by a fenced block is an
error, so a README edit cannot silently drop a quick-start from the tests.
"""
import re
import sys


def quickstart(text: str, name: str) -> str:
    marker = re.compile(r"^<!-- quickstart: (\S+) -->\n", re.M)
    found = [m for m in marker.finditer(text) if m.group(1) == name]
    if not found:
        names = sorted({m.group(1) for m in marker.finditer(text)})
        raise SystemExit(f"quickstart.py: no quick-start named {name!r} (there are: {', '.join(names)})")
    if len(found) > 1:
        raise SystemExit(f"quickstart.py: {len(found)} quick-starts named {name!r}")
    rest = text[found[0].end():].lstrip("\n")
    block = re.match(r"```[^\n]*\n(.*?)^```\n", rest, re.S | re.M)
    if block is None:
        raise SystemExit(f"quickstart.py: the quick-start {name!r} is not followed by a fenced code block")
    return block.group(1)


def main() -> None:
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    path = sys.argv[2] if len(sys.argv) == 3 else "README.md"
    with open(path, encoding="utf-8") as f:
        sys.stdout.write(quickstart(f.read(), sys.argv[1]))


if __name__ == "__main__":
    main()
