//! A session open for writing, and its subagents.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::format::ids::validate_path_id;
use crate::format::records::{kind, FORMAT_VERSION};
use crate::fsutil;
use crate::index::{fold_log, validate_state, IndexEntry, LiveEntry};
use crate::log::writer::{
    check_nesting, quarantine, record_line, AppendCtx, Chain, LogWriter, MAX_NESTING,
};
use crate::log::{self, ReadReport};
use crate::options::Durability;
use crate::store::shared::{fold_tail, SharedLock, WriteGuard};
use crate::store::{not_found_as_session, StoreCore, ViewCore};
use crate::view::Message;

/// Options for a new session.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateOptions {
    /// A title; otherwise the first 100 characters of the first user message.
    pub title: Option<String>,
    /// The session id; a fresh UUIDv7 when absent.
    pub id: Option<String>,
}

impl CreateOptions {
    /// Parse options from a JSON object (`title`, `id`); empty text gives the
    /// defaults. Fails with `InvalidInput` on unknown fields or bad JSON.
    pub fn from_json(json: &str) -> Result<CreateOptions> {
        crate::format::json::options_from_json("create options", json)
    }
}

/// The process a writer handle belongs to. A child the host forks inherits the
/// handle, and with it the lock's open file: appends from both processes would
/// interleave in one log, so only the process that opened the handle writes.
#[derive(Debug, Clone, Copy)]
struct Owner {
    pid: u32,
    /// [`crate::platform::fork_count`] when the handle was opened.
    forks: Option<u64>,
}

impl Owner {
    fn current() -> Owner {
        Owner {
            pid: std::process::id(),
            forks: crate::platform::fork_count(),
        }
    }

    fn is_current(&self) -> bool {
        match (self.forks, crate::platform::fork_count()) {
            (Some(then), Some(now)) => then == now,
            _ => self.pid == std::process::id(),
        }
    }

    /// Fail unless this is the process that opened `what`.
    fn check(&self, what: impl FnOnce() -> String) -> Result<()> {
        if self.is_current() {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "{} was opened for writing by process {}; process {} (forked from it) may not \
             write through that handle: close it and open or fork the session in this process",
            what(),
            self.pid,
            std::process::id()
        )))
    }
}

/// Builds records to write after a batch of messages, from their stored form.
pub(crate) type ExtraRecords<'a> =
    &'a dyn Fn(&[Map<String, Value>]) -> Result<Vec<Map<String, Value>>>;

struct State {
    chain: Chain,
    entry: LiveEntry,
    /// The index entry is behind the log.
    dirty: bool,
    /// `close` wrote the index: dropping the handle has nothing left to write.
    closed: bool,
}

pub(crate) struct SessionInner {
    store: StoreCore,
    id: String,
    owner: Owner,
    writer: LogWriter,
    state: Mutex<State>,
    open_report: ReadReport,
    pruned: Vec<String>,
    /// Set for a shared writer, which holds the log's lock only while it
    /// writes ([`crate::store::shared`]); unset for the exclusive handle.
    shared: OnceLock<SharedLock>,
    /// File history state (tracked files, read marks, last snapshot), loaded on first use.
    history: crate::history::SessionHistory,
}

/// A session open for writing. Holds the session's exclusive lock until it is
/// closed or dropped. Safe to share between threads; appends are serialised.
pub(crate) struct SessionCore {
    inner: Arc<SessionInner>,
}

impl std::fmt::Debug for SessionCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.inner.id)
            .finish()
    }
}

impl SessionCore {
    pub(crate) fn create(store: &StoreCore, opts: CreateOptions) -> Result<SessionCore> {
        Self::create_at(store, opts, None)
    }

    /// Create session `id` for the conversation `conversation_id`, which the
    /// header and the index keep when it differs from `id` (FORMAT.md §3.3).
    pub(crate) fn create_conversation(
        store: &StoreCore,
        id: &str,
        conversation_id: &str,
    ) -> Result<SessionCore> {
        let opts = CreateOptions {
            id: Some(id.to_owned()),
            ..CreateOptions::default()
        };
        let conversation = (id != conversation_id).then_some(conversation_id);
        Self::create_full(store, opts, None, conversation)
    }

    /// [`SessionCore::create`] with the header's `createdAt` given (an imported
    /// session keeps its source's creation time) instead of now.
    pub(crate) fn create_at(
        store: &StoreCore,
        opts: CreateOptions,
        created_at: Option<String>,
    ) -> Result<SessionCore> {
        Self::create_full(store, opts, created_at, None)
    }

    fn create_full(
        store: &StoreCore,
        opts: CreateOptions,
        created_at: Option<String>,
        conversation_id: Option<&str>,
    ) -> Result<SessionCore> {
        let id = match opts.id {
            Some(id) => {
                validate_path_id("session id", &id)?;
                id
            }
            None => store.ids().new_id(),
        };
        if let Some(t) = &opts.title {
            if t.trim().is_empty() {
                return Err(Error::invalid("session title is empty"));
            }
        }
        let path = store.log_path(&id)?;
        let mut header = Map::new();
        header.insert("type".into(), kind::SESSION.into());
        header.insert("version".into(), FORMAT_VERSION.into());
        header.insert("id".into(), id.clone().into());
        header.insert(
            "createdAt".into(),
            created_at.unwrap_or_else(|| store.ids().timestamp()).into(),
        );
        header.insert(
            "projectPath".into(),
            store.project_root().to_string_lossy().into_owned().into(),
        );
        if let Some(t) = &opts.title {
            header.insert("title".into(), t.clone().into());
        }
        if let Some(c) = conversation_id {
            header.insert("conversationId".into(), c.into());
        }
        // A header over the limit (a huge title) creates no log.
        record_line(&header, Some(store.options().max_record_bytes))?;
        let writer =
            store.open_log_writer(&id, None, &path, true, true, &format!("session {id}"))?;
        Self::start(store, id, writer, header)
    }

    /// Write the header of a new log, register it in the index and prune.
    pub(crate) fn start(
        store: &StoreCore,
        id: String,
        writer: LogWriter,
        header: Map<String, Value>,
    ) -> Result<SessionCore> {
        let max = Some(store.options().max_record_bytes);
        let seq = writer.write(&record_line(&header, max)?)?;
        if store.options().durability != Durability::Never {
            writer.sync_to(seq)?;
            fsutil::sync_dir_of(writer.path())?;
        }
        let mut entry = IndexEntry::new(&id);
        entry.apply(&header);
        entry.log_bytes = writer.len();
        Self::started(store, id, writer, Chain::default(), entry)
    }

    /// Let go of the exclusive lock of a handle just created, and write
    /// through it as a shared writer from now on.
    pub(crate) fn into_shared(self) -> SessionCore {
        let timeout = self.inner.store.options().busy_timeout();
        let lock = SharedLock::new(timeout, format!("session {}", self.inner.id));
        if self.inner.shared.set(lock).is_ok() {
            self.inner.writer.unlock();
        }
        self
    }

    /// Open a session as a shared writer: the log's lock is taken only for
    /// the moment of each write, waiting up to the store's busy timeout for
    /// another holder. Fails with `NotFound` for an unknown session, `Busy`
    /// when the lock stays held past the timeout.
    pub(crate) fn open_shared(store: &StoreCore, id: &str) -> Result<SessionCore> {
        let path = store.log_path(id)?;
        let what = format!("session {id}");
        let writer = store
            .open_log_writer(id, None, &path, false, false, &what)
            .map_err(|e| not_found_as_session(e, id))?;
        let shared = SharedLock::new(store.options().busy_timeout(), what);
        // What others appended before the lock is loaded whole below, not
        // folded as a tail at the first write: the lock takes the length.
        writer.lock_within(shared.timeout, &shared.what)?;
        let prepared = (|| {
            let cache = store.structure_cache_path(id);
            let (chain, report) = prepare_writer(&writer, &path, Some(&cache))?;
            let (entry, dirty) = entry_for(store, id, &path, &writer)?;
            Ok((chain, report, entry, dirty))
        })();
        writer.unlock();
        let (chain, report, entry, dirty) = prepared?;
        let s = SessionCore::assemble(store, id, writer, chain, entry, dirty, report, Some(shared));
        if dirty {
            s.flush_index()?;
        }
        Ok(s)
    }

    /// Whether this handle is a shared writer.
    pub(crate) fn is_shared(&self) -> bool {
        self.inner.shared.get().is_some()
    }

    /// Hold the writer lock for this thread (a shared handle takes it and
    /// catches up with the log; an exclusive one holds it already).
    fn write_guard(&self) -> Result<WriteGuard<'_>> {
        let Some(shared) = self.inner.shared.get() else {
            return Ok(WriteGuard::exclusive());
        };
        shared.hold(&self.inner.writer, |from| {
            let mut st = self.inner.state.lock();
            let st = &mut *st;
            fold_tail(
                &self.inner.writer,
                from,
                &mut st.chain,
                &mut st.entry,
                self.inner.store.blobs(),
            )?;
            st.dirty |= self.inner.writer.len() != from;
            Ok(())
        })
    }

    /// Run `f` as one write: a shared handle holds the writer lock throughout,
    /// so what `f` reads of the session (its head, its view) is what it writes
    /// after.
    pub(crate) fn write_transaction<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check_writer()?;
        let _guard = self.write_guard()?;
        f()
    }

    /// Register a freshly written log in the index (pruning older sessions) and
    /// hand out its writer.
    pub(crate) fn started(
        store: &StoreCore,
        id: String,
        writer: LogWriter,
        chain: Chain,
        entry: IndexEntry,
    ) -> Result<SessionCore> {
        let pruned = store.update_index(store.durable(), |idx| {
            idx.upsert(entry.clone());
            store.prune(idx, &id)
        })?;
        Ok(SessionCore {
            inner: Arc::new(SessionInner {
                store: store.clone(),
                id,
                owner: Owner::current(),
                writer,
                state: Mutex::new(State {
                    chain,
                    entry: LiveEntry::new(entry),
                    dirty: false,
                    closed: false,
                }),
                open_report: ReadReport::default(),
                pruned,
                shared: OnceLock::new(),
                history: Default::default(),
            }),
        })
    }

    /// Move the head to a message so the conversation resumes from there (an alias
    /// of [`SessionCore::set_head`] under the name hosts look for).
    pub(crate) fn resume_at(&self, message_id: &str) -> Result<()> {
        self.set_head(Some(message_id))
    }

    /// What goes to the model on resume, read from the end of the log back to the
    /// latest compaction on the active path.
    pub(crate) fn model_view(&self, opts: &crate::view::ModelViewOptions) -> Result<Vec<Message>> {
        self.inner.store.model_view(&self.inner.id, opts)
    }

    pub(crate) fn open(store: &StoreCore, id: &str) -> Result<SessionCore> {
        let path = store.log_path(id)?;
        let cache = store.structure_cache_path(id);
        let (writer, chain, report) = open_for_writing(
            store,
            (id, None),
            &path,
            Some(&cache),
            &format!("session {id}"),
        )?;
        let (entry, dirty) = entry_for(store, id, &path, &writer)?;
        let s = SessionCore::assemble(store, id, writer, chain, entry, dirty, report, None);
        if dirty {
            s.flush_index()?;
        }
        Ok(s)
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        store: &StoreCore,
        id: &str,
        writer: LogWriter,
        chain: Chain,
        entry: IndexEntry,
        dirty: bool,
        report: ReadReport,
        shared: Option<SharedLock>,
    ) -> SessionCore {
        SessionCore {
            inner: Arc::new(SessionInner {
                store: store.clone(),
                id: id.to_string(),
                owner: Owner::current(),
                writer,
                state: Mutex::new(State {
                    chain,
                    entry: LiveEntry::new(entry),
                    dirty,
                    closed: false,
                }),
                open_report: report,
                pruned: Vec::new(),
                shared: shared.map(OnceLock::from).unwrap_or_default(),
                history: Default::default(),
            }),
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.inner.id
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        self.inner.writer.path()
    }

    pub(crate) fn store(&self) -> &StoreCore {
        &self.inner.store
    }

    /// What opening found: skipped lines (now quarantined), a torn tail (now
    /// terminated), broken chains.
    pub(crate) fn open_report(&self) -> &ReadReport {
        &self.inner.open_report
    }

    /// Sessions removed from the project when this one was created.
    pub(crate) fn pruned(&self) -> &[String] {
        &self.inner.pruned
    }

    /// How many times this handle fsynced its log (group commit shares one fsync
    /// between concurrent appends).
    pub(crate) fn fsync_count(&self) -> u64 {
        self.inner.writer.fsync_count()
    }

    /// Fail unless this process opened the session: a forked child reads
    /// through an inherited handle but never writes through it.
    pub(crate) fn check_writer(&self) -> Result<()> {
        self.inner
            .owner
            .check(|| format!("session {}", self.inner.id))
    }
    pub(crate) fn file_history(&self) -> &crate::history::SessionHistory {
        &self.inner.history
    }

    /// The current head message id.
    pub(crate) fn head(&self) -> Option<String> {
        self.inner.state.lock().chain.head.clone()
    }

    /// The session's index entry as this writer knows it.
    pub(crate) fn entry(&self) -> IndexEntry {
        self.entry_of(&mut self.inner.state.lock())
    }

    fn entry_of(&self, st: &mut State) -> IndexEntry {
        let e = st.entry.get();
        e.log_bytes = self.inner.writer.len();
        e.clone()
    }

    fn ctx(&self) -> AppendCtx<'_> {
        ctx_for(&self.inner.store, &self.inner.id, None)
    }

    /// Append one message. Returns it as stored (id, parent and time filled in).
    pub(crate) fn append(&self, message: Value) -> Result<Message> {
        Ok(self.append_batch(vec![message])?.remove(0))
    }

    /// Append messages in one write. Every message is checked before anything is
    /// written, so an invalid one leaves the log unchanged. A process killed during
    /// a large write can leave a prefix of the batch, always whole lines.
    pub(crate) fn append_batch(&self, messages: Vec<Value>) -> Result<Vec<Message>> {
        self.append_with(messages, None)
    }

    /// Append messages and, in the same write, the records `extra` builds from
    /// their stored form (e.g. a compaction record naming the summary).
    pub(crate) fn append_with(
        &self,
        messages: Vec<Value>,
        extra: Option<ExtraRecords<'_>>,
    ) -> Result<Vec<Message>> {
        self.check_writer()?;
        let guard = self.write_guard()?;
        let seq;
        let out;
        {
            let mut st = self.inner.state.lock();
            let mut batch = st.chain.prepare(messages, &self.ctx())?;
            let mut extra_records = Vec::new();
            if let Some(extra) = extra {
                let stored: Vec<Map<String, Value>> = batch
                    .bytes
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(|l| serde_json::from_slice(l).map_err(|e| Error::Internal(e.to_string())))
                    .collect::<Result<_>>()?;
                for rec in extra(&stored)? {
                    batch.bytes.extend(record_line(&rec, None)?);
                    extra_records.push(rec);
                }
            }
            seq = self.inner.writer.write(&batch.bytes)?;
            st.chain.commit(&mut batch);
            // Folded only once the write succeeded: a failed append leaves the
            // entry as it was.
            for (m, w) in batch.messages.iter().zip(batch.written.drain(..)) {
                st.entry.message(m.id(), w);
            }
            for rec in extra_records {
                st.entry.apply(rec, 0);
            }
            st.dirty = true;
            out = batch.messages;
        }
        // The fsync (when asked for) needs no lock: the next writer may go on.
        drop(guard);
        self.inner.writer.after_append(seq)?;
        Ok(out)
    }

    /// Append groups of messages in one write, each group checked as if
    /// appended alone after the accepted groups before it: a refused group is
    /// not written and gets its own error. An error of the write itself fails
    /// the call (a process killed during it can leave a prefix of whole lines).
    pub(crate) fn append_groups(
        &self,
        groups: Vec<Vec<Value>>,
    ) -> Result<Vec<Result<Vec<Message>>>> {
        self.check_writer()?;
        let guard = self.write_guard()?;
        let seq;
        let out;
        {
            let mut st = self.inner.state.lock();
            let (mut batch, counts) = st.chain.prepare_groups(groups, &self.ctx());
            if batch.messages.is_empty() {
                return Ok(counts.into_iter().map(|c| c.map(|_| Vec::new())).collect());
            }
            seq = self.inner.writer.write(&batch.bytes)?;
            st.chain.commit(&mut batch);
            for (m, w) in batch.messages.iter().zip(batch.written.drain(..)) {
                st.entry.message(m.id(), w);
            }
            st.dirty = true;
            out = split_groups(batch.messages, counts);
        }
        drop(guard);
        self.inner.writer.after_append(seq)?;
        Ok(out)
    }

    /// Write non-message records in one write and fold them into the entry (an
    /// import's records of source lines it keeps without modelling them).
    pub(crate) fn append_records(&self, records: Vec<Map<String, Value>>) -> Result<()> {
        self.check_writer()?;
        let guard = self.write_guard()?;
        let max = Some(self.inner.store.options().max_record_bytes);
        let mut bytes = Vec::new();
        for rec in &records {
            bytes.extend(record_line(rec, max)?);
        }
        let seq;
        {
            let mut st = self.inner.state.lock();
            seq = self.inner.writer.write(&bytes)?;
            for rec in records {
                st.entry.apply(rec, 0);
            }
            st.dirty = true;
        }
        drop(guard);
        self.inner.writer.after_append(seq)
    }

    /// Write a non-message record and fold it into the entry. `names`, a
    /// message the record refers to, must be in the log at the moment of the
    /// write (`NotFound` otherwise).
    fn write_record(&self, rec: Map<String, Value>, names: Option<&str>) -> Result<IndexEntry> {
        self.check_writer()?;
        let guard = self.write_guard()?;
        if let Some(id) = names {
            self.check_message(id)?;
        }
        let seq;
        let entry;
        {
            let mut st = self.inner.state.lock();
            let max = self.inner.store.options().max_record_bytes;
            seq = self.inner.writer.write(&record_line(&rec, Some(max))?)?;
            if rec.get("type").and_then(Value::as_str) == Some(kind::HEAD) {
                st.chain.head = rec
                    .get("messageId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            st.entry.apply(rec, 0);
            st.dirty = true;
            entry = self.entry_of(&mut st);
        }
        drop(guard);
        self.inner.writer.after_append(seq)?;
        Ok(entry)
    }

    fn record(&self, kind: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert(
            "timestamp".into(),
            self.inner.store.ids().timestamp().into(),
        );
        m
    }

    fn check_message(&self, id: &str) -> Result<()> {
        if self.inner.state.lock().chain.ids.contains(id) {
            Ok(())
        } else {
            Err(Error::NotFound(format!(
                "message {id:?} in session {}",
                self.inner.id
            )))
        }
    }

    /// Change fields of a stored message (an RFC 7396 merge patch), e.g. usage that
    /// arrives after the text. Appends a record; the message line is not rewritten.
    pub(crate) fn patch_message(&self, id: &str, patch: Value) -> Result<()> {
        let Value::Object(p) = &patch else {
            return Err(Error::invalid("a message patch must be a JSON object"));
        };
        for k in crate::format::records::PATCH_RESERVED {
            if p.contains_key(k) {
                return Err(Error::invalid(format!(
                    "a message patch may not change {k:?}"
                )));
            }
        }
        let mut rec = self.record(kind::PATCH);
        rec.insert("messageId".into(), id.into());
        rec.insert("patch".into(), patch);
        self.write_record(rec, Some(id)).map(drop)
    }

    /// Move the head to a message (or to nothing, before the first message). Later
    /// appends branch from there; the old branch stays in the log.
    pub(crate) fn set_head(&self, id: Option<&str>) -> Result<()> {
        let mut rec = self.record(kind::HEAD);
        rec.insert(
            "messageId".into(),
            id.map(Value::from).unwrap_or(Value::Null),
        );
        self.write_record(rec, id)?;
        self.flush_index()
    }

    /// Update host-reported state (status, reasons, last tool call, active tokens,
    /// child processes, title). Logged and written to the index.
    pub(crate) fn update_state(&self, set: Value) -> Result<IndexEntry> {
        let Value::Object(set) = set else {
            return Err(Error::invalid("a state update must be a JSON object"));
        };
        validate_state(&set)?;
        let mut rec = self.record(kind::STATE);
        rec.insert("set".into(), Value::Object(set));
        let e = self.write_record(rec, None)?;
        self.flush_index()?;
        Ok(e)
    }

    pub(crate) fn rename(&self, title: &str) -> Result<IndexEntry> {
        self.update_state(json!({ "title": title }))
    }

    /// Write this session's entry to the index (under the project lock).
    ///
    /// The index file is not fsynced: whatever changed the entry is already in the
    /// log (fsynced there as durability asks), and an entry that a crash leaves
    /// behind its log is folded again on the next list (FORMAT.md §14).
    pub(crate) fn flush_index(&self) -> Result<()> {
        self.check_writer()?;
        let entry = self.entry();
        let store = &self.inner.store;
        store.update_index(false, |idx| {
            upsert_unless_newer(idx, entry);
            Ok(())
        })?;
        self.inner.state.lock().dirty = false;
        Ok(())
    }

    /// Make every append so far durable (and the index with it).
    pub(crate) fn sync(&self) -> Result<()> {
        self.check_writer()?;
        self.inner.writer.sync()?;
        let dirty = self.inner.state.lock().dirty;
        if dirty || self.inner.store.options().durability != Durability::Never {
            let entry = self.entry();
            let store = &self.inner.store;
            store.update_index(store.options().durability != Durability::Never, |idx| {
                upsert_unless_newer(idx, entry);
                Ok(())
            })?;
            self.inner.state.lock().dirty = false;
        }
        Ok(())
    }

    /// Read this session's log back (the view every reader gets).
    pub(crate) fn read(&self) -> Result<ViewCore> {
        self.inner.store.read_session(&self.inner.id)
    }

    pub(crate) fn active_path(&self) -> Result<Vec<Message>> {
        self.read()?.active_path()
    }

    /// Start a subagent: a sidechain log and a metadata file under the session. The
    /// main log records the spawn.
    pub(crate) fn spawn_subagent(
        &self,
        agent_id: Option<&str>,
        meta: Value,
    ) -> Result<SubagentCore> {
        self.spawn_subagent_at(agent_id, meta, None)
    }

    /// [`spawn_subagent`](Self::spawn_subagent) at time `at` (an import's
    /// source time) instead of now; `None`: now.
    pub(crate) fn spawn_subagent_at(
        &self,
        agent_id: Option<&str>,
        meta: Value,
        at: Option<String>,
    ) -> Result<SubagentCore> {
        self.check_writer()?;
        // The spawn record names the head: a shared handle holds the lock from here.
        let _guard = self.write_guard()?;
        let agent_id = match agent_id {
            Some(a) => {
                validate_path_id("agent id", a)?;
                a.to_string()
            }
            None => self.inner.store.ids().new_id(),
        };
        if !(meta.is_object() || meta.is_null()) {
            return Err(Error::invalid("subagent metadata must be a JSON object"));
        }
        // Checked before the sidechain is created: its spawn record holds it.
        check_nesting(&|| "subagent metadata".into(), &meta, MAX_NESTING - 1)?;
        // Checked before anything is created, as its final form will be.
        let max = self.inner.store.options().max_record_bytes;
        let spawn_record = |timestamp: String, meta: Value| {
            // Where the conversation was, so a fork knows which subagents it inherits.
            subagent_record(timestamp, "spawn", &agent_id, self.head(), [("meta", meta)])
        };
        record_line(
            &spawn_record(SAME_LENGTH_TIMESTAMP.into(), meta.clone()),
            Some(max),
        )?;
        let store = &self.inner.store;
        let path = store.subagent_log_path(&self.inner.id, &agent_id)?;
        fsutil::create_private_dir(path.parent().unwrap_or(store.dir()))?;
        let writer = store.open_log_writer(
            &self.inner.id,
            Some(&agent_id),
            &path,
            true,
            true,
            &format!("subagent {agent_id}"),
        )?;
        let now = at.clone().unwrap_or_else(|| store.ids().timestamp());
        let mut header = Map::new();
        header.insert("type".into(), kind::SESSION.into());
        header.insert("version".into(), FORMAT_VERSION.into());
        header.insert("id".into(), agent_id.clone().into());
        header.insert("sessionId".into(), self.inner.id.clone().into());
        header.insert("agentId".into(), agent_id.clone().into());
        header.insert("createdAt".into(), now.clone().into());
        let seq = writer.write(&record_line(&header, Some(max))?)?;
        writer.after_append(seq)?;
        let agent = SubagentCore {
            session: self.inner.clone(),
            owner: Owner::current(),
            agent_id: agent_id.clone(),
            writer,
            chain: Mutex::new(Chain::default()),
            meta: Mutex::new(json!({
                "agentId": agent_id,
                "sessionId": self.inner.id,
                "createdAt": now,
                "updatedAt": now,
                "status": "running",
                "meta": meta,
            })),
        };
        agent.write_meta()?;
        let time = at.unwrap_or_else(|| store.ids().timestamp());
        self.write_record(spawn_record(time, meta), None)?;
        Ok(agent)
    }

    /// Reopen a subagent for writing (its lock is exclusive like a session's).
    pub(crate) fn open_subagent(&self, agent_id: &str) -> Result<SubagentCore> {
        self.check_writer()?;
        let store = &self.inner.store;
        let path = store.subagent_log_path(&self.inner.id, agent_id)?;
        let (writer, chain, _) = open_for_writing(
            store,
            (&self.inner.id, Some(agent_id)),
            &path,
            None,
            &format!("subagent {agent_id}"),
        )?;
        let meta_path = meta_path_of(&path);
        let meta: Value = std::fs::read(&meta_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(
                || json!({"agentId": agent_id, "sessionId": self.inner.id, "status": "running"}),
            );
        Ok(SubagentCore {
            session: self.inner.clone(),
            owner: Owner::current(),
            agent_id: agent_id.to_string(),
            writer,
            chain: Mutex::new(chain),
            meta: Mutex::new(meta),
        })
    }

    /// Flush the index entry and release the lock. In a forked child, only
    /// release the child's copy: the entry is the opening process's to write.
    pub(crate) fn close(self) -> Result<()> {
        if !self.inner.owner.is_current() {
            return Ok(());
        }
        self.close_index()
    }

    /// Write the index whole, with this session's entry and the journal
    /// applied, unless the index file is complete already: once the last writer
    /// has closed, `sessions-index.json` alone is fresh (FORMAT.md §10.7). One
    /// write, in place of the journal append a flush would make.
    fn close_index(&self) -> Result<()> {
        self.check_writer()?;
        let dirty = self.inner.state.lock().dirty;
        let entry = dirty.then(|| self.entry());
        let store = &self.inner.store;
        store.update_index_as(false, true, |idx| {
            if let Some(e) = entry {
                upsert_unless_newer(idx, e);
            }
            Ok(())
        })?;
        let mut st = self.inner.state.lock();
        st.dirty = false;
        st.closed = true;
        Ok(())
    }
}

impl Drop for SessionCore {
    fn drop(&mut self) {
        // Best effort: a stale entry is refolded by the next list anyway.
        if Arc::strong_count(&self.inner) == 1
            && self.inner.owner.is_current()
            && !self.inner.state.lock().closed
        {
            let _ = self.close_index();
        }
    }
}

/// Write a writer's entry to the index unless the index holds one of a longer
/// log: another shared writer of the session wrote after this one.
fn upsert_unless_newer(idx: &mut crate::index::IndexEdit<'_>, entry: IndexEntry) {
    if idx
        .get(&entry.id)
        .is_some_and(|e| e.log_bytes > entry.log_bytes)
    {
        return;
    }
    idx.upsert(entry);
}

fn ctx_for<'a>(
    store: &'a StoreCore,
    session_id: &'a str,
    agent_id: Option<&'a str>,
) -> AppendCtx<'a> {
    let o = store.options();
    AppendCtx {
        session_id,
        agent_id,
        ids: store.ids(),
        blobs: store.blobs(),
        blob_threshold: o.blob_threshold,
        max_record_bytes: o.max_record_bytes,
        sync_blobs: o.durability != Durability::Never,
    }
}

/// Lock an existing log, terminate a torn tail, quarantine unusable lines, and
/// load the chain the writer continues from (see [`prepare_writer`]).
fn open_for_writing(
    store: &StoreCore,
    (session, agent): (&str, Option<&str>),
    path: &std::path::Path,
    cache: Option<&std::path::Path>,
    what: &str,
) -> Result<(LogWriter, Chain, ReadReport)> {
    let writer = store.open_log_writer(session, agent, path, false, true, what)?;
    let (chain, report) = prepare_writer(&writer, path, cache)?;
    Ok((writer, chain, report))
}

/// With the writer lock held: terminate a torn tail, quarantine unusable
/// lines, and load the chain the writer continues from: only the log's
/// outline, through its structure cache when it has one (`cache`).
fn prepare_writer(
    writer: &LogWriter,
    path: &std::path::Path,
    cache: Option<&std::path::Path>,
) -> Result<(Chain, ReadReport)> {
    let mut file = writer.file().try_clone().map_err(|e| Error::io(path, e))?;
    let load = |file: &mut std::fs::File| match cache {
        Some(c) => log::outline_from(file, path, c),
        None => log::load_from(file, path),
    };
    let mut loaded = load(&mut file)?;
    let report = loaded.report.clone();
    if writer.repair_tail(&report)? {
        // A tail cut just before its newline is a whole record once terminated:
        // reload so this writer knows it (its id, the head) as readers will.
        loaded = load(&mut file)?;
    }
    quarantine(path, &report)?;
    let chain = Chain::new(
        loaded.head.clone(),
        loaded.message_ids().map(str::to_owned).collect(),
    );
    Ok((chain, report))
}

/// A session's index entry for a writer that opens it: the index's when it
/// is of the log as it is, else folded from the log (`true`: the index must
/// be written).
fn entry_for(
    store: &StoreCore,
    id: &str,
    path: &std::path::Path,
    writer: &LogWriter,
) -> Result<(IndexEntry, bool)> {
    let cached = store
        .read_index()
        .ok()
        .flatten()
        .and_then(|i| i.index.get(id).cloned());
    Ok(match cached {
        Some(e) if e.log_bytes == writer.len() => (e, false),
        _ => {
            let (mut e, _) = fold_log(id, path, store.blobs())?;
            e.log_bytes = writer.len();
            (e, true)
        }
    })
}

fn meta_path_of(log: &std::path::Path) -> PathBuf {
    log.with_extension("meta.json")
}

/// A subagent's sidechain, open for writing.
pub(crate) struct SubagentCore {
    session: Arc<SessionInner>,
    owner: Owner,
    agent_id: String,
    writer: LogWriter,
    chain: Mutex<Chain>,
    meta: Mutex<Value>,
}

impl std::fmt::Debug for SubagentCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subagent")
            .field("session", &self.session.id)
            .field("id", &self.agent_id)
            .finish()
    }
}

impl SubagentCore {
    pub(crate) fn id(&self) -> &str {
        &self.agent_id
    }

    pub(crate) fn session_id(&self) -> &str {
        &self.session.id
    }

    pub(crate) fn append(&self, message: Value) -> Result<Message> {
        Ok(self.append_batch(vec![message])?.remove(0))
    }

    pub(crate) fn append_batch(&self, messages: Vec<Value>) -> Result<Vec<Message>> {
        self.append_with(messages, &[])
    }

    /// Append messages and, in the same write, `extra` records after them.
    pub(crate) fn append_with(
        &self,
        messages: Vec<Value>,
        extra: &[Map<String, Value>],
    ) -> Result<Vec<Message>> {
        self.check_writer()?;
        let seq;
        let out;
        {
            let mut chain = self.chain.lock();
            let ctx = ctx_for(&self.session.store, &self.session.id, Some(&self.agent_id));
            let mut batch = if messages.is_empty() && !extra.is_empty() {
                chain.prepare_empty()
            } else {
                chain.prepare(messages, &ctx)?
            };
            let max = Some(self.session.store.options().max_record_bytes);
            for rec in extra {
                batch.bytes.extend(record_line(rec, max)?);
            }
            seq = self.writer.write(&batch.bytes)?;
            chain.commit(&mut batch);
            out = batch.messages;
        }
        self.writer.after_append(seq)?;
        Ok(out)
    }

    /// Append groups of messages in one write (see [`SessionCore::append_groups`]).
    pub(crate) fn append_groups(
        &self,
        groups: Vec<Vec<Value>>,
    ) -> Result<Vec<Result<Vec<Message>>>> {
        self.check_writer()?;
        let seq;
        let out;
        {
            let mut chain = self.chain.lock();
            let ctx = ctx_for(&self.session.store, &self.session.id, Some(&self.agent_id));
            let (mut batch, counts) = chain.prepare_groups(groups, &ctx);
            if batch.messages.is_empty() {
                return Ok(counts.into_iter().map(|c| c.map(|_| Vec::new())).collect());
            }
            seq = self.writer.write(&batch.bytes)?;
            chain.commit(&mut batch);
            out = split_groups(batch.messages, counts);
        }
        self.writer.after_append(seq)?;
        Ok(out)
    }

    /// Fail unless this process opened the subagent (see [`Session::check_writer`]).
    fn check_writer(&self) -> Result<()> {
        self.owner
            .check(|| format!("subagent {} of session {}", self.agent_id, self.session.id))
    }

    fn write_meta(&self) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&*self.meta.lock())
            .map_err(|e| Error::Internal(e.to_string()))?;
        let durable = self.session.store.options().durability != Durability::Never;
        fsutil::atomic_write(&meta_path_of(self.writer.path()), &bytes, durable, durable)
    }

    /// Record the subagent's result: in its metadata (status `completed`, or
    /// `failed` when `failed`) and as a `result` record in the main log.
    pub(crate) fn finish(&self, result: Value, failed: bool) -> Result<()> {
        self.finish_at(result, failed, None)
    }

    /// [`finish`](Self::finish) at time `at` (an import's source time)
    /// instead of now; `None`: now.
    pub(crate) fn finish_at(&self, result: Value, failed: bool, at: Option<String>) -> Result<()> {
        self.check_writer()?;
        // Checked before the metadata changes: the result record holds it.
        check_nesting(&|| "a subagent result".into(), &result, MAX_NESTING - 1)?;
        let s = SessionCore {
            inner: self.session.clone(),
        };
        let status = if failed { "failed" } else { "completed" };
        let result_record = |timestamp: String, result: Value| {
            let fields = [("status", status.into()), ("result", result)];
            subagent_record(timestamp, "result", &self.agent_id, s.head(), fields)
        };
        // Its size too, as in spawn_subagent.
        let max = self.session.store.options().max_record_bytes;
        record_line(
            &result_record(SAME_LENGTH_TIMESTAMP.into(), result.clone()),
            Some(max),
        )?;
        self.writer.sync()?;
        {
            let mut m = self.meta.lock();
            m["status"] = status.into();
            m["updatedAt"] = at
                .clone()
                .unwrap_or_else(|| self.session.store.ids().timestamp())
                .into();
            m["result"] = result.clone();
        }
        self.write_meta()?;
        let time = at.unwrap_or_else(|| self.session.store.ids().timestamp());
        s.write_record(result_record(time, result), None)?;
        Ok(())
    }

    pub(crate) fn read(&self) -> Result<ViewCore> {
        self.session
            .store
            .read_subagent(&self.session.id, &self.agent_id)
    }
}

/// A timestamp of the one length every timestamp has (FORMAT §4): a record is
/// measured against `maxRecordBytes` with it before the clock is read, so the
/// clock is read in the order it always was.
const SAME_LENGTH_TIMESTAMP: &str = "0000-00-00T00:00:00.000Z";

/// A `subagent` record of `event` for `agent_id`, at the parent's `head`.
fn subagent_record<const N: usize>(
    timestamp: String,
    event: &str,
    agent_id: &str,
    head: Option<String>,
    fields: [(&str, Value); N],
) -> Map<String, Value> {
    let mut rec = Map::new();
    rec.insert("type".into(), kind::SUBAGENT.into());
    rec.insert("timestamp".into(), timestamp.into());
    rec.insert("event".into(), event.into());
    rec.insert("agentId".into(), agent_id.into());
    rec.insert(
        "messageId".into(),
        head.map(Value::from).unwrap_or(Value::Null),
    );
    for (k, v) in fields {
        rec.insert(k.into(), v);
    }
    rec
}

/// The messages of a batch of groups, handed back per group: an accepted
/// group's own messages, in order, or its error.
fn split_groups(messages: Vec<Message>, counts: Vec<Result<usize>>) -> Vec<Result<Vec<Message>>> {
    let mut messages = messages.into_iter();
    counts
        .into_iter()
        .map(|c| c.map(|n| messages.by_ref().take(n).collect()))
        .collect()
}
