// Bad input rejects with the right `code` and leaves the store as it was:
// wrong types, undefined, cycles, BigInt, unknown and traversal ids, closed
// handles. Errors come from the core's one table (errorKinds). Where no addon
// loads, the package throws UNSUPPORTED naming the platform.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import * as sessionkit from 'sessionkit';
import { SessionkitError, errorKinds } from 'sessionkit';

import { freshStore, here, snapshotTree } from './helpers.mjs';

const cyclic = () => {
  const o = { role: 'user' };
  o.self = o;
  return o;
};

/** An array nested `depth` levels deep. */
const nested = (depth) => {
  let v = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
};

/** Assert that `f()` rejects (never throws synchronously) with `code`. */
async function rejectsWith(f, code, what) {
  let p;
  try {
    p = f();
  } catch (e) {
    assert.fail(`${what}: threw synchronously (${e.code}: ${e.message}) instead of rejecting`);
  }
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof Error, `${what}: not an Error`);
    assert.equal(e.code, code, `${what}: ${e.message}`);
    assert.ok(e instanceof SessionkitError, `${what}: not a SessionkitError`);
    assert.equal(e.constructor.code, code, `${what}: a ${e.constructor.name}, not the class of ${code}`);
    assert.equal(sessionkit[e.constructor.name], e.constructor, `${what}: its class is exported`);
    assert.ok('errno' in e, `${what}: no errno`);
    return true;
  });
}

test('every code the bindings raise is in the core table', () => {
  const names = errorKinds.map((k) => k.name);
  for (const c of ['NOT_FOUND', 'BUSY', 'CONFLICT', 'INVALID_INPUT', 'CORRUPT', 'IO', 'UNSUPPORTED', 'INTERNAL']) {
    assert.ok(names.includes(c), c);
  }
});

test('bad arguments reject with INVALID_INPUT and change nothing', async () => {
  const { home, store } = await freshStore();
  const s = await store.createSession();
  const m = await s.append({ role: 'user', content: 'kept' });
  await s.flushIndex();
  const before = snapshotTree(home);
  const cases = [
    ['append(undefined)', () => s.append(undefined)],
    ['append(null)', () => s.append(null)],
    ['append("text")', () => s.append('text')],
    ['append(42)', () => s.append(42)],
    ['append([])', () => s.append([])],
    ['append(cyclic)', () => s.append(cyclic())],
    ['append(BigInt)', () => s.append({ role: 'user', content: 1n })],
    ['appendBatch(object)', () => s.appendBatch({ role: 'user' })],
    ['appendBatch([1])', () => s.appendBatch([1])],
    ['appendBatch([cyclic])', () => s.appendBatch([cyclic()])],
    // What JSON.stringify writes but FORMAT.md §5 refuses: the core's strict parse.
    ['append(lone surrogate)', () => s.append({ role: 'user', content: '\ud800' })],
    ['append(lone surrogate name)', () => s.append({ role: 'user', content: 'x', ['\udc00']: 1 })],
    ['appendBatch([lone surrogate])', () => s.appendBatch([{ role: 'user', content: 'ok' }, { role: 'user', content: 'a\udfffb' }])],
    ['append(nested 200 deep)', () => s.append({ role: 'user', content: 'x', deep: nested(200) })],
    ['patchMessage(id, lone surrogate)', () => s.patchMessage(m.id, { content: '\ud800' })],
    ['updateState(lone surrogate)', () => s.updateState({ title: 'a\ud800' })],
    ['patchMessage(1, {})', () => s.patchMessage(1, {})],
    ['patchMessage(id, "x")', () => s.patchMessage(m.id, 'x')],
    ['setHead(5)', () => s.setHead(5)],
    ['resumeAt(undefined)', () => s.resumeAt(undefined)],
    ['rename(null)', () => s.rename(null)],
    ['trackRead("a")', () => s.trackRead('a')],
    ['trackRead([1])', () => s.trackRead([1])],
    ['rewind(id, "sideways")', () => s.rewind(m.id, 'sideways')],
    ['rewind(id, "files", {force: 1})', () => s.rewind(m.id, 'files', { force: 1 })],
    ['responsesItems({limit: -1})', () => s.responsesItems({ limit: -1 })],
    ['responsesItems({limit: 1n})', () => s.responsesItems({ limit: 1n })],
    ['appendResponsesItems({})', () => s.appendResponsesItems({})],
    ['replaceResponsesItemsWithCompaction([])', () => s.replaceResponsesItemsWithCompaction([])],
    ['replaceResponsesItemsWithCompaction([user item])', () => s.replaceResponsesItemsWithCompaction([{ role: 'user', content: 'x' }])],
    ['replaceResponsesItemsWithCompaction({})', () => s.replaceResponsesItemsWithCompaction({})],
    ['modelView({unknown: 1})', () => s.modelView({ unknown: 1 })],
    ['modelView("x")', () => s.modelView('x')],
    ['openSession(undefined)', () => store.openSession(undefined)],
    ['openSession(123)', () => store.openSession(123)],
    ['openSession("../../etc/passwd")', () => store.openSession('../../etc/passwd')],
    ['openSession("/abs")', () => store.openSession('/abs')],
    ['openOrCreateSession("a/b")', () => store.openOrCreateSession('a/b')],
    ['readSession("..")', () => store.readSession('..')],
    ['deleteSession("../x")', () => store.deleteSession('../x')],
    ['createSession({id: "../x"})', () => store.createSession({ id: '../x' })],
    ['createSession({nope: 1})', () => store.createSession({ nope: 1 })],
    ['exportSession(id, "pdf")', () => store.exportSession(s.id, 'pdf')],
    ['readSubagent(id, "../a")', () => store.readSubagent(s.id, '../a')],
  ];
  for (const [what, f] of cases) await rejectsWith(f, 'INVALID_INPUT', what);
  await s.flushIndex();
  assert.deepEqual(snapshotTree(home), before, 'the store is unchanged');
  assert.deepEqual((await s.activePath()).map((x) => x.id), [m.id]);
  await s.close();
});

test('unknown ids reject with NOT_FOUND', async () => {
  const { store } = await freshStore();
  const id = '01900000-0000-7000-8000-000000000000';
  await rejectsWith(() => store.openSession(id), 'NOT_FOUND', 'openSession');
  await rejectsWith(() => store.readSession(id), 'NOT_FOUND', 'readSession');
  await rejectsWith(() => store.sessionEntry(id), 'NOT_FOUND', 'sessionEntry');
  await rejectsWith(() => store.forkSession(id), 'NOT_FOUND', 'forkSession');
  const s = await store.createSession();
  await rejectsWith(() => s.setHead(id), 'NOT_FOUND', 'setHead');
  await rejectsWith(async () => (await s.read()).message(id), 'NOT_FOUND', 'message');
  await s.close();
});

test('a closed handle rejects with INVALID_INPUT', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const a = await s.spawnSubagent();
  await a.close();
  await s.close();
  await rejectsWith(() => s.append({ role: 'user', content: 'late' }), 'INVALID_INPUT', 'session.append');
  await rejectsWith(() => s.activePath(), 'INVALID_INPUT', 'session.activePath');
  assert.throws(() => s.head(), { code: 'INVALID_INPUT' });
  await rejectsWith(() => a.append({ role: 'user' }), 'INVALID_INPUT', 'subagent.append');
  await store.close();
  await rejectsWith(() => store.listSessions(), 'INVALID_INPUT', 'store.listSessions');
  await rejectsWith(() => store.createSession(), 'INVALID_INPUT', 'store.createSession');
});

test('the store cannot be made by `new`', () => {
  // Store.open is the only way in: the constructor takes the native handle.
  return import('sessionkit').then(({ Store }) => {
    assert.throws(() => new Store('/tmp'), { code: 'INVALID_INPUT' });
  });
});

test('JSON text reaching the addon is parsed strictly (FORMAT.md §5), as the C ABI parses it', async () => {
  // JSON.stringify never repeats a member name or writes 1e999, but the addon
  // is a public module too: text handed to it straight must meet the same rule.
  const { createRequire } = await import('node:module');
  // native.js: the package's loader of the addon of this platform.
  const native = createRequire(import.meta.url)(path.join(here, '..', '..', 'bindings', 'node', 'native.js'));
  const { home, project } = await freshStore();
  const store = await native.openStore(project, JSON.stringify({ home, durability: 'never' }));
  const s = await store.createSession(null);
  const kept = JSON.parse(await s.append('{"role":"user","content":"kept"}'));
  const before = snapshotTree(home);
  for (const [what, text] of [
    ['a repeated member name', '{"role":"user","content":"a","content":"b"}'],
    ['an infinite number', '{"role":"user","content":"a","n":1e999}'],
    ['a lone surrogate', '{"role":"user","content":"\\ud800"}'],
  ]) {
    await assert.rejects(s.append(text), (e) => {
      assert.equal(e.code, 'INVALID_INPUT', `${what}: ${e.message}`);
      assert.match(e.message, /argument `message`/, what);
      return true;
    });
    await assert.rejects(s.appendBatch(`[${text}]`), { code: 'INVALID_INPUT' }, what);
  }
  assert.deepEqual(snapshotTree(home), before, 'the store is unchanged');
  // A page is a JSON array text, or a part of the log with each message's span.
  const page = await (await s.activePath()).nextPage(1 << 20);
  const messages =
    typeof page === 'string'
      ? JSON.parse(page)
      : Array.from({ length: page.spans.length / 2 }, (_, i) => JSON.parse(page.text.slice(page.spans[2 * i], page.spans[2 * i + 1])));
  assert.deepEqual(messages.map((x) => x.id), [kept.id]);
  await s.close();
});

test('where no addon is built or published, loading throws UNSUPPORTED naming the platform', async () => {
  // A fresh process that takes itself for another platform: no
  // sessionkit.<platform>.node beside native.js and no @sessionkit/<platform>.
  const { execFileSync } = await import('node:child_process');
  const native = path.join(here, '..', '..', 'bindings', 'node', 'native.js');
  for (const [platform, arch, name] of [
    ['freebsd', 'x64', 'freebsd-x64'],
    ['linux', 'riscv64', 'linux-riscv64-gnu'],
  ]) {
    const out = execFileSync(process.execPath, [
      '-e',
      `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} });
       Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} });
       const { UnsupportedError } = require(${JSON.stringify(path.join(path.dirname(native), 'errors.js'))});
       try { require(${JSON.stringify(native)}); } catch (e) { console.log(JSON.stringify([e.code, e.errno, e.message, e instanceof UnsupportedError])); }`,
    ]).toString();
    const [code, errno, message, classed] = JSON.parse(out);
    assert.equal(code, 'UNSUPPORTED', message);
    assert.equal(classed, true, 'an UnsupportedError');
    assert.equal(errno, null);
    assert.match(message, new RegExp(`on this platform \\(${platform}, ${arch}.*: ${name}\\)`));
    assert.match(message, new RegExp(`@sessionkit/${name}: no such package`));
    assert.match(message, /cd sessionkit\/bindings\/node; npm install; npm run build/);
  }
});
