#!/usr/bin/env bash
# The fixture corpus as the fuzz targets' seeds (fuzz/corpus/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p fuzz/corpus/log fuzz/corpus/index fuzz/corpus/structure_cache
for f in tests/fixtures/logs/*.jsonl tests/fixtures/golden/home/projects/-/*.jsonl; do
    cp "$f" "fuzz/corpus/log/$(basename "$f")"
done
cp tests/fixtures/golden/home/projects/-/sessions-index.json fuzz/corpus/index/golden
# The abi target's seeds: the fixture logs' lines as arguments of every call
# that takes JSON or a string (ffi/src/abi_fuzz.rs writes them).
SESSIONKIT_FUZZ_SEEDS="$(pwd)/fuzz/corpus/abi" cargo test -q -p sessionkit-ffi --lib \
    -- --ignored --exact abi_fuzz::tests::write_seeds >/dev/null
echo "seeded $(ls fuzz/corpus/log | wc -l) logs, 1 index and $(ls fuzz/corpus/abi | wc -l) C ABI programs"
