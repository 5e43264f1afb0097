//! The Rust runner of the scenario protocol (docs/FORMAT.md §21): reads one
//! request per line on stdin, `{"op": ..., "args": {...}}`, runs it through the
//! public API and answers one line on stdout, `{"ok": result}` or
//! `{"error": {"code", "message"}}`. Driven by `tests/scenarios/run.py`:
//!
//! ```text
//! cargo run -p sessionkit --example scenario_runner
//! ```

use std::collections::HashMap;
use std::io::{BufRead, Write};

use serde::Serialize;
use serde_json::{json, Value};
use sessionkit::{
    to_json_array, CheckpointPut, CheckpointQuery, CheckpointWrites, CompactionPolicy,
    CreateOptions, DoctorOptions, Error, ForkOptions, Message, ModelViewOptions, PruneStrategy,
    RewindMode, Session, Store, StoreOptions, Subagent,
};

/// The handles one runner process holds, by id.
#[derive(Default)]
struct Runner {
    store: Option<Store>,
    sessions: HashMap<String, Session>,
    /// Keyed by "session/agent"; closed before the sessions at exit.
    subagents: HashMap<String, Subagent>,
    /// Session ids in the order they were opened, so they close in that order.
    opened: Vec<String>,
}

/// A failure of the protocol rather than of the library: a missing argument or
/// an op this runner does not know.
fn protocol(code: &str, message: String) -> (String, String) {
    (code.to_string(), message)
}

fn library(e: Error) -> (String, String) {
    (e.kind().name().to_string(), e.to_string())
}

type Answer = Result<Value, (String, String)>;

fn to_value(v: impl Serialize) -> Answer {
    serde_json::to_value(v).map_err(|e| protocol("INTERNAL", e.to_string()))
}

/// A message as the library serialises it.
fn message(m: Message) -> Answer {
    serde_json::from_str(m.json()).map_err(|e| protocol("INTERNAL", e.to_string()))
}

fn messages(ms: Vec<Message>) -> Answer {
    serde_json::from_str(&to_json_array(&ms)).map_err(|e| protocol("INTERNAL", e.to_string()))
}

fn arg<'a>(args: &'a Value, name: &str) -> Result<&'a Value, (String, String)> {
    args.get(name)
        .ok_or_else(|| protocol("INVALID_INPUT", format!("missing argument {name:?}")))
}

fn arg_str<'a>(args: &'a Value, name: &str) -> Result<&'a str, (String, String)> {
    arg(args, name)?.as_str().ok_or_else(|| {
        protocol(
            "INVALID_INPUT",
            format!("argument {name:?} is not a string"),
        )
    })
}

/// An optional string argument.
fn opt_str<'a>(args: &'a Value, name: &str) -> Result<Option<&'a str>, (String, String)> {
    match args.get(name) {
        None => Ok(None),
        Some(_) => arg_str(args, name).map(Some),
    }
}

/// An optional object argument as JSON text, for the options parsers hosts use.
fn options_text(args: &Value, name: &str) -> String {
    args.get(name).map(Value::to_string).unwrap_or_default()
}

fn strings(args: &Value, name: &str) -> Result<Vec<String>, (String, String)> {
    serde_json::from_value(arg(args, name)?.clone())
        .map_err(|e| protocol("INVALID_INPUT", format!("argument {name:?}: {e}")))
}

impl Runner {
    fn store(&self) -> Result<&Store, (String, String)> {
        self.store
            .as_ref()
            .ok_or_else(|| protocol("INVALID_INPUT", "no store: send open_store first".into()))
    }

    fn session(&self, args: &Value) -> Result<&Session, (String, String)> {
        let id = arg_str(args, "session")?;
        self.sessions.get(id).ok_or_else(|| {
            protocol(
                "INVALID_INPUT",
                format!("session {id} is not open in this runner"),
            )
        })
    }

    fn subagent(&self, args: &Value) -> Result<&Subagent, (String, String)> {
        let key = format!("{}/{}", arg_str(args, "session")?, arg_str(args, "agent")?);
        self.subagents.get(&key).ok_or_else(|| {
            protocol(
                "INVALID_INPUT",
                format!("subagent {key} is not open in this runner"),
            )
        })
    }

    fn keep(&mut self, session: Session) -> Answer {
        let id = session.id().to_string();
        self.opened.push(id.clone());
        self.sessions.insert(id.clone(), session);
        Ok(json!({ "id": id }))
    }

    fn run(&mut self, op: &str, args: &Value) -> Answer {
        match op {
            "open_store" => {
                let options =
                    StoreOptions::from_json(&options_text(args, "options")).map_err(library)?;
                let store = Store::open(arg_str(args, "project")?, options).map_err(library)?;
                let code = store.project_code().to_string();
                self.store = Some(store);
                Ok(json!({ "projectCode": code }))
            }
            "create_session" => {
                let opts =
                    CreateOptions::from_json(&options_text(args, "options")).map_err(library)?;
                let s = self.store()?.create_session(opts).map_err(library)?;
                self.keep(s)
            }
            "open_session" => {
                let s = self
                    .store()?
                    .open_session(arg_str(args, "session")?)
                    .map_err(library)?;
                self.keep(s)
            }
            "fork_session" => {
                let opts =
                    ForkOptions::from_json(&options_text(args, "options")).map_err(library)?;
                let s = self
                    .store()?
                    .fork_session(arg_str(args, "session")?, opts)
                    .map_err(library)?;
                self.keep(s)
            }
            "close_session" => {
                let id = arg_str(args, "session")?;
                self.subagents
                    .retain(|key, _| !key.starts_with(&format!("{id}/")));
                let s = self.sessions.remove(id).ok_or_else(|| {
                    protocol("INVALID_INPUT", format!("session {id} is not open"))
                })?;
                self.opened.retain(|o| o != id);
                s.close().map_err(library)?;
                Ok(Value::Null)
            }
            "rename_session" => to_value(
                self.store()?
                    .rename_session(arg_str(args, "session")?, arg_str(args, "title")?)
                    .map_err(library)?,
            ),
            "delete_session" => {
                self.store()?
                    .delete_session(arg_str(args, "session")?)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "list_trash" => to_value(self.store()?.list_trash().map_err(library)?),
            "restore_session" => to_value(
                self.store()?
                    .restore_session(arg_str(args, "session")?)
                    .map_err(library)?,
            ),
            "gc" => to_value(self.store()?.gc_all(&mut |_| {}).map_err(library)?),
            "doctor" => {
                let opts =
                    DoctorOptions::from_json(&options_text(args, "options")).map_err(library)?;
                to_value(self.store()?.doctor(&opts, &mut |_| {}).map_err(library)?)
            }
            "list_sessions" => to_value(self.store()?.list_sessions().map_err(library)?),
            "session_entry" => to_value(
                self.store()?
                    .session_entry(arg_str(args, "session")?)
                    .map_err(library)?,
            ),
            "list_subagents" => to_value(
                self.store()?
                    .list_subagents(arg_str(args, "session")?)
                    .map_err(library)?,
            ),
            "active_path" => messages(
                self.store()?
                    .read_session(arg_str(args, "session")?)
                    .and_then(|v| v.active_path())
                    .map_err(library)?,
            ),
            "ui_view" => messages(
                self.store()?
                    .read_session(arg_str(args, "session")?)
                    .and_then(|v| v.ui_view())
                    .map_err(library)?,
            ),
            "model_view" => {
                let opts =
                    ModelViewOptions::from_json(&options_text(args, "options")).map_err(library)?;
                messages(
                    self.store()?
                        .model_view(arg_str(args, "session")?, &opts)
                        .map_err(library)?,
                )
            }
            "read_report" => to_value(
                self.store()?
                    .read_session(arg_str(args, "session")?)
                    .map_err(library)?
                    .report(),
            ),
            "subagent_active_path" => messages(
                self.store()?
                    .read_subagent(arg_str(args, "session")?, arg_str(args, "agent")?)
                    .and_then(|v| v.active_path())
                    .map_err(library)?,
            ),
            "append" => message(
                self.session(args)?
                    .append(arg(args, "message")?.clone())
                    .map_err(library)?,
            ),
            "append_batch" => {
                let batch = match arg(args, "messages")? {
                    Value::Array(a) => a.clone(),
                    _ => return Err(protocol("INVALID_INPUT", "messages is not a list".into())),
                };
                messages(self.session(args)?.append_batch(batch).map_err(library)?)
            }
            "user_input" => message(
                self.session(args)?
                    .user_input(arg(args, "message")?.clone())
                    .map_err(library)?,
            ),
            "update_state" => to_value(
                self.session(args)?
                    .update_state(arg(args, "set")?.clone())
                    .map_err(library)?,
            ),
            "before_edit" => to_value(
                self.session(args)?
                    .before_edit(&strings(args, "paths")?)
                    .map_err(library)?,
            ),
            "after_edit" => to_value(
                self.session(args)?
                    .after_edit(&strings(args, "paths")?)
                    .map_err(library)?,
            ),
            "select_compaction" => {
                let policy: CompactionPolicy = serde_json::from_value(arg(args, "policy")?.clone())
                    .map_err(|e| protocol("INVALID_INPUT", format!("policy: {e}")))?;
                to_value(
                    self.session(args)?
                        .select_compaction(&policy)
                        .map_err(library)?,
                )
            }
            "apply_compaction" => {
                let replaces: Vec<String> = serde_json::from_value(arg(args, "replaces")?.clone())
                    .map_err(|e| protocol("INVALID_INPUT", format!("replaces: {e}")))?;
                message(
                    self.session(args)?
                        .apply_compaction(&replaces, arg(args, "summary")?.clone())
                        .map_err(library)?,
                )
            }
            "resume_at" => {
                self.session(args)?
                    .resume_at(arg_str(args, "message")?)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "rewind_plan" => to_value(
                self.session(args)?
                    .rewind_plan(arg_str(args, "message")?)
                    .map_err(library)?,
            ),
            "rewind" => {
                let mode: RewindMode = arg_str(args, "mode")?.parse().map_err(library)?;
                let force = args.get("force").and_then(Value::as_bool).unwrap_or(false);
                to_value(
                    self.session(args)?
                        .rewind(arg_str(args, "message")?, mode, force)
                        .map_err(library)?,
                )
            }
            "spawn_subagent" => {
                // Absent metadata is `{}`, as in the C ABI, Python and Node.
                let meta = args.get("meta").cloned().unwrap_or_else(|| json!({}));
                let agent = args.get("agent").and_then(Value::as_str);
                let sub = self
                    .session(args)?
                    .spawn_subagent(agent, meta)
                    .map_err(library)?;
                let id = sub.id().to_string();
                self.subagents
                    .insert(format!("{}/{id}", sub.session_id()), sub);
                Ok(json!({ "id": id }))
            }
            "subagent_append" => message(
                self.subagent(args)?
                    .append(arg(args, "message")?.clone())
                    .map_err(library)?,
            ),
            "subagent_finish" => {
                let failed = args.get("failed").and_then(Value::as_bool).unwrap_or(false);
                self.subagent(args)?
                    .finish(arg(args, "result")?.clone(), failed)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            op if op.starts_with("checkpoint_") => self.checkpoint(op, args),
            _ => Err(protocol(
                "UNSUPPORTED_OP",
                format!("op {op:?} is not known to the Rust runner"),
            )),
        }
    }

    /// The graph checkpoint ops (FORMAT.md §24): the arguments are the JSON
    /// the C ABI takes, parsed by the library's own parsers.
    fn checkpoint(&self, op: &str, args: &Value) -> Answer {
        let store = self.store()?;
        match op {
            "checkpoint_put" => {
                let put =
                    CheckpointPut::from_json(&arg(args, "put")?.to_string()).map_err(library)?;
                store
                    .checkpoint_put(arg_str(args, "thread")?, put)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "checkpoint_put_writes" => {
                let w = CheckpointWrites::from_json(&arg(args, "writes")?.to_string())
                    .map_err(library)?;
                store
                    .checkpoint_put_task_writes(arg_str(args, "thread")?, w)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "checkpoint_get" => {
                let ns = opt_str(args, "ns")?.unwrap_or("");
                let id = opt_str(args, "checkpointId")?;
                to_value(
                    store
                        .checkpoint_get(arg_str(args, "thread")?, ns, id)
                        .map_err(library)?,
                )
            }
            "checkpoint_list" => {
                let q =
                    CheckpointQuery::from_json(&options_text(args, "query")).map_err(library)?;
                to_value(store.checkpoint_list(&q).map_err(library)?)
            }
            "checkpoint_copy_thread" => {
                store
                    .checkpoint_copy_thread(arg_str(args, "source")?, arg_str(args, "target")?)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "checkpoint_prune" => {
                let strategy: PruneStrategy =
                    arg_str(args, "strategy")?.parse().map_err(library)?;
                store
                    .checkpoint_prune(&strings(args, "threads")?, strategy)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "checkpoint_delete_for_runs" => {
                store
                    .checkpoint_delete_for_runs(&strings(args, "runs")?)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            "checkpoint_delete_thread" => {
                store
                    .checkpoint_delete_thread(arg_str(args, "thread")?)
                    .map_err(library)?;
                Ok(Value::Null)
            }
            _ => Err(protocol(
                "UNSUPPORTED_OP",
                format!("op {op:?} is not known to the Rust runner"),
            )),
        }
    }

    /// At the end of input: subagents first, then sessions in the order opened.
    fn close_all(&mut self) -> Result<(), Error> {
        self.subagents.clear();
        for id in std::mem::take(&mut self.opened) {
            if let Some(s) = self.sessions.remove(&id) {
                s.close()?;
            }
        }
        Ok(())
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut runner = Runner::default();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("scenario_runner: reading stdin: {e}");
                std::process::exit(2);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(req) => {
                let op = req.get("op").and_then(Value::as_str).unwrap_or("");
                let args = req.get("args").cloned().unwrap_or_else(|| json!({}));
                runner.run(op, &args)
            }
            Err(e) => Err(protocol(
                "INVALID_INPUT",
                format!("request is not JSON: {e}"),
            )),
        };
        let out = match answer {
            Ok(v) => json!({ "ok": v }),
            Err((code, message)) => json!({ "error": { "code": code, "message": message } }),
        };
        if writeln!(stdout, "{out}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            std::process::exit(2);
        }
    }
    if let Err(e) = runner.close_all() {
        eprintln!("scenario_runner: closing: {e}");
        std::process::exit(1);
    }
}
