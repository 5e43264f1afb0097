//! The public [`Store`] handle: every method a host calls on a store, each
//! delegating to the store layer or to an operation.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::api::{Session, SessionView};
use crate::blobs::BlobStore;
use crate::error::Result;
use crate::history::{GcProgress, GcReport, HistorySizeReport};
use crate::index::journal::StoredIndex;
use crate::index::IndexEntry;
use crate::log::message::Message;
use crate::ops::fork::ForkOptions;
use crate::options::StoreOptions;
use crate::store::session::CreateOptions;
use crate::store::trash::TrashedSession;
use crate::store::StoreCore;
use crate::store::{BlobGcReport, RebuildReport, StoreGcReport, TempGcReport};
use crate::view::ModelViewOptions;

/// The sessions of one project: its index, its logs, their blobs and the file
/// history. Cheap to clone; safe to share between threads.
#[derive(Clone)]
pub struct Store {
    pub(crate) core: StoreCore,
    /// The checkpoint threads this handle (and its clones) read and write.
    pub(crate) threads: std::sync::Arc<crate::ops::checkpoints::Threads>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl Store {
    pub(crate) fn from_core(core: StoreCore) -> Store {
        Store {
            core,
            threads: Default::default(),
        }
    }

    /// Fork `source` (whole, or at `options.at`) into a new session. Reads the
    /// source without locking it, so a session another process is writing can be
    /// forked; the fork sees the source as of its last complete line. Returns the
    /// fork open for writing; its lineage is in its header and index entry.
    /// Fails with `NotFound` for an unknown session or message.
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, ForkOptions, Store, StoreOptions};
    /// # use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// let s = store.create_session(CreateOptions::default())?;
    /// let first = s.append(json!({"role": "user", "content": "Try plan A"}))?;
    /// s.append(json!({"role": "assistant", "content": "Plan A failed."}))?;
    ///
    /// // Go back to the first message, in a new session.
    /// let at = ForkOptions { at: Some(first.id().to_string()), ..ForkOptions::default() };
    /// let fork = store.fork_session(s.id(), at)?;
    /// assert_eq!(fork.active_path()?.len(), 1);
    /// assert_eq!(fork.entry().forked_from.unwrap().session_id, s.id());
    /// # Ok(())
    /// # }
    /// ```
    pub fn fork_session(&self, source: &str, options: ForkOptions) -> Result<Session> {
        self.core
            .fork_session(source, options)
            .map(|core| Session::from_core(core, self.clone()))
    }

    /// Remove file-history objects that no session's branch reaches, and report
    /// the bytes freed.
    pub fn gc(&self) -> Result<GcReport> {
        self.core.gc()
    }

    /// [`Store::gc`], telling `progress` how far each phase got (for a progress
    /// bar). Called on this thread.
    pub fn gc_with_progress(
        &self,
        progress: &mut dyn FnMut(crate::history::GcProgress),
    ) -> Result<GcReport> {
        self.core.gc_with_progress(progress)
    }

    /// The size of each session's file history.
    pub fn file_history_sizes(&self) -> Result<HistorySizeReport> {
        self.core.file_history_sizes()
    }

    /// Start the file-history branch of `session_id` at `snapshot` (for a fork:
    /// the snapshot of the message forked at). Fails with `Conflict` if the
    /// session already has a branch.
    pub fn branch_file_history(&self, session_id: &str, snapshot: &str) -> Result<()> {
        self.core.branch_file_history(session_id, snapshot)
    }

    /// Open (creating if needed) the store of the project rooted at `project_root`:
    /// the directory `<home>/projects/<project code>/`, where home is
    /// `options.home`, else `$SESSIONKIT_HOME`, else `~/.sessionkit`. Takes no
    /// lock. A project root that does not exist here (another machine's, a
    /// moved or deleted project, as imports keep them: FORMAT.md §22.1) opens
    /// its store when that store exists, so its sessions can be read, resumed
    /// and exported; otherwise it is `NotFound`, nothing created. Fails with
    /// `InvalidInput` if the root is not a directory or the options are invalid.
    ///
    /// ```
    /// use sessionkit::{Store, StoreOptions};
    ///
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let project_root = tmp.path();
    /// let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// let store = Store::open(project_root, options)?;
    /// assert!(store.dir().starts_with(tmp.path().join("home").join("projects")));
    /// assert!(store.list_sessions()?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn open(project_root: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        StoreCore::open(project_root, options).map(Store::from_core)
    }

    /// The canonical project root.
    pub fn project_root(&self) -> &Path {
        self.core.project_root()
    }

    /// The directory holding this project's sessions.
    pub fn dir(&self) -> &Path {
        self.core.dir()
    }

    /// The project's directory name under `<home>/projects/`, derived from the
    /// canonical project root (see [`crate::project_code`]).
    pub fn project_code(&self) -> &str {
        self.core.project_code()
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &StoreOptions {
        self.core.options()
    }

    /// The store's blobs, for the test suites.
    #[doc(hidden)]
    pub fn blobs(&self) -> &BlobStore {
        self.core.blobs()
    }

    /// Where the log of session `id` lives (whether or not it exists). Fails with
    /// `InvalidInput` if `id` is not a valid session id, so that no id can name a
    /// path outside the store.
    pub fn log_path(&self, id: &str) -> Result<PathBuf> {
        self.core.log_path(id)
    }

    /// Where the project's sessions index (`sessions-index.json`) lives.
    pub fn index_path(&self) -> PathBuf {
        self.core.index_path()
    }

    /// Check the links between the session logs and the file history, reading
    /// only: refs of sessions whose log is gone, refs whose chain of snapshots
    /// reaches a missing commit, and `checkpointHash`es that name no snapshot of
    /// their session. Takes no writer lock, so a busy session is checked too; it
    /// waits only for a running `gc`.
    pub fn check_file_history(&self) -> Result<crate::history::FileHistoryCheck> {
        self.core.check_file_history()
    }

    /// Delete the file-history refs (branches and pending restores) of sessions
    /// whose log no longer exists and that are not in the trash: a deleted
    /// session's history is garbage by design, and its objects go with the
    /// next `gc`. Returns the refs deleted.
    /// A ref that moved meanwhile, or is being updated, is left alone.
    pub fn prune_orphan_file_history(&self) -> Result<Vec<crate::history::HistoryRef>> {
        self.core.prune_orphan_file_history()
    }

    /// The index as stored: the index file with its journal applied (and what
    /// reading the journal found), the entries as written, not checked against
    /// their logs (see [`Store::list_sessions`]); `Ok(None)` when there is no
    /// index. Takes no lock, unless it keeps losing the race with compactions.
    pub fn read_index(&self) -> Result<Option<StoredIndex>> {
        self.core.read_index()
    }

    /// Delete the blobs that no session or subagent log of the project refers to
    /// (left by deleted sessions), and report what was freed. A blob younger than
    /// [`BLOB_GC_GRACE`](crate::BLOB_GC_GRACE) is kept even when unreferenced: a writer stores (or
    /// touches, when it reuses one) a blob before it writes the line that refers
    /// to it, so an append in flight never loses its blob. Trashed sessions' logs
    /// count. Takes the project lock only while it lists the logs.
    pub fn gc_blobs(&self, progress: &mut dyn FnMut(GcProgress)) -> Result<BlobGcReport> {
        self.core.gc_blobs(progress)
    }

    /// Every garbage collection of the project: file-history objects no branch
    /// reaches ([`Store::gc_with_progress`]), blobs no log refers to
    /// ([`Store::gc_blobs`]) and temp files a crash left
    /// ([`Store::gc_temp_files`]), in that order. What `sessionkit gc` and
    /// `sk_store_gc` run.
    pub fn gc_all(&self, progress: &mut dyn FnMut(GcProgress)) -> Result<StoreGcReport> {
        self.core.gc_all(progress)
    }

    /// Delete the `.tmp-*` files that a crash left behind between writing and
    /// renaming them (FORMAT.md §1.2): in the project directory, the blob store
    /// and the sessions' `subagents/` directories; and index journals that the
    /// index does not name (§10.7). An atomic replace in flight
    /// holds its temp file for milliseconds, so one older than [`BLOB_GC_GRACE`](crate::BLOB_GC_GRACE)
    /// is garbage; younger ones are kept. Also deletes a structure cache whose
    /// session log is gone (FORMAT.md §5.1). Takes no lock; never follows a link.
    pub fn gc_temp_files(&self) -> Result<TempGcReport> {
        self.core.gc_temp_files()
    }

    /// Rebuild the index from the session logs, replacing whatever was there.
    pub fn rebuild_index(&self) -> Result<RebuildReport> {
        self.core.rebuild_index()
    }

    /// The project's sessions, newest first. Entries whose log changed since they
    /// were written (a writer that has not flushed, a crash) are refolded from the
    /// log, and the refreshed entries written back.
    pub fn list_sessions(&self) -> Result<Vec<IndexEntry>> {
        self.core.list_sessions()
    }

    /// A page of [`Store::list_sessions`]: `options.limit` entries from
    /// `options.offset`, and how many sessions there are. The listing is
    /// checked against the logs as a whole one is, but only the page is handed
    /// back, so that a binding builds its objects for one screen of a project
    /// of thousands.
    pub fn list_page(
        &self,
        options: &crate::index::ListOptions,
    ) -> Result<crate::index::SessionPage> {
        self.core.list_page(options)
    }

    /// One session's index entry (refreshed from its log if stale). Fails with
    /// `NotFound` for an unknown session.
    pub fn session_entry(&self, id: &str) -> Result<IndexEntry> {
        self.core.session_entry(id)
    }

    /// The session a `/continue` would pick: the most recently updated one that has
    /// messages.
    pub fn continue_session(&self) -> Result<Option<IndexEntry>> {
        self.core.continue_session()
    }

    /// Start a new session, open for writing (it holds the session's lock), with
    /// a header record written and an index entry. Older sessions beyond
    /// `max_sessions` (when set) are moved to the trash and named in [`Session::pruned`]. Fails with
    /// `InvalidInput` for an invalid id and `Conflict` if the id is taken.
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, Store, StoreOptions};
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// let title = Some("Fix the failing test".to_string());
    /// let session = store.create_session(CreateOptions { title, ..CreateOptions::default() })?;
    /// assert_eq!(store.session_entry(session.id())?.title, "Fix the failing test");
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_session(&self, options: CreateOptions) -> Result<Session> {
        self.core
            .create_session(options)
            .map(|core| Session::from_core(core, self.clone()))
    }

    /// Open a session for writing, taking its exclusive lock (held until the
    /// [`Session`] is closed or dropped). A torn last line is terminated and
    /// damaged lines are quarantined, as [`Session::open_report`] tells. Fails with
    /// `Busy` while another writer, in this or another process, holds the session,
    /// `NotFound` for an unknown session, and `InvalidInput` for an invalid id.
    pub fn open_session(&self, id: &str) -> Result<Session> {
        self.core
            .open_session(id)
            .map(|core| Session::from_core(core, self.clone()))
    }

    /// Load a session for reading, without a lock: a writer may be appending
    /// meanwhile, and the view is the log as it was read. Damaged lines are
    /// skipped and reported in [`SessionView::report`], not fatal. Fails with
    /// `NotFound` for an unknown session.
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, Store, StoreOptions};
    /// # use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// let s = store.create_session(CreateOptions::default())?;
    /// s.append(json!({"role": "user", "content": "hello"}))?;
    ///
    /// // The writer still holds the session; reading needs no lock.
    /// let view = store.read_session(s.id())?;
    /// assert_eq!(view.active_path()?[0].value()["content"], "hello");
    /// assert!(view.report().is_clean());
    /// # Ok(())
    /// # }
    /// ```
    pub fn read_session(&self, id: &str) -> Result<SessionView> {
        self.core.read_session(id).map(SessionView::from_core)
    }

    /// What goes to the model on resume. Reads the log from its end back to the
    /// latest compaction on the active path, so the cost follows the live context,
    /// not the history. Takes no lock. Fails with `NotFound` for an unknown
    /// session.
    pub fn model_view(&self, id: &str, opts: &ModelViewOptions) -> Result<Vec<Message>> {
        self.core.model_view(id, opts)
    }

    /// Rename a session (its index title). Takes the session's writer lock for the
    /// moment of the write, so it fails with `Busy` while another writer holds it;
    /// a host with the session open renames through [`Session::rename`].
    pub fn rename_session(&self, id: &str, title: &str) -> Result<IndexEntry> {
        self.core.rename_session(id, title)
    }

    /// Delete a session: its index entry, log, sidecars, quarantine file and
    /// file-history branch. Takes the session's writer lock while deleting, so it
    /// fails with `Busy` while another writer holds it, and with `NotFound` for an
    /// unknown session.
    pub fn delete_session(&self, id: &str) -> Result<()> {
        self.core.delete_session(id)
    }

    /// The sessions in the project's trash (pruned beyond `max_sessions`, not
    /// yet purged by `gc`), most recently trashed first. Finishes any move into
    /// or out of the trash that a crash cut short.
    pub fn list_trash(&self) -> Result<Vec<TrashedSession>> {
        self.core.list_trash()
    }

    /// Move a trashed session back into the project, with its subagents,
    /// quarantine file and file history, and return its index entry. Fails with
    /// `NotFound` if `id` is not in the trash, `Conflict` if a live session has
    /// that id, and `InvalidInput` for an invalid id.
    pub fn restore_session(&self, id: &str) -> Result<IndexEntry> {
        self.core.restore_session(id)
    }

    /// The subagents of a session, from their metadata files.
    pub fn list_subagents(&self, session_id: &str) -> Result<Vec<Value>> {
        self.core.list_subagents(session_id)
    }

    /// Load a subagent's sidechain log for reading.
    pub fn read_subagent(&self, session_id: &str, agent_id: &str) -> Result<SessionView> {
        self.core
            .read_subagent(session_id, agent_id)
            .map(SessionView::from_core)
    }

    /// Ids of the project's session logs, sorted, read from the directory (so
    /// it works when the index is missing or unreadable).
    pub fn session_ids(&self) -> Result<Vec<String>> {
        self.core.log_ids()
    }

    /// The session whose id is `prefix`, else the only one whose id starts with
    /// it. `NotFound` when none does; `InvalidInput` naming the candidates when
    /// several do, or when `prefix` is empty.
    pub fn resolve_session(&self, prefix: &str) -> Result<String> {
        crate::ops::lookup::resolve_session(&self.core, prefix)
    }

    /// In deterministic mode, where the clock and the id counter stand: options
    /// that let another process continue the same run (a command-line tool
    /// called once per step does); `None` with the system clock.
    pub fn deterministic_state(&self) -> Option<crate::options::Deterministic> {
        self.core.ids().deterministic_state()
    }

    /// Where the store is on disk.
    pub fn info(&self) -> crate::ops::info::StoreInfo {
        crate::ops::info::store_info(&self.core)
    }

    /// Verify the store: the index against the logs, every session and
    /// subagent log (unreadable lines, torn tails, broken chains, blobs), the
    /// file history against the logs. With `repair`, fix what can be fixed
    /// without loss: terminate torn tails, quarantine unreadable lines, rebuild
    /// the index, delete the file-history refs of deleted sessions. Without
    /// it, nothing is written and no lock is taken. `progress` is called as
    /// each step advances.
    pub fn doctor(
        &self,
        options: &crate::ops::doctor::DoctorOptions,
        progress: &mut dyn FnMut(crate::ops::doctor::DoctorProgress),
    ) -> Result<crate::ops::doctor::DoctorReport> {
        crate::ops::doctor::doctor(&self.core, options, progress)
    }

    /// Full-text search over the sessions of this project (or, with
    /// `query.all`, of every project in the home), best match first. The
    /// search cache (FORMAT.md §23) is brought up to date from the logs before
    /// it answers: appends are indexed by offset, deleted and rewritten
    /// sessions leave no stale hits, and a damaged cache is set aside and
    /// rebuilt. Takes no session lock and never blocks a writer.
    pub fn search(
        &self,
        query: &crate::ops::search::SearchQuery,
    ) -> Result<crate::ops::search::SearchResults> {
        crate::ops::search::search(&self.core, query)
    }

    /// A session's active path as seed-style JSONL or a Markdown transcript
    /// (blobs inlined).
    pub fn export_session(
        &self,
        id: &str,
        format: crate::ops::export::ExportFormat,
    ) -> Result<String> {
        crate::ops::export::export(&self.core, id, format)
    }

    /// Session `id`'s active path written into another agent's own store,
    /// where that agent lists and resumes it (FORMAT.md §22.9, §22.10): a
    /// Claude Code transcript under `<claude home>/projects/<project dir>/`,
    /// or a Codex rollout under `<codex home>/sessions/YYYY/MM/DD/`, named by
    /// the session's id (or a UUIDv7 derived from it when the id is no UUID).
    /// Written through a temp file and a rename; exporting again writes
    /// nothing when the file holds the same bytes, and a file there with other
    /// bytes is left alone: `Conflict` naming it. An unknown session is
    /// `NotFound` and a relative home `InvalidInput`, nothing written.
    pub fn export_to(
        &self,
        id: &str,
        options: &crate::ops::export::native::ExportToOptions,
    ) -> Result<crate::ops::export::native::NativeExport> {
        crate::ops::export::native::export_to(&self.core, id, options)
    }

    /// Open session `id` as a *shared writer*: the handle takes the session's
    /// writer lock only for the moment of each write (append, batch, patch,
    /// state, head, pop, compaction), waiting up to
    /// [`StoreOptions::busy_timeout_ms`] for another holder, then `Busy` naming
    /// it. Under the lock it first reads what other writers appended, so each
    /// write continues from the head at that moment. Any number of shared
    /// handles, in any threads and processes, write one session; an exclusive
    /// handle ([`Store::open_session`]) holds the lock throughout and shared
    /// writers wait behind it. Reads take no lock. Fails with `NotFound` for an
    /// unknown session.
    ///
    /// [`StoreOptions::busy_timeout_ms`]: crate::StoreOptions::busy_timeout_ms
    pub fn open_shared(&self, id: &str) -> Result<Session> {
        self.core
            .open_shared(id)
            .map(|core| Session::from_core(core, self.clone()))
    }

    /// The conversation a framework names `conversation_id` (any non-empty
    /// string of at most 1,024 UTF-8 bytes: `"user@example.com"`,
    /// `"tenant/123"`), as a shared writer ([`Store::open_shared`]), created on
    /// first use. Its session id is [`conversation_session_id`]; the original
    /// id is kept in the header and the index when the two differ.
    ///
    /// ```
    /// # use sessionkit::{Store, StoreOptions};
    /// # use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// let a = store.open_conversation("user@example.com")?;
    /// let b = store.open_conversation("user@example.com")?; // a second handle: no Busy
    /// a.append(json!({"role": "user", "content": "hi"}))?;
    /// b.append(json!({"role": "assistant", "content": "hello"}))?; // continues from "hi"
    /// let path = store.read_session(a.id())?.active_path()?;
    /// assert_eq!(path.len(), 2);
    /// assert_eq!(store.session_entry(a.id())?.conversation_id.as_deref(), Some("user@example.com"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// [`conversation_session_id`]: crate::conversation_session_id
    pub fn open_conversation(&self, conversation_id: &str) -> Result<Session> {
        self.core
            .open_conversation(conversation_id)
            .map(|core| Session::from_core(core, self.clone()))
    }

    /// Open session `id` for writing, creating it with that id if it does not
    /// exist yet (as an adapter given a fresh id by its host must). Two
    /// processes racing to create it both end up opening the one session
    /// (one of them then gets `Busy`, as for [`Store::open_session`]).
    pub fn open_or_create_session(&self, id: &str) -> Result<Session> {
        use crate::error::ErrorKind;
        match self.open_session(id) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let options = CreateOptions {
                    id: Some(id.to_string()),
                    ..CreateOptions::default()
                };
                match self.create_session(options) {
                    Err(e) if e.kind() == ErrorKind::Conflict => self.open_session(id),
                    created => created,
                }
            }
            opened => opened,
        }
    }
}
