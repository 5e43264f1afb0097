#!/usr/bin/env bash
# The Node package's tests, as a developer meets the package in a clone: `npm
# ci` in bindings/node (its npm cache under the cargo target directory), the
# addon built from source by the package's own build script
# (sessionkit.<platform>.node, which native.js loads first; it regenerates
# native.d.ts: the run fails when the checked-in one is stale), tsc on a
# consumer as an ES module and as CommonJS, then `node --test` on tests/node,
# then LangGraph's checkpointer conformance suite under vitest.
# Needs Node >= 18 with npm, Rust, and the package registries. The package as
# npm installs it (tarballs, the platform package) is tests/packaging/node.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target"

pkg="$root/bindings/node"
cd "$pkg"
# --ignore-scripts: no dependency needs an install script; the addon is built
# below, once, in the dev profile the rest of the suite shares.
npm ci --cache "$target/npm-cache" --no-audit --no-fund --ignore-scripts --loglevel=error

checked_in="$(mktemp)"
trap 'rm -f "$checked_in"' EXIT
cp native.d.ts "$checked_in"
node build.js --debug
if ! cmp -s "$checked_in" native.d.ts; then
    diff -u "$checked_in" native.d.ts || true
    echo "bindings/node/native.d.ts is stale: the build regenerated it (diff above); commit it" >&2
    exit 1
fi

# The tests import the package by name, as a user does, and the frameworks it
# adapts (the OpenAI Agents SDK; LangGraph and its conformance suite, pinned
# in package.json's devDependencies). A missing one fails the run here.
for dep in @langchain/langgraph-checkpoint@1.2.2 @langchain/langgraph@1.7.3 \
    @langchain/langgraph-checkpoint-validation@1.1.1 vitest@4.1.12; do
    name="${dep%@*}"
    have="$(node -p 'require(process.argv[1]).version' "$pkg/node_modules/$name/package.json" 2>/dev/null || true)"
    if [ "$have" != "${dep##*@}" ]; then
        echo "tests/node/run.sh: $name ${dep##*@} is not installed in bindings/node/node_modules (found: ${have:-none}); npm ci installs it" >&2
        exit 1
    fi
done
mkdir -p "$root/tests/node/node_modules"
ln -sfn "$pkg" "$root/tests/node/node_modules/sessionkit"
ln -sfn "$pkg/node_modules/@openai" "$root/tests/node/node_modules/@openai"
ln -sfn "$pkg/node_modules/@langchain" "$root/tests/node/node_modules/@langchain"

# The hand-written types must type a user's code (tsc --strict, no emit), from
# an ES module (check.mts: index.d.mts) and from CommonJS (check.cts: index.d.ts).
"$pkg/node_modules/.bin/tsc" -p "$root/tests/node/types/tsconfig.json"

cd "$root/tests/node"
node --test --test-reporter=spec "$@" ./*.test.mjs

# LangGraph's conformance suite for JS checkpointers on sessionkit/langgraph,
# in its library form under vitest (tests/node/langgraph/); check-report.mjs
# fails the run unless every expected test ran and passed.
report="$target/langgraph-vitest.json"
rm -f "$report"
"$pkg/node_modules/.bin/vitest" run --globals --root "$root/tests/node/langgraph" \
    --reporter=dot --reporter=json --outputFile.json="$report" || true
[ -f "$report" ] || { echo "tests/node/run.sh: vitest wrote no report ($report)" >&2; exit 1; }
node "$root/tests/node/langgraph/check-report.mjs" "$report"
