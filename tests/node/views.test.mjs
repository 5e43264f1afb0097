// Views as async iterators of messages: the same messages as the arrays, and
// a long session streamed a page at a time, the event loop running between
// pages instead of stopping for one parse of the whole view.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { freshStore } from './helpers.mjs';

async function drain(it) {
  const out = [];
  for await (const m of it) out.push(m);
  return out;
}

test('each view iterates to the messages of its array', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const u = await s.append({ role: 'user', content: 'plan the release' });
  await s.append({ role: 'assistant', content: 'hidden', visible: false });
  await s.append({ role: 'assistant', content: 'done' });
  const view = await s.read();
  const ui = await view.uiView();
  assert.equal(ui.length, 3);
  assert.equal(ui[0].id, u.id);
  assert.deepEqual(await drain(view.iterUiView()), ui);
  assert.deepEqual(await drain(view.iterActivePath()), await view.activePath());
  const opts = { lastN: 2 };
  assert.deepEqual(await drain(view.iterModelView(opts)), await view.modelView(opts));
  assert.equal((await view.modelView(opts)).length, 2);
  assert.deepEqual(await drain(s.iterActivePath()), await s.activePath());
  assert.deepEqual(await drain(s.iterModelView()), await s.modelView());
  assert.deepEqual(await drain(store.iterModelView(s.id)), await store.modelView(s.id));
  assert.deepEqual((await s.activePath()).map((m) => m.content), ['plan the release', 'hidden', 'done']);

  const empty = await (await store.createSession()).read();
  assert.deepEqual(await drain(empty.iterActivePath()), []);
  assert.deepEqual(await empty.activePath(), []);
  await s.close();
});

test('a view error surfaces when the iteration starts', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  await s.append({ role: 'user', content: 'hi' });
  await s.close();
  const it = s.iterActivePath();
  await assert.rejects(drain(it), (e) => e.code === 'INVALID_INPUT' && /closed/.test(e.message));
});

test('a long session streams while the event loop keeps running', async () => {
  // 32 MiB of messages of 64 KiB (under the blob threshold: kept in the log).
  const { store } = await freshStore();
  const s = await store.createSession();
  const filler = 'x'.repeat(64 * 1024);
  for (let i = 0; i < 16; i++) {
    await s.appendBatch(
      Array.from({ length: 32 }, (_, j) => ({ role: j % 2 ? 'assistant' : 'user', content: `${i}.${j} ${filler}` })),
    );
  }
  const view = await s.read();
  const whole = await view.activePath();
  assert.equal(whole.length, 512);

  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const ticksAt = [];
  const streamed = [];
  try {
    for await (const m of view.iterActivePath()) {
      ticksAt.push(ticks);
      streamed.push(m);
    }
  } finally {
    clearInterval(ticker);
  }
  assert.deepEqual(streamed, whole);
  // The ticker ran between the first message and the last: the iteration
  // gave the loop back between pages. (One parse of the whole view hands
  // every message out within one turn of the loop: no tick in between.)
  assert.ok(ticksAt.at(-1) > ticksAt[0], `no tick during the iteration (ticks ${ticksAt[0]}..${ticksAt.at(-1)})`);
  const turns = new Set(ticksAt).size;
  assert.ok(turns > 1, 'every message came in one turn of the event loop');
  await s.close();
});
