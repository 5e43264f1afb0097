#!/usr/bin/env node
// Builds the native addon from source (prebuilt binaries are not downloaded):
// `sessionkit.node` in this directory. With the napi-rs CLI (a dev dependency,
// present in a checkout) it also regenerates `native.d.ts`; installed as a
// dependency, where dev dependencies are absent, it runs cargo itself and
// copies the library. Release by default; `--debug` (or SESSIONKIT_NODE_DEBUG=1)
// builds the dev profile, which the test suite uses.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const debug = process.argv.includes('--debug') || process.env.SESSIONKIT_NODE_DEBUG === '1';
const locked = process.env.CARGO_LOCKED === '1';
const manifest = path.join(here, 'Cargo.toml');

let cliDir = null;
try {
  cliDir = path.dirname(require.resolve('@napi-rs/cli/package.json', { paths: [here] }));
} catch {
  cliDir = null;
}

if (cliDir) {
  const args = [
    path.join(cliDir, 'dist', 'cli.js'),
    'build',
    '--manifest-path', manifest,
    '--package-json-path', path.join(here, 'package.json'),
    '--output-dir', here,
    '--dts', 'native.d.ts',
    '--no-dts-header',
  ];
  if (!debug) args.push('--release');
  // The CLI hands what follows `--` to cargo.
  if (locked) args.push('--', '--locked');
  execFileSync(process.execPath, args, { cwd: here, stdio: 'inherit' });
} else {
  const args = ['build', '--manifest-path', manifest, '--message-format', 'json-render-diagnostics'];
  if (!debug) args.push('--release');
  if (locked) args.push('--locked');
  const out = execFileSync(process.env.CARGO || 'cargo', args, {
    cwd: here,
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 256 * 1024 * 1024,
  }).toString();
  let lib = null;
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    const m = JSON.parse(line);
    if (m.reason === 'compiler-artifact' && m.target && m.target.name === 'sessionkit_node') {
      lib = m.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || lib;
    }
  }
  if (!lib) throw new Error('cargo built no library for sessionkit-node');
  fs.copyFileSync(lib, path.join(here, 'sessionkit.node'));
}
