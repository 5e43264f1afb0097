//! The store of one project: paths, the project lock, the index and the session
//! operations that do not need an open writer.

pub(crate) mod session;
pub(crate) mod shared;
pub(crate) mod trash;

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::format::ids::IdSource;
use crate::format::layout::{check_session_id, subagents_dir_in, Layout, STRUCTURE_CACHE_FILE};
use crate::format::project::project_code;
use crate::fsutil;
use crate::history::{GcPhase, GcProgress};
use crate::index::journal::{self as journal, StoredIndex};
use crate::index::page::{RawEntry, RawIndex};
use crate::index::sort_ms;
use crate::index::{
    fold_log, IndexEdit, IndexEntry, IndexFile, WrittenEntries, INDEX_FILE, INDEX_VERSION,
};
use crate::log::{self, LoadedLog, ReadReport};
use crate::options::{Durability, StoreOptions};
use crate::platform::{self, Private};
use crate::store::session::{CreateOptions, SessionCore};
use crate::view::{finish_model_view, Branch, Message, ModelViewOptions, TreeNode};

pub(crate) struct StoreInner {
    pub options: StoreOptions,
    pub root: PathBuf,
    pub layout: Layout,
    pub code: String,
    pub ids: Arc<IdSource>,
    /// What file history needs of this store, built once.
    pub history: crate::history::Scope,
    pub blobs: BlobStore,
    /// The index as this handle last wrote it, reused while the file is still the
    /// one written (see [`IndexCache`]).
    index_cache: parking_lot::Mutex<Option<IndexCache>>,
    /// The entries of the index this handle last wrote, with their JSON.
    written_entries: parking_lot::Mutex<WrittenEntries>,
}

/// How old an unreferenced blob must be before [`crate::Store::gc_blobs`] deletes it.
pub const BLOB_GC_GRACE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// What [`crate::Store::gc_blobs`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobGcReport {
    /// Blobs in the store before.
    pub blobs_before: usize,
    /// Their bytes.
    pub bytes_before: u64,
    /// Blobs deleted.
    pub blobs_removed: usize,
    /// Bytes of the blobs deleted.
    pub bytes_freed: u64,
    /// Unreferenced blobs kept because they are younger than the grace period.
    pub kept_young: usize,
}

/// What [`crate::Store::gc_all`] did: the file history's report, with the blobs' and
/// the temp files' beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreGcReport {
    /// The file-history gc (its fields at the top level of the JSON).
    #[serde(flatten)]
    pub file_history: crate::history::GcReport,
    /// The blob gc.
    pub blobs: BlobGcReport,
    /// The temp-file sweep.
    pub temp_files: TempGcReport,
    /// Trashed sessions purged, their grace period over (FORMAT.md §10.6).
    pub trash_purged: Vec<String>,
}

/// What [`crate::Store::gc_temp_files`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TempGcReport {
    /// Files deleted.
    pub removed: usize,
    /// Their bytes.
    pub bytes_freed: u64,
    /// Temp files kept because they are younger than the grace period.
    pub kept_young: usize,
}

/// The digests of every object with a `"sha256": "<64 hex>"` member in a log:
/// every blob reference (a message's `contentBlob`/`contentParamsBlob`, also
/// inside compaction records), and possibly more, which only keeps a blob longer.
/// A line can only name one if it holds `sha256` or a `\u` escape (a key may be
/// spelled with escapes), so only those lines are parsed; a line that is not
/// valid JSON keeps every 64-hex-digit run in it.
pub(crate) fn blob_digests_in(bytes: &[u8]) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(d)) = m.get("sha256") {
                    if crate::blobs::is_digest(d) {
                        out.push(d.clone());
                    }
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for line in candidate_lines(bytes) {
        match serde_json::from_slice::<Value>(line) {
            Ok(v) => walk(&v, &mut out),
            // A line the reader skips may still be repaired by hand: keep every
            // digest-shaped run it holds.
            Err(_) => out.extend(
                line.split(|b| !b.is_ascii_hexdigit())
                    .filter(|run| run.len() == 64)
                    .map(|run| String::from_utf8_lossy(run).to_ascii_lowercase()),
            ),
        }
    }
    out
}

/// The lines of `bytes` holding `sha256` or `\u`, found by searching the
/// whole buffer rather than each line: a pull scans every byte it fetches, and
/// most lines name no blob.
fn candidate_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let sha = memchr::memmem::Finder::new(b"sha256");
    let esc = memchr::memmem::Finder::new(b"\\u");
    // The next hit of each, kept until passed: searching again from every
    // line would go over the same bytes again.
    let (mut next_sha, mut next_esc) = (sha.find(bytes), esc.find(bytes));
    let mut start = 0;
    std::iter::from_fn(move || {
        let refresh = |at: &mut Option<usize>, f: &memchr::memmem::Finder<'_>| {
            if at.is_some_and(|p| p < start) {
                *at = f.find(&bytes[start..]).map(|i| start + i);
            }
            *at
        };
        let hit = match (refresh(&mut next_sha, &sha), refresh(&mut next_esc, &esc)) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        let from = memchr::memrchr(b'\n', &bytes[start..hit]).map_or(start, |i| start + i + 1);
        let end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i);
        start = (end + 1).min(bytes.len());
        Some(&bytes[from..end])
    })
}

/// The index as this handle last left it under the project lock, with the files
/// it came from held open: an open file keeps its inode from being reused, so if
/// the index path still names that inode, with the length and modification time
/// it had, no other writer replaced it (they all replace it by rename), and if
/// the journal path still names the journal held, only the lines appended since
/// need reading.
struct IndexCache {
    /// The index with its journal applied.
    idx: IndexFile,
    /// The index file read or written, with its length and modification time;
    /// `None` when it was missing or unparseable (so `idx` was rebuilt).
    index: Option<(File, (u64, i64, i64))>,
    /// The journal file, once it exists.
    journal: Option<File>,
    /// The journal's length as last seen, and its modification time.
    journal_len: u64,
    journal_mtime: (i64, i64),
    /// The offset after its last complete line: below `journal_len` when it ends
    /// in a torn line (a writer killed mid-append).
    complete: u64,
}

impl IndexCache {
    fn identity(m: &fs::Metadata) -> (u64, i64, i64) {
        let (s, ns) = platform::mtime(m);
        (m.len(), s, ns)
    }

    fn from_loaded(l: crate::index::journal::Loaded) -> IndexCache {
        let meta = l.opened.file.metadata().ok().map(|m| Self::identity(&m));
        IndexCache {
            index: meta.map(|m| (l.opened.file, m)),
            idx: l.opened.idx,
            journal_mtime: l.journal.as_ref().map_or((0, 0), Self::mtime),
            journal: l.journal,
            journal_len: l.journal_len,
            complete: l.complete,
        }
    }

    fn mtime(f: &File) -> (i64, i64) {
        f.metadata().map_or((0, 0), |m| platform::mtime(&m))
    }

    /// Whether the index file at `path` is still the one this cache holds.
    fn index_current(&self, path: &Path) -> bool {
        let Some((file, meta)) = &self.index else {
            return false;
        };
        let (Ok(now), Ok(ours)) = (fs::metadata(path), file.metadata()) else {
            return false;
        };
        journal::still_at(file, path)
            && Self::identity(&now) == *meta
            && Self::identity(&ours) == *meta
    }

    /// Bring the cache up to date with the index files in `dir`, under the
    /// project lock: read the journal lines appended since. False when the index
    /// or its journal was replaced, and the cache must be read again.
    fn catch_up(&mut self, dir: &Path) -> Result<bool> {
        if !self.index_current(&dir.join(INDEX_FILE)) {
            return Ok(false);
        }
        let Some(generation) = self.idx.journal else {
            return Ok(true);
        };
        let path = journal::journal_path(dir, generation);
        if self.journal.is_none() {
            // Another writer made the first append since.
            match File::options().read(true).append(true).open(&path) {
                Ok(f) => self.journal = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        let Some(file) = &self.journal else {
            return Ok(true);
        };
        if !journal::still_at(file, &path) {
            return Ok(false);
        }
        let m = file.metadata().at(&path)?;
        let len = m.len();
        let changed = platform::mtime(&m) != self.journal_mtime;
        // Writers only append: the same length with another time, or a shorter
        // file, was not written by the rules.
        if len < self.journal_len || (len == self.journal_len && changed) {
            return Ok(false);
        }
        if len > self.journal_len {
            let mut bytes = vec![0; (len - self.complete) as usize];
            platform::read_exact_at(file, &mut bytes, self.complete).at(&path)?;
            let mut report = journal::JournalReport::default();
            self.complete = journal::apply(&mut self.idx, &bytes, self.complete, 0, &mut report);
            self.journal_len = len;
            self.journal_mtime = Self::mtime(file);
        }
        Ok(true)
    }
}

/// The sessions of one project. Cheap to clone; safe to share between threads.
#[derive(Clone)]
pub(crate) struct StoreCore {
    pub(crate) inner: Arc<StoreInner>,
}

impl std::fmt::Debug for StoreCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.inner.layout.dir)
            .finish()
    }
}

/// The result of rebuilding the index from the logs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RebuildReport {
    /// Sessions in the rebuilt index.
    pub sessions: usize,
    /// Logs that had something to report, with what.
    pub problems: Vec<(String, ReadReport)>,
}

/// A read-only view of a session loaded from disk. Takes no lock, never blocks a
/// writer, and reflects the log as it was when it was read.
#[derive(Debug)]
pub(crate) struct ViewCore {
    pub(crate) log: LoadedLog,
    pub(crate) blobs: BlobStore,
}

impl ViewCore {
    pub(crate) fn active_path(&self) -> Result<Vec<Message>> {
        self.log.active_path(&self.blobs)
    }
    pub(crate) fn ui_view(&self) -> Result<Vec<Message>> {
        self.log.ui_view(&self.blobs)
    }
    pub(crate) fn message(&self, id: &str) -> Result<Message> {
        self.log.message(id, &self.blobs)
    }
    pub(crate) fn head(&self) -> Option<&str> {
        self.log.head.as_deref()
    }
    pub(crate) fn header(&self) -> Option<&serde_json::Map<String, Value>> {
        self.log.header.as_ref()
    }
    pub(crate) fn report(&self) -> &ReadReport {
        &self.log.report
    }
    pub(crate) fn message_count(&self) -> usize {
        self.log.message_count()
    }
    /// State and subagent records in log order.
    pub(crate) fn records(&self) -> &[Value] {
        self.log.other_records()
    }
    pub(crate) fn log(&self) -> &LoadedLog {
        &self.log
    }
    /// What goes to the model (folded from the whole log).
    pub(crate) fn model_view(&self, opts: &ModelViewOptions) -> Result<Vec<Message>> {
        self.log.model_view(opts, &self.blobs)
    }
    pub(crate) fn tree(&self) -> Result<Vec<TreeNode>> {
        self.log.tree()
    }
    pub(crate) fn branches(&self) -> Result<Vec<Branch>> {
        self.log.branches()
    }
}

/// An exclusive hold on the project lock; released on drop.
pub(crate) struct ProjectLock(#[allow(dead_code)] File);

impl StoreCore {
    /// Open (creating if needed) the store of the project rooted at `project_root`.
    pub(crate) fn open(project_root: impl AsRef<Path>, options: StoreOptions) -> Result<StoreCore> {
        options.validate()?;
        let given = project_root.as_ref();
        let root = match fs::canonicalize(given) {
            Ok(root) => root,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return StoreCore::open_absent(given, options);
            }
            Err(e) => return Err(Error::io(given, e)),
        };
        if !root.is_dir() {
            return Err(Error::invalid(format!(
                "project root {} is not a directory",
                root.display()
            )));
        }
        StoreCore::open_root(root, options)
    }

    /// The store of a project root that is not a directory here (another
    /// machine's, a moved or deleted project; FORMAT.md §2): opened when its
    /// store exists, so that its sessions can be read, resumed and exported;
    /// never created, so that a mistyped path is `NotFound`.
    fn open_absent(given: &Path, options: StoreOptions) -> Result<StoreCore> {
        let not_found = || {
            Error::NotFound(format!(
                "project root {}: no such directory, and no store of sessions for that path \
                 (`sessionkit list --all` lists every project with sessions)",
                given.display()
            ))
        };
        if !given.is_absolute() {
            return Err(not_found());
        }
        let root = crate::format::project::normalize_lexically(given);
        if root.is_dir() {
            return StoreCore::open(&root, options);
        }
        let dir = options
            .resolve_home()?
            .join("projects")
            .join(project_code(&root));
        if !dir.is_dir() {
            return Err(not_found());
        }
        StoreCore::open_root(root, options)
    }

    /// Open the store of a project root as a transcript recorded it: the
    /// canonical path when the directory exists here, else the recorded
    /// absolute path normalised lexically (FORMAT.md §2, §22.1), so that a
    /// session from another machine or of a moved or deleted project keeps
    /// its project. The second value says whether the directory exists.
    pub(crate) fn open_recorded(
        recorded: &Path,
        options: StoreOptions,
    ) -> Result<(StoreCore, bool)> {
        match fs::canonicalize(recorded) {
            Ok(_) => Ok((StoreCore::open(recorded, options)?, true)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && recorded.is_absolute() => {
                let root = crate::format::project::normalize_lexically(recorded);
                // `/gone/../srv/app`: the directory the text names exists.
                if root.is_dir() {
                    return Ok((StoreCore::open(&root, options)?, true));
                }
                options.validate()?;
                Ok((StoreCore::open_root(root, options)?, false))
            }
            Err(e) => Err(Error::io(recorded, e)),
        }
    }

    fn open_root(root: PathBuf, options: StoreOptions) -> Result<StoreCore> {
        let home = options.resolve_home()?;
        let code = project_code(&root);
        let dir = home.join("projects").join(&code);
        fsutil::create_private_dir(&dir)?;
        let ids = Arc::new(match options.deterministic {
            Some(d) => IdSource::deterministic(&d),
            None => IdSource::System,
        });
        let history = crate::history::Scope {
            layout: Layout::new(dir.clone()),
            project_root: root.clone(),
            durable: options.durability != Durability::Never,
            ids: ids.clone(),
        };
        Ok(StoreCore {
            inner: Arc::new(StoreInner {
                index_cache: parking_lot::Mutex::new(None),
                written_entries: parking_lot::Mutex::new(WrittenEntries::default()),
                blobs: BlobStore::new(&dir),
                options,
                root,
                layout: Layout::new(dir),
                code,
                history,
                ids,
            }),
        })
    }

    /// The canonical project root.
    pub(crate) fn project_root(&self) -> &Path {
        &self.inner.root
    }
    /// The directory holding this project's sessions.
    pub(crate) fn dir(&self) -> &Path {
        &self.inner.layout.dir
    }
    pub(crate) fn project_code(&self) -> &str {
        &self.inner.code
    }
    pub(crate) fn options(&self) -> &StoreOptions {
        &self.inner.options
    }
    pub(crate) fn blobs(&self) -> &BlobStore {
        &self.inner.blobs
    }
    pub(crate) fn ids(&self) -> &IdSource {
        &self.inner.ids
    }

    pub(crate) fn log_path(&self, id: &str) -> Result<PathBuf> {
        self.inner.layout.log_path(id)
    }
    pub(crate) fn session_dir(&self, id: &str) -> PathBuf {
        self.inner.layout.session_dir(id)
    }
    pub(crate) fn index_path(&self) -> PathBuf {
        self.inner.layout.index_path()
    }
    /// What file history needs of this store.
    pub(crate) fn history_scope(&self) -> &crate::history::Scope {
        &self.inner.history
    }

    /// Check the links between the session logs and the file history, reading
    /// only: refs of sessions whose log is gone, refs whose chain of snapshots
    /// reaches a missing commit, and `checkpointHash`es that name no snapshot of
    /// their session. Takes no writer lock, so a busy session is checked too; it
    /// waits only for a running `gc`.
    pub(crate) fn check_file_history(&self) -> Result<crate::history::FileHistoryCheck> {
        // The logs first: a checkpointHash is appended after its snapshot's commit
        // and ref are written, so every hash read now is in the repository read
        // after, unless it is lost.
        let mut hashes = Vec::new();
        for id in self.log_ids()? {
            // An unreadable log is reported by the log checks; it names no hash.
            if let Ok(view) = self.read_session(&id) {
                hashes.push((id, crate::history::checkpoint_hashes(view.log())));
            }
        }
        crate::history::check_links(self.history_scope(), hashes)
    }

    /// Delete the file-history refs (branches and pending restores) of sessions
    /// whose log no longer exists and that are not in the trash: a deleted
    /// session's history is garbage by design, and its objects go with the
    /// next `gc`. Returns the refs deleted.
    /// A ref that moved meanwhile, or is being updated, is left alone.
    pub(crate) fn prune_orphan_file_history(&self) -> Result<Vec<crate::history::HistoryRef>> {
        crate::history::prune_orphans(self.history_scope())
    }

    pub(crate) fn project_lock(&self) -> Result<ProjectLock> {
        fsutil::lock_exclusive(&self.inner.layout.project_lock_path()).map(ProjectLock)
    }

    /// Read-modify-write the index under the project lock. A missing or unreadable
    /// index is rebuilt from the logs first. The sessions `f` changes are appended
    /// to the index journal as one write; the whole index is written instead
    /// (naming a new journal) when the journal would outgrow it, or the index has
    /// no journal yet (FORMAT.md §10.7). `sync` fsyncs what is written.
    pub(crate) fn update_index<T>(
        &self,
        sync: bool,
        f: impl FnOnce(&mut IndexEdit) -> Result<T>,
    ) -> Result<T> {
        self.update_index_as(sync, false, f)
    }

    /// [`StoreCore::update_index`], and with `compact` the whole index is
    /// written whenever the journal is not empty or `f` changed an entry: a
    /// writer closing leaves the index file complete on its own (§10.7).
    pub(crate) fn update_index_as<T>(
        &self,
        sync: bool,
        compact: bool,
        f: impl FnOnce(&mut IndexEdit) -> Result<T>,
    ) -> Result<T> {
        let _lock = self.project_lock()?;
        let mut st = match self.inner.index_cache.lock().take() {
            Some(mut c) => match c.catch_up(&self.inner.layout.dir)? {
                true => c,
                false => self.load_index_locked()?,
            },
            None => self.load_index_locked()?,
        };
        let mut edit = IndexEdit::new(&mut st.idx);
        let out = f(&mut edit)?;
        let lines = edit.journal_lines();
        let limit = st
            .index
            .as_ref()
            .map_or(0, |(_, m)| m.0)
            .max(self.journal_min_bytes());
        let stale_alone = st.journal_len > 0 || !lines.is_empty();
        if st.index.is_none() || st.idx.journal.is_none() || (compact && stale_alone) {
            self.write_whole_index(&mut st, sync)?;
        } else if !lines.is_empty() {
            if st.journal_len + lines.len() as u64 > limit {
                self.write_whole_index(&mut st, sync)?;
            } else {
                self.append_index_journal(&mut st, lines, sync)?;
            }
        } else if sync {
            // Nothing changed, but what an earlier update wrote unsynced (this
            // session's entry, say) must be durable now, as `sync()` promises.
            match (&st.journal, &st.index, st.idx.journal) {
                (Some(j), _, Some(g)) => j
                    .sync_data()
                    .at(&journal::journal_path(&self.inner.layout.dir, g))?,
                (None, Some((f, _)), _) => f.sync_all().at(&self.index_path())?,
                _ => {}
            }
        }
        *self.inner.index_cache.lock() = Some(st);
        Ok(out)
    }

    /// The index and its journal, read under the project lock (held by the
    /// caller); rebuilt from the logs when the index is missing or unparseable.
    fn load_index_locked(&self) -> Result<IndexCache> {
        match journal::load(&self.inner.layout.dir, || Ok(()), |_| {}) {
            Ok(Some(l)) => Ok(IndexCache::from_loaded(l)),
            Ok(None) | Err(Error::Corrupt(_)) => Ok(IndexCache {
                idx: self.fold_all()?.0,
                index: None,
                journal: None,
                journal_len: 0,
                journal_mtime: (0, 0),
                complete: 0,
            }),
            Err(e) => Err(e),
        }
    }

    /// The size past which a journal is compacted, if the index is smaller.
    fn journal_min_bytes(&self) -> u64 {
        self.inner
            .options
            .index_journal_min_bytes
            .unwrap_or(journal::JOURNAL_MIN_BYTES)
    }

    /// Append journal lines (one write, under the project lock); a torn last line
    /// that a killed writer left is ended first, so it cannot swallow them.
    fn append_index_journal(&self, st: &mut IndexCache, lines: Vec<u8>, sync: bool) -> Result<()> {
        use std::io::Write;
        let Some(generation) = st.idx.journal else {
            return Err(Error::Internal("journal append without a journal".into()));
        };
        let path = journal::journal_path(&self.inner.layout.dir, generation);
        if st.journal.is_none() {
            let f = OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .private()
                .open(&path)
                .at(&path)?;
            st.journal = Some(f);
        }
        let Some(mut file) = st.journal.as_ref() else {
            return Err(Error::Internal("journal not open".into()));
        };
        let bytes = if st.complete < st.journal_len {
            [&b"\n"[..], &lines].concat()
        } else {
            lines
        };
        // A failed write leaves the cache dropped: the next update reads the file.
        file.write_all(&bytes).at(&path)?;
        if sync {
            file.sync_data().at(&path)?;
        }
        st.journal_len += bytes.len() as u64;
        st.complete = st.journal_len;
        st.journal_mtime = IndexCache::mtime(file);
        Ok(())
    }

    /// Write the whole index, naming a new journal generation, then remove the
    /// older journals (under the project lock): a compaction. The journal itself
    /// is created by the first append.
    fn write_whole_index(&self, st: &mut IndexCache, sync: bool) -> Result<()> {
        let dir = &self.inner.layout.dir;
        let path = self.index_path();
        let old = journal::journal_files(dir)?;
        let generation = old.iter().copied().chain(st.idx.journal).max().unwrap_or(0) + 1;
        st.idx.sort();
        st.idx.version = INDEX_VERSION;
        st.idx.journal = Some(generation);
        // The log is the durable truth and the entry records the log length it was
        // folded from, so a lost rename only leaves a stale entry that the next
        // list refolds: the directory fsync is not needed for safety.
        let bytes = st
            .idx
            .to_bytes_reusing(&mut self.inner.written_entries.lock());
        fsutil::atomic_write(&path, &bytes, sync, false)?;
        // The index names the new generation now: no reader starts on the old
        // journals, and one that has the old index open starts again.
        for g in old {
            let _ = fsutil::remove_file_if_exists(&journal::journal_path(dir, g));
        }
        // Still under the project lock, so the file at `path` is the one written.
        st.index = File::open(&path)
            .ok()
            .and_then(|f| Some((IndexCache::identity(&f.metadata().ok()?), f)))
            .map(|(m, f)| (f, m));
        st.journal = None;
        st.journal_len = 0;
        st.journal_mtime = (0, 0);
        st.complete = 0;
        Ok(())
    }

    /// Write the whole index now, as a compaction does (for tests of readers
    /// racing one).
    #[cfg(test)]
    pub(crate) fn compact_index(&self) -> Result<()> {
        let _lock = self.project_lock()?;
        self.inner.index_cache.lock().take();
        let mut st = self.load_index_locked()?;
        self.write_whole_index(&mut st, false)?;
        *self.inner.index_cache.lock() = Some(st);
        Ok(())
    }

    /// The index as stored: the index file with its journal applied (and what
    /// reading the journal found), the entries as written, not checked against
    /// their logs (see [`StoreCore::list_sessions`]); `Ok(None)` when there is no
    /// index. Takes no lock, unless it keeps losing the race with compactions.
    pub(crate) fn read_index(&self) -> Result<Option<StoredIndex>> {
        journal::read_stored(&self.inner.layout.dir, || self.project_lock(), |_| {})
    }

    /// Ids of every session log in the project directory.
    pub(crate) fn log_ids(&self) -> Result<Vec<String>> {
        log_ids_in(&self.inner.layout.dir)
    }

    fn fold_all(&self) -> Result<(IndexFile, Vec<(String, ReadReport)>)> {
        let mut idx = IndexFile {
            version: INDEX_VERSION,
            ..IndexFile::default()
        };
        let mut problems = Vec::new();
        for id in self.log_ids()? {
            let path = self.log_path(&id)?;
            match fold_log(&id, &path, &self.inner.blobs) {
                Ok((entry, report)) => {
                    if !report.is_clean() {
                        problems.push((id, report));
                    }
                    idx.sessions.push(entry);
                }
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        idx.sort();
        Ok((idx, problems))
    }

    /// Delete the blobs that no session or subagent log of the project refers to
    /// (left by deleted sessions), and report what was freed. A blob younger than
    /// [`BLOB_GC_GRACE`] is kept even when unreferenced: a writer stores (or
    /// touches, when it reuses one) a blob before it writes the line that refers
    /// to it, so an append in flight never loses its blob. Trashed sessions' logs
    /// count. Takes the project lock only while it lists the logs.
    pub(crate) fn gc_blobs(&self, progress: &mut dyn FnMut(GcProgress)) -> Result<BlobGcReport> {
        let started = std::time::SystemTime::now();
        let blobs = self.inner.blobs.files()?;
        let mut report = BlobGcReport {
            blobs_before: blobs.len(),
            bytes_before: blobs.iter().map(|b| b.2).sum(),
            ..BlobGcReport::default()
        };
        if blobs.is_empty() {
            return Ok(report);
        }
        // Listed under the project lock, which every move into or out of the
        // trash holds, so each log is listed where it is (and, if it moves
        // before it is read, found where it went).
        let logs = {
            let _lock = self.project_lock()?;
            self.all_log_paths()?
        };
        let mut referenced = std::collections::HashSet::new();
        let total = logs.len() as u64;
        for (i, (path, alt)) in logs.iter().enumerate() {
            progress(GcProgress {
                phase: GcPhase::ScanningLogs,
                done: i as u64,
                total,
            });
            // A log moved into or out of the trash since the listing is read
            // where it went.
            let read = match fs::read(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => match alt {
                    Some(alt) => fs::read(alt).map_err(|e| (alt, e)),
                    None => Err((path, e)),
                },
                r => r.map_err(|e| (path, e)),
            };
            match read {
                Ok(bytes) => referenced.extend(blob_digests_in(&bytes)),
                Err((_, e)) if e.kind() == std::io::ErrorKind::NotFound => {} // deleted meanwhile
                Err((p, e)) => return Err(Error::io(p, e)),
            }
        }
        progress(GcProgress {
            phase: GcPhase::ScanningLogs,
            done: total,
            total,
        });
        let cutoff = started - BLOB_GC_GRACE;
        let unreferenced: Vec<_> = blobs
            .into_iter()
            .filter(|(digest, ..)| !referenced.contains(digest.as_str()))
            .collect();
        let total = unreferenced.len() as u64;
        for (i, (_, path, len, _)) in unreferenced.iter().enumerate() {
            progress(GcProgress {
                phase: GcPhase::PruningBlobs,
                done: i as u64,
                total,
            });
            // Checked again now: a writer may have reused it since the listing.
            let young = match fs::metadata(path).and_then(|m| m.modified()) {
                Ok(t) => t > cutoff,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(path, e)),
            };
            if young {
                report.kept_young += 1;
            } else if fsutil::remove_file_if_exists(path)? {
                report.blobs_removed += 1;
                report.bytes_freed += len;
            }
        }
        if total > 0 {
            progress(GcProgress {
                phase: GcPhase::PruningBlobs,
                done: total,
                total,
            });
        }
        Ok(report)
    }

    /// Every garbage collection of the project: trashed sessions past their
    /// grace period ([`StoreCore::purge_trash`]), file-history objects no branch
    /// reaches ([`StoreCore::gc_with_progress`]), blobs no log refers to
    /// ([`StoreCore::gc_blobs`]) and temp files a crash left
    /// ([`StoreCore::gc_temp_files`]), in that order. What `sessionkit gc` and
    /// `sk_store_gc` run.
    pub(crate) fn gc_all(&self, progress: &mut dyn FnMut(GcProgress)) -> Result<StoreGcReport> {
        let trash_purged = self.purge_trash()?;
        Ok(StoreGcReport {
            file_history: self.gc_with_progress(progress)?,
            blobs: self.gc_blobs(progress)?,
            temp_files: self.gc_temp_files()?,
            trash_purged,
        })
    }

    /// Delete the `.tmp-*` files that a crash left behind between writing and
    /// renaming them (FORMAT.md §1.2): in the project directory, the blob store
    /// and the sessions' `subagents/` directories; and index journals that the
    /// index does not name (§10.7). An atomic replace in flight
    /// holds its temp file for milliseconds, so one older than [`BLOB_GC_GRACE`]
    /// is garbage; younger ones are kept. Also deletes a structure cache whose
    /// session log is gone (FORMAT.md §5.1). Takes no lock; never follows a link.
    pub(crate) fn gc_temp_files(&self) -> Result<TempGcReport> {
        let cutoff = std::time::SystemTime::now() - BLOB_GC_GRACE;
        let child_dirs = |dir: &Path| -> Vec<PathBuf> {
            let Ok(rd) = fs::read_dir(dir) else {
                return Vec::new();
            };
            rd.flatten()
                .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
                .map(|d| d.path())
                .collect()
        };
        // The project directory; each directory in it (sessions' sidecars, the
        // blob store) and its `subagents/`; the blob store's `<hh>/`.
        let mut dirs = vec![self.inner.layout.dir.clone()];
        for d in child_dirs(&self.inner.layout.dir) {
            dirs.push(subagents_dir_in(&d));
            dirs.push(d);
        }
        dirs.extend(child_dirs(self.inner.blobs.dir()));
        // Nobody appends to a journal the index does not name; the grace period
        // covers a journal created just after an index read here was replaced.
        let named_journal = IndexFile::read(&self.index_path())
            .ok()
            .flatten()
            .and_then(|i| i.journal);
        let mut report = TempGcReport::default();
        for d in dirs {
            let rd = match fs::read_dir(&d) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&d, e)),
            };
            for f in rd {
                let f = f.at(&d)?;
                let name = f.file_name();
                let name = name.to_str();
                // An index journal the index no longer names: a compaction was cut
                // short before removing it, or an older writer rewrote the index.
                let stale_journal = d == self.inner.layout.dir
                    && name
                        .and_then(journal::generation_of)
                        .is_some_and(|g| Some(g) != named_journal);
                let is_temp = stale_journal || name.is_some_and(|n| n.starts_with(".tmp-"));
                // `file_type` does not follow links: a link named .tmp- stays.
                if !is_temp || !f.file_type().at(&f.path())?.is_file() {
                    continue;
                }
                let path = f.path();
                let m = match f.metadata() {
                    Ok(m) => m,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(Error::io(&path, e)),
                };
                if m.modified().is_ok_and(|t| t > cutoff) {
                    report.kept_young += 1;
                } else if fsutil::remove_file_if_exists(&path)? {
                    report.removed += 1;
                    report.bytes_freed += m.len();
                }
            }
        }
        // A structure cache outlives its log only when a reader wrote it while
        // the session was being deleted: it and its directory, if that is all
        // there is, go too.
        for d in child_dirs(&self.inner.layout.dir) {
            let cache = d.join(STRUCTURE_CACHE_FILE);
            let mut log = d.clone().into_os_string();
            log.push(".jsonl");
            let Ok(m) = cache.symlink_metadata() else {
                continue;
            };
            if m.is_file() && !Path::new(&log).exists() && fsutil::remove_file_if_exists(&cache)? {
                report.removed += 1;
                report.bytes_freed += m.len();
                let _ = fs::remove_dir(&d);
            }
        }
        Ok(report)
    }

    /// Every session log and subagent log in the project directory, including
    /// the subagents of sessions whose main log is gone, and in the trash; each
    /// with where it would be after a move into or out of the trash.
    fn all_log_paths(&self) -> Result<Vec<(PathBuf, Option<PathBuf>)>> {
        let layout = &self.inner.layout;
        let mut out = Vec::new();
        for id in self.log_ids()? {
            let alt = layout.trash_entry_dir(&id)?.join(format!("{id}.jsonl"));
            out.push((self.log_path(&id)?, Some(alt)));
        }
        for d in fs::read_dir(&layout.dir).at(&layout.dir)? {
            let d = d.at(&layout.dir)?;
            let trashed_sidecar = d
                .file_name()
                .to_str()
                .and_then(|id| Some(layout.trash_entry_dir(id).ok()?.join(id)));
            for (name, p) in subagent_logs_in(&d.path())? {
                let alt = trashed_sidecar
                    .as_ref()
                    .map(|t| subagents_dir_in(t).join(format!("{name}.jsonl")));
                out.push((p, alt));
            }
        }
        for (trashed, live) in self.trashed_log_paths()? {
            out.push((trashed, Some(live)));
        }
        Ok(out)
    }

    /// Rebuild the index from the session logs, replacing whatever was there.
    pub(crate) fn rebuild_index(&self) -> Result<RebuildReport> {
        let _lock = self.project_lock()?;
        self.inner.index_cache.lock().take();
        let (idx, problems) = self.fold_all()?;
        let mut st = IndexCache {
            idx,
            index: None,
            journal: None,
            journal_len: 0,
            journal_mtime: (0, 0),
            complete: 0,
        };
        self.write_whole_index(&mut st, self.durable())?;
        let sessions = st.idx.sessions.len();
        *self.inner.index_cache.lock() = Some(st);
        Ok(RebuildReport { sessions, problems })
    }

    pub(crate) fn durable(&self) -> bool {
        self.inner.options.durability == Durability::Always
    }

    /// The project's sessions, newest first. Entries whose log changed since they
    /// were written (a writer that has not flushed, a crash) are refolded from the
    /// log, and the refreshed entries written back.
    pub(crate) fn list_sessions(&self) -> Result<Vec<IndexEntry>> {
        // Read as stored, not sorted: the answer is sorted once, below.
        let (read, lengths) = self.beside_log_lengths(|| {
            journal::load(&self.inner.layout.dir, || self.project_lock(), |_| {})
        });
        let idx = match read {
            Ok(Some(loaded)) => loaded.opened.idx,
            Ok(None) | Err(Error::Corrupt(_)) => return self.refresh_index(),
            Err(e) => return Err(e),
        };
        // Each entry by its id, taken out as its log is met (entries are a few
        // hundred bytes: moved once, into the answer).
        let at: HashMap<String, usize> = idx
            .sessions
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.clone(), i))
            .collect();
        let mut known: Vec<Option<IndexEntry>> = idx.sessions.into_iter().map(Some).collect();
        let mut out = IndexFile {
            version: INDEX_VERSION,
            ..IndexFile::default()
        };
        // Entries folded again from their logs: the only ones written back.
        let mut refolded = Vec::new();
        for (id, len) in lengths? {
            match at.get(&id).and_then(|&i| known[i].take()) {
                Some(e) if e.log_bytes == len => out.sessions.push(e),
                _ => out.sessions.extend(self.refold(&id, &mut refolded)?),
            }
        }
        // What is left had no log when the store was listed.
        let gone: Vec<String> = known.into_iter().flatten().map(|e| e.id).collect();
        self.write_back(refolded, gone)?;
        out.sort();
        Ok(out.sessions)
    }

    /// `read` (of the index), with every log's length ([`log_lengths`])
    /// taken on other threads meanwhile: at ten thousand sessions each is
    /// about half of a listing.
    fn beside_log_lengths<T: Send>(
        &self,
        read: impl FnOnce() -> T + Send,
    ) -> (T, Result<Vec<(String, u64)>>) {
        let dir = &self.inner.layout.dir;
        std::thread::scope(|sc| {
            let lengths = sc.spawn(|| log_lengths(dir));
            let read = read();
            (read, lengths.join().unwrap_or_else(|_| log_lengths(dir)))
        })
    }

    /// The entry of session `id` folded from its log, also added to
    /// `refolded` (what a listing writes back); `None` when the log is gone.
    fn refold(&self, id: &str, refolded: &mut Vec<IndexEntry>) -> Result<Option<IndexEntry>> {
        match fold_log(id, &self.log_path(id)?, &self.inner.blobs) {
            Ok((e, _)) => {
                refolded.push(e.clone());
                Ok(Some(e))
            }
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// What a listing found, written to the index under the project lock:
    /// the entries it folded again from their logs (unless a writer has
    /// meanwhile written one of a log as long or longer), and the removal of
    /// those whose log was gone (if it still is).
    fn write_back(&self, refolded: Vec<IndexEntry>, gone: Vec<String>) -> Result<()> {
        if refolded.is_empty() && gone.is_empty() {
            return Ok(());
        }
        self.update_index(self.durable(), |cur| {
            for id in &gone {
                if !self.log_path(id).is_ok_and(|p| p.exists()) {
                    cur.remove(id);
                }
            }
            for f in refolded {
                match cur.get(&f.id) {
                    Some(c) if c.log_bytes >= f.log_bytes => {}
                    _ => cur.upsert(f),
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// A page of [`StoreCore::list_sessions`]: the same entries, checked and
    /// written back the same way, but only the page's parsed whole
    /// ([`crate::index::page`]).
    pub(crate) fn list_page(
        &self,
        options: &crate::index::ListOptions,
    ) -> Result<crate::index::SessionPage> {
        let whole = || -> Result<crate::index::SessionPage> {
            let mut sessions = self.list_sessions()?;
            let (start, end) = page_bounds(options, sessions.len());
            let total = sessions.len();
            sessions.truncate(end);
            sessions.drain(..start);
            Ok(crate::index::SessionPage { sessions, total })
        };
        if options.limit.is_none() {
            return whole();
        }
        let dir = &self.inner.layout.dir;
        let (read, lengths) = self.beside_log_lengths(|| {
            journal::load_as::<RawIndex, _>(dir, || self.project_lock(), |_| {})
        });
        let raw = match read {
            Ok(Some(loaded)) => loaded.opened.idx,
            Ok(None) | Err(Error::Corrupt(_)) => return whole(),
            Err(e) => return Err(e),
        };
        let lengths = lengths?;
        /// An entry of the listing: one of the file's, not parsed yet, or whole.
        enum Pick<'a> {
            File(&'a RawEntry),
            Whole(u64, Box<IndexEntry>),
        }
        let at: HashMap<&str, &RawEntry> = raw.entries.iter().map(|e| (e.id.as_str(), e)).collect();
        let mut picks = Vec::with_capacity(lengths.len());
        let mut refolded = Vec::new();
        for (id, len) in &lengths {
            let fresh = match raw.journaled.get(id) {
                Some(Some(e)) if e.log_bytes == *len => {
                    Some(Pick::Whole(sort_ms(&e.updated_at), Box::new(e.clone())))
                }
                Some(_) => None,
                None => at
                    .get(id.as_str())
                    .filter(|e| e.log_bytes == *len)
                    .map(|e| Pick::File(e)),
            };
            match fresh {
                Some(p) => picks.push(p),
                None => {
                    if let Some(e) = self.refold(id, &mut refolded)? {
                        picks.push(Pick::Whole(sort_ms(&e.updated_at), Box::new(e)));
                    }
                }
            }
        }
        let listed: std::collections::HashSet<&str> =
            lengths.iter().map(|(id, _)| id.as_str()).collect();
        let mut gone: Vec<String> = raw
            .entries
            .iter()
            .map(|e| &e.id)
            .chain(
                raw.journaled
                    .iter()
                    .filter(|(_, e)| e.is_some())
                    .map(|(id, _)| id),
            )
            .filter(|id| !listed.contains(id.as_str()))
            .cloned()
            .collect();
        gone.sort_unstable();
        gone.dedup();
        fn key<'p>(p: &'p Pick<'_>) -> (u64, &'p str) {
            match p {
                Pick::File(e) => (e.updated_ms, e.id.as_str()),
                Pick::Whole(ms, e) => (*ms, e.id.as_str()),
            }
        }
        // Newest first, then by id descending (FORMAT.md §10.4).
        picks.sort_by(|a, b| key(b).cmp(&key(a)));
        let total = picks.len();
        let (start, end) = page_bounds(options, total);
        let path = dir.join(crate::index::INDEX_FILE);
        let mut sessions = Vec::with_capacity(end - start);
        for p in picks.drain(start..end) {
            sessions.push(match p {
                Pick::File(e) => match e.entry(&path) {
                    Ok(e) => e,
                    // Only its id, time and length were read: an entry that is
                    // not valid makes the index unparseable, as for a whole read.
                    Err(Error::Corrupt(_)) => return whole(),
                    Err(e) => return Err(e),
                },
                Pick::Whole(_, e) => *e,
            });
        }
        self.write_back(refolded, gone)?;
        Ok(crate::index::SessionPage { sessions, total })
    }

    fn refresh_index(&self) -> Result<Vec<IndexEntry>> {
        self.rebuild_index()?;
        Ok(self.read_index()?.unwrap_or_default().index.sessions)
    }

    /// One session's index entry (refreshed from its log if stale).
    pub(crate) fn session_entry(&self, id: &str) -> Result<IndexEntry> {
        let path = self.log_path(id)?;
        if !path.exists() {
            return Err(Error::NotFound(format!("session {id}")));
        }
        self.list_sessions()?
            .into_iter()
            .find(|e| e.id == id)
            .ok_or_else(|| Error::NotFound(format!("session {id}")))
    }

    /// The session a `/continue` would pick: the most recently updated one that has
    /// messages.
    pub(crate) fn continue_session(&self) -> Result<Option<IndexEntry>> {
        Ok(self
            .list_sessions()?
            .into_iter()
            .find(|e| e.message_count > 0))
    }

    /// Start a new session; older sessions beyond `max_sessions` are pruned and
    /// named in [`SessionCore::pruned`].
    pub(crate) fn create_session(&self, options: CreateOptions) -> Result<SessionCore> {
        SessionCore::create(self, options)
    }

    /// Open a session for writing. A second writer, in this or another process,
    /// gets `Busy`.
    pub(crate) fn open_session(&self, id: &str) -> Result<SessionCore> {
        SessionCore::open(self, id)
    }

    /// Open a session as a shared writer ([`SessionCore::open_shared`]).
    pub(crate) fn open_shared(&self, id: &str) -> Result<SessionCore> {
        SessionCore::open_shared(self, id)
    }

    /// The conversation `conversation_id` as a shared writer: its session
    /// (FORMAT.md §3.3) opened, or created when it does not exist yet. Two
    /// processes racing to create it both end up writing the one session.
    pub(crate) fn open_conversation(&self, conversation_id: &str) -> Result<SessionCore> {
        let id = crate::format::layout::conversation_session_id(conversation_id)?;
        match self.open_shared(&id) {
            Err(Error::NotFound(_)) => {
                match SessionCore::create_conversation(self, &id, conversation_id) {
                    Ok(s) => Ok(s.into_shared()),
                    Err(Error::Conflict(_)) => self.open_shared(&id),
                    Err(e) => Err(e),
                }
            }
            opened => opened,
        }
    }

    /// Load a session for reading, without a lock.
    pub(crate) fn read_session(&self, id: &str) -> Result<ViewCore> {
        let mut log = self.load_session_log(id)?;
        log.check_blobs(&self.inner.blobs);
        Ok(ViewCore {
            log,
            blobs: self.inner.blobs.clone(),
        })
    }

    /// A session's log loaded for views, through its structure cache.
    pub(crate) fn load_session_log(&self, id: &str) -> Result<log::LoadedLog> {
        let path = self.log_path(id)?;
        log::load_cached(&path, &self.structure_cache_path(id))
            .map_err(|e| not_found_as_session(e, id))
    }

    /// A session's log as an outline ([`log::load_outline`]), with the open log.
    pub(crate) fn load_session_outline(&self, id: &str) -> Result<(log::LoadedLog, fs::File)> {
        let path = self.log_path(id)?;
        log::load_outline(&path, &self.structure_cache_path(id))
            .map_err(|e| not_found_as_session(e, id))
    }

    /// Where a session's structure cache lives (FORMAT.md §5.1).
    pub(crate) fn structure_cache_path(&self, id: &str) -> PathBuf {
        self.inner.layout.structure_cache_path(id)
    }

    /// What goes to the model on resume. Reads the log from its end back to the
    /// latest compaction on the active path, so the cost follows the live context,
    /// not the history.
    pub(crate) fn model_view(&self, id: &str, opts: &ModelViewOptions) -> Result<Vec<Message>> {
        let path = self.log_path(id)?;
        match crate::view::resume::model_items(&path).map_err(|e| match e {
            Error::NotFound(_) => Error::NotFound(format!("session {id}")),
            e => e,
        })? {
            Some(items) => finish_model_view(items, opts, &self.inner.blobs),
            None => self.read_session(id)?.model_view(opts),
        }
    }

    /// Rename a session (its index title). Takes the session's writer lock for the
    /// moment of the write, so it fails with `Busy` while another writer holds it;
    /// a host with the session open renames through [`SessionCore::rename`].
    pub(crate) fn rename_session(&self, id: &str, title: &str) -> Result<IndexEntry> {
        let s = self.open_session(id)?;
        let e = s.rename(title)?;
        s.close()?;
        Ok(e)
    }

    /// Delete a session: its index entry, log, sidecars and quarantine file.
    pub(crate) fn delete_session(&self, id: &str) -> Result<()> {
        let path = self.log_path(id)?;
        // Hold the writer lock while deleting, so no writer is mid-append.
        let w = crate::log::writer::LogWriter::open(
            &path,
            false,
            Durability::Never,
            &format!("session {id}"),
        )?;
        self.update_index(self.durable(), |idx| {
            idx.remove(id);
            self.remove_session_files(id)
        })?;
        drop(w);
        Ok(())
    }

    /// Delete a session open for writing for good (log, sidecars, file history)
    /// and create it again, empty, under the same id. The writer's lock is let
    /// go between the two: a writer that opens the session in that moment makes
    /// this fail with `Busy`, and the session stays deleted. The new session
    /// keeps the conversation id, and the handle its kind (shared or not).
    pub(crate) fn erase_session(&self, session: SessionCore) -> Result<SessionCore> {
        let id = session.id().to_owned();
        let shared = session.is_shared();
        let conversation = session.entry().conversation_id;
        session.close()?;
        self.delete_session(&id)?;
        let fresh = match conversation {
            Some(c) => SessionCore::create_conversation(self, &id, &c)?,
            None => self.create_session(CreateOptions {
                id: Some(id),
                ..Default::default()
            })?,
        };
        Ok(if shared { fresh.into_shared() } else { fresh })
    }

    /// The log goes last: while it exists the session does, so a delete that is
    /// stopped half way leaves a session that a retried delete finishes, never
    /// an orphaned file history or sidecar that nothing lists.
    pub(crate) fn remove_session_files(&self, id: &str) -> Result<()> {
        let path = self.log_path(id)?;
        crate::history::delete_branch(self.history_scope(), id)?;
        fsutil::remove_file_if_exists(&PathBuf::from(format!("{}.corrupt", path.display())))?;
        let dir = self.session_dir(id);
        match fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&dir, e)),
        }
        fsutil::remove_file_if_exists(&path)?;
        Ok(())
    }

    /// The subagents of a session, from their metadata files.
    pub(crate) fn list_subagents(&self, session_id: &str) -> Result<Vec<Value>> {
        // No session, no subagents to list: NotFound, as for its other views.
        if !self.log_path(session_id)?.exists() {
            return Err(Error::NotFound(format!("session {session_id}")));
        }
        let dir = self.inner.layout.subagents_dir(session_id);
        // With the file name, which breaks ties of `createdAt` (FORMAT.md §11):
        // directory order differs between file systems.
        let mut out: Vec<(String, Value)> = Vec::new();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for d in rd {
            let p = d.at(&dir)?.path();
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.ends_with(".meta.json") {
                let bytes = fs::read(&p).at(&p)?;
                let v: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| Error::Corrupt(format!("{}: {e}", p.display())))?;
                out.push((name, v));
            }
        }
        out.sort_by(|(an, a), (bn, b)| {
            (a["createdAt"].as_str(), an).cmp(&(b["createdAt"].as_str(), bn))
        });
        Ok(out.into_iter().map(|(_, v)| v).collect())
    }

    /// Load a subagent's sidechain log for reading.
    pub(crate) fn read_subagent(&self, session_id: &str, agent_id: &str) -> Result<ViewCore> {
        let path = self.subagent_log_path(session_id, agent_id)?;
        let mut log = log::load(&path).map_err(|e| match e {
            Error::NotFound(_) => {
                Error::NotFound(format!("subagent {agent_id} of session {session_id}"))
            }
            e => e,
        })?;
        log.check_blobs(&self.inner.blobs);
        Ok(ViewCore {
            log,
            blobs: self.inner.blobs.clone(),
        })
    }

    pub(crate) fn subagent_log_path(&self, session_id: &str, agent_id: &str) -> Result<PathBuf> {
        self.inner.layout.subagent_log_path(session_id, agent_id)
    }

    /// Open the log at `path` for appending, the log of `session` (or of its
    /// subagent `agent`): every opening of a log for writing goes through
    /// here, so that the change feed names it at its first write
    /// (FORMAT.md §10.8). `path` is the log's own path, or where it is staged
    /// (a fork's). With `locked` the writer holds the log's exclusive lock,
    /// else it takes it around each write (a shared writer).
    pub(crate) fn open_log_writer(
        &self,
        session: &str,
        agent: Option<&str>,
        path: &Path,
        create_new: bool,
        locked: bool,
        what: &str,
    ) -> Result<crate::log::writer::LogWriter> {
        use crate::log::writer::LogWriter;
        let durability = self.options().durability;
        let writer = if locked {
            LogWriter::open(path, create_new, durability, what)
        } else {
            LogWriter::open_unlocked(path, create_new, durability, what)
        }?;
        // Written by the first write, so that an open that writes nothing (a
        // rename refused for its title) leaves the store as it was.
        Ok(writer.with_feed(self.dir(), log::feed::line(session, agent)))
    }
}

pub(crate) fn not_found_as_session(e: Error, id: &str) -> Error {
    match e {
        Error::NotFound(_) => Error::NotFound(format!("session {id}")),
        e => e,
    }
}

/// The logs in the `subagents/` directory of the session directory
/// `session_dir`, as (file stem, path), sorted; none when there is no such
/// directory (or a file stands in its place). Any other error is returned: a
/// blob gc that skipped an unreadable directory would delete the blobs only its
/// sidechains reference, and a search would lose their hits without a word.
pub(crate) fn subagent_logs_in(session_dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let sub = subagents_dir_in(session_dir);
    let Some(rd) = fsutil::read_dir_if_exists(&sub)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for f in rd {
        let f = f.at(&sub)?;
        if let Some(stem) = f
            .file_name()
            .to_str()
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            out.push((stem.to_string(), f.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Ids of every session log in the store directory `dir`, sorted.
pub(crate) fn log_ids_in(dir: &Path) -> Result<Vec<String>> {
    let store = crate::platform::Dir::open_path(dir).at(dir)?;
    Ok(list_store(&store, dir)?.into_iter().map(|l| l.id).collect())
}

/// The range of a listing of `total` entries that `options` asks for.
fn page_bounds(options: &crate::index::ListOptions, total: usize) -> (usize, usize) {
    let end = options
        .limit
        .map_or(total, |n| options.offset.saturating_add(n).min(total));
    (options.offset.min(end), end)
}

/// Each session log of the store in `dir` with its length: one listing, then
/// a `stat` per log relative to the open directory, on two threads for a large
/// store (the calls are the kernel's work, a few microseconds each). A log
/// deleted meanwhile is left out.
pub(crate) fn log_lengths(dir: &Path) -> Result<Vec<(String, u64)>> {
    const PARALLEL_LOGS: usize = 512;
    let store = crate::platform::Dir::open_path(dir).at(dir)?;
    let listed = list_store(&store, dir)?;
    let look = |logs: &[ListedLog]| -> Result<Vec<(String, u64)>> {
        let mut out = Vec::with_capacity(logs.len());
        let mut name = Vec::new();
        for l in logs {
            name.clear();
            name.extend_from_slice(l.id.as_bytes());
            name.extend_from_slice(b".jsonl\0");
            let c = std::ffi::CStr::from_bytes_with_nul(&name)
                .map_err(|_| Error::invalid(format!("session id {:?} has a NUL", l.id)))?;
            match store.stat(c) {
                Ok(st) => out.push((l.id.clone(), st.size as u64)),
                Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(Error::io(&dir.join(format!("{}.jsonl", l.id)), e.into())),
            }
        }
        Ok(out)
    };
    in_two_halves(&listed, PARALLEL_LOGS, look)
}

/// `look` of `items`, the two halves on two threads when there are at least
/// `parallel` of them (one on this thread), the answers in order. A half
/// whose thread panicked is looked at again here.
pub(crate) fn in_two_halves<T: Sync, R: Send>(
    items: &[T],
    parallel: usize,
    look: impl Fn(&[T]) -> Result<Vec<R>> + Sync,
) -> Result<Vec<R>> {
    if items.len() < parallel {
        return look(items);
    }
    let (first, second) = items.split_at(items.len() / 2);
    std::thread::scope(|sc| {
        let other = sc.spawn(|| look(second));
        let mut out = look(first)?;
        match other.join() {
            Ok(rest) => out.extend(rest?),
            Err(_) => out.extend(look(second)?),
        }
        Ok(out)
    })
}

/// A session log found by [`list_store`].
pub(crate) struct ListedLog {
    pub id: String,
    /// Whether the session has a sidecar directory `<id>/`: only such a
    /// session can have subagent logs.
    pub has_dir: bool,
}

/// The session logs of the open store directory `store` (at `dir`), sorted by
/// id: one listing, with no call per entry and no allocation but for the
/// names kept (a query lists the store before it answers).
pub(crate) fn list_store(store: &crate::platform::Dir, dir: &Path) -> Result<Vec<ListedLog>> {
    let (mut logs, mut dirs) = (Vec::new(), Vec::new());
    store
        .for_each_entry(|name, is_dir| {
            let Ok(name) = std::str::from_utf8(name) else {
                return;
            };
            match name.strip_suffix(".jsonl") {
                // Only ids a log path can be made of: not `blobs.jsonl` and the like.
                Some(id) if check_session_id(id).is_ok() => logs.push(id.to_string()),
                Some(_) => {}
                None if is_dir => dirs.push(name.to_string()),
                None => {}
            }
        })
        .map_err(|e| Error::io(dir, e.into()))?;
    logs.sort_unstable();
    dirs.sort_unstable();
    let mut dirs = dirs.iter().peekable();
    Ok(logs
        .into_iter()
        .map(|id| {
            while dirs.next_if(|d| d.as_str() < id.as_str()).is_some() {}
            let has_dir = dirs.next_if(|d| **d == id).is_some();
            ListedLog { id, has_dir }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::blob_digests_in;

    #[test]
    fn blob_digests_are_found_on_any_line_and_only_lines_that_may_name_one_are_parsed() {
        let a = "a".repeat(64);
        let b = "b".repeat(64);
        let c = "c".repeat(64);
        let log = format!(
            "{{\"role\":\"user\",\"content\":\"no blob\"}}\n\
             {{\"contentBlob\":{{\"sha256\":\"{a}\"}}}}\n\
             {{\"content\":\"x\"}}\n\
             {{\"x\":{{\"\\u0073ha256\":\"{b}\"}}}}\n\
             not json but sha256 {c} stays\n\
             {{\"contentBlob\":{{\"sha256\":\"{a}\"}}}}"
        );
        assert_eq!(
            blob_digests_in(log.as_bytes()),
            [&a, &b, &c, &a].map(String::clone)
        );
        assert!(blob_digests_in(b"{\"content\":\"plain\"}\n").is_empty());
        assert!(blob_digests_in(b"").is_empty());
    }
}
