// The Node package against what Node agents write today, and against the
// Rust API, in one run (medians of --rounds rounds):
//
// 1. `Session.append` × N ≈4 KB messages, awaited one by one and fired then
//    awaited together (queued appends go as one write), against
//    `fs.appendFileSync(JSON.stringify(m) + '\n')` per message and its async
//    peer, `await fh.appendFile(...)` on an open `fs.promises` FileHandle;
//    the floors: N awaited `poolRoundTrip()`s (a task that does nothing on the
//    libuv pool, the hop every awaited disk call pays) and the N
//    `JSON.stringify`s both sides pay. Resume of a 50 MiB
//    session (`Store.modelView`, whole and 95 % compacted, and
//    `readSession(id).activePath()`) against read + split + `JSON.parse`; the
//    floor: `JSON.parse` of the same text already in memory (building the
//    objects, which any resume returning objects pays).
// 2. The binding's overhead over the Rust API on the same work, the Rust side
//    timed by core/examples/same_work.rs (built here in release).
// 3. The `@openai/agents` adapter against `MemorySession` plus a JSON file
//    written after each turn (the simplest persistent session a Node agent
//    writes): T turns of a user item and an assistant item, then a resume.
//
//   node bindings/node/build.js            # release addon
//   node bindings/node/bench/bench.mjs --rounds 3
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { MemorySession } from '@openai/agents';

import { Store, poolRoundTrip } from '../index.mjs';
import { ITEM_BYTES, MIB, buildRust, median, message, now, rust as rustRuns, timed } from './common.mjs';
import { SessionkitSession } from '../openai-agents.js';

const { values: a } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    adds: { type: 'string', default: '10000' },
    mib: { type: 'string', default: '50' },
    turns: { type: 'string', default: '500' },
  },
});
const rounds = Number(a.rounds);
const adds = Number(a.adds);
const mib = Number(a.mib);
const turns = Number(a.turns);

const rust = (...args) => rustRuns(...args).ms;

function jsonlAppend(file, messages) {
  const t = now();
  for (const m of messages) fs.appendFileSync(file, JSON.stringify(m) + '\n');
  return now() - t;
}
async function jsonlAppendAsync(file, messages) {
  const fh = await fs.promises.open(file, 'a');
  try {
    return await timed(async () => {
      for (const m of messages) await fh.appendFile(JSON.stringify(m) + '\n');
    });
  } finally {
    await fh.close();
  }
}
function jsonlResume(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

async function plainApi(tmp) {
  const res = {};
  const add = (k, v) => (res[k] ??= []).push(v);
  const messages = Array.from({ length: adds }, (_, i) => message(i));
  for (let r = 0; r < rounds; r++) {
    const d = path.join(tmp, `plain-${r}`);
    const project = path.join(d, 'project');
    const home = path.join(d, 'home');
    fs.mkdirSync(project, { recursive: true });
    const store = await Store.open(project, { home, durability: 'never', maxSessions: 0 });
    const s = await store.createSession();
    add('sk_append', await timed(async () => {
      for (const m of messages) await s.append(m);
    }));
    await s.close();
    const fired = await store.createSession();
    add('sk_append_fired', await timed(() => Promise.all(messages.map((m) => fired.append(m)))));
    await fired.close();
    if ((await store.modelView(fired.id)).length !== adds) throw new Error('fired appends lost messages');
    add('stringify_floor', await timed(() => messages.map((m) => JSON.stringify(m))));
    add('pool_floor', await timed(async () => {
      for (let i = 0; i < adds; i++) await poolRoundTrip();
    }));
    add('jsonl_append', jsonlAppend(path.join(d, 'agent.jsonl'), messages));
    add('jsonl_append_async', await jsonlAppendAsync(path.join(d, 'agent-async.jsonl'), messages));
    add('rust_append', rust('append', '--project', project, '--home', home, '--n', String(adds), '--bytes', String(ITEM_BYTES)));
    fs.rmSync(d, { recursive: true, force: true });
  }

  // Two 50 MiB sessions of the same messages: one whole, one whose first 95 %
  // a compaction replaced; and the JSONL file an agent would have written.
  const d = path.join(tmp, 'resume');
  const project = path.join(d, 'project');
  const home = path.join(d, 'home');
  fs.mkdirSync(project, { recursive: true });
  const store = await Store.open(project, { home, durability: 'never', maxSessions: 0 });
  const n = Math.floor((mib * MIB) / ITEM_BYTES);
  const big = Array.from({ length: n }, (_, i) => message(i));
  const whole = await store.createSession();
  const compacted = await store.createSession();
  for (let start = 0; start < n; start += 1000) {
    await whole.appendBatch(big.slice(start, start + 1000));
    await compacted.appendBatch(big.slice(start, start + 1000));
  }
  const ids = (await compacted.activePath()).map((m) => m.id);
  await compacted.applyCompaction(ids.slice(0, Math.floor((n * 95) / 100)), 'The first 95 % of the session.');
  await whole.close();
  await compacted.close();
  const jsonl = path.join(d, 'agent.jsonl');
  fs.writeFileSync(jsonl, big.map((m) => JSON.stringify(m) + '\n').join(''));
  fs.appendFileSync(jsonl, JSON.stringify({ role: 'system', content: 'The first 95 % of the session.' }) + '\n');
  const where = ['--project', project, '--home', home];
  // The floors of resume: the texts already in memory, parsed into objects.
  // sessionkit's is the model view's own JSON text (its messages carry id,
  // parentId, sessionId and timestamp too); the JSONL one, the file's lines.
  const skText = JSON.stringify(await store.modelView(whole.id));
  const jsonlText = `[${fs.readFileSync(jsonl, 'utf8').trimEnd().split('\n').join(',')}]`;
  // Warm once, as the Rust side does (it reports the median of five).
  await store.modelView(whole.id);
  await store.modelView(compacted.id);
  jsonlResume(jsonl);
  for (let r = 0; r < rounds; r++) {
    add('sk_resume', await timed(() => store.modelView(whole.id)));
    add('sk_active', await timed(async () => (await store.readSession(whole.id)).activePath()));
    add('sk_resume_compacted', await timed(() => store.modelView(compacted.id)));
    add('jsonl_resume', await timed(() => jsonlResume(jsonl)));
    add('parse_sk_text', await timed(() => JSON.parse(skText)));
    add('parse_jsonl_text', await timed(() => JSON.parse(jsonlText)));
  }
  res.sk_text_mb = [skText.length / 1e6];
  res.jsonl_text_mb = [jsonlText.length / 1e6];
  add('rust_resume', rust('resume', ...where, '--id', whole.id));
  add('rust_active', rust('active', ...where, '--id', whole.id));
  add('rust_resume_compacted', rust('resume', ...where, '--id', compacted.id));
  const check = await store.modelView(compacted.id);
  if (check.length !== n - Math.floor((n * 95) / 100) + 1) throw new Error(`compacted view has ${check.length} messages`);
  return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v)]));
}

/** A turn's two items, ≈2 KB each. */
function turnItems(t) {
  return [
    { role: 'user', content: `${t} ` + 'q'.repeat(2000) },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `${t} ` + 'a'.repeat(2000) }] },
  ];
}

async function adapter(tmp) {
  const res = {};
  const add = (k, v) => (res[k] ??= []).push(v);
  for (let r = 0; r < rounds; r++) {
    const d = path.join(tmp, `adapter-${r}`);
    const project = path.join(d, 'project');
    const home = path.join(d, 'home');
    fs.mkdirSync(project, { recursive: true });
    const sk = new SessionkitSession({ sessionId: `bench-${r}`, project, home });
    await sk.getSessionId();
    add('sk_turns', await timed(async () => {
      for (let t = 0; t < turns; t++) {
        await sk.getItems();
        await sk.addItems(turnItems(t));
      }
    }));
    await sk.close();
    const file = path.join(d, 'memory-session.json');
    const mem = new MemorySession();
    add('mem_turns', await timed(async () => {
      for (let t = 0; t < turns; t++) {
        await mem.getItems();
        await mem.addItems(turnItems(t));
        fs.writeFileSync(file, JSON.stringify(await mem.getItems()));
      }
    }));
    add('sk_reopen', await timed(async () => {
      const again = new SessionkitSession({ sessionId: `bench-${r}`, project, home });
      const items = await again.getItems();
      if (items.length !== turns * 2) throw new Error(`resumed ${items.length} items`);
      await again.close();
    }));
    add('mem_reopen', await timed(async () => {
      const m = new MemorySession({ initialItems: JSON.parse(fs.readFileSync(file, 'utf8')) });
      if ((await m.getItems()).length !== turns * 2) throw new Error('memory resume');
    }));
    fs.rmSync(d, { recursive: true, force: true });
  }
  return Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v)]));
}

buildRust();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionkit-node-bench-'));
try {
  const p = await plainApi(tmp);
  const ad = await adapter(tmp);
  const row = (name, sk, peer) => console.log(`  ${name.padEnd(58)} sessionkit ${sk.toFixed(1).padStart(9)} ms  peer ${peer.toFixed(1).padStart(9)} ms  ${(peer / sk).toFixed(2)}x`);
  console.log(`node ${process.version}, ${rounds} rounds, ${adds} appends, ${mib} MiB resume, ${turns} adapter turns`);
  const floor = (name, ms) => console.log(`  ${name.padEnd(58)} floor      ${ms.toFixed(1).padStart(9)} ms`);
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (${os.cpus().length} CPUs)`);
  console.log('against JSONL (peer / sessionkit):');
  row(`append x${adds} awaited vs appendFileSync`, p.sk_append, p.jsonl_append);
  row(`append x${adds} awaited vs await fh.appendFile`, p.sk_append, p.jsonl_append_async);
  row(`append x${adds} fired, then awaited vs appendFileSync`, p.sk_append_fired, p.jsonl_append);
  row(`append x${adds} fired, then awaited vs await fh.appendFile`, p.sk_append_fired, p.jsonl_append_async);
  floor(`${adds} awaited poolRoundTrip() (no work)`, p.pool_floor);
  floor(`JSON.stringify of the ${adds} messages (both sides pay it)`, p.stringify_floor);
  row(`resume ${mib} MiB whole, modelView vs read+split+parse`, p.sk_resume, p.jsonl_resume);
  row(`resume ${mib} MiB whole, activePath`, p.sk_active, p.jsonl_resume);
  row(`resume ${mib} MiB 95 % compacted, modelView`, p.sk_resume_compacted, p.jsonl_resume);
  floor(`JSON.parse of the model view's text (${p.sk_text_mb.toFixed(1)} MB) in memory`, p.parse_sk_text);
  floor(`JSON.parse of the JSONL text (${p.jsonl_text_mb.toFixed(1)} MB) in memory`, p.parse_jsonl_text);
  console.log('binding overhead (Node API / Rust API, same work):');
  for (const [name, node, rs] of [
    [`append x${adds} awaited`, p.sk_append, p.rust_append],
    [`append x${adds} fired, then awaited`, p.sk_append_fired, p.rust_append],
    [`resume ${mib} MiB whole, model view`, p.sk_resume, p.rust_resume],
    [`resume ${mib} MiB whole, active path`, p.sk_active, p.rust_active],
    [`resume ${mib} MiB, 95 % compacted`, p.sk_resume_compacted, p.rust_resume_compacted],
  ]) {
    console.log(`  ${name.padEnd(40)} node ${node.toFixed(1).padStart(9)} ms  rust ${rs.toFixed(1).padStart(9)} ms  ${(node / rs).toFixed(2)}x`);
  }
  console.log('adapter vs MemorySession + JSON file after each turn (peer / sessionkit):');
  row(`${turns} turns (getItems + addItems)`, ad.sk_turns, ad.mem_turns);
  row(`reopen and getItems of ${turns * 2} items`, ad.sk_reopen, ad.mem_reopen);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
