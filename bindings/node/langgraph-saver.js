'use strict';
// The class behind `sessionkit/langgraph`: a LangGraph checkpointer
// (`BaseCheckpointSaver` of `@langchain/langgraph-checkpoint`, an optional
// peer dependency) kept in a sessionkit store.
//
// It only converts. A thread is a sessionkit session; its checkpoints, pending
// writes and channel values are records of that session's log, and which
// record is kept, replaced, found, listed or ordered is the core's (the Store's
// `checkpoint*` methods, the same the Python saver calls). Here: a
// RunnableConfig becomes those calls' arguments and their records become
// CheckpointTuples; channel values and writes cross as the saver's serde's
// `(type, bytes)` (`dumpsTyped` / `loadsTyped`); metadata is stored as the
// JSON of its serde form and filtered on that, as LangGraph's PostgresSaver
// stores it.
//
// The class is made once per module system (langgraph.js for require,
// langgraph.mjs for import), each extending that system's copy of
// `@langchain/langgraph-checkpoint`: its default serde then revives LangChain
// objects (messages) as the classes the rest of the program uses.

const { Store, nextChannelVersion, InvalidInputError, UnsupportedError } = require('./index.js');

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose');

/** The SessionkitSaver class over `checkpoint`, a module namespace of
 *  `@langchain/langgraph-checkpoint`. */
function defineSessionkitSaver(checkpoint) {
  const { BaseCheckpointSaver, TASKS, getCheckpointId, maxChannelVersion } = checkpoint;

  class SessionkitSaver extends BaseCheckpointSaver {
    #opening;
    #owned;

    /**
     * @param {{ project?: string, home?: string,
     *           durability?: 'never' | 'onSync' | 'always',
     *           store?: import('./index.js').Store,
     *           serde?: import('@langchain/langgraph-checkpoint').SerializerProtocol }} [options]
     * The store of `project` (default '.') under `home` is opened on first
     * use, unless an open `store` is given (then `close()` leaves it open).
     */
    constructor({ project = '.', home, durability, store, serde } = {}) {
      super(serde);
      this.#owned = store === undefined || store === null;
      this.#opening = this.#owned ? Store.open(project, { home, durability }) : Promise.resolve(store);
      // Surface an open failure on the first call, not as an unhandled rejection.
      this.#opening.catch(() => {});
    }

    /** The sessionkit store holding the threads. */
    async store() {
      return this.#opening;
    }

    async getTuple(config) {
      const c = config.configurable ?? {};
      if (c.thread_id === undefined || c.thread_id === null) return undefined;
      const store = await this.#opening;
      const r = await store.checkpointGet(c.thread_id, c.checkpoint_ns ?? '', getCheckpointId(config) || null);
      return r === null ? undefined : this.#tuple(r);
    }

    async *list(config, options) {
      const c = config?.configurable ?? {};
      const { filter, before, limit } = options ?? {};
      const store = await this.#opening;
      const records = await store.checkpointList({
        // No thread (or an empty id, as the JS savers read it): every thread.
        threadId: c.thread_id || null,
        ns: c.checkpoint_ns ?? null,
        checkpointId: c.checkpoint_id || null,
        filter: filter ?? null,
        before: before?.configurable?.checkpoint_id ?? null,
        limit: limit ?? null,
      });
      for (const r of records) yield await this.#tuple(r);
    }

    async put(config, checkpoint, metadata, newVersions) {
      const c = required(config, 'put a checkpoint');
      const { channel_values: channelValues = {}, ...rest } = checkpoint;
      const values = await Promise.all(
        Object.entries(newVersions).map(async ([channel, version]) => ({
          channel,
          version,
          value: Object.prototype.hasOwnProperty.call(channelValues, channel)
            ? await this.#dump(channelValues[channel])
            : null,
        })),
      );
      const store = await this.#opening;
      const ns = c.checkpoint_ns ?? '';
      await store.checkpointPut(c.thread_id, {
        ns,
        checkpoint: rest,
        metadata: await this.#dumpMetadata(metadata),
        parentId: c.checkpoint_id || null,
        values,
      });
      return { configurable: { thread_id: c.thread_id, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
    }

    async putWrites(config, writes, taskId, taskPath) {
      const c = required(config, 'put writes');
      if (c.checkpoint_id === undefined || c.checkpoint_id === null) {
        throw new InvalidInputError('sessionkit: cannot put writes: config.configurable.checkpoint_id is missing');
      }
      const dumped = await Promise.all(
        writes.map(async ([channel, value]) => ({ channel, value: await this.#dump(value) })),
      );
      const store = await this.#opening;
      await store.checkpointPutWrites(c.thread_id, {
        ns: c.checkpoint_ns ?? '',
        checkpointId: c.checkpoint_id,
        taskId,
        taskPath: taskPath ?? '',
        writes: dumped,
      });
    }

    /** Move the thread's session to sessionkit's trash: gone from the
     *  saver, restorable with `store.restoreSession` until the trash is purged. */
    async deleteThread(threadId) {
      await (await this.#opening).checkpointDeleteThread(threadId);
    }

    async getDeltaChannelHistory({ config, channels }) {
      const c = config.configurable ?? {};
      const store = await this.#opening;
      const history = await store.checkpointDeltaHistory(
        c.thread_id,
        c.checkpoint_ns ?? '',
        getCheckpointId(config) || null,
        channels,
      );
      const out = {};
      for (const [channel, h] of Object.entries(history)) {
        out[channel] = { writes: await Promise.all(h.writes.map((w) => this.#write(w))) };
        if (h.seed !== undefined && h.seed !== null) out[channel].seed = await this.#load(h.seed);
      }
      return out;
    }

    /** The core's next version: `<counter>.<random digits>`, the random part
     *  keeping versions made on two branches of a thread apart (a value is
     *  stored per channel version). As a number, the type LangGraph JS's
     *  `compile()` takes; a thread whose versions are strings (as the Python
     *  saver writes them) goes on with strings. */
    getNextVersion(current) {
      const next = nextChannelVersion(current);
      return typeof current === 'string' ? next : Number(next);
    }

    /** Close the store (when this saver opened it). Closing twice does nothing. */
    async close() {
      const store = await this.#opening.catch(() => null);
      if (store && this.#owned) await store.close();
    }

    [asyncDispose]() {
      return this.close();
    }

    #dump(value) {
      return this.serde.dumpsTyped(value).then(([type, bytes]) => ({ type, bytes }));
    }

    #load(value) {
      return this.serde.loadsTyped(value.type, value.bytes);
    }

    async #write(w) {
      return [w.taskId, w.channel, await this.#load(w.value)];
    }

    /** Metadata as the JSON of its serde form, so that the core can filter
     *  on it (as LangGraph's PostgresSaver keeps it). */
    async #dumpMetadata(metadata) {
      const [type, bytes] = await this.serde.dumpsTyped(metadata);
      if (type !== 'json') {
        throw new UnsupportedError(`sessionkit: the serde dumps metadata as ${JSON.stringify(type)}: the saver stores metadata as JSON`);
      }
      return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    }

    async #tuple(r) {
      const config = { thread_id: r.threadId, checkpoint_ns: r.ns };
      const values = {};
      await Promise.all(
        Object.entries(r.values).map(async ([channel, v]) => {
          values[channel] = await this.#load(v);
        }),
      );
      const cp = { ...r.checkpoint, channel_values: values };
      if (r.pendingSends && r.pendingSends.length > 0) {
        // A checkpoint of format v < 4 kept the sends of its parent's tasks
        // as writes: they become the tasks channel's value, as in v4.
        cp.channel_values[TASKS] = await Promise.all(r.pendingSends.map((v) => this.#load(v)));
        const versions = Object.values(cp.channel_versions ?? {});
        cp.channel_versions = {
          ...cp.channel_versions,
          [TASKS]: versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined),
        };
      }
      const tuple = {
        config: { configurable: { ...config, checkpoint_id: r.id } },
        checkpoint: cp,
        metadata: await this.serde.loadsTyped('json', JSON.stringify(r.metadata)),
        pendingWrites: await Promise.all(r.writes.map((w) => this.#write(w))),
      };
      if (r.parentId !== null && r.parentId !== undefined) {
        tuple.parentConfig = { configurable: { ...config, checkpoint_id: r.parentId } };
      }
      return tuple;
    }
  }

  return SessionkitSaver;
}

/** `config.configurable`, which must name a thread. */
function required(config, what) {
  const c = config?.configurable;
  if (c === undefined || c === null) {
    throw new InvalidInputError(`sessionkit: cannot ${what}: the config has no \`configurable\``);
  }
  if (c.thread_id === undefined || c.thread_id === null) {
    throw new InvalidInputError(
      `sessionkit: cannot ${what}: config.configurable.thread_id is missing ` +
        '(run the graph with { configurable: { thread_id } })',
    );
  }
  return c;
}

module.exports = { defineSessionkitSaver };
