#!/usr/bin/env bash
# The dev-profile build the suites run their programs from: the libraries of the
# workspace (the C ABI's shared and static library among them), the CLI and the
# examples (the reference scenario runner), with the core's `remote` feature.
# Cargo unifies the dependencies' features over the packages and targets of one
# command, so `cargo build -p sessionkit-ffi` would compile the dependencies
# again with other features than `cargo test --workspace` does. Every suite
# builds with this one selection (the whole workspace, its dev-dependencies
# active through the examples) and reuses what the others compiled.
#   bash tests/build.sh                 # the artifacts above
#   bash tests/build.sh --planted-bugs  # the CLI and the scenario runner with the
#                                       # fault harness's planted bugs compiled in
# Prints where the artifacts are: the cargo target directory's debug/.
# CARGO_LOCKED=1 adds --locked.
set -euo pipefail
cd "$(dirname "$0")/.."

features=sessionkit/remote
targets=(--lib --bins --examples)
case "${1:-}" in
    "") ;;
    --planted-bugs)
        # Only what the fault harness runs: the planted bugs change the core, and
        # so every program built on it.
        features+=,sessionkit/planted-bugs
        targets=(--bin sessionkit --example scenario_runner) ;;
    *) echo "tests/build.sh: unknown argument ${1}; expected nothing or --planted-bugs" >&2; exit 2 ;;
esac
cargo build -q ${CARGO_LOCKED:+--locked} --workspace --features "$features" "${targets[@]}"
target="$(cargo metadata --format-version 1 --no-deps ${CARGO_LOCKED:+--locked} |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
[ -n "$target" ] || { echo "tests/build.sh: cargo metadata gave no target directory" >&2; exit 1; }
echo "$target/debug"
