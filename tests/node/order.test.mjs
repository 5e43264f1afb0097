// Calls on one session run one at a time in call order: appends fired
// without awaiting land in the order they were made, appends that wait
// together go to the core as one write, and each caller gets its own answer.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ConflictError, InvalidInputError, Store } from 'sessionkit';

import { freshStore } from './helpers.mjs';

/** The messages of a log file, in the order of its lines. */
function loggedMessages(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === 'message' || r.type === undefined);
}

test('1,000 appends fired without await land in call order, each caller getting its own message', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const calls = [];
  const want = [];
  for (let i = 0; i < 1000; i++) {
    if (i % 100 === 50) {
      // An appendBatch among the appends: its messages stay together, in place.
      const ms = [{ role: 'user', content: `m${i}` }, { role: 'assistant', content: `m${i}b` }];
      calls.push(s.appendBatch(ms));
      want.push(`m${i}`, `m${i}b`);
    } else {
      calls.push(s.append({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
      want.push(`m${i}`);
    }
  }
  const got = await Promise.all(calls);
  const id = s.id;
  await s.close();

  const logged = loggedMessages(store.logPath(id));
  assert.deepEqual(logged.map((m) => m.content), want, 'the log holds the messages in call order');
  // One chain: each message's parent is the one before it.
  logged.forEach((m, i) => assert.equal(m.parentId, i === 0 ? null : logged[i - 1].id, `parent of ${m.content}`));
  // Each caller got the message(s) it appended, as stored.
  const byId = new Map(logged.map((m) => [m.id, m]));
  got.forEach((r, i) => {
    const mine = Array.isArray(r) ? r : [r];
    assert.equal(Array.isArray(r), i % 100 === 50, `call ${i} resolves with what it appended`);
    for (const m of mine) assert.deepEqual(byId.get(m.id), m, `call ${i}`);
    assert.equal(mine[0].content, `m${i}`);
  });
  const again = await store.openSession(id);
  assert.deepEqual((await again.activePath()).map((m) => m.content), want, 'a reopened session reads them in order');
  await again.close();
});

test('appends that wait behind one in flight go to the core as one write', async () => {
  const { home, project } = await freshStore();
  // With `always` every write is fsynced before it returns: the fsync count
  // counts the writes.
  const store = await Store.open(project, { home, durability: 'always' });
  const s = await store.createSession();
  const base = s.fsyncCount();
  for (let i = 0; i < 20; i++) await s.append({ role: 'user', content: `awaited ${i}` });
  const awaited = s.fsyncCount() - base;
  assert.ok(awaited >= 20, `20 awaited appends, ${awaited} fsyncs`);

  const before = s.fsyncCount();
  await Promise.all(Array.from({ length: 200 }, (_, i) => s.append({ role: 'user', content: `fired ${i}` })));
  const fired = s.fsyncCount() - before;
  // The first goes alone, the 199 queued behind it as one batch.
  assert.ok(fired <= 4, `200 fired appends took ${fired} fsyncs`);
  assert.equal((await s.activePath()).length, 220);
  await s.close();
});

test('a message the core refuses rejects its own call only; the others land in order', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const first = s.append({ id: 'm-first', role: 'user', content: 'first' }); // in flight: the rest queue
  const a = s.append({ role: 'assistant', content: 'a' });
  const noRole = s.append({ content: 'no role' }); // the core refuses it
  const batch = s.appendBatch([{ role: 'user', content: 'in a bad batch' }, { role: 42 }]);
  const c = s.append({ role: 'user', content: 'c' });
  const cyclic = { role: 'user' };
  cyclic.self = cyclic;
  const refusedHere = s.append(cyclic); // refused before it is queued
  const d = s.appendBatch([{ role: 'assistant', content: 'd1' }, { role: 'user', content: 'd2' }]);
  const empty = s.appendBatch([]); // refused as it is alone: a batch needs a message
  const dup = s.append({ id: 'm-first', role: 'user', content: 'same id' }); // CONFLICT
  const e = s.append({ role: 'assistant', content: 'e' });

  const results = await Promise.allSettled([first, a, noRole, batch, c, refusedHere, d, empty, dup, e]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'fulfilled'],
  );
  assert.equal(results[8].reason.code, 'CONFLICT', results[8].reason.message);
  assert.ok(results[8].reason instanceof ConflictError);
  await assert.rejects(s.appendBatch([]), { code: 'INVALID_INPUT' }, 'alone too');
  for (const i of [2, 3, 5, 7]) {
    assert.equal(results[i].reason.code, 'INVALID_INPUT', results[i].reason.message);
    assert.ok(results[i].reason instanceof InvalidInputError, results[i].reason.message);
  }
  assert.equal(results[1].value.content, 'a');
  assert.deepEqual(results[6].value.map((m) => m.content), ['d1', 'd2']);
  const logged = loggedMessages(store.logPath(s.id));
  // The refused batch is all-or-nothing: its valid message is not written.
  assert.deepEqual(logged.map((m) => m.content), ['first', 'a', 'c', 'd1', 'd2', 'e']);
  assert.equal(results[4].value.parentId, results[1].value.id, 'c follows a');
  await s.close();
});

test('close() waits for the appends queued before it; calls after it reject', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const appends = Array.from({ length: 50 }, (_, i) => s.append({ role: 'user', content: `q${i}` }));
  const closing = s.close();
  const late = s.append({ role: 'user', content: 'after close' });
  const lateRead = s.activePath();
  await Promise.all(appends);
  await closing;
  assert.equal(s.closed, true);
  await assert.rejects(late, { code: 'INVALID_INPUT' });
  await assert.rejects(lateRead, { code: 'INVALID_INPUT' });
  assert.deepEqual(
    loggedMessages(store.logPath(s.id)).map((m) => m.content),
    Array.from({ length: 50 }, (_, i) => `q${i}`),
  );
  // The lock is released: the session opens again.
  const again = await store.openSession(s.id);
  assert.equal((await again.activePath()).length, 50);
  await again.close();
});

test('a read sees every append made before it, and a subagent keeps call order too', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  for (let i = 0; i < 10; i++) s.append({ role: 'user', content: `r${i}` });
  const seen = await s.activePath();
  assert.deepEqual(seen.map((m) => m.content), Array.from({ length: 10 }, (_, i) => `r${i}`));

  const sub = await s.spawnSubagent('helper');
  const fired = Array.from({ length: 100 }, (_, i) => sub.append({ role: i % 2 ? 'assistant' : 'user', content: `s${i}` }));
  const closed = sub.close();
  await Promise.all(fired);
  await closed;
  const view = await store.readSubagent(s.id, 'helper');
  assert.deepEqual((await view.activePath()).map((m) => m.content), Array.from({ length: 100 }, (_, i) => `s${i}`));
  await s.close();
});
