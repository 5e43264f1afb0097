// Compiled by `tsc --noEmit` in tests/node/run.sh, as an ES module (a .mts
// file, so `import` resolves the package's `import` condition: index.d.mts and
// openai-agents.d.mts over the hand-written index.d.ts and openai-agents.d.ts):
// the types must type a user's ordinary code, and refuse what the API refuses
// at run time where a type can say so. check.cts does the same through require.
import sessionkit from 'sessionkit';
import { ErrorCode, Store, importTranscripts, listAllSessions, version } from 'sessionkit';
import type {
  BackgroundPush,
  Follower,
  Lease,
  MemoryEntry,
  Message,
  Remote,
  RemoteSession,
  Report,
  SearchResults,
  Session,
  SessionkitError,
  SettingSource,
  TransferReport,
  TrashedSession,
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
  const r: Report = await s.rewindTurns(1, 'conversation');
  const fresh: Session = await s.erase();
  const imported: Report = await importTranscripts([`${dir}/chat.jsonl`], { from: 'codex', project: dir });
  const projects: Report[] = await listAllSessions({ home: `${dir}/home` });
  const found: SearchResults = await store.search('parse_config', { role: 'user', limit: 5 });
  const where: string = found.hits[0]?.messageId ?? '';
  const kept: Store = await Store.open(dir, { maxSessions: 50, trashGraceSecs: 86_400 });
  const trashed: TrashedSession[] = await kept.listTrash();
  const restored: Report = await kept.restoreSession(trashed[0]?.id ?? '');
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
  void imported;
  void projects;
  await fresh.close();
  try {
    await store.openSession('missing');
  } catch (e) {
    const err = e as SessionkitError;
    if (err.code === ErrorCode.NOT_FOUND) return [];
  }
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
