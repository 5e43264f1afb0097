#!/usr/bin/env bash
# A crash and an I/O error at every file-system call of every operation, a
# durability audit, and simulated power losses (docs/RELIABILITY.md).
# Needs: strace (installed with apt-get if missing), python3, and for the `pull`
# operation the PostgreSQL server of tests/pg/server.sh in SESSIONKIT_TEST_PG
# (without it pull is reported as skipped; with SESSIONKIT_REQUIRE_PG=1, as the
# test command sets, the run fails instead).
#
# Short form (the test command): every crash point of every operation, I/O errors
# at up to FAULTS_MAX_N call numbers per system call, POWERLOSS_STATES simulated
# power losses, and the self-check: with a bug planted in the CLI (the cargo
# feature `planted-bugs`, compiled into this build only), the harness must fail
# and name the acknowledged message it lost. Long form:
#   FAULTS_MAX_N=0 POWERLOSS_STATES=10000 bash tests/faults/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v strace >/dev/null; then
    echo "strace missing: installing it (apt-get install -y strace)"
    (apt-get install -y strace || (apt-get update && apt-get install -y strace)) >/dev/null
fi

# The fault-test build: the CLI with the planted bugs compiled in, each off
# unless its SESSIONKIT_PLANT_BUG value is set (no normal build has them).
cli="$(bash tests/build.sh --planted-bugs)/sessionkit"
unset SESSIONKIT_PLANT_BUG

echo "-- a crash at every call, I/O errors (once and persistent), the fsync audit"
python3 tests/faults/run.py --cli "$cli" --audit --modes crash --max-n 0
python3 tests/faults/run.py --cli "$cli" --modes error,persist --max-n "${FAULTS_MAX_N:-4}"

echo "-- self-check: a planted bug that drops an acknowledged append after EINTR must fail the run"
set +e
out="$(SESSIONKIT_PLANT_BUG=drop-acked-append python3 tests/faults/run.py --cli "$cli" \
    --ops append,batch --modes error --errnos EINTR --max-n 0 2>&1)"
rc=$?
set -e
if [ "$rc" -eq 0 ] || ! grep -q "acknowledged messages lost from" <<<"$out"; then
    echo "$out"
    echo "FAIL: with SESSIONKIT_PLANT_BUG=drop-acked-append the harness exited $rc" \
        "without naming the lost acknowledged message" >&2
    exit 1
fi
grep -m 2 "acknowledged messages lost from" <<<"$out"
echo "   (the planted bug was seen: the harness exited $rc)"

echo "-- simulated power loss (durability: always): no acknowledged message lost"
python3 tests/faults/powerloss.py --cli "$cli" --states "${POWERLOSS_STATES:-300}"
echo "-- the same with durability: never must lose some (the simulation can see a loss)"
python3 tests/faults/powerloss.py --cli "$cli" --states 60 --durability never >/dev/null
