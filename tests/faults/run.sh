#!/usr/bin/env bash
# A crash and an I/O error at every file-system call of every operation, a
# durability audit, and simulated power losses (docs/RELIABILITY.md).
# Needs: strace (installed with apt-get if missing), python3.
#
# Short form (the test command): every crash point of every operation, I/O errors
# at up to FAULTS_MAX_N call numbers per system call, POWERLOSS_STATES simulated
# power losses. Long form:
#   FAULTS_MAX_N=0 POWERLOSS_STATES=10000 bash tests/faults/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v strace >/dev/null; then
    echo "strace missing: installing it (apt-get install -y strace)"
    (apt-get install -y strace || (apt-get update && apt-get install -y strace)) >/dev/null
fi

cargo build -q ${CARGO_LOCKED:+--locked} -p sessionkit-cli
cli="${CARGO_TARGET_DIR:-target}/debug/sessionkit"

echo "-- a crash at every call, I/O errors (once and persistent), the fsync audit"
python3 tests/faults/run.py --cli "$cli" --audit --modes crash --max-n 0
python3 tests/faults/run.py --cli "$cli" --modes error,persist --max-n "${FAULTS_MAX_N:-4}"

echo "-- simulated power loss (durability: always): no acknowledged message lost"
python3 tests/faults/powerloss.py --cli "$cli" --states "${POWERLOSS_STATES:-300}"
echo "-- the same with durability: never must lose some (the simulation can see a loss)"
python3 tests/faults/powerloss.py --cli "$cli" --states 60 --durability never >/dev/null
