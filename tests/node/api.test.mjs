// Every method of Store, Session, SessionView and Subagent, as a Node user
// calls them: plain objects in and out, Promises for disk work.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createRequire } from 'node:module';

import * as esm from 'sessionkit';
import { ErrorCode, Session, SessionView, Store, Subagent, errorKinds, version } from 'sessionkit';

import { freshStore } from './helpers.mjs';

const require = createRequire(import.meta.url);

test('CommonJS and ESM entry points give the same objects', () => {
  const cjs = require('sessionkit');
  assert.equal(cjs.Store, esm.Store);
  assert.equal(cjs.Session, Session);
  assert.match(version(), /^\d+\.\d+\.\d+/);
  assert.deepEqual(errorKinds.map((k) => k.name), Object.keys(ErrorCode));
  assert.ok(errorKinds.some((k) => k.name === 'BUSY' && typeof k.code === 'number'));
  assert.equal(cjs.poolRoundTrip, esm.poolRoundTrip);
});

test('poolRoundTrip (a diagnostic) settles after a task on the libuv pool', async () => {
  const p = esm.poolRoundTrip();
  assert.ok(p instanceof Promise);
  let settled = false;
  p.then(() => (settled = true));
  await Promise.resolve();
  assert.equal(settled, false, 'it settles on a later turn of the loop, not synchronously');
  assert.equal(await p, undefined);
});

test('messages round-trip as plain objects, unknown members and nesting kept', async () => {
  const { store } = await freshStore();
  const s = await store.createSession({ title: 'round trip' });
  const given = {
    role: 'assistant',
    content: [{ type: 'text', text: 'héllo ✓ \u0000 "q"' }],
    messageParams: { toolCalls: [{ id: 'c1', function: { name: 'f', arguments: '{"a":1}' } }] },
    meta: { n: 1.5, big: 2 ** 53 - 1, neg: -3, t: true, f: false, nil: null, deep: { a: [[[]]] } },
  };
  const m = await s.append(given);
  for (const [k, v] of Object.entries(given)) assert.deepEqual(m[k], v);
  assert.equal(typeof m.id, 'string');
  assert.equal(typeof m.timestamp, 'string');
  assert.ok(!Number.isNaN(new Date(m.timestamp).getTime()), 'timestamps are ISO 8601 strings');
  const [again] = await s.activePath();
  assert.deepEqual(again, m);
  const view = await store.readSession(s.id);
  assert.deepEqual(await view.message(m.id), m);
});

test('store methods: list, entry, resolve, continue, rename, export, delete', async () => {
  const { store, project } = await freshStore();
  assert.equal(store.info().projectRoot, fs.realpathSync(project));
  assert.equal(typeof store.projectCode, 'string');
  const s = await store.createSession({ title: 'first' });
  const u = await s.userInput({ role: 'user', content: 'hi' });
  await s.append({ role: 'assistant', content: 'hello' });
  await s.close();
  assert.deepEqual(await store.sessionIds(), [s.id]);
  const [entry] = await store.listSessions();
  assert.equal(entry.id, s.id);
  assert.equal((await store.sessionEntry(s.id)).id, s.id);
  assert.equal(await store.resolveSession(s.id.slice(0, 12)), s.id);
  assert.equal((await store.continueSession()).id, s.id);
  assert.equal((await store.renameSession(s.id, 'renamed')).title, 'renamed');
  assert.equal(path.basename(store.logPath(s.id)), `${s.id}.jsonl`);
  const jsonl = await store.exportSession(s.id, 'jsonl');
  assert.ok(jsonl.includes(u.id));
  assert.match(await store.exportSession(s.id, 'markdown'), /hello/);
  assert.deepEqual((await store.modelView(s.id)).map((m) => m.content), ['hi', 'hello']);
  assert.ok(typeof (await store.rebuildIndex()) === 'object');
  assert.ok(typeof (await store.doctor()) === 'object');
  assert.ok(typeof (await store.gc()) === 'object');
  assert.ok(typeof (await store.fileHistorySizes()) === 'object');
  assert.ok(typeof (await store.checkFileHistory()) === 'object');
  assert.ok(typeof (await store.pruneOrphanFileHistory()) === 'object');
  await store.deleteSession(s.id);
  assert.deepEqual(await store.sessionIds(), []);
  await assert.rejects(store.readSession(s.id), { code: 'NOT_FOUND' });
});

test('session methods: head moves, patches, state, compaction, fork, views', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  assert.ok(s instanceof Session);
  assert.equal(s.head(), null);
  const [a, b, c] = await s.appendBatch([
    { role: 'user', content: 'one' },
    { role: 'assistant', content: 'two' },
    { role: 'user', content: 'three' },
  ]);
  assert.equal(s.head(), c.id);
  assert.equal(b.parentId, a.id);
  await s.patchMessage(b.id, { meta: { usage: 5 } });
  assert.deepEqual((await (await s.read()).message(b.id)).meta, { usage: 5 });
  assert.equal(typeof (await s.updateState({ status: 'completed' })), 'object');
  assert.equal((await s.rename('t')).title, 't');
  await s.setHead(a.id);
  assert.deepEqual((await s.activePath()).map((m) => m.id), [a.id]);
  await s.resumeAt(c.id);
  assert.equal(s.head(), c.id);
  const summary = await s.applyCompaction([a.id, b.id], 'summary of one and two');
  const mv = await s.modelView();
  assert.deepEqual(mv.map((m) => m.id), [summary.id, c.id]);
  assert.equal((await s.modelView({ lastN: 1 })).at(-1).id, c.id);
  assert.equal(await s.selectCompaction({ tokenBudget: 1_000_000 }), null);
  const view = await s.read();
  assert.ok(view instanceof SessionView);
  assert.equal(view.info().head, s.head());
  assert.ok(Array.isArray(view.records()));
  const ui = await view.uiView();
  assert.deepEqual(ui.filter((m) => m.compacted).map((m) => m.id), [a.id, b.id]);
  assert.equal(await view.resolveMessage(c.id.slice(0, 34)), c.id);
  assert.equal(typeof (await view.tree()), 'object');
  assert.ok(Array.isArray(await view.branches()));
  await s.sync();
  await s.flushIndex();
  assert.equal(typeof s.fsyncCount(), 'number');
  assert.equal(typeof s.info(), 'object');
  assert.ok(Array.isArray(await s.undoCandidates()));
  await s.close();
  assert.equal(s.closed, true);
  await s.close(); // closing twice does nothing
  const f = await store.forkSession(s.id, { title: 'fork' });
  assert.notEqual(f.id, s.id);
  assert.deepEqual((await f.activePath()).map((m) => m.content), (await (await store.readSession(s.id)).activePath()).map((m) => m.content));
  await f.close();
});

test('subagents: spawn, append, finish, list, read', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  await s.append({ role: 'user', content: 'go' });
  const a = await s.spawnSubagent('agent-1', { task: 'look' });
  assert.ok(a instanceof Subagent);
  assert.equal(a.id, 'agent-1');
  assert.equal(a.sessionId, s.id);
  await a.append({ role: 'user', content: 'sub' });
  await a.appendBatch([{ role: 'assistant', content: 'done' }]);
  assert.equal((await (await a.read()).activePath()).length, 2);
  await a.finish({ ok: true }, false);
  await a.close();
  const [meta] = await store.listSubagents(s.id);
  assert.equal(meta.agentId, 'agent-1');
  assert.equal((await (await store.readSubagent(s.id, 'agent-1')).activePath()).length, 2);
  const again = await s.openSubagent('agent-1');
  await again.close();
});

test('file history: track, snapshot, external changes, rewind plan', async () => {
  const { store, project } = await freshStore();
  const s = await store.createSession();
  const file = path.join(project, 'a.txt');
  fs.writeFileSync(file, 'one\n');
  const u = await s.userInput({ role: 'user', content: 'edit a' });
  await s.trackRead([file]);
  const before = await s.beforeEdit([file]);
  fs.writeFileSync(file, 'two\n');
  const after = await s.afterEdit([file]);
  assert.equal(typeof before, 'string');
  assert.equal(typeof after, 'string');
  assert.equal(await s.lastSnapshot(), after);
  assert.ok((await s.trackedFiles()).some((p) => p.endsWith('a.txt')));
  assert.ok(Array.isArray(await s.externalChanges([file])));
  await s.ensureUnchanged([file]);
  assert.equal(typeof (await s.snapshotPlan(before)), 'object');
  assert.equal(typeof (await s.rewindPlan(u.id)), 'object');
  assert.equal(typeof (await s.rewindPreview(u.id, 'files')), 'object');
  await s.restoreSnapshot(before, { force: true });
  assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
  await s.rewind(u.id, 'conversation');
});

test('Responses items: append, read with a limit, pop moves the head back', async () => {
  const { store } = await freshStore();
  const s = await store.openOrCreateSession('agents-items-1');
  assert.equal(s.id, 'agents-items-1');
  const items = [
    { role: 'user', content: 'q' },
    { type: 'function_call', callId: 'c1', name: 'f', arguments: '{}' },
    { type: 'function_call_result', callId: 'c1', name: 'f', output: { type: 'text', text: 'r' } },
  ];
  await s.appendResponsesItems(items);
  assert.deepEqual(await s.responsesItems(), items);
  assert.deepEqual(await s.responsesItems({ limit: 1 }), items.slice(2));
  const logBefore = fs.statSync(store.logPath(s.id)).size;
  assert.deepEqual(await s.popResponsesItem(), items[2]);
  assert.deepEqual(await s.responsesItems(), items.slice(0, 2));
  assert.ok(fs.statSync(store.logPath(s.id)).size > logBefore, 'pop appends, it rewrites nothing');
});

test('Symbol.asyncDispose closes store and session', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  await s[Symbol.asyncDispose]();
  assert.equal(s.closed, true);
  await store[Symbol.asyncDispose]();
  assert.equal(store.closed, true);
  assert.ok(Store.open);
});

test('rewindTurns goes back turn by turn; erase starts the session again under its id', async () => {
  const { store } = await freshStore();
  const s = await store.createSession({ id: 'turns' });
  for (let i = 0; i < 3; i++) {
    await s.append({ role: 'user', content: `q${i}` });
    await s.append({ role: 'assistant', content: `a${i}` });
  }
  await assert.rejects(s.rewindTurns(0), { code: 'INVALID_INPUT' });
  await assert.rejects(s.rewindTurns(1.5), { code: 'INVALID_INPUT' });
  await s.rewindTurns(2);
  assert.deepEqual((await s.activePath()).map((m) => m.content), ['q0', 'a0']);
  const fresh = await s.erase();
  assert.equal(s.closed, true);
  assert.equal(fresh.id, 'turns');
  assert.deepEqual(await fresh.activePath(), []);
  await fresh.append({ role: 'user', content: 'again' });
  await fresh.close();
  const text = fs.readFileSync(store.logPath('turns'), 'utf8');
  assert.doesNotMatch(text, /q0/);
  assert.match(text, /again/);
  await assert.rejects(s.erase(), { code: 'INVALID_INPUT', message: /closed/ });
});

test('retention is opt-in: listTrash and restoreSession bring a pruned session back', async () => {
  const { home, project, store } = await freshStore();
  for (let i = 0; i < 52; i++) {
    const s = await store.createSession();
    assert.deepEqual(s.info().pruned, []);
    await s.close();
  }
  assert.equal((await store.listSessions()).length, 52);
  assert.deepEqual(await store.listTrash(), []);

  const kept = await Store.open(project, { home, durability: 'never', maxSessions: 1 });
  const before = await kept.listSessions();
  const fresh = await kept.createSession({ id: 'fresh' });
  assert.equal(fresh.info().pruned.length, 52);
  await fresh.close();
  const trash = await kept.listTrash();
  assert.equal(trash.length, 52);
  assert.equal(trash[0].reason, 'pruned');
  assert.ok(trash[0].purgeAfter > trash[0].trashedAt);
  const back = await kept.restoreSession(before[0].id);
  assert.equal(back.id, before[0].id);
  assert.equal((await kept.listTrash()).length, 51);
  await assert.rejects(kept.restoreSession(before[0].id), { code: 'NOT_FOUND' });
  await assert.rejects(kept.restoreSession('../x'), { code: 'INVALID_INPUT' });
  await assert.rejects(kept.restoreSession('fresh'), { code: 'NOT_FOUND' });

  const now = await Store.open(project, { home, durability: 'never', trashGraceSecs: 0 });
  const report = await now.gc();
  assert.equal(report.trashPurged.length, 51);
  assert.deepEqual(await now.listTrash(), []);
});

test('checkpointSummaries lists a thread without its values; memoryPath names the directory', async () => {
  const { store, home } = await freshStore();
  await store.checkpointPut('thread-1', {
    ns: '',
    checkpoint: { v: 1, id: 'cp-1', ts: '2026-01-01T00:00:00Z', channel_versions: { messages: '1' } },
    metadata: { source: 'input', step: -1 },
    values: [{ channel: 'messages', version: '1', value: { type: 'json', bytes: Buffer.from('[]') } }],
  });
  const threads = (await store.listSessions()).map((e) => e.id);
  assert.equal(threads.length, 1);
  const [summary] = await store.checkpointSummaries(threads[0]);
  assert.equal(summary.id, 'cp-1');
  assert.deepEqual(summary.channels, ['messages']);
  assert.equal(summary.writes, 0);
  const session = await store.createSession();
  assert.deepEqual(await store.checkpointSummaries(session.id), []);
  await session.close();
  assert.ok(store.memoryPath({ scope: 'user' }).startsWith(home));
  assert.notEqual(store.memoryPath(), store.memoryPath({ scope: 'user' }));
  assert.throws(() => store.memoryPath({ scope: 'team' }), /team/);
  await store.close();
});

test('listPage is a slice of listSessions with the total', async () => {
  const { store } = await freshStore();
  for (let i = 0; i < 5; i++) {
    const s = await store.createSession();
    await s.append({ role: 'user', content: `task ${i}` });
    await s.close();
  }
  const whole = (await store.listSessions()).map((e) => e.id);
  const page = await store.listPage({ offset: 1, limit: 2 });
  assert.equal(page.total, 5);
  assert.deepEqual(page.sessions.map((e) => e.id), whole.slice(1, 3));
  assert.deepEqual((await store.listPage()).sessions.map((e) => e.id), whole);
  assert.deepEqual((await store.listPage({ offset: 9 })).sessions, []);
  await assert.rejects(store.listPage({ page: 2 }), { code: 'INVALID_INPUT', message: /page/ });
});
