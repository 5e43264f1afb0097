// Shared helpers of the Node suite: a temporary home and project, a store on
// them, and a way to run code in a second Node process.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { test } from 'node:test';

import { Store } from 'sessionkit';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const fixtures = path.join(here, '..', 'fixtures');

// Every temporary directory a test file made goes when its process exits
// (node --test runs each file in a process of its own): a resume test alone
// leaves hundreds of MB otherwise.
const made = [];
process.on('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

export function tmpdir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionkit-node-'));
  made.push(dir);
  return dir;
}

/** A fresh home and project, and a store on them. */
export async function freshStore() {
  const dir = tmpdir();
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  fs.mkdirSync(home);
  fs.mkdirSync(project);
  const store = await Store.open(project, { home, durability: 'never' });
  return { dir, home, project, store };
}

/** Run an ES module's `code` in a new Node process (it may import sessionkit). */
export function runNode(code, args = [], timeout = 120_000) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', code, ...args], {
    cwd: here,
    encoding: 'utf8',
    timeout,
  });
}

/** Every file under `dir` with its bytes, to check that nothing changed. */
export function snapshotTree(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}

/**
 * The PostgreSQL test server (SESSIONKIT_TEST_PG) of the tests that need it.
 * Without it they are skipped, saying why; under SESSIONKIT_REQUIRE_PG=1
 * (the test command exports it) they fail instead.
 */
export const pg = (() => {
  const url = process.env.SESSIONKIT_TEST_PG || undefined;
  const why = 'SESSIONKIT_TEST_PG is not set (tests/pg/server.sh starts a server; tests/run-all.sh sets it)';
  const required = process.env.SESSIONKIT_REQUIRE_PG ?? '';
  let fail;
  if (!url && required === '1') fail = `SESSIONKIT_REQUIRE_PG=1, and ${why}`;
  else if (!url && required !== '' && required !== '0') {
    fail = `SESSIONKIT_REQUIRE_PG must be 1 or 0, not ${JSON.stringify(required)}`;
  }
  return { url, skip: url || fail ? false : why, fail };
})();

/** A test that needs the PostgreSQL test server: see `pg`. */
export function pgTest(name, fn) {
  return test(name, { skip: pg.skip }, (t) => {
    if (pg.fail) throw new Error(pg.fail);
    return fn(t);
  });
}
