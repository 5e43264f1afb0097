//! Turning one message into readable lines: role, text, tool calls and results.

use serde_json::Value;
use sessionkit::{tool_calls, tool_results};

use crate::ctx::{clip, content_text, one_line, paint, role_style, short_time, DIM};

/// Lines and characters of a message text shown unless `--full`.
const TEXT_LINES: usize = 6;
const TEXT_CHARS: usize = 400;
const ARG_CHARS: usize = 100;

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
    let Some(msg) = m.as_object() else {
        return out;
    };
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
    for c in tool_calls(msg) {
        let args = c.arguments_text();
        let args = if full {
            args
        } else {
            clip(&one_line(&args), ARG_CHARS)
        };
        out.push(format!(
            "→ {} {}  {}",
            paint(role_style("tool"), c.name.unwrap_or("?")),
            args,
            paint(DIM, format!("[{}]", c.id.unwrap_or_default()))
        ));
    }
    for r in tool_results(msg) {
        let text = r.text();
        let head = format!(
            "← {}",
            paint(DIM, format!("[{}]", r.call_id.unwrap_or_default()))
        );
        if full {
            out.push(head);
            out.extend(text.lines().map(str::to_string));
        } else {
            let n = text.lines().count();
            out.push(format!(
                "{head} {}  {}",
                clip(&one_line(text.lines().next().unwrap_or("")), ARG_CHARS),
                paint(
                    DIM,
                    format!(
                        "({n} line{}, {} bytes)",
                        if n == 1 { "" } else { "s" },
                        text.len()
                    )
                )
            ));
        }
    }
    out
}
