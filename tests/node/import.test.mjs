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
