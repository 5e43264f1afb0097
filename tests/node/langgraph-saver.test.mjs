// `sessionkit/langgraph` beyond LangGraph's conformance suite: what a thread
// is in the store (a session, its values stored once), the store's own
// checkpoint operations (copy, prune, delete for runs, trash), and the
// saver's handle (a given store, close).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { Store, conversationSessionId, nextChannelVersion } from 'sessionkit';
import { SessionkitSaver } from 'sessionkit/langgraph';

import { chatGraph, transcript } from './langgraph-chat.mjs';
import { here, tmpdir } from './helpers.mjs';

function place() {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  return { project, home: path.join(dir, 'home') };
}

/** Bytes of every file under `dir`. */
function treeBytes(dir) {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size;
  }
  return n;
}

async function all(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

async function chatTurn(graph, config, text) {
  await graph.invoke({ messages: [new HumanMessage(text)] }, config);
  return graph.invoke(new Command({ resume: 'yes' }), config);
}

test('a thread is a session of the store; a value that does not change is stored once', async () => {
  const { project, home } = place();
  const { graph, saver } = chatGraph({ project, home });
  const config = { configurable: { thread_id: 'big' } };
  // A long first message (random, so that it does not compress), then short
  // turns: from then on every checkpoint's message list holds it (and the
  // assistant's echo of it), but a turn costs the store what it added.
  const big = crypto.randomBytes(150_000).toString('base64');
  await chatTurn(graph, config, big);
  const afterFirst = treeBytes(home);
  for (let i = 0; i < 5; i++) await chatTurn(graph, config, `turn ${i}`);
  const states = await all(graph.getStateHistory(config));
  assert.equal(states.length, 24);
  assert.equal(states[0].values.messages.length, 18);
  assert.equal(states[0].values.messages[0].content, big);
  // The 5 turns made 20 checkpoints, 15 with a new message list of over
  // 400 kB: 6 MB if each were stored whole.
  const grown = treeBytes(home) - afterFirst;
  assert.ok(grown < 50_000, `5 short turns took ${grown} bytes`);
  const store = await saver.store();
  assert.ok((await store.listSessions()).some((e) => e.id === conversationSessionId('big')));
  await saver.close();
});

test('copyThread, prune and deleteForRuns of the store act on the saver\'s threads', async () => {
  const { project, home } = place();
  const { graph, saver } = chatGraph({ project, home });
  const store = await saver.store();
  const a = { configurable: { thread_id: 'a' } };
  const b = { configurable: { thread_id: 'b' } };
  await chatTurn(graph, a, 'one');
  await chatTurn(graph, a, 'two');
  const want = ['human: one', 'ai: echo: one', 'human: review: yes', 'human: two', 'ai: echo: two', 'human: review: yes'];

  await store.checkpointCopyThread('a', 'b');
  assert.deepEqual(transcript((await graph.getState(b)).values.messages), want);
  const ids = async (config) => (await all(saver.list(config))).map((t) => t.checkpoint.id);
  assert.deepEqual(await ids(b), await ids(a), 'every checkpoint is copied');
  await chatTurn(graph, b, 'three');
  assert.deepEqual(transcript((await graph.getState(a)).values.messages), want, 'the source does not change');

  await store.checkpointPrune(['b'], 'keep_latest');
  const kept = await all(saver.list(b));
  assert.equal(kept.length, 1);
  assert.equal(transcript(kept[0].checkpoint.channel_values.messages).length, 9, 'the latest keeps its values');
  await store.checkpointPrune(['b'], 'delete');
  assert.deepEqual(await all(saver.list(b)), []);
  assert.equal((await all(saver.list(a))).length, 8, 'other threads are left alone');

  // Checkpoints of two runs, in two threads; one run's go.
  const put = async (thread, runId, parent) =>
    saver.put(
      { configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: parent } },
      { ...emptyCheckpoint(), id: uuid6(-1) },
      { source: 'loop', step: 0, parents: {}, run_id: runId },
      {},
    );
  const r1 = await put('c', 'run-1');
  await put('c', 'run-2', r1.configurable.checkpoint_id);
  await put('d', 'run-1');
  await store.checkpointDeleteForRuns(['run-1']);
  assert.deepEqual((await all(saver.list({ configurable: { thread_id: 'c' } }))).map((t) => t.metadata.run_id), ['run-2']);
  assert.deepEqual(await all(saver.list({ configurable: { thread_id: 'd' } })), []);
  assert.equal((await all(saver.list(a))).length, 8);
  await saver.close();
});

test('deleteThread moves the thread to the trash, from where it can be restored', async () => {
  const { project, home } = place();
  const { graph, saver } = chatGraph({ project, home });
  const config = { configurable: { thread_id: 'gone' } };
  await chatTurn(graph, config, 'keep me');
  await saver.deleteThread('gone');
  assert.equal(await saver.getTuple(config), undefined);
  assert.deepEqual(await all(saver.list(config)), []);
  const store = await saver.store();
  const session = conversationSessionId('gone');
  assert.ok((await store.listTrash()).some((t) => t.id === session), 'the session is in the trash');
  await store.restoreSession(session);
  assert.deepEqual(transcript((await graph.getState(config)).values.messages), ['human: keep me', 'ai: echo: keep me', 'human: review: yes']);
  await saver.close();
});

test('a saver on a given store leaves it open; close twice does nothing; calls after close reject', async () => {
  const { project, home } = place();
  const store = await Store.open(project, { home, durability: 'never' });
  const shared = new SessionkitSaver({ store });
  assert.equal(await shared.store(), store);
  await shared.close();
  assert.equal(store.closed, false);
  await store.close();

  const saver = new SessionkitSaver({ project, home });
  const config = await saver.put({ configurable: { thread_id: 't' } }, emptyCheckpoint(), { source: 'input', step: -1, parents: {} }, {});
  assert.ok(await saver.getTuple(config));
  await saver.close();
  await saver.close();
  await assert.rejects(saver.getTuple(config));

  const missing = new SessionkitSaver({ project: path.join(project, 'no-such-dir'), home });
  await assert.rejects(missing.getTuple(config), 'an open failure rejects the first call');
  await missing.close();
});

test('versions are the core\'s, as numbers: ordered by their counter, apart on two branches', async () => {
  const saver = new SessionkitSaver({ project: tmpdir(), home: tmpdir() });
  const first = saver.getNextVersion(undefined);
  assert.equal(typeof first, 'number');
  assert.equal(Math.floor(first), 1);
  const second = saver.getNextVersion(first);
  assert.equal(Math.floor(second), 2);
  assert.equal(Math.floor(saver.getNextVersion(41)), 42);
  // Two branches growing from one version get versions of their own.
  assert.notEqual(saver.getNextVersion(first), second);
  // A thread written with string versions (the Python saver's) goes on with strings.
  const python = nextChannelVersion(null);
  assert.match(python, /^0{31}1\.\d{16}$/);
  const next = saver.getNextVersion(python);
  assert.match(next, /^0{31}2\.\d{16}$/);
  await saver.close();
});

test('the require() and import entry points each extend their own build of @langchain/langgraph-checkpoint', async () => {
  const require = createRequire(import.meta.url);
  const cjs = require('sessionkit/langgraph');
  const lgCjs = require('@langchain/langgraph-checkpoint');
  const lgEsm = await import('@langchain/langgraph-checkpoint');
  const options = { project: tmpdir(), home: tmpdir() };
  const required = new cjs.SessionkitSaver(options);
  const imported = new SessionkitSaver(options);
  assert.ok(required instanceof lgCjs.BaseCheckpointSaver);
  assert.ok(!(required instanceof lgEsm.BaseCheckpointSaver));
  assert.ok(imported instanceof lgEsm.BaseCheckpointSaver);
  await required.close();
  await imported.close();
});

test("bindings/node/README.md's LangGraph example runs as a user copies it", () => {
  const dir = tmpdir();
  fs.symlinkSync(path.join(here, 'node_modules'), path.join(dir, 'node_modules'));
  const readme = path.join(here, '..', '..', 'bindings', 'node', 'README.md');
  const quickstart = path.join(here, '..', 'packaging', 'quickstart.py');
  const code = spawnSync('python3', [quickstart, 'langgraph', readme], { encoding: 'utf8' });
  assert.equal(code.status, 0, code.stderr);
  fs.writeFileSync(path.join(dir, 'graph.mjs'), code.stdout);
  const r = spawnSync(process.execPath, ['graph.mjs'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, SESSIONKIT_HOME: path.join(dir, 'home') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '2', 'the user message and the echo');
});
