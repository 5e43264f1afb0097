// Writers and the event loop: a second writer is refused with BUSY (in this
// process and from another), and long disk work leaves the event loop free.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { freshStore, runNode } from './helpers.mjs';

test('a second writer on one session rejects with BUSY, also from a second process', async () => {
  const { home, project, store } = await freshStore();
  const s = await store.createSession();
  await s.append({ role: 'user', content: 'mine' });
  await assert.rejects(store.openSession(s.id), (e) => e.code === 'BUSY' && e instanceof Error);

  const code = `
    import { Store } from 'sessionkit';
    const [project, home, id] = process.argv.slice(1);
    const store = await Store.open(project, { home });
    try { await store.openSession(id); console.log('OPENED'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, errno: e.errno, message: e.message })); }
  `;
  const r = runNode(code, [project, home, s.id]);
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim());
  assert.equal(got.code, 'BUSY');
  assert.match(got.message, new RegExp(s.id));

  await s.close();
  const again = runNode(code, [project, home, s.id]);
  assert.equal(again.stdout.trim(), 'OPENED', again.stderr);
});

test('the event loop keeps running while a 200 MiB session resumes and forks', async (t) => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const filler = 'x'.repeat(4000);
  const perBatch = 2000;
  let bytes = 0;
  while (bytes < 200 * 1024 * 1024) {
    const batch = [];
    for (let i = 0; i < perBatch; i++) batch.push({ role: i % 2 ? 'assistant' : 'user', content: filler });
    await s.appendBatch(batch);
    bytes += perBatch * (filler.length + 200);
  }
  const id = s.id;
  await s.close();

  let worst = 0;
  let last = performance.now();
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
    ticks++;
  }, 10);
  const started = performance.now();
  const resumed = await store.openSession(id);
  const fork = await store.forkSession(id);
  const took = performance.now() - started;
  clearInterval(timer);
  await fork.close();
  await resumed.close();

  t.diagnostic(`resume + fork of ~200 MiB took ${took.toFixed(0)} ms; worst interval gap ${worst.toFixed(1)} ms over ${ticks} ticks`);
  assert.ok(ticks >= Math.floor(took / 10) / 2, `the interval fired ${ticks} times in ${took.toFixed(0)} ms`);
  // A 10 ms interval that is never held up by more than a scheduling hiccup.
  assert.ok(worst < 60, `worst gap ${worst.toFixed(1)} ms`);
});
