#!/usr/bin/env bash
# The scenarios of tests/scenarios/*.json, replayed by every interface's runner
# (docs/FORMAT.md §21): Rust (core/examples/scenario_runner.rs), C
# (runners/runner.c against the shared library), Python and Node (runners/
# through the installed packages) and the CLI (runners/cli_runner.py). Each
# scenario's store must come out byte-identical from every runner; the table of
# scenarios x runners is printed. A runner may answer UNSUPPORTED_OP only
# where tests/scenarios/expected-na.json lists it (n/a); anywhere else the run
# fails. The driver's self-test runs first, through two runners and copies of
# the first that differ by one byte (answer, store) or lack one op: each must
# be caught, and a store written with another id seed must fail the comparison.
#   bash tests/scenarios/run.sh [SCENARIO.json ...]
# Reuses the Python virtualenv of tests/python/run.sh and the Node addon of
# tests/node/run.sh when SCENARIOS_REUSE_BUILDS=1 (tests/run-all.sh runs those
# first); otherwise installs and builds them the same way. Needs what those
# two need, plus gcc and git.
#
# Another implementation's runner (docs/FORMAT.md §21.6), against the
# reference (the Rust runner, built here if needed) over every scenario:
#   bash tests/scenarios/run.sh --runner NAME='COMMAND' [--expected-na FILE] [SCENARIO.json ...]
# Paths are taken from the directory it is called in. Needs cargo, Python >= 3.10
# and git; nothing else is built.
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/../.."
root="$PWD"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target"
out="$target/scenarios"
mkdir -p "$out"
venv="$target/py-venv"

# The driver checks every answer against tests/scenarios/schemas/ with jsonschema
# (any version with draft 2020-12: the Python suite's packages may have brought one).
need_jsonschema() {
    [ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
    if ! "$venv/bin/python" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null; then
        echo "-- jsonschema into $venv"
        "$venv/bin/python" -m pip --disable-pip-version-check -q install jsonschema==4.26.0
    fi
}

kit=
for a in "$@"; do case "$a" in --runner | --runner=*) kit=1 ;; esac; done
if [ -n "$kit" ]; then
    echo "-- build: the reference runner (core/examples/scenario_runner.rs)"
    cargo build -q ${CARGO_LOCKED:+--locked} -p sessionkit --example scenario_runner
    need_jsonschema
    echo "-- scenarios: $* against the reference (rust)"
    cd "$caller"
    exec "$venv/bin/python" "$root/tests/scenarios/run.py" --runner "rust=$target/debug/examples/scenario_runner" "$@"
fi

echo "-- build: the Rust runner, the C library, the CLI (tests/build.sh)"
lib="$(bash tests/build.sh)"
gcc -std=c11 -g -Wall -Wextra -Werror -Iinclude -Itests/c tests/scenarios/runners/runner.c \
    -L"$lib" -lsessionkit -Wl,-rpath,"$lib" -o "$out/runner_c"

if [ "${SCENARIOS_REUSE_BUILDS:-}" != 1 ] || [ ! -x "$venv/bin/python" ]; then
    echo "-- Python package: pip install ./bindings/python into $venv"
    [ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip --disable-pip-version-check -q install maturin==1.16.0
    "$venv/bin/python" -m pip --disable-pip-version-check -q install --force-reinstall --no-deps ./bindings/python
fi

need_jsonschema

pkg="$root/bindings/node"
# The addon the build script makes: sessionkit.<platform>.node (napi-rs's name).
addons() { compgen -G "$pkg/sessionkit.*.node" || true; }
if [ "${SCENARIOS_REUSE_BUILDS:-}" != 1 ] || [ -z "$(addons)" ]; then
    echo "-- Node package: npm ci and the addon's build script in bindings/node"
    (cd "$pkg" &&
        npm ci --cache "$target/npm-cache" --no-audit --no-fund --ignore-scripts --loglevel=error &&
        node build.js --debug)
fi
# A library that imports zlib takes the host's when the host exports one (Node
# does), and its file-history packs then differ by interface: zlib is linked in.
native="$("$venv/bin/python" -c 'import sessionkit._native as n; print(n.__file__)')"
mapfile -t node_addons < <(addons)
for so in "$lib/libsessionkit.so" "${node_addons[@]}" "$native"; do
    if nm -D --undefined-only "$so" | grep -qwE 'deflate|inflate'; then
        echo "$so imports zlib: it must be linked statically (libz-sys feature static)" >&2
        exit 1
    fi
done

# The runner imports the package by name, as a user does.
mkdir -p tests/scenarios/runners/node_modules
ln -sfn "$pkg" tests/scenarios/runners/node_modules/sessionkit

runners=(
    --runner "rust=$lib/examples/scenario_runner"
    --runner "python=$venv/bin/python tests/scenarios/runners/runner.py"
    --runner "node=node tests/scenarios/runners/runner.mjs"
    --runner "c=$out/runner_c"
    --runner "cli=$venv/bin/python tests/scenarios/runners/cli_runner.py $lib/sessionkit"
)
if "$venv/bin/python" -c 'import mypy' 2>/dev/null; then
    echo "-- mypy --strict on the driver and the Python runners"
    "$venv/bin/python" -m mypy --strict --no-incremental tests/scenarios/run.py \
        tests/scenarios/runners/runner.py tests/scenarios/runners/cli_runner.py
fi
echo "-- driver self-test (through the Rust and Python runners)"
"$venv/bin/python" tests/scenarios/run.py --self-test "${runners[@]:0:4}"
echo "-- scenarios"
"$venv/bin/python" tests/scenarios/run.py "${runners[@]}" "$@"
