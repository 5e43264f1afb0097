// Compiled by `tsc --noEmit` in tests/node/run.sh, as CommonJS (a .cts file):
// `require('sessionkit')` resolves the package's `require` condition, typed by
// index.d.ts and openai-agents.d.ts, while check.mts takes the `import` one
// (index.d.mts). Both must type a user's code alike.
import sessionkit = require('sessionkit');
import { ErrorCode, Store } from 'sessionkit';
import type { Message, Session, SessionkitError } from 'sessionkit';
import { SessionkitSession } from 'sessionkit/openai-agents';
import type { AgentInputItem } from '@openai/agents';

export async function usage(dir: string): Promise<string> {
  const store: Store = await sessionkit.Store.open(dir, { home: `${dir}/home` });
  const same: typeof Store = sessionkit.Store;
  const s: Session = await store.createSession({ title: 'typed' });
  const m: Message = await s.append({ role: 'user', content: 'hi' });
  await s.close();
  try {
    await store.openSession('missing');
  } catch (e) {
    if ((e as SessionkitError).code === ErrorCode.NOT_FOUND) return m.id;
  }
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
