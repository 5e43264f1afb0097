#!/usr/bin/env python3
"""One version number across every manifest, and the licence files in every package.

    python3 tests/packaging/versions.py [--expect VERSION]

The version is the workspace's (`[workspace.package] version` in Cargo.toml).
Every crate inherits it or states it; Cargo.lock, the npm packages (the main one,
its platform packages and their optionalDependencies, package-lock.json), the
Python package (its version comes from Cargo through maturin, or is stated equal),
the C header's SK_VERSION and the CHANGELOG's newest section all say the same.
`--expect` (the release workflow passes the tag) must equal it too.
Every package directory carries LICENSE-MIT and LICENSE-APACHE identical to the
root's, because each registry packs only what is under the package.
"""
import glob
import json
import os
import re
import sys
import tomllib

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PACKAGE_DIRS = ["core", "bindings/cli", "bindings/python", "bindings/node", "ffi"]
LICENCES = ["LICENSE-MIT", "LICENSE-APACHE"]


def read(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def main() -> int:
    args = sys.argv[1:]
    expect = None
    if args[:1] == ["--expect"] and len(args) == 2:
        expect = args[1]
    elif args:
        raise SystemExit(__doc__)

    package_dirs = list(PACKAGE_DIRS)  # and each npm platform package, found below
    problems: list[str] = []
    workspace = tomllib.loads(read("Cargo.toml"))
    version = workspace["workspace"]["package"]["version"]
    seen: list[str] = [f"Cargo.toml [workspace.package]: {version}"]

    def check(where: str, found: object) -> None:
        seen.append(f"{where}: {found}")
        if found != version:
            problems.append(f"{where} says {found!r}, the workspace says {version!r}")

    if expect is not None:
        check("--expect", expect)

    core_dep = workspace["workspace"]["dependencies"]["sessionkit"]
    check("Cargo.toml [workspace.dependencies] sessionkit", core_dep.get("version"))

    crate_names = set()
    for member in workspace["workspace"]["members"]:
        manifest = tomllib.loads(read(f"{member}/Cargo.toml"))
        package = manifest["package"]
        crate_names.add(package["name"])
        v = package.get("version")
        if v != {"workspace": True}:
            check(f"{member}/Cargo.toml", v)
    lock = tomllib.loads(read("Cargo.lock"))
    for package in lock["package"]:
        if package["name"] in crate_names and "source" not in package:
            check(f"Cargo.lock {package['name']}", package["version"])

    node = json.loads(read("bindings/node/package.json"))
    check("bindings/node/package.json", node["version"])
    for name, spec in sorted(node.get("optionalDependencies", {}).items()):
        if name.startswith("@sessionkit/"):
            check(f"bindings/node/package.json optionalDependencies {name}", spec)
    node_lock = json.loads(read("bindings/node/package-lock.json"))
    check("bindings/node/package-lock.json", node_lock["version"])
    check("bindings/node/package-lock.json packages['']", node_lock["packages"][""]["version"])
    for path in sorted(glob.glob(os.path.join(ROOT, "bindings/node/npm/*/package.json"))):
        rel = os.path.relpath(path, ROOT)
        check(rel, json.loads(read(rel))["version"])
        package_dirs.append(os.path.dirname(rel))

    project = tomllib.loads(read("bindings/python/pyproject.toml"))["project"]
    if "version" in project.get("dynamic", []):
        seen.append("bindings/python/pyproject.toml: dynamic (from Cargo.toml through maturin)")
    else:
        check("bindings/python/pyproject.toml", project.get("version"))

    header = re.search(r'^#define SK_VERSION "([^"]*)"$', read("include/sessionkit.h"), re.M)
    check("include/sessionkit.h SK_VERSION", header.group(1) if header else None)

    changelog_text = read("CHANGELOG.md") if os.path.isfile(os.path.join(ROOT, "CHANGELOG.md")) else ""
    changelog = re.findall(r"^## \[([^\]]+)\]", changelog_text, re.M)
    released = [v for v in changelog if v != "Unreleased"]
    check("CHANGELOG.md newest version", released[0] if released else None)

    for directory in [""] + package_dirs:
        for name in LICENCES:
            rel = os.path.join(directory, name)
            if not os.path.isfile(os.path.join(ROOT, rel)):
                problems.append(f"{rel} is missing")
            elif read(rel) != read(name):
                problems.append(f"{rel} differs from the root's {name}")
    seen.append(f"{' and '.join(LICENCES)} in: . {' '.join(package_dirs)}")

    for line in seen:
        print(f"  {line}")
    if problems:
        for p in problems:
            print(f"versions.py: {p}", file=sys.stderr)
        return 1
    print(f"one version, {version}, across {len(seen) - 1} places; licence files in {len(package_dirs) + 1} directories")
    return 0


if __name__ == "__main__":
    sys.exit(main())
