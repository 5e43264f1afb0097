//! `sessionkit checkpoint`: a graph checkpointer's threads (LangGraph's saver,
//! docs/FORMAT.md §24) from the command line. The commands take and print the
//! JSON of the C ABI's `sk_checkpoint_*` (values as `{"type", "bytes"}`, bytes
//! in base64), so a script, or the CLI runner of tests/scenarios, writes what
//! a saver writes.

use std::fmt::Write as _;

use serde_json::{json, Value};
use sessionkit::{CheckpointPut, CheckpointQuery, CheckpointTuple, CheckpointWrites, TypedValue};

use crate::agent::text_arg;
use crate::cli::CheckpointCommand;
use crate::ctx::{paint, Ctx, Output, Result, BOLD, DIM, GOOD};

pub fn checkpoint(ctx: &Ctx, c: &CheckpointCommand) -> Result<Output> {
    match c {
        CheckpointCommand::Put { thread, put } => {
            let put = CheckpointPut::from_json(&text_arg("the checkpoint", put)?)?;
            let id = put
                .checkpoint
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let (ns, values) = (put.ns.clone(), put.values.len());
            ctx.store.checkpoint_put(thread, put)?;
            if ctx.json {
                return Output::json(json!({"threadId": thread, "ns": ns, "checkpointId": id}));
            }
            Ok(Output::Text(format!(
                "{} checkpoint {} of thread {thread}{} ({values} new channel versions)\n",
                paint(GOOD, "stored"),
                paint(BOLD, &id),
                namespace(&ns),
            )))
        }
        CheckpointCommand::Writes { thread, writes } => {
            let w = CheckpointWrites::from_json(&text_arg("the writes", writes)?)?;
            let out = json!({
                "threadId": thread,
                "ns": w.ns,
                "checkpointId": w.checkpoint_id,
                "taskId": w.task_id,
                "writes": w.writes.len(),
            });
            let text = format!(
                "{} {} writes of task {} on checkpoint {} of thread {thread}{}\n",
                paint(GOOD, "stored"),
                w.writes.len(),
                w.task_id,
                paint(BOLD, &w.checkpoint_id),
                namespace(&w.ns),
            );
            ctx.store.checkpoint_put_task_writes(thread, w)?;
            Ok(if ctx.json {
                Output::Json(out)
            } else {
                Output::Text(text)
            })
        }
        CheckpointCommand::Get { thread, ns, id } => {
            let t = ctx.store.checkpoint_get(thread, ns, id.as_deref())?;
            if ctx.json {
                return Output::json(&t);
            }
            Ok(Output::Text(match t {
                Some(t) => render(&t),
                None => format!("no checkpoint in thread {thread}{}\n", namespace(ns)),
            }))
        }
        CheckpointCommand::List { query } => {
            let q = match query {
                Some(q) => CheckpointQuery::from_json(&text_arg("the query", q)?)?,
                None => CheckpointQuery::default(),
            };
            let ts = ctx.store.checkpoint_list(&q)?;
            if ctx.json {
                return Output::json(&ts);
            }
            if ts.is_empty() {
                return Ok(Output::Text("no checkpoints\n".into()));
            }
            Ok(Output::Text(ts.iter().map(render).collect()))
        }
        CheckpointCommand::Copy { source, target } => {
            ctx.store.checkpoint_copy_thread(source, target)?;
            if ctx.json {
                return Output::json(json!({"source": source, "target": target}));
            }
            Ok(Output::Text(format!(
                "{} thread {source} into thread {target}\n",
                paint(GOOD, "copied")
            )))
        }
        CheckpointCommand::Prune { strategy, threads } => {
            ctx.store.checkpoint_prune(threads, strategy.parse()?)?;
            if ctx.json {
                return Output::json(json!({"threads": threads, "strategy": strategy}));
            }
            Ok(Output::Text(format!(
                "{} {} thread(s): {}\n",
                paint(GOOD, "pruned"),
                threads.len(),
                if strategy == "delete" {
                    "moved to the trash"
                } else {
                    "each namespace's newest checkpoint kept"
                }
            )))
        }
        CheckpointCommand::DeleteRuns { runs } => {
            ctx.store.checkpoint_delete_for_runs(runs)?;
            if ctx.json {
                return Output::json(json!({ "runs": runs }));
            }
            Ok(Output::Text(format!(
                "{} the checkpoints of {} run(s) in every thread\n",
                paint(GOOD, "removed"),
                runs.len()
            )))
        }
        CheckpointCommand::Delete { thread } => {
            let session = sessionkit::conversation_session_id(thread)?;
            let existed = ctx.log_path(&session).exists();
            ctx.store.checkpoint_delete_thread(thread)?;
            if ctx.json {
                return Output::json(
                    json!({"threadId": thread, "sessionId": session, "trashed": existed}),
                );
            }
            Ok(Output::Text(if existed {
                format!(
                    "{} thread {thread} (session {session}) to the trash; `sessionkit restore {session}` brings it back\n",
                    paint(GOOD, "moved"),
                )
            } else {
                format!("thread {thread} has no session: nothing to delete\n")
            }))
        }
    }
}

/// ` (namespace NS)`, or nothing for the graph's own.
fn namespace(ns: &str) -> String {
    if ns.is_empty() {
        String::new()
    } else {
        format!(" (namespace {ns})")
    }
}

fn value(v: &TypedValue) -> String {
    format!("{}, {} bytes", v.kind, v.bytes.len())
}

/// A checkpoint for a person: its place, metadata, values and writes.
fn render(t: &CheckpointTuple) -> String {
    let meta = |k: &str| match t.metadata.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "?".into(),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} {}{}  step {} · {}{}",
        paint(BOLD, &t.id),
        paint(DIM, format!("thread {}", t.thread_id)),
        paint(DIM, namespace(&t.ns)),
        meta("step"),
        meta("source"),
        match &t.parent_id {
            Some(p) => paint(DIM, format!(" · after {p}")),
            None => String::new(),
        }
    );
    for (channel, v) in &t.values {
        let _ = writeln!(s, "  {channel} = ({})", value(v));
    }
    for w in &t.writes {
        let _ = writeln!(
            s,
            "  {} {} {}[{}] ({})",
            paint(DIM, "write"),
            w.channel,
            paint(DIM, format!("by task {} ", w.task_id)),
            w.idx,
            value(&w.value)
        );
    }
    if !t.pending_sends.is_empty() {
        let _ = writeln!(s, "  {} pending sends", t.pending_sends.len());
    }
    s
}
