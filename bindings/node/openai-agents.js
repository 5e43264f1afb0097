'use strict';
// `sessionkit/openai-agents`: a session of the OpenAI Agents SDK for
// JavaScript (`@openai/agents`, an optional peer dependency) kept in a
// sessionkit store. Items are stored losslessly as sessionkit messages by the
// core's Responses-item operations, the same way the Python package's adapter
// stores them, so either language resumes the other's sessions.
//
// - `popItem` moves the head back before the last item; it rewrites nothing.
// - `clearSession` empties what `getItems` returns by moving the head to the
//   root: the items stay recoverable in the log (the store's readers and the
//   CLI see them) until the session is deleted; `erase()` deletes them for good.
// - Any number of SessionkitSessions, here and in other processes, may work on
//   one conversation, as with the SDK's own stores: each is a shared writer
//   (`Store.openConversation`) that takes the session's lock only for the
//   moment of each write (waiting up to the store's busy timeout, 5 s, before
//   rejecting with BUSY) and continues from what the others wrote; `popItem`
//   and `clearSession` act on the newest item whoever added it. Any
//   `sessionId` string (up to 1,024 UTF-8 bytes) is accepted and returned by
//   `getSessionId`; the store files it under a file-safe session id. Nothing
//   is ever pruned by the adapter. `close()` twice does nothing; `await using` closes it too
//   (`Symbol.asyncDispose`, where the runtime has explicit resource management).
// - `getItems(limit)` follows the SDK's own MemorySession: no limit (undefined
//   or null), every item; a limit <= 0, none; else the latest `limit`, oldest
//   first. The JS SDK (0.20) has no session settings (no default limit on the
//   Session interface, no `sessionSettings` option), so neither has this class.
// - `replaceHistoryWithCompaction` (the SDK's compaction hook) is sessionkit's
//   compaction: the items are appended and a compaction record makes the
//   leading `compaction` item the summary of everything before it, in one
//   write. The model view starts there; the originals stay on the active path
//   (the SDK trims what `getItems` returns to the latest compaction item itself).
// The SDK's optional history-transaction interface (`applyHistoryTransaction`)
// is not implemented: it needs an operation id stored atomically with the
// change and a change that is all or nothing on a crash, which the log does
// not give (see the README); the runner falls back to the plain interface.

const { Store } = require('./index.js');

class SessionkitSession {
  #opening;
  #store = null;
  #session = null;
  #sessionId = null;
  #modelView;

  /**
   * @param {{ sessionId?: string, project?: string, home?: string,
   *           durability?: 'never' | 'onSync' | 'always', modelView?: boolean,
   *           store?: import('./index.js').Store }} [options]
   * A given `sessionId` (any string) that does not exist yet is created;
   * without one, a new session is created. The store is opened on first use.
   */
  constructor({ sessionId, project = '.', home, durability, modelView = false, store } = {}) {
    this.#modelView = modelView;
    this.#opening = (async () => {
      this.#store = store ?? (await Store.open(project, { home, durability }));
      if (sessionId === undefined || sessionId === null) {
        // A fresh id from the core, then shared like any other.
        const fresh = await this.#store.createSession();
        sessionId = fresh.id;
        await fresh.close();
      }
      this.#sessionId = sessionId;
      this.#session = await this.#store.openConversation(sessionId);
      return this.#session;
    })();
    // Surface an open failure on the first call, not as an unhandled rejection.
    this.#opening.catch(() => {});
  }

  /** The sessionkit session (open for writing). */
  async session() {
    return this.#opening;
  }

  /** The sessionkit store holding the session. */
  async store() {
    await this.#opening;
    return this.#store;
  }

  async getSessionId() {
    await this.#opening;
    return this.#sessionId;
  }

  /** The stored items, oldest first: the last `limit` of them when given
   *  (none when `limit <= 0`, as the SDK's MemorySession). */
  async getItems(limit) {
    const s = await this.#opening;
    const modelView = this.#modelView;
    if (limit === undefined || limit === null) return s.responsesItems({ modelView });
    if (limit <= 0) return [];
    // MemorySession slices from `length - limit`: a fractional limit counts up,
    // and NaN or a limit past any length means every item.
    const n = Math.ceil(limit);
    if (!(n > 0 && n <= 0xffffffff)) return s.responsesItems({ modelView });
    return s.responsesItems({ limit: n, modelView });
  }

  async addItems(items) {
    await (await this.#opening).appendResponsesItems(items);
  }

  /** The SDK's compaction hook: `items` (a `compaction` item, then the items
   *  kept after it) become the history the model sees, in one write; the
   *  originals stay in the log, marked compacted. */
  async replaceHistoryWithCompaction(items) {
    await (await this.#opening).replaceResponsesItemsWithCompaction(items);
  }

  /** The last item, with the head moved back before it (nothing is rewritten). */
  async popItem() {
    return (await this.#opening).popResponsesItem();
  }

  /** Empty what `getItems` returns; the items stay recoverable in the log
   *  until the session is deleted (see `erase`). */
  async clearSession() {
    await (await this.#opening).setHead(null);
  }

  /** Delete the session's log, sidecars and file history for good, and start
   *  it again empty under the same id. */
  async erase() {
    const old = await this.#opening;
    this.#opening = old.erase().then((s) => (this.#session = s));
    await this.#opening;
  }

  /** Go back to before the `turns`-th latest user input: the turn and
   *  everything after it leave the history (they stay in the log). */
  async rewind(turns = 1) {
    await (await this.#opening).rewindTurns(turns, 'conversation');
  }

  /** Release the writer lock. Closing twice does nothing. */
  async close() {
    const s = await this.#opening.catch(() => null);
    if (s) await s.close();
  }

  [Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')]() {
    return this.close();
  }
}

module.exports = { SessionkitSession };
