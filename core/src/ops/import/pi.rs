//! pi coding agent sessions (FORMAT.md §22.5):
//! `~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`, a `session` header
//! line, then entries with `id` / `parentId` forming a tree. `message` entries
//! of the roles a model sees become messages (their parents the nearest
//! message above them in pi's tree); every other entry is kept as an `import`
//! record.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::codex::line_id;
use super::source::SourceFile;
use super::{message, path_id, timestamp, title_of, Converted, Item};

pub(super) fn convert(file: &SourceFile) -> Converted {
    let mut out = Converted::default();
    // Every entry's parent, and which entries became messages (by pi id), so
    // that a message below a non-message entry hangs from the message above it.
    let mut parents: HashMap<String, Option<String>> = HashMap::new();
    let mut messages: HashMap<String, String> = HashMap::new();
    let mut ids: HashSet<String> = HashSet::new();
    let mut last: Option<String> = None;
    let mut name: Option<String> = None;
    let mut first_prompt: Option<String> = None;
    for (n, o) in file.objects() {
        let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
        let time = timestamp(o.get("timestamp"));
        if kind == "session" {
            if out.session_id.is_none() {
                out.session_id = path_id(o.get("id"));
                out.project = o.get("cwd").and_then(Value::as_str).map(PathBuf::from);
                out.created_at = time;
            }
            out.items.push(Item::record(n, "").noted(None));
            continue;
        }
        let entry_id = o.get("id").and_then(Value::as_str).map(str::to_string);
        let parent_entry = o
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(id) = &entry_id {
            parents
                .entry(id.clone())
                .or_insert_with(|| parent_entry.clone());
        }
        if kind == "session_info" {
            if let Some(t) = o.get("name").and_then(Value::as_str).map(title_of) {
                name = Some(t).filter(|t| !t.is_empty()).or(name);
            }
        }
        if kind != "message" {
            out.items.push(Item::record(
                n,
                format!("a {kind:?} entry: not a message, kept as a record"),
            ));
            continue;
        }
        let Some(Value::Object(msg)) = o.get("message") else {
            out.items.push(Item::record(
                n,
                "a message entry without a message object: kept as a record",
            ));
            continue;
        };
        // Version 1 files have no entry ids: pi chains them in file order.
        let id = match &entry_id {
            Some(id) if !id.is_empty() && !ids.contains(id) => id.clone(),
            Some(id) => {
                out.items.push(Item::record(
                    n,
                    format!("message entry id {id:?} repeated or empty: kept as a record"),
                ));
                continue;
            }
            None => line_id(n),
        };
        let mut note = None;
        let parent = match (&entry_id, &parent_entry) {
            (None, _) => last.clone(),
            (Some(_), None) => None,
            (Some(_), Some(p)) => {
                let found = message_above(p, &parents, &messages);
                if found.is_none() && !parents.contains_key(p) {
                    note = Some(format!(
                        "parentId {p:?} names no earlier entry: the message is a root"
                    ));
                }
                found
            }
        };
        let Some(m) = to_message(&id, parent.as_deref(), msg, time) else {
            let role = msg.get("role").and_then(Value::as_str).unwrap_or("?");
            out.items.push(Item::record(
                n,
                format!("a {role:?} message: not modelled, kept as a record"),
            ));
            continue;
        };
        if first_prompt.is_none() && msg.get("role").and_then(Value::as_str) == Some("user") {
            first_prompt = m
                .get("content")
                .and_then(crate::format::records::content_text)
                .map(|t| title_of(&t))
                .filter(|t| !t.is_empty());
        }
        ids.insert(id.clone());
        if let Some(e) = &entry_id {
            messages.insert(e.clone(), id.clone());
        }
        last = Some(id);
        out.items.push(Item::message(n, m).noted(note));
    }
    // As pi lists the session: its latest name, else its first user message
    // (not a command the user ran).
    out.title = name.or(first_prompt);
    out
}

/// The message nearest above entry `id` in pi's tree (itself if it is one).
fn message_above(
    id: &str,
    parents: &HashMap<String, Option<String>>,
    messages: &HashMap<String, String>,
) -> Option<String> {
    let mut at = id.to_string();
    // A cycle of parents in a damaged file ends at the bound.
    for _ in 0..=parents.len() {
        if let Some(m) = messages.get(&at) {
            return Some(m.clone());
        }
        at = parents.get(&at)?.clone()?;
    }
    None
}

/// A pi message as a sessionkit message, or `None` for a role not modelled.
fn to_message(
    id: &str,
    parent: Option<&str>,
    msg: &Map<String, Value>,
    time: Option<String>,
) -> Option<Map<String, Value>> {
    let role = msg.get("role").and_then(Value::as_str)?;
    let mut m;
    match role {
        "user" => {
            m = message(id, parent, "user", time);
            m.insert("content".into(), text_of(msg.get("content")));
        }
        "assistant" => {
            m = message(id, parent, "assistant", time);
            let blocks = msg
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut texts = Vec::new();
            let mut thinking = Vec::new();
            let mut calls = Vec::new();
            let mut other = Vec::new();
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => texts.push(
                        b.get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    ),
                    Some("thinking") => thinking.push(
                        b.get("thinking")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    ),
                    Some("toolCall") => calls.push(json!({
                        "id": b.get("id").cloned().unwrap_or(Value::Null),
                        "type": "function",
                        "function": {
                            "name": b.get("name").cloned().unwrap_or(Value::Null),
                            "arguments": b.get("arguments").map_or(Value::Null, |a| a.to_string().into()),
                        },
                    })),
                    _ => other.push(b),
                }
            }
            let content = if other.is_empty() {
                Value::String(texts.join("\n"))
            } else {
                // A block not modelled: the text and it, as blocks.
                let mut all: Vec<Value> = texts
                    .iter()
                    .map(|t| json!({"type": "text", "text": t}))
                    .collect();
                all.extend(other);
                Value::Array(all)
            };
            m.insert("content".into(), content);
            let mut params = Map::new();
            if !calls.is_empty() {
                params.insert("tool_calls".into(), Value::Array(calls));
            }
            if !thinking.is_empty() {
                params.insert("reasoning_content".into(), thinking.join("\n").into());
            }
            if !params.is_empty() {
                m.insert("messageParams".into(), Value::Object(params));
            }
            if let Some(u) = msg.get("usage") {
                m.insert("meta".into(), json!({"usage": u}));
            }
        }
        "toolResult" => {
            m = message(id, parent, "tool", time);
            m.insert("content".into(), text_of(msg.get("content")));
            m.insert(
                "messageParams".into(),
                json!({"tool_call_id": msg.get("toolCallId").cloned().unwrap_or(Value::Null)}),
            );
        }
        "bashExecution" => {
            // A command the user ran (`!cmd`): pi shows it to the model as a
            // user message holding the command and its output.
            m = message(id, parent, "user", time);
            let command = msg.get("command").and_then(Value::as_str).unwrap_or("");
            let output = msg.get("output").and_then(Value::as_str).unwrap_or("");
            m.insert("content".into(), format!("! {command}\n{output}").into());
            if msg.get("excludeFromContext") == Some(&Value::Bool(true)) {
                m.insert("visible".into(), false.into());
            }
        }
        _ => return None,
    }
    Some(m)
}

/// Content blocks of text only as one string; anything else as it is.
fn text_of(content: Option<&Value>) -> Value {
    let Some(Value::Array(blocks)) = content else {
        return content.cloned().unwrap_or(Value::Null);
    };
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b.get("text").and_then(Value::as_str),
            _ => None,
        })
        .collect();
    match texts {
        Some(t) => Value::String(t.join("\n")),
        None => Value::Array(blocks.clone()),
    }
}
