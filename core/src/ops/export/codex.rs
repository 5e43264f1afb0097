//! Export of a session's active path as a Codex CLI rollout (FORMAT.md §22.9),
//! a file `codex resume` lists and resumes.
//!
//! The shape is Codex's own: `{timestamp, type, payload}` lines, the first a
//! `session_meta` (openai/codex `codex-rs/core/src/rollout/recorder.rs` @
//! a9c11b5f0fdf0b6eb8a5e6e79055530b891732c0: the file name, the directory and
//! both timestamp forms; `SessionMeta` in `codex-rs/protocol/src/protocol.rs`).
//! Codex sends `response_item`s to the model and shows and lists `event_msg`s,
//! so every message the user typed or the assistant said is written as both.

use std::io::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::native::{native_id, write_new, ExportTarget, NativeExport};
use super::pairs::Pairs;
use crate::error::{Error, IoContext, Result};
use crate::format::ids::{format_ms, parse_ms};
use crate::format::records::content_text;
use crate::format::tool_calls::{tool_calls, tool_results};
use crate::platform::Private as _;
use crate::store::StoreCore;

/// How many lines from the top Codex's listing reads for the first
/// `user_message`, rounded down (`HEAD_RECORD_LIMIT` 10 +
/// `USER_EVENT_SCAN_LIMIT` 200 in openai/codex `codex-rs/rollout/src/list.rs`
/// @ c7b6324ec89a1cb9993309b97114fd50a76f7687): past it, it is not listed.
const LISTING_SCAN_LINES: usize = 200;

/// Export session `id` of `store` as a Codex rollout under `home` (absolute),
/// recording `provider` as its model provider.
pub(super) fn export(
    store: &StoreCore,
    id: &str,
    home: &Path,
    provider: &str,
) -> Result<NativeExport> {
    let view = store.read_session(id)?;
    let entry = store.session_entry(id)?;
    let messages: Vec<Value> = view.ui_view()?.iter().map(|m| m.value()).collect();
    let created_ms = parse_ms(&entry.created_at).unwrap_or(0);
    let (codex_id, id_source) = native_id(id, created_ms);

    let mut out = Rollout::new(created_ms);
    out.line(
        "session_meta",
        json!({
            "id": codex_id,
            "timestamp": format_ms(created_ms),
            "cwd": store.project_root().to_string_lossy(),
            "originator": "sessionkit",
            "cli_version": env!("CARGO_PKG_VERSION"),
            "instructions": null,
            "source": "cli",
            "model_provider": provider,
        }),
    );
    let dropped = items(&mut out, &messages);
    let items = out.lines.len() - 1;
    let notice = match out.first_user_event {
        Some(n) if n < LISTING_SCAN_LINES => None,
        Some(n) => Some(format!(
            "the first prompt is on line {}: `codex resume` lists only sessions with one in the first {LISTING_SCAN_LINES} lines; `codex resume {codex_id}` still resumes it",
            n + 1
        )),
        None => Some(format!(
            "the session has no user prompt: `codex resume` will not list it; `codex resume {codex_id}` still resumes it"
        )),
    };

    let date = format_ms(created_ms); // 2026-11-29T22:13:26.123Z
    let dir = home
        .join("sessions")
        .join(&date[0..4])
        .join(&date[5..7])
        .join(&date[8..10]);
    let stamp = date[..19].replace(':', "-");
    let path = dir.join(format!("rollout-{stamp}-{codex_id}.jsonl"));
    let bytes = out.bytes();
    let written = write_new(ExportTarget::Codex, &dir, &path, &bytes)?;
    name_thread(home, &codex_id, &entry.title, &entry.updated_at)?;
    Ok(NativeExport {
        to: ExportTarget::Codex,
        path,
        resume_command: format!("codex resume {codex_id}"),
        native_id: codex_id,
        id_source,
        items,
        dropped,
        written,
        notice,
    })
}

/// Give thread `codex_id` the name `title` in Codex's
/// `<home>/session_index.jsonl` (openai/codex
/// `codex-rs/rollout/src/session_index.rs` @
/// 4891934519fb8dd07f04c6ec2de8f488146db08c: append-only, one
/// `{"id","thread_name","updated_at"}` line per naming, the last for an id
/// wins), so that Codex shows the session by its title and `codex resume
/// <title>` finds it. Nothing when the title is empty or the file already
/// names the thread (a name given in Codex is kept; exporting again appends
/// nothing). One line appended with `O_APPEND`, as Codex appends, and synced.
fn name_thread(home: &Path, codex_id: &str, title: &str, updated_at: &str) -> Result<()> {
    if title.trim().is_empty() {
        return Ok(());
    }
    let path = home.join("session_index.jsonl");
    let existing = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let named = existing.split(|&b| b == b'\n').any(|line| {
        serde_json::from_slice::<Value>(line)
            .is_ok_and(|v| v.get("id").and_then(Value::as_str) == Some(codex_id))
    });
    if named {
        return Ok(());
    }
    let mut line = String::new();
    if existing.last().is_some_and(|&b| b != b'\n') {
        // A torn last line stays apart from ours.
        line.push('\n');
    }
    line.push_str(
        &json!({"id": codex_id, "thread_name": title, "updated_at": updated_at}).to_string(),
    );
    line.push('\n');
    // The rollout's directory under `home` exists: `home` does.
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .private()
        .open(&path)
        .at(&path)?;
    f.write_all(line.as_bytes()).at(&path)?;
    f.sync_all().at(&path)?;
    Ok(())
}

/// The lines of a rollout being made, with strictly increasing times.
struct Rollout {
    lines: Vec<String>,
    last_ms: u64,
    first_user_event: Option<usize>,
}

impl Rollout {
    fn new(start_ms: u64) -> Rollout {
        Rollout {
            lines: Vec::new(),
            // The first line takes `start_ms` itself.
            last_ms: start_ms.saturating_sub(1),
            first_user_event: None,
        }
    }

    /// A line at `at` (a message's time) or just after the line before,
    /// whichever is later: Codex does not compare times, but its own files
    /// only grow, and tools reading them expect that.
    fn line_at(&mut self, at: Option<u64>, kind: &str, payload: Value) {
        let ms = at.unwrap_or(0).max(self.last_ms + 1);
        self.last_ms = ms;
        let line = json!({"timestamp": format_ms(ms), "type": kind, "payload": payload});
        self.lines.push(line.to_string());
    }

    fn line(&mut self, kind: &str, payload: Value) {
        self.line_at(None, kind, payload);
    }

    fn user_event(&mut self, at: Option<u64>, text: &str) {
        self.first_user_event.get_or_insert(self.lines.len());
        self.line_at(
            at,
            "event_msg",
            json!({"type": "user_message", "message": text, "images": [],
                "local_images": [], "text_elements": []}),
        );
    }

    fn bytes(&self) -> Vec<u8> {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        s.into_bytes()
    }
}

/// Each message's lines; the number of messages that make none.
fn items(out: &mut Rollout, messages: &[Value]) -> usize {
    // A call goes as a `function_call` only when its result follows on the
    // path (Codex sends an unanswered call to the model, which refuses it);
    // otherwise call and result are flattened to text.
    let mut pairs = Pairs::new(messages);
    let mut dropped = 0;
    for (i, m) in messages.iter().enumerate() {
        let Some(m) = m.as_object() else { continue };
        let before = out.lines.len();
        let at = m
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_ms);
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let text = m.get("content").and_then(content_text).unwrap_or_default();
        let visible = m.get("visible") != Some(&Value::Bool(false));
        if m.get("meta").and_then(|x| x.get("compaction")).is_some() {
            out.line_at(at, "compacted", json!({"message": text}));
            continue;
        }
        match role {
            "tool" => {}
            "user" if !text.is_empty() => {
                out.line_at(at, "response_item", message("user", "input_text", &text));
                if visible {
                    out.user_event(at, &text);
                }
            }
            "system" | "developer" if !text.is_empty() => {
                out.line_at(
                    at,
                    "response_item",
                    message("developer", "input_text", &text),
                );
            }
            "assistant" if !text.is_empty() => {
                out.line_at(
                    at,
                    "response_item",
                    message("assistant", "output_text", &text),
                );
                if visible {
                    out.line_at(
                        at,
                        "event_msg",
                        json!({"type": "agent_message", "message": text}),
                    );
                }
            }
            _ => {}
        }
        for c in tool_calls(m) {
            let name = c.name.unwrap_or("?");
            let args = c.arguments_text();
            match c.id {
                Some(id) if pairs.call(id, i) => {
                    out.line_at(
                        at,
                        "response_item",
                        json!({"type": "function_call", "name": name,
                            "arguments": args, "call_id": id}),
                    );
                }
                _ => {
                    let t = format!("[tool call {name} {}]\n{args}", c.id.unwrap_or("-"));
                    out.line_at(at, "response_item", message("assistant", "output_text", &t));
                }
            }
        }
        for r in tool_results(m) {
            let output = r.text();
            match r.call_id {
                Some(id) if pairs.answer(id) => {
                    out.line_at(
                        at,
                        "response_item",
                        json!({"type": "function_call_output", "call_id": id, "output": output}),
                    );
                }
                _ => {
                    let t = format!("[tool result {}]\n{output}", r.call_id.unwrap_or("-"));
                    out.line_at(at, "response_item", message("user", "input_text", &t));
                }
            }
        }
        if out.lines.len() == before {
            dropped += 1;
        }
    }
    dropped
}

fn message(role: &str, kind: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_before_its_call_pairs_nothing() {
        let mut out = Rollout::new(1000);
        let call = json!({"role": "assistant", "content": "",
            "messageParams": {"tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "ls", "arguments": "{}"}}]}});
        let result =
            json!({"role": "tool", "content": "x", "messageParams": {"tool_call_id": "c1"}});
        items(&mut out, &[result.clone(), call.clone()]);
        assert!(
            out.lines.iter().all(|l| !l.contains("function_call")),
            "{:?}",
            out.lines
        );
        // The same call answered later, then repeated: the repeat is text.
        let mut out = Rollout::new(1000);
        items(&mut out, &[call.clone(), result, call]);
        assert!(out.lines[0].contains("\"type\":\"function_call\""));
        assert!(out.lines[1].contains("\"type\":\"function_call_output\""));
        assert!(
            out.lines[2].contains("[tool call ls c1]"),
            "{}",
            out.lines[2]
        );
    }

    #[test]
    fn unpaired_calls_are_text() {
        let mut out = Rollout::new(1000);
        let dropped = items(
            &mut out,
            &[
                json!({"role": "assistant", "content": "",
                    "messageParams": {"tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "ls", "arguments": "{}"}}]}}),
                json!({"role": "tool", "content": "orphan", "messageParams": {"tool_call_id": "c9"}}),
                json!({"role": "assistant", "content": "", "visible": false,
                    "messageParams": {"reasoning_content": "hmm"}}),
            ],
        );
        assert_eq!(dropped, 1);
        assert_eq!(out.lines.len(), 2);
        assert!(
            out.lines[0].contains("[tool call ls c1]"),
            "{}",
            out.lines[0]
        );
        assert!(
            out.lines[1].contains("[tool result c9]\\norphan"),
            "{}",
            out.lines[1]
        );
        assert!(out.lines[0].contains("\"timestamp\":\"1970-01-01T00:00:01.000Z\""));
        assert!(out.lines[1].contains("\"timestamp\":\"1970-01-01T00:00:01.001Z\""));
    }
}
