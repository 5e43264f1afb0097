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
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{Error, IoContext, Result};
use crate::format::ids::{format_ms, parse_ms};
use crate::format::records::content_text;
use crate::format::tool_calls::{tool_calls, tool_results};
use crate::store::StoreCore;

/// How many lines from the top Codex's listing reads for the first
/// `user_message`, rounded down (`HEAD_RECORD_LIMIT` 10 +
/// `USER_EVENT_SCAN_LIMIT` 200 in openai/codex `codex-rs/rollout/src/list.rs`
/// @ c7b6324ec89a1cb9993309b97114fd50a76f7687): past it, it is not listed.
const LISTING_SCAN_LINES: usize = 200;

/// Options of [`Store::export_codex`](crate::Store::export_codex), as JSON
/// `{"codexHome": "/abs/dir", "modelProvider": "openai"}`; both optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodexExportOptions {
    /// Codex's home directory, absolute; default `$CODEX_HOME`, else `~/.codex`.
    #[serde(default)]
    pub codex_home: Option<PathBuf>,
    /// The `model_provider` recorded: Codex's picker lists only the sessions of
    /// the provider it is configured with. Default `openai`.
    #[serde(default)]
    pub model_provider: Option<String>,
}

impl CodexExportOptions {
    /// Options from their JSON text (`InvalidInput` naming what is wrong).
    pub fn from_json(text: &str) -> Result<CodexExportOptions> {
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("codex export options: {e}")))
    }
}

/// Where the Codex session id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CodexIdSource {
    /// The session's own id, a UUID.
    Session,
    /// A UUIDv7 made for the export, the same on every export of the
    /// session: its time is the session's creation, its random bits a hash of
    /// the session id (Codex needs a UUID; sessionkit ids need not be one).
    Derived,
}

/// What [`Store::export_codex`](crate::Store::export_codex) wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexExport {
    /// The rollout file.
    pub path: PathBuf,
    /// The Codex session id (in the file name and in `session_meta`).
    pub codex_id: String,
    /// Where `codex_id` comes from.
    pub id_source: CodexIdSource,
    /// The lines written after `session_meta`.
    pub items: usize,
    /// Messages of the active path written as nothing (reasoning alone, which
    /// Codex cannot be given without the model's own encrypted form).
    pub dropped: usize,
    /// False when the file already held exactly these bytes: nothing written.
    pub written: bool,
    /// The command that resumes it.
    pub resume_command: String,
    /// Something the user should know, e.g. that Codex will not list it.
    pub notice: Option<String>,
}

/// Export session `id` of `store` as a Codex rollout under `options`' home.
pub(crate) fn export_codex(
    store: &StoreCore,
    id: &str,
    options: &CodexExportOptions,
) -> Result<CodexExport> {
    let home = codex_home(options)?;
    let view = store.read_session(id)?;
    let entry = store.session_entry(id)?;
    let messages: Vec<Value> = view.ui_view()?.iter().map(|m| m.value()).collect();
    let created_ms = parse_ms(&entry.created_at).unwrap_or(0);
    let (codex_id, id_source) = codex_id(id, created_ms);
    let provider = options.model_provider.as_deref().unwrap_or("openai");
    if provider.is_empty() {
        return Err(Error::invalid("codex export: modelProvider is empty"));
    }

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
    let written = write_new(&dir, &path, &bytes)?;
    Ok(CodexExport {
        path,
        resume_command: format!("codex resume {codex_id}"),
        codex_id,
        id_source,
        items,
        dropped,
        written,
        notice,
    })
}

/// The Codex home: the option, else `$CODEX_HOME`, else `~/.codex`; absolute.
fn codex_home(options: &CodexExportOptions) -> Result<PathBuf> {
    let home =
        match &options.codex_home {
            Some(h) => h.clone(),
            None => match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
                Some(h) => PathBuf::from(h),
                None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                    Some(h) => PathBuf::from(h).join(".codex"),
                    None => return Err(Error::invalid(
                        "codex export: no Codex home: give codexHome, or set CODEX_HOME or HOME",
                    )),
                },
            },
        };
    if !home.is_absolute() {
        return Err(Error::invalid(format!(
            "codex export: the Codex home {} is not an absolute path",
            home.display()
        )));
    }
    Ok(home)
}

/// The session's id when it is a UUID as Codex writes them, else a UUIDv7
/// derived from it (stable, so that exporting again is idempotent).
fn codex_id(id: &str, created_ms: u64) -> (String, CodexIdSource) {
    if let Ok(u) = uuid::Uuid::parse_str(id) {
        let text = u.hyphenated().to_string();
        if text == id {
            return (text, CodexIdSource::Session);
        }
    }
    let digest = {
        use sha2::Digest as _;
        sha2::Sha256::digest(id.as_bytes())
    };
    let mut random = [0u8; 10];
    random.copy_from_slice(&digest[..10]);
    let u = uuid::Builder::from_unix_timestamp_millis(created_ms, &random).into_uuid();
    (u.hyphenated().to_string(), CodexIdSource::Derived)
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
    // The last message answering each call id: a call is paired only when
    // that comes after it.
    let mut answered: std::collections::HashMap<String, usize> = Default::default();
    for (i, m) in messages.iter().enumerate() {
        for r in m.as_object().map(tool_results).unwrap_or_default() {
            if let Some(c) = r.call_id {
                answered.insert(c.to_owned(), i);
            }
        }
    }
    let mut open: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut done: std::collections::HashSet<String> = std::collections::HashSet::new();
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
                Some(id)
                    if answered.get(id).is_some_and(|&j| j > i)
                        && !open.contains(id)
                        && !done.contains(id) =>
                {
                    open.insert(id.to_owned());
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
                Some(id) if open.remove(id) => {
                    done.insert(id.to_owned());
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

/// Write `bytes` to `path` through a temp file in `dir` and a rename that
/// replaces nothing. `Ok(false)`: the file already holds these bytes.
fn write_new(dir: &Path, path: &Path, bytes: &[u8]) -> Result<bool> {
    if same_file(path, bytes)? {
        return Ok(false);
    }
    crate::fsutil::create_private_dir(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-rollout-")
        .permissions(crate::platform::private_file_permissions())
        .tempfile_in(dir)
        .at(dir)?;
    tmp.write_all(bytes).at(tmp.path())?;
    tmp.as_file().sync_all().at(tmp.path())?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            crate::fsutil::sync_dir_of(path)?;
            Ok(true)
        }
        // Another export of the same session got there first.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            if same_file(path, bytes)? {
                Ok(false)
            } else {
                Err(conflict(path))
            }
        }
        Err(e) => Err(Error::io(path, e.error)),
    }
}

/// Whether `path` holds exactly `bytes`: false when it does not exist, a
/// `Conflict` naming it when it holds something else.
fn same_file(path: &Path, bytes: &[u8]) -> Result<bool> {
    match std::fs::read(path) {
        Ok(b) if b == bytes => Ok(true),
        Ok(_) => Err(conflict(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

fn conflict(path: &Path) -> Error {
    Error::Conflict(format!(
        "codex export: {} exists with other contents; it is left as it is",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        let id = "019ae4f0-1c2d-7e3f-8a4b-5c6d7e8f9a0b";
        assert_eq!(codex_id(id, 0), (id.to_owned(), CodexIdSource::Session));
        let (d, s) = codex_id("my-chat", 1_764_000_000_000);
        assert_eq!(s, CodexIdSource::Derived);
        assert_eq!(codex_id("my-chat", 1_764_000_000_000).0, d);
        let u = uuid::Uuid::parse_str(&d).unwrap();
        assert_eq!(u.get_version_num(), 7);
        // Upper case is a UUID, but not as Codex names files: derived.
        assert_eq!(codex_id(&id.to_uppercase(), 0).1, CodexIdSource::Derived);
    }

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
