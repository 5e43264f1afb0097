// Full-text search from Node: the same call and the same result shape as the
// C ABI and the CLI (`sessionkit search --json`).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { freshStore } from './helpers.mjs';

async function fill(store) {
  const s = await store.createSession({ id: 's-find' });
  await s.append({ id: 'u1', role: 'user', timestamp: '2026-03-01T10:00:00Z', content: 'Why does parse_config fail?' });
  await s.append({
    id: 'a1',
    role: 'assistant',
    timestamp: '2026-03-02T10:00:00Z',
    content: 'Look at src/main.rs first',
    messageParams: {
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path": "src/main.rs"}' } }],
    },
  });
  await s.close();
  const o = await store.createSession({ id: 's-other' });
  await o.append({ id: 'o1', role: 'user', content: 'parse_config again, in another session' });
  await o.close();
}

test('hits carry the session, the message and a highlighted snippet', async () => {
  const { store } = await freshStore();
  await fill(store);
  const found = await store.search('parse_config', { session: 's-find' });
  assert.deepEqual(
    found.hits.map((h) => [h.sessionId, h.messageId, h.role]),
    [['s-find', 'u1', 'user']],
  );
  const [hit] = found.hits;
  assert.ok(hit.snippet.includes('«parse_config»'), hit.snippet);
  assert.equal(hit.project, store.projectCode);
  assert.equal(hit.timestamp, '2026-03-01T10:00:00.000Z');
  assert.ok(hit.score > 0);
  assert.ok(found.indexedBytes > 0);
  assert.deepEqual([found.setAside, found.stale], [[], []]);
  const both = await store.search('parse_config');
  assert.deepEqual(both.hits.map((h) => h.sessionId).sort(), ['s-find', 's-other']);
  assert.equal(both.indexedBytes, 0);
  await store.close();
});

test('filters narrow the hits', async () => {
  const { store } = await freshStore();
  await fill(store);
  const ids = async (text, options) => (await store.search(text, options)).hits.map((h) => h.messageId);
  assert.deepEqual(await ids('src/main.rs'), ['a1']);
  assert.deepEqual(await ids('src/main.rs', { role: 'user' }), []);
  const called = (await store.search('src/main.rs', { tool: 'read_file' })).hits;
  assert.deepEqual(called.map((h) => [h.messageId, h.tools]), [['a1', ['read_file']]]);
  assert.deepEqual(await ids('src/main.rs', { tool: 'write_file' }), []);
  assert.deepEqual(await ids('src/main.rs', { since: '2026-03-02' }), ['a1']);
  assert.deepEqual(await ids('src/main.rs', { until: '2026-03-01' }), []);
  assert.equal((await ids('parse_config', { limit: 1 })).length, 1);
  await store.close();
});

test('bad queries are INVALID_INPUT', async () => {
  const { store } = await freshStore();
  await assert.rejects(store.search('x', { since: 'soon' }), { code: 'INVALID_INPUT', message: /soon/ });
  await assert.rejects(store.search(' * '), { code: 'INVALID_INPUT', message: /no word/ });
  await assert.rejects(store.search('x', 'role=user'), { code: 'INVALID_INPUT', message: /options/ });
  await assert.rejects(store.search(42), { code: 'INVALID_INPUT', message: /text/ });
  await store.close();
});
