// The `sessionkit/openai-agents` adapter driven by the SDK itself, offline:
// `run(agent, …, { session })` over several turns with the SDK's ScriptedModel
// (a reply with a function call and its tool), then a new process reopens the
// store and a further run sees the whole history.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Agent, MemorySession, run, setTracingDisabled, tool } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents-core/testing';
import { Store } from 'sessionkit';
import { SessionkitSession } from 'sessionkit/openai-agents';

import { runNode, tmpdir } from './helpers.mjs';

setTracingDisabled(true);

const weather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
  execute: async ({ city }) => `sunny in ${city}`,
});

const roles = (items) => items.map((i) => i.type === 'message' || i.role ? `${i.role}` : i.type);

test('runs of the SDK persist through SessionkitSession and resume in a new process', async () => {
  const dir = tmpdir();
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const sessionId = 'agents-run-1';

  const session = new SessionkitSession({ sessionId, project, home });
  assert.equal(await session.getSessionId(), sessionId, 'a given id is created with that id');
  const model = new ScriptedModel([
    [functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })],
    [assistantMessage('It is sunny in Paris.')],
    [assistantMessage('You asked about Paris.')],
  ]);
  const agent = new Agent({ name: 'weather', instructions: 'Answer briefly.', model, tools: [weather] });

  const r1 = await run(agent, 'What is the weather in Paris?', { session });
  assert.equal(r1.finalOutput, 'It is sunny in Paris.');
  const r2 = await run(agent, 'What did I ask?', { session });
  assert.equal(r2.finalOutput, 'You asked about Paris.');
  model.assertComplete();
  // The second turn's request held the first turn, tool call and result included.
  const sent = model.lastCall.request.input;
  assert.ok(Array.isArray(sent));
  assert.deepEqual(roles(sent), ['user', 'function_call', 'function_call_result', 'assistant', 'user']);

  const items = await session.getItems();
  assert.equal(items.length, 6);
  assert.deepEqual(await session.getItems(2), items.slice(4));
  const toolResult = items.find((i) => i.type === 'function_call_result');
  assert.equal(toolResult.callId, 'call_1');
  await session.close();

  const code = `
    import { Agent, run, setTracingDisabled } from '@openai/agents';
    import { ScriptedModel, assistantMessage } from '@openai/agents-core/testing';
    import { SessionkitSession } from 'sessionkit/openai-agents';
    setTracingDisabled(true);
    const [sessionId, project, home] = process.argv.slice(1);
    const session = new SessionkitSession({ sessionId, project, home });
    const model = new ScriptedModel([[assistantMessage('Still Paris.')]]);
    const agent = new Agent({ name: 'weather', model });
    const r = await run(agent, 'Remind me?', { session });
    console.log(JSON.stringify({ out: r.finalOutput, sent: model.lastCall.request.input, stored: (await session.getItems()).length }));
    await session.close();
  `;
  const r = runNode(code, [sessionId, project, home]);
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.equal(got.out, 'Still Paris.');
  assert.deepEqual(roles(got.sent), ['user', 'function_call', 'function_call_result', 'assistant', 'user', 'assistant', 'user']);
  assert.equal(got.stored, 8);

  // The items are sessionkit messages: the store's own views read them.
  const store = await Store.open(project, { home });
  const view = await store.readSession(sessionId);
  assert.equal(view.info().messageCount, 8);
});

test('popItem moves the head back and clearSession is recoverable; erase is for good', async () => {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const home = path.join(dir, 'home');
  const session = new SessionkitSession({ project, home });
  const id = await session.getSessionId();
  const items = [
    { role: 'user', content: 'one' },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'two' }] },
  ];
  await session.addItems(items);
  assert.deepEqual(await session.getItems(), items);
  const store = await session.store();
  const size = fs.statSync(store.logPath(id)).size;
  const log = fs.readFileSync(store.logPath(id));
  assert.deepEqual(await session.popItem(), items[1]);
  assert.ok(fs.readFileSync(store.logPath(id)).subarray(0, size).equals(log), 'pop rewrites nothing');
  assert.deepEqual(await session.getItems(), items.slice(0, 1));
  await session.clearSession();
  assert.deepEqual(await session.getItems(), []);
  assert.match(fs.readFileSync(store.logPath(id), 'utf8'), /"two"/, 'cleared items stay in the log');
  await session.erase();
  assert.equal(await session.getSessionId(), id);
  assert.deepEqual(await session.getItems(), []);
  assert.doesNotMatch(fs.readFileSync(store.logPath(id), 'utf8'), /"two"/, 'erase removes them');
  assert.equal(await session.popItem(), undefined);

  // rewind(turns) goes back before the turns-th latest user input.
  await session.addItems([
    { role: 'user', content: 'q1' },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'a1' }] },
    { role: 'user', content: 'q2' },
  ]);
  await assert.rejects(session.rewind(3), { code: 'INVALID_INPUT', message: /2 user input/ });
  await session.rewind(1);
  assert.deepEqual((await session.getItems()).map((i) => i.content), ['q1', [{ type: 'output_text', text: 'a1' }]]);
  await session.rewind();
  assert.deepEqual(await session.getItems(), []);

  // A second instance on the same session shares it, as the SDK's stores do.
  const other = new SessionkitSession({ sessionId: id, project, home });
  await other.addItems([{ role: 'user', content: 'from the other' }]);
  assert.deepEqual((await session.getItems(1)).map((i) => i.content), ['from the other']);
  await other.close();
  await session.close();
});

test('a compaction item from the model reaches replaceHistoryWithCompaction: the model view starts at it, the originals stay', async () => {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const home = path.join(dir, 'home');
  const session = new SessionkitSession({ sessionId: 'compacting', project, home });
  // Record what the runner hands over, then do what the adapter does.
  const replaced = [];
  const replace = session.replaceHistoryWithCompaction.bind(session);
  session.replaceHistoryWithCompaction = async (items) => {
    replaced.push(structuredClone(items));
    return replace(items);
  };
  const compaction = { type: 'compaction', id: 'cmp_1', encrypted_content: 'opaque-server-state' };
  const model = new ScriptedModel([
    [assistantMessage('First answer.')],
    // The Responses API's server-side compaction: a compaction item leads the output.
    [compaction, assistantMessage('Second answer.')],
    [assistantMessage('Third answer.')],
  ]);
  const agent = new Agent({ name: 'compactor', model });
  await run(agent, 'First question?', { session });
  const before = await session.getItems();
  await run(agent, 'Second question?', { session });
  assert.equal(replaced.length, 1, 'the runner called replaceHistoryWithCompaction once');
  assert.equal(replaced[0][0].type, 'compaction');

  await run(agent, 'Third question?', { session });
  model.assertComplete();
  // The third request starts at the compaction item: nothing before it was sent.
  const sent = model.lastCall.request.input;
  assert.deepEqual(sent[0], compaction);
  assert.deepEqual(roles(sent), ['compaction', 'assistant', 'user']);

  // sessionkit's model view is the replacement and what followed it; the
  // active path (getItems) still holds the originals, which the UI view marks
  // compacted.
  const s = await session.session();
  const modelItems = await s.responsesItems({ modelView: true });
  assert.deepEqual(modelItems.slice(0, replaced[0].length), replaced[0]);
  assert.deepEqual(roles(modelItems), ['compaction', 'assistant', 'user', 'assistant']);
  const all = await session.getItems();
  assert.deepEqual(all.slice(0, before.length), before, 'the originals are kept');
  const ui = await (await (await session.store()).readSession('compacting')).uiView();
  assert.deepEqual(
    ui.map((m) => m.compacted),
    all.map((_, i) => i < before.length),
    'everything stored before the compaction item is marked compacted',
  );
  assert.deepEqual(all[before.length], compaction);
  await session.close();

  // A new adapter on the same session, reading the model view, resumes from
  // the compaction item.
  const again = new SessionkitSession({ sessionId: 'compacting', project, home, modelView: true });
  assert.deepEqual(await again.getItems(), modelItems);
  await again.close();
});

test('getItems(limit) gives what the SDK\'s MemorySession gives, oldest first', async () => {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const session = new SessionkitSession({ sessionId: 'limits', project, home: path.join(dir, 'home') });
  const items = [1, 2, 3, 4].map((n) => ({ role: 'user', content: `m${n}` }));
  const theirs = new MemorySession();
  await session.addItems(items);
  await theirs.addItems(items);
  for (const limit of [undefined, -5, -1, 0, 0.5, 1, 2, 2.5, 4, 5, 1000, 2 ** 40, Infinity, -Infinity, NaN]) {
    assert.deepEqual(await session.getItems(limit), await theirs.getItems(limit), `limit ${limit}`);
  }
  assert.deepEqual(await session.getItems(2), items.slice(2));
  assert.deepEqual(await session.getItems(0), []);
  assert.deepEqual(await session.getItems(-1), []);
  // null is no limit here (MemorySession would treat it as 0).
  assert.deepEqual(await session.getItems(null), items);
  await session.close();
});

test('close() twice does nothing; Symbol.asyncDispose and await using close the session', async () => {
  const dir = tmpdir();
  const project = path.join(dir, 'project');
  fs.mkdirSync(project);
  const home = path.join(dir, 'home');
  const open = (sessionId) => new SessionkitSession({ sessionId, project, home });

  const s = open('closing');
  await s.addItems([{ role: 'user', content: 'hi' }]);
  await s.close();
  await s.close();
  assert.equal((await s.session()).closed, true);
  await assert.rejects(s.addItems([{ role: 'user', content: 'late' }]), /closed/);
  await assert.rejects(s.getItems(), /closed/);

  // The dispose method is the one `await using` calls, and it releases the lock.
  const disposed = open('closing');
  assert.equal(typeof Symbol.asyncDispose, 'symbol', 'Node >= 18.18 defines Symbol.asyncDispose');
  assert.deepEqual(await disposed.getItems(), [{ role: 'user', content: 'hi' }]);
  await disposed[Symbol.asyncDispose]();
  await disposed[Symbol.asyncDispose]();
  assert.equal((await disposed.session()).closed, true);

  // Never opened (an empty id): closing it is fine, twice.
  const never = open('');
  await assert.rejects(never.getItems(), { code: 'INVALID_INPUT' });
  await never.close();
  await never.close();

  // `await using` itself, where the runtime parses it (not Node 20).
  let usingBlock;
  try {
    const AsyncFunction = (async () => {}).constructor;
    usingBlock = new AsyncFunction('open', `
      let s;
      { await using session = open('held'); s = session; await session.getItems(); }
      return s;
    `);
  } catch (e) {
    assert.ok(e instanceof SyntaxError, e);
  }
  if (usingBlock) {
    const used = await usingBlock(open);
    assert.equal((await used.session()).closed, true, 'await using closed it');
  }
  const again = open('held');
  await again.getItems();
  await again.close();
});
