// Sessions shared through PostgreSQL from Node (docs/DISTRIBUTED.md): two
// stores on two homes stand for two machines on one real server
// (SESSIONKIT_TEST_PG, which tests/run-all.sh starts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import { ErrorCode } from 'sessionkit';

import { freshStore, pg, pgTest } from './helpers.mjs';

const { url } = pg;

const rejects = (p, code, pattern) =>
  assert.rejects(p, (e) => {
    assert.equal(e.code, code, e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });

/** Two machines sharing under a project name of their own. */
async function machines() {
  const project = `node-${randomUUID()}`;
  const a = await freshStore();
  const b = await freshStore();
  return { project, a: a.store, b: b.store, homeB: b.home };
}

const bytes = (store, id) => fs.readFileSync(store.logPath(id));

pgTest('a pushed session pulls byte-identical, and again only its new lines', async () => {
  const m = await machines();
  const ra = await m.a.connectRemote({ url, project: m.project, holder: 'laptop' });
  const rb = await m.b.connectRemote({ url, project: m.project, holder: 'ci' });
  assert.equal(ra.project, m.project);
  assert.equal(ra.holder, 'laptop');
  assert.ok((await ra.schemaVersion()) >= 1);

  const s = await m.a.createSession();
  await s.append({ role: 'user', content: 'Summarise the build log' });
  // Over the blob threshold: the blob travels along. Blobs are shared by
  // digest on the server, so this one is made new to it.
  await s.append({ role: 'tool', content: `${m.project} ${'x'.repeat(300 * 1024)}` });
  const pushed = await ra.push(s.id);
  const total = bytes(m.a, s.id).length;
  assert.deepEqual([pushed.sessionId, pushed.from, pushed.to, pushed.blobs], [s.id, 0, total, 1]);

  const listed = await rb.list();
  assert.deepEqual(listed.map((r) => r.id), [s.id]);
  assert.equal(listed[0].pushedBytes, total);
  assert.equal(listed[0].entry.title, 'Summarise the build log');

  const pulled = await rb.pull(s.id);
  assert.deepEqual([pulled.from, pulled.to], [0, total]);
  assert.deepEqual(bytes(m.b, s.id), bytes(m.a, s.id));

  await s.append({ role: 'assistant', content: 'It passed.' });
  const more = await ra.push(s.id);
  assert.equal(more.from, total);
  const again = await rb.pull(s.id);
  assert.deepEqual([again.from, again.to, again.blobs], [total, more.to, 0]);
  assert.deepEqual(bytes(m.b, s.id), bytes(m.a, s.id));
  await s.close();
});

pgTest('a follower gets exactly the lines pushed elsewhere', async () => {
  const m = await machines();
  const ra = await m.a.connectRemote({ url, project: m.project, holder: 'laptop' });
  const rb = await m.b.connectRemote({ url, project: m.project, holder: 'dashboard' });
  const s = await m.a.createSession();
  await s.append({ role: 'user', content: 'first' });
  await ra.push(s.id);
  const start = bytes(m.a, s.id).length;
  const follower = await rb.follow(s.id);
  assert.equal(follower.offset, start);
  assert.deepEqual(await follower.nextLines(0), []);
  for (let i = 0; i < 3; i++) await s.append({ role: 'assistant', content: `line ${i}` });
  await ra.push(s.id);
  const want = bytes(m.a, s.id).subarray(start);
  const got = [];
  while (Buffer.concat(got).length < want.length) {
    const more = await follower.nextLines(10_000);
    assert.ok(more.length > 0, 'no lines within 10 s of a push');
    got.push(...more);
  }
  assert.deepEqual(Buffer.concat(got), want);
  assert.ok(got.every((l) => l.at(-1) === 0x0a));
  assert.equal(follower.offset, start + want.length);
  await assert.rejects(follower.nextLines(-1), (e) => e.code === ErrorCode.INVALID_INPUT);
  await rejects(rb.follow('0190a4b0-0000-7000-8000-000000000000'), ErrorCode.NOT_FOUND);
  await s.close();
});

pgTest('a held lease is BUSY elsewhere, and a stale one is refused', async () => {
  const m = await machines();
  // A lease no load outlasts: it ends below because the test shortens it.
  const ra = await m.a.connectRemote({ url, project: m.project, holder: 'laptop' });
  const rb = await m.b.connectRemote({ url, project: m.project, holder: 'sandbox' });
  const s = await m.a.createSession();
  await s.append({ role: 'user', content: 'one' });
  const lease = await ra.acquire(s.id);
  assert.deepEqual([lease.sessionId, lease.holder], [s.id, 'laptop']);
  await ra.push(s.id, lease);
  await rb.pull(s.id);

  await rejects(rb.acquire(s.id), ErrorCode.BUSY, /laptop/);
  await rejects(rb.push(s.id), ErrorCode.BUSY);

  // A vanishes and its lease runs out, without the test racing a clock: A's
  // last renewal asked for 1 ms, and B tries once the database's clock (this
  // machine's) is past it. B takes over with a larger token.
  const brief = await m.a.connectRemote({ url, project: m.project, holder: 'laptop', leaseTtlMs: 1 });
  const lapsing = await brief.renew(lease);
  assert.equal(lapsing.token, lease.token);
  while (Date.now() <= lapsing.expiresMs + 1) await sleep(5);
  const taken = await rb.acquire(s.id);
  assert.ok(taken.token > lease.token);
  const w = await m.b.openSession(s.id);
  await w.append({ role: 'assistant', content: "B's line" });
  await w.close();
  await rb.push(s.id, taken);

  await s.append({ role: 'assistant', content: "A's late line" });
  await rejects(ra.push(s.id, lease), ErrorCode.BUSY);
  await rejects(ra.renew(lease), ErrorCode.BUSY);
  assert.equal((await rb.list())[0].pushedBytes, bytes(m.b, s.id).length);
  await rb.release(await rb.renew(taken));
  await s.close();
});

pgTest('bad input is refused with what was wrong', async () => {
  const m = await machines();
  const rb = await m.b.connectRemote({ url, project: m.project, holder: 'ci' });
  for (const bad of ['../escape', '/etc/passwd', 'a/b', '', 'blobs']) {
    await rejects(rb.pull(bad), ErrorCode.INVALID_INPUT);
    await rejects(rb.acquire(bad), ErrorCode.INVALID_INPUT);
  }
  assert.equal(fs.existsSync(`${m.homeB}/escape`), false);
  await rejects(rb.pull('0190a4b0-0000-7000-8000-000000000000'), ErrorCode.NOT_FOUND);
  await rejects(rb.release({ sessionId: 'x', token: 'not a number' }), ErrorCode.INVALID_INPUT, /lease/);
  await rejects(rb.push('x', 'not an object'), ErrorCode.INVALID_INPUT, /lease/);
  await rejects(m.b.connectRemote({ url, leaseTtlMs: 0 }), ErrorCode.INVALID_INPUT, /lease time/);
});

test('no remote, an unknown option and an unreachable server say what failed', async () => {
  const { store, dir } = await freshStore();
  const saved = process.env.SESSIONKIT_REMOTE;
  delete process.env.SESSIONKIT_REMOTE;
  try {
    await rejects(store.connectRemote(), ErrorCode.INVALID_INPUT, /SESSIONKIT_REMOTE/);
  } finally {
    if (saved !== undefined) process.env.SESSIONKIT_REMOTE = saved;
  }
  await rejects(store.connectRemote({ uri: 'x' }), ErrorCode.INVALID_INPUT, /unknown field/);
  await rejects(store.connectRemote({ url: `host=${dir} port=1 dbname=x user=x` }), ErrorCode.IO, new RegExp(dir));
});

pgTest('a background push keeps up with the writer and gives the lease back at stop', async () => {
  const m = await machines();
  const ra = await m.a.connectRemote({ url, project: m.project, holder: 'laptop' });
  const rb = await m.b.connectRemote({ url, project: m.project, holder: 'ci' });
  const s = await m.a.createSession();
  await rejects(ra.pushInBackground(s.id, { intervalMs: 1 }), ErrorCode.INVALID_INPUT, /interval/);
  const pusher = await ra.pushInBackground(s.id, { intervalMs: 20 });
  // The writer appends, never waiting for the network, until the pusher has
  // pushed on its interval, unasked. (Its renewal of the lease is the core's;
  // core/tests/remote.rs waits for one.)
  const deadline = Date.now() + 120_000;
  for (let n = 0; pusher.pushed === 0; n++) {
    assert.ok(Date.now() < deadline, 'nothing pushed on the interval in 120 s');
    await s.append({ role: 'user', content: `turn ${n}` });
    await sleep(5);
  }
  await rejects(rb.acquire(s.id), ErrorCode.BUSY, /laptop/);
  assert.ok(pusher.pushed > 0, 'nothing pushed on the interval');
  const flushed = await pusher.flush();
  assert.equal(flushed.to, bytes(m.a, s.id).length);
  await s.append({ role: 'assistant', content: 'done' });
  const stopped = await pusher.stop();
  assert.equal(stopped.to, bytes(m.a, s.id).length);
  await rejects(pusher.stop(), ErrorCode.INVALID_INPUT, /stopped already/);
  await rb.pull(s.id);
  assert.deepEqual(bytes(m.b, s.id), bytes(m.a, s.id));
  await rb.release(await rb.acquire(s.id));
  await s.close();
});
