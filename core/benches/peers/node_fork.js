#!/usr/bin/env node
// Fork a JSONL session the way JavaScript agents do today: read the whole file,
// split it into lines, JSON.parse every line, set its sessionId to the new
// session's, JSON.stringify it back, and write the new file. Plain Node 20, no
// npm deps. (It copies every line; sessionkit copies the active path, which for a
// fork at the head of these linear sessions is every message.)
//
//   node node_fork.js <session.jsonl>
//
// Prints one JSON object: the in-process fork time (from before the read to the
// written file) and the number of messages copied. The new file is removed again.
'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');

const file = process.argv[2];
if (!file) {
  console.error('usage: node node_fork.js <session.jsonl>');
  process.exit(2);
}
const to = file.replace(/\.jsonl$/, '') + '.node-fork.jsonl';

const t0 = process.hrtime.bigint();
const id = crypto.randomUUID();
const lines = fs.readFileSync(file, 'utf8').split('\n');
const out = [];
let messages = 0;
for (const line of lines) {
  if (line.length === 0) continue;
  let rec;
  try {
    rec = JSON.parse(line);
  } catch {
    continue;
  }
  if (rec.type === 'session') {
    rec.id = id;
  } else if (rec.sessionId !== undefined) {
    rec.sessionId = id;
  }
  if (rec.type === undefined || rec.type === 'message') messages++;
  out.push(JSON.stringify(rec));
}
fs.writeFileSync(to, out.join('\n') + '\n');
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
fs.unlinkSync(to);

console.log(JSON.stringify({ mode: 'node-fork', messages, fork_ms: ms }));
