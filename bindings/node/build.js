#!/usr/bin/env node
// Builds the native addon from source with the napi-rs CLI (a dev dependency:
// run `npm install` in the clone first): `sessionkit.<platform>.node` in this
// directory, which native.js loads before any prebuilt @sessionkit/<platform>
// package, and `native.d.ts`, regenerated (checked in; the tests fail when it
// is stale). Release by default; `--debug` (or SESSIONKIT_NODE_DEBUG=1) builds
// the dev profile, which the test suite uses. Other arguments go to `napi
// build` (the release workflow passes `--target <triple>`, `--use-napi-cross`);
// CARGO_LOCKED=1 passes `--locked` to cargo.
'use strict';
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const here = __dirname;
const args = process.argv.slice(2);
const debug = args.includes('--debug') || process.env.SESSIONKIT_NODE_DEBUG === '1';
const passed = args.filter((a) => a !== '--debug');

let cli;
try {
  cli = path.join(path.dirname(require.resolve('@napi-rs/cli/package.json', { paths: [here] })), 'dist', 'cli.js');
} catch {
  console.error(`build.js: the napi-rs CLI is missing: run \`npm install\` in ${here} first`);
  process.exit(1);
}

const napiArgs = [
  cli,
  'build',
  '--platform',
  // index.js is the package's own entry (native.js loads the addon): the CLI
  // would otherwise write its generated loader over index.js.
  '--no-js',
  '--manifest-path', path.join(here, 'Cargo.toml'),
  '--package-json-path', path.join(here, 'package.json'),
  '--output-dir', here,
  '--dts', 'native.d.ts',
  '--no-dts-header',
  ...passed,
];
if (!debug) napiArgs.push('--release');
// The CLI hands what follows `--` to cargo.
if (process.env.CARGO_LOCKED === '1') napiArgs.push('--', '--locked');
execFileSync(process.execPath, napiArgs, { cwd: here, stdio: 'inherit' });
