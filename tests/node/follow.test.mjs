// A Follower from Node: its waits hold no thread of the libuv pool, its offset
// never waits for a wait, it is an async iterator that an AbortSignal or
// close() ends, and Remote, Follower and BackgroundPush close (and dispose).
// Needs PostgreSQL (SESSIONKIT_TEST_PG, which tests/run-all.sh starts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { ErrorCode } from 'sessionkit';

import { freshStore, here, pg, pgTest } from './helpers.mjs';

const { url } = pg;

async function followed() {
  const project = `node-${randomUUID()}`;
  const a = (await freshStore()).store;
  const b = (await freshStore()).store;
  const ra = await a.connectRemote({ url, project, holder: 'writer' });
  const rb = await b.connectRemote({ url, project, holder: 'watcher' });
  const s = await a.createSession();
  await s.append({ role: 'user', content: 'first' });
  await ra.push(s.id);
  const log = () => fs.readFileSync(a.logPath(s.id));
  return { a, ra, rb, s, log };
}

pgTest('eight waiting followers leave the pool of four threads free, and offsets readable', () => {
  const r = spawnSync(process.execPath, [path.join(here, 'follow-pool.mjs')], {
    cwd: here,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, UV_THREADPOOL_SIZE: '4' },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  // Nothing was pushed while the pool tasks ran: had the waits held the four
  // pool threads, a task could only run once a wait had ended.
  for (const p of out.pool) assert.equal(p.waitsSettled, 0, `${p.task} finished only after a wait ended`);
  assert.equal(out.settledAfterOffsets, 0);
  // An offset read waiting for a wait would take the wait's 20 s.
  assert.ok(out.offsetReadMs < 5_000, `reading 8 offsets took ${out.offsetReadMs} ms`);
  assert.ok(out.offsets.every((o) => o === out.offsets[0] && o > 0));
  assert.deepEqual(out.got, Array(8).fill(out.want));
  assert.match(out.want, /"now"/);
});

pgTest('a follower iterates the batches pushed, until the signal aborts', async () => {
  const { ra, rb, s, log } = await followed();
  const start = log().length;
  const follower = await rb.follow(s.id);
  const ac = new AbortController();
  const got = [];
  let ended = false;
  const iteration = (async () => {
    for await (const lines of follower.lines({ signal: ac.signal })) got.push(...lines);
    ended = true;
  })();
  for (let i = 0; i < 3; i++) await s.append({ role: 'assistant', content: `line ${i}` });
  await ra.push(s.id);
  const want = log().subarray(start);
  for (let i = 0; i < 200 && Buffer.concat(got).length < want.length; i++) await sleep(50);
  assert.deepEqual(Buffer.concat(got), want);
  assert.equal(ended, false);

  // The abort ends the iteration at once, though its wait had 60 s to go.
  ac.abort();
  await iteration;
  assert.equal(ended, true);
  assert.equal(follower.offset, start + want.length);

  // Lines pushed after the abort are not lost: the next wait has them.
  await s.append({ role: 'assistant', content: 'after the abort' });
  await ra.push(s.id);
  const rest = [];
  while (Buffer.concat(rest).length < log().length - start - want.length) {
    const more = await follower.nextLines(10_000);
    assert.ok(more.length > 0, 'no lines within 10 s of a push');
    rest.push(...more);
  }
  assert.deepEqual(Buffer.concat(rest), log().subarray(start + want.length));
  assert.equal(follower.offset, log().length);
  await follower.close();
  await s.close();
});

pgTest('an abort rejects a wait in flight with the reason, and the next wait gets the lines', async () => {
  const { ra, rb, s, log } = await followed();
  const follower = await rb.follow(s.id);
  const start = follower.offset;
  const ac = new AbortController();
  const wait = follower.nextLines(60_000, { signal: ac.signal });
  await sleep(100);
  ac.abort();
  await assert.rejects(wait, { name: 'AbortError' });
  await assert.rejects(follower.nextLines(1000, { signal: ac.signal }), { name: 'AbortError' });
  await assert.rejects(follower.nextLines(1000, { signal: 'stop' }), (e) => e.code === ErrorCode.INVALID_INPUT);
  await s.append({ role: 'assistant', content: 'late' });
  await ra.push(s.id);
  const got = [];
  while (Buffer.concat(got).length < log().length - start) {
    const more = await follower.nextLines(10_000);
    assert.ok(more.length > 0, 'no lines within 10 s of a push');
    got.push(...more);
  }
  assert.deepEqual(Buffer.concat(got), log().subarray(start));
  await follower.close();
  await s.close();
});

pgTest('close ends an iteration in flight; a closed follower and remote refuse calls', async () => {
  const { ra, rb, s, log } = await followed();
  const follower = await rb.follow(s.id);
  let batches = 0;
  const iteration = (async () => {
    for await (const _ of follower) batches++;
  })();
  await sleep(100);
  assert.equal(follower.closed, false);
  await follower.close();
  await iteration;
  assert.equal(batches, 0);
  assert.equal(follower.closed, true);
  await follower.close();
  await assert.rejects(follower.nextLines(0), (e) => e.code === ErrorCode.INVALID_INPUT && /closed/.test(e.message));

  // A follower made before its remote closes keeps its own connection.
  const other = await rb.follow(s.id);
  await rb[Symbol.asyncDispose]();
  assert.equal(rb.closed, true);
  await assert.rejects(rb.list(), (e) => e.code === ErrorCode.INVALID_INPUT && /closed/.test(e.message));
  assert.equal(typeof rb.project, 'string');
  await s.append({ role: 'assistant', content: 'still followed' });
  await ra.push(s.id);
  assert.ok((await other.nextLines(10_000)).length > 0);
  await other[Symbol.asyncDispose]();
  assert.equal(other.closed, true);

  // A background push disposes as it stops, once.
  const bg = await ra.pushInBackground(s.id);
  await s.append({ role: 'assistant', content: 'pushed at dispose' });
  await bg[Symbol.asyncDispose]();
  await bg.close();
  const listed = await ra.list();
  assert.equal(listed.find((r) => r.id === s.id).pushedBytes, log().length);
  await ra.close();
  await s.close();
});
