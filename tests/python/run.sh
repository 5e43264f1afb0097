#!/usr/bin/env bash
# The Python package's tests, as a user meets the package: the sdist and the
# wheel built as a release builds them, into $CARGO_TARGET_DIR/dist/python, and
# that wheel installed into a virtualenv under the cargo target directory; then
# pytest (with LangGraph's checkpointer conformance suite), the OpenAI Agents
# SDK's session tests, `mypy --strict`, and mypy and pyright on a typed user program.
# The wheel is built from the sdist, the way pip builds it for a user whom no
# wheel fits, so one release build proves both: the sdist builds, and the wheel
# is an abi3 manylinux2014 x86_64 wheel, linked by zig against glibc 2.17
# whatever this machine's glibc is, and accepted by auditwheel.
# tests/packaging/python.sh installs these artifacts as the README says.
# Needs only Python >= 3.10 with pip, Rust, and the package registries.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target" # the wheel's build reuses the compiled dependencies
venv="$target/py-venv"            # the test virtualenv; tests/scenarios reuses it
tools="$target/py-build-venv"     # the build tools, kept out of the user's virtualenv
dist="$target/dist/python"        # the artifacts, which tests/packaging installs
python="${PYTHON:-python3}"

fail() { echo "tests/python/run.sh: $*" >&2; exit 1; }

for env in "$venv" "$tools"; do
    [ -x "$env/bin/python" ] || "$python" -m venv "$env"
done
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
# The versions the suite is tested with.
# pyright (which fetches its own Node.js on first use) checks the typed user program.
# pytest-asyncio runs the SDK's async tests (the version the SDK's uv.lock pins).
# LangGraph: the checkpointer's protocol, its conformance suite and real graphs;
# its SQLite and PostgreSQL savers for bindings/python/bench/langgraph_bench.py.
"${pip[@]}" install pytest==9.2.0 mypy==2.4.1 pyright==1.1.414 openai-agents==0.24.0 pytest-asyncio==1.4.0 \
    langgraph-checkpoint==4.3.2 langgraph-checkpoint-conformance==0.0.2 langgraph==1.2.24 \
    langgraph-checkpoint-sqlite==3.1.2 langgraph-checkpoint-postgres==3.2.0 "psycopg[binary]==3.3.9"
# ziglang is the linker and C compiler for glibc 2.17; auditwheel judges the wheel.
"$tools/bin/python" -m pip --disable-pip-version-check -q install \
    maturin==1.16.0 ziglang==0.15.2 auditwheel==6.8.2

rm -rf "$dist"
mkdir -p "$dist"

echo "-- sdist"
# The sdist's files carry the time of this build, not maturin's fixed date of
# 2006: cargo judges the core and the binding by their files' times, and older
# ones would let it reuse what it compiled from the last run's sources.
SOURCE_DATE_EPOCH="$(date +%s)" "$tools/bin/maturin" sdist --manifest-path bindings/python/Cargo.toml \
    --out "$dist" >/dev/null
sdists=("$dist"/sessionkit-*.tar.gz)
[[ ${#sdists[@]} = 1 && -f ${sdists[0]} ]] || fail "expected one sdist in $dist"
sdist="${sdists[0]}"
top="$(basename "$sdist" .tar.gz)"
files="$(tar -tzf "$sdist")"
# What a build from the sdist needs: the workspace's manifest and lock, the core
# (a path dependency outside bindings/python), the binding, the Python package.
for f in PKG-INFO pyproject.toml Cargo.toml Cargo.lock LICENSE-MIT LICENSE-APACHE \
    core/Cargo.toml core/src/lib.rs bindings/python/Cargo.toml bindings/python/src/lib.rs \
    python/sessionkit/__init__.py python/sessionkit/py.typed; do
    grep -qxF "$top/$f" <<<"$files" || fail "$sdist lacks $f"
done
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$sdist" -C "$unpacked"
for f in LICENSE-MIT LICENSE-APACHE; do
    grep -qxF "License-File: $f" "$unpacked/$top/PKG-INFO" || fail "the sdist's PKG-INFO does not name $f"
done
# maturin ships the workspace's Cargo.lock whole, with the packages of the
# members it leaves out (PyO3/maturin#2609), so the sdist cannot build --locked.
# Cargo then only drops those: every version it builds is one Cargo.lock pins.
cargo metadata -q --format-version 1 --manifest-path "$unpacked/$top/Cargo.toml" >/dev/null
pins() { awk '/^name = /{ n = $3 } /^version = /{ print n, $3 }' "$1" | sort; }
unpinned="$(comm -13 <(pins Cargo.lock) <(pins "$unpacked/$top/Cargo.lock"))"
[ -z "$unpinned" ] || fail "the sdist would build versions that Cargo.lock does not pin: $unpinned"
echo "$(basename "$sdist"): $(wc -l <<<"$files") files, core/ included, $(du -k "$sdist" | cut -f1) KiB"

echo "-- wheel, built from the sdist"
# pip builds it as for a user, with the tools virtualenv as if activated: its
# pinned maturin, and its zig, which maturin finds as `python3 -m ziglang`.
PATH="$tools/bin:$PATH" \
    MATURIN_PEP517_ARGS="--zig --compatibility manylinux2014 --auditwheel check" \
    "$tools/bin/python" -m pip --disable-pip-version-check -q wheel \
    --no-deps --no-build-isolation --wheel-dir "$dist" "$sdist"
wheels=("$dist"/sessionkit-*.whl)
[[ ${#wheels[@]} = 1 && -f ${wheels[0]} ]] || fail "expected one wheel in $dist"
wheel="${wheels[0]}"
expected="$top-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
[ "$(basename "$wheel")" = "$expected" ] || fail "the wheel is $(basename "$wheel"), not $expected"
# auditwheel's verdict is the most compatible tag that the wheel's symbols and
# libraries allow: it must be no newer than the one the wheel carries.
report="$("$tools/bin/auditwheel" show --json "$wheel")" || fail "auditwheel show failed on $wheel"
verdict="$("$tools/bin/python" -c '
import json, re, sys
report = json.loads(sys.argv[1])
tag = report.get("overall_tag", "")
glibc = re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", tag)
if glibc is None or (int(glibc[1]), int(glibc[2])) > (2, 17):
    sys.exit(f"auditwheel does not accept manylinux_2_17_x86_64: {report}")
libs = ", ".join(sorted(report["external_libs"])) or "none"
print(f"{tag}, external libraries: {libs}")
' "$report")" || fail "auditwheel rejects $(basename "$wheel")"
echo "$(basename "$wheel"): $(du -k "$wheel" | cut -f1) KiB; auditwheel show: $verdict"

# --force-reinstall: the version stays 0.1.0 while the code changes.
"${pip[@]}" install --force-reinstall --no-deps "$wheel"

cd "$root/tests/python"
# The tests must not import the package from the source tree by accident.
# Our tests run their event loops themselves (asyncio.run): not pytest-asyncio's.
"$venv/bin/python" -m pytest -q -p no:cacheprovider -p no:asyncio "$@"
# The SDK's session tests, from its sdist, judge the adapter.
bash "$root/tests/python/sdk/run.sh" "$venv/bin/python"
"$venv/bin/python" -m mypy --strict --no-incremental \
    "$root/bindings/python/python/sessionkit" "$root/tests/python"
# A user program that uses the results without casts, as mypy and pyright see it.
"$venv/bin/python" -m mypy --strict --no-incremental "$root/tests/python/typed_user.py"
"$venv/bin/pyright" --pythonpath "$venv/bin/python" "$root/tests/python/typed_user.py"
