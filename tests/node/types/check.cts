// Compiled by `tsc --noEmit` in tests/node/run.sh, as CommonJS (a .cts file):
// `require('sessionkit')` resolves the package's `require` condition, typed by
// index.d.ts and openai-agents.d.ts, while check.mts takes the `import` one
// (index.d.mts). Both must type a user's code alike.
import sessionkit = require('sessionkit');
import { BusyError, ErrorCode, SessionkitError, Store } from 'sessionkit';
import type { Message, Session, SessionEntry, TreeNode } from 'sessionkit';
import { SessionkitSession } from 'sessionkit/openai-agents';
import type { AgentInputItem } from '@openai/agents';

export async function usage(dir: string): Promise<string> {
  const store: Store = await sessionkit.Store.open(dir, { home: `${dir}/home` });
  const same: typeof Store = sessionkit.Store;
  const s: Session = await store.createSession({ title: 'typed' });
  const m: Message = await s.append({ role: 'user', content: 'hi' });
  const tree: TreeNode[] = await (await s.read()).tree();
  const entries: SessionEntry[] = await store.listSessions();
  void tree, entries;
  await s.close();
  try {
    await store.openSession(s.id);
  } catch (e) {
    if (e instanceof BusyError) return e.code;
    if (e instanceof SessionkitError && e.code === ErrorCode.NOT_FOUND) return m.id;
  }
  // @ts-expect-error options are closed: a misspelt option is an error
  await store.createSession({ titel: 'x' });
  const agents = new SessionkitSession({ sessionId: 'a', project: dir });
  const items: AgentInputItem[] = await agents.getItems();
  await agents.close();
  // @ts-expect-error rewind modes are a closed set
  await s.rewindTurns(1, 'sideways');
  // @ts-expect-error a message is an object, not a string
  await s.append('hi');
  void same;
  return `${sessionkit.version()} ${items.length}`;
}
