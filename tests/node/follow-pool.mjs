// Run by follow.test.mjs in a process of its own, with UV_THREADPOOL_SIZE=4:
// eight followers wait on a session nobody pushes, and meanwhile a libuv pool
// task (crypto.pbkdf2, fs.promises.readFile) and offset reads must go through.
// Prints what it saw as JSON.
import { randomUUID, pbkdf2 } from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

import { freshStore } from './helpers.mjs';

const url = process.env.SESSIONKIT_TEST_PG;
const project = `node-${randomUUID()}`;
const a = (await freshStore()).store;
const b = (await freshStore()).store;
const ra = await a.connectRemote({ url, project, holder: 'writer' });
const rb = await b.connectRemote({ url, project, holder: 'watchers' });
const s = await a.createSession();
await s.append({ role: 'user', content: 'watch this' });
await ra.push(s.id);

const followers = await Promise.all(Array.from({ length: 8 }, () => rb.follow(s.id)));
let settled = 0;
const waits = followers.map((f) => f.nextLines(20_000).finally(() => settled++));
// Long enough for every wait to be in the core's wait.
await sleep(500);

const out = { pool: [], offsetReadMs: 0 };
let t = performance.now();
await promisify(pbkdf2)('secret', 'salt', 1, 32, 'sha256');
out.pool.push({ task: 'pbkdf2', ms: performance.now() - t, waitsSettled: settled });
t = performance.now();
await fs.promises.readFile(a.logPath(s.id));
out.pool.push({ task: 'readFile', ms: performance.now() - t, waitsSettled: settled });

t = performance.now();
out.offsets = followers.map((f) => f.offset);
out.offsetReadMs = performance.now() - t;
out.settledAfterOffsets = settled;

await s.append({ role: 'assistant', content: 'now' });
await ra.push(s.id);
out.got = (await Promise.all(waits)).map((lines) => Buffer.concat(lines).toString());
out.want = fs.readFileSync(a.logPath(s.id)).subarray(out.offsets[0]).toString();
await Promise.all(followers.map((f) => f.close()));
await s.close();
await ra.close();
await rb.close();
console.log(JSON.stringify(out));
