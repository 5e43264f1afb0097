#!/usr/bin/env bash
# Build the C library and install it under a prefix, as `make install` would:
#   PREFIX/include/sessionkit.h
#   PREFIX/lib/libsessionkit.so.ABI (named by its soname), libsessionkit.so (a link), libsessionkit.a
#   PREFIX/lib/pkgconfig/sessionkit.pc
# after which a C program builds with `pkg-config --cflags --libs sessionkit` alone
# (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig when PREFIX is not a system one).
#
#   bash ffi/install.sh --prefix DIR [--libdir DIR] [--profile release|dev]
#
# The soname is libsessionkit.so.<SK_ABI_VERSION> (include/sessionkit.h): it
# changes only when the C ABI does, so programs built against this library keep
# loading newer ones of the same ABI. DESTDIR is honoured, for packagers:
# the files go to $DESTDIR$PREFIX while sessionkit.pc names $PREFIX.
# Needs the Rust toolchain (cargo) and a C linker; CARGO_LOCKED=1 adds --locked.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

prefix=""
libdir=""
profile="release"
usage() { echo "usage: $0 --prefix DIR [--libdir DIR] [--profile release|dev]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || usage; prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        --libdir) [ $# -ge 2 ] || usage; libdir="$2"; shift 2 ;;
        --libdir=*) libdir="${1#*=}"; shift ;;
        --profile) [ $# -ge 2 ] || usage; profile="$2"; shift 2 ;;
        --profile=*) profile="${1#*=}"; shift ;;
        -h|--help) usage ;;
        *) echo "$0: unknown argument '$1'" >&2; usage ;;
    esac
done
[ -n "$prefix" ] || { echo "$0: --prefix DIR is required (for example --prefix \"\$HOME/.local\" or --prefix /usr/local)" >&2; exit 2; }
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
libdir="${libdir:-$prefix/lib}"
case "$libdir" in /*) ;; *) echo "$0: --libdir must be an absolute path, not '$libdir'" >&2; exit 2 ;; esac
case "$profile" in
    release) profile_dir=release ;;
    dev) profile_dir=debug ;;
    *) echo "$0: --profile must be release or dev, not '$profile'" >&2; exit 2 ;;
esac

header="$repo/include/sessionkit.h"
abi="$(sed -n 's/^#define SK_ABI_VERSION \([0-9][0-9]*\)$/\1/p' "$header")"
version="$(sed -n 's/^#define SK_VERSION "\(.*\)"$/\1/p' "$header")"
[ -n "$abi" ] && [ -n "$version" ] || { echo "$0: no SK_ABI_VERSION or SK_VERSION in $header" >&2; exit 1; }
soname="libsessionkit.so.$abi"

# `cargo rustc` hands the soname to the final link of this crate only: the
# dependencies are the same build as `cargo build -p sessionkit-ffi`'s.
(cd "$repo" && cargo rustc -q -p sessionkit-ffi --lib --profile "$profile" ${CARGO_LOCKED:+--locked} \
    -- -C "link-arg=-Wl,-soname,$soname")
target="$(cd "$repo" && cargo metadata --format-version 1 --no-deps ${CARGO_LOCKED:+--locked} |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
built="$target/$profile_dir"
for f in libsessionkit.so libsessionkit.a; do
    [ -f "$built/$f" ] || { echo "$0: the build left no $built/$f" >&2; exit 1; }
done

dest_include="${DESTDIR:-}$prefix/include"
dest_lib="${DESTDIR:-}$libdir"
install -d "$dest_include" "$dest_lib/pkgconfig"
install -m 644 "$header" "$dest_include/sessionkit.h"
install -m 755 "$built/libsessionkit.so" "$dest_lib/$soname"
ln -sfn "$soname" "$dest_lib/libsessionkit.so"
install -m 644 "$built/libsessionkit.a" "$dest_lib/libsessionkit.a"
if [ "$libdir" = "$prefix/lib" ]; then pc_libdir='${prefix}/lib'; else pc_libdir="$libdir"; fi
bash "$repo/ffi/pkg-config.sh" "$prefix" '${prefix}/include' "$pc_libdir" >"$dest_lib/pkgconfig/sessionkit.pc"

echo "installed sessionkit $version (soname $soname) under ${DESTDIR:-}$prefix:"
echo "  $dest_include/sessionkit.h"
echo "  $dest_lib/$soname, libsessionkit.so -> $soname, libsessionkit.a"
echo "  $dest_lib/pkgconfig/sessionkit.pc"
case ":${PKG_CONFIG_PATH:-}:" in
    *":$libdir/pkgconfig:"*) ;;
    *) echo "pkg-config finds it with: export PKG_CONFIG_PATH=\"$libdir/pkgconfig\"" ;;
esac
