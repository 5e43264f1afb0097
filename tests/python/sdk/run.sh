#!/usr/bin/env bash
# The OpenAI Agents SDK's own session tests, run against SessionkitSession.
#
# The pinned SDK's sdist (PyPI, its hash checked) ships its test suite; it is
# downloaded under the cargo target directory, unpacked afresh, and pytest runs
# its tests/memory/test_session.py and test_session_limit.py, and the runner
# tests listed in also.txt, with our plugin (sqlite_stand_in.py), which puts
# SessionkitSession where the tests build a SQLiteSession. No code of the SDK
# is kept in this repository: only the plugin, also.txt and excluded.txt (the
# tests about SQLite's internals, with reasons).
#
# Usage: tests/python/sdk/run.sh <python of the virtualenv that has sessionkit,
# openai-agents==0.24.0 and pytest installed> [pytest arguments...]
# Called by tests/python/run.sh. Fails when the download fails, when the hash
# differs, or when no test ran.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
python="$1"
shift

version=0.24.0
sha256=4b4b285f4fed81fdf1b4ac426a9101658d9cd29b4fb1aaeee18f639b77e704e3

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
dir="$target/openai-agents-sdist"
mkdir -p "$dir"

# pip checks the hash (--require-hashes needs a requirements file) and reuses
# an sdist it already downloaded when the hash matches.
printf 'openai-agents==%s --hash=sha256:%s\n' "$version" "$sha256" >"$dir/requirements.txt"
if ! "$python" -m pip --disable-pip-version-check -q download --no-deps \
    --no-binary :all: --require-hashes -r "$dir/requirements.txt" -d "$dir"; then
    echo "could not download the openai-agents $version sdist from PyPI (its tests judge the adapter)" >&2
    exit 1
fi
sdist="$dir/openai_agents-$version.tar.gz"
[ -f "$sdist" ] || { echo "pip downloaded no $sdist" >&2; exit 1; }

src="$dir/openai_agents-$version"
rm -rf "$src"
tar -xzf "$sdist" -C "$dir"
tests=(tests/memory/test_session.py tests/memory/test_session_limit.py)
for t in "${tests[@]}"; do
    [ -f "$src/$t" ] || { echo "the sdist has no $t" >&2; exit 1; }
done
while read -r id; do
    case "$id" in '' | '#'*) continue ;; esac
    tests+=("tests/$id") # pytest stops on a node id it cannot find
done <"$here/also.txt"

# The SDK's own pytest configuration (its pyproject: asyncio_mode = auto, its
# markers) with our warnings policy in place of its list: every warning is an
# error, as in tests/python/pytest.ini. Its `agents` is the installed package,
# not the sdist's src/ (not on the path). Our plugin is loaded by name.
cd "$src"
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" "$python" -m pytest -q \
    -p no:cacheprovider -p sqlite_stand_in \
    -o filterwarnings=error \
    -rs \
    "${tests[@]}" "$@"
