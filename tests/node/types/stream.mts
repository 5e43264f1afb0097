// Compiled by `tsc --noEmit` in tests/node/run.sh: a Follower as an async
// iterator with an AbortSignal, views as async iterators of messages, and
// close / `await using` on the remote handles, typed without casts.
import { Store } from 'sessionkit';
import type { BackgroundPush, Follower, Message, Remote, SessionView } from 'sessionkit';

export async function follow(store: Store, id: string): Promise<number> {
  await using remote: Remote = await store.connectRemote({ url: 'host=db' });
  await using follower: Follower = await remote.follow(id);
  const ac = new AbortController();
  let bytes = 0;
  for await (const lines of follower.lines({ signal: ac.signal })) {
    for (const line of lines) bytes += line.length;
    if (bytes > 1000) ac.abort();
  }
  for await (const batch of follower) bytes += batch.length;
  const more: Buffer[] = await follower.nextLines(100, { signal: AbortSignal.timeout(50) });
  const offset: number = follower.offset;
  const closed: boolean = follower.closed || remote.closed;
  await using pusher: BackgroundPush = await remote.pushInBackground(id);
  await pusher.close();
  await follower.close();
  await remote.close();
  // @ts-expect-error: the signal is an AbortSignal
  await follower.nextLines(100, { signal: 'stop' });
  return bytes + more.length + offset + Number(closed);
}

export async function views(store: Store, id: string): Promise<string[]> {
  const view: SessionView = await store.readSession(id);
  const ids: string[] = [];
  for await (const m of view.iterActivePath()) ids.push(m.id);
  for await (const m of view.iterUiView()) ids.push(m.id);
  for await (const m of view.iterModelView({ lastN: 5 })) ids.push(m.id);
  for await (const m of store.iterModelView(id, { tokenBudget: 1000 })) ids.push(m.id);
  await using s = await store.openSession(id);
  const first: IteratorResult<Message, void> = await s.iterActivePath().next();
  if (!first.done) ids.push(first.value.id);
  for await (const m of s.iterModelView()) ids.push(m.id);
  return ids;
}
