//! Codex CLI rollouts (FORMAT.md §22.3): `{timestamp, type, payload}` lines.
//! `response_item` messages, function calls and their outputs, and reasoning
//! become messages in one chain, with ids from their line numbers (Codex
//! items carry none); `compacted` becomes a compaction; `session_meta` names
//! the session and project; the rest is kept as `import` records.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::source::SourceFile;
use super::{message, path_id, timestamp, Converted, Item, What};

/// The message id of the item on source line `n`.
pub(super) fn line_id(n: u64) -> String {
    format!("line-{n}")
}

pub(super) fn convert(file: &SourceFile) -> Converted {
    let mut out = Converted::default();
    let mut last: Option<String> = None;
    for (n, o) in file.objects() {
        let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
        let time = timestamp(o.get("timestamp"));
        // Older rollouts: a first line of metadata, then bare response items.
        let legacy = !o.contains_key("payload");
        let payload = match o.get("payload") {
            Some(Value::Object(p)) => Some(p),
            Some(_) => None,
            None if legacy && kind.is_empty() && o.contains_key("id") => {
                meta(&mut out, o, time);
                out.items
                    .push(Item::record(n, "session metadata").noted(None));
                continue;
            }
            None if legacy && !kind.is_empty() => Some(o),
            None => None,
        };
        let what = if legacy { "response_item" } else { kind };
        let Some(p) = payload else {
            out.items.push(Item::record(
                n,
                format!("a {kind:?} line without a payload object: kept as a record"),
            ));
            continue;
        };
        let item = match what {
            "session_meta" => {
                meta(&mut out, p, time.or_else(|| timestamp(p.get("timestamp"))));
                Item::record(n, "").noted(None)
            }
            "response_item" => response_item(n, p, time, last.as_deref()),
            "compacted" => {
                let mut m = message(&line_id(n), last.as_deref(), "system", time);
                m.insert(
                    "content".into(),
                    p.get("message").cloned().unwrap_or(Value::Null),
                );
                Item::compaction(n, m)
            }
            "turn_context" => {
                if out.project.is_none() {
                    out.project = p.get("cwd").and_then(Value::as_str).map(PathBuf::from);
                }
                Item::record(n, "turn_context: not modelled, kept as a record")
            }
            "event_msg" => Item::record(
                n,
                format!(
                    "event_msg {}: not modelled (messages come from response items), kept as a record",
                    p.get("type").and_then(Value::as_str).unwrap_or("?")
                ),
            ),
            k => Item::record(n, format!("{k:?} line: not modelled, kept as a record")),
        };
        if !matches!(item.what, What::Record) {
            last = Some(line_id(n));
        }
        out.items.push(item);
    }
    // The title as Codex lists it: the first prompt typed (a `user_message`
    // event), else the first user message that is not injected context.
    out.title = file
        .objects()
        .filter(|(_, o)| o.get("type").and_then(Value::as_str) == Some("event_msg"))
        .filter_map(|(_, o)| o.get("payload"))
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("user_message"))
        .filter_map(|p| p.get("message").and_then(Value::as_str))
        .find_map(prompt)
        .or_else(|| {
            out.items.iter().find_map(|i| match &i.what {
                What::Message(m)
                    if m.get("role").and_then(Value::as_str) == Some("user")
                        && m.get("visible") != Some(&Value::Bool(false)) =>
                {
                    m.get("content").and_then(Value::as_str).and_then(prompt)
                }
                _ => None,
            })
        });
    out
}

fn meta(out: &mut Converted, p: &Map<String, Value>, time: Option<String>) {
    if out.session_id.is_none() {
        out.session_id = path_id(p.get("id"));
    }
    if out.project.is_none() {
        out.project = p.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    }
    if out.created_at.is_none() {
        out.created_at = time;
    }
}

fn response_item(n: u64, p: &Map<String, Value>, time: Option<String>, last: Option<&str>) -> Item {
    let id = line_id(n);
    let str_of = |k: &str| p.get(k).and_then(Value::as_str);
    let kind = str_of("type").unwrap_or("");
    let mut m;
    match kind {
        "message" => {
            let role = match str_of("role") {
                Some("assistant") => "assistant",
                Some("developer" | "system") => "system",
                _ => "user",
            };
            m = message(&id, last, role, time);
            let content = text_of(p.get("content"));
            let injected = role == "user" && content.as_str().is_some_and(is_preamble);
            m.insert("content".into(), content);
            if injected {
                m.insert("visible".into(), false.into());
            }
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            let Some(call_id) = str_of("call_id").or_else(|| str_of("id")) else {
                return Item::record(n, format!("{kind} without call_id: kept as a record"));
            };
            let arguments = match kind {
                "function_call" => p.get("arguments").cloned(),
                "custom_tool_call" => p.get("input").cloned(),
                _ => p.get("action").map(|a| Value::String(a.to_string())),
            }
            .unwrap_or(Value::Null);
            let name = str_of("name").unwrap_or(if kind == "local_shell_call" {
                "local_shell"
            } else {
                "?"
            });
            m = message(&id, last, "assistant", time);
            m.insert("content".into(), "".into());
            m.insert(
                "messageParams".into(),
                json!({"tool_calls": [{"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": arguments}}]}),
            );
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let Some(call_id) = str_of("call_id") else {
                return Item::record(n, format!("{kind} without call_id: kept as a record"));
            };
            m = message(&id, last, "tool", time);
            let output = match p.get("output") {
                Some(Value::String(s)) => Value::String(s.clone()),
                // Older rollouts: {"content": …, "success": …}.
                Some(Value::Object(o)) => o
                    .get("content")
                    .cloned()
                    .unwrap_or_else(|| Value::String(Value::Object(o.clone()).to_string())),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            m.insert("content".into(), output);
            m.insert("messageParams".into(), json!({"tool_call_id": call_id}));
        }
        "reasoning" => {
            let summary: Vec<&str> = p
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .collect();
            m = message(&id, last, "assistant", time);
            m.insert("content".into(), "".into());
            m.insert(
                "messageParams".into(),
                json!({"reasoning_content": summary.join("\n")}),
            );
            m.insert("visible".into(), false.into());
        }
        k => {
            return Item::record(
                n,
                format!("response_item {k:?}: not modelled, kept as a record"),
            )
        }
    }
    Item::message(n, m)
}

/// Content blocks of text only (`input_text`, `output_text`) as one string;
/// anything else as it is.
fn text_of(content: Option<&Value>) -> Value {
    let Some(Value::Array(blocks)) = content else {
        return content.cloned().unwrap_or(Value::Null);
    };
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text" | "text") => b.get("text").and_then(Value::as_str),
            _ => None,
        })
        .collect();
    match texts {
        Some(t) => Value::String(t.join("\n")),
        None => Value::Array(blocks.clone()),
    }
}

/// Context the CLI injects as user text, not typed by the user.
fn is_preamble(text: &str) -> bool {
    let t = text.trim_start();
    [
        "<environment_context>",
        "<user_instructions>",
        "<developer_instructions>",
        "<INSTRUCTIONS>",
        "<turn_aborted>",
        "<user_shell_command>",
        "# AGENTS.md instructions",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

/// A user text as a title: `None` for injected context; of a prompt sent from
/// an IDE extension (its context, then `## My request for Codex:`), the request.
fn prompt(text: &str) -> Option<String> {
    if is_preamble(text) {
        return None;
    }
    let text = text
        .rsplit_once("## My request for Codex:")
        .map_or(text, |(_, request)| request);
    Some(super::title_of(text)).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::prompt;

    #[test]
    fn injected_context_is_no_title() {
        assert_eq!(
            prompt("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
            None
        );
        assert_eq!(
            prompt("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>…"),
            None
        );
        assert_eq!(
            prompt("  Fix the\n  flaky test "),
            Some("Fix the flaky test".into())
        );
        assert_eq!(
            prompt("# Context from my IDE setup:\n\n## Open tabs:\n- a.rs\n\n## My request for Codex:\nRename foo"),
            Some("Rename foo".into())
        );
    }
}
