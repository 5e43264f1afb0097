//! The public [`Session`] handle: a session open for writing, and every method a
//! host calls on it, each delegating to the store layer or to an operation.

use std::path::Path;

use serde_json::Value;

use crate::api::{SessionView, Store, Subagent};
use crate::error::Result;
use crate::history::{ExternalChange, RewindMode, RewindPlan, RewindResult, UndoCandidate};
use crate::index::IndexEntry;
use crate::log::message::Message;
use crate::log::ReadReport;
use crate::ops::compaction::{CompactionPlan, CompactionPolicy};
use crate::store::session::SessionCore;

/// A session open for writing. Holds the session's exclusive lock until it is
/// closed or dropped. Safe to share between threads; appends are serialised.
pub struct Session {
    core: SessionCore,
    store: Store,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl Session {
    pub(crate) fn from_core(core: SessionCore, store: Store) -> Session {
        Session { core, store }
    }

    /// Whether this handle is a shared writer ([`Store::open_shared`]), which
    /// holds the session's writer lock only while it writes.
    pub fn is_shared(&self) -> bool {
        self.core.is_shared()
    }

    /// Ask the policy what to compact. Changes nothing.
    pub fn select_compaction(&self, policy: &CompactionPolicy) -> Result<Option<CompactionPlan>> {
        self.core.select_compaction(policy)
    }

    /// Replace `replaces` (a contiguous run of the model view) by `summary` in the
    /// model's view. Appends an invisible system summary message and a compaction
    /// record in one write; returns the summary message.
    pub fn apply_compaction(&self, replaces: &[String], summary: Value) -> Result<Message> {
        self.core.apply_compaction(replaces, summary)
    }

    /// Append a user message, taking a snapshot of the tracked files first. The
    /// snapshot id is stored as the message's `checkpointHash`; `role` defaults to
    /// `user` and may not be anything else (`InvalidInput`). Returns the message as
    /// stored, like [`Session::append`].
    pub fn user_input(&self, message: Value) -> Result<Message> {
        self.core.user_input(message)
    }

    /// Record that the agent's tools read these files (paths relative to the
    /// project root, or absolute inside it), so that
    /// [`Session::external_changes`] can tell whether they changed since. The
    /// marks are kept with the session's next snapshot.
    pub fn track_read(&self, paths: &[impl AsRef<Path>]) -> Result<()> {
        self.core.track_read(paths)
    }

    /// Track these files and snapshot every tracked file, before a tool edits
    /// them. Returns the snapshot id.
    pub fn before_edit(&self, paths: &[impl AsRef<Path>]) -> Result<String> {
        self.core.before_edit(paths)
    }

    /// Snapshot every tracked file after a tool edited `paths` (tracked from now
    /// on if they were not). What the tool wrote counts as read by the agent.
    pub fn after_edit(&self, paths: &[impl AsRef<Path>]) -> Result<String> {
        self.core.after_edit(paths)
    }

    /// The files this session tracks (paths relative to the project root).
    pub fn tracked_files(&self) -> Result<Vec<String>> {
        self.core.tracked_files()
    }

    /// The session's latest snapshot, if it has one.
    pub fn last_snapshot(&self) -> Result<Option<String>> {
        self.core.last_snapshot()
    }

    /// For each path: whether the file changed on disk since the agent last read
    /// or edited it (compared by content hash).
    pub fn external_changes(&self, paths: &[impl AsRef<Path>]) -> Result<Vec<ExternalChange>> {
        self.core.external_changes(paths)
    }

    /// Fail with `Conflict`, naming the files, if any of `paths` changed on disk
    /// since the agent read it. Files never read pass.
    pub fn ensure_unchanged_since_read(&self, paths: &[impl AsRef<Path>]) -> Result<()> {
        self.core.ensure_unchanged_since_read(paths)
    }

    /// The visible, uncompacted user messages of the active path, oldest first,
    /// each with whether its files can be restored and the changes since.
    pub fn undo_candidates(&self) -> Result<Vec<UndoCandidate>> {
        self.core.undo_candidates()
    }

    /// The dry run of rewinding the files to before a user message: for each file,
    /// restore, recreate or delete, and any conflict. Changes nothing. Fails with
    /// `InvalidInput` if the message is not a user message, and with `NotFound`
    /// for an unknown message or one without a snapshot (not appended with
    /// [`Session::user_input`]).
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, FileAction, RewindMode, Store, StoreOptions};
    /// # use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let project = tmp.path().join("project");
    /// # std::fs::create_dir(&project).expect("project dir");
    /// # std::fs::write(project.join("notes.txt"), "one\n").expect("write");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(&project, options)?;
    /// let session = store.create_session(CreateOptions::default())?;
    /// session.track_read(&["notes.txt"])?;
    /// let ask = session.user_input(json!({"content": "Add a line"}))?; // snapshots notes.txt
    /// session.before_edit(&["notes.txt"])?;
    /// std::fs::write(project.join("notes.txt"), "one\ntwo\n").expect("write");
    /// session.after_edit(&["notes.txt"])?;
    ///
    /// let plan = session.rewind_plan(ask.id())?;
    /// assert_eq!(plan.files[0].path, "notes.txt");
    /// assert_eq!(plan.files[0].action, FileAction::Restore);
    /// assert_eq!(plan.files[0].lines_added, 1);
    /// // The dry run changed nothing; the rewind restores the file.
    /// session.rewind(ask.id(), RewindMode::Files, false)?;
    /// assert_eq!(std::fs::read_to_string(project.join("notes.txt")).expect("read"), "one\n");
    /// # Ok(())
    /// # }
    /// ```
    pub fn rewind_plan(&self, message_id: &str) -> Result<RewindPlan> {
        self.core.rewind_plan(message_id)
    }

    /// Rewind to before a user message. `Files` and `Both` restore the tracked
    /// files to the message's snapshot (refusing with `Conflict`, naming the
    /// files, if any changed outside the agent since the last snapshot, unless
    /// `force`); `Conversation` and `Both` then move the head to the message's
    /// parent. The result says how to undo it.
    pub fn rewind(&self, message_id: &str, mode: RewindMode, force: bool) -> Result<RewindResult> {
        self.core.rewind(message_id, mode, force)
    }

    /// Rewind to before the `turns`-th latest user input (1: the latest turn;
    /// the candidates are [`Session::undo_candidates`]), as [`Session::rewind`]
    /// does. `InvalidInput` when `turns` is 0 or more than there are.
    pub fn rewind_turns(
        &self,
        turns: usize,
        mode: RewindMode,
        force: bool,
    ) -> Result<RewindResult> {
        self.core.rewind_turns(turns, mode, force)
    }

    /// The dry run of restoring the tracked files to any snapshot of this
    /// session (e.g. a rewind's `undoSnapshot`).
    pub fn snapshot_plan(&self, snapshot: &str) -> Result<RewindPlan> {
        self.core.snapshot_plan(snapshot)
    }

    /// Restore the tracked files to a snapshot of this session, with the same
    /// checks as a rewind. Restoring a rewind's `undoSnapshot` undoes it.
    pub fn restore_snapshot(&self, snapshot: &str, force: bool) -> Result<RewindResult> {
        self.core.restore_snapshot(snapshot, force)
    }

    /// Move the head to a message so the conversation resumes from there (an alias
    /// of [`Session::set_head`] under the name hosts look for).
    pub fn resume_at(&self, message_id: &str) -> Result<()> {
        self.core.resume_at(message_id)
    }

    /// What goes to the model on resume, read from the end of the log back to the
    /// latest compaction on the active path.
    pub fn model_view(&self, opts: &crate::view::ModelViewOptions) -> Result<Vec<Message>> {
        self.core.model_view(opts)
    }

    /// The session id.
    pub fn id(&self) -> &str {
        self.core.id()
    }

    /// The path of the session's log.
    pub fn path(&self) -> &std::path::Path {
        self.core.path()
    }

    /// The store this session belongs to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// What opening found: skipped lines (now quarantined), a torn tail (now
    /// terminated), broken chains.
    pub fn open_report(&self) -> &ReadReport {
        self.core.open_report()
    }

    /// Sessions moved to the trash when this one was created, beyond the
    /// store's `max_sessions` (none unless the host set it).
    pub fn pruned(&self) -> &[String] {
        self.core.pruned()
    }

    /// How many times this handle fsynced its log (group commit shares one fsync
    /// between concurrent appends).
    pub fn fsync_count(&self) -> u64 {
        self.core.fsync_count()
    }

    /// The current head message id.
    pub fn head(&self) -> Option<String> {
        self.core.head()
    }

    /// The session's index entry as this writer knows it.
    pub fn entry(&self) -> IndexEntry {
        self.core.entry()
    }

    /// Append one message (a JSON object with a `role`: system, user, assistant
    /// or tool). The store fills in `id` (unless given), `parentId` (the head,
    /// unless given), `sessionId` and `timestamp`; the message becomes the head.
    /// One `write(2)`: once it returns, a killed process has lost nothing (and
    /// with [`Durability::Always`](crate::Durability::Always) it is fsynced).
    /// Returns the message as stored.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a message that is not an object, has no valid role or
    /// is too large; `Conflict` for an `id` the session already has.
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, Store, StoreOptions};
    /// use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// # let session = store.create_session(CreateOptions::default())?;
    /// let q = session.append(json!({"role": "user", "content": "Why is CI red?"}))?;
    /// let a = session.append(json!({"role": "assistant", "content": "A flaky test."}))?;
    /// assert_eq!(a.parent_id(), Some(q.id()));
    /// assert_eq!(session.head().as_deref(), Some(a.id()));
    /// assert!(session.append(json!({"content": "no role"})).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn append(&self, message: Value) -> Result<Message> {
        self.core.append(message)
    }

    /// Append messages in one write. Every message is checked before anything is
    /// written, so an invalid one leaves the log unchanged. A process killed during
    /// a large write can leave a prefix of the batch, always whole lines.
    pub fn append_batch(&self, messages: Vec<Value>) -> Result<Vec<Message>> {
        self.core.append_batch(messages)
    }

    /// Append several groups of messages in one write, with a result per group:
    /// each group is checked as if appended alone, after the accepted groups
    /// before it, and a refused group (its own error) is not written. A host
    /// that queues appends from many callers hands them over as groups, so one
    /// caller's bad message never fails another's. The outer error is the
    /// write's own (or a closed handle's), for every group.
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, Store, StoreOptions};
    /// use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// # let session = store.create_session(CreateOptions::default())?;
    /// let results = session.append_groups(vec![
    ///     vec![json!({"role": "user", "content": "Hi"})],
    ///     vec![json!({"content": "no role"})],
    ///     vec![json!({"role": "assistant", "content": "Hello"})],
    /// ])?;
    /// assert!(results[1].is_err());
    /// let (q, a) = (&results[0].as_ref().unwrap()[0], &results[2].as_ref().unwrap()[0]);
    /// assert_eq!(a.parent_id(), Some(q.id()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn append_groups(&self, groups: Vec<Vec<Value>>) -> Result<Vec<Result<Vec<Message>>>> {
        self.core.append_groups(groups)
    }

    /// Change fields of a stored message (an RFC 7396 merge patch), e.g. usage that
    /// arrives after the text. Appends a record; the message line is not rewritten.
    pub fn patch_message(&self, id: &str, patch: Value) -> Result<()> {
        self.core.patch_message(id, patch)
    }

    /// Move the head to a message (or to nothing, before the first message). Later
    /// appends branch from there; the old branch stays in the log.
    pub fn set_head(&self, id: Option<&str>) -> Result<()> {
        self.core.set_head(id)
    }

    /// Update host-reported state (status, reasons, last tool call, active tokens,
    /// child processes, title). Logged and written to the index.
    pub fn update_state(&self, set: Value) -> Result<IndexEntry> {
        self.core.update_state(set)
    }

    /// Set the session's title: [`Session::update_state`] with `{"title": title}`.
    /// Returns the updated index entry.
    pub fn rename(&self, title: &str) -> Result<IndexEntry> {
        self.core.rename(title)
    }

    /// Write this session's entry to the index (under the project lock).
    ///
    /// The index file is not fsynced: whatever changed the entry is already in the
    /// log (fsynced there as durability asks), and an entry that a crash leaves
    /// behind its log is folded again on the next list (FORMAT.md §14).
    pub fn flush_index(&self) -> Result<()> {
        self.core.flush_index()
    }

    /// Make every append so far durable (and the index with it).
    pub fn sync(&self) -> Result<()> {
        self.core.sync()
    }

    /// Read this session's log back (the view every reader gets).
    pub fn read(&self) -> Result<SessionView> {
        self.core.read().map(SessionView::from_core)
    }

    /// The messages from the root to the head, read back from the log
    /// (see [`SessionView::active_path`]).
    pub fn active_path(&self) -> Result<Vec<Message>> {
        self.core.active_path()
    }

    /// Start a subagent: a sidechain log and a metadata file under the session. The
    /// main log records the spawn.
    pub fn spawn_subagent(&self, agent_id: Option<&str>, meta: Value) -> Result<Subagent> {
        self.core
            .spawn_subagent(agent_id, meta)
            .map(Subagent::from_core)
    }

    /// Reopen a subagent for writing (its lock is exclusive like a session's).
    pub fn open_subagent(&self, agent_id: &str) -> Result<Subagent> {
        self.core.open_subagent(agent_id).map(Subagent::from_core)
    }

    /// Delete the session for good (its log, sidecars and file history) and
    /// start it again, empty, under the same id, open for writing: a host's
    /// "clear and forget". The lock is let go in between: a writer that opens
    /// the session in that moment makes this fail with `Busy`, and the session
    /// stays deleted. The new session keeps the conversation id
    /// ([`Store::open_conversation`]) and the handle stays shared if it was.
    /// Large values stored as blobs are freed by the next [`Store::gc`].
    pub fn erase(self) -> Result<Session> {
        let store = self.store.clone();
        let core = store.core.erase_session(self.core)?;
        Ok(Session::from_core(core, store))
    }

    /// Flush the index entry and release the lock. Dropping the handle does the
    /// same but cannot report a failed flush (the next list refolds a stale entry).
    /// In a forked child, only release the child's copy: the entry is the
    /// opening process's to write.
    pub fn close(self) -> Result<()> {
        self.core.close()
    }

    /// The session as this writer knows it: id, log path, head, index entry,
    /// what opening found, and the sessions pruned when it was created.
    pub fn info(&self) -> crate::ops::info::SessionInfo {
        crate::ops::info::session_info(&self.core)
    }

    /// What [`Session::rewind`] to before `message_id` (a user message) in
    /// `mode` would do, changing nothing: the file plan (not for
    /// `Conversation`) and where the head goes.
    pub fn rewind_preview(
        &self,
        message_id: &str,
        mode: RewindMode,
    ) -> Result<crate::ops::rewind::RewindPreview> {
        crate::ops::rewind::preview(&self.core, message_id, mode)
    }

    /// The session's OpenAI Responses input items (what the OpenAI Agents SDK
    /// keeps), oldest first, as a JSON array text: the last `limit` messages of
    /// the active path (all when `None`), each as the item it stores (see
    /// [`crate::responses`]). With `model_view`, the model view instead:
    /// compaction applied, a cut that never starts at a tool output, a
    /// synthetic output for a call left without one, leading system messages
    /// kept.
    pub fn responses_items(&self, limit: Option<usize>, model_view: bool) -> Result<String> {
        crate::ops::responses::items(&self.core, limit, model_view)
    }

    /// Append OpenAI Responses input items as messages, in one write: once it
    /// returns, a killed process has lost none of them. Every item is checked
    /// first (`InvalidInput` for one that is not an object); nothing is
    /// written if one fails.
    pub fn append_responses_items(&self, items: Vec<Value>) -> Result<Vec<Message>> {
        crate::ops::responses::append_items(&self.core, items)
    }

    /// Make `items` the session's history as the model sees it, keeping the
    /// originals: the OpenAI Agents SDK's `replaceHistoryWithCompaction`.
    /// `items` is a Responses `compaction` item (the server's compacted
    /// history) followed by the items kept after it. In one write the items
    /// are appended and a compaction record makes the compaction item the
    /// summary of the whole model view before it: [`Session::model_view`]
    /// (and `responses_items` with `model_view`) then starts at it and
    /// resumes read only from there, while the active path and the UI view
    /// keep the originals (marked compacted). `InvalidInput` when the first
    /// item is not a `compaction` item, or an item is not an object; nothing
    /// is written then. Returns the stored messages.
    pub fn replace_responses_items_with_compaction(
        &self,
        items: Vec<Value>,
    ) -> Result<Vec<Message>> {
        crate::ops::responses::replace_with_compaction(&self.core, items)
    }

    /// Move the head back over the latest message and return its Responses
    /// item as JSON text (`None` when the session has no head). Nothing is
    /// rewritten: the message stays in the log, on a branch that
    /// [`Session::resume_at`] or a fork reaches again.
    pub fn pop_responses_item(&self) -> Result<Option<String>> {
        crate::ops::responses::pop_item(&self.core)
    }
}
