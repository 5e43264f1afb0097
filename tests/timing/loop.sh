#!/usr/bin/env bash
# The tests that once depended on timing (leases, followers, a killed push,
# the event loop beside a 200 MiB resume, threads overlapping in the core, group
# commit), run N times in a row, optionally beside a CPU-heavy job on every core.
# A run stops at the first failure and names it.
#
#   bash tests/timing/loop.sh [N] [--load]
#
# N defaults to 20. --load keeps every core busy with a release build of the
# workspace (into its own target directory, started again when it ends) for as
# long as the loop runs. Needs what the test command builds first (cargo's test
# binaries, the Python virtualenv $target/py-venv or $PYTHON, the Node addon and
# bindings/node/node_modules) and a PostgreSQL server: SESSIONKIT_TEST_PG and
# SESSIONKIT_TEST_PG_DIR, as tests/run-all.sh sets them; SESSIONKIT_REQUIRE_PG=1
# is exported here, so a test without its server fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

n=20
load=0
for a in "$@"; do
    case "$a" in
        --load) load=1 ;;
        [0-9]*) n="$a" ;;
        *) echo "usage: $0 [N] [--load]" >&2; exit 2 ;;
    esac
done
: "${SESSIONKIT_TEST_PG:?is not set: start a server with tests/pg/server.sh (see README)}"
: "${SESSIONKIT_TEST_PG_DIR:?is not set: the directory tests/pg/server.sh start printed}"
export SESSIONKIT_REQUIRE_PG=1
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
python="${PYTHON:-$target/py-venv/bin/python}"
[ -x "$python" ] || { echo "$0: no Python at $python (run tests/python/run.sh, or set PYTHON)" >&2; exit 1; }

if [ "$load" = 1 ]; then
    hog_target="$(mktemp -d)"
    # Its own process group (setsid), so that stopping it stops the compilers.
    setsid bash -c 'while :; do
        rm -rf "$1/release"
        CARGO_TARGET_DIR="$1" cargo build -q --release --workspace \
            --features sessionkit/remote >/dev/null 2>&1 || true
    done' hog "$hog_target" &
    hog=$!
    trap 'kill -TERM -- -"$hog" 2>/dev/null; wait "$hog" 2>/dev/null; rm -rf "$hog_target"' EXIT
    sleep 20 # the build is past resolving and compiling on every core
fi

suite() { # name, command...
    local name="$1"
    shift
    if ! "$@" >"$log" 2>&1; then
        tail -n 60 "$log"
        echo "FAILED in run $i of $n: $name" >&2
        exit 1
    fi
}

log="$(mktemp)"
start=$SECONDS
for i in $(seq 1 "$n"); do
    suite "Rust: core remote" cargo test -q -p sessionkit --features remote --test remote
    suite "Rust: core group commit" cargo test -q -p sessionkit --features remote \
        --test concurrency threads_share_a_session_with_group_commit
    suite "Rust: CLI remote" cargo test -q -p sessionkit-cli --test remote
    suite "Python: remote, concurrency, thread overlap, aio" \
        bash -c "cd tests/python && '$python' -m pytest -q -p no:cacheprovider -p no:asyncio \
            test_remote.py test_concurrency.py test_aio.py \
            test_api.py::test_threads_overlap_in_disk_work"
    suite "Node: concurrency, follow, remote" \
        bash -c "cd tests/node && node --test concurrency.test.mjs follow.test.mjs remote.test.mjs"
    echo "run $i of $n passed ($((SECONDS - start)) s so far)"
done
rm -f "$log"
echo "all $n runs passed$([ "$load" = 1 ] && echo ", beside a release build on every core") in $((SECONDS - start)) s"
