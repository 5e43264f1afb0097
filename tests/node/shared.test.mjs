// Shared writers from Node: many handles on one conversation, here and in
// other processes, each write continuing from the head the others left.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Store, conversationSessionId } from 'sessionkit';

import { freshStore, here, tmpdir } from './helpers.mjs';

/** The active path, checked to be one chain holding every message. */
async function linear(store, id) {
  const view = await store.readSession(id);
  const path = await view.activePath();
  assert.equal((await view.tree()).length, path.length, 'a write forked the session');
  let parent = null;
  for (const m of path) {
    assert.equal(m.parentId ?? null, parent, JSON.stringify(m));
    parent = m.id;
  }
  return path;
}

test('two handles on one conversation take turns', async () => {
  const { store } = await freshStore();
  const a = await store.openConversation('user@example.com');
  const b = await store.openConversation('user@example.com');
  assert.ok(a.shared && b.shared);
  assert.equal(a.id, b.id);
  assert.equal(a.id, conversationSessionId('user@example.com'));
  for (let i = 0; i < 5; i++) {
    await a.append({ role: 'user', content: `q${i}` });
    await b.append({ role: 'assistant', content: `a${i}` });
  }
  const got = (await linear(store, a.id)).map((m) => m.content);
  assert.deepEqual(got, [0, 1, 2, 3, 4].flatMap((i) => [`q${i}`, `a${i}`]));
  await a.close();
  await b.close();
  const entry = await store.sessionEntry(a.id);
  assert.equal(entry.conversationId, 'user@example.com');
  assert.equal(entry.messageCount, 10);
});

test('concurrent appends through many handles land whole, none lost', async () => {
  const { store } = await freshStore();
  const handles = await Promise.all([0, 1, 2, 3].map(() => store.openConversation('conv:42')));
  await Promise.all(
    handles.map(async (h, n) => {
      for (let k = 0; k < 25; k++) {
        await h.appendBatch([
          { role: 'user', content: `${n}:${k} q` },
          { role: 'assistant', content: `${n}:${k} a` },
        ]);
      }
    }),
  );
  const path = await linear(store, conversationSessionId('conv:42'));
  assert.equal(path.length, 200);
  for (let i = 0; i < path.length; i += 2) {
    assert.equal(path[i].content.replace(/ q$/, ''), path[i + 1].content.replace(/ a$/, ''));
  }
  await Promise.all(handles.map((h) => h.close()));
});

test('another process writes the same conversation meanwhile', async () => {
  const { home, project, store } = await freshStore();
  const mine = await store.openConversation('tenant/123');
  const code = `
    import { Store } from 'sessionkit';
    const [project, home] = process.argv.slice(1);
    const store = await Store.open(project, { home });
    const s = await store.openConversation('tenant/123');
    for (let k = 0; k < 100; k++) await s.append({ role: 'user', content: 'child ' + k });
    await s.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, project, home], {
    cwd: here,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  for (let k = 0; k < 100; k++) await mine.append({ role: 'assistant', content: `parent ${k}` });
  assert.equal(await exited, 0);
  const got = (await linear(store, mine.id)).map((m) => m.content).sort();
  const want = [];
  for (let k = 0; k < 100; k++) want.push(`child ${k}`, `parent ${k}`);
  assert.deepEqual(got, want.sort());
  await mine.close();
});

test('any conversation id stays inside the store; bad ones are refused', async () => {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const store = await Store.open(project, { home: path.join(dir, 'home') });
  const ids = ['user@example.com', 'conv:42', 'tenant/123', 'with space', '日本語', '../x', '..'];
  for (const conv of ids) {
    const s = await store.openConversation(conv);
    await s.append({ role: 'user', content: conv });
    await s.close();
  }
  const listed = await store.listSessions();
  assert.deepEqual(listed.map((e) => e.conversationId ?? e.id).sort(), [...ids].sort());
  assert.deepEqual(fs.readdirSync(dir).sort(), ['home', 'project']);
  for (const bad of ['', 'x'.repeat(1025)]) {
    await assert.rejects(store.openConversation(bad), (e) => e.code === 'INVALID_INPUT');
  }
});

test('a shared writer waits for an exclusive holder, then rejects with BUSY', async () => {
  const { home, project } = await freshStore();
  const store = await Store.open(project, { home, busyTimeoutMs: 100 });
  const held = await store.createSession({ id: 'held' });
  assert.equal(held.shared, false);
  await assert.rejects(store.openShared('held'), (e) => e.code === 'BUSY');
  await held.close();
  const s = await store.openShared('held');
  await s.append({ role: 'user', content: 'now' });
  assert.equal((await linear(store, 'held')).length, 1);
  await s.close();
});
