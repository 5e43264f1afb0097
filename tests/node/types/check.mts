// Compiled by `tsc --noEmit` in tests/node/run.sh, as an ES module (a .mts
// file, so `import` resolves the package's `import` condition: index.d.mts and
// openai-agents.d.mts over the hand-written index.d.ts and openai-agents.d.ts):
// the types must type a user's ordinary code, and refuse what the API refuses
// at run time where a type can say so. check.cts does the same through require.
import sessionkit from 'sessionkit';
import {
  BusyError,
  ErrorCode,
  InvalidInputError,
  NotFoundError,
  SessionkitError,
  Store,
  defaults,
  enums,
  importTranscripts,
  listAllSessions,
  version,
} from 'sessionkit';
import type {
  BackgroundPush,
  Branch,
  CompactionPlan,
  Follower,
  ImportReport,
  Lease,
  MemoryEntry,
  Message,
  ProjectSessions,
  Remote,
  RemoteSession,
  RewindMode,
  RewindPreview,
  RewindResult,
  SearchResults,
  Session,
  SessionEntry,
  SessionInfo,
  SessionStatus,
  SettingSource,
  TransferReport,
  TrashedSession,
  TreeNode,
  UndoCandidate,
} from 'sessionkit';
import { SessionkitSession } from 'sessionkit/openai-agents';
import type { AgentInputItem } from '@openai/agents';

export async function usage(dir: string): Promise<string[]> {
  const store: Store = await Store.open(dir, { home: `${dir}/home`, durability: 'onSync' });
  // The default export is the CommonJS module: the same classes.
  const same: Store = await sessionkit.Store.open(dir);
  await same.close();
  await using s: Session = await store.createSession({ title: 'typed' });
  const m: Message = await s.append({ role: 'user', content: 'hi', extra: { n: 1 } });
  const parent: string | null = m.parentId;
  const batch: Message[] = await s.appendBatch([{ role: 'assistant', content: [{ type: 'text', text: 'x' }] }]);
  const view: Message[] = await s.modelView({ lastN: 10 });
  const r: RewindResult = await s.rewindTurns(1, 'conversation');
  const undoHead: string | null = r.previousHead;
  const byDefault: RewindResult = await s.rewindTurns();
  const preview: RewindPreview = await s.rewindPreview(m.id);
  const to: string | null = preview.head.to;
  const candidates: UndoCandidate[] = await s.undoCandidates();
  const plan: CompactionPlan | null = await s.selectCompaction({ tokenBudget: 4_000, keepLastTurns: 1 });
  const replaced: number = plan?.replaces.length ?? 0;
  const info: SessionInfo = s.info();
  const status: SessionStatus = info.entry.status;
  const sessions: SessionEntry[] = await store.listSessions();
  const titles: string[] = sessions.map((e) => e.title);
  const forkedFrom: string | undefined = sessions[0]?.forkedFrom?.sessionId;
  const latest: SessionEntry | null = await store.continueSession();
  const view0 = await s.read();
  const tree: TreeNode[] = await view0.tree();
  const heads: boolean[] = tree.map((n) => n.isHead);
  const branches: Branch[] = await view0.branches();
  const fork: Session = await store.forkSession(s.id, { at: m.id, title: 'fork' });
  await fork.close();
  const checked = await store.doctor({ repair: true });
  const ok: boolean = checked.ok;
  const mode: RewindMode = defaults.rewindMode;
  const modes: readonly RewindMode[] = enums.rewindMode;
  const limit: number = defaults.searchLimit;
  void undoHead, byDefault, to, candidates, replaced, status, titles, forkedFrom, latest, heads, branches, ok, mode, modes, limit;
  const fresh: Session = await s.erase();
  const imported: ImportReport = await importTranscripts([`${dir}/chat.jsonl`], { from: 'codex', project: dir });
  const projects: ProjectSessions[] = await listAllSessions({ home: `${dir}/home` });
  const everyEntry: SessionEntry[] = projects.flatMap((p) => p.sessions);
  const moved: ImportReport = await importTranscripts([`${dir}/old-laptop`], {
    mapPaths: [{ from: '/home/ann', to: '/Users/ann' }],
  });
  const notice: string | null = moved.sources[0]?.notice ?? null;
  void imported.messagesAdded, everyEntry, notice;
  const found: SearchResults = await store.search('parse_config', { role: 'user', limit: 5 });
  const where: string = found.hits[0]?.messageId ?? '';
  const kept: Store = await Store.open(dir, { maxSessions: 50, trashGraceSecs: 86_400 });
  const trashed: TrashedSession[] = await kept.listTrash();
  const restored: SessionEntry = await kept.restoreSession(trashed[0]?.id ?? '');
  void trashed[0]?.purgeAfter, restored;
  const remote: Remote = await store.connectRemote({ url: 'host=db', holder: 'ci', leaseTtlMs: 30_000 });
  const lease: Lease = await remote.acquire(s.id);
  const pushed: TransferReport = await remote.push(s.id, lease);
  const shared: RemoteSession[] = await remote.list();
  await remote.release(lease);
  const follower: Follower = await remote.follow(s.id, 0);
  const lines: Buffer[] = await follower.nextLines(1_000);
  void lines, follower.offset;
  const pusher: BackgroundPush = await remote.pushInBackground(s.id, { intervalMs: 50 });
  const flushed: TransferReport = await pusher.flush();
  void flushed.to, pusher.pushed;
  await pusher.stop();
  void pushed.to, shared;
  void where;
  const exported = await store.exportTo(s.id, { to: 'claude-code', home: '/tmp/claude' });
  const resume: string = exported.resumeCommand;
  const derived: boolean = exported.idSource === 'derived';
  void resume, derived, exported.notice?.length;
  // @ts-expect-error: only the agents the core knows
  await store.exportTo(s.id, { to: 'cursor' });
  void imported;
  void projects;
  await fresh.close();
  try {
    await store.openSession('missing');
  } catch (e) {
    // The error classes narrow without a cast.
    if (e instanceof BusyError) {
      const busy: 'BUSY' = e.code;
      void busy;
    } else if (e instanceof NotFoundError) {
      return [e.message, String(e.errno)];
    } else if (e instanceof SessionkitError && e.code === ErrorCode.NOT_FOUND) {
      return [];
    }
  }
  const mine = new InvalidInputError('made by a host');
  const errno: number | null = mine.errno;
  void errno;
  const agents = new SessionkitSession({ sessionId: 'a', project: dir });
  await agents.addItems([{ role: 'user', content: 'q' }]);
  await agents.rewind(1);
  const recent: AgentInputItem[] = await agents.getItems(2);
  void recent;
  {
    // The adapter is AsyncDisposable: `await using` closes it.
    await using scoped = new SessionkitSession({ sessionId: 'b', project: dir });
    await scoped.getItems();
  }
  // @ts-expect-error rewind modes are a closed set
  await fresh.rewindTurns(1, 'sideways');
  // @ts-expect-error a lease time is a number of milliseconds
  await store.connectRemote({ leaseTtlMs: '30s' });
  // @ts-expect-error a search limit is a number
  await store.search('x', { limit: '5' });
  // @ts-expect-error options are closed: a misspelt option is an error
  await s.modelView({ tokenbudget: 100 });
  // @ts-expect-error a model view's token budget is a number
  await s.modelView({ tokenBudget: '100' });
  // @ts-expect-error fork options are closed
  await store.forkSession(s.id, { at: m.id, titel: 'x' });
  // @ts-expect-error doctor's `repair` is a boolean
  await store.doctor({ repair: 'yes' });
  // @ts-expect-error a compaction policy needs its token budget
  await s.selectCompaction({ keepLastTurns: 2 });
  const entry: SessionEntry = await s.updateState({ status: 'processing', activeTokens: 120 });
  void entry.activeTokens;
  // @ts-expect-error statuses are a closed set
  await s.updateState({ status: 'sleeping' });
  // @ts-expect-error state updates are closed
  await s.updateState({ mood: 'fine' });
  // @ts-expect-error selectCompaction may resolve null
  const notNull: CompactionPlan = await s.selectCompaction({ tokenBudget: 1 });
  void notNull;
  // @ts-expect-error a message is an object, not a string
  await s.append('hi');
  return [version(), String(parent), String(batch.length), String(view.length), JSON.stringify(r), m.id];
}

export async function config(store: Store, dir: string): Promise<string[]> {
  const s = await store.settings({ sources: ['user', 'project'], overrides: { model: 'x' } });
  const origin: SettingSource | undefined = s.origins['model'];
  const error: string | null = s.sources[0]!.error;
  await store.setSetting('local', 'permissions.allow', ['ls']);
  const removed: boolean = (await store.unsetSetting('project', 'model')).existed;
  const found = await store.instructions(dir, { names: ['AGENTS.md'], maxIncludeDepth: 2 });
  const kinds: string[] = found.problems.map((p) => p.kind);
  const memory: MemoryEntry = await store.addMemory('build', '# Build', { scope: 'user' });
  await store.updateMemory('build', 'Run make.');
  const text: string = await store.readMemory('build');
  const all: MemoryEntry[] = await store.listMemories();
  await store.deleteMemory('build', { scope: 'project' });
  // @ts-expect-error the host's overrides are never written
  await store.setSetting('host', 'model', 'x');
  // @ts-expect-error a memory scope is project or user
  await store.listMemories({ scope: 'team' });
  return [String(origin), String(error), String(removed), ...kinds, memory.summary, text, String(all.length)];
}
