#!/usr/bin/env bash
# Write sessionkit.pc (pkg-config) for a cargo build of the C ABI.
#   bash tests/c/make-pc.sh [profile-dir]     # default: <cargo target dir>/debug
# The target directory is cargo's own ($CARGO_TARGET_DIR, a .cargo/config
# setting, or ./target). The file goes into the profile directory, next to
# libsessionkit.{so,a}:
#   PKG_CONFIG_PATH=<profile-dir> pkg-config --cflags --libs sessionkit
#   PKG_CONFIG_PATH=<profile-dir> pkg-config --static --cflags --libs sessionkit
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
if [ $# -ge 1 ]; then
    profile="$1"
else
    target="$(cd "$repo" && cargo metadata --format-version 1 --no-deps ${CARGO_LOCKED:+--locked} |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    [ -n "$target" ] || { echo "make-pc.sh: cargo metadata gave no target directory" >&2; exit 1; }
    profile="$target/debug"
fi
libdir="$(cd "$profile" && pwd)"
bash "$repo/ffi/pkg-config.sh" "$repo" '${prefix}/include' "$libdir" >"$libdir/sessionkit.pc"
echo "$libdir/sessionkit.pc"
