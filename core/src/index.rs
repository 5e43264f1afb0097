//! The sessions index: one entry per session, a cache that is folded from the
//! session logs and can always be rebuilt from them.

use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::log::{self, ReadReport};
use crate::records::{content_text_ref, kind};

pub const INDEX_FILE: &str = "sessions-index.json";
pub const INDEX_VERSION: u64 = 1;
pub const TITLE_CHARS: usize = 100;
/// Longest text kept in an index entry's reply and reason fields.
pub const SUMMARY_CHARS: usize = 2000;

/// What the agent is doing in a session, as the host reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    Pending,
    Processing,
    Completed,
    Failed,
    Interrupted,
    AskPermission,
    WaitingForUser,
}

impl Status {
    pub const ALL: [&'static str; 7] = [
        "pending",
        "processing",
        "completed",
        "failed",
        "interrupted",
        "ask_permission",
        "waiting_for_user",
    ];
}

/// Where a forked session came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lineage {
    pub session_id: String,
    pub message_id: Option<String>,
}

/// One session in the index. Every field can be rebuilt from the session's log.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub id: String,
    pub title: String,
    /// True once a title was given explicitly (at create or by rename).
    #[serde(default)]
    pub title_set: bool,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub status: Status,
    #[serde(default)]
    pub last_assistant_reply: Option<String>,
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub refusal_reason: Option<String>,
    #[serde(default)]
    pub failure_reason: Option<String>,
    #[serde(default)]
    pub last_tool_call: Option<Value>,
    /// Sums of the numeric fields of every `meta.usage` reported.
    #[serde(default)]
    pub token_usage: Map<String, Value>,
    #[serde(default)]
    pub active_tokens: Option<u64>,
    #[serde(default)]
    pub child_processes: Vec<Value>,
    #[serde(default)]
    pub head_id: Option<String>,
    #[serde(default)]
    pub message_count: u64,
    #[serde(default)]
    pub forked_from: Option<Lineage>,
    /// Log length this entry was folded from; a log of another length means the
    /// entry is stale and is folded again.
    #[serde(default)]
    pub log_bytes: u64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Whether timestamp `a` is after `b` (an empty or unreadable `b` is before all).
fn later(a: &str, b: &str) -> bool {
    match (crate::ids::parse_ms(a), crate::ids::parse_ms(b)) {
        (Some(x), Some(y)) => x > y,
        (Some(_), None) => true,
        (None, _) => b.is_empty(),
    }
}

/// The first `n` characters of `s`.
fn clip(s: &str, n: usize) -> String {
    s[..char_boundary(s, n)].to_string()
}

/// The byte offset where the `n`th character of `s` starts, or `s.len()`. Counts
/// characters a run at a time, for the long texts of assistant replies and tool
/// calls that are clipped on every append.
fn char_boundary(s: &str, n: usize) -> usize {
    let b = s.as_bytes();
    if b.len() <= n {
        return b.len(); // no more characters than bytes
    }
    let is_start = |x: &u8| (*x as i8) >= -0x40; // not a UTF-8 continuation byte
    let (mut at, mut left) = (0, n);
    while left > 0 {
        // The next `left` bytes hold at most `left` characters.
        let end = (at + left).min(b.len());
        left -= b[at..end].iter().filter(|x| is_start(x)).count();
        at = end;
        if at == b.len() {
            return b.len();
        }
    }
    // `at` may be inside the last character counted: move to the next start.
    at + b[at..].iter().position(is_start).unwrap_or(b.len() - at)
}

fn opt_string(v: &Value) -> Option<String> {
    v.as_str().map(|s| clip(s, SUMMARY_CHARS))
}

/// A tool call as the index keeps it: a copy with every string cut to
/// `SUMMARY_CHARS`, so an edit's whole file in its arguments does not travel
/// with every index write.
fn clipped_call(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(clip(s, SUMMARY_CHARS)),
        Value::Array(a) => Value::Array(a.iter().map(clipped_call).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), clipped_call(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The last tool call of an assistant message, in either common style.
fn tool_call_of(msg: &Map<String, Value>) -> Option<&Value> {
    let openai = msg
        .get("messageParams")
        .and_then(|p| p.get("tool_calls"))
        .and_then(Value::as_array)
        .and_then(|a| a.last());
    let anthropic = || {
        ["contentParams", "content"].iter().find_map(|f| {
            msg.get(*f)?
                .as_array()?
                .iter()
                .rev()
                .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        })
    };
    openai.or_else(anthropic)
}

fn add_usage(total: &mut Map<String, Value>, usage: &Value) {
    let Some(u) = usage.as_object() else { return };
    for (k, v) in u {
        if let Some(n) = v.as_u64() {
            let cur = total.get(k).and_then(Value::as_u64).unwrap_or(0);
            total.insert(k.clone(), Value::from(cur.saturating_add(n)));
        }
    }
}

/// Keys a `state` record may set, with a check of each value.
pub(crate) fn validate_state(set: &Map<String, Value>) -> Result<()> {
    if set.is_empty() {
        return Err(Error::invalid("state update is empty"));
    }
    for (k, v) in set {
        let ok = match k.as_str() {
            "status" => v.as_str().is_some_and(|s| Status::ALL.contains(&s)),
            "title" => v.as_str().is_some_and(|s| !s.trim().is_empty()),
            "thinking" | "refusalReason" | "failureReason" => v.is_string() || v.is_null(),
            "lastToolCall" => true,
            "activeTokens" => v.is_u64() || v.is_null(),
            "childProcesses" => v.is_array(),
            _ => {
                return Err(Error::invalid(format!(
                    "state update: unknown field {k:?} (allowed: status, title, thinking, refusalReason, failureReason, lastToolCall, activeTokens, childProcesses)"
                )))
            }
        };
        if !ok {
            let want = match k.as_str() {
                "status" => format!("one of {}", Status::ALL.join(", ")),
                "title" => "a non-empty string".into(),
                "activeTokens" => "a non-negative integer or null".into(),
                "childProcesses" => "an array".into(),
                _ => "a string or null".into(),
            };
            return Err(Error::invalid(format!(
                "state update: {k:?} must be {want}, got {v}"
            )));
        }
    }
    Ok(())
}

impl IndexEntry {
    pub fn new(id: &str) -> IndexEntry {
        IndexEntry {
            id: id.to_string(),
            ..IndexEntry::default()
        }
    }

    /// Fold one record (as written to the log) into the entry.
    pub fn apply(&mut self, rec: &Map<String, Value>) {
        if let Some(ts) = rec.get("timestamp").and_then(Value::as_str) {
            // The latest time seen: a fork's copied records are older than it.
            if later(ts, &self.updated_at) {
                self.updated_at = ts.to_string();
            }
            if self.created_at.is_empty() {
                self.created_at = ts.to_string();
            }
        }
        match rec.get("type").and_then(Value::as_str) {
            None | Some(kind::MESSAGE) => self.apply_message(rec),
            Some(kind::SESSION) => {
                if let Some(c) = rec.get("createdAt").and_then(Value::as_str) {
                    self.created_at = c.to_string();
                    if later(c, &self.updated_at) {
                        self.updated_at = c.to_string();
                    }
                }
                if let Some(t) = rec.get("title").and_then(Value::as_str) {
                    self.title = clip(t, TITLE_CHARS);
                    self.title_set = true;
                }
                self.forked_from = rec
                    .get("forkedFrom")
                    .and_then(|l| serde_json::from_value(l.clone()).ok());
            }
            Some(kind::HEAD) => {
                self.head_id = rec
                    .get("messageId")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
            Some(kind::PATCH) => {
                if let Some(u) = rec
                    .get("patch")
                    .and_then(|p| p.get("meta"))
                    .and_then(|m| m.get("usage"))
                {
                    add_usage(&mut self.token_usage, u);
                }
            }
            Some(kind::STATE) => {
                if let Some(Value::Object(set)) = rec.get("set") {
                    self.apply_state(set);
                }
            }
            _ => {}
        }
    }

    fn apply_message(&mut self, m: &Map<String, Value>) {
        self.message_count += 1;
        if let Some(id) = m.get("id").and_then(Value::as_str) {
            self.head_id = Some(id.to_string());
        }
        let text = || m.get("content").and_then(content_text_ref);
        match m.get("role").and_then(Value::as_str) {
            Some("user") if self.title.is_empty() && !self.title_set => {
                if let Some(t) = text() {
                    self.title = clip(t.trim(), TITLE_CHARS);
                }
            }
            Some("assistant") => {
                if let Some(t) = text().filter(|t| !t.is_empty()) {
                    self.last_assistant_reply = Some(clip(&t, SUMMARY_CHARS));
                }
                if let Some(c) = tool_call_of(m) {
                    self.last_tool_call = Some(clipped_call(c));
                }
            }
            _ => {}
        }
        if let Some(u) = m.get("meta").and_then(|x| x.get("usage")) {
            add_usage(&mut self.token_usage, u);
        }
    }

    fn apply_state(&mut self, set: &Map<String, Value>) {
        for (k, v) in set {
            match k.as_str() {
                "status" => {
                    if let Ok(s) = serde_json::from_value(v.clone()) {
                        self.status = s;
                    }
                }
                "title" => {
                    if let Some(t) = v.as_str() {
                        self.title = clip(t, TITLE_CHARS);
                        self.title_set = true;
                    }
                }
                "thinking" => self.thinking = opt_string(v),
                "refusalReason" => self.refusal_reason = opt_string(v),
                "failureReason" => self.failure_reason = opt_string(v),
                "lastToolCall" => self.last_tool_call = (!v.is_null()).then(|| clipped_call(v)),
                "activeTokens" => self.active_tokens = v.as_u64(),
                "childProcesses" => {
                    self.child_processes = v.as_array().cloned().unwrap_or_default()
                }
                _ => {}
            }
        }
    }
}

/// Fold a whole log into an index entry. Messages whose content went to a blob are
/// inlined so the title and reply come out the same as when they were written.
pub fn fold_log(id: &str, path: &Path, blobs: &BlobStore) -> Result<(IndexEntry, ReadReport)> {
    let mut file = File::open(path).at(path)?;
    let mut entry = IndexEntry::new(id);
    let mut report = ReadReport::default();
    // Fold exactly what the reader accepts: the first of duplicate ids, messages
    // with an id, head records that name a known message.
    let mut ids: std::collections::HashSet<String> = std::collections::HashSet::new();
    let end = log::scan(&mut file, path, 0, &mut report, |line, report| {
        let (text, p) = match log::probe(line.bytes) {
            Ok(x) => x,
            Err(reason) => {
                log::skip(report, &line, reason);
                return Ok(());
            }
        };
        let accepted = match p.kind.0.as_deref() {
            None | Some(kind::MESSAGE) => match p.id.0 {
                Some(id) => ids.insert(id.into_owned()),
                None => false,
            },
            Some(kind::HEAD) => p.message_id.0.as_deref().is_none_or(|m| ids.contains(m)),
            _ => true,
        };
        if !accepted {
            return Ok(());
        }
        if let Ok(Value::Object(mut rec)) = serde_json::from_str::<Value>(text) {
            if p.content_blob.is_some() || p.content_params_blob.is_some() {
                // Best effort: a missing blob only costs the title or reply.
                let _ = blobs.inline(&mut rec);
            }
            entry.apply(&rec);
        }
        Ok(())
    })?;
    if entry.created_at.is_empty() {
        let mtime = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| crate::ids::format_ms(d.as_millis() as u64))
            .unwrap_or_default();
        entry.created_at = mtime.clone();
        entry.updated_at = mtime;
    }
    entry.log_bytes = end + report.torn_tail.as_ref().map_or(0, |t| t.length);
    Ok((entry, report))
}

/// The index file as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IndexFile {
    pub version: u64,
    pub sessions: Vec<IndexEntry>,
}

impl IndexFile {
    /// Read the index; `Ok(None)` when it does not exist, `Err(Corrupt)` when it
    /// cannot be parsed.
    pub fn read(path: &Path) -> Result<Option<IndexFile>> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let idx: IndexFile = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))?;
        if idx.version > INDEX_VERSION {
            return Err(Error::Unsupported(format!(
                "{} is index version {}; this sessionkit reads up to {INDEX_VERSION}",
                path.display(),
                idx.version
            )));
        }
        Ok(Some(idx))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = serde_json::to_vec(self).unwrap_or_default();
        b.push(b'\n');
        b
    }

    pub fn get(&self, id: &str) -> Option<&IndexEntry> {
        self.sessions.iter().find(|e| e.id == id)
    }

    pub fn upsert(&mut self, entry: IndexEntry) {
        match self.sessions.iter_mut().find(|e| e.id == entry.id) {
            Some(e) => *e = entry,
            None => self.sessions.push(entry),
        }
    }

    pub fn remove(&mut self, id: &str) -> Option<IndexEntry> {
        let i = self.sessions.iter().position(|e| e.id == id)?;
        Some(self.sessions.remove(i))
    }

    /// Newest first by update time, then by id for a stable order.
    pub fn sort(&mut self) {
        let key = |e: &IndexEntry| crate::ids::parse_ms(&e.updated_at).unwrap_or(0);
        self.sessions
            .sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| b.id.cmp(&a.id)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_boundary_agrees_with_char_indices() {
        let long = ["é🚧x".repeat(700), "x".repeat(5000), "ab→".repeat(900)];
        let short = ["", "abc", "é", "aé→✓🚧b"];
        for s in short.iter().copied().chain(long.iter().map(String::as_str)) {
            for n in 0..s.chars().count() + 3 {
                let want = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
                assert_eq!(char_boundary(s, n), want, "{s:?} at {n}");
            }
        }
    }

    #[test]
    fn last_tool_call_keeps_its_shape_with_strings_clipped() {
        let code = "é".repeat(SUMMARY_CHARS + 500);
        let msg = serde_json::json!({
            "role": "assistant",
            "content": "editing",
            "messageParams": {"tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "edit", "arguments": code, "n": [1, true]}}]}
        });
        let mut e = IndexEntry::default();
        e.apply_message(msg.as_object().unwrap());
        let call = e.last_tool_call.unwrap();
        let args = call["function"]["arguments"].as_str().unwrap();
        assert_eq!(args.chars().count(), SUMMARY_CHARS);
        assert!(code.starts_with(args));
        assert_eq!(call["function"]["n"], serde_json::json!([1, true]));
        assert_eq!(call["id"], "c1");
    }
}
