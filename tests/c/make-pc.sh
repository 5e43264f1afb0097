#!/usr/bin/env bash
# Write sessionkit.pc (pkg-config) for a cargo build of the C ABI.
#   bash tests/c/make-pc.sh [profile-dir]     # default: target/debug
# The file goes into the profile directory, next to libsessionkit.{so,a}:
#   PKG_CONFIG_PATH=target/debug pkg-config --cflags --libs sessionkit
#   PKG_CONFIG_PATH=target/debug pkg-config --static --cflags --libs sessionkit
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
libdir="$(cd "${1:-$repo/target/debug}" && pwd)"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml")"
cat >"$libdir/sessionkit.pc" <<PC
prefix=$repo
includedir=\${prefix}/include
libdir=$libdir

Name: sessionkit
Description: Crash-safe session store for coding agents (C ABI)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lsessionkit
Libs.private: -lz -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
echo "$libdir/sessionkit.pc"
