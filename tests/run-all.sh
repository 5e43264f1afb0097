#!/usr/bin/env bash
# Every test suite of sessionkit, as CI runs it. Installs nothing by hand that a
# fresh machine lacks without saying so: each step names what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== [%s s] %s\n' "$SECONDS" "$*"; }

# A clean checkout builds every suite once: incremental compilation would only
# add gigabytes of caches that no second build reads.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target"
free_kib="$(df -Pk "$target" | awk 'NR == 2 { print $4 }')"
if [ "${free_kib:-0}" -lt $((10 * 1024 * 1024)) ]; then
  echo "warning: $((free_kib / 1024)) MiB free under $target; a clean build of every suite takes about 4 GiB" >&2
fi

step "format (cargo fmt --check)"
cargo fmt --all -- --check

step "lint (cargo clippy -D warnings)"
# Every binding enables the core's `remote` feature: one pass over the workspace,
# with it named, checks the core as the bindings build it (the crate without the
# feature is built by the packaging step's `cargo publish --dry-run`); the
# test-only `planted-bugs` is named too, so that the fault harness's planted bug
# is linted like the rest.
cargo clippy --workspace --all-targets --features sessionkit/remote,sessionkit/planted-bugs --locked -- -D warnings

step "API docs (cargo doc -D warnings: every public item documented, links resolve)"
RUSTDOCFLAGS="-D warnings" cargo doc -p sessionkit --no-deps --locked

step "PostgreSQL for the remote suites (tests/pg/server.sh: a temporary server, removed at exit)"
# Every suite below that tests sharing through PostgreSQL reads SESSIONKIT_TEST_PG
# (a libpq connection string) and SESSIONKIT_TEST_PG_DIR (to stop and restart it;
# its tls/ holds the certificates the TLS tests connect with over TCP). Run on
# its own, a Python or C test without them is reported as skipped;
# SESSIONKIT_REQUIRE_PG=1 makes it fail instead, so that here it cannot pass
# without its server.
pg_dir="$(bash tests/pg/server.sh start --tls)"
trap 'bash tests/pg/server.sh stop "$pg_dir"' EXIT
SESSIONKIT_TEST_PG="$(bash tests/pg/server.sh url "$pg_dir")"
export SESSIONKIT_TEST_PG SESSIONKIT_TEST_PG_DIR="$pg_dir" SESSIONKIT_REQUIRE_PG=1
echo "$SESSIONKIT_TEST_PG"

step "Rust tests"
# The README's example, run as a doc test, opens the default store: keep it out of
# the user's ~/.sessionkit.
# The core's `remote` feature is named (every binding enables it too), so its
# PostgreSQL suite runs here against the server above, in the same build.
# tests/build.sh builds what the later steps run with the same feature selection
# as this one, so that no step compiles the dependencies again.
CARGO_LOCKED=1 bash tests/build.sh >/dev/null
SESSIONKIT_HOME="$(mktemp -d)" cargo test --workspace --features sessionkit/remote --locked

step "Benches, short form: the search and growth benches run to the end at a small size"
# A bench that no longer runs is found here, not when its figures are next
# taken. Their long forms, and the figures, are in docs/BENCHMARKS.md.
bench_bin="$(CARGO_LOCKED=1 bash tests/build.sh)"
bench_dir="$(mktemp -d)"
"$bench_bin/examples/search_bench" "$bench_dir/search" 16 300 >/dev/null
"$bench_bin/examples/growth_bench" "$bench_dir/growth" 50 >/dev/null
rm -rf "$bench_dir"

step "C ABI: header, C tests under ASan and valgrind, examples (tests/c/run.sh)"
CARGO_LOCKED=1 bash tests/c/run.sh

step "Python package: sdist, manylinux wheel from it, pytest, mypy --strict (tests/python/run.sh)"
bash tests/python/run.sh

step "Node package: npm ci, addon built by its build script, node --test (tests/node/run.sh)"
CARGO_LOCKED=1 bash tests/node/run.sh

step "Parity: every operation of the Rust facade in C, Python and Node, same defaults (tests/parity/parity.py)"
# The wheel installed by the Python step and the addon built by the Node step;
# fails when docs/ARCHITECTURE.md's table is stale.
"$target/py-venv/bin/python" tests/parity/parity.py --check-doc docs/ARCHITECTURE.md

step "Packaging: every artifact installed as its users install it, README quick-starts verbatim (tests/packaging/run.sh)"
# The wheel and the addon of the two steps above are the ones installed.
CARGO_LOCKED=1 bash tests/packaging/run.sh

step "Scenarios: every interface writes byte-identical stores (tests/scenarios/run.sh)"
# The Python virtualenv and the Node addon of the two steps above are reused.
CARGO_LOCKED=1 SCENARIOS_REUSE_BUILDS=1 bash tests/scenarios/run.sh

step "Faults: a crash and an I/O error at every file-system call, power loss (tests/faults/run.sh)"
CARGO_LOCKED=1 bash tests/faults/run.sh

step "demo runs"
# The CLI of tests/build.sh (built again without the fault step's planted bugs).
SESSIONKIT_HOME="$(mktemp -d)" "$(CARGO_LOCKED=1 bash tests/build.sh)/sessionkit" demo >/dev/null

echo
echo "all suites passed"
