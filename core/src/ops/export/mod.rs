//! Export of a session's active path: seed-style JSONL (one message object per
//! line, as the seed systems store them) or a Markdown transcript; to another
//! agent's own store (`native`): a Claude Code transcript (`claude_code`) or a
//! Codex rollout (`codex`).

mod claude_code;
mod codex;
pub(crate) mod native;
mod pairs;

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::format::tool_calls::{tool_calls, tool_results};
use crate::store::StoreCore;

/// The form of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// The default. One message object per line, without the record `type`, as a seed-style
    /// transcript; `visible` and `compacted` always present.
    #[default]
    Jsonl,
    /// A readable transcript: title, then each message with its tool calls and
    /// results folded in `<details>`.
    Markdown,
    /// The UI view (the active path with `visible` and `compacted` flags) as
    /// one JSON array of message objects.
    Json,
}

impl ExportFormat {
    /// Every format.
    pub const ALL: [ExportFormat; 3] = [
        ExportFormat::Jsonl,
        ExportFormat::Markdown,
        ExportFormat::Json,
    ];
}

impl std::str::FromStr for ExportFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<ExportFormat> {
        match s {
            "jsonl" => Ok(ExportFormat::Jsonl),
            "markdown" => Ok(ExportFormat::Markdown),
            "json" => Ok(ExportFormat::Json),
            _ => Err(Error::invalid(format!(
                "export format {s:?} is not one of \"jsonl\", \"markdown\", \"json\""
            ))),
        }
    }
}

/// The session `id` exported in `format`.
pub(crate) fn export(store: &StoreCore, id: &str, format: ExportFormat) -> Result<String> {
    let view = store.read_session(id)?;
    let messages: Vec<Value> = view.ui_view()?.iter().map(|m| m.value()).collect();
    match format {
        ExportFormat::Jsonl => Ok(jsonl(messages)),
        ExportFormat::Json => {
            let mut s = Value::Array(messages).to_string();
            s.push('\n');
            Ok(s)
        }
        ExportFormat::Markdown => {
            let entry = store.session_entry(id)?;
            let mut s = format!("# {}\n\n", one_line(&entry.title));
            let _ = writeln!(
                s,
                "Session `{id}`, created {}, {} messages on the active path.\n",
                entry.created_at,
                messages.len()
            );
            for m in &messages {
                markdown_message(&mut s, m);
            }
            Ok(s)
        }
    }
}

fn jsonl(messages: Vec<Value>) -> String {
    let mut s = String::new();
    for mut v in messages {
        if let Some(o) = v.as_object_mut() {
            o.shift_remove("type");
        }
        s.push_str(&v.to_string());
        s.push('\n');
    }
    s
}

fn markdown_message(s: &mut String, m: &Value) {
    let role = m["role"].as_str().unwrap_or("?");
    let mut title = capitalized(role);
    if m["visible"] == false {
        title.push_str(" (hidden)");
    }
    if m["compacted"] == true {
        title.push_str(" (compacted)");
    }
    if m.pointer("/meta/compaction").is_some() {
        title = "Compaction summary".into();
    }
    let _ = writeln!(s, "## {title}\n");
    let text = m
        .get("content")
        .and_then(crate::format::records::content_text)
        .unwrap_or_default();
    if !text.is_empty() && role != "tool" {
        let _ = writeln!(s, "{}\n", text.trim_end());
    }
    let Some(m) = m.as_object() else { return };
    for c in tool_calls(m) {
        let _ = writeln!(
            s,
            "<details><summary>Tool call <code>{}</code> (<code>{}</code>)</summary>\n\n```json\n{}\n```\n\n</details>\n",
            html(c.name.unwrap_or("?")),
            html(c.id.unwrap_or_default()),
            c.arguments_text()
        );
    }
    for r in tool_results(m) {
        let _ = writeln!(
            s,
            "<details><summary>Tool result (<code>{}</code>)</summary>\n\n```\n{}\n```\n\n</details>\n",
            html(r.call_id.unwrap_or_default()),
            r.text().trim_end()
        );
    }
}

/// `s` safe inside an HTML element (a tool name or id in a `<summary>`).
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `s` on one line: runs of whitespace become one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn format_names() {
        assert_eq!(
            "jsonl".parse::<ExportFormat>().unwrap(),
            ExportFormat::Jsonl
        );
        assert_eq!(
            serde_json::from_value::<ExportFormat>(json!("markdown")).unwrap(),
            ExportFormat::Markdown
        );
        let e = "html".parse::<ExportFormat>().unwrap_err();
        assert!(e.to_string().contains("\"html\""), "{e}");
    }

    #[test]
    fn a_message_in_markdown() {
        let mut s = String::new();
        markdown_message(
            &mut s,
            &json!({"role": "assistant", "content": "Let me look.  \n", "visible": false,
                "messageParams": {"tool_calls": [{"id": "c1",
                    "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]}}),
        );
        assert_eq!(
            s,
            "## Assistant (hidden)\n\nLet me look.\n\n<details><summary>Tool call <code>read</code> (<code>c1</code>)</summary>\n\n```json\n{\"path\":\"a\"}\n```\n\n</details>\n\n"
        );
        let mut s = String::new();
        markdown_message(
            &mut s,
            &json!({"role": "tool", "content": "done\n", "messageParams": {"tool_call_id": "c1"}}),
        );
        assert_eq!(
            s,
            "## Tool\n\n<details><summary>Tool result (<code>c1</code>)</summary>\n\n```\ndone\n```\n\n</details>\n\n"
        );
        let mut s = String::new();
        markdown_message(&mut s, &json!({"role": "", "content": "x"}));
        assert_eq!(s, "## \n\nx\n\n");
    }
}
