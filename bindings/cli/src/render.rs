//! Turning one message into readable lines: role, text, tool calls and results.

use serde_json::Value;

use crate::ctx::{clip, content_text, one_line, paint, role_style, short_time, DIM};

/// Lines and characters of a message text shown unless `--full`.
const TEXT_LINES: usize = 6;
const TEXT_CHARS: usize = 400;
const ARG_CHARS: usize = 100;

/// A tool call found in a message, in either common style.
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub args: String,
}

/// A tool result found in a message.
pub struct ToolResult {
    pub call_id: String,
    pub text: String,
}

fn blocks<'a>(m: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    ["content", "contentParams"]
        .into_iter()
        .filter_map(move |f| m.get(f)?.as_array())
        .flatten()
        .filter(move |b| b.get("type").and_then(Value::as_str) == Some(kind))
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => sessionkit::content_text(v).unwrap_or_else(|| v.to_string()),
    }
}

pub fn tool_calls(m: &Value) -> Vec<ToolCall> {
    let mut out: Vec<ToolCall> = m
        .pointer("/messageParams/tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            id: c["id"].as_str().unwrap_or_default().to_string(),
            name: c
                .pointer("/function/name")
                .or_else(|| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            args: c
                .pointer("/function/arguments")
                .map(text_of)
                .unwrap_or_default(),
        })
        .collect();
    out.extend(blocks(m, "tool_use").map(|b| ToolCall {
        id: b["id"].as_str().unwrap_or_default().to_string(),
        name: b["name"].as_str().unwrap_or("?").to_string(),
        args: b.get("input").map(|v| v.to_string()).unwrap_or_default(),
    }));
    out
}

pub fn tool_results(m: &Value) -> Vec<ToolResult> {
    let mut out = Vec::new();
    if m["role"] == "tool" {
        let id = m
            .pointer("/messageParams/tool_call_id")
            .or_else(|| m.get("tool_call_id"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        out.push(ToolResult {
            call_id: id.to_string(),
            text: text_of(&m["content"]),
        });
    }
    out.extend(blocks(m, "tool_result").map(|b| ToolResult {
        call_id: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
        text: text_of(&b["content"]),
    }));
    out
}

/// The first lines of `text`, unless `full`; with a note of what was left out.
fn excerpt(text: &str, full: bool) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    if full || (lines.len() <= TEXT_LINES && text.chars().count() <= TEXT_CHARS) {
        return lines.iter().map(|l| l.to_string()).collect();
    }
    let mut out = Vec::new();
    let mut used = 0;
    for l in lines.iter().take(TEXT_LINES) {
        let room = TEXT_CHARS.saturating_sub(used);
        if room == 0 {
            break;
        }
        used += l.chars().count();
        out.push(clip(l, room));
    }
    out.push(paint(
        DIM,
        format!(
            "[… {} lines, {} characters in all; --full shows everything]",
            lines.len(),
            text.chars().count()
        ),
    ));
    out
}

/// The heading of a message: role, id, time and flags.
pub fn heading(m: &Value, id: &str, flags: &[&str]) -> String {
    let role = m["role"].as_str().unwrap_or("?");
    let mut s = format!("{} {}", paint(role_style(role), role), paint(DIM, id));
    if let Some(ts) = m["timestamp"].as_str() {
        s.push_str(&format!("  {}", paint(DIM, short_time(ts))));
    }
    for f in flags {
        s.push_str(&format!("  {}", paint(DIM, format!("({f})"))));
    }
    s
}

/// The body of a message, indented: text, reasoning, tool calls, tool results.
pub fn body(m: &Value, full: bool) -> Vec<String> {
    let mut out = Vec::new();
    let results = tool_results(m);
    if let Some(r) = m
        .pointer("/messageParams/reasoning_content")
        .and_then(Value::as_str)
    {
        let r = if full {
            r.to_string()
        } else {
            clip(&one_line(r), ARG_CHARS)
        };
        out.push(paint(DIM, format!("thinking: {r}")));
    }
    if m["role"] != "tool" {
        let text = content_text(m);
        if !text.is_empty() {
            out.extend(excerpt(&text, full));
        }
    }
    for c in tool_calls(m) {
        let args = if full {
            c.args.clone()
        } else {
            clip(&one_line(&c.args), ARG_CHARS)
        };
        out.push(format!(
            "→ {} {}  {}",
            paint(role_style("tool"), &c.name),
            args,
            paint(DIM, format!("[{}]", c.id))
        ));
    }
    for r in results {
        let head = format!("← {}", paint(DIM, format!("[{}]", r.call_id)));
        if full {
            out.push(head);
            out.extend(r.text.lines().map(str::to_string));
        } else {
            let n = r.text.lines().count();
            out.push(format!(
                "{head} {}  {}",
                clip(&one_line(r.text.lines().next().unwrap_or("")), ARG_CHARS),
                paint(
                    DIM,
                    format!(
                        "({n} line{}, {} bytes)",
                        if n == 1 { "" } else { "s" },
                        r.text.len()
                    )
                )
            ));
        }
    }
    out
}
