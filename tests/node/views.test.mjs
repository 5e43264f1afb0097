// Views as async iterators of messages: the same messages as the arrays, and
// a long session streamed a page at a time, the event loop running between
// pages instead of stopping for one parse of the whole view.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import { freshStore, here } from './helpers.mjs';

const require = createRequire(import.meta.url);
const native = require(path.join(here, '..', '..', 'bindings', 'node', 'native.js'));

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

test('pages handed over from the log and pages joined give the messages as stored', async () => {
  const { project, home, store } = await freshStore();
  const s = await store.createSession();
  // 120 messages of ≈20 KB: pages of 256 KiB, read buffers of 1 MiB; ASCII
  // text (handed over without a copy) and text that is not (joined), and a
  // patched message (written anew).
  const sent = [];
  for (let i = 0; i < 120; i++) {
    const text = i % 7 === 3 ? `${i} é日本 😀 `.repeat(1500) : `${i} "quoted"\n`.repeat(1800);
    sent.push(await s.append({ role: i % 2 ? 'assistant' : 'user', content: text }));
  }
  await s.patchMessage(sent[50].id, { content: 'patched' });
  await s.close();
  // What is stored: the log's message lines.
  const log = fs.readdirSync(home, { recursive: true }).find((f) => f.endsWith(`${s.id}.jsonl`));
  const lines = fs.readFileSync(path.join(home, log), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  const records = new Map(lines.filter((r) => r.type === 'message').map((r) => [r.id, r]));
  const check = (view) => {
    assert.equal(view.length, 120);
    for (const [i, m] of view.entries()) {
      assert.equal(m.id, sent[i].id);
      assert.deepEqual(m, i === 50 ? { ...records.get(m.id), content: 'patched' } : records.get(m.id));
    }
  };
  check(await store.modelView(s.id));
  check(await (await store.readSession(s.id)).activePath());
  assert.deepEqual(await drain(store.iterModelView(s.id)), await store.modelView(s.id));

  // The pages themselves: some are parts of the log with spans, some joined.
  const st = await native.openStore(project, JSON.stringify({ home }));
  const pages = await st.modelView(s.id, null);
  const kinds = new Set();
  for (let p; (p = await pages.nextPage(256 * 1024)) !== null; ) {
    kinds.add(typeof p === 'string' ? 'joined' : 'shared');
    if (typeof p !== 'string') assert.ok(p.spans instanceof Uint32Array && p.spans.length > 0);
  }
  assert.deepEqual([...kinds].sort(), ['joined', 'shared']);
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
