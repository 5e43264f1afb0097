//! Commands for what an agent writes besides messages: user inputs with their
//! file snapshots, edits, state, compaction and subagents. They let a shell
//! script be an agent, and let the CLI replay every scenario of
//! tests/scenarios (each command is one process; `--deterministic-state`
//! carries a reproducible run across them).

use serde_json::{json, Value};
use sessionkit::{CompactionPolicy, ErrorKind, Message, Session};

use crate::cli::{CompactCommand, SubagentCommand};
use crate::ctx::{paint, CliError, Ctx, Output, Result, BOLD, GOOD};

/// A JSON argument: the text itself, or stdin when it is `-`.
pub fn json_arg(what: &str, text: &str) -> Result<Value> {
    Ok(sessionkit::parse_json(what, &text_arg(what, text)?)?)
}

/// An argument's text: the text itself, or stdin when it is `-`.
pub fn text_arg(what: &str, text: &str) -> Result<String> {
    if text != "-" {
        return Ok(text.to_string());
    }
    std::io::read_to_string(std::io::stdin()).map_err(|e| {
        CliError::new(
            ErrorKind::of_io(&e),
            format!("reading {what} from stdin: {e}"),
        )
    })
}

/// Run `f` on session `id` open for writing, and close it (releasing the lock)
/// whatever `f` did.
fn with_session<T>(ctx: &Ctx, id: &str, f: impl FnOnce(&Session) -> Result<T>) -> Result<T> {
    let id = ctx.resolve(id)?;
    let s = ctx.store.open_session(&id)?;
    let out = f(&s);
    s.close()?;
    out
}

/// A stored message as output: its JSON, or one line naming it.
pub fn stored(ctx: &Ctx, verb: &str, m: &Message) -> Result<Output> {
    if ctx.json {
        return serde_json::from_str(m.json())
            .map(Output::Json)
            .map_err(|e| CliError::new(ErrorKind::Internal, format!("the stored message: {e}")));
    }
    Ok(Output::Text(format!(
        "{} message {}\n",
        paint(GOOD, verb),
        paint(BOLD, m.id())
    )))
}

pub fn user_input(ctx: &Ctx, id: &str, message: &str) -> Result<Output> {
    let message = json_arg("the message", message)?;
    let m = with_session(ctx, id, |s| Ok(s.user_input(message)?))?;
    stored(ctx, "appended (with a file snapshot)", &m)
}

pub fn snapshot(ctx: &Ctx, id: &str, after: bool, paths: &[String]) -> Result<Output> {
    let commit = with_session(ctx, id, |s| {
        Ok(if after {
            s.after_edit(paths)?
        } else {
            s.before_edit(paths)?
        })
    })?;
    if ctx.json {
        return Output::json(&commit);
    }
    Ok(Output::Text(format!(
        "{} {} ({} before the edit)\n",
        paint(GOOD, "snapshot"),
        paint(BOLD, &commit),
        if after { "after" } else { "before" }
    )))
}

pub fn state(ctx: &Ctx, id: &str, set: &str) -> Result<Output> {
    let set = json_arg("the state", set)?;
    let entry = with_session(ctx, id, |s| Ok(s.update_state(set)?))?;
    if ctx.json {
        return Output::json(&entry);
    }
    Ok(Output::Text(format!(
        "{} state of {}\n",
        paint(GOOD, "updated"),
        entry.id
    )))
}

pub fn compact(ctx: &Ctx, c: &CompactCommand) -> Result<Output> {
    match c {
        CompactCommand::Select {
            id,
            token_budget,
            keep_last_turns,
            summary_tokens,
        } => {
            let mut policy = CompactionPolicy::new(*token_budget);
            if let Some(n) = keep_last_turns {
                policy.keep_last_turns = *n;
            }
            if let Some(n) = summary_tokens {
                policy.summary_tokens = *n;
            }
            let plan = with_session(ctx, id, |s| Ok(s.select_compaction(&policy)?))?;
            if ctx.json {
                return Output::json(&plan);
            }
            Ok(Output::Text(match plan {
                None => "nothing to compact: the model view fits the budget\n".to_string(),
                Some(p) => format!(
                    "compact {} messages (ids in --json); then: sessionkit compact apply {id} SUMMARY ID...\n",
                    p.replaces.len()
                ),
            }))
        }
        CompactCommand::Apply {
            id,
            summary,
            replaces,
        } => {
            let summary = json_arg("the summary", summary)?;
            let m = with_session(ctx, id, |s| Ok(s.apply_compaction(replaces, summary)?))?;
            stored(ctx, "compacted into", &m)
        }
    }
}

pub fn subagent(ctx: &Ctx, c: &SubagentCommand) -> Result<Output> {
    match c {
        SubagentCommand::Spawn { id, agent, meta } => {
            let meta = match meta {
                Some(m) => json_arg("the subagent metadata", m)?,
                None => json!({}),
            };
            let agent = with_session(ctx, id, |s| {
                Ok(s.spawn_subagent(agent.as_deref(), meta)?.id().to_string())
            })?;
            if ctx.json {
                return Output::json(json!({ "id": agent }));
            }
            Ok(Output::Text(format!(
                "{} subagent {}\n",
                paint(GOOD, "spawned"),
                paint(BOLD, &agent)
            )))
        }
        SubagentCommand::Append { id, agent, message } => {
            let message = json_arg("the message", message)?;
            let m = with_session(ctx, id, |s| Ok(s.open_subagent(agent)?.append(message)?))?;
            stored(ctx, "appended", &m)
        }
        SubagentCommand::Finish {
            id,
            agent,
            result,
            failed,
        } => {
            let result = json_arg("the result", result)?;
            with_session(ctx, id, |s| {
                Ok(s.open_subagent(agent)?.finish(result, *failed)?)
            })?;
            if ctx.json {
                return Output::json(json!({ "id": agent, "failed": failed }));
            }
            Ok(Output::Text(format!(
                "{} subagent {}\n",
                paint(GOOD, if *failed { "failed" } else { "finished" }),
                agent
            )))
        }
        SubagentCommand::Show { id, agent } => {
            let id = ctx.resolve(id)?;
            let messages = ctx.store.read_subagent(&id, agent)?.active_path()?;
            let values: Vec<Value> = messages.iter().map(|m| m.value()).collect();
            if ctx.json {
                return Output::json(json!({ "session": id, "agent": agent, "messages": values }));
            }
            let mut s = String::new();
            for m in &values {
                crate::sessions::render_message(
                    &mut s,
                    m,
                    m["id"].as_str().unwrap_or(""),
                    &[],
                    false,
                );
            }
            Ok(Output::Text(s))
        }
    }
}
