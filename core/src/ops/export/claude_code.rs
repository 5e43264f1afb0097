//! Export of a session's active path as a Claude Code transcript (FORMAT.md
//! §22.10), a file `claude --resume <id>` resumes from the project's directory.
//!
//! Claude Code is closed source; the shape is that of the transcripts it
//! writes as public descriptions give them (DRMacIver/claude-reliability
//! `notes/transcript-format.md`, Huntehhh/claude-code-chat
//! `docs/claude-cli-jsonl-format.md`, alicoding/claude-parser
//! `docs/JSONL-STRUCTURE.md`, and our import fixtures made from them,
//! `tests/fixtures/import/claude-code/`): one JSON object a line, messages
//! chained by `uuid` / `parentUuid`, `message` holding an Anthropic Messages
//! API message (role, content blocks `text`, `tool_use`, `tool_result`).
//! A message imported from Claude Code (FORMAT §22.1) and unchanged since is
//! written as its source line, byte for byte.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::native::{native_id, sha256, write_new, ExportTarget, NativeExport};
use super::pairs::Pairs;
use crate::error::{Error, Result};
use crate::format::ids::{format_ms, parse_ms};
use crate::format::records::content_text;
use crate::format::tool_calls::{tool_calls, tool_results};
use crate::store::StoreCore;

/// The longest project directory name Claude Code writes as the plain
/// sanitized path; a longer one is cut and given a hash suffix whose function
/// has changed between releases (anthropics/claude-code#90221).
const MAX_PLAIN_DIR: usize = 200;

/// Export session `id` of `store` as a Claude Code transcript under `home`
/// (Claude Code's config directory, absolute).
pub(super) fn export(store: &StoreCore, id: &str, home: &Path) -> Result<NativeExport> {
    let view = store.read_session(id)?;
    let entry = store.session_entry(id)?;
    let messages: Vec<Value> = view.ui_view()?.iter().map(|m| m.value()).collect();
    let created_ms = parse_ms(&entry.created_at).unwrap_or(0);
    let (session_id, id_source) = native_id(id, created_ms);
    let cwd = store.project_root().to_string_lossy().into_owned();
    let dir = project_dir(home, &cwd)?;
    let path = dir.join(format!("{session_id}.jsonl"));

    let mut raws = Vec::with_capacity(messages.len());
    for m in &messages {
        raws.push(source_line(store, m)?);
    }
    // The Claude Code version of the session's own lines when it was
    // imported from Claude Code, else sessionkit's.
    let version = raws
        .iter()
        .rev()
        .flatten()
        .find_map(|(_, o)| o.get("version").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());
    let mut out = Transcript {
        session_id: session_id.clone(),
        cwd: cwd.clone(),
        version,
        lines: Vec::new(),
        used: HashSet::new(),
        prev: None,
        prev_boundary: false,
        last_ms: created_ms.saturating_sub(1),
        prompt: false,
    };
    let dropped = lines(&mut out, &messages, &raws);
    let bytes = out.bytes();
    let written = write_new(ExportTarget::ClaudeCode, &dir, &path, &bytes)?;
    let resume_command = format!("cd {} && claude --resume {session_id}", shell_quote(&cwd));
    let notice = (!out.prompt).then(|| {
        format!("the session has no typed prompt: Claude Code's /resume list may not show it; `{resume_command}` still resumes it")
    });
    Ok(NativeExport {
        to: ExportTarget::ClaudeCode,
        path,
        native_id: session_id,
        id_source,
        items: out.lines.len(),
        dropped,
        written,
        resume_command,
        notice,
    })
}

/// `<home>/projects/<cwd, every character but an ASCII letter or digit a
/// '-'>`: the directory Claude Code keeps a project's transcripts in and
/// looks up `--resume <id>` in (the names of the directories of real
/// transcripts: `/home/ann/app` → `-home-ann-app`; anthropics/claude-code
/// issues #9221, #24067: the mapping is lossy). A name longer than
/// `MAX_PLAIN_DIR` is cut and suffixed with a hash Claude Code has changed
/// between releases: the directory it already made for the project is used,
/// and without one the export is refused rather than written where Claude
/// Code would not look.
fn project_dir(home: &Path, cwd: &str) -> Result<PathBuf> {
    let projects = home.join("projects");
    let name = sanitized(cwd);
    if name.len() <= MAX_PLAIN_DIR {
        return Ok(projects.join(name));
    }
    let prefix = format!("{}-", &name[..MAX_PLAIN_DIR]);
    let found: Vec<PathBuf> = match std::fs::read_dir(&projects) {
        Ok(dir) => dir
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect(),
        Err(_) => Vec::new(),
    };
    match <[PathBuf; 1]>::try_from(found) {
        Ok([dir]) => Ok(dir),
        Err(found) => Err(Error::invalid(format!(
            "claude-code export: the project path {cwd} is longer than Claude Code names directories plainly, and {} of {} start with {prefix}: run Claude Code once in the project so that its directory exists",
            found.len(),
            projects.display()
        ))),
    }
}

/// Claude Code's directory name for a working directory: each character
/// that is not an ASCII letter or digit becomes `-` (one per UTF-16 unit, as
/// the JavaScript that writes it counts characters).
fn sanitized(cwd: &str) -> String {
    let mut s = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                s.push('-');
            }
        }
    }
    s
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The Claude Code line a message was imported from (FORMAT §22.1: `raw`, or
/// `rawBlob`), with its parsed object.
fn source_line(store: &StoreCore, m: &Value) -> Result<Option<(String, Map<String, Value>)>> {
    let Some(import) = m.get("import").and_then(Value::as_object) else {
        return Ok(None);
    };
    if import.get("format").and_then(Value::as_str) != Some("claude-code") {
        return Ok(None);
    }
    let text = match (import.get("raw"), import.get("rawBlob")) {
        (Some(Value::String(raw)), _) => raw.clone(),
        (_, Some(r)) => match r.get("sha256").and_then(Value::as_str) {
            // A blob gone missing only costs the verbatim line.
            Some(sha) => match store.blobs().get_bytes(sha) {
                Ok(b) => String::from_utf8(b).unwrap_or_default(),
                Err(_) => return Ok(None),
            },
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    Ok(match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(o)) => Some((text, o)),
        _ => None,
    })
}

/// The transcript being made.
struct Transcript {
    session_id: String,
    cwd: String,
    version: String,
    lines: Vec<String>,
    /// Uuids written, so that no two lines share one.
    used: HashSet<String>,
    /// The uuid of the last line: the next one's `parentUuid`.
    prev: Option<String>,
    prev_boundary: bool,
    last_ms: u64,
    /// Whether a visible user message with text was written (what Claude
    /// Code's list shows as the session's first prompt).
    prompt: bool,
}

impl Transcript {
    /// A uuid for a line of message `id`: the id itself when it is a UUID as
    /// Claude Code writes them and unused, else one derived from the session
    /// and the id (and `part`, for a second line of one message).
    fn uuid(&mut self, id: &str, part: &str) -> String {
        let own = uuid::Uuid::parse_str(id)
            .ok()
            .map(|u| u.hyphenated().to_string())
            .filter(|u| u == id && part.is_empty() && !self.used.contains(u));
        let u = own.unwrap_or_else(|| {
            let seed = format!("{}\0{id}\0{part}", self.session_id);
            let mut bytes = [0u8; 16];
            bytes.copy_from_slice(&sha256(seed.as_bytes())[..16]);
            uuid::Builder::from_random_bytes(bytes)
                .into_uuid()
                .hyphenated()
                .to_string()
        });
        self.used.insert(u.clone());
        u
    }

    /// The time of a line: its message's, or 1 ms after the line before
    /// when that is later, so that times only grow.
    fn time(&mut self, at: Option<u64>) -> String {
        let ms = at.unwrap_or(0).max(self.last_ms + 1);
        self.last_ms = ms;
        format_ms(ms)
    }

    /// The fields every line starts with, in the order Claude Code writes them.
    fn envelope(&self, parent: Option<&str>, kind: &str) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("parentUuid".into(), parent.map_or(Value::Null, Value::from));
        o.insert("isSidechain".into(), false.into());
        o.insert("userType".into(), "external".into());
        o.insert("cwd".into(), self.cwd.as_str().into());
        o.insert("sessionId".into(), self.session_id.as_str().into());
        o.insert("version".into(), self.version.as_str().into());
        o.insert("type".into(), kind.into());
        o
    }

    fn push(&mut self, uuid: String, mut o: Map<String, Value>, at: Option<u64>, boundary: bool) {
        o.insert("uuid".into(), uuid.as_str().into());
        let t = self.time(at);
        o.insert("timestamp".into(), t.into());
        self.lines.push(Value::Object(o).to_string());
        self.prev = Some(uuid);
        self.prev_boundary = boundary;
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

/// The lines of each message; the number of messages that make none.
fn lines(
    out: &mut Transcript,
    messages: &[Value],
    raws: &[Option<(String, Map<String, Value>)>],
) -> usize {
    let mut pairs = Pairs::new(messages);
    let mut dropped = 0;
    for (i, m) in messages.iter().enumerate() {
        let Some(m) = m.as_object() else { continue };
        let id = m.get("id").and_then(Value::as_str).unwrap_or_default();
        let at = m
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_ms);
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let visible = m.get("visible") != Some(&Value::Bool(false));
        if let Some((raw, o)) = &raws[i] {
            if let Some(boundary) = source_fits(out, m, o) {
                // Its calls and results pair as they did in the source.
                pairs.skip(i, m);
                out.used.insert(id.to_owned());
                out.lines.push(match same_place(out, o, boundary) {
                    true => raw.clone(),
                    false => moved(out, o.clone(), boundary),
                });
                out.prev = Some(id.to_owned());
                out.prev_boundary = boundary;
                out.last_ms = out.last_ms.max(at.unwrap_or(0));
                if role == "user" && visible && o.get("isCompactSummary").is_none() {
                    out.prompt |= user_text(m).is_some();
                }
                continue;
            }
        }
        let summary = m.get("meta").and_then(|x| x.get("compaction")).is_some();
        if summary {
            let text = m.get("content").and_then(content_text).unwrap_or_default();
            if !out.prev_boundary {
                // A compaction starts a new root in Claude Code's files: the
                // boundary has no parent, its logical parent is the line before.
                let uuid = out.uuid(id, "compact_boundary");
                let mut o = out.envelope(None, "system");
                o.insert(
                    "logicalParentUuid".into(),
                    out.prev.as_deref().map_or(Value::Null, Value::from),
                );
                o.insert("subtype".into(), "compact_boundary".into());
                o.insert("content".into(), "Conversation compacted".into());
                o.insert("isMeta".into(), false.into());
                o.insert("level".into(), "info".into());
                out.push(uuid, o, at, true);
            }
            let uuid = out.uuid(id, "");
            let mut o = out.envelope(out.prev.as_deref(), "user");
            o.insert("message".into(), json!({"role": "user", "content": text}));
            o.insert("isCompactSummary".into(), true.into());
            o.insert("isVisibleInTranscriptOnly".into(), true.into());
            out.push(uuid, o, at, false);
            continue;
        }
        let (kind, content) = match role {
            "assistant" => ("assistant", assistant_blocks(m, i, &mut pairs)),
            "user" | "tool" => ("user", user_content(m, &mut pairs)),
            // Claude Code makes its own system prompt: a system message has
            // no line that it sends to the model.
            _ => ("", Value::Null),
        };
        let empty = match &content {
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => true,
        };
        if empty {
            dropped += 1;
            continue;
        }
        let uuid = out.uuid(id, "");
        let mut o = out.envelope(out.prev.as_deref(), kind);
        if kind == "user" {
            if !visible {
                o.insert("isMeta".into(), true.into());
            } else if role == "user" && user_text(m).is_some() {
                out.prompt = true;
            }
            o.insert(
                "message".into(),
                json!({"role": "user", "content": content}),
            );
        } else {
            let meta = m.get("meta");
            let tool_use = content
                .as_array()
                .is_some_and(|a| a.iter().any(|b| b["type"] == "tool_use"));
            let mut msg = Map::new();
            msg.insert(
                "id".into(),
                format!("msg_{}", &uuid.replace('-', "")[..24]).into(),
            );
            msg.insert("type".into(), "message".into());
            msg.insert("role".into(), "assistant".into());
            if let Some(model) = meta.and_then(|x| x.get("model")).filter(|x| x.is_string()) {
                msg.insert("model".into(), model.clone());
            }
            msg.insert("content".into(), content);
            msg.insert(
                "stop_reason".into(),
                if tool_use { "tool_use" } else { "end_turn" }.into(),
            );
            msg.insert("stop_sequence".into(), Value::Null);
            if let Some(u) = meta.and_then(|x| x.get("usage")).filter(|x| x.is_object()) {
                msg.insert("usage".into(), u.clone());
            }
            o.insert("message".into(), Value::Object(msg));
        }
        out.push(uuid, o, at, false);
    }
    dropped
}

/// Whether message `m` may be written as its source line `o`, and if so
/// whether that line is a compact boundary: the line is of this message
/// (its uuid, role and content) and of the main conversation.
fn source_fits(out: &Transcript, m: &Map<String, Value>, o: &Map<String, Value>) -> Option<bool> {
    let id = m.get("id")?.as_str()?;
    let kind = o.get("type")?.as_str()?;
    let role = m.get("role")?.as_str()?;
    let content = match kind {
        "system" => o.get("content"),
        _ => o.get("message").and_then(|b| b.get("content")),
    };
    let ok = o.get("uuid").and_then(Value::as_str) == Some(id)
        && !out.used.contains(id)
        && kind == role
        && o.get("isSidechain") != Some(&Value::Bool(true))
        && content.unwrap_or(&Value::Null) == m.get("content").unwrap_or(&Value::Null);
    ok.then(|| o.get("subtype").and_then(Value::as_str) == Some("compact_boundary"))
}

/// Whether source line `o` already says what this transcript says: its
/// session, its working directory, and that it continues the chain written
/// so far (a boundary through its `logicalParentUuid`).
fn same_place(out: &Transcript, o: &Map<String, Value>, boundary: bool) -> bool {
    let parent = match o.get("parentUuid") {
        Some(Value::Null) | None if boundary => o.get("logicalParentUuid"),
        p => p,
    }
    .and_then(Value::as_str);
    o.get("sessionId").and_then(Value::as_str) == Some(out.session_id.as_str())
        && o.get("cwd").and_then(Value::as_str) == Some(out.cwd.as_str())
        && (out.prev.is_none() || parent == out.prev.as_deref())
}

/// Source line `o` in this transcript: every field kept but the session, the
/// working directory and the parent (a fork, a project moved or mapped, a
/// path that left messages out).
fn moved(out: &Transcript, mut o: Map<String, Value>, boundary: bool) -> String {
    let prev = out.prev.as_deref().map_or(Value::Null, Value::from);
    if boundary {
        o.insert("parentUuid".into(), Value::Null);
        o.insert("logicalParentUuid".into(), prev);
    } else {
        o.insert("parentUuid".into(), prev);
    }
    o.insert("sessionId".into(), out.session_id.as_str().into());
    if o.contains_key("cwd") {
        o.insert("cwd".into(), out.cwd.as_str().into());
    }
    Value::Object(o).to_string()
}

/// The text a user typed, when the message has any.
fn user_text(m: &Map<String, Value>) -> Option<String> {
    if !tool_results(m).is_empty() {
        return None;
    }
    m.get("content")
        .and_then(content_text)
        .filter(|t| !t.trim().is_empty())
}

/// A user line's content: a string as it is, else blocks — text and images
/// kept, each tool result answering a call written before it as a
/// `tool_result` block, any other result as text.
fn user_content(m: &Map<String, Value>, pairs: &mut Pairs) -> Value {
    let results = tool_results(m);
    let mut blocks = Vec::new();
    if m.get("role").and_then(Value::as_str) != Some("tool") {
        match m.get("content") {
            Some(Value::String(s)) if results.is_empty() => return Value::from(s.as_str()),
            Some(Value::String(s)) if !s.is_empty() => blocks.push(text_block(s)),
            Some(Value::Array(a)) => blocks.extend(a.iter().filter_map(|b| plain_block(b, false))),
            _ => {}
        }
    }
    for r in results {
        let output = r.text();
        match r.call_id {
            Some(id) if pairs.answer(id) => blocks.push(json!({"type": "tool_result",
                "tool_use_id": id, "content": output})),
            _ => blocks.push(text_block(&format!(
                "[tool result {}]\n{output}",
                r.call_id.unwrap_or("-")
            ))),
        }
    }
    Value::Array(blocks)
}

/// An assistant line's content blocks: its text (and signed thinking), then
/// each tool call as a `tool_use` block when its result follows, else as text.
fn assistant_blocks(m: &Map<String, Value>, i: usize, pairs: &mut Pairs) -> Value {
    let mut blocks = Vec::new();
    match m.get("content") {
        Some(Value::String(s)) if !s.is_empty() => blocks.push(text_block(s)),
        Some(Value::Array(a)) => blocks.extend(a.iter().filter_map(|b| plain_block(b, true))),
        _ => {}
    }
    for c in tool_calls(m) {
        let name = c.name.unwrap_or("?");
        match c.id {
            Some(id) if pairs.call(id, i) => {
                let input = match c.arguments {
                    Some(Value::Object(_)) => c.arguments.cloned().unwrap_or_default(),
                    _ => match serde_json::from_str::<Value>(&c.arguments_text()) {
                        Ok(v @ Value::Object(_)) => v,
                        _ if c.arguments_text().is_empty() => json!({}),
                        _ => json!({"arguments": c.arguments_text()}),
                    },
                };
                blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            _ => blocks.push(text_block(&format!(
                "[tool call {name} {}]\n{}",
                c.id.unwrap_or("-"),
                c.arguments_text()
            ))),
        }
    }
    Value::Array(blocks)
}

fn text_block(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

/// A content block Claude Code can send back as it is: text, an image or
/// document, and (from the assistant) thinking that carries the model's
/// signature; a block of another kind with a text as a text block. Tool
/// calls and results are read separately.
fn plain_block(b: &Value, assistant: bool) -> Option<Value> {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" | "image" | "document" => Some(b.clone()),
        "thinking" if assistant && b.get("signature").is_some() => Some(b.clone()),
        "redacted_thinking" if assistant && b.get("data").is_some() => Some(b.clone()),
        "tool_use" | "tool_result" | "thinking" | "redacted_thinking" => None,
        _ => b
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(text_block),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names() {
        assert_eq!(sanitized("/home/ann/app"), "-home-ann-app");
        assert_eq!(sanitized("/home/u/.agents_x"), "-home-u--agents-x");
        assert_eq!(sanitized("/tmp/é𝄞"), "-tmp----");
        let long = format!("/{}", "a".repeat(300));
        let home = tempfile::tempdir().unwrap();
        let e = project_dir(home.path(), &long).unwrap_err();
        assert!(e.to_string().contains("run Claude Code once"), "{e}");
        let made = home
            .path()
            .join("projects")
            .join(format!("{}-abc123", &sanitized(&long)[..200]));
        std::fs::create_dir_all(&made).unwrap();
        assert_eq!(project_dir(home.path(), &long).unwrap(), made);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/home/ann/app"), "/home/ann/app");
        assert_eq!(shell_quote("/tmp/a b'c"), r"'/tmp/a b'\''c'");
    }
}
