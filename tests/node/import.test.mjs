// Import of other agents' transcripts, listing every project, export as JSON.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { ErrorCode, importTranscripts, listAllSessions } from 'sessionkit';

import { fixtures, freshStore } from './helpers.mjs';

const CODEX = '019a2d7a-41c4-78b1-b7cc-a45d62a89cd5';

test('importTranscripts brings a Codex rollout in once', async () => {
  const { home, project, store } = await freshStore();
  const src = path.join(fixtures, 'import', 'codex', '2025', '10', '29');
  const report = await importTranscripts([src], { project, store: { home } });
  assert.equal(report.failed, 0);
  assert.equal(report.messagesAdded, 11);
  assert.equal(report.sources[0].sessionId, CODEX);
  const entry = await store.sessionEntry(CODEX);
  assert.equal(entry.title, 'Why does the greeting test fail?');

  const again = await importTranscripts([src], { project, from: 'codex', store: { home } });
  assert.equal(again.messagesAdded, 0);
  assert.deepEqual(again.sources.map((s) => s.outcome), ['upToDate']);

  const exported = JSON.parse(await store.exportSession(CODEX, 'json'));
  assert.equal(exported.at(-1).id, 'line-16');
  const all = await listAllSessions({ home });
  assert.equal(all.length, 1);
  assert.equal(all[0].sessions[0].id, CODEX);
});

test('importTranscripts rejects bad arguments with the core error codes', async () => {
  const { home, project } = await freshStore();
  await assert.rejects(importTranscripts([path.join(project, 'missing')], { project, store: { home } }), {
    code: ErrorCode.NOT_FOUND,
  });
  await assert.rejects(importTranscripts([project], { from: 'cursor' }), { code: ErrorCode.INVALID_INPUT });
  await assert.rejects(importTranscripts('not-an-array'), { code: ErrorCode.INVALID_INPUT });
  const junk = path.join(project, 'notes.jsonl');
  fs.writeFileSync(junk, '{"hello":1}\n');
  const report = await importTranscripts([junk], { project, store: { home } });
  assert.equal(report.sources[0].outcome, 'failed');
});

test('importTranscripts keeps another machine\'s project and takes mapPaths', async () => {
  const { home, project } = await freshStore();
  const src = path.join(fixtures, 'import', 'another-machine');
  const report = await importTranscripts([src], { store: { home } });
  assert.equal(report.failed, 0);
  for (const s of report.sources) {
    assert.equal(s.project, '/Users/dana/code/demo');
    assert.match(s.notice, /does not exist here/);
  }
  const all = await listAllSessions({ home });
  const demo = all.find((p) => p.projectCode === '-Users-dana-code-demo');
  assert.ok(demo.sessions.some((e) => e.title === '/orchestrator fix the flaky CI build'));
  assert.ok(demo.sessions.every((e) => !e.title.includes('<')));

  const demoDir = path.join(project, 'code', 'demo');
  fs.mkdirSync(demoDir, { recursive: true });
  const mapped = await importTranscripts([src], {
    mapPaths: [{ from: '/Users/dana', to: project }],
    store: { home: path.join(home, 'mapped') },
  });
  assert.deepEqual([...new Set(mapped.sources.map((s) => s.project))], [fs.realpathSync(demoDir)]);

  const other = path.join(home, 'refused');
  await assert.rejects(
    importTranscripts([src], { mapPaths: [{ from: 'Users/dana', to: '/x' }], store: { home: other } }),
    (e) => e.code === ErrorCode.INVALID_INPUT && /mapPaths/.test(e.message),
  );
  await assert.rejects(importTranscripts([src], { mapPaths: [['/a', '/b']], store: { home: other } }), {
    code: ErrorCode.INVALID_INPUT,
  });
  assert.equal(fs.existsSync(other), false);
});

test('exportTo writes the session for each agent and says how to resume it', async () => {
  const { home, project, store } = await freshStore();
  const src = path.join(fixtures, 'import', 'codex', '2025', '10', '29');
  await importTranscripts([src], { project, store: { home } });
  for (const [to, resume] of [['claude-code', 'claude --resume '], ['codex', 'codex resume ']]) {
    const agent = path.join(home, `agent-${to}`);
    const out = await store.exportTo(CODEX, { to, home: agent });
    assert.equal(out.to, to);
    assert.equal(out.nativeId, CODEX);
    assert.equal(out.idSource, 'session');
    assert.equal(out.written, true);
    assert.ok(out.resumeCommand.includes(resume + CODEX), out.resumeCommand);
    assert.ok(out.path.startsWith(agent + path.sep) && out.path.includes(CODEX), out.path);
    const lines = fs.readFileSync(out.path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.length >= out.items && out.items > 0);
    if (to === 'claude-code') {
      assert.equal(lines[0].parentUuid, null);
      assert.ok(lines.every((l) => l.sessionId === CODEX));
    }
    const again = await store.exportTo(CODEX, { to, home: agent });
    assert.equal(again.written, false);
    assert.equal(again.path, out.path);
  }
  await assert.rejects(store.exportTo(CODEX, { to: 'claude-code', home, modelProvider: 'x' }), {
    code: ErrorCode.INVALID_INPUT,
  });
  await assert.rejects(store.exportTo(CODEX, { to: 'codex', home: 'rel/x' }), { code: ErrorCode.INVALID_INPUT });
  await assert.rejects(store.exportTo(CODEX, { to: 'cursor', home }), { code: ErrorCode.INVALID_INPUT });
  await assert.rejects(store.exportTo('no-such-session', { to: 'codex', home }), { code: ErrorCode.NOT_FOUND });
});
