#!/usr/bin/env bash
# C tests of the C ABI: the header alone (C99, C11, C++11, C++17), the C test
# program linked against the shared and the static library, each run under
# AddressSanitizer and under valgrind, the C++ wrapper's tests (ASan, valgrind)
# and its coverage of the header, and the C and C++ examples.
#   bash tests/c/run.sh            # builds with tests/build.sh
# Builds and writes its programs in cargo's target directory ($CARGO_TARGET_DIR,
# a .cargo/config setting, or ./target).
# Needs: gcc, g++, pkg-config, valgrind (installed with apt-get if missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$(pwd)"

# A fresh machine has gcc but may lack these two: install them from Debian's packages.
for tool in valgrind pkg-config; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool missing: installing it (apt-get install -y $tool)"
        (apt-get install -y "$tool" || (apt-get update && apt-get install -y "$tool")) >/dev/null
    fi
done

libdir="$(bash tests/build.sh)"
target="$(dirname "$libdir")"
out="$target/ctest"
rm -rf "$out" && mkdir -p "$out"
bash tests/c/make-pc.sh "$libdir" >/dev/null
export PKG_CONFIG_PATH="$libdir"
cflags="$(pkg-config --cflags sessionkit)"
libs_shared="$(pkg-config --libs sessionkit) -Wl,-rpath,$libdir"
libs_static="$libdir/libsessionkit.a $(pkg-config --static --libs-only-l sessionkit | sed 's/-lsessionkit//')"
warn="-Wall -Wextra -Werror"


# The header states C99 and C++11 as its minimum.
echo "-- header alone: C99, C11, C++11, C++17 (-pedantic $warn)"
for std in c99 c11; do
    gcc -std=$std -pedantic $warn $cflags tests/c/header_c.c $libs_shared -o "$out/header_$std"
done
for std in c++11 c++17; do
    g++ -std=$std -pedantic $warn $cflags tests/c/header_cpp.cpp $libs_shared -o "$out/header_$std"
done

echo "-- build the C tests (shared and static, with and without ASan)"
src="tests/c/test_sessionkit.c"
gcc -std=c11 -g $warn $cflags "$src" $libs_shared -pthread -o "$out/t_shared"
gcc -std=c11 -g $warn $cflags "$src" $libs_static -pthread -o "$out/t_static"
gcc -std=c11 -g -fsanitize=address -fno-omit-frame-pointer $warn $cflags "$src" $libs_shared -pthread -o "$out/t_shared_asan"
gcc -std=c11 -g -fsanitize=address -fno-omit-frame-pointer $warn $cflags "$src" $libs_static -pthread -o "$out/t_static_asan"

echo "-- build the C++ wrapper's tests (C++11 with ASan, C++17 for valgrind)"
cxx_src="tests/c/test_wrapper.cpp"
cxx_inc="-Iffi/examples/cpp"
g++ -std=c++11 -g -fsanitize=address -fno-omit-frame-pointer $warn $cflags $cxx_inc "$cxx_src" $libs_shared -o "$out/w_asan"
g++ -std=c++17 -g $warn $cflags $cxx_inc "$cxx_src" $libs_shared -o "$out/w_plain"

# Each run adds its test cases to the totals: a test program's own
# "N passed, M failed" line, or 1 for a program without one (header, examples).
passed=0
failed=0
run() { # name, command...
    local name="$1"; shift
    echo "-- $name"
    local rc=0
    "$@" >"$out/$name.log" 2>&1 || rc=$?
    local line p f
    line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/$name.log" | tail -n 1 || true)"
    if [ -n "$line" ]; then
        p="${line%% passed*}"; f="${line#*, }"; f="${f%% failed*}"
    else
        p=$((rc == 0 ? 1 : 0)); f=$((rc == 0 ? 0 : 1))
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # e.g. a leak found after the tests
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -eq 0 ]; then
        echo "   ${line:-ok}"
    else
        cat "$out/$name.log"
        echo "FAILED: $name (exit $rc)"
    fi
}
for std in c99 c11 c++11 c++17; do
    run "header-$std" "$out/header_$std"
done
# Every function of the header has a method in the C++ wrapper.
wrapper_covers_header() {
    local fns missing=""
    fns="$(grep -v '^ *//' include/sessionkit.h | grep -oE '[ *]sk_[a-z_0-9]+\(' | tr -d ' *(' | sort -u)"
    for f in $fns; do
        grep -qE "[^a-z_]$f\(" ffi/examples/cpp/sessionkit.hpp || missing="$missing $f"
    done
    if [ -n "$missing" ]; then
        echo "not called by ffi/examples/cpp/sessionkit.hpp:$missing"
        return 1
    fi
    echo "$(echo "$fns" | wc -l) functions, all wrapped"
}
run cpp-wrapper-covers-header wrapper_covers_header
fixtures="$repo/tests/fixtures"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
# Known leaks of dependencies (not of sessionkit), by name: see the .supp files.
export LSAN_OPTIONS="suppressions=$repo/tests/c/lsan.supp:print_suppressions=0"
run asan-shared "$out/t_shared_asan" "$fixtures"
run asan-static "$out/t_static_asan" "$fixtures"
vg="valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible --suppressions=$repo/tests/c/valgrind.supp --quiet"
run valgrind-shared $vg "$out/t_shared" "$fixtures"
run valgrind-static $vg "$out/t_static" "$fixtures"
run cpp-wrapper-asan "$out/w_asan"
run cpp-wrapper-valgrind $vg "$out/w_plain"

# fork() right after snapshots, with the pack merge running: no child may hang
# (SESSIONKIT_FORK_ITERATIONS for a long run). The short runs under ASan (with
# LeakSanitizer) and valgrind also check the two pack writers (merge and gc)
# for leaks.
fas="tests/c/fork_after_snapshot.c"
gcc -std=c11 -g $warn $cflags "$fas" $libs_shared -pthread -o "$out/fork_after_snapshot"
gcc -std=c11 -g -fsanitize=address -fno-omit-frame-pointer $warn $cflags "$fas" $libs_shared -pthread -o "$out/fork_after_snapshot_asan"
run fork-after-snapshot "$out/fork_after_snapshot" "${SESSIONKIT_FORK_ITERATIONS:-300}"
run fork-after-snapshot-asan "$out/fork_after_snapshot_asan" 40
# Under valgrind, memory errors fail the parent and every child; leaks are the
# parent's own check (a client request at its end), since in a forked child
# whatever the parent's background thread holds looks lost (see the program).
run fork-after-snapshot-valgrind valgrind --error-exitcode=1 --leak-check=no \
    --suppressions="$repo/tests/c/valgrind.supp" --quiet "$out/fork_after_snapshot" 40

echo "-- examples (C99 and C++11, against the shared library)"
gcc -std=c99 $warn $cflags ffi/examples/c/example.c $libs_shared -o "$out/example_c"
g++ -std=c++11 $warn $cflags $cxx_inc ffi/examples/cpp/example.cpp $libs_shared -o "$out/example_cpp"
home="$(mktemp -d)"
run pkg-config-version test "$(pkg-config --modversion sessionkit)" = "$(sed -n 's/^#define SK_VERSION "\(.*\)"/\1/p' include/sessionkit.h)"
run example-c env SESSIONKIT_HOME="$home" "$out/example_c" "$home"
run example-cpp env SESSIONKIT_HOME="$home" "$out/example_cpp" "$home"
rm -rf "$home"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
