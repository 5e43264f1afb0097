// Hand-written types of the `sessionkit` package (the addon's generated types,
// which carry JSON as strings, are in native.d.ts).

/** A JSON value as the log holds it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A message as stored: the caller's members plus `type`, `id`, `parentId`,
 *  `sessionId` and `timestamp` (an ISO 8601 string; times stay strings). */
export interface Message {
  type?: 'message';
  id: string;
  parentId: string | null;
  sessionId: string;
  role: 'system' | 'user' | 'assistant' | 'tool' | string;
  timestamp: string;
  content?: Json;
  [key: string]: Json | undefined;
}

/** A message to append: any JSON object, usually with `role` and `content`. */
export type NewMessage = { [key: string]: Json | undefined };

/** An OpenAI Responses item (as `@openai/agents` stores them). */
export type ResponsesItem = { [key: string]: unknown };

/** The core's error kind names, the `code` of every rejection. */
export type ErrorCodeName =
  | 'NOT_FOUND'
  | 'BUSY'
  | 'CONFLICT'
  | 'INVALID_INPUT'
  | 'CORRUPT'
  | 'IO'
  | 'UNSUPPORTED'
  | 'INTERNAL';

/** What every method of the package rejects (or throws) with; each kind of
 *  the core's error table has its subclass (`err instanceof BusyError`). */
export declare class SessionkitError extends Error {
  constructor(message?: string, options?: { code?: ErrorCodeName; errno?: number | null; cause?: unknown });
  /** The core's error kind name. */
  code: ErrorCodeName;
  /** The OS error number, when an OS call failed; else null. */
  errno: number | null;
}
/** A session, message, snapshot or file that does not exist. */
export declare class NotFoundError extends SessionkitError {
  static readonly code: 'NOT_FOUND';
  code: 'NOT_FOUND';
}
/** Another writer holds the lock (or the lease). */
export declare class BusyError extends SessionkitError {
  static readonly code: 'BUSY';
  code: 'BUSY';
}
/** The state changed under the call: an id in use, diverged logs, a file
 *  changed outside. */
export declare class ConflictError extends SessionkitError {
  static readonly code: 'CONFLICT';
  code: 'CONFLICT';
}
/** A bad argument, or a call on a closed handle. */
export declare class InvalidInputError extends SessionkitError {
  static readonly code: 'INVALID_INPUT';
  code: 'INVALID_INPUT';
}
/** Data on disk that cannot be read as it should be. */
export declare class CorruptError extends SessionkitError {
  static readonly code: 'CORRUPT';
  code: 'CORRUPT';
}
/** An operating system call failed (`errno` says which error). */
export declare class IoError extends SessionkitError {
  static readonly code: 'IO';
  code: 'IO';
}
/** What this installation or this version cannot do. */
export declare class UnsupportedError extends SessionkitError {
  static readonly code: 'UNSUPPORTED';
  code: 'UNSUPPORTED';
}
/** A bug in sessionkit. */
export declare class InternalError extends SessionkitError {
  static readonly code: 'INTERNAL';
  code: 'INTERNAL';
}

export declare const ErrorCode: { readonly [K in ErrorCodeName]: K };
export declare const errorKinds: ReadonlyArray<{ code: number; name: ErrorCodeName; description: string }>;
export declare function version(): string;
export declare function projectCode(canonicalRoot: string): string;
/** The session id that holds the conversation `conversationId` (FORMAT.md §3.3). */
export declare function conversationSessionId(conversationId: string): string;
/** A diagnostic: settles after a task that does nothing runs on the libuv
 *  pool (the round trip every disk call pays on top of its work). */
export declare function poolRoundTrip(): Promise<void>;

export type Durability = 'never' | 'onSync' | 'always';
/** What the agent is doing in a session, as the host reports it. */
export type SessionStatus =
  | 'pending'
  | 'processing'
  | 'completed'
  | 'failed'
  | 'interrupted'
  | 'ask_permission'
  | 'waiting_for_user';

/** The core's enum value lists (the table every interface reads). */
export interface Enums {
  readonly durability: readonly Durability[];
  readonly status: readonly SessionStatus[];
  readonly rewindMode: readonly RewindMode[];
  readonly exportFormat: readonly ExportFormat[];
  readonly importFormat: readonly ImportFormat[];
  readonly exportTarget: readonly ExportTarget[];
  readonly memoryScope: readonly MemoryScope[];
  readonly settingSource: readonly SettingSource[];
  readonly writableSettingSource: readonly WritableSettingSource[];
  readonly errorKind: readonly ErrorCodeName[];
}

/** The core's defaults of optional arguments. */
export interface Defaults {
  /** The project `Store.open` opens when none is named. */
  readonly project: string;
  /** `StoreOpenOptions` as the core fills them (without `home`, which
   *  depends on the environment). */
  readonly storeOptions: {
    readonly durability: Durability;
    readonly maxSessions: number;
    readonly busyTimeoutMs: number;
    readonly trashGraceSecs: number;
    readonly blobThreshold: number;
    readonly maxRecordBytes: number;
    /** A testing aid: fixed ids and times (null: off). */
    readonly deterministic: Json;
  };
  readonly memoryScope: MemoryScope;
  readonly exportFormat: ExportFormat;
  /** The mode of `rewind` and `rewindPreview`. */
  readonly rewindMode: RewindMode;
  readonly rewindTurns: number;
  readonly rewindTurnsMode: RewindMode;
  /** A compaction policy's `keepLastTurns`. */
  readonly keepLastTurns: number;
  /** A compaction policy's `summaryTokens`. */
  readonly summaryTokens: number;
  /** `pushInBackground`'s `intervalMs`. */
  readonly pushIntervalMs: number;
  /** A search's `limit`. */
  readonly searchLimit: number;
  /** `RemoteOptions.leaseTtlMs`. */
  readonly leaseTtlMs: number;
}

export declare const enums: Enums;
export declare const defaults: Defaults;

/** A value as a framework's serializer made it: its type and its bytes. */
export interface TypedValue {
  type: string;
  bytes: Uint8Array;
}

/** A stored value, as the store returns it. */
export interface StoredValue {
  type: string;
  bytes: Buffer;
}

/** A channel's new version in a checkpoint: its value, or null when the
 *  channel is empty at that version. */
export interface CheckpointChannelValue {
  channel: string;
  version: string | number;
  value: TypedValue | null;
}

/** A write pending on a checkpoint; `idx` is the core's (LangGraph's special
 *  channels' negative index, else the position in the task's writes). */
export interface CheckpointWrite {
  taskId: string;
  channel: string;
  value: StoredValue;
  taskPath: string;
  idx: number;
}

/** A checkpoint as stored (docs/FORMAT.md §24): `checkpoint` without its
 *  channel values, which are in `values` (resolved from its
 *  `channel_versions`); its pending writes in the order a run applies them. */
export interface CheckpointRecord {
  threadId: string;
  ns: string;
  id: string;
  parentId: string | null;
  checkpoint: { [key: string]: Json };
  metadata: { [key: string]: Json };
  values: { [channel: string]: StoredValue };
  writes: CheckpointWrite[];
  /** For a checkpoint of format v < 4 with a parent: the values its parent's
   *  tasks wrote to `__pregel_tasks`, in write order (v4 keeps them as that
   *  channel's value); empty otherwise. */
  pendingSends: StoredValue[];
}

export interface CheckpointPutOptions {
  ns: string;
  checkpoint: { [key: string]: Json };
  metadata: { [key: string]: Json };
  parentId?: string | null;
  values: CheckpointChannelValue[];
}

export interface CheckpointPutWritesOptions {
  ns: string;
  checkpointId: string;
  taskId: string;
  taskPath?: string;
  writes: { channel: string; value: TypedValue }[];
}

/** Which checkpoints `checkpointList` returns (every one when empty). */
export interface CheckpointListOptions {
  /** One thread; absent: every thread of the store. */
  threadId?: string | null;
  /** One namespace; absent: every namespace. */
  ns?: string | null;
  checkpointId?: string | null;
  /** Those whose metadata has each of these keys equal. */
  filter?: { [key: string]: Json } | null;
  /** Those with a smaller id. */
  before?: string | null;
  limit?: number | null;
}

/** One channel's history for LangGraph's getDeltaChannelHistory. */
export interface CheckpointDeltaHistory {
  /** The writes on the path, oldest first. */
  writes: CheckpointWrite[];
  /** The value stored at the nearest ancestor that stored one. */
  seed?: StoredValue;
}

/** The version after `current` (absent or null: the first), as the core
 *  makes them: `<counter, 32 digits>.<16 random digits>`. */
export declare function nextChannelVersion(current?: string | number | null): string;
export type RewindMode = 'files' | 'conversation' | 'both';
export type ExportFormat = 'jsonl' | 'markdown' | 'json';
export type ImportFormat = 'claude-code' | 'codex' | 'deepcode' | 'pi' | 'gemini-cli' | 'copilot-cli' | 'opencode';
export type ExportTarget = 'claude-code' | 'codex';

export interface ExportToOptions {
  to: ExportTarget;
  /** The agent's home, absolute (default $CLAUDE_CONFIG_DIR else ~/.claude;
   *  $CODEX_HOME else ~/.codex). */
  home?: string;
  /** Codex only: the model provider recorded (default "openai"). */
  modelProvider?: string;
}

export interface NativeExport {
  to: ExportTarget;
  path: string;
  nativeId: string;
  idSource: 'session' | 'derived';
  items: number;
  dropped: number;
  written: boolean;
  resumeCommand: string;
  notice: string | null;
}

/** What and where to import (as the core's ImportOptions). */
export interface ImportOptions {
  /** The format of every source; detected per file when absent. */
  from?: ImportFormat;
  /** The project to import into; by default the one each source names,
   *  whether or not its directory exists here. */
  project?: string;
  /** Prefixes of the working directory a source names to remap (another
   *  machine's home, a moved checkout): whole components, the longest
   *  `from` wins; both absolute paths. */
  mapPaths?: PathMapping[];
  store?: StoreOpenOptions;
}

/** A path prefix recorded elsewhere (`from`) and where it is here (`to`). */
export interface PathMapping {
  from: string;
  to: string;
}

/** Import Claude Code, Codex or seed-style transcripts (files, or
 *  directories searched for `*.jsonl`); resolves to the import report
 *  (`sources`, `messagesAdded`, `failed`). */
export declare function importTranscripts(paths: string[], options?: ImportOptions): Promise<ImportReport>;
/** The sessions of every project in the home. */
export declare function listAllSessions(options?: StoreOpenOptions): Promise<ProjectSessions[]>;

/** What became of one source file of an import. */
export interface ImportSourceReport {
  path: string;
  /** The format it was read as; null when it could not be told. */
  format: ImportFormat | null;
  outcome: 'imported' | 'upToDate' | 'changed' | 'failed';
  error: string | null;
  /** The project it went to. */
  project: string | null;
  /** A mapped working directory, or one that does not exist here. */
  notice: string | null;
  sessionId: string | null;
  agentId: string | null;
  /** Whether the session was created by this import. */
  created: boolean;
  lines: number;
  messagesAdded: number;
  recordsAdded: number;
  /** Lines left out, with why. */
  skipped: { line: number; reason: string }[];
  /** Lines kept only as their original JSON, or mapped with a loss. */
  unmapped: { line: number; reason: string }[];
}

/** What an import did. */
export interface ImportReport {
  /** One report per source file. */
  sources: ImportSourceReport[];
  messagesAdded: number;
  /** Sources that could not be imported. */
  failed: number;
}

/** One project of the home and its sessions. */
export interface ProjectSessions {
  projectCode: string;
  /** The project root its header names, when known. */
  projectRoot: string | null;
  sessions: SessionEntry[];
  /** Why the project's sessions could not be listed. */
  error: string | null;
}

/** Options of a model view: the last `lastN` messages, or those within
 *  `tokenBudget` (as the core's ModelViewOptions). */
export interface ModelViewOptions {
  lastN?: number | null;
  tokenBudget?: number | null;
}

/** Where a forked session came from. */
export interface Lineage {
  sessionId: string;
  /** The message forked at; null for a fork of the whole session. */
  messageId: string | null;
}

/** Which page of the listing `listPage` returns. */
export interface ListOptions {
  /** Entries skipped from the newest (default 0). */
  offset?: number;
  /** At most this many entries (default: every one from `offset`). */
  limit?: number;
}

/** A page of the project's sessions. */
export interface SessionPage {
  /** The entries of the page, newest first. */
  sessions: SessionEntry[];
  /** How many sessions the project has. */
  total: number;
}

/** One session in the index (every field can be rebuilt from its log). */
export interface SessionEntry {
  id: string;
  /** The host's own id for the conversation, when the id was mapped from it. */
  conversationId?: string;
  /** Given at create or by rename, else the start of the first user message. */
  title: string;
  /** Whether the title was given explicitly. */
  titleSet: boolean;
  createdAt: string;
  updatedAt: string;
  status: SessionStatus;
  lastAssistantReply: string | null;
  thinking: string | null;
  refusalReason: string | null;
  failureReason: string | null;
  lastToolCall: Json | null;
  /** Sums of the numeric fields of every `meta.usage` reported. */
  tokenUsage: { [key: string]: Json };
  activeTokens: number | null;
  childProcesses: Json[];
  headId: string | null;
  /** Messages in the log, on every branch. */
  messageCount: number;
  forkedFrom: Lineage | null;
  /** The log length this entry was folded from. */
  logBytes: number;
}

/** A line that reading skipped. */
export interface SkippedLine {
  line: number;
  offset: number;
  length: number;
  kind: 'nul' | 'utf8' | 'json' | 'noId' | 'badPatch' | 'badCompaction' | 'torn';
  reason: string;
}

/** What reading a log found. */
export interface ReadReport {
  skipped: SkippedLine[];
  /** A last line without its newline: a write cut short. */
  tornTail: SkippedLine | null;
  brokenChains: { messageId: string; missingParentId: string }[];
  duplicateIds: string[];
  unknownRecords: number;
  missingBlobs: { messageId: string; field: string; sha256: string | null }[];
  warnings: string[];
}

/** An open session as its writer knows it (`Session.info()`). */
export interface SessionInfo {
  id: string;
  /** Its log. */
  path: string;
  head: string | null;
  entry: SessionEntry;
  openReport: ReadReport;
  /** Sessions moved to the trash when this one was created. */
  pruned: string[];
}

/** Where a store lives (`Store.info()`). */
export interface StoreInfo {
  projectRoot: string;
  dir: string;
  projectCode: string;
  indexPath: string;
}

/** What loading a view found (`SessionView.info()`). */
export interface ViewInfo {
  head: string | null;
  /** The `session` header record, if the log has one. */
  header: { [key: string]: Json } | null;
  messageCount: number;
  report: ReadReport;
  /** State and subagent records, in log order. */
  records: Report[];
}

/** A message with its place in the tree. */
export interface TreeNode {
  id: string;
  parentId: string | null;
  role: string;
  timestamp: string | null;
  /** The first 80 characters of its text. */
  preview: string;
  /** How many messages have it as their parent. */
  children: number;
  onActivePath: boolean;
  isHead: boolean;
  compacted: boolean;
}

/** A branch: the path from the root to a leaf. */
export interface Branch {
  leafId: string;
  length: number;
  /** The last message it shares with the active path. */
  forkPointId: string | null;
  isActive: boolean;
  lastTimestamp: string | null;
}

/** How to pick what to compact (as the core's CompactionPolicy; absent
 *  members take `defaults.keepLastTurns` and `defaults.summaryTokens`). */
export interface CompactionPolicy {
  /** The model view should fit in this many tokens after compaction. */
  tokenBudget: number;
  /** Turns at the end that are never compacted. */
  keepLastTurns?: number;
  /** Tokens reserved for the summary itself. */
  summaryTokens?: number;
}

/** What a compaction would replace. */
export interface CompactionPlan {
  replaces: string[];
  /** The messages replaced, for the summariser. */
  messages: Message[];
  tokensBefore: number;
  tokensAfter: number;
}

/** Totals of a diff. */
export interface DiffStats {
  filesChanged: number;
  linesAdded: number;
  linesRemoved: number;
}

export type ConflictKind =
  | 'modifiedOutside'
  | 'removedOutside'
  | 'createdOutside'
  | 'becameDirectory'
  | 'symlinkInPath'
  | 'notADirectoryInPath'
  | 'specialFile';

/** What a restore does to one file. */
export interface FilePlan {
  path: string;
  action: 'restore' | 'recreate' | 'delete';
  conflict?: ConflictKind;
  linesAdded: number;
  linesRemoved: number;
  binary: boolean;
}

/** What restoring a snapshot would do to the files. */
export interface RewindPlan {
  messageId: string | null;
  snapshot: string;
  files: FilePlan[];
  conflicts: string[];
  stats: DiffStats;
}

/** What `rewind` would do (`rewindPreview`), changing nothing. */
export interface RewindPreview {
  messageId: string;
  mode: RewindMode;
  /** null for a conversation-only rewind. */
  plan: RewindPlan | null;
  head: { from: string | null; to: string | null };
}

/** What a rewind or a restore did, and how to undo it. */
export interface RewindResult {
  mode: RewindMode;
  messageId: string | null;
  snapshot: string | null;
  /** Restore it to undo the file side. */
  undoSnapshot: string | null;
  snapshotAfter: string | null;
  /** `setHead(previousHead)` undoes the conversation side. */
  previousHead: string | null;
  head: string | null;
  restored: string[];
  recreated: string[];
  deleted: string[];
  skipped: FilePlan[];
}

/** A user message the conversation and files can be rewound to. */
export interface UndoCandidate {
  messageId: string;
  timestamp: string | null;
  preview: string;
  checkpointHash: string | null;
  restorable: boolean;
  /** Why not, when not restorable. */
  reason?: string;
  stats: DiffStats;
}

/** Whether a file changed on disk since the agent read it. */
export interface ExternalChange {
  path: string;
  status: 'unchanged' | 'modified' | 'deleted' | 'created' | 'neverRead';
}

/** What rebuilding the index found. */
export interface RebuildReport {
  sessions: number;
  /** Sessions whose log had problems, with what reading found. */
  problems: [string, ReadReport][];
}

/** What `Store.gc` did. */
export interface StoreGcReport {
  branches: number;
  objectsBefore: number;
  objectsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
  bytesFreed: number;
  blobs: { blobsBefore: number; bytesBefore: number; blobsRemoved: number; bytesFreed: number; keptYoung: number };
  tempFiles: { removed: number; bytesFreed: number; keptYoung: number };
  trashPurged: string[];
}

/** The file history's size on disk, per session. */
export interface HistorySizeReport {
  diskBytes: number;
  sessions: { sessionId: string; snapshots: number; objects: number; bytes: number; exclusiveBytes: number }[];
}

/** A file history ref. */
export interface HistoryRef {
  sessionId: string;
  ref: string;
  target: string;
}

/** What checking the file history found. */
export interface FileHistoryCheck {
  exists: boolean;
  branches: number;
  orphanRefs: HistoryRef[];
  /** Refs whose commit is missing. */
  brokenRefs: { sessionId: string; ref: string; target: string; missingCommit: string }[];
  /** Messages whose checkpointHash names no snapshot of their session. */
  danglingCheckpoints: {
    sessionId: string;
    messageId: string;
    checkpointHash: string;
    reason: 'notASnapshotId' | 'noFileHistory' | 'missing' | 'notOnBranch';
  }[];
}

export interface DoctorOptions {
  /** Repair what can be repaired (default false: only check). */
  repair?: boolean;
}

/** What `doctor` found of the index. */
export interface DoctorIndexCheck {
  state: 'ok' | 'missing' | 'corrupt' | 'unsupported' | 'error';
  error?: string;
  missingEntries: string[];
  orphanEntries: string[];
  staleEntries: string[];
  /** The index journal, when there is one. */
  journal?: { generation: number | null; applied: number; skipped: SkippedLine[]; tornTail: SkippedLine | null };
  needsRebuild: boolean;
}

/** What `doctor` found of one log (a session's or a subagent's). */
export interface DoctorLogCheck {
  id: string;
  sessionId: string;
  agentId?: string;
  path: string;
  messages: number;
  ok: boolean;
  error?: string;
  tornTail: SkippedLine | null;
  skipped: SkippedLine[];
  unquarantined: number;
  quarantined: number;
  brokenChains: { messageId: string; missingParentId: string }[];
  duplicateIds: string[];
  warnings: string[];
  badBlobs: string[];
  danglingCheckpoints: string[];
  fileHistoryUnchecked?: string;
  problems: string[];
  notices: string[];
  repaired: string[];
}

/** What `doctor` found (and repaired). */
export interface DoctorReport {
  store: string;
  ok: boolean;
  repair: boolean;
  index: DoctorIndexCheck;
  logs: DoctorLogCheck[];
  fileHistory: FileHistoryCheck & { state: 'ok' | 'absent' | 'error'; error?: string };
  repaired: string[];
}

/** What the host reports of a session (at least one member). */
export interface StateUpdate {
  status?: SessionStatus;
  /** A non-empty title. */
  title?: string;
  thinking?: string | null;
  refusalReason?: string | null;
  failureReason?: string | null;
  lastToolCall?: Json;
  activeTokens?: number | null;
  childProcesses?: Json[];
}

/** A new session's id and title (as the core's CreateOptions). */
export interface CreateOptions {
  id?: string | null;
  title?: string | null;
}

/** Where to fork and the fork's title (as the core's ForkOptions). */
export interface ForkOptions {
  /** The message to fork at; absent: the whole session. */
  at?: string | null;
  title?: string | null;
}

/** A subagent as its sidechain's metadata records it. */
export type SubagentInfo = { [key: string]: Json };

/** Filters of a full-text search (as the core's SearchQuery). `text` holds
 *  words (all must match), "phrases", `prefix*` and `OR`. */
export interface SearchOptions {
  /** Every project of the home, not only this store's. */
  all?: boolean;
  role?: string;
  /** A session id or the start of one. */
  session?: string;
  /** RFC 3339, or a date `YYYY-MM-DD`. */
  since?: string;
  until?: string;
  /** Only messages that call this tool, or carry a result of a call to it. */
  tool?: string;
  /** At most this many hits (default `defaults.searchLimit`). */
  limit?: number;
}

/** One matching message, best first. */
export interface SearchHit {
  project: string;
  sessionId: string;
  /** The subagent whose log holds the message, or null for the session's own. */
  agentId: string | null;
  messageId: string;
  role: string | null;
  timestamp: string | null;
  /** The tools it calls, and those whose results it carries. */
  tools: string[];
  /** Text around the match, matched words between « and ». */
  snippet: string;
  score: number;
}

export interface SearchResults {
  hits: SearchHit[];
  /** Bytes of log read to bring the caches up to date. */
  indexedBytes: number;
  /** Damaged caches set aside (and rebuilt). */
  setAside: string[];
  /** Projects whose cache another process was updating. */
  stale: string[];
}

/** Where and as whom to share (as the core's RemoteOptions). */
export interface RemoteOptions {
  /** A libpq connection string (`host=… dbname=…` or a `postgresql://` URI);
   *  default $SESSIONKIT_REMOTE. */
  url?: string;
  /** The name the project's sessions are shared under; default the store's
   *  project code. */
  project?: string;
  /** Who takes leases (shown to those who get BUSY); default `<host>:<pid>`. */
  holder?: string;
  /** How long a lease lasts unless renewed: 1 ms to a day; default 60 s. */
  leaseTtlMs?: number;
  /** Without `project`: where this project sat on the machines that share
   *  it; the name is then the project code of this store's root with the
   *  longest `to` prefix replaced by its `from`. */
  mapPaths?: PathMapping[];
}

/** A session on the remote: bytes held, its index entry as last pushed. */
export interface RemoteSession {
  id: string;
  pushedBytes: number;
  entry: SessionEntry | null;
  leaseHolder: string | null;
}

/** A lease on a session; `token` is the fencing token every push carries. */
export interface Lease {
  sessionId: string;
  holder: string;
  token: number;
  /** Milliseconds since the Unix epoch, on the database's clock. */
  expiresMs: number;
}

/** What a push or a pull copied: log bytes `from` → `to`, blobs. */
export interface TransferReport {
  sessionId: string;
  from: number;
  to: number;
  /** Transactions that sent lines (push only). */
  batches?: number;
  blobs: number;
}

/** A project's sessions shared through PostgreSQL (docs/DISTRIBUTED.md). */
/** A checkpoint as `checkpointSummaries` lists it: without its values. */
export interface CheckpointSummary {
  ns: string;
  id: string;
  parentId: string | null;
  ts: string | null;
  metadata: { [key: string]: Json };
  /** The channels holding a value at this checkpoint. */
  channels: string[];
  /** How many writes are pending on it. */
  writes: number;
}

export declare class Remote {
  private constructor();
  readonly project: string;
  readonly holder: string;
  /** True once `close()` was called. */
  readonly closed: boolean;
  /** Close the connection once the calls in flight are done; later calls
   *  reject with INVALID_INPUT. Followers and background pushes keep theirs. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  schemaVersion(): Promise<number>;
  list(): Promise<RemoteSession[]>;
  /** BUSY while another holder's lease has not expired. */
  acquire(sessionId: string): Promise<Lease>;
  renew(lease: Lease): Promise<Lease>;
  release(lease: Lease): Promise<void>;
  /** Without a lease, one is taken for the push and given back. */
  push(sessionId: string, lease?: Lease | null): Promise<TransferReport>;
  /** NOT_FOUND when the remote lacks it; CONFLICT when the logs diverged. */
  pull(sessionId: string): Promise<TransferReport>;
  /** Follow a session from byte `start` (default: where the remote stands). */
  follow(sessionId: string, start?: number | null): Promise<Follower>;
  /** Push a session in the background while this process writes it (BUSY
   *  while another holder has its lease); `stop()` it to push the rest and
   *  give the lease back. */
  pushInBackground(sessionId: string, options?: { intervalMs?: number }): Promise<BackgroundPush>;
}

/** A session pushed in the background. */
export declare class BackgroundPush {
  private constructor();
  /** Bytes of the session's log the remote holds, as of the last push. */
  readonly pushed: number;
  /** Push what the log holds now and wait for it; BUSY once the lease was lost. */
  flush(): Promise<TransferReport>;
  /** Push the rest, give the lease back and end (once). */
  stop(): Promise<TransferReport>;
  /** `stop()` unless it was called. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What ends a wait or an iteration of a Follower. */
export interface FollowOptions {
  signal?: AbortSignal;
}

/** A session followed as others push it. Its waits run on a thread of its
 *  own (none of the libuv pool's); `for await (const lines of follower)`
 *  yields each batch of lines until `close()`. */
export declare class Follower implements AsyncIterable<Buffer[]> {
  private constructor();
  /** Where the next lines start, in bytes of the log (never waits). */
  readonly offset: number;
  /** True once `close()` was called. */
  readonly closed: boolean;
  /** The lines pushed since (each with its newline), waiting up to
   *  `timeoutMs` for some; an empty array when none came in time. An abort
   *  of `options.signal` rejects it with the signal's reason; the lines it
   *  read meanwhile go to the next wait. */
  nextLines(timeoutMs: number, options?: FollowOptions): Promise<Buffer[]>;
  /** The batches of lines as they are pushed, until `close()` or until
   *  `options.signal` aborts (the iteration then ends). */
  lines(options?: FollowOptions): AsyncGenerator<Buffer[], void, undefined>;
  [Symbol.asyncIterator](): AsyncGenerator<Buffer[], void, undefined>;
  /** End it: a wait in flight resolves to no lines, later waits reject. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface StoreOpenOptions {
  /** Defaults to $SESSIONKIT_HOME, else ~/.sessionkit. */
  home?: string;
  durability?: Durability;
  /** Opt-in retention: creating a session moves the oldest beyond this many
   *  to the trash (default 0: every session is kept). */
  maxSessions?: number;
  /** Seconds a trashed session is kept before `gc` purges it (default 604800). */
  trashGraceSecs?: number;
  /** Values larger than this many bytes are stored as blobs. */
  blobThreshold?: number;
  maxRecordBytes?: number;
  /** How long a shared writer waits for the session's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
}

/** A session in the trash (`Store.listTrash`). */
export interface TrashedSession {
  id: string;
  trashedAt: string;
  reason: string;
  title: string;
  updatedAt: string;
  messageCount: number;
  purgeAfter: string;
}

/** JSON objects the core returns (entries, reports, plans): their members
 *  are as in docs/FORMAT.md and the Rust API's serde names. */
export type Report = { [key: string]: Json };

/** Where a setting comes from, lowest precedence first (docs/SETTINGS.md). */
export type SettingSource = 'user' | 'project' | 'local' | 'host';
/** The sources with a file: the host's overrides are never written. */
export type WritableSettingSource = 'user' | 'project' | 'local';

/** Which sources to load (default: all) and the host's overrides. */
export interface SettingsOptions {
  sources?: SettingSource[];
  overrides?: { [key: string]: Json };
}

/** One source's file and what became of it. */
export interface SettingsSourceReport {
  source: SettingSource;
  /** Its file (`null` for the host's overrides). */
  path: string | null;
  status: 'loaded' | 'missing' | 'skipped' | 'error';
  /** The file's schema version as found. */
  version: number | null;
  /** The migrations applied in memory to read it. */
  migrations: string[];
  /** A file of a newer schema version: read as it is, never rewritten. */
  readOnly: boolean;
  /** Why the file could not be used: names the file, line and column. */
  error: string | null;
  warning: string | null;
}

/** The effective settings and where each came from. */
export interface Settings {
  values: { [key: string]: Json };
  /** For every leaf, by dotted key, the source that set it. */
  origins: { [key: string]: SettingSource };
  /** Each source, lowest precedence first. */
  sources: SettingsSourceReport[];
}

/** What a settings write did. */
export interface SettingsWrite {
  path: string;
  /** Whether the key was there before. */
  existed: boolean;
  /** The copy of the file in its older shape, made before its first rewrite. */
  backup: string | null;
  migrations: string[];
}

/** The names recognised (default `AGENTS.md`, `CLAUDE.md`) and the `@path`
 *  include depth; by default from the settings `instructions.*`. */
export interface InstructionOptions {
  names?: string[];
  maxIncludeDepth?: number;
}

export interface InstructionFile {
  path: string;
  level: 'user' | 'project' | 'include';
  /** For an include: the file that included it. */
  includedFrom: string | null;
  depth: number;
  content: string;
}

export interface InstructionProblem {
  kind: 'cycle' | 'depthLimit' | 'outsideRoots' | 'notFound' | 'tooLarge' | 'unreadable';
  path: string;
  includedFrom: string | null;
  message: string;
}

/** The instruction files of a working directory, in load order. */
export interface Instructions {
  dir: string;
  root: string;
  names: string[];
  maxIncludeDepth: number;
  files: InstructionFile[];
  problems: InstructionProblem[];
}

export type MemoryScope = 'project' | 'user';
/** Whose memory: the project's (default) or the user's, for every project. */
export interface MemoryOptions {
  scope?: MemoryScope;
}

export interface MemoryEntry {
  name: string;
  path: string;
  bytes: number;
  /** Its first non-empty line, without a heading's `#`. */
  summary: string;
}

export declare class SessionView {
  private constructor();
  info(): ViewInfo;
  records(): Report[];
  activePath(): Promise<Message[]>;
  uiView(): Promise<Message[]>;
  modelView(options?: ModelViewOptions): Promise<Message[]>;
  /** The view's messages a page (about 256 KiB of JSON) at a time: the event
   *  loop runs between pages, however long the session. */
  iterActivePath(): AsyncGenerator<Message, void, undefined>;
  iterUiView(): AsyncGenerator<Message, void, undefined>;
  iterModelView(options?: ModelViewOptions): AsyncGenerator<Message, void, undefined>;
  message(messageId: string): Promise<Message>;
  resolveMessage(prefix: string): Promise<string>;
  tree(): Promise<TreeNode[]>;
  branches(): Promise<Branch[]>;
}

export declare class Subagent {
  private constructor();
  readonly id: string;
  readonly sessionId: string;
  readonly closed: boolean;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  append(message: NewMessage): Promise<Message>;
  appendBatch(messages: NewMessage[]): Promise<Message[]>;
  finish(result: Json, failed?: boolean): Promise<void>;
  read(): Promise<SessionView>;
}

/** One session open for writing. Its calls run one at a time in call order;
 *  appends waiting behind a call in flight go to the core as one write. */
export declare class Session {
  private constructor();
  readonly id: string;
  readonly closed: boolean;
  /** Flush the index entry and release the writer lock. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  /** Delete this session for good (log, sidecars, file history) and start it
   *  again, empty, under the same id: this Session is closed, the new one
   *  resolved. */
  erase(): Promise<Session>;
  info(): SessionInfo;
  head(): string | null;
  /** Whether this handle is a shared writer. */
  readonly shared: boolean;
  fsyncCount(): number;
  lastSnapshot(): Promise<string | null>;
  append(message: NewMessage): Promise<Message>;
  appendBatch(messages: NewMessage[]): Promise<Message[]>;
  /** Report what the agent is doing; the session's entry after it. */
  updateState(state: StateUpdate): Promise<SessionEntry>;
  patchMessage(messageId: string, patch: { [key: string]: Json }): Promise<void>;
  /** `null`: before the first message (the next append starts a new root). */
  setHead(messageId: string | null): Promise<void>;
  resumeAt(messageId: string): Promise<void>;
  rename(title: string): Promise<SessionEntry>;
  sync(): Promise<void>;
  flushIndex(): Promise<void>;
  read(): Promise<SessionView>;
  activePath(): Promise<Message[]>;
  modelView(options?: ModelViewOptions): Promise<Message[]>;
  /** `activePath()` and `modelView()` a page at a time (taken in call order). */
  iterActivePath(): AsyncGenerator<Message, void, undefined>;
  iterModelView(options?: ModelViewOptions): AsyncGenerator<Message, void, undefined>;
  /** What to compact under `policy`; null when nothing needs to be. */
  selectCompaction(policy: CompactionPolicy): Promise<CompactionPlan | null>;
  applyCompaction(replaces: string[], summary: string | Json[]): Promise<Message>;
  spawnSubagent(agentId?: string | null, meta?: { [key: string]: Json } | null): Promise<Subagent>;
  openSubagent(agentId: string): Promise<Subagent>;
  userInput(message: NewMessage): Promise<Message>;
  trackRead(paths: string[]): Promise<void>;
  beforeEdit(paths: string[]): Promise<string>;
  afterEdit(paths: string[]): Promise<string>;
  trackedFiles(): Promise<string[]>;
  externalChanges(paths: string[]): Promise<ExternalChange[]>;
  ensureUnchanged(paths: string[]): Promise<void>;
  undoCandidates(): Promise<UndoCandidate[]>;
  rewindPlan(messageId: string): Promise<RewindPlan>;
  /** What `rewind` would do (mode default `defaults.rewindMode`). */
  rewindPreview(messageId: string, mode?: RewindMode): Promise<RewindPreview>;
  /** Rewind to before a user message (mode default `defaults.rewindMode`). */
  rewind(messageId: string, mode?: RewindMode, options?: { force?: boolean }): Promise<RewindResult>;
  /** Rewind to before the `turns`-th latest user input (default
   *  `defaults.rewindTurns`, mode `defaults.rewindTurnsMode`);
   *  INVALID_INPUT when there are fewer. */
  rewindTurns(turns?: number, mode?: RewindMode, options?: { force?: boolean }): Promise<RewindResult>;
  snapshotPlan(snapshot: string): Promise<RewindPlan>;
  restoreSnapshot(snapshot: string, options?: { force?: boolean }): Promise<RewindResult>;
  responsesItems(options?: { limit?: number | null; modelView?: boolean }): Promise<ResponsesItem[]>;
  appendResponsesItems(items: ResponsesItem[]): Promise<void>;
  /** Make `items` (a `compaction` item, then the items kept after it) the
   *  history as the model sees it; the originals stay on the active path. */
  replaceResponsesItemsWithCompaction(items: ResponsesItem[]): Promise<void>;
  popResponsesItem(): Promise<ResponsesItem | undefined>;
}

export declare class Store {
  private constructor();
  /** Open the store of the project at `projectRoot` (default `defaults.project`). */
  static open(projectRoot?: string, options?: StoreOpenOptions): Promise<Store>;
  readonly closed: boolean;
  readonly projectCode: string;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  info(): StoreInfo;
  listSessions(): Promise<SessionEntry[]>;
  /** `limit` entries of `listSessions()` from `offset`, and how many sessions
   *  there are: a picker's first screen of a project of thousands. */
  listPage(options?: ListOptions): Promise<SessionPage>;
  sessionEntry(sessionId: string): Promise<SessionEntry>;
  resolveSession(prefix: string): Promise<string>;
  /** The most recently updated session's entry; null when there is none. */
  continueSession(): Promise<SessionEntry | null>;
  renameSession(sessionId: string, title: string): Promise<SessionEntry>;
  deleteSession(sessionId: string): Promise<void>;
  /** The sessions pruned into the trash, most recently trashed first. */
  listTrash(): Promise<TrashedSession[]>;
  /** Move a trashed session back, with its subagents and file history. */
  restoreSession(sessionId: string): Promise<SessionEntry>;
  readSession(sessionId: string): Promise<SessionView>;
  modelView(sessionId: string, options?: ModelViewOptions): Promise<Message[]>;
  iterModelView(sessionId: string, options?: ModelViewOptions): AsyncGenerator<Message, void, undefined>;
  listSubagents(sessionId: string): Promise<SubagentInfo[]>;
  readSubagent(sessionId: string, agentId: string): Promise<SessionView>;
  rebuildIndex(): Promise<RebuildReport>;
  gc(): Promise<StoreGcReport>;
  fileHistorySizes(): Promise<HistorySizeReport>;
  checkFileHistory(): Promise<FileHistoryCheck>;
  /** The orphan refs removed. */
  pruneOrphanFileHistory(): Promise<HistoryRef[]>;
  doctor(options?: DoctorOptions): Promise<DoctorReport>;
  search(text: string, options?: SearchOptions): Promise<SearchResults>;
  sessionIds(): Promise<string[]>;
  logPath(sessionId: string): string;
  /** The active path as text (format default `defaults.exportFormat`). */
  exportSession(sessionId: string, format?: ExportFormat): Promise<string>;
  /** Write the session's active path where another agent keeps its own
   *  sessions, so that it lists and resumes it (FORMAT.md §22.9, §22.10).
   *  Again with the same bytes: `written: false`; a different file there is
   *  left alone (`CONFLICT`). */
  exportTo(sessionId: string, options: ExportToOptions): Promise<NativeExport>;
  branchFileHistory(sessionId: string, snapshot: string): Promise<void>;
  createSession(options?: CreateOptions): Promise<Session>;
  openSession(sessionId: string): Promise<Session>;
  openOrCreateSession(sessionId: string): Promise<Session>;
  /** A shared writer: the lock is held only for the moment of each write. */
  openShared(sessionId: string): Promise<Session>;
  /** The conversation `conversationId` (any non-empty string of at most 1,024
   *  UTF-8 bytes) as a shared writer, created on first use. */
  openConversation(conversationId: string): Promise<Session>;
  forkSession(sourceId: string, options?: ForkOptions): Promise<Session>;
  connectRemote(options?: RemoteOptions): Promise<Remote>;
  /** The effective settings; a malformed source is reported in `sources`. */
  settings(options?: SettingsOptions): Promise<Settings>;
  /** Set a dotted key in the file of `source`; `null` removes the key from
   *  the sources below. */
  setSetting(source: WritableSettingSource, key: string, value: Json): Promise<SettingsWrite>;
  unsetSetting(source: WritableSettingSource, key: string): Promise<SettingsWrite>;
  /** Rewrite the file of `source` in the current shape, backing up an older one. */
  migrateSettings(source: WritableSettingSource): Promise<SettingsWrite>;
  instructions(dir: string, options?: InstructionOptions): Promise<Instructions>;
  addMemory(name: string, content: string, options?: MemoryOptions): Promise<MemoryEntry>;
  updateMemory(name: string, content: string, options?: MemoryOptions): Promise<MemoryEntry>;
  deleteMemory(name: string, options?: MemoryOptions): Promise<void>;
  /** The directory holding the memories of `options.scope` (no disk access). */
  memoryPath(options?: MemoryOptions): string;
  listMemories(options?: MemoryOptions): Promise<MemoryEntry[]>;
  readMemory(name: string, options?: MemoryOptions): Promise<string>;
  /** Store a LangGraph checkpoint of thread `threadId` (an id that exists is replaced). */
  checkpointPut(threadId: string, options: CheckpointPutOptions): Promise<void>;
  /** Store a task's writes on a checkpoint (a (task, idx >= 0) already stored is kept). */
  checkpointPutWrites(threadId: string, options: CheckpointPutWritesOptions): Promise<void>;
  /** The checkpoint (the namespace's latest when `checkpointId` is null), or null. */
  checkpointGet(threadId: string, ns: string, checkpointId?: string | null): Promise<CheckpointRecord | null>;
  /** Checkpoints, newest first. */
  checkpointList(options?: CheckpointListOptions): Promise<CheckpointRecord[]>;
  /** Move the thread's session to the trash (restorable until purged). */
  /** The checkpoints session `sessionId` holds (a checkpointer's thread),
   *  without their values, oldest first in each namespace. */
  checkpointSummaries(sessionId: string): Promise<CheckpointSummary[]>;
  checkpointDeleteThread(threadId: string): Promise<void>;
  /** Copy every checkpoint, write and value of `source` into thread `target`. */
  checkpointCopyThread(source: string, target: string): Promise<void>;
  /** `keep_latest`: keep each namespace's newest checkpoint; `delete`: remove them all. */
  checkpointPrune(threadIds: string[], strategy: 'keep_latest' | 'delete'): Promise<void>;
  /** Remove, in every thread, the checkpoints whose `metadata.run_id` is listed, with their writes. */
  checkpointDeleteForRuns(runIds: string[]): Promise<void>;
  /** Per channel: the writes on the path to the checkpoint since the nearest stored value (`seed`). */
  checkpointDeltaHistory(
    threadId: string,
    ns: string,
    checkpointId: string | null,
    channels: string[],
  ): Promise<{ [channel: string]: CheckpointDeltaHistory }>;
}
