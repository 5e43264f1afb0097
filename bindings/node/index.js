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
// Errors: every rejection is an `Error` with `code` (the core's error kind
// name: NOT_FOUND, BUSY, CONFLICT, INVALID_INPUT, CORRUPT, IO, UNSUPPORTED,
// INTERNAL) and `errno` (the OS error number, or null).

const path = require('node:path');

let native;
try {
  native = require('./sessionkit.node');
} catch (e) {
  const err = new Error(
    `sessionkit: the native addon ${path.join(__dirname, 'sessionkit.node')} is missing or ` +
      `does not load (build it with \`npm run build\` in ${__dirname}): ${e.message}`,
  );
  err.code = 'INTERNAL';
  err.errno = null;
  throw err;
}

/** The core's error kinds: `{ code, name, description }`, in number order. */
const errorKinds = Object.freeze(
  JSON.parse(native.errorKinds()).map(([code, name, description]) =>
    Object.freeze({ code, name, description }),
  ),
);
/** The error codes by name (`ErrorCode.BUSY === 'BUSY'`). */
const ErrorCode = Object.freeze(Object.fromEntries(errorKinds.map((k) => [k.name, k.name])));

function invalid(message) {
  const e = new Error(message);
  e.code = ErrorCode.INVALID_INPUT;
  e.errno = null;
  return e;
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

function modelOptions(options) {
  return encOptions(options);
}

const parse = JSON.parse;
const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

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
    return parse(await this.#v.activePath());
  }
  async uiView() {
    return parse(await this.#v.uiView());
  }
  async modelView(options) {
    return parse(await this.#v.modelView(modelOptions(options)));
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

/** A subagent's sidechain open for writing. */
class Subagent {
  #a;
  constructor(a) {
    this.#a = a;
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
  async close() {
    await this.#a.close();
  }
  [asyncDispose]() {
    return this.close();
  }
  async append(message) {
    return parse(await this.#a.append(encObject(message, 'message')));
  }
  async appendBatch(messages) {
    return parse(await this.#a.appendBatch(encArray(messages, 'messages')));
  }
  async finish(result, failed = false) {
    await this.#a.finish(enc(result, 'result'), bool(failed, 'failed'));
  }
  async read() {
    return new SessionView(await this.#a.read());
  }
}

/** One session open for writing; it holds the session's writer lock until
 *  `close()` (a second writer, in this process or another, gets BUSY). */
class Session {
  #s;
  constructor(s) {
    this.#s = s;
  }
  get id() {
    return this.#s.id;
  }
  get closed() {
    return this.#s.closed;
  }
  /** Flush the index entry and release the lock; waits for calls in flight. */
  async close() {
    await this.#s.close();
  }
  [asyncDispose]() {
    return this.close();
  }
  info() {
    return parse(this.#s.info());
  }
  head() {
    return this.#s.head();
  }
  fsyncCount() {
    return this.#s.fsyncCount();
  }
  async lastSnapshot() {
    return this.#s.lastSnapshot();
  }
  async append(message) {
    return parse(await this.#s.append(encObject(message, 'message')));
  }
  async appendBatch(messages) {
    return parse(await this.#s.appendBatch(encArray(messages, 'messages')));
  }
  async updateState(state) {
    return parse(await this.#s.updateState(encObject(state, 'state')));
  }
  async patchMessage(messageId, patch) {
    await this.#s.patchMessage(str(messageId, 'messageId'), encObject(patch, 'patch'));
  }
  async setHead(messageId) {
    await this.#s.setHead(optStr(messageId, 'messageId'));
  }
  async resumeAt(messageId) {
    await this.#s.resumeAt(str(messageId, 'messageId'));
  }
  async rename(title) {
    return parse(await this.#s.rename(str(title, 'title')));
  }
  async sync() {
    await this.#s.sync();
  }
  async flushIndex() {
    await this.#s.flushIndex();
  }
  async read() {
    return new SessionView(await this.#s.read());
  }
  async activePath() {
    return parse(await this.#s.activePath());
  }
  async modelView(options) {
    return parse(await this.#s.modelView(modelOptions(options)));
  }
  async selectCompaction(policy) {
    return parse(await this.#s.selectCompaction(encObject(policy, 'policy')));
  }
  async applyCompaction(replaces, summary) {
    if (!Array.isArray(replaces)) {
      throw invalid(`argument \`replaces\` must be an array of message ids, not ${describe(replaces)}`);
    }
    return parse(await this.#s.applyCompaction(enc(replaces, 'replaces'), enc(summary, 'summary')));
  }
  async spawnSubagent(agentId, meta) {
    const m = meta === undefined || meta === null ? null : encObject(meta, 'meta');
    return new Subagent(await this.#s.spawnSubagent(optStr(agentId, 'agentId'), m));
  }
  async openSubagent(agentId) {
    return new Subagent(await this.#s.openSubagent(str(agentId, 'agentId')));
  }
  async userInput(message) {
    return parse(await this.#s.userInput(encObject(message, 'message')));
  }
  async trackRead(paths) {
    await this.#s.trackRead(encPaths(paths));
  }
  async beforeEdit(paths) {
    return this.#s.beforeEdit(encPaths(paths));
  }
  async afterEdit(paths) {
    return this.#s.afterEdit(encPaths(paths));
  }
  async trackedFiles() {
    return this.#s.trackedFiles();
  }
  async externalChanges(paths) {
    return parse(await this.#s.externalChanges(encPaths(paths)));
  }
  async ensureUnchanged(paths) {
    await this.#s.ensureUnchanged(encPaths(paths));
  }
  async undoCandidates() {
    return parse(await this.#s.undoCandidates());
  }
  async rewindPlan(messageId) {
    return parse(await this.#s.rewindPlan(str(messageId, 'messageId')));
  }
  async rewindPreview(messageId, mode) {
    return parse(await this.#s.rewindPreview(str(messageId, 'messageId'), str(mode, 'mode')));
  }
  async rewind(messageId, mode, { force = false } = {}) {
    return parse(await this.#s.rewind(str(messageId, 'messageId'), str(mode, 'mode'), bool(force, 'force')));
  }
  async snapshotPlan(snapshot) {
    return parse(await this.#s.snapshotPlan(str(snapshot, 'snapshot')));
  }
  async restoreSnapshot(snapshot, { force = false } = {}) {
    return parse(await this.#s.restoreSnapshot(str(snapshot, 'snapshot'), bool(force, 'force')));
  }
  /** The history as OpenAI Responses items (the last `limit` of them). */
  async responsesItems({ limit, modelView = false } = {}) {
    if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && limit >= 0 && limit <= 0xffffffff)) {
      throw invalid(`argument \`limit\` must be a non-negative integer, not ${String(limit)}`);
    }
    return parse(await this.#s.responsesItems(limit ?? null, bool(modelView, 'modelView')));
  }
  async appendResponsesItems(items) {
    await this.#s.appendResponsesItems(encArray(items, 'items'));
  }
  /** The last item, with the head moved back before it (nothing is rewritten). */
  async popResponsesItem() {
    const t = await this.#s.popResponsesItem();
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
   *  `maxSessions`, `blobThreshold`, `maxRecordBytes`; unknown keys reject. */
  static async open(projectRoot = '.', options) {
    const opts = encOptions(options);
    return new Store(await native.openStore(str(projectRoot, 'projectRoot'), opts));
  }
  get closed() {
    return this.#st.closed;
  }
  get projectCode() {
    return this.#st.projectCode;
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
  async readSession(sessionId) {
    return new SessionView(await this.#st.readSession(str(sessionId, 'sessionId')));
  }
  async modelView(sessionId, options) {
    return parse(await this.#st.modelView(str(sessionId, 'sessionId'), modelOptions(options)));
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
  async sessionIds() {
    return this.#st.sessionIds();
  }
  logPath(sessionId) {
    return this.#st.logPath(str(sessionId, 'sessionId'));
  }
  async exportSession(sessionId, format) {
    return this.#st.exportSession(str(sessionId, 'sessionId'), str(format, 'format'));
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
  /** Open the session, creating it with this id if it does not exist yet. */
  async openOrCreateSession(sessionId) {
    return new Session(await this.#st.openOrCreateSession(str(sessionId, 'sessionId')));
  }
  async forkSession(sourceId, options) {
    return new Session(await this.#st.forkSession(str(sourceId, 'sourceId'), encOptions(options)));
  }
}

const nativeStoreClass = native.NativeStore;

/** The library's version. */
function version() {
  return native.version();
}

/** The directory name of a project under `<home>/projects/`. */
function projectCode(canonicalRoot) {
  return native.projectCode(str(canonicalRoot, 'canonicalRoot'));
}

module.exports = { Store, Session, SessionView, Subagent, ErrorCode, errorKinds, version, projectCode };
