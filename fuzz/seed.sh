#!/usr/bin/env bash
# The fixture corpus as the fuzz targets' seeds (fuzz/corpus/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p fuzz/corpus/log fuzz/corpus/index fuzz/corpus/structure_cache
for f in tests/fixtures/logs/*.jsonl tests/fixtures/golden/home/projects/-/*.jsonl; do
    cp "$f" "fuzz/corpus/log/$(basename "$f")"
done
cp tests/fixtures/golden/home/projects/-/sessions-index.json fuzz/corpus/index/golden
echo "seeded $(ls fuzz/corpus/log | wc -l) logs and 1 index"
