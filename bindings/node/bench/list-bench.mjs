// Listing through the Node package at the scale of a heavy user: the store
// core/examples/list_bench.rs writes (`list_bench gen DIR`: one project of
// 10,000 sessions, a home of 100 projects × 100 sessions), listed as a picker
// does, beside the same calls of the Rust API in the same run
// (`list_bench time DIR`).
//
// - store.listPage({limit: 50}): the first screen, checked against every log;
// - store.listSessions(): every entry;
// - listAllSessions() over the home of 100 projects.
//
// Each figure is the median of 11 calls in this process.
//
//   cargo run --release -p sessionkit --example list_bench -- gen DIR
//   node bindings/node/bench/list-bench.mjs DIR
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sessionkit from '../index.mjs';

const { Store, listAllSessions } = sessionkit;

const ROUNDS = 11;

async function medianMs(f) {
  const times = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[ROUNDS >> 1];
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: node list-bench.mjs DIR (written by `list_bench gen DIR`)');
const big = path.join(dir, 'big');
const store = await Store.open(path.join(big, 'project'), { home: path.join(big, 'home'), durability: 'never' });
const first = await store.listPage({ limit: 50 });
console.log(`one project: ${first.total} sessions`);
console.log(`  listPage({limit: 50})    ${(await medianMs(() => store.listPage({ limit: 50 }))).toFixed(2)} ms`);
console.log(`  listSessions()           ${(await medianMs(() => store.listSessions())).toFixed(2)} ms`);
const home = path.join(dir, 'many', 'home');
const projects = await listAllSessions({ home });
const total = projects.reduce((n, p) => n + p.sessions.length, 0);
console.log(`home: ${projects.length} projects, ${total} sessions`);
console.log(`  listAllSessions()        ${(await medianMs(() => listAllSessions({ home }))).toFixed(2)} ms`);
await store.close();
