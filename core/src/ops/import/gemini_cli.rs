//! Gemini CLI chats (FORMAT.md §22.6):
//! `~/.gemini/tmp/<project>/chats/session-*.jsonl`, a log Gemini CLI replays:
//! a metadata line, message records (a later line with the same `id`
//! replaces the earlier one), `{"$set": …}` metadata updates and
//! `{"$rewindTo": id}`. Messages go on one chain; a replacement is a sibling
//! of what it replaces and a rewind moves the chain back, so the active path
//! is what Gemini CLI shows while every earlier version stays in the tree.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::codex::line_id;
use super::source::SourceFile;
use super::{message, path_id, timestamp, title_of, Converted, Item};

/// The file beside a project's `chats/` folder naming the project's directory.
const PROJECT_ROOT_FILE: &str = ".project_root";

/// The longest `.project_root` read: a path, not a document.
const MAX_PROJECT_ROOT_BYTES: u64 = 64 * 1024;

/// One Gemini message id as imported: the message its latest version became
/// and that message's parent.
struct Seen {
    id: String,
    parent: Option<String>,
}

pub(super) fn convert(path: &Path, file: &SourceFile) -> Converted {
    let mut out = Converted::default();
    project_of(path, &mut out);
    let mut seen: HashMap<String, Seen> = HashMap::new();
    // Gemini ids in the order Gemini CLI holds them, for rewinds.
    let mut order: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let mut summary: Option<String> = None;
    let mut used: HashSet<String> = HashSet::new();
    for (n, o) in file.objects() {
        if let Some(set) = o.get("$set") {
            if let Some(s) = set.get("summary").and_then(Value::as_str) {
                summary = Some(title_of(s)).filter(|t| !t.is_empty());
            }
            let note = set.get("messages").and_then(Value::as_array).map(|m| {
                format!(
                    "a checkpoint of {} messages replacing the list: kept as a record, not replayed",
                    m.len()
                )
            });
            out.items.push(Item::record(n, "").noted(note));
            continue;
        }
        if let Some(target) = o.get("$rewindTo") {
            // Gemini CLI drops that message and every later one; here the
            // chain goes on from the message before it.
            match target.as_str().and_then(|t| seen.get(t).map(|s| (t, s))) {
                Some((t, s)) => {
                    last = s.parent.clone();
                    let at = order.iter().position(|g| g == t).unwrap_or(order.len());
                    for g in order.drain(at..) {
                        seen.remove(&g);
                    }
                }
                None => {
                    last = None;
                    order.clear();
                    seen.clear();
                }
            }
            out.items.push(Item::record(n, "").noted(None));
            continue;
        }
        let kind = o.get("type").and_then(Value::as_str);
        if kind.is_none() && o.contains_key("sessionId") {
            if out.session_id.is_none() {
                out.session_id = path_id(o.get("sessionId"));
                out.created_at = timestamp(o.get("startTime"));
            }
            if let Some(s) = o.get("summary").and_then(Value::as_str) {
                summary = Some(title_of(s)).filter(|t| !t.is_empty());
            }
            out.items.push(Item::record(n, "").noted(None));
            continue;
        }
        let Some(gid) = o
            .get("id")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
        else {
            out.items.push(Item::record(
                n,
                "a line without an id: not a message, kept as a record",
            ));
            continue;
        };
        let role = match kind {
            Some("user") => "user",
            Some("gemini") => "assistant",
            Some(k) => {
                out.items.push(Item::record(
                    n,
                    format!("a {k:?} notice: not for the model, kept as a record"),
                ));
                continue;
            }
            None => {
                out.items
                    .push(Item::record(n, "a record without a type: kept as a record"));
                continue;
            }
        };
        let time = timestamp(o.get("timestamp"));
        let (id, parent, note) = match seen.get(gid) {
            None => {
                order.push(gid.to_string());
                (gid.to_string(), last.clone(), None)
            }
            // A later version of the message at the end of the chain: its
            // sibling, so the active path shows the latest version.
            Some(s) if last.as_deref() == Some(s.id.as_str()) => (
                line_id(n),
                s.parent.clone(),
                Some(format!(
                    "replaces message {gid}: a sibling of its earlier version"
                )),
            ),
            Some(_) => {
                out.items.push(Item::record(
                    n,
                    format!("replaces message {gid}, which is not the last: kept as a record"),
                ));
                continue;
            }
        };
        // A Gemini id may have been imported as another message already (a
        // version dropped by a rewind): a new version takes its line's id.
        let id = if used.contains(&id) { line_id(n) } else { id };
        used.insert(id.clone());
        let m = to_message(&id, parent.as_deref(), role, o, time);
        seen.insert(
            gid.to_string(),
            Seen {
                id: id.clone(),
                parent,
            },
        );
        last = Some(id);
        out.items.push(Item::message(n, m).noted(note));
    }
    // As Gemini CLI lists the session: its summary, else its first prompt.
    out.title = summary.or_else(|| {
        out.items.iter().find_map(|i| match &i.what {
            super::What::Message(m) if m.get("role").and_then(Value::as_str) == Some("user") => m
                .get("content")
                .and_then(crate::format::records::content_text)
                .filter(|t| is_prompt(t))
                .map(|t| title_of(&t))
                .filter(|t| !t.is_empty()),
            _ => None,
        })
    });
    out
}

/// The project directory from `<project>/.project_root`, two levels above a
/// chat file (`<project>/chats/session-*.jsonl`): Gemini CLI records only a
/// hash of the directory in the chat itself.
fn project_of(path: &Path, out: &mut Converted) {
    let Some(dir) = path.parent().and_then(Path::parent) else {
        out.no_project = Some(format!("no folder above {}", path.display()));
        return;
    };
    let marker = dir.join(PROJECT_ROOT_FILE);
    // Only a small regular file is read: a FIFO there must not block the
    // import, nor a huge file fill memory.
    if !std::fs::metadata(&marker).is_ok_and(|m| m.is_file() && m.len() <= MAX_PROJECT_ROOT_BYTES) {
        out.no_project = Some(format!(
            "Gemini CLI records only a hash of it, and {} is missing or not a small regular file",
            marker.display()
        ));
        return;
    }
    match std::fs::read_to_string(&marker) {
        Ok(text) if !text.trim().is_empty() => {
            out.project = Some(PathBuf::from(text.trim_end_matches(['\n', '\r'])));
        }
        Ok(_) => out.no_project = Some(format!("{} is empty", marker.display())),
        Err(_) => {
            out.no_project = Some(format!(
                "Gemini CLI records only a hash of it, and {} is missing",
                marker.display()
            ))
        }
    }
}

/// A Gemini message record as a sessionkit message.
fn to_message(
    id: &str,
    parent: Option<&str>,
    role: &str,
    o: &Map<String, Value>,
    time: Option<String>,
) -> Map<String, Value> {
    let content = o.get("content");
    // A user record holding one tool response is that call's result.
    if role == "user" {
        if let Some((call, output)) = tool_response(content) {
            let mut m = message(id, parent, "tool", time);
            m.insert("content".into(), output);
            m.insert("messageParams".into(), json!({ "tool_call_id": call }));
            return m;
        }
    }
    let mut m = message(id, parent, role, time);
    m.insert("content".into(), text_of(content));
    let mut params = Map::new();
    if let Some(calls) = o.get("toolCalls").and_then(Value::as_array) {
        let calls: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({"id": c.get("id").cloned().unwrap_or(Value::Null), "type": "function",
                "function": {"name": c.get("name").cloned().unwrap_or(Value::Null),
                    "arguments": c.get("args").map_or(Value::Null, |a| a.to_string().into())}})
            })
            .collect();
        if !calls.is_empty() {
            params.insert("tool_calls".into(), Value::Array(calls));
        }
    }
    let thoughts: Vec<String> = o
        .get("thoughts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let s = t.get("subject").and_then(Value::as_str).unwrap_or("");
            let d = t.get("description").and_then(Value::as_str).unwrap_or("");
            if s.is_empty() {
                d.to_string()
            } else {
                format!("{s}: {d}")
            }
        })
        .collect();
    if !thoughts.is_empty() {
        params.insert("reasoning_content".into(), thoughts.join("\n").into());
    }
    if !params.is_empty() {
        m.insert("messageParams".into(), Value::Object(params));
    }
    if let Some(t) = o.get("tokens").filter(|t| t.is_object()) {
        m.insert("meta".into(), json!({ "usage": t }));
    }
    m
}

/// The call id and output of content that is exactly one `functionResponse`.
fn tool_response(content: Option<&Value>) -> Option<(Value, Value)> {
    let [part] = content?.as_array()?.as_slice() else {
        return None;
    };
    let r = part.get("functionResponse")?;
    let call = r.get("id").filter(|i| i.is_string())?.clone();
    let output = match r.get("response") {
        Some(resp) => match resp.get("output") {
            Some(Value::String(s)) => Value::String(s.clone()),
            _ => Value::String(resp.to_string()),
        },
        None => Value::Null,
    };
    Some((call, output))
}

/// Parts of text only (`{text}`) as one string; anything else as it is.
fn text_of(content: Option<&Value>) -> Value {
    let Some(Value::Array(parts)) = content else {
        return content.cloned().unwrap_or(Value::Null);
    };
    let texts: Option<Vec<&str>> = parts
        .iter()
        .map(|p| match p.as_object() {
            Some(o) if o.len() == 1 => o.get("text").and_then(Value::as_str),
            _ => None,
        })
        .collect();
    match texts {
        Some(t) => Value::String(t.join("\n")),
        None => Value::Array(parts.clone()),
    }
}

/// Whether a user text is a prompt as Gemini CLI lists sessions: not empty,
/// not a command (`/`, `?`) and not injected context.
fn is_prompt(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty()
        && !["/", "?", "<session_context>", "<hook_context>"]
            .iter()
            .any(|p| t.starts_with(p))
}
