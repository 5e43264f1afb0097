//! Fork: a new session from any message of another, sharing its blobs.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};
use crate::format::records::{kind, FORMAT_VERSION};
use crate::fsutil;
use crate::index::{Fold, IndexEntry, Lineage};
use crate::log;
use crate::log::writer::{Chain, LogWriter};
use crate::options::Durability;
use crate::store::session::SessionCore;
use crate::store::StoreCore;

/// Options for a fork.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkOptions {
    /// The message to fork at; the source's head when absent.
    pub at: Option<String>,
    /// A title for the fork; the source's title otherwise.
    pub title: Option<String>,
}

impl ForkOptions {
    /// Parse options from a JSON object (`at`, `title`); empty text gives the
    /// defaults. Fails with `InvalidInput` on unknown fields or bad JSON.
    pub fn from_json(json: &str) -> Result<ForkOptions> {
        crate::format::json::options_from_json("fork options", json)
    }
}

/// Rewrite the session id of a copied line. Our writer always writes
/// `"sessionId":"<id>"`, and in JSON text that token can only be a key and its
/// value (quotes inside strings are escaped), so a byte replacement is exact;
/// other spellings are parsed and rewritten.
pub(crate) fn rewrite_session_id(line: &str, old: &str, new: &str) -> Result<String> {
    let mut out = Vec::with_capacity(line.len());
    SessionIdRewrite::new(old, new).push(&mut out, line)?;
    String::from_utf8(out).map_err(|e| Error::Internal(e.to_string()))
}

/// [`rewrite_session_id`] of many lines, into one buffer.
struct SessionIdRewrite {
    needle: memchr::memmem::Finder<'static>,
    with: Vec<u8>,
    new: String,
}

impl SessionIdRewrite {
    fn new(old: &str, new: &str) -> SessionIdRewrite {
        SessionIdRewrite {
            needle: memchr::memmem::Finder::new(format!("\"sessionId\":\"{old}\"").as_bytes())
                .into_owned(),
            with: format!("\"sessionId\":\"{new}\"").into_bytes(),
            new: new.to_string(),
        }
    }

    /// Append `line`, rewritten, to `out` (without a newline).
    fn push(&self, out: &mut Vec<u8>, line: &str) -> Result<()> {
        let bytes = line.as_bytes();
        let mut from = 0;
        for at in self.needle.find_iter(bytes) {
            out.extend_from_slice(&bytes[from..at]);
            out.extend_from_slice(&self.with);
            from = at + self.needle.needle().len();
        }
        if from > 0 || memchr::memmem::find(bytes, b"\"sessionId\"").is_none() {
            out.extend_from_slice(&bytes[from..]);
            return Ok(());
        }
        let mut v: Map<String, Value> = serde_json::from_str(line)
            .map_err(|e| Error::Corrupt(format!("copying a record: {e}")))?;
        if v.contains_key("sessionId") {
            v.insert("sessionId".into(), self.new.clone().into());
        }
        serde_json::to_writer(out, &v).map_err(|e| Error::Internal(e.to_string()))
    }
}

fn copy_rewritten(from: &Path, to: &Path, old: &str, new: &str, sync: bool) -> Result<()> {
    let text = std::fs::read_to_string(from).at(from)?;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if body.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        out.push_str(&rewrite_session_id(body, old, new).unwrap_or_else(|_| body.to_string()));
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    fsutil::atomic_write(to, out.as_bytes(), sync, sync)
}

/// How much of a fork's log is written at a time.
const FORK_WRITE_BYTES: usize = 1 << 20;

impl StoreCore {
    /// Fork `source` (whole, or at `options.at`) into a new session. Reads the
    /// source without locking it, so a session another process is writing can be
    /// forked; the fork sees the source as of its last complete line.
    pub(crate) fn fork_session(&self, source: &str, options: ForkOptions) -> Result<SessionCore> {
        // The source as an outline: its structure, not its 50 MiB of text, which
        // is read back a window at a time as it is copied.
        let (loaded, src_file) = self.load_session_outline(source)?;
        let mut src = SourceLines::new(src_file, loaded.path.clone());
        let at = options.at.or_else(|| loaded.head.clone());
        let path: Vec<usize> = match &at {
            Some(at) => {
                if !loaded.contains(at) {
                    return Err(Error::NotFound(format!(
                        "message {at:?} in session {source}"
                    )));
                }
                loaded.path_indices(at)?
            }
            None => Vec::new(),
        };
        let on_path: HashSet<&str> = path
            .iter()
            .map(|&i| loaded.entries[i].id.as_str())
            .collect();

        let id = self.ids().new_id();
        // The fork's records other than messages, by their offsets in the source.
        // With whether they hold the session id (a summary message does).
        let mut others: Vec<(u64, Map<String, Value>, bool)> = Vec::new();
        for (msg, patches) in &loaded.patches {
            if on_path.contains(msg.as_str()) {
                for (off, p) in patches {
                    let mut rec = Map::new();
                    rec.insert("type".into(), kind::PATCH.into());
                    rec.insert("messageId".into(), msg.clone().into());
                    rec.insert("patch".into(), p.clone());
                    others.push((*off, rec, false));
                }
            }
        }
        for (sid, (off, rec)) in &loaded.compactions {
            if let (true, Value::Object(rec)) = (on_path.contains(sid.as_str()), rec) {
                others.push((*off, rec.clone(), true));
            }
        }
        // Subagents spawned while the conversation was on the fork's path come along.
        let mut agents: Vec<String> = Vec::new();
        for (rec, off) in loaded.records.iter().zip(&loaded.record_offsets) {
            if rec["type"] != kind::SUBAGENT {
                continue;
            }
            let Some(a) = rec["agentId"].as_str() else {
                continue;
            };
            let inherited = if rec["event"] == "spawn" {
                let at_spawn = rec["messageId"].as_str();
                let yes = at_spawn.is_none_or(|m| on_path.contains(m));
                if yes {
                    agents.push(a.to_string());
                }
                yes
            } else {
                agents.iter().any(|x| x == a)
            };
            if let (true, Value::Object(rec)) = (inherited, rec) {
                others.push((*off, rec.clone(), false));
            }
        }
        others.sort_by_key(|(off, _, _)| *off);

        // Only the title is taken from the source's entry; a stale entry still has it.
        let source_entry = self
            .read_index()
            .ok()
            .flatten()
            .and_then(|i| i.index.get(source).cloned());
        let mut header = Map::new();
        header.insert("type".into(), kind::SESSION.into());
        header.insert("version".into(), FORMAT_VERSION.into());
        header.insert("id".into(), id.clone().into());
        header.insert("createdAt".into(), self.ids().timestamp().into());
        header.insert(
            "projectPath".into(),
            self.project_root().to_string_lossy().into_owned().into(),
        );
        let title = options
            .title
            .or_else(|| source_entry.filter(|e| e.title_set).map(|e| e.title));
        if let Some(t) = title {
            if t.trim().is_empty() {
                return Err(Error::invalid("fork title is empty"));
            }
            header.insert("title".into(), t.into());
        }
        let lineage = Lineage {
            session_id: source.to_string(),
            message_id: at.clone(),
        };
        header.insert(
            "forkedFrom".into(),
            serde_json::to_value(&lineage).map_err(|e| Error::Internal(e.to_string()))?,
        );

        // The log is written under a temporary name and given its own only when
        // whole: a fork cut short by a crash is no session at all.
        let new_path = self.log_path(&id)?;
        let staged = self.dir().join(format!(".tmp-fork-{id}.jsonl"));
        let what = format!("session {id}");
        let durability = self.options().durability;
        let mut writer = self.open_log_writer(&id, None, &staged, true, true, &what)?;
        let sync = durability != Durability::Never;
        let written = self
            .write_fork(
                &loaded, &mut src, &path, others, &agents, &header, source, &id, &writer, sync,
            )
            .and_then(|entry| writer.publish(&new_path, &what).map(|()| entry));
        let mut entry = match written {
            Ok(entry) => entry,
            Err(e) => {
                // Leave nothing of a fork that failed part way.
                drop(writer);
                // The id is new: its sidecar directory holds only what this fork put there.
                let _ = std::fs::remove_file(&staged);
                let _ = std::fs::remove_dir_all(self.session_dir(&id));
                return Err(e);
            }
        };
        if let Some(snapshot) = fork_snapshot(self, &loaded, &mut src, at.as_deref(), source)? {
            crate::history::create_branch(self.history_scope(), &id, &snapshot)?;
        }
        entry.log_bytes = writer.len();
        let chain = Chain::new(at, on_path.iter().map(|s| s.to_string()).collect());
        SessionCore::started(self, id, writer, chain, entry)
    }

    /// Write a fork's sidechains and log (`header`, then the records on `path`
    /// and `others` in the source's order); returns its index entry, folded on
    /// the way.
    #[allow(clippy::too_many_arguments)]
    fn write_fork(
        &self,
        loaded: &log::LoadedLog,
        src: &mut SourceLines,
        path: &[usize],
        mut others: Vec<(u64, Map<String, Value>, bool)>,
        agents: &[String],
        header: &Map<String, Value>,
        source: &str,
        id: &str,
        writer: &LogWriter,
        sync: bool,
    ) -> Result<IndexEntry> {
        // Sidechains first, so the log never names a subagent that is not there.
        for a in agents {
            let from = self.subagent_log_path(source, a)?;
            let to = self.subagent_log_path(id, a)?;
            if from.exists() {
                fsutil::create_private_dir(to.parent().unwrap_or(self.dir()))?;
                copy_rewritten(&from, &to, source, id, sync)?;
                let meta_from = from.with_extension("meta.json");
                if let Ok(bytes) = std::fs::read(&meta_from) {
                    let mut meta: Value = serde_json::from_slice(&bytes)
                        .map_err(|e| Error::Corrupt(format!("{}: {e}", meta_from.display())))?;
                    if let Some(m) = meta.as_object_mut() {
                        m.insert("sessionId".into(), id.into());
                    }
                    let out = serde_json::to_vec_pretty(&meta)
                        .map_err(|e| Error::Internal(e.to_string()))?;
                    fsutil::atomic_write(&to.with_extension("meta.json"), &out, sync, sync)?;
                }
            }
        }
        // The new log is written a piece at a time from one buffer, and its index
        // entry folded on the way: the copy is neither read back nor parsed again.
        let mut bytes = Vec::with_capacity(2 * FORK_WRITE_BYTES);
        serde_json::to_writer(&mut bytes, header).map_err(|e| Error::Internal(e.to_string()))?;
        bytes.push(b'\n');
        let mut fold: Fold<usize> = Fold::new(IndexEntry::new(id));
        fold.record(header);
        let rewrite = SessionIdRewrite::new(source, id);
        let mut others = others.drain(..).peekable();
        let mut messages = path.iter().copied().peekable();
        loop {
            // Records in the order of the source's log.
            let next_message = messages.peek().map(|&i| loaded.entries[i].offset);
            let next_other = others.peek().map(|(off, _, _)| *off);
            let message_first = match (next_message, next_other) {
                (Some(m), Some(o)) => m < o,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if message_first {
                let i = messages.next().unwrap_or_default();
                let e = &loaded.entries[i];
                let text = src.line(e)?;
                rewrite.push(&mut bytes, text)?;
                let mut parsed = None;
                // `whole` is only ever asked for the message being folded.
                fold.message(e.facts(text, &mut parsed), i, |_| {
                    crate::index::parse_whole(text, e.has_blob, self.blobs())
                });
            } else {
                let (_, rec, has_session_id) = others.next().unwrap_or_default();
                let text =
                    serde_json::to_string(&rec).map_err(|e| Error::Internal(e.to_string()))?;
                if has_session_id {
                    rewrite.push(&mut bytes, &text)?;
                } else {
                    bytes.extend_from_slice(text.as_bytes());
                }
                fold.record(&rec);
            }
            bytes.push(b'\n');
            if bytes.len() >= FORK_WRITE_BYTES {
                writer.write(&bytes)?;
                bytes.clear();
            }
        }
        let seq = writer.write(&bytes)?;
        if sync {
            // Before the log gets its name (which syncs the directory).
            writer.sync_to(seq)?;
        }
        Ok(fold.finish(|&i| {
            let e = &loaded.entries[i];
            let text = src.line(e).ok()?;
            crate::index::parse_whole(text, e.has_blob, self.blobs()).map(Cow::Owned)
        }))
    }
}

/// The lines of a fork's source read back from its open log, a window at a
/// time: the fork reads its source front to back, so each window is read once.
struct SourceLines {
    file: std::fs::File,
    path: std::path::PathBuf,
    window: Vec<u8>,
    /// File offset of `window[0]`, and how much of `window` holds the file.
    start: u64,
    filled: usize,
}

impl SourceLines {
    fn new(file: std::fs::File, path: std::path::PathBuf) -> SourceLines {
        SourceLines {
            file,
            path,
            window: Vec::new(),
            start: 0,
            filled: 0,
        }
    }

    /// The line of message `e`, as the outline found it.
    fn line(&mut self, e: &log::Entry) -> Result<&str> {
        let (offset, len) = (e.offset, e.len);
        let in_window =
            offset >= self.start && offset + len as u64 <= self.start + self.filled as u64;
        if !in_window {
            if self.window.len() < len.max(FORK_WRITE_BYTES) {
                self.window.resize(len.max(FORK_WRITE_BYTES), 0);
            }
            let (mut got, want) = (0, self.window.len());
            while got < want {
                let n = crate::platform::read_at(
                    &self.file,
                    &mut self.window[got..],
                    offset + got as u64,
                )
                .at(&self.path)?;
                if n == 0 {
                    break;
                }
                got += n;
            }
            (self.start, self.filled) = (offset, got);
        }
        let at = (offset - self.start) as usize;
        self.window[..self.filled]
            .get(at..at + len)
            .and_then(|b| simdutf8::basic::from_utf8(b).ok())
            .ok_or_else(|| {
                Error::Corrupt(format!(
                    "{}: the line of message {} at offset {offset} changed while it was forked",
                    self.path.display(),
                    e.id
                ))
            })
    }
}

/// The snapshot of the files as they were at the fork point: the one taken before
/// the next user input that followed it in the source, else the source's latest.
fn fork_snapshot(
    store: &StoreCore,
    loaded: &log::LoadedLog,
    src: &mut SourceLines,
    at: Option<&str>,
    source: &str,
) -> Result<Option<String>> {
    let Some(at) = at else { return Ok(None) };
    let Some(&at_index) = loaded.by_id.get(at) else {
        return Ok(None);
    };
    for e in loaded.entries.iter().skip(at_index + 1) {
        let text = src.line(e)?;
        if !text.contains("\"checkpointHash\":\"") {
            continue;
        }
        if !loaded.path_indices(&e.id)?.contains(&at_index) {
            continue;
        }
        let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        if let Some(h) = v["checkpointHash"].as_str() {
            return Ok(Some(h.to_string()));
        }
    }
    let git_dir = crate::history::git_dir_of(store.history_scope());
    if !git_dir.exists() {
        return Ok(None);
    }
    let repo = git2::Repository::open_bare(&git_dir)
        .map_err(|e| Error::Corrupt(format!("file history {}: {e}", git_dir.display())))?;
    Ok(repo
        .refname_to_id(&crate::history::branch_ref(source))
        .ok()
        .map(|oid| oid.to_string()))
}
