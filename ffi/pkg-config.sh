#!/usr/bin/env bash
# Print sessionkit.pc (pkg-config) for a library in LIBDIR and sessionkit.h in
# INCLUDEDIR. Used by ffi/install.sh (an installed prefix) and tests/c/make-pc.sh
# (a cargo build in place).
#   bash ffi/pkg-config.sh PREFIX INCLUDEDIR LIBDIR > sessionkit.pc
# INCLUDEDIR and LIBDIR may be written relative to ${prefix}, as in
# '${prefix}/include', so that a relocated prefix keeps working when the
# installer rewrites the first line.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PREFIX INCLUDEDIR LIBDIR" >&2; exit 2; }
repo="$(cd "$(dirname "$0")/.." && pwd)"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml")"
[ -n "$version" ] || { echo "$0: no version in $repo/Cargo.toml [workspace.package]" >&2; exit 1; }
cat <<PC
prefix=$1
includedir=$2
libdir=$3

Name: sessionkit
Description: Crash-safe session store for coding agents (C ABI)
Version: $version
URL: https://github.com/sessionkit/sessionkit
Cflags: -I\${includedir}
Libs: -L\${libdir} -lsessionkit
Libs.private: -lz -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
