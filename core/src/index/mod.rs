//! The sessions index: one entry per session, a cache that is folded from the
//! session logs and can always be rebuilt from them.

pub(crate) mod journal;

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod decode;
pub(crate) mod page;

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::format::facts::{is_text_field, usage_in, usage_of, Facts, Written};
use crate::format::records::{classify, content_text_ref, kind, Class};
use crate::log::{self, ReadReport};

pub(crate) use crate::format::layout::INDEX_FILE;
pub const INDEX_VERSION: u64 = 1;
pub const TITLE_CHARS: usize = 100;
/// Longest text kept in an index entry's reply and reason fields.
pub const SUMMARY_CHARS: usize = 2000;

/// What the agent is doing in a session, as the host reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing reported yet (`pending`, the default).
    #[default]
    Pending,
    /// The agent is working (`processing`).
    Processing,
    /// The agent finished its turn (`completed`).
    Completed,
    /// The agent's turn failed (`failed`).
    Failed,
    /// The turn was cut short (`interrupted`).
    Interrupted,
    /// The agent waits for a permission (`ask_permission`).
    AskPermission,
    /// The agent waits for the user's input (`waiting_for_user`).
    WaitingForUser,
}

impl Status {
    /// The seven statuses as written on disk, in declaration order.
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
    /// The source session.
    pub session_id: String,
    /// The message forked at; `None` for a fork of the whole session.
    pub message_id: Option<String>,
}

/// Which of the project's sessions a listing returns ([`crate::Store::list_page`]):
/// `limit` entries from `offset` in the order of [`crate::Store::list_sessions`],
/// newest first. A picker asks for its first screen, then the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListOptions {
    /// Entries skipped from the newest (default 0).
    #[serde(default)]
    pub offset: usize,
    /// At most this many entries; `None` for every entry from `offset`.
    #[serde(default)]
    pub limit: Option<usize>,
}

impl ListOptions {
    /// Parse options from a JSON object (`offset`, `limit`); empty text gives
    /// the defaults. Fails with `InvalidInput` on unknown fields or bad JSON.
    pub fn from_json(json: &str) -> Result<ListOptions> {
        crate::format::json::options_from_json("list options", json)
    }
}

/// A page of the project's sessions ([`crate::Store::list_page`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPage {
    /// The entries of the page, newest first.
    pub sessions: Vec<IndexEntry>,
    /// How many sessions the project has: the listing the page was cut from.
    pub total: usize,
}

/// One session in the index. Every field can be rebuilt from the session's log.
/// Read member by member (the index's `decode` module), not by a derive.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    /// The session id.
    pub id: String,
    /// The host's own id for the conversation when the session id was mapped
    /// from it (FORMAT.md §3.3), from the header; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The title: given at create or by rename, else the first 100 characters
    /// of the first user message's text; `""` until there is one.
    pub title: String,
    /// True once a title was given explicitly (at create or by rename).
    #[serde(default)]
    pub title_set: bool,
    /// Creation time (RFC 3339, UTC, milliseconds).
    pub created_at: String,
    /// The time of the latest record.
    pub updated_at: String,
    /// The status the host last reported ([`crate::Session::update_state`]).
    #[serde(default)]
    pub status: Status,
    /// Text of the last assistant message, cut to 2000 characters.
    #[serde(default)]
    pub last_assistant_reply: Option<String>,
    /// Host-reported thinking text, cut to 2000 characters.
    #[serde(default)]
    pub thinking: Option<String>,
    /// Host-reported refusal reason, cut to 2000 characters.
    #[serde(default)]
    pub refusal_reason: Option<String>,
    /// Host-reported failure reason, cut to 2000 characters.
    #[serde(default)]
    pub failure_reason: Option<String>,
    /// The last tool call seen (or reported), every string in it cut to 2000
    /// characters.
    #[serde(default)]
    pub last_tool_call: Option<Value>,
    /// Sums of the numeric fields of every `meta.usage` reported.
    #[serde(default)]
    pub token_usage: Map<String, Value>,
    /// Host-reported size of the live context in tokens.
    #[serde(default)]
    pub active_tokens: Option<u64>,
    /// Host-reported child processes (free-form entries).
    #[serde(default)]
    pub child_processes: Vec<Value>,
    /// The head message.
    #[serde(default)]
    pub head_id: Option<String>,
    /// Messages in the log, on every branch.
    #[serde(default)]
    pub message_count: u64,
    /// Where the session was forked from, if it is a fork.
    #[serde(default)]
    pub forked_from: Option<Lineage>,
    /// Log length this entry was folded from; a log of another length means the
    /// entry is stale and is folded again.
    #[serde(default)]
    pub log_bytes: u64,
    /// Fields this version does not know, kept when the index is rewritten.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An `updatedAt` as the sort order compares it (FORMAT.md §10.4):
/// milliseconds since the epoch, 0 (the oldest) when it does not parse.
pub(crate) fn sort_ms(updated_at: &str) -> u64 {
    crate::format::ids::parse_ms(updated_at).unwrap_or(0)
}

/// Whether timestamp `a` is after `b` (an empty or unreadable `b` is before all).
fn later(a: &str, b: &str) -> bool {
    later_parsed(
        crate::format::ids::parse_ms(a),
        crate::format::ids::parse_ms(b),
        b,
    )
}

/// [`later`] with both times parsed (`b_text` is `b` unparsed).
fn later_parsed(a: Option<u64>, b: Option<u64>, b_text: &str) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x > y,
        (Some(_), None) => true,
        (None, _) => b_text.is_empty(),
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

/// Set `dst` to `s`, in the buffer it has (head and time change on every append).
fn replace_str(dst: &mut String, s: &str) {
    dst.clear();
    dst.push_str(s);
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
    crate::format::tool_calls::last_tool_call(msg)
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
    /// An empty entry for session `id`: the start of the fold from its log.
    pub fn new(id: &str) -> IndexEntry {
        IndexEntry {
            id: id.to_string(),
            ..IndexEntry::default()
        }
    }

    /// Whether `self` and `other` serialise to the same bytes: equal, with their
    /// maps in the same order. Cheaper than `==`, which looks every key of a map
    /// up in the other.
    fn serialises_as(&self, other: &IndexEntry) -> bool {
        fn same_map(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        fn same(a: &Value, b: &Value) -> bool {
            match (a, b) {
                (Value::Object(a), Value::Object(b)) => same_map(a, b),
                (Value::Array(a), Value::Array(b)) => {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
                }
                (a, b) => a == b,
            }
        }
        let same_opt = |a: &Option<Value>, b: &Option<Value>| match (a, b) {
            (Some(a), Some(b)) => same(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        // Destructured, so that a new field cannot be forgotten here.
        let IndexEntry {
            id,
            conversation_id,
            title,
            title_set,
            created_at,
            updated_at,
            status,
            last_assistant_reply,
            thinking,
            refusal_reason,
            failure_reason,
            last_tool_call,
            token_usage,
            active_tokens,
            child_processes,
            head_id,
            message_count,
            forked_from,
            log_bytes,
            extra,
        } = self;
        *id == other.id
            && *conversation_id == other.conversation_id
            && *title == other.title
            && *title_set == other.title_set
            && *created_at == other.created_at
            && *updated_at == other.updated_at
            && *status == other.status
            && *last_assistant_reply == other.last_assistant_reply
            && *thinking == other.thinking
            && *refusal_reason == other.refusal_reason
            && *failure_reason == other.failure_reason
            && same_opt(last_tool_call, &other.last_tool_call)
            && same_map(token_usage, &other.token_usage)
            && *active_tokens == other.active_tokens
            && child_processes.len() == other.child_processes.len()
            && child_processes
                .iter()
                .zip(&other.child_processes)
                .all(|(a, b)| same(a, b))
            && *head_id == other.head_id
            && *message_count == other.message_count
            && *forked_from == other.forked_from
            && *log_bytes == other.log_bytes
            && same_map(extra, &other.extra)
    }

    /// Fold one record (as written to the log) into the entry.
    pub fn apply(&mut self, rec: &Map<String, Value>) {
        if let Some(ts) = rec.get("timestamp").and_then(Value::as_str) {
            self.note_time(ts);
        }
        match rec.get("type").and_then(Value::as_str) {
            None | Some(kind::MESSAGE) => self.apply_message(rec),
            Some(kind::SESSION) => {
                let created = rec.get("createdAt").and_then(Value::as_str);
                if let Some(c) = created.filter(|c| crate::format::ids::parse_ms(c).is_some()) {
                    self.created_at = c.to_string();
                    if later(c, &self.updated_at) {
                        self.updated_at = c.to_string();
                    }
                }
                if let Some(t) = rec.get("title").and_then(Value::as_str) {
                    self.title = clip(t, TITLE_CHARS);
                    self.title_set = true;
                }
                if let Some(c) = rec.get("conversationId").and_then(Value::as_str) {
                    self.conversation_id = Some(c.to_owned());
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

    fn note_time(&mut self, ts: &str) {
        let updated = crate::format::ids::parse_ms(&self.updated_at);
        self.note_time_parsed(ts, crate::format::ids::parse_ms(ts), updated);
    }

    /// [`IndexEntry::note_time`] with `ts` and `updated_at` parsed (`t` and
    /// `updated`); true when `ts` became `updated_at`.
    fn note_time_parsed(&mut self, ts: &str, t: Option<u64>, updated: Option<u64>) -> bool {
        // A timestamp that does not parse is not a time (FORMAT.md §10.3).
        if t.is_none() {
            return false;
        }
        // The latest time seen: a fork's copied records are older than it.
        let later = later_parsed(t, updated, &self.updated_at);
        if later {
            replace_str(&mut self.updated_at, ts);
        }
        if self.created_at.is_empty() {
            self.created_at = ts.to_string();
        }
        later
    }

    fn apply_message(&mut self, m: &Map<String, Value>) {
        self.note_message(m.get("id").and_then(Value::as_str), usage_of(m));
        match m.get("role").and_then(Value::as_str) {
            Some("user") if self.wants_title() => self.take_title(m),
            Some("assistant") => {
                self.take_reply(m);
                self.take_tool_call(m);
            }
            _ => {}
        }
    }

    /// What every message adds, whatever its role.
    fn note_message(&mut self, id: Option<&str>, usage: Option<&Value>) {
        self.message_count += 1;
        if let Some(id) = id {
            match &mut self.head_id {
                Some(h) => replace_str(h, id),
                None => self.head_id = Some(id.to_string()),
            }
        }
        if let Some(u) = usage {
            add_usage(&mut self.token_usage, u);
        }
    }

    /// Whether the next user message names the session.
    fn wants_title(&self) -> bool {
        self.title.is_empty() && !self.title_set
    }

    fn take_title(&mut self, m: &Map<String, Value>) {
        if let Some(t) = m.get("content").and_then(content_text_ref) {
            self.title = clip(t.trim(), TITLE_CHARS);
        }
    }

    /// Take an assistant message's text as the last reply; false when it has none.
    fn take_reply(&mut self, m: &Map<String, Value>) -> bool {
        match m.get("content").and_then(content_text_ref) {
            Some(t) if !t.is_empty() => {
                self.last_assistant_reply = Some(clip(&t, SUMMARY_CHARS));
                true
            }
            _ => false,
        }
    }

    /// Take an assistant message's tool call as the last one; false when it has none.
    fn take_tool_call(&mut self, m: &Map<String, Value>) -> bool {
        match tool_call_of(m) {
            Some(c) => {
                self.last_tool_call = Some(clipped_call(c));
                true
            }
            None => false,
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

/// Folds records into an index entry exactly as [`IndexEntry::apply`] does one
/// by one, without parsing every message whole. A message's count, head, time and
/// usage come from its [`Facts`]; the title from the first user message, parsed
/// when it comes; the last reply and tool call from the latest assistant
/// messages, parsed at the end from the newest back until both are known. `T`
/// is how the caller finds an assistant message again.
pub(crate) struct Fold<T> {
    entry: IndexEntry,
    /// Assistant messages, each with the number of records folded up to it.
    assistants: Vec<(usize, T)>,
    folded: usize,
    /// `folded` when a state record last set `lastToolCall`.
    call_set_at: Option<usize>,
    /// The entry's `updatedAt` as last compared, and parsed: each message's
    /// time is compared with it, and parsing it again for every message was
    /// a tenth of what a writer's entry cost an append.
    updated: (String, Option<u64>),
}

impl<T> Fold<T> {
    pub fn new(entry: IndexEntry) -> Fold<T> {
        Fold {
            entry,
            assistants: Vec::new(),
            folded: 0,
            call_set_at: None,
            updated: (String::new(), None),
        }
    }

    /// [`IndexEntry::note_time`], with the entry's time parsed only when it
    /// changed other than here.
    fn note_time(&mut self, ts: &str) {
        if self.updated.0 != self.entry.updated_at {
            let parsed = crate::format::ids::parse_ms(&self.entry.updated_at);
            self.updated = (self.entry.updated_at.clone(), parsed);
        }
        let t = crate::format::ids::parse_ms(ts);
        if self.entry.note_time_parsed(ts, t, self.updated.1) {
            replace_str(&mut self.updated.0, ts);
            self.updated.1 = t;
        }
    }

    /// Fold a message; `whole` parses it when its text is needed.
    pub fn message(
        &mut self,
        facts: Facts<'_>,
        handle: T,
        whole: impl FnOnce(&T) -> Option<Map<String, Value>>,
    ) {
        if self.note(facts, || whole(&handle).map(Cow::Owned)) {
            self.assistants.push((self.folded, handle));
        }
    }

    /// Fold what a message gives at once; true for an assistant message, whose
    /// reply and tool call wait for [`Fold::settle`].
    fn note<'m>(
        &mut self,
        facts: Facts<'_>,
        whole: impl FnOnce() -> Option<Cow<'m, Map<String, Value>>>,
    ) -> bool {
        self.folded += 1;
        if let Some(ts) = facts.timestamp {
            self.note_time(ts);
        }
        self.entry
            .note_message(Some(facts.id), facts.usage.as_ref());
        match facts.role {
            Some("user") if self.entry.wants_title() => {
                if let Some(m) = whole() {
                    self.entry.take_title(&m);
                }
                false
            }
            Some("assistant") => true,
            _ => false,
        }
    }

    /// Fold only the time of a record: a `session` record after the header.
    pub fn time_only(&mut self, rec: &Map<String, Value>) {
        self.folded += 1;
        if let Some(ts) = rec.get("timestamp").and_then(Value::as_str) {
            self.note_time(ts);
        }
    }

    /// Fold a record other than a message.
    pub fn record(&mut self, rec: &Map<String, Value>) {
        debug_assert!(!matches!(
            rec.get("type").and_then(Value::as_str),
            None | Some(kind::MESSAGE)
        ));
        self.folded += 1;
        self.entry.apply(rec);
        let sets_call = rec.get("type").and_then(Value::as_str) == Some(kind::STATE)
            && rec.get("set").and_then(|s| s.get("lastToolCall")).is_some();
        if sets_call {
            self.call_set_at = Some(self.folded);
        }
    }

    /// Take the last reply and tool call from the waiting assistant messages,
    /// newest first, parsing (`whole`) only as many as it takes.
    pub fn settle<F>(&mut self, mut whole: F)
    where
        F: for<'a> FnMut(&'a T) -> Option<Cow<'a, Map<String, Value>>>,
    {
        let (mut reply, mut call) = (false, false);
        for (at, handle) in self.assistants.iter().rev() {
            // A state record that set the tool call after this message wins.
            let call_open = !call && self.call_set_at.is_none_or(|s| *at > s);
            if reply && !call_open {
                break;
            }
            let Some(m) = whole(handle) else { continue };
            reply = reply || self.entry.take_reply(&m);
            if call_open {
                call = self.entry.take_tool_call(&m);
            }
        }
        self.assistants.clear();
        self.call_set_at = None;
    }

    pub fn finish<F>(mut self, whole: F) -> IndexEntry
    where
        F: for<'a> FnMut(&'a T) -> Option<Cow<'a, Map<String, Value>>>,
    {
        self.settle(whole);
        self.entry
    }
}

/// A writer's index entry, folded append by append. Clipping and copying the
/// reply and tool call of every assistant message was a quarter of what an
/// append cost, so assistant messages wait (a few, of a bounded size) until the
/// entry is read, and only the latest that count are copied.
pub(crate) struct LiveEntry {
    /// Each waiting message's fields that [`TEXT_FIELDS`] names.
    fold: Fold<Vec<(String, Value)>>,
    /// The size of the waiting messages' lines.
    waiting_bytes: usize,
}

/// Assistant messages a [`LiveEntry`] keeps waiting at most, and their size.
const LIVE_WAITING: usize = 32;
const LIVE_WAITING_BYTES: usize = 1 << 20;

impl LiveEntry {
    pub fn new(entry: IndexEntry) -> LiveEntry {
        LiveEntry {
            fold: Fold::new(entry),
            waiting_bytes: 0,
        }
    }

    /// Fold a record as written; `bytes` is the length of its line.
    pub fn apply(&mut self, rec: Map<String, Value>, bytes: usize) {
        let is_message = matches!(
            rec.get("type").and_then(Value::as_str),
            None | Some(kind::MESSAGE)
        );
        if !is_message {
            self.fold.record(&rec);
            return;
        }
        let Some(facts) = Facts::of(&rec) else {
            // No string id (never from our writer): fold it in its turn.
            self.get().apply(&rec);
            return;
        };
        if self.fold.note(facts, || Some(Cow::Borrowed(&rec))) {
            let texts = rec.into_iter().filter(|(k, _)| is_text_field(k));
            self.wait(texts.collect(), bytes);
        }
    }

    /// Fold a message this writer wrote, with id `id`.
    pub fn message(&mut self, id: &str, w: Written) {
        let facts = Facts {
            id,
            role: Some(w.role),
            timestamp: Some(&w.timestamp),
            usage: w.usage,
        };
        if self
            .fold
            .note(facts, || Some(Cow::Owned(texts_map(&w.texts))))
        {
            self.wait(w.texts, w.bytes);
        }
    }

    /// Keep an assistant message until the entry is read, or settle now when
    /// too many wait.
    fn wait(&mut self, texts: Vec<(String, Value)>, bytes: usize) {
        self.fold.assistants.push((self.fold.folded, texts));
        self.waiting_bytes += bytes;
        if self.fold.assistants.len() >= LIVE_WAITING || self.waiting_bytes >= LIVE_WAITING_BYTES {
            self.get();
        }
    }

    /// The entry, with every record folded so far.
    pub fn get(&mut self) -> &mut IndexEntry {
        self.fold.settle(|t| Some(Cow::Owned(texts_map(t))));
        self.waiting_bytes = 0;
        &mut self.fold.entry
    }
}

/// The text fields of a message as a map, for [`IndexEntry::take_title`] and the
/// like: made for the few messages whose texts are read.
fn texts_map(texts: &[(String, Value)]) -> Map<String, Value> {
    texts.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A message's line parsed whole, with content moved to a blob put back.
pub(crate) fn parse_whole(
    text: &str,
    has_blob: bool,
    blobs: &BlobStore,
) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut rec)) => {
            if has_blob {
                // Best effort: a missing blob only costs the title or reply.
                let _ = blobs.inline(&mut rec);
            }
            Some(rec)
        }
        _ => None,
    }
}

/// Fold a whole log into an index entry. Messages whose content went to a blob are
/// inlined so the title and reply come out the same as when they were written.
pub fn fold_log(id: &str, path: &Path, blobs: &BlobStore) -> Result<(IndexEntry, ReadReport)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path).at(path)?;
    let mut fold: Fold<(u64, usize, bool)> = Fold::new(IndexEntry::new(id));
    let mut report = ReadReport::default();
    // Fold exactly what the views fold (FORMAT.md §10.3): the decision table
    // skips the same lines, the first of duplicate ids counts, a head record
    // naming an unknown message is not folded, and only the header is a header.
    let mut ids: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut header_seen = false;
    let end = log::scan(&mut file, path, 0, &mut report, |line, report| {
        let probed = log::probe(line.bytes);
        let (text, p) = match probed {
            Ok(x) => x,
            Err(why) => {
                log::skip(report, &line, why);
                return Ok(());
            }
        };
        let class = match classify(&p) {
            Ok(c) => c,
            Err(why) => {
                log::skip(report, &line, why);
                return Ok(());
            }
        };
        let has_blob = p.has_blob();
        match class {
            Class::Message { id, .. } => {
                if !ids.insert(id.to_owned()) {
                    return Ok(());
                }
                let facts = Facts {
                    id,
                    role: p.role.str(),
                    timestamp: p.timestamp.str(),
                    usage: usage_in(p.meta.map(|m| m.get())),
                };
                let at = (line.offset, line.bytes.len(), has_blob);
                fold.message(facts, at, |_| parse_whole(text, has_blob, blobs));
            }
            Class::Head(Some(m)) if !ids.contains(m) => {}
            Class::Session { .. } if header_seen => {
                if let Some(rec) = parse_whole(text, false, blobs) {
                    fold.time_only(&rec);
                }
            }
            class => {
                header_seen |= matches!(class, Class::Session { .. });
                if let Some(rec) = parse_whole(text, has_blob, blobs) {
                    fold.record(&rec);
                }
            }
        }
        Ok(())
    })?;
    // The assistant messages the end needs, read again from where they are.
    let mut entry = fold.finish(|&(offset, len, has_blob)| {
        let mut bytes = vec![0; len];
        file.seek(SeekFrom::Start(offset)).ok()?;
        file.read_exact(&mut bytes).ok()?;
        parse_whole(std::str::from_utf8(&bytes).ok()?, has_blob, blobs).map(Cow::Owned)
    });
    if entry.created_at.is_empty() {
        let mtime = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| crate::format::ids::format_ms(d.as_millis() as u64))
            .unwrap_or_default();
        entry.created_at = mtime.clone();
        entry.updated_at = mtime;
    }
    entry.log_bytes = end + report.torn_tail.as_ref().map_or(0, |t| t.length);
    Ok((entry, report))
}

/// Each index entry as last written, with its JSON (see
/// [`IndexFile::to_bytes_reusing`]).
#[derive(Debug, Default)]
pub(crate) struct WrittenEntries(Vec<WrittenEntry>);

type WrittenEntry = (Box<IndexEntry>, Vec<u8>);

/// The index file as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IndexFile {
    /// The index format version.
    pub version: u64,
    /// The generation of the journal whose lines apply on top of this file
    /// (FORMAT.md §10.7); `None` for an index without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<u64>,
    /// One entry per session.
    pub sessions: Vec<IndexEntry>,
}

impl IndexFile {
    /// Read the index file alone, without its journal (for the index as readers
    /// see it, use [`crate::Store::read_index`]); `Ok(None)` when it does not
    /// exist, `Err(Corrupt)` when it cannot be parsed.
    pub fn read(path: &Path) -> Result<Option<IndexFile>> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        IndexFile::parse(&bytes, path).map(Some)
    }

    /// Parse the bytes of the index file at `path` (named in errors).
    pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<IndexFile> {
        let idx: IndexFile = serde_json::from_slice(bytes)
            .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))?;
        if idx.version > INDEX_VERSION {
            return Err(Error::Unsupported(format!(
                "{} is index version {}; this sessionkit reads up to {INDEX_VERSION}",
                path.display(),
                idx.version
            )));
        }
        Ok(idx)
    }

    /// The file's bytes: compact JSON and a newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = serde_json::to_vec(self).unwrap_or_default();
        b.push(b'\n');
        b
    }

    /// [`IndexFile::to_bytes`], with the JSON of each entry that is unchanged
    /// since the last call taken from `written`, which is left holding this
    /// call's. Serialising every entry was most of an update's own cost with
    /// fifty sessions, of which an update changes one.
    pub(crate) fn to_bytes_reusing(&self, written: &mut WrittenEntries) -> Vec<u8> {
        let mut before: Vec<Option<WrittenEntry>> = std::mem::take(&mut written.0)
            .into_iter()
            .map(Some)
            .collect();
        let at: std::collections::HashMap<String, usize, foldhash::fast::RandomState> = before
            .iter()
            .enumerate()
            .filter_map(|(i, w)| Some((w.as_ref()?.0.id.clone(), i)))
            .collect();
        let size = before
            .iter()
            .flatten()
            .map(|w| w.1.len() + 1)
            .sum::<usize>();
        let mut out = Vec::with_capacity(size + 64);
        out.extend_from_slice(format!("{{\"version\":{},", self.version).as_bytes());
        if let Some(g) = self.journal {
            out.extend_from_slice(format!("\"journal\":{g},").as_bytes());
        }
        out.extend_from_slice(b"\"sessions\":[");
        for (i, e) in self.sessions.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let same = at
                .get(&e.id)
                .and_then(|&j| before[j].take())
                .filter(|w| w.0.serialises_as(e));
            let w = same.unwrap_or_else(|| {
                (
                    Box::new(e.clone()),
                    serde_json::to_vec(e).unwrap_or_default(),
                )
            });
            out.extend_from_slice(&w.1);
            written.0.push(w);
        }
        out.extend_from_slice(b"]}\n");
        out
    }

    /// The entry of session `id`, if the index has one.
    pub fn get(&self, id: &str) -> Option<&IndexEntry> {
        self.sessions.iter().find(|e| e.id == id)
    }

    /// Replace the entry with the same id, or add it at the end.
    pub fn upsert(&mut self, entry: IndexEntry) {
        match self.sessions.iter_mut().find(|e| e.id == entry.id) {
            Some(e) => *e = entry,
            None => self.sessions.push(entry),
        }
    }

    /// Remove the entry of session `id`, returning it.
    pub fn remove(&mut self, id: &str) -> Option<IndexEntry> {
        let i = self.sessions.iter().position(|e| e.id == id)?;
        Some(self.sessions.remove(i))
    }

    /// Newest first by update time, then by id for a stable order.
    pub fn sort(&mut self) {
        // Each time parsed once, not at every comparison; the keys are sorted,
        // not the entries (a few hundred bytes each), which then move once. An
        // index read back is most often in order already.
        let keys: Vec<u64> = self
            .sessions
            .iter()
            .map(|e| sort_ms(&e.updated_at))
            .collect();
        let order = |a: usize, b: usize| {
            keys[b]
                .cmp(&keys[a])
                .then_with(|| self.sessions[b].id.cmp(&self.sessions[a].id))
        };
        if (1..keys.len()).all(|i| order(i - 1, i).is_le()) {
            return;
        }
        let mut perm: Vec<usize> = (0..keys.len()).collect();
        perm.sort_by(|&a, &b| order(a, b));
        let mut slots: Vec<Option<IndexEntry>> = std::mem::take(&mut self.sessions)
            .into_iter()
            .map(Some)
            .collect();
        self.sessions = perm.into_iter().filter_map(|i| slots[i].take()).collect();
    }
}

/// The index during an update: every change goes through [`IndexEdit::upsert`] and
/// [`IndexEdit::remove`], which note the sessions changed, so that the update can
/// append just those to the journal.
pub(crate) struct IndexEdit<'a> {
    idx: &'a mut IndexFile,
    changed: Vec<String>,
}

impl<'a> IndexEdit<'a> {
    pub fn new(idx: &'a mut IndexFile) -> IndexEdit<'a> {
        IndexEdit {
            idx,
            changed: Vec::new(),
        }
    }

    pub fn sessions(&self) -> &[IndexEntry] {
        &self.idx.sessions
    }

    pub fn get(&self, id: &str) -> Option<&IndexEntry> {
        self.idx.get(id)
    }

    /// Set a session's entry; an entry equal to the one there changes nothing.
    pub fn upsert(&mut self, entry: IndexEntry) {
        if self
            .idx
            .get(&entry.id)
            .is_some_and(|e| e.serialises_as(&entry))
        {
            return;
        }
        self.note(&entry.id);
        self.idx.upsert(entry);
    }

    pub fn remove(&mut self, id: &str) -> Option<IndexEntry> {
        let e = self.idx.remove(id)?;
        self.note(id);
        Some(e)
    }

    /// Sort the entries (no change to any of them).
    pub fn sort(&mut self) {
        self.idx.sort();
    }

    fn note(&mut self, id: &str) {
        if !self.changed.iter().any(|c| c == id) {
            self.changed.push(id.to_string());
        }
    }

    /// The journal lines of the changes made: each changed session's entry, or
    /// its removal.
    pub fn journal_lines(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for id in &self.changed {
            match self.idx.get(id) {
                Some(e) => crate::index::journal::entry_line(e, &mut out),
                None => crate::index::journal::remove_line(id, &mut out),
            }
        }
        out
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

    /// `fold_log` as it was before `Fold`: every accepted record parsed whole and
    /// applied in order.
    fn fold_one_by_one(id: &str, path: &Path, blobs: &BlobStore) -> IndexEntry {
        let mut entry = IndexEntry::new(id);
        for rec in accepted_records(path, blobs) {
            entry.apply(&rec);
        }
        entry
    }

    /// The records of a log that the reader accepts, parsed, blobs inlined.
    fn accepted_records(path: &Path, blobs: &BlobStore) -> Vec<Map<String, Value>> {
        let mut file = File::open(path).unwrap();
        let mut out = Vec::new();
        let mut report = ReadReport::default();
        let mut ids = std::collections::HashSet::new();
        let mut header = false;
        log::scan(&mut file, path, 0, &mut report, |line, _| {
            let Ok((text, p)) = log::probe(line.bytes) else {
                return Ok(());
            };
            let Ok(class) = classify(&p) else {
                return Ok(());
            };
            let accepted = match class {
                Class::Message { id, .. } => ids.insert(id.to_owned()),
                Class::Head(m) => m.is_none_or(|m| ids.contains(m)),
                _ => true,
            };
            let later_header =
                matches!(class, Class::Session { .. }) && std::mem::replace(&mut header, true);
            if let (true, Ok(Value::Object(mut rec))) = (accepted, serde_json::from_str(text)) {
                let _ = blobs.inline(&mut rec);
                if later_header {
                    // Only the header is a header: a later one folds its time.
                    rec.retain(|k, _| k == "timestamp");
                    rec.insert("type".into(), "later-session".into());
                }
                out.push(rec);
            }
            Ok(())
        })
        .unwrap();
        out
    }

    /// Fold `rec` into `live` as the writer does ([`LiveEntry::message`]) when
    /// the writer could have written it (a message with an id, a known role and a
    /// time), else as any record.
    fn live_fold(live: &mut LiveEntry, rec: Map<String, Value>, bytes: usize) {
        let text = |k: &str| rec.get(k).and_then(Value::as_str).map(str::to_owned);
        let role =
            text("role").and_then(|r| crate::format::records::ROLES.into_iter().find(|x| *x == r));
        let is_message = matches!(text("type").as_deref(), None | Some(kind::MESSAGE));
        match (is_message, text("id"), role, text("timestamp")) {
            (true, Some(id), Some(role), Some(ts)) => {
                let store_set = ["type", "id", "parentId", "sessionId", "role", "timestamp"];
                let fields = rec
                    .into_iter()
                    .filter(|(k, _)| !store_set.contains(&k.as_str()))
                    .collect();
                live.message(&id, Written::new(role, ts, fields, bytes));
            }
            _ => live.apply(rec, bytes),
        }
    }

    /// One log line from a generated (kind, n, flag).
    fn line(k: u8, n: u8, flag: bool, seq: usize, blob: &str) -> String {
        use serde_json::json;
        let ts = format!("2026-01-0{}T00:00:00.{:03}Z", 1 + n % 3, seq);
        let id = format!("m{seq}");
        let usage = json!({"input_tokens": n, "output_tokens": seq});
        let text = ["", "  ", "reply", "a longer reply"][n as usize % 4];
        let v = match k {
            0 => json!({"type": "session", "version": 1, "id": "s", "createdAt": ts,
                        "title": if flag { json!("given") } else { json!(null) }}),
            1 => json!({"type": "message", "id": id, "role": "user", "content": text,
                        "timestamp": ts}),
            2 => {
                let mut m = json!({"type": "message", "id": id, "role": "assistant",
                                   "content": text, "timestamp": ts, "meta": {"usage": usage}});
                if flag {
                    m["messageParams"] = json!({"tool_calls": [{"id": format!("c{seq}"),
                        "function": {"name": "edit", "arguments": "{}"}}]});
                }
                m
            }
            3 => {
                let mut blocks = vec![json!({"type": "text", "text": text})];
                if flag {
                    blocks
                        .push(json!({"type": "tool_use", "id": format!("t{seq}"), "name": "read"}));
                }
                json!({"id": id, "role": "assistant", "content": blocks, "timestamp": ts})
            }
            4 => json!({"type": "message", "id": id, "role": "tool", "content": "ok",
                        "meta": {"usage": usage}}),
            5 => json!({"type": "state", "timestamp": ts, "set": {"lastToolCall":
                        if flag { json!({"name": format!("s{seq}")}) } else { json!(null) }}}),
            6 => json!({"type": "state", "set": if flag { json!({"title": "renamed"}) }
                                                 else { json!({"status": "completed"}) }}),
            7 => json!({"type": "patch", "messageId": format!("m{}", seq / 2), "timestamp": ts,
                        "patch": {"meta": {"usage": usage}}}),
            8 => json!({"type": "head", "messageId": if flag { format!("m{}", seq / 2) }
                                                    else { "nowhere".into() }}),
            9 => json!({"type": "message", "id": format!("m{}", seq / 2), "role": "assistant",
                        "content": "duplicate", "timestamp": ts}),
            10 => {
                return if flag {
                    "{not json".into()
                } else {
                    r#"{"role":"user"}"#.into()
                }
            }
            11 => {
                let escaped = ts.replace("T", "\\u0054");
                let meta = if flag {
                    "\"plain\"".to_string()
                } else {
                    r#"{"usage":{"x":1},"usage":{"y":2}}"#.to_string()
                };
                return format!(
                    r#"{{"id":"{id}","role":"assistant","content":"{text}","timestamp":"{escaped}","meta":{meta}}}"#
                );
            }
            _ => {
                json!({"type": "message", "id": id, "role": if flag { "user" } else { "assistant" },
                        "contentBlob": {"sha256": blob, "bytes": 9}, "timestamp": ts})
            }
        };
        v.to_string()
    }

    #[test]
    fn index_bytes_reusing_unchanged_entries_are_the_same_bytes() {
        let entry = |i: usize| {
            let mut e = IndexEntry::new(&format!("s{i}"));
            e.title = format!("title \"{i}\" é\n");
            e.last_tool_call = Some(serde_json::json!({"name": "edit", "n": i}));
            e.extra
                .insert("hostField".into(), serde_json::json!([i, null]));
            e
        };
        let mut idx = IndexFile {
            version: INDEX_VERSION,
            journal: Some(3),
            sessions: (0..5).map(entry).collect(),
        };
        let mut written = WrittenEntries::default();
        assert_eq!(idx.to_bytes_reusing(&mut written), idx.to_bytes());
        // One entry changed, one gone, one new, the order changed.
        idx.sessions[1].status = Status::Completed;
        idx.sessions.remove(3);
        idx.sessions.push(entry(9));
        idx.sessions.swap(0, 2);
        assert_eq!(idx.to_bytes_reusing(&mut written), idx.to_bytes());
        assert_eq!(written.0.len(), 5);
        assert!(written.0.iter().zip(&idx.sessions).all(|(w, e)| *w.0 == *e));
        // Same keys and values in another order: other bytes.
        let usage = &mut idx.sessions[0].token_usage;
        usage.insert("a".into(), 1.into());
        usage.insert("b".into(), 2.into());
        assert_eq!(idx.to_bytes_reusing(&mut written), idx.to_bytes());
        idx.sessions[0].token_usage.shift_remove("a");
        idx.sessions[0].token_usage.insert("a".into(), 1.into());
        assert_eq!(idx.to_bytes_reusing(&mut written), idx.to_bytes());
        idx.journal = None;
        assert_eq!(idx.to_bytes_reusing(&mut written), idx.to_bytes());
        idx.sessions.clear();
        assert_eq!(idx.to_bytes_reusing(&mut written), idx.to_bytes());
    }

    proptest::proptest! {
        // The seed is printed; PROPTEST_RNG_SEED=<seed> reruns a failure's inputs.
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 200,
            rng_seed: proptest::test_runner::RngSeed::Fixed(crate::testing::proptest_seed()),
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// Folding with `Fold` (messages from their probes, texts parsed only
        /// when needed) gives the entry of applying every record in turn.
        #[test]
        fn fold_log_and_a_live_entry_agree_with_applying_each_record(
            recs in proptest::collection::vec((0u8..13, 0u8..8, proptest::bool::ANY), 0..40),
            peek in 0usize..5,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let blobs = BlobStore::new(dir.path());
            let blob = blobs.put(br#""in blob""#, false).unwrap().sha256;
            let path = dir.path().join("s.jsonl");
            let text: String = recs
                .iter()
                .enumerate()
                .map(|(i, &(k, n, f))| line(k, n, f, i, &blob) + "\n")
                .collect();
            std::fs::write(&path, text).unwrap();
            let (folded, _) = fold_log("s", &path, &blobs).unwrap();
            let mut want = fold_one_by_one("s", &path, &blobs);
            // A writer's entry, read every `peek` records along the way.
            let mut live = LiveEntry::new(IndexEntry::new("s"));
            for (i, rec) in accepted_records(&path, &blobs).into_iter().enumerate() {
                live_fold(&mut live, rec, if i % 3 == 0 { 600_000 } else { 10 });
                if peek > 0 && i % peek == 0 {
                    live.get();
                }
            }
            proptest::prop_assert_eq!(live.get().clone(), fold_one_by_one("s", &path, &blobs));
            want.log_bytes = folded.log_bytes;
            if want.created_at.is_empty() {
                want.created_at = folded.created_at.clone();
                want.updated_at = folded.updated_at.clone();
            }
            proptest::prop_assert_eq!(folded, want);
        }
    }
}
