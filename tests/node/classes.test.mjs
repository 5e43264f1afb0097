// The package's error classes, its table of enums and defaults, and how its
// handles print: what a user checks with `instanceof`, reads from
// `defaults`, and sees in `console.log`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createRequire } from 'node:module';
import { inspect } from 'node:util';

import * as esm from 'sessionkit';
import {
  BusyError,
  ConflictError,
  InvalidInputError,
  NotFoundError,
  SessionkitError,
  defaults,
  enums,
  errorKinds,
} from 'sessionkit';

import { freshStore, here } from './helpers.mjs';

const require = createRequire(import.meta.url);
const cjs = require('sessionkit');
const pkg = path.join(here, '..', '..', 'bindings', 'node');
const native = require(path.join(pkg, 'native.js'));

/** NOT_FOUND -> NotFoundError, INVALID_INPUT -> InvalidInputError. */
const className = (kind) =>
  kind
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('') + 'Error';

test('one exported class per kind of the core error table, the same from require and import', () => {
  assert.deepEqual(enums.errorKind, errorKinds.map((k) => k.name));
  for (const { name } of errorKinds) {
    const C = esm[className(name)];
    assert.equal(typeof C, 'function', `${className(name)} is exported`);
    assert.equal(C, cjs[className(name)], `${className(name)}: one class for CommonJS and ESM`);
    assert.equal(C.code, name);
    const e = new C('made here');
    assert.ok(e instanceof SessionkitError && e instanceof Error);
    assert.equal(e.code, name);
    assert.equal(e.errno, null);
    assert.equal(e.name, className(name));
    assert.match(String(e), new RegExp(`^${className(name)}: made here$`));
  }
  assert.equal(cjs.SessionkitError, SessionkitError);
  const withErrno = new SessionkitError('x', { code: 'IO', errno: 2 });
  assert.equal(withErrno.code, 'IO');
  assert.equal(withErrno.errno, 2);
});

test('errors from the core and from argument checks are instances of their kind', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  await assert.rejects(store.openSession(s.id), (e) => {
    assert.ok(e instanceof BusyError, `${e.name}: ${e.message}`);
    assert.ok(e instanceof cjs.BusyError && e instanceof SessionkitError);
    assert.equal(e.code, 'BUSY');
    assert.equal(e.errno, null);
    assert.equal(e.name, 'BusyError');
    return true;
  });
  await assert.rejects(store.sessionEntry('0190aaaa-0000-7000-8000-000000000000'), NotFoundError);
  await assert.rejects(s.append(undefined), InvalidInputError, 'checked before the call');
  await assert.rejects(s.rewind('nope', 'sideways'), InvalidInputError, 'refused by the core');
  assert.throws(() => store.logPath(42), InvalidInputError, 'a synchronous check throws its class too');
  const m = await s.append({ id: 'm-1', role: 'user', content: 'x' });
  await assert.rejects(s.append({ id: m.id, role: 'user', content: 'again' }), ConflictError);
  await s.close();
  await assert.rejects(s.append({ role: 'user', content: 'late' }), InvalidInputError, 'closed');
  assert.throws(() => s.info(), InvalidInputError);
});

test('concurrent appends: a bad message rejects its own caller only, the others chain in order', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const first = s.append({ role: 'user', content: 'first' }); // in flight: the rest wait together
  const a = s.append({ role: 'assistant', content: 'a' });
  const bad = s.append({ role: 'user', content: 'a lone \ud800 surrogate' }); // unreadable JSON for the core
  const noRole = s.appendBatch([{ role: 'user', content: 'ok' }, { content: 'no role' }]);
  const b = s.appendBatch([{ role: 'user', content: 'b1' }, { role: 'assistant', content: 'b2' }]);
  const c = s.append({ role: 'user', content: 'c' });
  const r = await Promise.allSettled([first, a, bad, noRole, b, c]);
  assert.deepEqual(
    r.map((x) => x.status),
    ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.ok(r[2].reason instanceof InvalidInputError, r[2].reason.message);
  assert.ok(r[3].reason instanceof InvalidInputError, r[3].reason.message);
  const [m1, ma, , , mb, mc] = r.map((x) => x.value);
  assert.equal(ma.parentId, m1.id);
  assert.deepEqual(mb.map((m) => m.content), ['b1', 'b2']);
  assert.equal(mb[0].parentId, ma.id, 'the refused groups left no trace in the chain');
  assert.equal(mc.parentId, mb[1].id);
  assert.deepEqual((await s.activePath()).map((m) => m.content), ['first', 'a', 'b1', 'b2', 'c']);
  await s.close();
});

test('a subagent answers concurrent appends per call too', async () => {
  const { store } = await freshStore();
  const s = await store.createSession();
  const a = await s.spawnSubagent('worker');
  const r = await Promise.allSettled([
    a.append({ role: 'user', content: 'task' }),
    a.append({ role: 'assistant', content: 'step' }),
    a.append({ content: 'no role' }),
    a.appendBatch([{ role: 'assistant', content: 'done' }]),
  ]);
  assert.deepEqual(r.map((x) => x.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  assert.ok(r[2].reason instanceof InvalidInputError, r[2].reason.message);
  assert.equal(r[3].value[0].parentId, r[1].value.id);
  assert.deepEqual((await (await a.read()).activePath()).map((m) => m.content), ['task', 'step', 'done']);
  await a.close();
  await s.close();
});

test('the enums and defaults the package exposes are the core table', () => {
  const table = JSON.parse(native.defaults());
  assert.deepEqual(enums, table.enums);
  assert.deepEqual(defaults, table.defaults);
  assert.ok(Object.isFrozen(defaults) && Object.isFrozen(enums.rewindMode));
  assert.equal(esm.defaults, cjs.defaults);
});

test('the typed unions of index.d.ts list the core enums', () => {
  const dts = fs.readFileSync(path.join(pkg, 'index.d.ts'), 'utf8');
  const union = (name) => {
    const m = new RegExp(`export type ${name} =([^;]*);`).exec(dts);
    assert.ok(m, `index.d.ts types ${name}`);
    return [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]).sort();
  };
  const pairs = {
    Durability: 'durability',
    SessionStatus: 'status',
    RewindMode: 'rewindMode',
    ExportFormat: 'exportFormat',
    ImportFormat: 'importFormat',
    ExportTarget: 'exportTarget',
    MemoryScope: 'memoryScope',
    SettingSource: 'settingSource',
    WritableSettingSource: 'writableSettingSource',
    ErrorCodeName: 'errorKind',
  };
  for (const [type, key] of Object.entries(pairs)) {
    assert.deepEqual(union(type), [...enums[key]].sort(), `${type} vs enums.${key}`);
  }
});

test('optional arguments take the core defaults', async () => {
  const { store } = await freshStore();
  const s = await store.createSession({ title: 'defaults' });
  const q = await s.userInput({ role: 'user', content: 'q1' }); // with a snapshot: files can be rewound
  await s.append({ role: 'assistant', content: 'a1' });
  const preview = await s.rewindPreview(q.id);
  assert.equal(preview.mode, defaults.rewindMode);
  const undone = await s.rewindTurns();
  assert.equal(undone.mode, defaults.rewindTurnsMode);
  assert.equal(undone.head, null, `rewinding ${defaults.rewindTurns} turn goes back before q1`);
  await s.setHead(undone.previousHead);
  await s.flushIndex();
  assert.equal(await store.exportSession(s.id), await store.exportSession(s.id, defaults.exportFormat));
  await store.addMemory('note', 'text');
  assert.deepEqual((await store.listMemories({ scope: defaults.memoryScope })).map((m) => m.name), ['note']);
  await s.close();
});

test('util.inspect shows what identifies a handle', async () => {
  const { store } = await freshStore();
  const s = await store.createSession({ title: 'shown title' });
  assert.equal(inspect(s), `Session { id: '${s.id}', title: 'shown title' }`);
  const a = await s.spawnSubagent('helper');
  assert.equal(inspect(a), `Subagent { id: 'helper', sessionId: '${s.id}' }`);
  await a.close();
  assert.match(inspect(a), /closed: true/);
  assert.equal(inspect(store), `Store { projectCode: '${store.projectCode}' }`);
  await s.close();
  assert.equal(inspect(s), `Session { id: '${s.id}', closed: true }`);
});

test('the result types of index.d.ts name every member the core returns', async () => {
  const dts = fs.readFileSync(path.join(pkg, 'index.d.ts'), 'utf8');
  /** The members of `export interface name { ... }` (two-space indented). */
  const members = (name) => {
    const m = new RegExp(`export interface ${name} \\{\\n([\\s\\S]*?)\\n\\}`).exec(dts);
    assert.ok(m, `index.d.ts has interface ${name}`);
    return [...m[1].matchAll(/^ {2}(\w+)\??:/gm)].map((x) => x[1]).sort();
  };
  /** Every member of `value` is typed, and every required member is there. */
  const typed = (name, value) => {
    const declared = members(name);
    for (const key of Object.keys(value)) assert.ok(declared.includes(key), `${name}.${key} is not typed`);
    const m = new RegExp(`export interface ${name} \\{\\n([\\s\\S]*?)\\n\\}`).exec(dts);
    for (const [, key] of m[1].matchAll(/^ {2}(\w+):/gm)) assert.ok(key in value, `${name}.${key} is typed but absent`);
  };
  const { store } = await freshStore();
  const s = await store.createSession({ title: 'shapes' });
  const q = await s.userInput({ role: 'user', content: 'q1' });
  await s.append({ role: 'assistant', content: 'a1' });
  await s.flushIndex();
  typed('SessionEntry', (await store.listSessions())[0]);
  typed('SessionInfo', s.info());
  typed('StoreInfo', store.info());
  typed('ReadReport', s.info().openReport);
  const view = await s.read();
  typed('ViewInfo', view.info());
  typed('TreeNode', (await view.tree())[0]);
  typed('Branch', (await view.branches())[0]);
  typed('UndoCandidate', (await s.undoCandidates())[0]);
  typed('RewindPlan', await s.rewindPlan(q.id));
  typed('RewindPreview', await s.rewindPreview(q.id));
  const plan = await s.selectCompaction({ tokenBudget: 1, keepLastTurns: 0 });
  typed('CompactionPlan', plan);
  assert.equal(await s.selectCompaction({ tokenBudget: 1_000_000 }), null, 'nothing to compact: null');
  typed('StoreGcReport', await store.gc());
  typed('HistorySizeReport', await store.fileHistorySizes());
  typed('FileHistoryCheck', await store.checkFileHistory());
  typed('RebuildReport', await store.rebuildIndex());
  const doctor = await store.doctor();
  typed('DoctorReport', doctor);
  typed('DoctorIndexCheck', doctor.index);
  typed('DoctorLogCheck', doctor.logs[0]);
  typed('RewindResult', await s.rewind(q.id));
  await s.close();
});
