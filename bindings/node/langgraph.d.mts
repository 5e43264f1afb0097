// Types of `sessionkit/langgraph` as import loads it (langgraph.mjs): the
// class extends the ES module build of `@langchain/langgraph-checkpoint` (an
// optional peer dependency), the one an importing program's LangGraph uses.
// langgraph.d.ts types the require() side alike.
import type { RunnableConfig } from '@langchain/core/runnables';
import { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  DeltaChannelHistory,
  PendingWrite,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { Durability, Store } from './index.js';

export interface SessionkitSaverOptions {
  /** The project root whose store holds the threads (default '.'). */
  project?: string;
  /** Defaults to $SESSIONKIT_HOME, else ~/.sessionkit. */
  home?: string;
  durability?: Durability;
  /** An open store to use instead of opening one (`close()` leaves it open). */
  store?: Store;
  /** The serializer of channel values, writes and metadata (default LangGraph's JsonPlusSerializer). */
  serde?: SerializerProtocol;
}

/** A LangGraph checkpointer whose threads are sessionkit sessions: each
 *  checkpoint a record naming its parent, channel values stored once per
 *  distinct value, pending writes as records. */
export declare class SessionkitSaver extends BaseCheckpointSaver {
  constructor(options?: SessionkitSaverOptions);
  /** The sessionkit store holding the threads. */
  store(): Promise<Store>;
  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  /** Newest first; without a thread_id, every thread of the store. */
  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple>;
  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void>;
  /** Moves the thread's session to sessionkit's trash (restorable until purged). */
  deleteThread(threadId: string): Promise<void>;
  getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>>;
  /** The core's next version, `<counter>.<random digits>` (unique to its
   *  branch of the thread), as a number: LangGraph JS's versions are numbers. */
  getNextVersion(current: number | undefined): number;
  /** A thread whose versions are strings (the Python saver's) goes on with strings. */
  getNextVersion(current: string): string;
  /** Close the store (when this saver opened it). Closing twice does nothing. */
  close(): Promise<void>;
  /** `close()`: `await using saver = new SessionkitSaver(...)` closes it. */
  [Symbol.asyncDispose](): Promise<void>;
}
