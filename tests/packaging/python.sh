#!/usr/bin/env bash
# The Python package as a new user meets it: the README's install line and its
# Python quick-start, run verbatim (tests/packaging/quickstart.py extracts them)
# in a fresh virtualenv, in an empty working directory, with a fresh HOME (so a
# fresh ~/.sessionkit) and no Rust toolchain on PATH. Only the registry is
# replaced: pip finds the wheel that tests/python/run.sh built in
# $CARGO_TARGET_DIR/dist/python, and may not build anything from source.
# Checks what the quick-start prints, where its store went, that the wheel
# installed is that one, and that it carries the licence files.
#   bash tests/packaging/python.sh     (after bash tests/python/run.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
dist="$target/dist/python"
python="${PYTHON:-python3}"

fail() { echo "tests/packaging/python.sh: $*" >&2; exit 1; }

wheels=("$dist"/sessionkit-*.whl)
[ -f "${wheels[0]}" ] || fail "no wheel in $dist: run bash tests/python/run.sh first, which builds it"
[ "${#wheels[@]}" = 1 ] || fail "more than one wheel in $dist: ${wheels[*]}"
wheel="$(basename "${wheels[0]}")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/home" "$work/app"
"$python" tests/packaging/quickstart.py python-install >"$work/install.sh"
"$python" tests/packaging/quickstart.py python >"$work/app/app.py"
"$python" -m venv "$work/venv"

. "$root/tests/packaging/lib.sh"
path="$(no_rust_path)"
assert_no_rust "$path"

echo "-- python: the README's install line, pip offline, PATH without Rust ($path):"
sed 's/^/   /' "$work/install.sh"
# As the user's shell would be: the virtualenv activated, HOME theirs, no
# pip configuration or sessionkit variable of this machine's.
(
    cd "$work/app"
    unset SESSIONKIT_HOME PYTHONPATH
    export HOME="$work/home" PATH="$path" PIP_CONFIG_FILE=/dev/null
    # shellcheck disable=SC1091
    . "$work/venv/bin/activate"
    if command -v cargo >/dev/null || command -v rustc >/dev/null; then
        fail "cargo or rustc is still on PATH: $(command -v cargo rustc | tr '\n' ' ')"
    fi
    PIP_NO_INDEX=1 PIP_FIND_LINKS="$dist" PIP_ONLY_BINARY=sessionkit PIP_DISABLE_PIP_VERSION_CHECK=1 \
        "$BASH" -e "$work/install.sh"

    echo "-- python: the README's quick-start, as app.py in an empty directory"
    out="$(python app.py)" || fail "the quick-start failed: $out"
    printf '%s\n' "$out" | sed 's/^/   /'
    [ "$out" = "user Fix the failing test" ] ||
        fail "the quick-start printed '$out', not 'user Fix the failing test'"

    # The store where the quick-start's comment says it is.
    projects=("$HOME"/.sessionkit/projects/*/)
    [[ -d ${projects[0]} && ${#projects[@]} = 1 ]] ||
        fail "expected one project under ~/.sessionkit/projects, found: ${projects[*]}"

    # The wheel installed is the one built, from site-packages, with the licences.
    python - "$wheel" "$root" <<'EOF'
import filecmp
import sys
from importlib.metadata import distribution
from pathlib import Path

import sessionkit

wheel, root = sys.argv[1], Path(sys.argv[2])
dist = distribution("sessionkit")
site = Path(str(dist.locate_file(""))).resolve()
if not Path(sessionkit.__file__).resolve().is_relative_to(site):
    sys.exit(f"sessionkit was imported from {sessionkit.__file__}, not from {site}")
# The tags of the wheel's file name, expanded, are those the installed WHEEL lists.
name, version, pys, abis, plats = wheel.removesuffix(".whl").split("-")
expected = {f"{p}-{a}-{t}" for p in pys.split(".") for a in abis.split(".") for t in plats.split(".")}
wheel_file = (dist.read_text("WHEEL") or "").splitlines()
installed = {line.removeprefix("Tag: ") for line in wheel_file if line.startswith("Tag: ")}
if (dist.metadata["Name"], dist.version) != (name, version) or installed != expected:
    sys.exit(f"installed {dist.metadata['Name']} {dist.version} tagged {sorted(installed)}, not {wheel}")
named = sorted(dist.metadata.get_all("License-File") or [])
if named != ["LICENSE-APACHE", "LICENSE-MIT"]:
    sys.exit(f"the metadata names the licence files {named}, not LICENSE-APACHE and LICENSE-MIT")
licences = [f for f in dist.files or [] if f.parent.name == "licenses" and f.parent.parent.name.endswith(".dist-info")]
if sorted(f.name for f in licences) != named:
    sys.exit(f"the dist-info holds the licence files {[str(f) for f in licences]}, not {named}")
for f in licences:
    if not filecmp.cmp(dist.locate_file(f), root / f.name, shallow=False):
        sys.exit(f"{f} differs from the repository's {f.name}")
print(f"-- python: installed {wheel} into site-packages, tagged {', '.join(sorted(installed))}")
print(f"   licences in the dist-info, as the repository's: {', '.join(str(f) for f in licences)}")
print(f"   License-Expression: {dist.metadata['License-Expression']}")
EOF
    echo "   store: ~/.sessionkit/projects/$(basename "${projects[0]}")/ (HOME=$HOME)"
)
echo "-- python: install line and quick-start passed"
