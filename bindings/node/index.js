'use strict';
// The `sessionkit` package: typed handles over the native addon. Each method
// checks and encodes its arguments, calls one operation of the Rust core (on
// the libuv pool when it touches disk) and decodes the result; the logic is in
// the core.
//
// Values: messages and items are plain objects that cross as JSON text, so
// `JSON.stringify`'s rules apply (a cycle or a BigInt is refused with
// INVALID_INPUT; `undefined` members are left out, as in any JSON log).
// Times: timestamps stay the ISO 8601 strings the log holds (lossless; pass
// them to `new Date()` when a Date is wanted).
// Errors: every rejection is a `SessionkitError` (errors.js), of the subclass
// of its kind (`BusyError`, `InvalidInputError`, ...), with `code` (the core's
// error kind name: NOT_FOUND, BUSY, ...) and `errno` (the OS error number, or
// null).
// Defaults: enum values and the defaults of optional arguments are the
// core's table (`enums`, `defaults`), never typed again here.
// Order: the calls on one Session or Subagent run one at a time in call order
// (class Calls); appends waiting together go to the core as one call.

// The addon of this platform (native.js): built from source in a clone, else
// the prebuilt @sessionkit/<platform> package; UNSUPPORTED when neither loads.
const native = require('./native.js');
const { inspect } = require('node:util');
const errors = require('./errors.js');

const { errorFor, InvalidInputError } = errors;
// The addon makes its errors through the package's classes.
native.setErrorFactory({ make: (code, message, errno) => errorFor(code, message, errno) });

function deepFreeze(v) {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

const table = JSON.parse(native.defaults());
/** The core's enum value lists (`enums.rewindMode`: the rewind modes, ...). */
const enums = deepFreeze(table.enums);
/** The core's defaults of optional arguments (`defaults.rewindMode`, ...). */
const defaults = deepFreeze(table.defaults);

/** The core's error kinds: `{ code, name, description }`, in number order. */
const errorKinds = Object.freeze(
  JSON.parse(native.errorKinds()).map(([code, name, description]) =>
    Object.freeze({ code, name, description }),
  ),
);
/** The error codes by name (`ErrorCode.BUSY === 'BUSY'`). */
const ErrorCode = Object.freeze(Object.fromEntries(errorKinds.map((k) => [k.name, k.name])));

function invalid(message) {
  return new InvalidInputError(message);
}

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

function str(v, name) {
  if (typeof v !== 'string') throw invalid(`argument \`${name}\` must be a string, not ${describe(v)}`);
  return v;
}

function optStr(v, name) {
  return v === undefined || v === null ? null : str(v, name);
}

/** A count the addon takes as a u32; INVALID_INPUT for anything else. */
function count(v, name) {
  if (!(Number.isInteger(v) && v >= 0 && v <= 0xffffffff)) {
    throw invalid(`argument \`${name}\` must be a non-negative integer, not ${String(v)}`);
  }
  return v;
}

function bool(v, name) {
  if (typeof v !== 'boolean') throw invalid(`argument \`${name}\` must be a boolean, not ${describe(v)}`);
  return v;
}

/** The JSON text of a value; INVALID_INPUT for what JSON cannot hold. */
function enc(v, name) {
  if (v === undefined) throw invalid(`argument \`${name}\` is required (got undefined)`);
  let text;
  try {
    text = JSON.stringify(v);
  } catch (e) {
    throw invalid(`argument \`${name}\` cannot be stored as JSON: ${e.message}`);
  }
  if (text === undefined) throw invalid(`argument \`${name}\` cannot be stored as JSON: ${describe(v)}`);
  return text;
}

function encObject(v, name) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw invalid(`argument \`${name}\` must be an object, not ${describe(v)}`);
  }
  return enc(v, name);
}

function encArray(v, name) {
  if (!Array.isArray(v)) throw invalid(`argument \`${name}\` must be an array, not ${describe(v)}`);
  return enc(v, name);
}

function encOptions(v, name = 'options') {
  if (v === undefined || v === null) return null;
  return encObject(v, name);
}

function encPaths(v) {
  if (!Array.isArray(v)) throw invalid(`argument \`paths\` must be an array of strings, not ${describe(v)}`);
  v.forEach((p, i) => str(p, `paths[${i}]`));
  return JSON.stringify(v);
}

/** The `scope` of a memory call's options (the core's default unless given). */
function memoryScope(options) {
  if (options === undefined || options === null) return defaults.memoryScope;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`argument \`options\` must be an object, not ${describe(options)}`);
  }
  return options.scope === undefined ? defaults.memoryScope : str(options.scope, 'options.scope');
}

function modelOptions(options) {
  return encOptions(options);
}

const parse = JSON.parse;
const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

/** One handle's calls, run one at a time in call order (scheduling only: what
 *  each call does is the core's). Without it, calls not awaited one by one
 *  would race on the libuv pool and appends could land in any order.
 *  The appends waiting behind a call in flight go to the core together, one
 *  group per call, in one `appendGroups`: the core writes them at once and
 *  answers each group (its messages, or the error it would have had alone). */
class Calls {
  #native;
  #queue = [];
  #busy = false;
  constructor(native) {
    this.#native = native;
  }
  /** Queue `f` (a call into the addon made when its turn comes). */
  run(f) {
    return new Promise((resolve, reject) => {
      this.#queue.push({ f, resolve, reject });
      this.#next();
    });
  }
  /** Queue an append of one group: `text` is the JSON text of an array of
   *  messages. Resolves with the stored messages, or with the one stored
   *  message when `one`. */
  append(text, one) {
    return new Promise((resolve, reject) => {
      this.#queue.push({ text, one, resolve, reject });
      this.#next();
    });
  }
  #next() {
    if (this.#busy || this.#queue.length === 0) return;
    this.#busy = true;
    let done;
    if (this.#queue[0].f) {
      const call = this.#queue.shift();
      done = settle(call, () => call.f());
    } else {
      let n = 1;
      while (n < this.#queue.length && !this.#queue[n].f) n++;
      done = this.#appends(this.#queue.splice(0, n));
    }
    const next = () => {
      this.#busy = false;
      this.#next();
    };
    done.then(next, next);
  }
  async #appends(calls) {
    let results;
    try {
      results = parse(await this.#native.appendGroups(calls.map((c) => c.text)));
    } catch (e) {
      // The write itself failed (or the handle is closed): every call of it.
      for (const c of calls) c.reject(e);
      return;
    }
    calls.forEach((c, i) => {
      const { ok, error } = results[i];
      if (error) c.reject(errorFor(error.code, error.message, error.errno));
      else c.resolve(c.one ? ok[0] : ok);
    });
  }
}

/** How `util.inspect` (and so `console.log`) shows a handle: its class and
 *  what identifies it, e.g. `Session { id: '…', title: '…' }`. */
function shown(name, fields, options, fmt) {
  return `${name} ${fmt(fields, options)}`;
}

/** Run `f` and pass its outcome to `call`'s Promise; never rejects. */
async function settle(call, f) {
  try {
    call.resolve(await f());
  } catch (e) {
    call.reject(e);
  }
}

/** A project's sessions shared through PostgreSQL, bound to the store that
 *  connected it: push, list, pull, and leases (one writer across machines). */
class Remote {
  #r;
  constructor(handle) {
    if (!(handle instanceof globalThis.Object) || handle.constructor !== native.NativeRemote) {
      throw invalid('use `await store.connectRemote(options)` to connect');
    }
    this.#r = handle;
  }
  get project() {
    return this.#r.project;
  }
  get holder() {
    return this.#r.holder;
  }
  /** True once `close()` was called. */
  get closed() {
    return this.#r.closed;
  }
  /** Close the connection once the calls in flight are done; later calls
   *  reject. Followers and background pushes keep their own connections. */
  async close() {
    await this.#r.close();
  }
  [asyncDispose]() {
    return this.close();
  }
  [inspect.custom](depth, options, fmt) {
    return shown('Remote', { project: this.project, holder: this.holder }, options, fmt);
  }
  async schemaVersion() {
    return this.#r.schemaVersion();
  }
  async list() {
    return parse(await this.#r.list());
  }
  async acquire(sessionId) {
    return parse(await this.#r.acquire(str(sessionId, 'sessionId')));
  }
  async renew(lease) {
    return parse(await this.#r.renew(encObject(lease, 'lease')));
  }
  async release(lease) {
    await this.#r.release(encObject(lease, 'lease'));
  }
  async push(sessionId, lease) {
    const l = lease === undefined || lease === null ? null : encObject(lease, 'lease');
    return parse(await this.#r.push(str(sessionId, 'sessionId'), l));
  }
  async pull(sessionId) {
    return parse(await this.#r.pull(str(sessionId, 'sessionId')));
  }
  /** Follow a session as others push it, from byte `start` of its log (0, or
   *  the length of a local copy; default: where the remote stands). */
  async follow(sessionId, start) {
    if (start !== undefined && start !== null && !Number.isSafeInteger(start)) {
      throw invalid(`argument \`start\` must be an integer byte offset, not ${describe(start)}`);
    }
    return new Follower(await this.#r.follow(str(sessionId, 'sessionId'), start ?? null));
  }
  /** Push a session while this process writes it: its lease is taken on a
   *  connection of its own (BUSY while another holder has it), then what its
   *  log gained is pushed every `intervalMs` (10 ms to a third of the lease
   *  time; default `defaults.pushIntervalMs`) and the lease renewed, on a thread of its own, so an
   *  append never waits for the network. `stop()` pushes the rest and gives
   *  the lease back. */
  async pushInBackground(sessionId, options) {
    const intervalMs = options?.intervalMs ?? defaults.pushIntervalMs;
    if (!Number.isInteger(intervalMs) || intervalMs < 0 || intervalMs > 0xffffffff) {
      throw invalid(`option \`intervalMs\` must be an integer of milliseconds, not ${describe(intervalMs)}`);
    }
    return new BackgroundPush(await this.#r.pushInBackground(str(sessionId, 'sessionId'), intervalMs));
  }
}

/** A session pushed in the background (`remote.pushInBackground`). */
class BackgroundPush {
  #p;
  #stopped = false;
  constructor(handle) {
    this.#p = handle;
  }
  /** Bytes of the session's log the remote holds, as of the last push. */
  get pushed() {
    return this.#p.pushed;
  }
  [inspect.custom](depth, options, fmt) {
    return shown('BackgroundPush', { pushed: this.pushed }, options, fmt);
  }
  /** Push what the log holds now and wait for it; BUSY once the lease was
   *  taken over by another holder. */
  async flush() {
    return parse(await this.#p.flush());
  }
  /** Push the rest, give the lease back and end (once). */
  async stop() {
    this.#stopped = true;
    return parse(await this.#p.stop());
  }
  /** `stop()` unless it was called: what `await using` runs. */
  async close() {
    if (!this.#stopped) await this.stop();
  }
  [asyncDispose]() {
    return this.close();
  }
}

/** How long one wait of a Follower's iteration lasts before it asks again
 *  (it ends sooner when lines come, on abort and on close). */
const FOLLOW_WAIT_MS = 60_000;

function signalOf(options) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`argument \`options\` must be an object, not ${describe(options)}`);
  }
  const { signal } = options;
  if (signal === undefined || signal === null) return undefined;
  if (typeof signal !== 'object' || typeof signal.addEventListener !== 'function' || typeof signal.aborted !== 'boolean') {
    throw invalid(`option \`signal\` must be an AbortSignal, not ${describe(signal)}`);
  }
  return signal;
}

/** A followed session. `nextLines(timeoutMs)` resolves to the lines pushed
 *  since (each a Buffer with its newline), waiting up to `timeoutMs` for some;
 *  a push's notification wakes it, and it reads every second anyway. The
 *  waits run on a thread of the follower's own, so a waiting follower holds
 *  no thread of the libuv pool, and `offset` never waits for a wait.
 *  `for await (const lines of follower)` yields each batch of lines until
 *  `close()`; `follower.lines({ signal })` until the signal aborts too. */
class Follower {
  #f;
  /** Lines that settled after their wait was aborted: the next wait's. */
  #kept = [];
  #closing;
  constructor(handle) {
    this.#f = handle;
  }
  /** Where the next lines start, in bytes of the log. */
  get offset() {
    let kept = 0;
    for (const l of this.#kept) kept += l.length;
    return this.#f.offset - kept;
  }
  /** True once `close()` was called. */
  get closed() {
    return this.#f.closed;
  }
  [inspect.custom](depth, options, fmt) {
    return shown('Follower', { offset: this.offset }, options, fmt);
  }
  /** With `{ signal }`, an abort rejects the wait at once with the signal's
   *  reason (and ends it on the follower's thread within half a second); lines it
   *  read meanwhile go to the next wait. */
  async nextLines(timeoutMs, options) {
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 0xffffffff) {
      throw invalid(`argument \`timeoutMs\` must be an integer of milliseconds >= 0, not ${describe(timeoutMs)}`);
    }
    const signal = signalOf(options);
    signal?.throwIfAborted();
    if (this.#kept.length > 0) return this.#kept.splice(0);
    const id = this.#f.nextWait;
    const wait = this.#f.nextLines(timeoutMs);
    if (signal === undefined) return wait;
    return new Promise((resolve, reject) => {
      let done = false;
      const onAbort = () => {
        done = true;
        this.#f.cancel(id);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      wait.then(
        (lines) => {
          signal.removeEventListener('abort', onAbort);
          if (done) this.#kept.push(...lines);
          else resolve(lines);
        },
        (e) => {
          signal.removeEventListener('abort', onAbort);
          if (!done) reject(e);
        },
      );
    });
  }
  /** The batches of lines as they are pushed, until `close()` or, with
   *  `{ signal }`, until the signal aborts (the iteration then ends). */
  async *lines(options) {
    const signal = signalOf(options);
    while (!this.closed && !signal?.aborted) {
      let got;
      try {
        got = await this.nextLines(FOLLOW_WAIT_MS, { signal });
      } catch (e) {
        if (signal?.aborted && e === signal.reason) return;
        throw e;
      }
      if (got.length > 0) yield got;
    }
  }
  [Symbol.asyncIterator]() {
    return this.lines();
  }
  /** End the follower: a wait in flight resolves to no lines (an iteration
   *  ends), later waits reject; resolves once its connection is closed. */
  async close() {
    this.#closing ??= this.#f.close();
    await this.#closing;
  }
  [asyncDispose]() {
    return this.close();
  }
}

/** The JSON text of at most this many bytes of messages is parsed at once
 *  when a view is read: the longest the event loop stops for a view. */
const PAGE_BYTES = 256 * 1024;

/** A page's messages: a JSON array text, or `{ text, spans }` (each message's
 *  text is a slice of `text`, which the addon hands over without a copy). */
function pageMessages(page) {
  if (typeof page === 'string') return parse(page);
  const { text, spans } = page;
  const out = new Array(spans.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parse(text.slice(spans[2 * i], spans[2 * i + 1]));
  return out;
}

/** The messages of a view (a promise of native pages), a page at a time;
 *  each page is made on the pool, parsed here. */
async function* messagesOf(pages) {
  const p = await pages;
  for (;;) {
    const page = await p.nextPage(PAGE_BYTES);
    if (page === null) return;
    yield* pageMessages(page);
  }
}

/** An iterator over a view started now (so calls keep their order); the
 *  view's error surfaces when it is iterated. */
function iterate(pages) {
  pages.catch(() => {});
  return messagesOf(pages);
}

/** All the messages of a view, parsed a page at a time. */
async function collect(pages) {
  const p = await pages;
  const out = [];
  for (;;) {
    const page = await p.nextPage(PAGE_BYTES);
    if (page === null) return out;
    for (const m of pageMessages(page)) out.push(m);
  }
}

/** A session or sidechain read without a lock: its views, tree and records. */
class SessionView {
  #v;
  constructor(v) {
    this.#v = v;
  }
  /** Header, counts and the read report (corrupt lines, missing blobs). */
  info() {
    return parse(this.#v.info());
  }
  /** Every record of the log, in order. */
  records() {
    return parse(this.#v.records());
  }
  async activePath() {
    return collect(this.#v.activePath());
  }
  async uiView() {
    return collect(this.#v.uiView());
  }
  async modelView(options) {
    return collect(this.#v.modelView(modelOptions(options)));
  }
  /** The active path's messages, a page at a time: the event loop runs
   *  between pages, however long the session. */
  iterActivePath() {
    return iterate(this.#v.activePath());
  }
  iterUiView() {
    return iterate(this.#v.uiView());
  }
  iterModelView(options) {
    return iterate(this.#v.modelView(modelOptions(options)));
  }
  async message(messageId) {
    return parse(await this.#v.message(str(messageId, 'messageId')));
  }
  async resolveMessage(prefix) {
    return this.#v.resolveMessage(str(prefix, 'prefix'));
  }
  async tree() {
    return parse(await this.#v.tree());
  }
  async branches() {
    return parse(await this.#v.branches());
  }
}

/** A subagent's sidechain open for writing. Its calls run one at a time in
 *  call order, as a Session's do. */
class Subagent {
  #a;
  #q;
  constructor(a) {
    this.#a = a;
    this.#q = new Calls(a);
  }
  get id() {
    return this.#a.id;
  }
  get sessionId() {
    return this.#a.sessionId;
  }
  get closed() {
    return this.#a.closed;
  }
  [inspect.custom](depth, options, fmt) {
    const fields = { id: this.id, sessionId: this.sessionId };
    if (this.closed) fields.closed = true;
    return shown('Subagent', fields, options, fmt);
  }
  /** Release the sidechain's lock, once the calls made before it are done. */
  async close() {
    await this.#q.run(() => this.#a.close());
  }
  [asyncDispose]() {
    return this.close();
  }
  async append(message) {
    return this.#q.append(`[${encObject(message, 'message')}]`, true);
  }
  async appendBatch(messages) {
    return this.#q.append(encArray(messages, 'messages'), false);
  }
  async finish(result, failed = false) {
    const r = enc(result, 'result');
    const f = bool(failed, 'failed');
    await this.#q.run(() => this.#a.finish(r, f));
  }
  async read() {
    return new SessionView(await this.#q.run(() => this.#a.read()));
  }
}

/** One session open for writing; it holds the session's writer lock until
 *  `close()` (a second writer, in this process or another, gets BUSY).
 *  Its calls run one at a time in call order: appends fired without awaiting
 *  land in the order they were made, and a read sees every call made before
 *  it. Appends that wait together go to the core as one write. */
class Session {
  #s;
  #q;
  constructor(s) {
    this.#s = s;
    this.#q = new Calls(s);
  }
  get id() {
    return this.#s.id;
  }
  get closed() {
    return this.#s.closed;
  }
  /** Flush the index entry and release the lock, once the calls made before
   *  it are done; calls made after it reject (the session is closed). */
  async close() {
    await this.#q.run(() => this.#s.close());
  }
  [asyncDispose]() {
    return this.close();
  }
  [inspect.custom](depth, options, fmt) {
    let title;
    try {
      title = this.info().entry.title ?? null;
    } catch {
      // Closed: its entry is no longer this handle's to show.
      return shown('Session', { id: this.id, closed: true }, options, fmt);
    }
    return shown('Session', { id: this.id, title }, options, fmt);
  }
  /** The session's info as of the calls completed so far (synchronous). */
  info() {
    return parse(this.#s.info());
  }
  /** The head as of the calls completed so far (synchronous). */
  head() {
    return this.#s.head();
  }
  /** Whether this handle is a shared writer (`openShared`, `openConversation`). */
  get shared() {
    return this.#s.shared;
  }
  fsyncCount() {
    return this.#s.fsyncCount();
  }
  #run(f) {
    return this.#q.run(f);
  }
  async lastSnapshot() {
    return this.#run(() => this.#s.lastSnapshot());
  }
  async append(message) {
    return this.#q.append(`[${encObject(message, 'message')}]`, true);
  }
  async appendBatch(messages) {
    return this.#q.append(encArray(messages, 'messages'), false);
  }
  async updateState(state) {
    const t = encObject(state, 'state');
    return parse(await this.#run(() => this.#s.updateState(t)));
  }
  async patchMessage(messageId, patch) {
    const id = str(messageId, 'messageId');
    const t = encObject(patch, 'patch');
    await this.#run(() => this.#s.patchMessage(id, t));
  }
  async setHead(messageId) {
    const id = optStr(messageId, 'messageId');
    await this.#run(() => this.#s.setHead(id));
  }
  async resumeAt(messageId) {
    const id = str(messageId, 'messageId');
    await this.#run(() => this.#s.resumeAt(id));
  }
  async rename(title) {
    const t = str(title, 'title');
    return parse(await this.#run(() => this.#s.rename(t)));
  }
  async sync() {
    await this.#run(() => this.#s.sync());
  }
  async flushIndex() {
    await this.#run(() => this.#s.flushIndex());
  }
  async read() {
    return new SessionView(await this.#run(() => this.#s.read()));
  }
  async activePath() {
    return collect(this.#run(() => this.#s.activePath()));
  }
  async modelView(options) {
    const o = modelOptions(options);
    return collect(this.#run(() => this.#s.modelView(o)));
  }
  /** `activePath()` a page at a time (the view is taken in call order). */
  iterActivePath() {
    return iterate(this.#run(() => this.#s.activePath()));
  }
  iterModelView(options) {
    const o = modelOptions(options);
    return iterate(this.#run(() => this.#s.modelView(o)));
  }
  async selectCompaction(policy) {
    const p = encObject(policy, 'policy');
    return parse(await this.#run(() => this.#s.selectCompaction(p)));
  }
  async applyCompaction(replaces, summary) {
    if (!Array.isArray(replaces)) {
      throw invalid(`argument \`replaces\` must be an array of message ids, not ${describe(replaces)}`);
    }
    const r = enc(replaces, 'replaces');
    const t = enc(summary, 'summary');
    return parse(await this.#run(() => this.#s.applyCompaction(r, t)));
  }
  async spawnSubagent(agentId, meta) {
    const id = optStr(agentId, 'agentId');
    const m = meta === undefined || meta === null ? null : encObject(meta, 'meta');
    return new Subagent(await this.#run(() => this.#s.spawnSubagent(id, m)));
  }
  async openSubagent(agentId) {
    const id = str(agentId, 'agentId');
    return new Subagent(await this.#run(() => this.#s.openSubagent(id)));
  }
  async userInput(message) {
    const t = encObject(message, 'message');
    return parse(await this.#run(() => this.#s.userInput(t)));
  }
  async trackRead(paths) {
    const p = encPaths(paths);
    await this.#run(() => this.#s.trackRead(p));
  }
  async beforeEdit(paths) {
    const p = encPaths(paths);
    return this.#run(() => this.#s.beforeEdit(p));
  }
  async afterEdit(paths) {
    const p = encPaths(paths);
    return this.#run(() => this.#s.afterEdit(p));
  }
  async trackedFiles() {
    return this.#run(() => this.#s.trackedFiles());
  }
  async externalChanges(paths) {
    const p = encPaths(paths);
    return parse(await this.#run(() => this.#s.externalChanges(p)));
  }
  async ensureUnchanged(paths) {
    const p = encPaths(paths);
    await this.#run(() => this.#s.ensureUnchanged(p));
  }
  async undoCandidates() {
    return parse(await this.#run(() => this.#s.undoCandidates()));
  }
  async rewindPlan(messageId) {
    const id = str(messageId, 'messageId');
    return parse(await this.#run(() => this.#s.rewindPlan(id)));
  }
  async rewindPreview(messageId, mode = defaults.rewindMode) {
    const id = str(messageId, 'messageId');
    const m = str(mode, 'mode');
    return parse(await this.#run(() => this.#s.rewindPreview(id, m)));
  }
  async rewind(messageId, mode = defaults.rewindMode, { force = false } = {}) {
    const id = str(messageId, 'messageId');
    const m = str(mode, 'mode');
    const f = bool(force, 'force');
    return parse(await this.#run(() => this.#s.rewind(id, m, f)));
  }
  /** Rewind to before the `turns`-th latest user input (1: the latest turn). */
  async rewindTurns(turns = defaults.rewindTurns, mode = defaults.rewindTurnsMode, { force = false } = {}) {
    const n = count(turns, 'turns');
    const m = str(mode, 'mode');
    const f = bool(force, 'force');
    return parse(await this.#run(() => this.#s.rewindTurns(n, m, f)));
  }
  /** Delete this session for good (log, sidecars, file history) and start it
   *  again, empty, under the same id, once the calls made before it are done:
   *  this Session is closed, the new one resolved. */
  async erase() {
    return new Session(await this.#run(() => this.#s.erase()));
  }
  async snapshotPlan(snapshot) {
    const id = str(snapshot, 'snapshot');
    return parse(await this.#run(() => this.#s.snapshotPlan(id)));
  }
  async restoreSnapshot(snapshot, { force = false } = {}) {
    const id = str(snapshot, 'snapshot');
    const f = bool(force, 'force');
    return parse(await this.#run(() => this.#s.restoreSnapshot(id, f)));
  }
  /** The history as OpenAI Responses items (the last `limit` of them). */
  async responsesItems({ limit, modelView = false } = {}) {
    if (limit !== undefined && limit !== null) count(limit, 'limit');
    const mv = bool(modelView, 'modelView');
    return parse(await this.#run(() => this.#s.responsesItems(limit ?? null, mv)));
  }
  async appendResponsesItems(items) {
    const t = encArray(items, 'items');
    await this.#run(() => this.#s.appendResponsesItems(t));
  }
  /** Make `items` (a Responses `compaction` item, then the items kept after
   *  it) the history as the model sees it: `modelView()` and
   *  `responsesItems({ modelView: true })` start at the compaction item; the
   *  originals stay on the active path, marked compacted. One write. */
  async replaceResponsesItemsWithCompaction(items) {
    const t = encArray(items, 'items');
    await this.#run(() => this.#s.replaceResponsesItemsWithCompaction(t));
  }
  /** The last item, with the head moved back before it (nothing is rewritten). */
  async popResponsesItem() {
    const t = await this.#run(() => this.#s.popResponsesItem());
    return t === null ? undefined : parse(t);
  }
}

/** The sessions of one project. Open with `await Store.open(projectRoot, …)`. */
class Store {
  #st;
  constructor(native) {
    if (!(native instanceof globalThis.Object) || native.constructor !== nativeStoreClass) {
      throw invalid('use `await Store.open(projectRoot, options)` to open a store');
    }
    this.#st = native;
  }
  /** Open (creating `<home>/projects/<code>/` if needed) the store of the
   *  project at `projectRoot`. Options are the core's StoreOptions: `home`
   *  (default $SESSIONKIT_HOME, else ~/.sessionkit), `durability`,
   *  `maxSessions` (default 0: keep all), `trashGraceSecs`, `blobThreshold`,
   *  `maxRecordBytes`; unknown keys reject. */
  static async open(projectRoot = defaults.project, options) {
    const opts = encOptions(options);
    return new Store(await native.openStore(str(projectRoot, 'projectRoot'), opts));
  }
  get closed() {
    return this.#st.closed;
  }
  get projectCode() {
    return this.#st.projectCode;
  }
  [inspect.custom](depth, options, fmt) {
    const fields = { projectCode: this.projectCode };
    if (this.closed) fields.closed = true;
    return shown('Store', fields, options, fmt);
  }
  /** Forget the store (sessions already open stay open). */
  async close() {
    this.#st.close();
  }
  [asyncDispose]() {
    return this.close();
  }
  info() {
    return parse(this.#st.info());
  }
  async listSessions() {
    return parse(await this.#st.listSessions());
  }
  async listPage(options) {
    return parse(await this.#st.listPage(encOptions(options)));
  }
  async sessionEntry(sessionId) {
    return parse(await this.#st.sessionEntry(str(sessionId, 'sessionId')));
  }
  async resolveSession(prefix) {
    return this.#st.resolveSession(str(prefix, 'prefix'));
  }
  async continueSession() {
    return parse(await this.#st.continueSession());
  }
  async renameSession(sessionId, title) {
    return parse(await this.#st.renameSession(str(sessionId, 'sessionId'), str(title, 'title')));
  }
  async deleteSession(sessionId) {
    await this.#st.deleteSession(str(sessionId, 'sessionId'));
  }
  /** The sessions pruned into the trash, most recently trashed first. */
  async listTrash() {
    return parse(await this.#st.listTrash());
  }
  /** Move a trashed session back; its index entry. */
  async restoreSession(sessionId) {
    return parse(await this.#st.restoreSession(str(sessionId, 'sessionId')));
  }
  async readSession(sessionId) {
    return new SessionView(await this.#st.readSession(str(sessionId, 'sessionId')));
  }
  async modelView(sessionId, options) {
    return collect(this.#st.modelView(str(sessionId, 'sessionId'), modelOptions(options)));
  }
  iterModelView(sessionId, options) {
    return iterate(this.#st.modelView(str(sessionId, 'sessionId'), modelOptions(options)));
  }
  async listSubagents(sessionId) {
    return parse(await this.#st.listSubagents(str(sessionId, 'sessionId')));
  }
  async readSubagent(sessionId, agentId) {
    return new SessionView(await this.#st.readSubagent(str(sessionId, 'sessionId'), str(agentId, 'agentId')));
  }
  async rebuildIndex() {
    return parse(await this.#st.rebuildIndex());
  }
  async gc() {
    return parse(await this.#st.gc());
  }
  async fileHistorySizes() {
    return parse(await this.#st.fileHistorySizes());
  }
  async checkFileHistory() {
    return parse(await this.#st.checkFileHistory());
  }
  async pruneOrphanFileHistory() {
    return parse(await this.#st.pruneOrphanFileHistory());
  }
  async doctor(options) {
    return parse(await this.#st.doctor(encOptions(options)));
  }
  /** Full-text search (options as the core's SearchQuery, without `text`). */
  async search(text, options) {
    encOptions(options);
    return parse(await this.#st.search(enc({ ...options, text: str(text, 'text') }, 'options')));
  }
  async sessionIds() {
    return this.#st.sessionIds();
  }
  logPath(sessionId) {
    return this.#st.logPath(str(sessionId, 'sessionId'));
  }
  async exportSession(sessionId, format = defaults.exportFormat) {
    return this.#st.exportSession(str(sessionId, 'sessionId'), str(format, 'format'));
  }
  /** Write the session where another agent keeps its own, so that it lists
   *  and resumes it: `{to: 'claude-code' | 'codex', home, modelProvider}`. */
  async exportTo(sessionId, options) {
    return parse(await this.#st.exportTo(str(sessionId, 'sessionId'), enc(options, 'options')));
  }
  async branchFileHistory(sessionId, snapshot) {
    await this.#st.branchFileHistory(str(sessionId, 'sessionId'), str(snapshot, 'snapshot'));
  }
  /** A new session, open for writing (options as the core's CreateOptions:
   *  `id`, `title`, …). */
  async createSession(options) {
    return new Session(await this.#st.createSession(encOptions(options)));
  }
  async openSession(sessionId) {
    return new Session(await this.#st.openSession(str(sessionId, 'sessionId')));
  }
  /** Open a session as a shared writer: the lock is taken only for the
   *  moment of each write (waiting up to `busyTimeoutMs`), so any number of
   *  handles, here and in other processes, write one session. */
  async openShared(sessionId) {
    return new Session(await this.#st.openShared(str(sessionId, 'sessionId')));
  }
  /** The conversation named `conversationId` (any non-empty string of at most
   *  1,024 UTF-8 bytes) as a shared writer, created on first use. */
  async openConversation(conversationId) {
    return new Session(await this.#st.openConversation(str(conversationId, 'conversationId')));
  }
  /** Open the session, creating it with this id if it does not exist yet. */
  async openOrCreateSession(sessionId) {
    return new Session(await this.#st.openOrCreateSession(str(sessionId, 'sessionId')));
  }
  async forkSession(sourceId, options) {
    return new Session(await this.#st.forkSession(str(sourceId, 'sourceId'), encOptions(options)));
  }
  /** Connect to the PostgreSQL store this project's sessions are shared
   *  through (docs/DISTRIBUTED.md). Options as the core's RemoteOptions:
   *  `url` (a libpq connection string; default $SESSIONKIT_REMOTE),
   *  `project`, `holder`, `leaseTtlMs`; unknown keys reject. */
  async connectRemote(options) {
    return new Remote(await this.#st.connectRemote(encOptions(options)));
  }

  // -- settings, instruction files, memory (docs/SETTINGS.md) ----------------

  /** The effective settings: `values`, the `origins` of each dotted key and
   *  each source's state (a malformed file is reported there, not thrown).
   *  Options as the core's SettingsOptions: `sources`, `overrides`. */
  async settings(options) {
    return parse(await this.#st.settings(encOptions(options)));
  }
  /** Set a dotted key in the file of `source` (user, project or local);
   *  `null` is written as it is and removes the key from the sources below. */
  async setSetting(source, key, value) {
    return parse(await this.#st.setSetting(str(source, 'source'), str(key, 'key'), enc(value, 'value')));
  }
  /** Remove a dotted key from the file of `source`. */
  async unsetSetting(source, key) {
    return parse(await this.#st.unsetSetting(str(source, 'source'), str(key, 'key')));
  }
  /** Rewrite the file of `source` in the current shape, its older original
   *  kept as `<file>.v<N>.bak`; UNSUPPORTED for a file of a newer version. */
  async migrateSettings(source) {
    return parse(await this.#st.migrateSettings(str(source, 'source')));
  }
  /** The instruction files that apply to `dir`, in order, with their `@path`
   *  includes; what was not read is in `problems`. Options as the core's
   *  InstructionOptions: `names`, `maxIncludeDepth`. */
  async instructions(dir, options) {
    return parse(await this.#st.instructions(str(dir, 'dir'), encOptions(options)));
  }
  /** Add a memory `<name>.md` (CONFLICT if the name is taken). */
  async addMemory(name, content, options) {
    return parse(await this.#st.memoryWrite(memoryScope(options), str(name, 'name'), str(content, 'content'), false));
  }
  /** Replace a memory's text (NOT_FOUND if there is none). */
  async updateMemory(name, content, options) {
    return parse(await this.#st.memoryWrite(memoryScope(options), str(name, 'name'), str(content, 'content'), true));
  }
  /** Delete a memory (NOT_FOUND if there is none). */
  async deleteMemory(name, options) {
    await this.#st.memoryDelete(memoryScope(options), str(name, 'name'));
  }
  /** The memories of the scope (`project`, the default, or `user`), by name. */
  /** The directory holding the memories of `options.scope` (no disk access). */
  memoryPath(options) {
    return this.#st.memoryPath(memoryScope(options));
  }
  async listMemories(options) {
    return parse(await this.#st.memoryList(memoryScope(options)));
  }
  /** A memory's text. */
  async readMemory(name, options) {
    return this.#st.memoryRead(memoryScope(options), str(name, 'name'));
  }

  // -- LangGraph checkpoints (docs/FORMAT.md §24; sessionkit/langgraph) -------
  // A thread is a session; its checkpoints, pending writes and channel values
  // are records of that session's log. Values are a serializer's
  // `{ type, bytes }`, stored as they are; what is kept, replaced and found
  // is the core's (see each method).

  /** Store a checkpoint (an `id` that exists is replaced): `checkpoint`
   *  without its channel values, its `metadata`, its `parentId`, and for
   *  each channel of the new versions its `{ channel, version, value }`
   *  (`value` null: the channel is empty at that version). */
  async checkpointPut(threadId, options) {
    const t = str(threadId, 'threadId');
    const o = object(options, 'options');
    if (!Array.isArray(o.values)) throw invalid(`argument \`options.values\` must be an array, not ${describe(o.values)}`);
    const buffers = [];
    const values = o.values.map((v, i) => {
      const at = `options.values[${i}]`;
      object(v, at);
      return {
        channel: str(v.channel, `${at}.channel`),
        version: channelVersion(v.version, `${at}.version`),
        value: v.value === undefined || v.value === null ? null : typed(v.value, `${at}.value`, buffers),
      };
    });
    object(o.checkpoint, 'options.checkpoint');
    object(o.metadata, 'options.metadata');
    const put = enc(
      { ns: str(o.ns, 'options.ns'), checkpoint: o.checkpoint, metadata: o.metadata, parentId: optStr(o.parentId, 'options.parentId'), values },
      'options',
    );
    await this.#st.checkpointPut(t, put, buffers);
  }
  /** Store a task's writes on a checkpoint. Their `idx` is the core's:
   *  LangGraph's special channels' fixed negative index, else the position
   *  in `writes`; a (task, idx >= 0) already stored is kept. */
  async checkpointPutWrites(threadId, options) {
    const t = str(threadId, 'threadId');
    const o = object(options, 'options');
    if (!Array.isArray(o.writes)) throw invalid(`argument \`options.writes\` must be an array, not ${describe(o.writes)}`);
    const buffers = [];
    const writes = o.writes.map((w, i) => {
      const at = `options.writes[${i}]`;
      object(w, at);
      return { channel: str(w.channel, `${at}.channel`), value: typed(w.value, `${at}.value`, buffers) };
    });
    await this.#st.checkpointPutWrites(
      t,
      str(o.ns, 'options.ns'),
      str(o.checkpointId, 'options.checkpointId'),
      str(o.taskId, 'options.taskId'),
      str(o.taskPath ?? '', 'options.taskPath'),
      JSON.stringify(writes),
      buffers,
    );
  }
  /** The checkpoint `checkpointId` of the thread's namespace `ns` (the
   *  latest when null), its values and pending writes; null when none. */
  async checkpointGet(threadId, ns, checkpointId) {
    const { json, buffers } = await this.#st.checkpointGet(str(threadId, 'threadId'), str(ns, 'ns'), optStr(checkpointId, 'checkpointId'));
    const r = parse(json);
    return r === null ? null : storedRecord(r, buffers);
  }
  /** Checkpoints newest first: of one thread or, without `threadId`, of
   *  every thread of the store; of one namespace or all; `filter` keeps those
   *  whose metadata has each key equal; `before` those with a smaller id. */
  async checkpointList(options) {
    const o = options === undefined || options === null ? {} : object(options, 'options');
    const query = {
      threadId: optStr(o.threadId, 'options.threadId'),
      ns: optStr(o.ns, 'options.ns'),
      checkpointId: optStr(o.checkpointId, 'options.checkpointId'),
      filter: o.filter === undefined || o.filter === null ? null : object(o.filter, 'options.filter'),
      before: optStr(o.before, 'options.before'),
      limit: o.limit === undefined || o.limit === null ? null : count(o.limit, 'options.limit'),
    };
    const { json, buffers } = await this.#st.checkpointList(enc(query, 'options'));
    return parse(json).map((r) => storedRecord(r, buffers));
  }
  /** Move the thread's session to the trash (restorable until purged). */
  /** The checkpoints session `sessionId` holds (a checkpointer's thread),
   *  without their values, oldest first in each namespace. */
  async checkpointSummaries(sessionId) {
    return parse(await this.#st.checkpointSummaries(str(sessionId, 'sessionId')));
  }
  async checkpointDeleteThread(threadId) {
    await this.#st.checkpointDeleteThread(str(threadId, 'threadId'));
  }
  /** Copy every checkpoint, write and value of thread `source` into `target`. */
  async checkpointCopyThread(source, target) {
    await this.#st.checkpointCopyThread(str(source, 'source'), str(target, 'target'));
  }
  /** `keep_latest`: keep each namespace's newest checkpoint (and its
   *  writes); `delete`: remove every checkpoint of the threads. */
  async checkpointPrune(threadIds, strategy) {
    await this.#st.checkpointPrune(strings(threadIds, 'threadIds'), str(strategy, 'strategy'));
  }
  /** Remove, in every thread, the checkpoints whose `metadata.run_id` is
   *  one of `runIds`, with their writes. */
  async checkpointDeleteForRuns(runIds) {
    await this.#st.checkpointDeleteForRuns(strings(runIds, 'runIds'));
  }
  /** Per channel, the writes on the path to the checkpoint (oldest first)
   *  since the nearest ancestor that stored a value, and that value as
   *  `seed` (LangGraph's getDeltaChannelHistory). */
  async checkpointDeltaHistory(threadId, ns, checkpointId, channels) {
    const { json, buffers } = await this.#st.checkpointDeltaHistory(
      str(threadId, 'threadId'),
      str(ns, 'ns'),
      optStr(checkpointId, 'checkpointId'),
      strings(channels, 'channels'),
    );
    const history = parse(json);
    for (const h of Object.values(history)) {
      h.writes = h.writes.map((w) => storedWrite(w, buffers));
      if (h.seed !== undefined && h.seed !== null) h.seed = storedValue(h.seed, buffers);
    }
    return history;
  }
}

function object(v, name) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw invalid(`argument \`${name}\` must be an object, not ${describe(v)}`);
  }
  return v;
}

function strings(v, name) {
  if (!Array.isArray(v)) throw invalid(`argument \`${name}\` must be an array of strings, not ${describe(v)}`);
  v.forEach((s, i) => str(s, `${name}[${i}]`));
  return v;
}

/** A channel version: LangGraph's are numbers or strings. */
function channelVersion(v, name) {
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return v;
  throw invalid(`argument \`${name}\` must be a string or a finite number, not ${describe(v)}`);
}

/** A serializer's `{ type, bytes }` as it crosses: its bytes go to
 *  `buffers` (not copied) and the JSON names them by index. */
function typed(v, name, buffers) {
  object(v, name);
  const type = str(v.type, `${name}.type`);
  const b = v.bytes;
  if (!(b instanceof Uint8Array)) throw invalid(`argument \`${name}.bytes\` must be a Uint8Array, not ${describe(b)}`);
  buffers.push(Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  return { type, index: buffers.length - 1 };
}

// What the addon returns for checkpoints is JSON text whose values name
// their bytes by index in `buffers`: these put each value's bytes in place.
function storedValue(v, buffers) {
  return { type: v.type, bytes: buffers[v.index] };
}

function storedWrite(w, buffers) {
  return { ...w, value: storedValue(w.value, buffers) };
}

function storedRecord(r, buffers) {
  const values = {};
  for (const [channel, v] of Object.entries(r.values)) values[channel] = storedValue(v, buffers);
  return {
    ...r,
    values,
    writes: r.writes.map((w) => storedWrite(w, buffers)),
    pendingSends: r.pendingSends.map((v) => storedValue(v, buffers)),
  };
}

/** The next version of a channel after `current` (undefined or null: the
 *  first), as the core makes them: `<counter, 32 digits>.<16 random digits>`. */
function nextChannelVersion(current) {
  return native.nextChannelVersion(current === undefined || current === null ? null : JSON.stringify(channelVersion(current, 'current')));
}

const nativeStoreClass = native.NativeStore;

/** The library's version. */
function version() {
  return native.version();
}

/** The directory name of a project under `<home>/projects/`. */
function conversationSessionId(conversationId) {
  return native.conversationSessionId(str(conversationId, 'conversationId'));
}

function projectCode(canonicalRoot) {
  return native.projectCode(str(canonicalRoot, 'canonicalRoot'));
}

/** Import Claude Code, Codex or seed-style transcripts (files, or directories
 *  searched for `*.jsonl`): options as the core's ImportOptions (`from`,
 *  `project`, `store`). Resolves to the import report. */
async function importTranscripts(paths, options) {
  return parse(await native.importTranscripts(encPaths(paths), encOptions(options)));
}

/** The sessions of every project in the home the store options name. */
async function listAllSessions(options) {
  return parse(await native.listAllSessions(encOptions(options)));
}

/** A diagnostic: a Promise settled by a task that does nothing on the libuv
 *  pool, i.e. the round trip every call that touches disk pays on top of its
 *  work. */
function poolRoundTrip() {
  return native.poolRoundTrip();
}

module.exports = {
  Store,
  Remote,
  Follower,
  BackgroundPush,
  Session,
  SessionView,
  Subagent,
  ErrorCode,
  errorKinds,
  SessionkitError: errors.SessionkitError,
  NotFoundError: errors.NotFoundError,
  BusyError: errors.BusyError,
  ConflictError: errors.ConflictError,
  InvalidInputError: errors.InvalidInputError,
  CorruptError: errors.CorruptError,
  IoError: errors.IoError,
  UnsupportedError: errors.UnsupportedError,
  InternalError: errors.InternalError,
  enums,
  defaults,
  version,
  projectCode,
  conversationSessionId,
  poolRoundTrip,
  importTranscripts,
  listAllSessions,
  nextChannelVersion,
};
