// Types of `sessionkit/openai-agents`. The item type is the SDK's own when
// `@openai/agents` is installed (an optional peer dependency).
import type { AgentInputItem, Session as AgentsSession } from '@openai/agents';
import type { Durability, Session, Store } from './index';

export interface SessionkitSessionOptions {
  /** An id that does not exist yet is created with that id; absent: a new session. */
  sessionId?: string;
  /** The project root whose store holds the session (default '.'). */
  project?: string;
  /** Defaults to $SESSIONKIT_HOME, else ~/.sessionkit. */
  home?: string;
  durability?: Durability;
  /** Return the model view (compacted, invisible dropped) from getItems. */
  modelView?: boolean;
  /** An open store to use instead of opening one. */
  store?: Store;
}

/** The JS SDK's Session has no settings (no default limit), so this class has
 *  none either: pass a limit to getItems. */
export declare class SessionkitSession implements AgentsSession {
  constructor(options?: SessionkitSessionOptions);
  session(): Promise<Session>;
  store(): Promise<Store>;
  getSessionId(): Promise<string>;
  /** The stored items, oldest first: the latest `limit` of them; every item
   *  when `limit` is absent; none when `limit <= 0` (as the SDK's MemorySession). */
  getItems(limit?: number): Promise<AgentInputItem[]>;
  addItems(items: AgentInputItem[]): Promise<void>;
  /** The SDK's compaction hook: `items` (a `compaction` item, then the items
   *  kept after it) become the history the model sees; the originals stay in
   *  the log, marked compacted. */
  replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void>;
  popItem(): Promise<AgentInputItem | undefined>;
  /** Recoverable: the items stay in the log until the session is deleted. */
  clearSession(): Promise<void>;
  /** Delete the session's items for good; the id stays, empty. */
  erase(): Promise<void>;
  /** Go back to before the `turns`-th latest user input (they stay in the log). */
  rewind(turns?: number): Promise<void>;
  /** Release the writer lock. Closing twice does nothing. */
  close(): Promise<void>;
  /** `close()`: `await using session = new SessionkitSession(...)` closes it. */
  [Symbol.asyncDispose](): Promise<void>;
}
