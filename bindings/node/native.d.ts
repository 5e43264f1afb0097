export declare class NativeBackgroundPush {
  /** Bytes of the session's log the remote holds, as of the last push. */
  get pushed(): number
  /** Push what the log holds now; the report as JSON. */
  flush(): Promise<string>
  /** Push the rest, give the lease back, end (once); the report as JSON. */
  stop(): Promise<string>
}

/**
 * A followed session. Its waits run on a thread of its own, one at a time in
 * call order, and settle their promises from there: a waiting follower holds
 * no thread of the libuv pool, and `offset` is an atomic.
 */
export declare class NativeFollower {
  /** Where the next lines start, in bytes of the log. */
  get offset(): number
  get closed(): boolean
  /** The number the next `nextLines` will have (what `cancel` takes). */
  get nextWait(): number
  /**
   * The lines pushed past the offset (each with its newline), waiting up
   * to `timeout_ms` for some; on the follower's own thread.
   */
  nextLines(timeoutMs: number): Promise<Buffer[]>
  /**
   * End the waits numbered up to `wait` (within half a second): they resolve to
   * no lines, and lines they read meanwhile go to the next wait.
   */
  cancel(wait: number): void
  /**
   * End the follower: waits in flight resolve to no lines, later ones
   * reject; resolves once its thread has ended and its connection closed.
   */
  close(): Promise<void>
}

/** The messages of one view (folded on the pool), not yet handed out. */
export declare class NativePages {
  /** How many messages the view has. */
  get length(): number
  /**
   * The next messages, of at most `max_bytes` of text (at least one
   * message, however long); `null` once all were handed out. A page is
   * either one JSON array text, or `{ text, spans }`: the part of the log
   * the messages were read from, handed over without a copy, and where
   * each message's JSON text is in it (`text.slice(spans[2i], spans[2i+1])`).
   */
  nextPage(maxBytes: number): Promise<string | { text: string, spans: Uint32Array } | null>
}

export declare class NativeRemote {
  get project(): string
  get holder(): string
  get closed(): boolean
  /**
   * Close the connection once the calls in flight are done (on the pool:
   * they may be waiting for the network); later calls reject. Followers
   * and background pushes have connections of their own and stay.
   */
  close(): Promise<void>
  schemaVersion(): Promise<number>
  list(): Promise<string>
  acquire(sessionId: string): Promise<string>
  renew(lease: string): Promise<string>
  release(lease: string): Promise<void>
  /** Push under `lease` (JSON), or, without one, take the lease for the push. */
  push(sessionId: string, lease?: string | undefined | null): Promise<string>
  /**
   * Follow a session as others push it, from byte `start` (default: where
   * the remote stands).
   */
  follow(sessionId: string, start?: number | undefined | null): Promise<NativeFollower>
  /**
   * Push a session in the background while this process writes it, every
   * `interval_ms` (the core's `Remote::push_in_background`).
   */
  pushInBackground(sessionId: string, intervalMs: number): Promise<NativeBackgroundPush>
  pull(sessionId: string): Promise<string>
}

export declare class NativeSession {
  /**
   * Flush the index entry and release the lock, on the pool (it waits for
   * calls in flight). Closing a closed session does nothing.
   */
  close(): Promise<void>
  /**
   * Delete the session for good and start it again under its id: this
   * handle is closed, the new one resolved.
   */
  erase(): Promise<NativeSession>
  get closed(): boolean
  get id(): string
  /** The session's info as JSON text (kept in memory). */
  info(): string
  head(): string | null
  get shared(): boolean
  fsyncCount(): number
  lastSnapshot(): Promise<string | null>
  append(message: string): Promise<string>
  appendBatch(messages: string): Promise<string>
  /**
   * Append groups of messages in one write (`groups`: each group's JSON
   * array text), each group checked by the core as if appended alone;
   * the core's result per group as JSON text (`[{"ok": [...]} |
   * {"error": {code, message, errno}}, ...]`).
   */
  appendGroups(groups: Array<string>): Promise<string>
  updateState(state: string): Promise<string>
  patchMessage(messageId: string, patch: string): Promise<void>
  setHead(messageId?: string | undefined | null): Promise<void>
  resumeAt(messageId: string): Promise<void>
  rename(title: string): Promise<string>
  sync(): Promise<void>
  flushIndex(): Promise<void>
  read(): Promise<NativeView>
  activePath(): Promise<NativePages>
  modelView(options?: string | undefined | null): Promise<NativePages>
  selectCompaction(policy: string): Promise<string>
  applyCompaction(replaces: string, summary: string): Promise<string>
  spawnSubagent(agentId?: string | undefined | null, meta?: string | undefined | null): Promise<NativeSubagent>
  openSubagent(agentId: string): Promise<NativeSubagent>
  userInput(message: string): Promise<string>
  trackRead(paths: string): Promise<void>
  beforeEdit(paths: string): Promise<string>
  afterEdit(paths: string): Promise<string>
  trackedFiles(): Promise<string[]>
  externalChanges(paths: string): Promise<string>
  ensureUnchanged(paths: string): Promise<void>
  undoCandidates(): Promise<string>
  rewindPlan(messageId: string): Promise<string>
  rewindPreview(messageId: string, mode: string): Promise<string>
  rewind(messageId: string, mode: string, force: boolean): Promise<string>
  rewindTurns(turns: number, mode: string, force: boolean): Promise<string>
  snapshotPlan(snapshot: string): Promise<string>
  restoreSnapshot(snapshot: string, force: boolean): Promise<string>
  /** The session as OpenAI Responses items (JSON text of an array). */
  responsesItems(limit?: number | undefined | null, modelView?: boolean | undefined | null): Promise<string>
  appendResponsesItems(items: string): Promise<void>
  /**
   * Make the items (a `compaction` item, then the items kept after it) the
   * history as the model sees it, the originals kept and marked compacted.
   */
  replaceResponsesItemsWithCompaction(items: string): Promise<void>
  /** The last item (JSON text) with the head moved back before it, or null. */
  popResponsesItem(): Promise<string | null>
}

export declare class NativeStore {
  /** `put`: `{ns, checkpoint, metadata, parentId, values: [{channel, version, value: {type, index} | null}]}`. */
  checkpointPut(threadId: string, put: string, values: Array<Buffer>): Promise<void>
  /** `putWrites`: `writes` is `[{channel, value: {type, index}}]`. */
  checkpointPutWrites(threadId: string, ns: string, checkpointId: string, taskId: string, taskPath: string, writes: string, values: Array<Buffer>): Promise<void>
  /** One checkpoint (`json` is `null` when there is none). */
  checkpointGet(threadId: string, ns: string, checkpointId?: string | undefined | null): Promise<StoredCheckpoints>
  /** `query`: `{threadId, ns, checkpointId, filter, before, limit}`, each optional. */
  checkpointList(query: string): Promise<StoredCheckpoints>
  /** The checkpoints a session holds, without their values (JSON text). */
  checkpointSummaries(sessionId: string): Promise<string>
  checkpointDeleteThread(threadId: string): Promise<void>
  checkpointCopyThread(source: string, target: string): Promise<void>
  checkpointPrune(threadIds: Array<string>, strategy: string): Promise<void>
  checkpointDeleteForRuns(runIds: Array<string>): Promise<void>
  /** `{[channel]: {writes, seed?}}` as JSON, values by buffer index. */
  checkpointDeltaHistory(threadId: string, ns: string, checkpointId: string | undefined | null, channels: Array<string>): Promise<StoredCheckpoints>
  /**
   * The effective settings (`options`: the core's SettingsOptions as
   * JSON), as JSON: a malformed source is reported in it, not rejected.
   */
  settings(options?: string | undefined | null): Promise<string>
  /** Set a dotted key (`value` as JSON text) in the file of `source`. */
  setSetting(source: string, key: string, value: string): Promise<string>
  unsetSetting(source: string, key: string): Promise<string>
  /** Rewrite the file of `source` in the current shape, backing up an older one. */
  migrateSettings(source: string): Promise<string>
  /**
   * The instruction files that apply to `dir` (`options`: the core's
   * InstructionOptions as JSON), as JSON.
   */
  instructions(dir: string, options?: string | undefined | null): Promise<string>
  /** Add a memory, or replace its text (`replace`), as the core's entry in JSON. */
  memoryWrite(scope: string, name: string, content: string, replace: boolean): Promise<string>
  memoryDelete(scope: string, name: string): Promise<void>
  memoryList(scope: string): Promise<string>
  memoryRead(scope: string, name: string): Promise<string>
  /** Forget the store; later calls reject. Sessions open from it stay open. */
  close(): void
  get closed(): boolean
  /** The store's info as JSON text (no disk access). */
  info(): string
  listSessions(): Promise<string>
  /**
   * A page of the listing, `{sessions, total}` as JSON; `options` is the
   * core's ListOptions as JSON.
   */
  listPage(options?: string | undefined | null): Promise<string>
  sessionEntry(sessionId: string): Promise<string>
  resolveSession(prefix: string): Promise<string>
  continueSession(): Promise<string>
  renameSession(sessionId: string, title: string): Promise<string>
  deleteSession(sessionId: string): Promise<void>
  listTrash(): Promise<string>
  restoreSession(sessionId: string): Promise<string>
  readSession(sessionId: string): Promise<NativeView>
  modelView(sessionId: string, options?: string | undefined | null): Promise<NativePages>
  listSubagents(sessionId: string): Promise<string>
  readSubagent(sessionId: string, agentId: string): Promise<NativeView>
  rebuildIndex(): Promise<string>
  gc(): Promise<string>
  fileHistorySizes(): Promise<string>
  checkFileHistory(): Promise<string>
  pruneOrphanFileHistory(): Promise<string>
  doctor(options?: string | undefined | null): Promise<string>
  /** Full-text search; `query` is the core's SearchQuery as JSON. */
  search(query: string): Promise<string>
  sessionIds(): Promise<string[]>
  /** Where a session's log is (no disk access; the id is validated). */
  logPath(sessionId: string): string
  /** The directory holding the memories of `scope` (no disk access). */
  memoryPath(scope: string): string
  exportSession(sessionId: string, format: string): Promise<string>
  /** `options`: the core's ExportToOptions as JSON; the result as JSON. */
  exportTo(sessionId: string, options: string): Promise<string>
  branchFileHistory(sessionId: string, snapshot: string): Promise<void>
  createSession(options?: string | undefined | null): Promise<NativeSession>
  openSession(sessionId: string): Promise<NativeSession>
  openOrCreateSession(sessionId: string): Promise<NativeSession>
  openShared(sessionId: string): Promise<NativeSession>
  openConversation(conversationId: string): Promise<NativeSession>
  forkSession(sourceId: string, options?: string | undefined | null): Promise<NativeSession>
  /**
   * Connect to the shared PostgreSQL store for this project; `options` is
   * the core's RemoteOptions as JSON.
   */
  connectRemote(options?: string | undefined | null): Promise<NativeRemote>
  /** The project's directory name under `<home>/projects/`. */
  get projectCode(): string
}

export declare class NativeSubagent {
  /** Release the sidechain's lock. Closing a closed subagent does nothing. */
  close(): Promise<void>
  get closed(): boolean
  get id(): string
  get sessionId(): string
  append(message: string): Promise<string>
  appendBatch(messages: string): Promise<string>
  /**
   * Append groups of messages in one write (`groups`: each group's JSON
   * array text), each group checked by the core as if appended alone;
   * the core's result per group as JSON text (`[{"ok": [...]} |
   * {"error": {code, message, errno}}, ...]`).
   */
  appendGroups(groups: Array<string>): Promise<string>
  finish(result: string, failed: boolean): Promise<void>
  read(): Promise<NativeView>
}

export declare class NativeView {
  info(): string
  records(): string
  activePath(): Promise<NativePages>
  uiView(): Promise<NativePages>
  modelView(options?: string | undefined | null): Promise<NativePages>
  message(messageId: string): Promise<string>
  resolveMessage(prefix: string): Promise<string>
  tree(): Promise<string>
  branches(): Promise<string>
}

/** The session id that holds the conversation `conversation_id` (FORMAT.md §3.3). */
export declare function conversationSessionId(conversationId: string): string

/**
 * The core's table of enum names and defaults as JSON text (`{"enums":
 * {...}, "defaults": {...}}`), which `index.js` takes its values from.
 */
export declare function defaults(): string

/**
 * The core's table of error kinds as JSON text: `[code, name, description]`
 * each, in the order of their numbers.
 */
export declare function errorKinds(): string

/**
 * Import Claude Code, Codex or seed-style transcripts: `paths` a JSON array
 * of paths, `options` the core's ImportOptions as JSON; the report as JSON.
 */
export declare function importTranscripts(paths: string, options?: string | undefined | null): Promise<string>

/**
 * The sessions of every project in a home (`options`: store options as
 * JSON), as JSON.
 */
export declare function listAllSessions(options?: string | undefined | null): Promise<string>

/**
 * The channel version after `current` (JSON text of `null`, a number or a
 * version this made), for a saver's `getNextVersion`.
 */
export declare function nextChannelVersion(current?: string | undefined | null): string

/** Open (creating if needed) the store of a project. */
export declare function openStore(projectRoot: string, options?: string | undefined | null): Promise<NativeStore>

/**
 * A diagnostic: a task that does nothing, run on the libuv pool. Its Promise
 * settles after one round trip through the pool, the hop every call that
 * touches disk pays on top of its work (docs/BENCHMARKS.md measures it).
 */
export declare function poolRoundTrip(): Promise<void>

/** The directory name of a project under `<home>/projects/`. */
export declare function projectCode(canonicalRoot: string): string

/**
 * Register the function that makes the package's errors (`index.js` calls
 * it once, when it loads): `{ make(code, message, errno) }`. The object is
 * kept for the life of the environment.
 */
export declare function setErrorFactory(factory: { make(code: string, message: string, errno: number | null): Error }): void

/** Checkpoints as JSON text, and the bytes of their values. */
export interface StoredCheckpoints {
  json: string
  buffers: Array<Buffer>
}

/** The library's version (the crate version). */
export declare function version(): string
