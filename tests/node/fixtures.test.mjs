// The shared fixture corpus (tests/fixtures/manifest.json, schema in
// tests/fixtures/README.md) replayed through Node: the same views, reports and
// index entries as the Rust replay (core/tests/fixtures.rs).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';

import { Store, projectCode } from 'sessionkit';

import { fixtures, tmpdir } from './helpers.mjs';

const MANIFEST = JSON.parse(fs.readFileSync(path.join(fixtures, 'manifest.json'), 'utf8'));

const REASON_KINDS = [
  ['NUL run', 'nul'],
  ['invalid UTF-8', 'utf8'],
  ['invalid JSON', 'json'],
  ['message has no', 'noId'],
  ['patch record needs', 'badPatch'],
  ['compaction record needs', 'badCompaction'],
  ['last line has no newline', 'torn'],
];

const reasonKind = (r) => (REASON_KINDS.find(([p]) => r.startsWith(p)) ?? [null, `other: ${r}`])[1];

/** The manifest's name of an error kind (the Rust `ErrorKind` variant). */
function kindOf(e) {
  if (typeof e.code !== 'string') throw e;
  return e.code
    .split('_')
    .map((w) => w[0] + w.slice(1).toLowerCase())
    .join('');
}

/** A member as the manifest names it: absent reads as null (as in Python's `.get`). */
const get = (o, k) => (o != null && k in o ? o[k] : null);

const skipped = (s) => ({ line: s.line, offset: s.offset, length: s.length, kind: s.kind ?? reasonKind(s.reason) });

/** Collects mismatches, so that one replay reports all of them. */
class Check {
  constructor(name) {
    this.name = name;
    this.failures = [];
  }
  eq(at, got, want) {
    if (!isDeepStrictEqual(got, want)) {
      this.failures.push(`${this.name}: ${at}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
  }
  fail(what) {
    this.failures.push(`${this.name}: ${what}`);
  }
  done() {
    assert.equal(this.failures.join('\n'), '');
  }
}

async function idsOrError(f) {
  try {
    return (await f()).map((m) => m.id);
  } catch (e) {
    return { error: kindOf(e) };
  }
}

function checkReport(c, at, report, want) {
  const actual = {
    skipped: report.skipped.map(skipped),
    tornTail: report.tornTail ? skipped(report.tornTail) : null,
    brokenChains: report.brokenChains,
    duplicateIds: report.duplicateIds,
    unknownRecords: report.unknownRecords,
    missingBlobs: report.missingBlobs ?? [],
    warnings: report.warnings.length,
  };
  for (const [k, v] of Object.entries(want)) c.eq(`${at}.${k}`, actual[k], v);
}

async function checkView(c, at, view, want, resume) {
  const info = view.info();
  if ('header' in want) {
    const h = want.header;
    if (h !== null && typeof h === 'object') {
      for (const [k, v] of Object.entries(h)) c.eq(`${at}.header.${k}`, get(info.header, k), v);
    } else {
      c.eq(`${at}.header`, info.header, h);
    }
  }
  if ('head' in want) c.eq(`${at}.head`, info.head, want.head);
  if ('messageCount' in want) c.eq(`${at}.messageCount`, info.messageCount, want.messageCount);
  if ('activePath' in want) c.eq(`${at}.activePath`, await idsOrError(() => view.activePath()), want.activePath);
  if ('ui' in want) {
    let ui;
    try {
      ui = (await view.uiView()).map((m) => [m.id, m.visible, m.compacted]);
    } catch (e) {
      ui = { error: kindOf(e) };
    }
    c.eq(`${at}.ui`, ui, want.ui);
  }
  if ('modelView' in want) {
    c.eq(`${at}.modelView`, await idsOrError(() => view.modelView()), want.modelView);
    if (resume) {
      const [store, sid] = resume;
      c.eq(`${at}.modelViewResume`, await idsOrError(() => store.modelView(sid)), want.modelView);
    }
  }
  for (const cse of want.modelViewWith ?? []) {
    const got = await idsOrError(() => view.modelView(cse.options));
    c.eq(`${at}.modelViewWith ${JSON.stringify(cse.options)}`, got, cse.ids);
  }
  for (const [mid, fields] of Object.entries(want.modelViewMessages ?? {})) {
    const found = (await view.modelView()).filter((m) => m.id === mid);
    if (found.length === 0) {
      c.fail(`${at}.modelViewMessages.${mid}: not in the model view`);
      continue;
    }
    for (const [k, v] of Object.entries(fields)) c.eq(`${at}.modelViewMessages.${mid}.${k}`, get(found[0], k), v);
  }
  for (const [mid, fields] of Object.entries(want.messages ?? {})) {
    let m;
    try {
      m = await view.message(mid);
    } catch (e) {
      c.fail(`${at}.messages.${mid}: ${e.message}`);
      continue;
    }
    for (const [k, v] of Object.entries(fields)) c.eq(`${at}.messages.${mid}.${k}`, get(m, k), v);
  }
  if ('report' in want) checkReport(c, `${at}.report`, info.report, want.report);
  if ('records' in want) c.eq(`${at}.records`, view.records().map((r) => r.type), want.records);
}

function checkEntry(c, at, entry, want) {
  for (const [k, v] of Object.entries(want)) c.eq(`${at}.${k}`, get(entry, k), v);
}

function formatMs(ms) {
  return new Date(ms).toISOString();
}

async function checkOpen(c, store, sid, want) {
  const p = store.logPath(sid);
  const q = `${p}.corrupt`;
  const before = fs.readFileSync(p);
  let session;
  try {
    session = await store.openSession(sid);
  } catch (e) {
    c.eq('open.error', kindOf(e), want.error);
    c.eq('open.error leaves the log', fs.readFileSync(p).equals(before), true);
    c.eq('open.error writes no quarantine', fs.existsSync(q), false);
    return;
  }
  if ('error' in want) {
    c.fail(`open succeeded, expected ${want.error}`);
    await session.close();
    return;
  }
  let after;
  let appended;
  try {
    after = fs.readFileSync(p);
    c.eq('open.repairedTail', !after.equals(before), want.repairedTail);
    if (!after.equals(before)) {
      c.eq('open: the repair appends one newline', after.equals(Buffer.concat([before, Buffer.from('\n')])), true);
    }
    if ('openReport' in want) checkReport(c, 'open.openReport', session.info().openReport, want.openReport);
    const records = fs.existsSync(q)
      ? fs.readFileSync(q, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
      : [];
    const got = records.map((r) => {
      if (!Buffer.from(r.bytesBase64, 'base64').equals(before.subarray(r.offset, r.offset + r.length))) {
        c.fail(`quarantine record at ${r.offset} does not hold the log's bytes`);
      }
      return { line: r.line, offset: r.offset, length: r.length, kind: r.kind ?? reasonKind(r.reason) };
    });
    c.eq('open.quarantine', got, want.quarantine);
    if ('secondOpen' in want) {
      try {
        await (await store.openSession(sid)).close();
        c.fail('a second writer was let in');
      } catch (e) {
        c.eq('open.secondOpen', kindOf(e), want.secondOpen);
      }
    }
    appended = await session.append({ role: 'user', content: 'appended by the fixture test' });
    c.eq('open.appendParentId', appended.parentId, want.appendParentId);
  } finally {
    await session.close();
  }
  const now = fs.readFileSync(p);
  c.eq('open: an append keeps what was there', now.subarray(0, after.length).equals(after), true);
  if ('reread' in want) {
    const view = await store.readSession(sid);
    c.eq('open.reread.head', view.info().head, appended.id);
    await checkView(c, 'open.reread', view, want.reread, null);
  }
}

for (const entry of MANIFEST.logs) {
  test(`log ${entry.name} replays as the manifest says`, async () => {
    const c = new Check(entry.name);
    const dir = tmpdir();
    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    const store = await Store.open(project, { home: path.join(dir, 'home') });
    const storeDir = store.info().dir;
    for (const [dst, src] of Object.entries(entry.files ?? {})) {
      const to = path.join(storeDir, dst);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(path.join(fixtures, src), to);
    }
    const sid = entry.session;
    if ('lines' in entry) {
      // The log's exact text, one string per line (tests/fixtures/README.md).
      fs.writeFileSync(path.join(storeDir, `${sid}.jsonl`), entry.lines.map((l) => `${l}\n`).join(''));
    }
    const want = entry.read;
    let view = null;
    try {
      view = await store.readSession(sid);
    } catch (e) {
      c.eq('read.error', kindOf(e), want.error);
    }
    if (view) {
      if ('error' in want) c.fail(`read succeeded, expected ${want.error}`);
      await checkView(c, 'read', view, want, [store, sid]);
    }
    if ('listSessions' in entry) {
      try {
        await store.listSessions();
        c.fail('listSessions succeeded');
      } catch (e) {
        c.eq('listSessions.error', kindOf(e), entry.listSessions.error);
      }
    }
    if ('index' in entry) {
      await store.rebuildIndex();
      const rebuilt = await store.sessionEntry(sid);
      checkEntry(c, 'index', rebuilt, entry.index);
      if (entry.timesFromFileMtime) {
        const ms = Number(fs.statSync(store.logPath(sid), { bigint: true }).mtimeNs / 1_000_000n);
        c.eq('index.createdAt', rebuilt.createdAt, formatMs(ms));
        c.eq('index.updatedAt', rebuilt.updatedAt, formatMs(ms));
      }
    }
    if ('open' in entry) await checkOpen(c, store, sid, entry.open);
    c.done();
  });
}

for (const golden of MANIFEST.stores) {
  test(`golden store ${golden.name} replays as the manifest says`, async () => {
    const c = new Check(golden.name);
    const home = path.join(tmpdir(), 'home');
    fs.cpSync(path.join(fixtures, golden.home), home, { recursive: true });
    const store = await Store.open(golden.projectRoot, { home });
    c.eq('projectCode', store.projectCode, golden.projectCode);
    const indexPath = store.info().indexPath;
    const indexBytes = fs.readFileSync(indexPath);
    const listed = await store.listSessions();
    c.eq('indexOrder', listed.map((e) => e.id), golden.indexOrder);
    c.eq('listing a fresh index leaves it', fs.readFileSync(indexPath).equals(indexBytes), true);
    const cont = await store.continueSession();
    c.eq('continueSession', cont ? cont.id : null, golden.continueSession);
    const blobs = {};
    const blobDir = path.join(store.info().dir, 'blobs');
    if (fs.existsSync(blobDir)) {
      for (const f of fs.readdirSync(blobDir, { recursive: true, withFileTypes: true })) {
        if (!f.isFile()) continue;
        const p = path.join(f.parentPath ?? f.path, f.name);
        blobs[path.basename(path.dirname(p)) + f.name] = fs.statSync(p).size;
      }
    }
    c.eq('blobs', blobs, golden.blobs);
    await store.rebuildIndex();
    for (const s of golden.sessions) {
      const sid = s.session;
      await checkView(c, `${sid}.read`, await store.readSession(sid), s.read, [store, sid]);
      checkEntry(c, `${sid}.storedIndex`, listed.find((e) => e.id === sid), s.index);
      checkEntry(c, `${sid}.index`, await store.sessionEntry(sid), s.index);
      for (const a of s.subagents ?? []) {
        const metas = (await store.listSubagents(sid)).filter((m) => m.agentId === a.agentId);
        c.eq(`${sid}.subagents.${a.agentId}.meta`, metas[0] ?? null, a.meta);
        const sub = await store.readSubagent(sid, a.agentId);
        await checkView(c, `${sid}.subagents.${a.agentId}.read`, sub, a.read, null);
      }
      if ('open' in s) await checkOpen(c, store, sid, s.open);
    }
    c.done();
  });
}

test('project codes agree with the manifest', () => {
  for (const pc of MANIFEST.projectCodes) assert.equal(projectCode(pc.path), pc.code);
});

/** A checkpointer's thread as the manifest spells it (FORMAT.md §24). */
async function checkpointsRead(store, thread) {
  const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
  const records = await store.checkpointList({ threadId: thread });
  const checkpoints = records.map((r) => ({
    ns: r.ns,
    id: r.id,
    parentId: r.parentId,
    step: r.metadata.step ?? null,
    values: Object.fromEntries(
      Object.entries(r.values).map(([ch, v]) => [ch, { type: v.type, sha256: sha(v.bytes), size: v.bytes.length }]),
    ),
    writes: r.writes.map((w) => [w.taskId, w.channel, w.idx, sha(w.value.bytes)]),
  }));
  return { threadId: records.length > 0 ? records[0].threadId : null, checkpoints };
}

for (const fixture of MANIFEST.checkpointStores) {
  test(`checkpoint store ${fixture.name} replays as the manifest says`, async () => {
    const home = path.join(tmpdir(), 'home');
    fs.cpSync(path.join(fixtures, fixture.home), home, { recursive: true });
    const store = await Store.open(fixture.projectRoot, { home });
    try {
      for (const t of fixture.threads) {
        assert.deepStrictEqual(await checkpointsRead(store, t.threadId), t.read, t.threadId);
      }
    } finally {
      await store.close();
    }
  });
}
