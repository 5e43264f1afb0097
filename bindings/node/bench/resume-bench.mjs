// Node's resume of a large session against the core's, in one run (medians of
// --rounds rounds, the two sides interleaved):
//
// - core: `Store::model_view` in Rust (core/examples/same_work.rs, built here
//   in release; it reports the median of five in-process runs);
// - native: the addon's part of `store.modelView(id)`: the view folded on the
//   pool and its pages of JSON text handed to JavaScript, not parsed;
// - modelView: the whole `await store.modelView(id)`, objects and all;
// - the floor any resume returning objects pays on top of the native part:
//   `JSON.parse` of each message's text, already in memory (the pages the
//   native part handed over, parsed as the package parses them);
// - `fs.readFileSync` of the log, Node's own read of the bytes.
//
//   node bindings/node/build.js            # release addon
//   node bindings/node/bench/resume-bench.mjs --mib 200 --rounds 5
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import native from '../native.js';
import { Store } from '../index.mjs';
import { ITEM_BYTES, MIB, buildRust, median, message, rust, timed } from './common.mjs';

const PAGE_BYTES = Number(process.env.PAGE_KIB ?? 256) * 1024;

const { values: a } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    mib: { type: 'string', default: '200' },
  },
});
const rounds = Number(a.rounds);
const mib = Number(a.mib);

buildRust();

/** A page's messages, parsed as index.js parses them. */
function pageMessages(page) {
  if (typeof page === 'string') return JSON.parse(page);
  const { text, spans } = page;
  const out = new Array(spans.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = JSON.parse(text.slice(spans[2 * i], spans[2 * i + 1]));
  return out;
}

/** The native part of a model view: every page, unparsed. */
async function nativePages(st, id) {
  const pages = await st.modelView(id, null);
  const out = [];
  for (;;) {
    const text = await pages.nextPage(PAGE_BYTES);
    if (text === null) return out;
    out.push(text);
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sk-node-resume-'));
try {
  const project = path.join(tmp, 'project');
  const home = path.join(tmp, 'home');
  fs.mkdirSync(project, { recursive: true });
  const options = { home, durability: 'never', maxSessions: 0 };
  const store = await Store.open(project, options);
  const n = Math.floor((mib * MIB) / ITEM_BYTES);
  const s = await store.createSession();
  for (let start = 0; start < n; start += 1000) {
    await s.appendBatch(Array.from({ length: Math.min(1000, n - start) }, (_, i) => message(start + i)));
  }
  const id = s.id;
  await s.close();
  const log = fs.readdirSync(path.join(home), { recursive: true }).find((f) => f.endsWith(`${id}.jsonl`));
  const logPath = path.join(home, log);
  const st = await native.openStore(project, JSON.stringify(options));
  // Warm once (the first read writes the structure cache), as the Rust side does.
  const pages = await nativePages(st, id);
  const bytes = pages.reduce((n, p) => n + (typeof p === 'string' ? p.length : p.text.length), 0);
  if ((await store.modelView(id)).length !== n) throw new Error('the model view lost messages');
  const res = {};
  const add = (k, v) => (res[k] ??= []).push(v);
  for (let r = 0; r < rounds; r++) {
    add('native', await timed(() => nativePages(st, id)));
    add('modelView', await timed(() => store.modelView(id)));
    add('parse', await timed(() => pages.map(pageMessages)));
    add('readFile', await timed(() => fs.readFileSync(logPath)));
    const core = rust('resume', '--project', project, '--home', home, '--id', id);
    add('core', core.ms);
    add('coreFirst', core.first);
  }
  const m = Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v)]));
  const f = (x) => x.toFixed(1);
  console.log(`node ${process.version}, ${mib} MiB (${n} messages, log ${(fs.statSync(logPath).size / MIB).toFixed(1)} MiB, pages ${(bytes / MIB).toFixed(1)} MiB of text), ${rounds} rounds`);
  console.log(`core Store::model_view          ${f(m.core)} ms (first run of a process: ${f(m.coreFirst)} ms)`);
  console.log(`native (pages of text)          ${f(m.native)} ms  ${(m.native / m.core).toFixed(2)}× the core`);
  console.log(`store.modelView (objects)       ${f(m.modelView)} ms  ${(m.modelView / m.core).toFixed(2)}× the core`);
  console.log(`floor: JSON.parse of the pages  ${f(m.parse)} ms  (core + floor: ${((m.core + m.parse) / m.core).toFixed(2)}× the core)`);
  console.log(`fs.readFileSync of the log      ${f(m.readFile)} ms`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
