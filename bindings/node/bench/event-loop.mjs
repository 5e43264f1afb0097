// How long the event loop stops while the package works:
//
// 1. A view of a long session (--mib, default 200 MiB of 64 KiB messages):
//    the longest gap between turns of the loop while `iterActivePath()`
//    streams it a page at a time, against the old path, the whole view
//    joined as one JSON text and parsed at once (a page as large as the
//    view, then one `JSON.parse`), and against `activePath()` (the array,
//    built from the pages).
// 2. Followers (needs SESSIONKIT_TEST_PG, a PostgreSQL connection string, as
//    tests/pg/server.sh prints): the longest gap while 8 followers wait with
//    a libuv pool of 4 threads, how long a pool task (crypto.pbkdf2) takes
//    meanwhile, and how long reading the 8 offsets takes.
//
// The gap is measured by a 1 ms interval timer: the longest time between two
// of its runs. Not asserted on:
// tests/node/views.test.mjs and follow.test.mjs check the behaviour.
//
//   node bindings/node/build.js --debug      # or a release build
//   UV_THREADPOOL_SIZE=4 SESSIONKIT_TEST_PG="$url" node bindings/node/bench/event-loop.mjs --mib 200
import { pbkdf2, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';

import { createRequire } from 'node:module';

import { Store } from '../index.mjs';

const native = createRequire(import.meta.url)('../native.js');

const { values } = parseArgs({ options: { mib: { type: 'string', default: '200' } } });
const mib = Number(values.mib);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionkit-loop-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const home = path.join(dir, 'home');
const project = path.join(dir, 'project');
fs.mkdirSync(home);
fs.mkdirSync(project);

/** Run `work` and return its time and the event loop's longest stop
 *  meanwhile (ms): the longest time between two runs of a 1 ms timer. */
async function gapDuring(work) {
  let last = performance.now();
  let maxGapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
  }, 1);
  const t = performance.now();
  const result = await work();
  const ms = performance.now() - t;
  // Let the timer run once more: a stop at the very end counts too.
  await sleep(5);
  clearInterval(ticker);
  return { ms, maxGapMs, result };
}

const fmt = (n) => n.toFixed(1).padStart(8);
const row = (what, r) => console.log(`${what.padEnd(58)} ${fmt(r.ms)} ms   longest gap ${fmt(r.maxGapMs)} ms`);

const store = await Store.open(project, { home, durability: 'never' });
const s = await store.createSession();
const filler = 'x'.repeat(64 * 1024);
const perBatch = 32;
const batches = Math.ceil((mib * 1024) / 64 / perBatch);
for (let i = 0; i < batches; i++) {
  await s.appendBatch(
    Array.from({ length: perBatch }, (_, j) => ({ role: j % 2 ? 'assistant' : 'user', content: `${i}.${j} ${filler}` })),
  );
}
const logBytes = fs.statSync(store.logPath(s.id)).size;
console.log(`session: ${batches * perBatch} messages, ${(logBytes / 2 ** 20).toFixed(0)} MiB of log`);
const view = await s.read();

// Warm the view once (the core folds it on the pool either way).
await view.activePath();

// The old path through the addon: one page as large as the view is the one
// JSON text the view used to arrive as.
const nativeStore = await native.openStore(project, JSON.stringify({ home, durability: 'never' }));
row('view, whole text parsed at once (the old path)', await gapDuring(async () => {
  const pages = await (await nativeStore.readSession(s.id)).activePath();
  return JSON.parse(await pages.nextPage(0xffffffff)).length;
}));
row('view, activePath() (the array, parsed a page at a time)', await gapDuring(async () => (await view.activePath()).length));
row('view, for await (const m of iterActivePath())', await gapDuring(async () => {
  let n = 0;
  for await (const _ of view.iterActivePath()) n++;
  return n;
}));
await s.close();

const url = process.env.SESSIONKIT_TEST_PG;
if (!url) {
  console.log('followers: skipped (SESSIONKIT_TEST_PG is not set)');
  process.exit(0);
}
const pool = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
const name = `bench-${randomUUID()}`;
const ra = await store.connectRemote({ url, project: name, holder: 'writer' });
const rb = await store.connectRemote({ url, project: name, holder: 'watchers' });
const w = await store.createSession();
await w.append({ role: 'user', content: 'watch this' });
await ra.push(w.id);
const followers = await Promise.all(Array.from({ length: 8 }, () => rb.follow(w.id)));
const waits = followers.map((f) => f.nextLines(30_000));
await sleep(500);
row(`8 followers waiting, pool of ${pool}: crypto.pbkdf2 (1 round)`, await gapDuring(() => promisify(pbkdf2)('k', 's', 1, 32, 'sha256')));
row('8 followers waiting: reading their 8 offsets', await gapDuring(async () => followers.map((f) => f.offset)));
row('8 followers waiting: 2 s of idle loop', await gapDuring(() => sleep(2000)));
await Promise.all(followers.map((f) => f.close()));
await Promise.all(waits);
await w.close();
await ra.close();
await rb.close();
