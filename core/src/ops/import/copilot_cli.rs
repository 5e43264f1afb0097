//! GitHub Copilot CLI sessions (FORMAT.md §22.8):
//! `~/.copilot/session-state/<uuid>/events.jsonl`, one event a line, each
//! `{type, data, id, timestamp, parentId}` with a dotted `type`
//! (`session.start`, `user.message`, `assistant.message`, …). The events
//! chain in time order, not as a tree, so messages form one chain per agent:
//! the main agent's in the session, a subagent's (events carrying `agentId`)
//! in that subagent. Events that are not a turn of the conversation are kept
//! as `import` records.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::source::SourceFile;
use super::{message, path_id, timestamp, title_of, Converted, Item};

pub(super) fn convert(path: &Path, file: &SourceFile) -> Converted {
    let mut out = Converted::default();
    // The last message of each agent's chain (`None`: the main agent's).
    let mut last: HashMap<Option<String>, String> = HashMap::new();
    let mut ids: HashSet<String> = HashSet::new();
    let mut title: Option<String> = None;
    for (n, o) in file.objects() {
        let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
        let time = timestamp(o.get("timestamp"));
        let empty = Map::new();
        let data = o.get("data").and_then(Value::as_object).unwrap_or(&empty);
        match kind {
            "session.start" | "session.resume" | "session.context_changed" => {
                if kind == "session.start" && out.session_id.is_none() {
                    out.session_id = path_id(data.get("sessionId"));
                    out.created_at = timestamp(data.get("startTime")).or(time);
                }
                if out.project.is_none() {
                    // `session.context_changed` carries the context itself.
                    let context = data
                        .get("context")
                        .unwrap_or(o.get("data").unwrap_or(&Value::Null));
                    out.project = context
                        .get("cwd")
                        .and_then(Value::as_str)
                        .map(PathBuf::from);
                }
                out.items.push(Item::record(n, "").noted(None));
                continue;
            }
            "session.title_changed" => {
                if let Some(t) = data.get("title").and_then(Value::as_str).map(title_of) {
                    title = Some(t).filter(|t| !t.is_empty()).or(title);
                }
                out.items.push(Item::record(n, "").noted(None));
                continue;
            }
            "user.message" | "assistant.message" | "tool.execution_complete" => {}
            "session.compaction_complete"
                if data.get("summaryContent").is_some_and(Value::is_string) => {}
            _ => {
                out.items.push(Item::record(
                    n,
                    format!("a {kind:?} event: not a message, kept as a record"),
                ));
                continue;
            }
        }
        let Some(id) = o
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| crate::format::ids::validate_message_id(i).is_ok() && !ids.contains(*i))
        else {
            out.items.push(Item::record(
                n,
                format!(
                    "a {kind:?} event with a missing, invalid or repeated id: kept as a record"
                ),
            ));
            continue;
        };
        let agent = path_id(o.get("agentId"));
        let parent = last.get(&agent).cloned();
        let item = match kind {
            "user.message" => {
                // `content` is the prompt as typed and shown; what the model
                // was sent (`transformedContent`) stays in the raw line.
                let mut m = message(id, parent.as_deref(), "user", time);
                m.insert(
                    "content".into(),
                    data.get("content").cloned().unwrap_or(Value::Null),
                );
                Item::message(n, m)
            }
            "assistant.message" => Item::message(n, assistant(id, parent.as_deref(), data, time)),
            "tool.execution_complete" => {
                let mut m = message(id, parent.as_deref(), "tool", time);
                let output = match data.get("success") {
                    Some(Value::Bool(false)) => data.get("error").and_then(|e| e.get("message")),
                    _ => data.get("result").and_then(|r| r.get("content")),
                };
                m.insert("content".into(), output.cloned().unwrap_or(Value::Null));
                m.insert(
                    "messageParams".into(),
                    json!({ "tool_call_id": data.get("toolCallId").cloned().unwrap_or(Value::Null) }),
                );
                Item::message(n, m)
            }
            _ => {
                let mut m = message(id, parent.as_deref(), "system", time);
                m.insert(
                    "content".into(),
                    data.get("summaryContent").cloned().unwrap_or(Value::Null),
                );
                Item::compaction(n, m)
            }
        };
        ids.insert(id.to_string());
        last.insert(agent.clone(), id.to_string());
        out.items.push(Item { agent, ..item });
    }
    if out.session_id.is_none() {
        // `<uuid>/events.jsonl`: the folder is named after the session.
        out.session_id = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|s| s.to_str())
            .and_then(|s| path_id(Some(&Value::from(s))));
    }
    // As Copilot CLI lists the session: its latest title, else its first prompt.
    out.title = title.or_else(|| super::first_user_text(&out.items));
    out
}

/// An `assistant.message` event as an assistant message.
fn assistant(
    id: &str,
    parent: Option<&str>,
    data: &Map<String, Value>,
    time: Option<String>,
) -> Map<String, Value> {
    let mut m = message(id, parent, "assistant", time);
    m.insert(
        "content".into(),
        data.get("content").cloned().unwrap_or(Value::Null),
    );
    let mut params = Map::new();
    let calls: Vec<Value> = data
        .get("toolRequests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            let args = match r.get("arguments") {
                None | Some(Value::Null) => Value::from("{}"),
                Some(Value::String(s)) => Value::from(s.clone()),
                Some(a) => Value::from(a.to_string()),
            };
            json!({"id": r.get("toolCallId").cloned().unwrap_or(Value::Null), "type": "function",
                "function": {"name": r.get("name").cloned().unwrap_or(Value::Null), "arguments": args}})
        })
        .collect();
    if !calls.is_empty() {
        params.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(r) = data.get("reasoningText").and_then(Value::as_str) {
        params.insert("reasoning_content".into(), r.into());
    }
    if !params.is_empty() {
        m.insert("messageParams".into(), Value::Object(params));
    }
    m
}
