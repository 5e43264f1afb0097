// `sessionkit/langgraph` under a real LangGraph graph (langgraph-chat.mjs: a
// growing message list, an interrupt for review): a thread resumed by a new
// process, its state history, time travel (updateState on an old checkpoint,
// then a run from there), and two processes driving two threads of one store
// at once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { Store, conversationSessionId } from 'sessionkit';

import { chatGraph, transcript } from './langgraph-chat.mjs';
import { here, runNode, tmpdir } from './helpers.mjs';

const chatModule = pathToFileURL(path.join(here, 'langgraph-chat.mjs')).href;

function place() {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  return { project, home: path.join(dir, 'home') };
}

async function history(graph, config) {
  const states = [];
  for await (const s of graph.getStateHistory(config)) states.push(s);
  return states;
}

/** The last line a child process printed, as JSON. */
function lastJson(stdout) {
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/** Run `code` (an ES module) in a new Node process, without waiting for it. */
function startNode(code, args) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, ...args], { cwd: here });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

test('a thread interrupted for review is resumed by a new process; its history is every step', async () => {
  const { project, home } = place();
  const { graph, saver } = chatGraph({ project, home });
  const config = { configurable: { thread_id: 'chat-1' } };

  const first = await graph.invoke({ messages: [new HumanMessage('hello')] }, config);
  assert.deepEqual(transcript(first.messages), ['human: hello', 'ai: echo: hello']);
  assert.deepEqual(first.__interrupt__.map((i) => i.value), [{ question: 'send it?', draft: 'echo: hello' }]);
  const paused = await graph.getState(config);
  assert.deepEqual(paused.next, ['review']);
  assert.deepEqual(paused.tasks[0].interrupts.map((i) => i.value.draft), ['echo: hello']);

  // Another process, another saver on the same home, answers the interrupt.
  const code = `
    import { Command } from '@langchain/langgraph';
    import { AIMessage } from '@langchain/core/messages';
    const [chatModule, project, home] = process.argv.slice(1);
    const { chatGraph, transcript } = await import(chatModule);
    const { graph, saver } = chatGraph({ project, home });
    const config = { configurable: { thread_id: 'chat-1' } };
    const before = await graph.getState(config);
    const done = await graph.invoke(new Command({ resume: 'yes' }), config);
    console.log(JSON.stringify({
      next: before.next,
      revived: before.values.messages[1] instanceof AIMessage,
      messages: transcript(done.messages),
    }));
    await saver.close();
  `;
  const r = runNode(code, [chatModule, project, home]);
  assert.equal(r.status, 0, r.stderr);
  const child = lastJson(r.stdout);
  assert.deepEqual(child.next, ['review'], 'the new process finds the thread waiting at review');
  assert.equal(child.revived, true, 'messages come back as LangChain message classes');
  assert.deepEqual(child.messages, ['human: hello', 'ai: echo: hello', 'human: review: yes']);

  // This process's saver, open all along, sees what the other one wrote.
  const after = await graph.getState(config);
  assert.deepEqual(after.next, []);
  assert.deepEqual(transcript(after.values.messages), ['human: hello', 'ai: echo: hello', 'human: review: yes']);
  assert.ok(after.values.messages[2] instanceof HumanMessage);

  // The history, newest first: the input, each node's step, the resumed review.
  const states = await history(graph, config);
  assert.deepEqual(
    states.map((s) => [s.metadata.source, s.metadata.step, s.next, (s.values.messages ?? []).length]),
    [
      ['loop', 2, [], 3],
      ['loop', 1, ['review'], 2],
      ['loop', 0, ['assistant'], 1],
      ['input', -1, ['__start__'], 0],
    ],
  );
  for (let i = 0; i + 1 < states.length; i++) {
    assert.equal(states[i].parentConfig.configurable.checkpoint_id, states[i + 1].config.configurable.checkpoint_id);
  }
  assert.equal(states.at(-1).parentConfig, undefined);
  const limited = [];
  for await (const s of graph.getStateHistory(config, { limit: 2 })) limited.push(s.config.configurable.checkpoint_id);
  assert.deepEqual(limited, states.slice(0, 2).map((s) => s.config.configurable.checkpoint_id));
  await saver.close();

  // The thread is a sessionkit session of the project's store.
  const store = await Store.open(project, { home });
  const ids = (await store.listSessions()).map((e) => e.id);
  assert.ok(ids.includes(conversationSessionId('chat-1')), `sessions: ${ids}`);
  await store.close();
});

test('updateState on an old checkpoint forks the thread; a run from there leaves the first branch intact', async () => {
  const { project, home } = place();
  const { graph, saver } = chatGraph({ project, home });
  const config = { configurable: { thread_id: 'fork-1' } };
  await graph.invoke({ messages: [new HumanMessage('draft a reply')] }, config);
  const done = await graph.invoke(new Command({ resume: 'yes' }), config);
  const firstBranch = ['human: draft a reply', 'ai: echo: draft a reply', 'human: review: yes'];
  assert.deepEqual(transcript(done.messages), firstBranch);
  const end = (await graph.getState(config)).config;

  // Back to where the draft waited for review, and rewrite the draft.
  const old = (await history(graph, config)).find((s) => s.next[0] === 'review');
  assert.deepEqual(transcript(old.values.messages), firstBranch.slice(0, 2));
  const forkConfig = await graph.updateState(old.config, { messages: [new AIMessage('a better draft')] }, 'assistant');
  const fork = await graph.getState(forkConfig);
  assert.equal(fork.parentConfig.configurable.checkpoint_id, old.config.configurable.checkpoint_id);
  assert.deepEqual(fork.next, ['review']);
  assert.deepEqual(transcript(fork.values.messages), [...firstBranch.slice(0, 2), 'ai: a better draft']);

  // Run from the fork: the review sees the new draft; answer it.
  const paused = await graph.invoke(null, forkConfig);
  assert.deepEqual(paused.__interrupt__.map((i) => i.value.draft), ['a better draft']);
  const second = await graph.invoke(new Command({ resume: 'no' }), config);
  const secondBranch = [...firstBranch.slice(0, 2), 'ai: a better draft', 'human: review: no'];
  assert.deepEqual(transcript(second.messages), secondBranch);
  assert.deepEqual(transcript((await graph.getState(config)).values.messages), secondBranch, 'the thread goes on from the fork');

  // The first branch's end is still there, unchanged.
  const first = await graph.getState(end);
  assert.deepEqual(transcript(first.values.messages), firstBranch);
  assert.deepEqual(first.next, []);

  // The fork's history runs through the old checkpoint; the old one's
  // descendants on the first branch are not on it.
  const forkHistory = (await history(graph, config)).map((s) => s.config.configurable.checkpoint_id);
  const path_ = [];
  for (let s = await graph.getState(config); s; s = s.parentConfig ? await graph.getState(s.parentConfig) : null) {
    path_.push(s.config.configurable.checkpoint_id);
  }
  assert.ok(path_.includes(old.config.configurable.checkpoint_id));
  assert.ok(!path_.includes(end.configurable.checkpoint_id));
  assert.ok(forkHistory.includes(end.configurable.checkpoint_id), 'getStateHistory lists both branches');
  await saver.close();
});

test('two processes drive two threads of one store at once', async () => {
  const { project, home } = place();
  const turns = 8;
  const code = `
    import { Command } from '@langchain/langgraph';
    import { HumanMessage } from '@langchain/core/messages';
    const [chatModule, project, home, thread, turns] = process.argv.slice(1);
    const { chatGraph, transcript } = await import(chatModule);
    const { graph, saver } = chatGraph({ project, home });
    const config = { configurable: { thread_id: thread } };
    for (let i = 0; i < Number(turns); i++) {
      await graph.invoke({ messages: [new HumanMessage(thread + ' ' + i)] }, config);
      await graph.invoke(new Command({ resume: 'ok ' + i }), config);
    }
    const state = await graph.getState(config);
    console.log(JSON.stringify(transcript(state.values.messages)));
    await saver.close();
  `;
  const expected = (thread) =>
    Array.from({ length: turns }, (_, i) => [`human: ${thread} ${i}`, `ai: echo: ${thread} ${i}`, `human: review: ok ${i}`]).flat();

  const [a, b] = await Promise.all(
    ['thread-a', 'thread-b'].map((t) => startNode(code, [chatModule, project, home, t, String(turns)])),
  );
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.status, 0, b.stderr);
  assert.deepEqual(lastJson(a.stdout), expected('thread-a'));
  assert.deepEqual(lastJson(b.stdout), expected('thread-b'));

  // Read back here: each thread holds its own turns, every step of them.
  const { graph, saver } = chatGraph({ project, home });
  for (const t of ['thread-a', 'thread-b']) {
    const config = { configurable: { thread_id: t } };
    assert.deepEqual(transcript((await graph.getState(config)).values.messages), expected(t));
    const states = await history(graph, config);
    // Per turn: the input, the assistant's step (next: review), the
    // interrupted review's, and the end after the resume.
    assert.equal(states.length, turns * 4, `${t}: ${states.length} checkpoints`);
    assert.equal(states.filter((s) => s.metadata.source === 'input').length, turns);
  }
  await saver.close();
});
