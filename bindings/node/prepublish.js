#!/usr/bin/env node
// Readies the main package for `npm pack` / `npm publish`, as `napi
// pre-publish` readies a napi-rs package: writes `optionalDependencies` into
// package.json, the platform package of every napi target at this package's
// version, so that npm installs the addon of the user's platform with
// sessionkit and skips the others (each has `os`, `cpu` and `libc`). The napi
// CLI's own step cannot be used: it wants its package names,
// `sessionkit-<platform>`, and these are `@sessionkit/<platform>`.
//
// The committed package.json has no optionalDependencies on purpose: `npm ci`
// in a clone requires every dependency in package-lock.json, and a version's
// platform packages are not published before its release. So run this on the
// checkout that is packed and then thrown away (the release job,
// tests/packaging/node.sh's staged copy), never to commit the result.
//
//   node prepublish.js [DIR]   (DIR: the package directory, default this one)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SCOPE = '@sessionkit/';
const dir = path.resolve(process.argv[2] || __dirname);
const manifestPath = path.join(dir, 'package.json');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));

let parseTriple;
try {
  ({ parseTriple } = require(require.resolve('@napi-rs/cli', { paths: [dir, __dirname] })));
} catch {
  console.error(`prepublish.js: the napi-rs CLI is missing: run \`npm ci\` in ${__dirname} first`);
  process.exit(1);
}

const problems = [];
const optionalDependencies = {};
for (const triple of manifest.napi.targets) {
  const platform = parseTriple(triple).platformArchABI;
  const name = SCOPE + platform;
  const platformManifest = path.join(dir, 'npm', platform, 'package.json');
  if (!fs.existsSync(platformManifest)) {
    problems.push(`${triple}: no ${platformManifest}`);
    continue;
  }
  const m = JSON.parse(fs.readFileSync(platformManifest, 'utf8'));
  if (m.name !== name) problems.push(`${platformManifest}: name ${m.name}, not ${name}`);
  if (m.version !== manifest.version) {
    problems.push(`${platformManifest}: version ${m.version}, not the main package's ${manifest.version}`);
  }
  optionalDependencies[name] = manifest.version;
}
if (problems.length) {
  console.error(`prepublish.js: ${problems.join('\n')}`);
  process.exit(1);
}

manifest.optionalDependencies = optionalDependencies;
fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`prepublish.js: ${manifestPath}: optionalDependencies ${Object.keys(optionalDependencies).join(', ')} at ${manifest.version}`);
