#!/usr/bin/env node
// Resume a JSONL session the way JavaScript agents do today: read the whole file,
// split it into lines, JSON.parse every line, index messages by id, then walk
// parentId from the last message back to the root. Plain Node 20, no npm deps.
//
//   node node_resume.js <session.jsonl>
//
// Prints one JSON object: the in-process resume time (from before the read to the
// finished path), the path length, and the process's peak RSS.
'use strict';
const fs = require('node:fs');

const file = process.argv[2];
if (!file) {
  console.error('usage: node node_resume.js <session.jsonl>');
  process.exit(2);
}

const t0 = process.hrtime.bigint();
const text = fs.readFileSync(file, 'utf8');
const lines = text.split('\n');
const byId = new Map();
let last = null;
let bad = 0;
for (const line of lines) {
  if (line.length === 0) continue;
  let rec;
  try {
    rec = JSON.parse(line);
  } catch {
    bad++;
    continue;
  }
  // A line without `type` is a message, as in seed-style transcripts.
  if (rec.type === undefined || rec.type === 'message') {
    byId.set(rec.id, rec);
    last = rec;
  }
}
const path = [];
for (let m = last; m && path.length <= byId.size; m = m.parentId ? byId.get(m.parentId) : undefined) {
  path.push(m);
}
path.reverse();
const ms = Number(process.hrtime.bigint() - t0) / 1e6;

const fileBytes = fs.statSync(file).size;
const maxRss = process.resourceUsage().maxRSS * 1024; // reported in kB
console.log(JSON.stringify({
  mode: 'node',
  file_bytes: fileBytes,
  messages: path.length,
  bad_lines: bad,
  resume_ms: ms,
  hwm: maxRss,
  hwm_over_file: maxRss / fileBytes,
}));
