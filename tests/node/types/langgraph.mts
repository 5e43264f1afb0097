// Compiled by `tsc --noEmit` in tests/node/run.sh as an ES module: a user's
// code with `sessionkit/langgraph` (langgraph.d.mts), whose SessionkitSaver
// must be the checkpointer LangGraph's compile() takes, and a
// BaseCheckpointSaver of the ES module build. langgraph.cts: the same through
// require.
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { Annotation, Command, START, StateGraph, interrupt } from '@langchain/langgraph';
import { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { Store, nextChannelVersion } from 'sessionkit';
import type { CheckpointRecord } from 'sessionkit';
import { SessionkitSaver } from 'sessionkit/langgraph';
import type { SessionkitSaverOptions } from 'sessionkit/langgraph';

const State = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export async function usage(dir: string): Promise<string[]> {
  const options: SessionkitSaverOptions = { project: dir, home: `${dir}/home`, durability: 'never' };
  const saver = new SessionkitSaver(options);
  const base: BaseCheckpointSaver = saver;
  const graph = new StateGraph(State)
    .addNode('chat', (s) => {
      const answer = interrupt<string, string>('ok?');
      return { messages: [new AIMessage(`${s.messages.length} ${answer}`)] };
    })
    .addEdge(START, 'chat')
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: 't' } };
  await graph.invoke({ messages: [new HumanMessage('hi')] }, config);
  const out = await graph.invoke(new Command({ resume: 'yes' }), config);
  const tuples: CheckpointTuple[] = [];
  for await (const t of saver.list(config, { limit: 2, filter: { source: 'loop' } })) tuples.push(t);
  const latest: CheckpointTuple | undefined = await saver.getTuple(config);
  const version: number = saver.getNextVersion(undefined);
  const store: Store = await saver.store();
  const records: CheckpointRecord[] = await store.checkpointList({ threadId: 't', ns: '', limit: 1 });
  const bytes: Buffer | undefined = records[0]?.values['messages']?.bytes;
  await store.checkpointCopyThread('t', 'u');
  await store.checkpointPrune(['u'], 'keep_latest');
  // @ts-expect-error a prune strategy is keep_latest or delete
  await store.checkpointPrune(['u'], 'all');
  const v: string = nextChannelVersion(null);
  void bytes, v;
  const shared = new SessionkitSaver({ store });
  await shared.close();
  await saver.deleteThread('t');
  await saver.close();
  {
    await using scoped = new SessionkitSaver({ project: dir });
    await scoped.getTuple(config);
  }
  // @ts-expect-error durability is a closed set
  new SessionkitSaver({ durability: 'sometimes' });
  // @ts-expect-error the project is a path
  new SessionkitSaver({ project: 1 });
  void base;
  return [String(out.messages.length), String(tuples.length), String(latest?.checkpoint.id), String(version), store.projectCode];
}
