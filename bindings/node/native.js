'use strict';
// The native addon of this platform, in napi-rs's layout: the addon built
// from source in a clone (`npm run build`: `sessionkit.<platform>.node` beside
// this file) if there is one, else the prebuilt one that npm installed as an
// optional dependency, `@sessionkit/<platform>` (npm installs only the one
// whose `os`, `cpu` and `libc` match). Its exports are typed in native.d.ts,
// which the napi CLI generates.

const fs = require('node:fs');
const path = require('node:path');
const { errorFor } = require('./errors.js');

const SCOPE = '@sessionkit/';
const REPOSITORY = 'https://github.com/sessionkit/sessionkit';

/** `glibc` or `musl` on Linux (what decides which build loads), else null. */
function libc() {
  if (process.platform !== 'linux') return null;
  // As napi-rs's own loader decides: musl's ldd says so, glibc's does not.
  try {
    return fs.readFileSync('/usr/bin/ldd', 'utf8').includes('musl') ? 'musl' : 'glibc';
  } catch {
    // No ldd (a slim image): ask the process which C library it runs on.
  }
  let report = null;
  if (process.report && typeof process.report.getReport === 'function') {
    // Without the network interfaces, which can take seconds to list.
    const excluded = process.report.excludeNetwork;
    process.report.excludeNetwork = true;
    try {
      report = process.report.getReport();
    } finally {
      process.report.excludeNetwork = excluded;
    }
  }
  if (report && report.header && report.header.glibcVersionRuntime) return 'glibc';
  if (report && Array.isArray(report.sharedObjects) && report.sharedObjects.some((f) => /ld-musl-|libc\.musl-/.test(f))) {
    return 'musl';
  }
  return 'glibc';
}

/** napi-rs's name of a platform (`linux-x64-gnu`, `darwin-arm64`, ...). */
function platformName(platform, arch, lib) {
  if (platform === 'linux') return `${platform}-${arch}-${lib === 'musl' ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  return `${platform}-${arch}`;
}

// The platforms with a prebuilt package: package.json's napi.targets, whose
// packages prepublish.js makes the optionalDependencies of the published
// package (tests/packaging/node.sh checks that the two lists agree).
const PREBUILT = ['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64'];

function load() {
  const lib = libc();
  const name = platformName(process.platform, process.arch, lib);
  const tried = [];
  let cause;

  const local = path.join(__dirname, `sessionkit.${name}.node`);
  if (fs.existsSync(local)) {
    try {
      return require(local);
    } catch (e) {
      cause = e;
      tried.push(`${local} does not load: ${e.message}`);
    }
  } else {
    tried.push(`${local}: not there (a build from source in a clone puts it there)`);
  }

  const pkg = SCOPE + name;
  if (!PREBUILT.includes(name)) {
    tried.push(`${pkg}: no such package; sessionkit publishes none for this platform`);
  } else {
    let installed = true;
    try {
      require.resolve(`${pkg}/package.json`);
    } catch {
      installed = false;
    }
    if (!installed) {
      tried.push(
        `${pkg}: not installed. npm installs it with sessionkit, as an optional dependency, ` +
          'unless optional dependencies are left out (--omit=optional, --no-optional): ' +
          'install sessionkit again without that',
      );
    } else {
      try {
        return require(pkg);
      } catch (e) {
        cause = e;
        tried.push(`${pkg} does not load: ${e.message}`);
      }
    }
  }

  const where = `${process.platform}, ${process.arch}${lib ? `, ${lib}` : ''}`;
  const err = errorFor(
    'UNSUPPORTED',
    `sessionkit: no native addon loads on this platform (${where}: ${name}).\n` +
      tried.map((t) => `- ${t}\n`).join('') +
      `Prebuilt addons are published for ${PREBUILT.join(', ')}. Elsewhere, build it from ` +
      `source (with a Rust toolchain): git clone ${REPOSITORY}; cd sessionkit/bindings/node; ` +
      'npm install; npm run build; then install that directory in your app ' +
      '(npm install /path/to/sessionkit/bindings/node).',
    null,
    cause,
  );
  // Of the core's error kinds (errors.js), UNSUPPORTED is for what this
  // installation cannot do; INTERNAL is for sessionkit's bugs.
  throw err;
}

module.exports = load();
