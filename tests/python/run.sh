#!/usr/bin/env bash
# The Python package's tests, as a user meets the package: a fresh virtualenv
# under the cargo target directory, the package installed with the README's
# command (`pip install ./bindings/python`, which builds the native module with
# maturin), then pytest and `mypy --strict` on the package and the tests.
# Needs only Python >= 3.10 with pip, Rust, and the package registries.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target" # maturin builds where cargo does, incrementally
venv="$target/py-venv"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
# The versions the suite is tested with.
# pytest-asyncio runs the SDK's async tests (the version the SDK's uv.lock pins).
"${pip[@]}" install maturin==1.16.0 pytest==9.2.0 mypy==2.4.1 openai-agents==0.24.0 \
    pytest-asyncio==1.4.0
# --force-reinstall: the version stays 0.1.0 while the code changes.
"${pip[@]}" install --force-reinstall --no-deps ./bindings/python

cd "$root/tests/python"
# The tests must not import the package from the source tree by accident.
# Our tests run their event loops themselves (asyncio.run): not pytest-asyncio's.
"$venv/bin/python" -m pytest -q -p no:cacheprovider -p no:asyncio "$@"
# The SDK's session tests, from its sdist, judge the adapter.
bash "$root/tests/python/sdk/run.sh" "$venv/bin/python"
"$venv/bin/python" -m mypy --strict --no-incremental \
    "$root/bindings/python/python/sessionkit" "$root/tests/python"
