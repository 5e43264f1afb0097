// The Node runner of the scenario protocol (docs/FORMAT.md §21), through the
// public API of the `sessionkit` package only. Run by tests/scenarios/run.py:
//
//   node tests/scenarios/runners/runner.mjs
//
// `sessionkit` resolves from tests/scenarios/runners/node_modules (a link to
// bindings/node that tests/scenarios/run.sh makes).
import { createInterface } from 'node:readline';
import { Store } from 'sessionkit';

let store = null;
const sessions = new Map(); // id -> Session, in the order opened
const subagents = new Map(); // "session/agent" -> Subagent

class ProtocolError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function st() {
  if (!store) throw new ProtocolError('INVALID_INPUT', 'no store: send open_store first');
  return store;
}
function session(a) {
  const s = sessions.get(a.session);
  if (!s) throw new ProtocolError('INVALID_INPUT', `session ${a.session} is not open in this runner`);
  return s;
}
function subagent(a) {
  const sub = subagents.get(`${a.session}/${a.agent}`);
  if (!sub) throw new ProtocolError('INVALID_INPUT', `subagent ${a.agent} is not open in this runner`);
  return sub;
}
function keep(s) {
  sessions.set(s.id, s);
  return { id: s.id };
}

// Graph checkpoints (docs/FORMAT.md §24): the arguments are the JSON the C ABI
// takes (bytes in base64) and the results its JSON, converted here to and from
// the Store's `{ type, bytes }` with the bytes in Buffers.
const typedIn = (v) => ({ type: v.type, bytes: Buffer.from(v.bytes, 'base64') });
const typedOut = (v) => ({ type: v.type, bytes: Buffer.from(v.bytes).toString('base64') });
function recordOut(r) {
  const values = {};
  for (const [channel, v] of Object.entries(r.values)) values[channel] = typedOut(v);
  return {
    ...r,
    values,
    writes: r.writes.map((w) => ({ ...w, value: typedOut(w.value) })),
    pendingSends: r.pendingSends.map(typedOut),
  };
}

const ops = {
  async open_store(a) {
    store = await Store.open(a.project, a.options ?? {});
    return { projectCode: store.info().projectCode };
  },
  create_session: async (a) => keep(await st().createSession(a.options ?? {})),
  open_session: async (a) => keep(await st().openSession(a.session)),
  fork_session: async (a) => keep(await st().forkSession(a.session, a.options ?? {})),
  async close_session(a) {
    const s = session(a);
    for (const [key, sub] of subagents) {
      if (key.startsWith(`${s.id}/`)) {
        await sub.close();
        subagents.delete(key);
      }
    }
    sessions.delete(s.id);
    await s.close();
    return null;
  },
  rename_session: (a) => st().renameSession(a.session, a.title),
  async delete_session(a) {
    await st().deleteSession(a.session);
    return null;
  },
  list_trash: () => st().listTrash(),
  restore_session: (a) => st().restoreSession(a.session),
  gc: () => st().gc(),
  doctor: (a) => st().doctor(a.options ?? {}),
  list_sessions: () => st().listSessions(),
  session_entry: (a) => st().sessionEntry(a.session),
  list_subagents: (a) => st().listSubagents(a.session),
  active_path: async (a) => (await st().readSession(a.session)).activePath(),
  ui_view: async (a) => (await st().readSession(a.session)).uiView(),
  model_view: (a) => st().modelView(a.session, a.options ?? {}),
  read_report: async (a) => (await st().readSession(a.session)).info().report,
  subagent_active_path: async (a) => (await st().readSubagent(a.session, a.agent)).activePath(),
  append: (a) => session(a).append(a.message),
  append_batch: (a) => session(a).appendBatch(a.messages),
  user_input: (a) => session(a).userInput(a.message),
  update_state: (a) => session(a).updateState(a.set),
  before_edit: (a) => session(a).beforeEdit(a.paths),
  after_edit: (a) => session(a).afterEdit(a.paths),
  select_compaction: (a) => session(a).selectCompaction(a.policy),
  apply_compaction: (a) => session(a).applyCompaction(a.replaces, a.summary),
  async resume_at(a) {
    await session(a).resumeAt(a.message);
    return null;
  },
  rewind_plan: (a) => session(a).rewindPlan(a.message),
  rewind: (a) => session(a).rewind(a.message, a.mode, { force: a.force ?? false }),
  async spawn_subagent(a) {
    const sub = await session(a).spawnSubagent(a.agent ?? null, a.meta ?? null);
    subagents.set(`${sub.sessionId}/${sub.id}`, sub);
    return { id: sub.id };
  },
  subagent_append: (a) => subagent(a).append(a.message),
  async subagent_finish(a) {
    await subagent(a).finish(a.result, a.failed ?? false);
    return null;
  },
  async checkpoint_put(a) {
    const p = a.put;
    await st().checkpointPut(a.thread, {
      ns: p.ns ?? '',
      checkpoint: p.checkpoint ?? {},
      metadata: p.metadata ?? {},
      parentId: p.parentId ?? null,
      values: (p.values ?? []).map((v) => ({ ...v, value: v.value == null ? null : typedIn(v.value) })),
    });
    return null;
  },
  async checkpoint_put_writes(a) {
    const w = a.writes;
    await st().checkpointPutWrites(a.thread, {
      ns: w.ns ?? '',
      checkpointId: w.checkpointId ?? '',
      taskId: w.taskId ?? '',
      taskPath: w.taskPath ?? '',
      writes: (w.writes ?? []).map((x) => ({ channel: x.channel, value: typedIn(x.value) })),
    });
    return null;
  },
  async checkpoint_get(a) {
    const r = await st().checkpointGet(a.thread, a.ns ?? '', a.checkpointId ?? null);
    return r === null ? null : recordOut(r);
  },
  checkpoint_list: async (a) => (await st().checkpointList(a.query ?? {})).map(recordOut),
  async checkpoint_copy_thread(a) {
    await st().checkpointCopyThread(a.source, a.target);
    return null;
  },
  async checkpoint_prune(a) {
    await st().checkpointPrune(a.threads, a.strategy);
    return null;
  },
  async checkpoint_delete_for_runs(a) {
    await st().checkpointDeleteForRuns(a.runs);
    return null;
  },
  async checkpoint_delete_thread(a) {
    await st().checkpointDeleteThread(a.thread);
    return null;
  },
};

async function answer(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    return { error: { code: 'INVALID_INPUT', message: `request is not JSON: ${e.message}` } };
  }
  const fn = Object.hasOwn(ops, req.op) ? ops[req.op] : null;
  if (!fn) return { error: { code: 'UNSUPPORTED_OP', message: `op ${JSON.stringify(req.op)} is not known to the Node runner` } };
  try {
    const result = await fn(req.args ?? {});
    return { ok: result === undefined ? null : result };
  } catch (e) {
    return { error: { code: typeof e.code === 'string' ? e.code : 'INTERNAL', message: String(e.message ?? e) } };
  }
}

// One request at a time, in order: each answer is written before the next is read.
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  process.stdout.write(`${JSON.stringify(await answer(line))}\n`);
}
for (const sub of subagents.values()) await sub.close();
for (const s of sessions.values()) await s.close();
if (store) await store.close();
