//! File history: snapshots of the files a session edits, kept in an internal git
//! repository (`file-history/.git` in the project's store directory, bare, never
//! the user's), and the rewind plans and restores built on them.
//!
//! Each session has a branch named after its id. A snapshot is a commit whose
//! tree holds `files/` (the tracked files that exist, at their project paths) and
//! `manifest.json` (every tracked path, absent ones included, and the content
//! marks of files read). The latest snapshot is kept in memory, so a new one
//! reads only the tracked files (those whose status changed since they were last
//! read) and writes only what changed, as one pack: its cost grows with the
//! files touched, never with the project's size. The byte layout is in
//! docs/FORMAT.md §19.
//!
//! Submodules: `repo` (opening, locks, refs, packs), `objects` (trees and commits
//! built in memory), `maintenance` (branches of deleted sessions, gc, sizes).

mod maintenance;
mod objects;
pub(crate) mod project_fs;
mod repo;
mod reports;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use git2::{
    DiffOptions, ErrorClass, ErrorCode, FileMode, ObjectType, Oid, Patch, Repository, Tree,
};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::layout::Layout;
use crate::history::project_fs::{Block, Lookup, Node, ProjectPath, Root, StatKey, WriteKind};

use objects::{build_trees, commit_object, empty_tree_oid, root_tree, NewObjects};
use repo::HistoryRepo;

pub(crate) use maintenance::{
    check_links, checkpoint_hashes, create_branch, delete_branch, gc, prune_orphans, sizes,
};
pub(crate) use repo::git_dir_of;
pub use reports::{
    BrokenRef, CheckpointProblem, DanglingCheckpoint, FileHistoryCheck, GcPhase, GcProgress,
    HistoryRef,
};

/// What file history needs of a store: its layout, the project root whose
/// files it snapshots, and whether its writes must be durable.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub layout: Layout,
    pub project_root: std::path::PathBuf,
    pub durable: bool,
    /// The store's clock, for commit times.
    pub ids: std::sync::Arc<crate::format::ids::IdSource>,
}

/// The directory under the store directory that holds the repository.
pub const DIR: &str = "file-history";
const FILES: &str = "files";
const MANIFEST: &str = "manifest.json";
const MANIFEST_VERSION: u32 = 1;
const PENDING_PREFIX: &str = "refs/sessionkit/pending/";
const BRANCH_PREFIX: &str = "refs/heads/";

// ---------------------------------------------------------------------------
// Public result types. They cross the C ABI and the bindings as JSON.

/// What a restore does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FileAction {
    /// The file exists and gets the snapshot's content (or link target, or mode).
    Restore,
    /// The file is gone and is written back.
    Recreate,
    /// The file did not exist at the snapshot and is deleted.
    Delete,
}

/// Why a file of a plan is not safe to restore as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ConflictKind {
    /// Changed outside the agent since the last snapshot.
    ModifiedOutside,
    /// Removed outside the agent since the last snapshot.
    RemovedOutside,
    /// Created outside the agent since the last snapshot.
    CreatedOutside,
    /// The path is now a directory. Never overwritten, even when forced.
    BecameDirectory,
    /// A directory on the path is now a symlink. Never followed, even when forced.
    SymlinkInPath,
    /// A directory on the path is now a file. Never replaced, even when forced.
    NotADirectoryInPath,
    /// The path is now a FIFO, socket or device. Never replaced, even when forced.
    SpecialFile,
}

impl ConflictKind {
    /// Whether `force` may overwrite the file. Only content changes can be forced;
    /// a directory or a symlink in the way is never written through.
    pub fn forcible(self) -> bool {
        matches!(
            self,
            ConflictKind::ModifiedOutside
                | ConflictKind::RemovedOutside
                | ConflictKind::CreatedOutside
        )
    }

    fn describe(self) -> &'static str {
        match self {
            ConflictKind::ModifiedOutside => "changed outside the agent since the last snapshot",
            ConflictKind::RemovedOutside => "removed outside the agent since the last snapshot",
            ConflictKind::CreatedOutside => "created outside the agent since the last snapshot",
            ConflictKind::BecameDirectory => "is now a directory",
            ConflictKind::SymlinkInPath => "has a symlink on its path",
            ConflictKind::NotADirectoryInPath => "has a file where a directory should be",
            ConflictKind::SpecialFile => "is now a FIFO, socket or device",
        }
    }
}

/// Files changed and lines added and removed, from a snapshot to the disk now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffStats {
    /// Files that differ.
    pub files_changed: usize,
    /// Lines present now that were not at the snapshot (binary files count 0).
    pub lines_added: usize,
    /// Lines present at the snapshot that are gone now.
    pub lines_removed: usize,
}

/// One file of a rewind plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePlan {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// What the restore does to the file.
    pub action: FileAction,
    /// Why restoring the file is not safe, if it is not: a rewind refuses with
    /// `Conflict` unless forced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<ConflictKind>,
    /// Lines added since the snapshot (the restore removes them).
    pub lines_added: usize,
    /// Lines removed since the snapshot (the restore puts them back).
    pub lines_removed: usize,
    /// Whether either side is binary (its lines are not counted).
    pub binary: bool,
}

/// The dry run of a rewind: what applying it would do. Nothing is changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindPlan {
    /// The user message rewound to, when the plan is for a message.
    pub message_id: Option<String>,
    /// The snapshot restored.
    pub snapshot: String,
    /// Files that differ from the snapshot. Files already as in the snapshot are
    /// not listed.
    pub files: Vec<FilePlan>,
    /// Paths that have a conflict (also flagged in `files`).
    pub conflicts: Vec<String>,
    /// The totals over `files`.
    pub stats: DiffStats,
}

/// How a rewind is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RewindMode {
    /// Move the conversation head only; files are left alone.
    Conversation,
    /// Restore files only; the conversation is left alone.
    Files,
    /// Restore files, then move the conversation head (the default of a
    /// rewind to a message).
    #[default]
    Both,
}

impl RewindMode {
    /// Every mode.
    pub const ALL: [RewindMode; 3] = [
        RewindMode::Conversation,
        RewindMode::Files,
        RewindMode::Both,
    ];
}

/// What an applied rewind did, and how to undo it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindResult {
    /// The mode applied.
    pub mode: RewindMode,
    /// The user message rewound to (none when a snapshot was restored).
    pub message_id: Option<String>,
    /// The snapshot restored (none for a conversation-only rewind).
    pub snapshot: Option<String>,
    /// A snapshot of the files as they were just before the restore: restoring it
    /// ([`crate::Session::restore_snapshot`]) undoes the file side of this rewind.
    pub undo_snapshot: Option<String>,
    /// The snapshot taken after the restore.
    pub snapshot_after: Option<String>,
    /// The head before the rewind: [`crate::Session::set_head`] with it undoes
    /// the conversation side.
    pub previous_head: Option<String>,
    /// The head after the rewind.
    pub head: Option<String>,
    /// Files given back the snapshot's content.
    pub restored: Vec<String>,
    /// Files that were gone and were written back.
    pub recreated: Vec<String>,
    /// Files that did not exist at the snapshot, deleted.
    pub deleted: Vec<String>,
    /// Files left alone although forced: a directory or a symlink was in the way.
    pub skipped: Vec<FilePlan>,
}

/// A user message the conversation and files can be rewound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoCandidate {
    /// The user message's id.
    pub message_id: String,
    /// The message's `timestamp`.
    pub timestamp: Option<String>,
    /// The first 100 characters of the message text.
    pub preview: String,
    /// The snapshot taken before the message (its `checkpointHash`).
    pub checkpoint_hash: Option<String>,
    /// Whether the files can be restored to the message's snapshot.
    pub restorable: bool,
    /// Why not, when they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// From the snapshot to the files now.
    pub stats: DiffStats,
}

/// Whether a file changed on disk since the agent read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeStatus {
    /// The content is as the agent last read or wrote it.
    Unchanged,
    /// The content differs.
    Modified,
    /// The file existed then and is gone now.
    Deleted,
    /// The file was absent then and exists now.
    Created,
    /// The session never recorded a read (or an edit) of this file.
    NotRead,
}

/// The answer for one file of [`crate::Session::external_changes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalChange {
    /// Path relative to the project root, `/`-separated.
    pub path: String,
    /// Whether and how it changed.
    pub status: ChangeStatus,
}

/// What [`crate::Store::gc`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GcReport {
    /// Refs (session branches and pending restores) whose objects were kept.
    pub branches: usize,
    /// Objects in the repository before.
    pub objects_before: usize,
    /// Objects kept.
    pub objects_after: usize,
    /// Bytes of the object files (loose objects and packs) before and after.
    pub bytes_before: u64,
    /// Bytes of the object files after.
    pub bytes_after: u64,
    /// `bytes_before - bytes_after` (0 if it grew).
    pub bytes_freed: u64,
}

/// The file history of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistorySize {
    /// The session the branch belongs to.
    pub session_id: String,
    /// Commits on the session's branch.
    pub snapshots: usize,
    /// Objects the branch reaches, and their uncompressed bytes.
    pub objects: usize,
    /// The uncompressed bytes of those objects.
    pub bytes: u64,
    /// Uncompressed bytes of the objects no other branch reaches (about what
    /// deleting the session and running `gc` frees, before compression).
    pub exclusive_bytes: u64,
}

/// Sizes of the file history of a project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistorySizeReport {
    /// Bytes of the object files on disk (compressed, shared between sessions).
    pub disk_bytes: u64,
    /// One entry per session branch.
    pub sessions: Vec<HistorySize>,
}

// ---------------------------------------------------------------------------
// Errors and names.

fn gerr(git_dir: &Path, what: &str, e: git2::Error) -> Error {
    let msg = format!(
        "file history {}: {what}: {}",
        git_dir.display(),
        e.message()
    );
    let os = matches!(
        e.class(),
        ErrorClass::Os | ErrorClass::Filesystem | ErrorClass::None
    );
    match (e.code(), e.class()) {
        // libgit2 says "not found" also when it could not open a directory
        // (EIO, EACCES...): that is an I/O error, and says so with its number.
        (ErrorCode::NotFound, _)
            if os
                && crate::platform::errno_from_message(&msg).is_some_and(|n| n != libc::ENOENT) =>
        {
            Error::system(git_dir, msg)
        }
        (ErrorCode::NotFound, _) => Error::NotFound(msg),
        (ErrorCode::Locked, _) => Error::Busy(msg),
        (ErrorCode::Modified, _) => Error::Conflict(msg),
        // libgit2 ends an OS error's message with the system's text for errno
        // (and clears errno): Error::system reads the number back from it.
        // libgit2 also fails some file system calls (a ref's unlink) without a
        // message or class: an I/O error whose number is lost, not a bug.
        (_, ErrorClass::Os | ErrorClass::Filesystem | ErrorClass::None) => {
            Error::system(git_dir, msg)
        }
        (
            _,
            ErrorClass::Odb
            | ErrorClass::Object
            | ErrorClass::Zlib
            | ErrorClass::Tree
            | ErrorClass::Reference
            | ErrorClass::Repository
            | ErrorClass::Sha1,
        ) => Error::Corrupt(msg),
        _ => Error::Internal(msg),
    }
}

/// The branch of a session. SessionCore ids are `[A-Za-z0-9._-]`; `.` is written
/// `%2E` so that every id is a valid ref name (git refuses `..` and `.lock`).
pub(crate) fn branch_ref(session_id: &str) -> String {
    format!("{BRANCH_PREFIX}{}", session_id.replace('.', "%2E"))
}

fn pending_ref(session_id: &str) -> String {
    format!("{PENDING_PREFIX}{}", session_id.replace('.', "%2E"))
}

fn session_of_branch(refname: &str) -> Option<String> {
    refname
        .strip_prefix(BRANCH_PREFIX)
        .map(|b| b.replace("%2E", "."))
}

fn parse_oid(what: &str, s: &str) -> Result<Oid> {
    if s.len() != 40 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(format!(
            "{what} {s:?} is not a snapshot id (40 hex digits)"
        )));
    }
    Oid::from_str(s).map_err(|e| Error::invalid(format!("{what} {s:?}: {}", e.message())))
}

// ---------------------------------------------------------------------------
// Snapshot contents.

/// A file as recorded in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rec {
    Absent,
    File { oid: Oid, exec: bool },
    Link { oid: Oid },
}

impl Rec {
    fn oid(self) -> Option<Oid> {
        match self {
            Rec::Absent => None,
            Rec::File { oid, .. } | Rec::Link { oid } => Some(oid),
        }
    }

    fn mode(self) -> Option<FileMode> {
        match self {
            Rec::Absent => None,
            Rec::File { exec: false, .. } => Some(FileMode::Blob),
            Rec::File { exec: true, .. } => Some(FileMode::BlobExecutable),
            Rec::Link { .. } => Some(FileMode::Link),
        }
    }

    /// The mark stored for a read: `absent`, or the tree mode and blob id.
    fn mark(self) -> String {
        match (self.mode(), self.oid()) {
            (Some(m), Some(o)) => format!("{:o} {o}", u32::from(m)),
            _ => "absent".into(),
        }
    }
}

impl Rec {
    /// Read back a [`Rec::mark`].
    fn parse(mark: &str) -> Option<Rec> {
        if mark == "absent" {
            return Some(Rec::Absent);
        }
        let (mode, oid) = mark.split_once(' ')?;
        let oid = Oid::from_str(oid).ok()?;
        match mode {
            "100644" => Some(Rec::File { oid, exec: false }),
            "100755" => Some(Rec::File { oid, exec: true }),
            "120000" => Some(Rec::Link { oid }),
            _ => None,
        }
    }
}

/// A disk state as it would be recorded, with its bytes. Directories, devices and
/// paths behind a symlink are recorded as absent.
fn rec_of(node: &Node) -> Result<(Rec, Option<&[u8]>)> {
    let hash = |b: &[u8]| {
        Oid::hash_object(ObjectType::Blob, b).map_err(|e| Error::Internal(e.message().into()))
    };
    Ok(match node {
        Node::File { content, exec } => (
            Rec::File {
                oid: hash(content)?,
                exec: *exec,
            },
            Some(content.as_slice()),
        ),
        Node::Link { target } => (Rec::Link { oid: hash(target)? }, Some(target.as_slice())),
        _ => (Rec::Absent, None),
    })
}

fn mark_of(node: &Node) -> Result<String> {
    Ok(match node {
        Node::Dir | Node::Special | Node::Blocked { .. } => "unreadable".into(),
        n => rec_of(n)?.0.mark(),
    })
}

fn lookup(tree: &Tree<'_>, p: &ProjectPath) -> Result<Rec> {
    match tree.get_path(Path::new(p.as_str())) {
        Ok(e) => {
            let oid = e.id();
            Ok(match e.filemode() {
                0o100644 | 0o100664 => Rec::File { oid, exec: false },
                0o100755 => Rec::File { oid, exec: true },
                0o120000 => Rec::Link { oid },
                _ => Rec::Absent,
            })
        }
        Err(e) if e.code() == ErrorCode::NotFound => Ok(Rec::Absent),
        Err(e) => Err(Error::Corrupt(format!(
            "file history tree lookup of {p}: {}",
            e.message()
        ))),
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    version: u32,
    /// Every tracked path, existing or not, sorted.
    tracked: Vec<String>,
    /// For each tracked path, its state in the first snapshot that tracked it
    /// (see [`Rec::mark`]): what it was before the session first edited it.
    #[serde(default)]
    baseline: BTreeMap<String, String>,
    /// Marks of files read (see [`Rec::mark`]), by path.
    #[serde(default)]
    reads: BTreeMap<String, String>,
    /// For a pending restore: the snapshot being restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    restoring: Option<String>,
    /// For each tracked path recorded absent because a directory on its path was
    /// missing: the highest directory missing.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    missing_dirs: BTreeMap<String, String>,
    /// The same, for each path's baseline.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    baseline_missing_dirs: BTreeMap<String, String>,
}

/// A manifest's missing directories by path, checked like stored paths.
fn missing_of(m: &BTreeMap<String, String>) -> Result<BTreeMap<ProjectPath, String>> {
    m.iter()
        .map(|(p, d)| {
            Ok((
                ProjectPath::from_stored(p)?,
                ProjectPath::from_stored(d)?.to_string(),
            ))
        })
        .collect()
}

/// A tracked path as seen: its record, what was read (`None` when its status
/// showed it unchanged), and the highest directory missing on its path when it
/// is absent for that reason.
type Seen = (Rec, Option<Node>, Option<String>);

/// A snapshot commit, read.
struct Snap<'r> {
    files: Tree<'r>,
    manifest: Manifest,
}

fn read_snap<'r>(repo: &'r Repository, git_dir: &Path, commit: Oid) -> Result<Snap<'r>> {
    let corrupt = |what: &str| {
        Error::Corrupt(format!(
            "file history {}: snapshot {commit}: {what}",
            git_dir.display()
        ))
    };
    let c = repo
        .find_commit(commit)
        .map_err(|e| gerr(git_dir, &format!("snapshot {commit}"), e))?;
    let root = c.tree().map_err(|e| gerr(git_dir, "tree", e))?;
    let files = match root.get_name(FILES) {
        Some(e) => repo
            .find_tree(e.id())
            .map_err(|e| gerr(git_dir, "files tree", e))?,
        None => return Err(corrupt("no files tree")),
    };
    let manifest = match root.get_name(MANIFEST) {
        Some(e) => {
            let b = repo
                .find_blob(e.id())
                .map_err(|e| gerr(git_dir, "manifest", e))?;
            serde_json::from_slice(b.content()).map_err(|e| corrupt(&format!("manifest: {e}")))?
        }
        None => return Err(corrupt("no manifest")),
    };
    Ok(Snap { files, manifest })
}

fn is_binary(b: &[u8]) -> bool {
    b[..b.len().min(8000)].contains(&0)
}

/// Lines added and removed from `old` to `new`, and whether either is binary.
fn line_stats(old: &[u8], new: &[u8]) -> (usize, usize, bool) {
    if is_binary(old) || is_binary(new) {
        return (0, 0, true);
    }
    let mut o = DiffOptions::new();
    o.context_lines(0);
    match Patch::from_buffers(old, None, new, None, Some(&mut o)).and_then(|p| p.line_stats()) {
        Ok((_, add, del)) => (add, del, false),
        Err(_) => (0, 0, true),
    }
}

// ---------------------------------------------------------------------------
// Per-session state.

/// The file history of one open session: created on first use, rebuilt from the
/// session's branch (its latest commit's manifest) when a session is reopened.
#[derive(Default)]
pub(crate) struct SessionHistory(Mutex<Option<Loaded>>);

impl std::fmt::Debug for SessionHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionHistory")
    }
}

impl SessionHistory {
    /// Run `f` on the loaded state; `None` if there is no repository and `create`
    /// is false.
    pub(crate) fn with<T>(
        &self,
        scope: &Scope,
        session_id: &str,
        create: bool,
        f: impl FnOnce(&mut Loaded) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut g = self.0.lock();
        if g.is_none() {
            match Loaded::load(scope, session_id, create)? {
                Some(l) => *g = Some(l),
                None => return Ok(None),
            }
        }
        let loaded = g
            .as_mut()
            .ok_or_else(|| Error::Internal("file history".into()))?;
        let out = f(loaded)?;
        loaded.hr.maybe_merge_packs();
        Ok(Some(out))
    }
}

/// Read a snapshot's files tree into `state` (path to record) and `trees`
/// (directory to tree id).
fn walk_files(
    hr: &HistoryRepo,
    tree: &Tree<'_>,
    dir: &str,
    state: &mut BTreeMap<ProjectPath, Rec>,
    trees: &mut HashMap<String, Oid>,
) -> Result<()> {
    trees.insert(dir.to_string(), tree.id());
    for e in tree.iter() {
        let name = e
            .name()
            .ok_or_else(|| Error::Corrupt("file history: a tree entry is not UTF-8".into()))?;
        let path = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        let oid = e.id();
        match e.filemode() {
            0o040000 => {
                let sub = hr.repo.find_tree(oid).map_err(hr.err("tree"))?;
                walk_files(hr, &sub, &path, state, trees)?;
            }
            0o100755 => {
                state.insert(
                    ProjectPath::from_stored(&path)?,
                    Rec::File { oid, exec: true },
                );
            }
            0o120000 => {
                state.insert(ProjectPath::from_stored(&path)?, Rec::Link { oid });
            }
            _ => {
                state.insert(
                    ProjectPath::from_stored(&path)?,
                    Rec::File { oid, exec: false },
                );
            }
        }
    }
    Ok(())
}

/// One file of a plan, with what is needed to apply it.
struct Step {
    plan: FilePlan,
    path: ProjectPath,
    target: Rec,
}

/// A restore that a crash cut short, recorded by its pending ref.
struct Pending {
    /// The snapshot taken just before it (the state to undo to).
    before: Oid,
    /// The snapshot it was restoring.
    target: Oid,
    /// The states it was writing, by path.
    states: BTreeMap<ProjectPath, Rec>,
}

/// The objects of a snapshot, built but not yet written.
struct Built {
    commit: Oid,
    root_tree: Oid,
    state: BTreeMap<ProjectPath, Rec>,
    missing: BTreeMap<ProjectPath, String>,
    trees: HashMap<String, Oid>,
}

/// What [`Loaded::apply`] did.
pub(crate) struct Applied {
    pub undo_snapshot: Oid,
    pub after: Oid,
    pub restored: Vec<String>,
    pub recreated: Vec<String>,
    pub deleted: Vec<String>,
    pub skipped: Vec<FilePlan>,
}

pub(crate) struct Loaded {
    hr: HistoryRepo,
    scope: Scope,
    session_id: String,
    branch: String,
    pending: String,
    tip: Option<Oid>,
    tracked: BTreeSet<ProjectPath>,
    /// State of each tracked path when it was first tracked.
    baseline: BTreeMap<ProjectPath, Rec>,
    reads: BTreeMap<ProjectPath, String>,
    /// The commits of this session's branch, once walked; every snapshot taken
    /// afterwards is added, so membership checks stay O(1).
    chain: Option<HashSet<Oid>>,
    /// The latest snapshot as recorded: its root tree, every tracked path's state
    /// and the ids of its trees by directory. Kept in memory so that a snapshot
    /// reads nothing back from the repository.
    tip_root: Option<Oid>,
    tip_state: BTreeMap<ProjectPath, Rec>,
    tip_trees: HashMap<String, Oid>,
    /// The highest missing directory on the path of each absent tracked path of
    /// the latest snapshot (see `Manifest::missing_dirs`), and of each baseline.
    tip_missing: BTreeMap<ProjectPath, String>,
    baseline_missing: BTreeMap<ProjectPath, String>,
    /// Each tracked file's status when it was last read, with its record: a
    /// snapshot does not read again a file whose status has not changed. In
    /// memory only.
    seen: HashMap<ProjectPath, (StatKey, Rec)>,
}

/// A file whose status changed less than this long before it was read may
/// change again without its status showing it: file times are as coarse as a
/// clock tick, or one or two seconds on some file systems (FAT, some network
/// file systems). Its status is then not kept (see [`Loaded::see`]).
const RACY_NS: i128 = 2_000_000_000;

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

impl Loaded {
    fn load(scope: &Scope, session_id: &str, create: bool) -> Result<Option<Loaded>> {
        let Some(mut hr) = HistoryRepo::open(scope, create)? else {
            return Ok(None);
        };
        let _g = hr.shared()?;
        let branch = branch_ref(session_id);
        let pending = pending_ref(session_id);
        hr.clear_stale_lock(&branch);
        hr.clear_stale_lock(&pending);
        let tip = hr.tip(&branch)?;
        let mut tracked = BTreeSet::new();
        let mut baseline = BTreeMap::new();
        let mut reads = BTreeMap::new();
        let mut tip_root = None;
        let mut tip_state = BTreeMap::new();
        let mut tip_trees = HashMap::new();
        let mut tip_missing = BTreeMap::new();
        let mut baseline_missing = BTreeMap::new();
        if let Some(t) = tip {
            let snap = read_snap(&hr.repo, &hr.git_dir, t)?;
            tip_root = Some(
                hr.repo
                    .find_commit(t)
                    .map_err(hr.err("snapshot"))?
                    .tree_id(),
            );
            walk_files(&hr, &snap.files, "", &mut tip_state, &mut tip_trees)?;
            for p in &snap.manifest.tracked {
                tracked.insert(ProjectPath::from_stored(p)?);
            }
            for (p, m) in &snap.manifest.baseline {
                let r = Rec::parse(m).ok_or_else(|| {
                    Error::Corrupt(format!(
                        "file history {}: snapshot {t}: bad baseline {m:?} for {p}",
                        hr.git_dir.display()
                    ))
                })?;
                baseline.insert(ProjectPath::from_stored(p)?, r);
            }
            for (p, m) in &snap.manifest.reads {
                reads.insert(ProjectPath::from_stored(p)?, m.clone());
            }
            tip_missing = missing_of(&snap.manifest.missing_dirs)?;
            baseline_missing = missing_of(&snap.manifest.baseline_missing_dirs)?;
            for p in &tracked {
                tip_state.entry(p.clone()).or_insert(Rec::Absent);
            }
        }
        let loaded = Loaded {
            hr,
            scope: scope.clone(),
            session_id: session_id.to_string(),
            branch,
            pending,
            tip,
            tracked,
            baseline,
            reads,
            chain: None,
            tip_root,
            tip_state,
            tip_trees,
            tip_missing,
            baseline_missing,
            seen: HashMap::new(),
        };
        loaded.sweep_temps()?;
        drop(_g);
        Ok(Some(loaded))
    }

    /// After a restore was cut short (its pending ref is still there), remove the
    /// temporary files it may have left in the project. They are only ever
    /// created while that ref exists.
    fn sweep_temps(&self) -> Result<()> {
        let Some(p) = self.hr.tip(&self.pending)? else {
            return Ok(());
        };
        let snap = read_snap(&self.hr.repo, &self.hr.git_dir, p)?;
        let root = self.root()?;
        for s in &snap.manifest.tracked {
            root.remove_temp(&ProjectPath::from_stored(s)?)?;
        }
        Ok(())
    }

    fn sync(&self) -> bool {
        self.hr.durable
    }

    pub(crate) fn tracked(&self) -> Vec<String> {
        self.tracked.iter().map(|p| p.to_string()).collect()
    }

    pub(crate) fn tip(&self) -> Option<Oid> {
        self.tip
    }

    fn root(&self) -> Result<Root> {
        Root::open(&self.scope.project_root)
    }

    /// What is at `p`, as recorded, with what was read. With `reuse`, a file or
    /// link whose status is the one it had when last read is not read again: its
    /// record is reused and the node is `None`. The blob id stays the truth; the
    /// status only spares a read, and only a status older than [`RACY_NS`] at
    /// the read is kept.
    fn see(&mut self, root: &Root, p: &ProjectPath, reuse: bool) -> Result<Seen> {
        let known = match self.seen.get(p) {
            Some((k, r)) if reuse => Some((*k, *r)),
            _ => None,
        };
        let started = now_ns();
        match root.read_unless(p, known.as_ref().map(|(k, _)| k))? {
            Lookup::Unchanged => match known {
                Some((_, r)) => Ok((r, None, None)),
                None => Err(Error::Internal(format!("{p}: no status to compare"))),
            },
            Lookup::Missing(dir) => {
                self.seen.remove(p);
                Ok((Rec::Absent, Some(Node::Absent), Some(dir)))
            }
            Lookup::Node(node, key) => {
                let (rec, _) = rec_of(&node)?;
                match key {
                    Some(k) if k.changed_ns() + RACY_NS < started => {
                        self.seen.insert(p.clone(), (k, rec));
                    }
                    _ => {
                        self.seen.remove(p);
                    }
                }
                Ok((rec, Some(node), None))
            }
        }
    }

    /// Record what the agent read, for [`Loaded::external_changes`]. Kept in
    /// memory and written with the next snapshot.
    pub(crate) fn track_read(&mut self, paths: &[ProjectPath]) -> Result<()> {
        let root = self.root()?;
        for p in paths {
            let m = mark_of(&root.read(p)?)?;
            self.reads.insert(p.clone(), m);
        }
        Ok(())
    }

    pub(crate) fn external_changes(&self, paths: &[ProjectPath]) -> Result<Vec<ExternalChange>> {
        let root = self.root()?;
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let now = mark_of(&root.read(p)?)?;
            let status = match self.reads.get(p) {
                None => ChangeStatus::NotRead,
                Some(m) if *m == now => ChangeStatus::Unchanged,
                Some(m) if m == "absent" => ChangeStatus::Created,
                Some(_) if now == "absent" => ChangeStatus::Deleted,
                Some(_) => ChangeStatus::Modified,
            };
            out.push(ExternalChange {
                path: p.to_string(),
                status,
            });
        }
        Ok(out)
    }

    /// Take a snapshot of every tracked file, tracking `add` first. When `edited`,
    /// the agent has just written `add`, so their read marks move to the new
    /// content. Returns the snapshot id (the previous one when nothing changed).
    pub(crate) fn snapshot(
        &mut self,
        reason: &str,
        add: &[ProjectPath],
        edited: bool,
    ) -> Result<Oid> {
        let _g = self.hr.shared()?;
        self.snapshot_locked(reason, add, edited)
    }

    fn snapshot_locked(&mut self, reason: &str, add: &[ProjectPath], edited: bool) -> Result<Oid> {
        self.snapshot_expecting(reason, add, edited, None)
    }

    /// Take a snapshot. When `expected` (a root tree and a commit already
    /// written, with every object it needs) has the root tree found, that commit
    /// is the snapshot and nothing is written but the branch.
    fn snapshot_expecting(
        &mut self,
        reason: &str,
        add: &[ProjectPath],
        edited: bool,
        expected: Option<(Oid, Oid)>,
    ) -> Result<Oid> {
        self.tracked.extend(add.iter().cloned());
        let root = self.root()?;
        let edited_set: HashSet<&ProjectPath> = if edited {
            add.iter().collect()
        } else {
            HashSet::new()
        };
        let mut objs = NewObjects::default();
        let mut state = BTreeMap::new();
        let mut missing = BTreeMap::new();
        let paths: Vec<ProjectPath> = self.tracked.iter().cloned().collect();
        for p in &paths {
            let last = self.tip_state.get(p).copied();
            let (mut now, mut node, mut missing_dir) = self.see(&root, p, true)?;
            if node.is_none() && last != Some(now) {
                // Known by its status only, and its blob is not in the tip.
                (now, node, missing_dir) = self.see(&root, p, false)?;
            }
            if !self.baseline.contains_key(p) {
                if let Some(d) = &missing_dir {
                    self.baseline_missing.insert(p.clone(), d.clone());
                }
            }
            if let Some(d) = missing_dir {
                missing.insert(p.clone(), d);
            }
            if edited_set.contains(p) {
                let mark = match &node {
                    Some(Node::Dir | Node::Special | Node::Blocked { .. }) => "unreadable".into(),
                    _ => now.mark(),
                };
                self.reads.insert(p.clone(), mark);
            }
            self.baseline.entry(p.clone()).or_insert(now);
            if last != Some(now) {
                if let Some(Node::File { content: b, .. } | Node::Link { target: b }) = node {
                    objs.add(ObjectType::Blob, b)?;
                }
            }
            state.insert(p.clone(), now);
        }
        let Some(mut built) = self.build(&mut objs, state, missing, reason)? else {
            return self
                .tip
                .ok_or_else(|| Error::Internal("snapshot without a tip".into()));
        };
        match expected {
            Some((root_tree, commit)) if root_tree == built.root_tree => built.commit = commit,
            _ => {
                self.hr.write_pack(&objs)?;
                self.hr.packs_written += 1;
            }
        }
        self.hr.set_ref(&self.branch, built.commit, self.tip)?;
        Ok(self.advance(built))
    }

    /// The manifest of a snapshot of the tracked files, `missing` the missing
    /// directories of its absent paths.
    fn manifest(&self, missing: &BTreeMap<ProjectPath, String>) -> Manifest {
        let dirs = |m: &BTreeMap<ProjectPath, String>| {
            m.iter().map(|(p, d)| (p.to_string(), d.clone())).collect()
        };
        Manifest {
            version: MANIFEST_VERSION,
            tracked: self.tracked.iter().map(|p| p.to_string()).collect(),
            baseline: self
                .baseline
                .iter()
                .map(|(p, r)| (p.to_string(), r.mark()))
                .collect(),
            reads: self
                .reads
                .iter()
                .map(|(p, m)| (p.to_string(), m.clone()))
                .collect(),
            restoring: None,
            missing_dirs: dirs(missing),
            baseline_missing_dirs: dirs(&self.baseline_missing),
        }
    }

    /// The trees, manifest, root tree and commit (child of the tip) of a
    /// snapshot of `state` (every tracked path), added to `objs`; trees the tip
    /// has are left out, and blobs are the caller's to add. `None` when the root
    /// tree is the tip's: nothing changed.
    fn build(
        &self,
        objs: &mut NewObjects,
        state: BTreeMap<ProjectPath, Rec>,
        missing: BTreeMap<ProjectPath, String>,
        reason: &str,
    ) -> Result<Option<Built>> {
        let trees = build_trees(&state)?;
        for (dir, (oid, bytes)) in &trees {
            if self.tip_trees.get(dir) != Some(oid) {
                objs.add(ObjectType::Tree, bytes.clone())?;
            }
        }
        let files = trees.get("").map(|t| t.0).unwrap_or(empty_tree_oid()?);
        let root_tree = root_tree(objs, files, &self.manifest(&missing))?;
        if self.tip.is_some() && self.tip_root == Some(root_tree) {
            return Ok(None);
        }
        let commit = commit_object(objs, root_tree, self.tip, reason, self)?;
        Ok(Some(Built {
            commit,
            root_tree,
            state,
            missing,
            trees: trees.into_iter().map(|(d, (o, _))| (d, o)).collect(),
        }))
    }

    /// Make `b` (written, the branch moved to it) the tip.
    fn advance(&mut self, b: Built) -> Oid {
        self.tip = Some(b.commit);
        self.tip_root = Some(b.root_tree);
        self.tip_state = b.state;
        self.tip_missing = b.missing;
        self.tip_trees = b.trees;
        if let Some(c) = &mut self.chain {
            c.insert(b.commit);
        }
        b.commit
    }

    /// Whether `snapshot` is on this session's branch. The first call walks the
    /// branch once; later snapshots are added as they are taken.
    fn on_branch(&mut self, snapshot: Oid) -> Result<bool> {
        if self.chain.is_none() {
            let mut set = HashSet::new();
            let mut cur = self.tip;
            while let Some(c) = cur {
                if !set.insert(c) {
                    break;
                }
                let commit = self
                    .hr
                    .repo
                    .find_commit(c)
                    .map_err(self.hr.err("snapshot"))?;
                cur = commit.parent_id(0).ok();
            }
            self.chain = Some(set);
        }
        Ok(self.chain.as_ref().is_some_and(|c| c.contains(&snapshot)))
    }

    fn check_on_branch(&mut self, snapshot: Oid) -> Result<()> {
        if self.on_branch(snapshot)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!(
                "snapshot {snapshot} is not in the file history of session {}",
                self.session_id
            )))
        }
    }

    /// The state each tracked file had at `snapshot`: as recorded there, or, for
    /// a file tracked only later, its baseline (the state recorded when it was
    /// first tracked, just before the session first edited it).
    fn resolve(&self, snapshot: Oid) -> Result<BTreeMap<ProjectPath, Rec>> {
        let snap = read_snap(&self.hr.repo, &self.hr.git_dir, snapshot)?;
        let then: HashSet<&str> = snap.manifest.tracked.iter().map(String::as_str).collect();
        let mut out = BTreeMap::new();
        for p in &self.tracked {
            let r = if then.contains(p.as_str()) {
                lookup(&snap.files, p)?
            } else {
                match self.baseline.get(p) {
                    Some(r) => *r,
                    None => continue,
                }
            };
            out.insert(p.clone(), r);
        }
        Ok(out)
    }

    /// For each tracked path absent at `snapshot` because a directory on its
    /// path was missing, the highest one missing (§19.3 of FORMAT.md:
    /// `missingDirs`, or `baselineMissingDirs` for a path tracked later).
    fn missing_at(&self, snapshot: Oid) -> Result<BTreeMap<ProjectPath, String>> {
        let snap = read_snap(&self.hr.repo, &self.hr.git_dir, snapshot)?;
        let then: HashSet<&str> = snap.manifest.tracked.iter().map(String::as_str).collect();
        let at_snap = missing_of(&snap.manifest.missing_dirs)?;
        let mut out = BTreeMap::new();
        for p in &self.tracked {
            let d = if then.contains(p.as_str()) {
                at_snap.get(p)
            } else {
                self.baseline_missing.get(p)
            };
            if let Some(d) = d {
                out.insert(p.clone(), d.clone());
            }
        }
        Ok(out)
    }

    /// A restore interrupted by a crash. Valid only while the branch has not moved
    /// since.
    fn pending(&self) -> Result<Option<Pending>> {
        let Some(p) = self.hr.tip(&self.pending)? else {
            return Ok(None);
        };
        let c = self
            .hr
            .repo
            .find_commit(p)
            .map_err(self.hr.err("pending"))?;
        let parent = c.parent_id(0).ok();
        if parent.is_none() || parent != self.tip {
            return Ok(None);
        }
        let snap = read_snap(&self.hr.repo, &self.hr.git_dir, p)?;
        let Some(target) = snap.manifest.restoring.as_deref() else {
            return Ok(None);
        };
        let target = parse_oid("pending restore", target)?;
        let mut states = BTreeMap::new();
        for s in &snap.manifest.tracked {
            let path = ProjectPath::from_stored(s)?;
            let r = lookup(&snap.files, &path)?;
            states.insert(path, r);
        }
        Ok(parent.map(|before| Pending {
            before,
            target,
            states,
        }))
    }

    fn content(&self, r: Rec) -> Result<Vec<u8>> {
        match r.oid() {
            None => Ok(Vec::new()),
            Some(o) => Ok(self
                .hr
                .repo
                .find_blob(o)
                .map_err(self.hr.err("blob"))?
                .content()
                .to_vec()),
        }
    }

    fn plan_locked(&mut self, snapshot: Oid) -> Result<(Vec<Step>, DiffStats)> {
        self.check_on_branch(snapshot)?;
        let targets = self.resolve(snapshot)?;
        let last = match self.tip {
            Some(t) => Some(read_snap(&self.hr.repo, &self.hr.git_dir, t)?),
            None => None,
        };
        let pending = self.pending()?;
        let root = self.root()?;
        let mut steps = Vec::new();
        let mut stats = DiffStats::default();
        for (p, target) in targets {
            let node = root.read(&p)?;
            let (now, bytes) = rec_of(&node)?;
            let structural = match &node {
                Node::Dir => Some(ConflictKind::BecameDirectory),
                Node::Special => Some(ConflictKind::SpecialFile),
                Node::Blocked {
                    why: Block::Symlink,
                    ..
                } => Some(ConflictKind::SymlinkInPath),
                Node::Blocked {
                    why: Block::NotDir, ..
                } => Some(ConflictKind::NotADirectoryInPath),
                _ => None,
            };
            if structural.is_none() && now == target {
                continue;
            }
            let action = match (target, &node) {
                (Rec::Absent, _) => FileAction::Delete,
                (_, Node::File { .. } | Node::Link { .. }) => FileAction::Restore,
                _ => FileAction::Recreate,
            };
            let last_rec = match &last {
                Some(s) => lookup(&s.files, &p)?,
                None => Rec::Absent,
            };
            if structural.is_some() && target == Rec::Absent && last_rec == Rec::Absent {
                // Nothing to delete: the path holds a directory (or is behind a
                // link) and neither the snapshot nor the last one had a file there.
                continue;
            }
            let pending_ok = pending
                .as_ref()
                .and_then(|pd| pd.states.get(&p))
                .is_some_and(|r| *r == now);
            let conflict = structural.or_else(|| {
                if now == last_rec || pending_ok {
                    None
                } else if now == Rec::Absent {
                    Some(ConflictKind::RemovedOutside)
                } else if last_rec == Rec::Absent {
                    Some(ConflictKind::CreatedOutside)
                } else {
                    Some(ConflictKind::ModifiedOutside)
                }
            });
            let old = self.content(target)?;
            let (added, removed, binary) = line_stats(&old, bytes.unwrap_or_default());
            stats.files_changed += 1;
            stats.lines_added += added;
            stats.lines_removed += removed;
            steps.push(Step {
                plan: FilePlan {
                    path: p.to_string(),
                    action,
                    conflict,
                    lines_added: added,
                    lines_removed: removed,
                    binary,
                },
                path: p,
                target,
            });
        }
        Ok((steps, stats))
    }

    /// The dry run of restoring `snapshot`. Changes nothing.
    pub(crate) fn plan(&mut self, snapshot: Oid, message_id: Option<&str>) -> Result<RewindPlan> {
        let _g = self.hr.shared()?;
        let (steps, stats) = self.plan_locked(snapshot)?;
        Ok(to_plan(snapshot, message_id, &steps, stats))
    }

    /// Restore the tracked files to `snapshot`. Refuses on conflicts unless
    /// `force`; even forced, files with a directory or a symlink in the way are
    /// skipped. Takes a snapshot first (so the restore can be undone) and after.
    pub(crate) fn apply(&mut self, snapshot: Oid, force: bool, what: &str) -> Result<Applied> {
        let _g = self.hr.shared()?;
        let (steps, _) = self.plan_locked(snapshot)?;
        let conflicts: Vec<&Step> = steps.iter().filter(|s| s.plan.conflict.is_some()).collect();
        if !conflicts.is_empty() && !force {
            let list: Vec<String> = conflicts
                .iter()
                .map(|s| {
                    format!(
                        "{} ({})",
                        s.plan.path,
                        s.plan.conflict.map_or("", |c| c.describe())
                    )
                })
                .collect();
            return Err(Error::Conflict(format!(
                "{what}: {} file(s) cannot be restored safely: {}; nothing was changed (force overwrites files changed outside the agent)",
                list.len(),
                list.join(", ")
            )));
        }
        let interrupted = self.pending()?;
        self.sweep_temps()?;
        let before = self.snapshot_locked("rewind-before", &[], false)?;
        // A rerun of a restore that a crash cut short undoes to the state before
        // the first attempt, not to its half-restored files.
        let undo_snapshot = match &interrupted {
            Some(pd) if pd.target == snapshot => pd.before,
            _ => before,
        };
        let (run, skipped): (Vec<Step>, Vec<Step>) = steps
            .into_iter()
            .partition(|s| s.plan.conflict.is_none_or(|c| c.forcible()));
        // The snapshot the restore should end at, written with the pending
        // restore: when the files come out as planned, the restore writes one pack.
        let dirs_then = self.missing_at(snapshot)?;
        let mut objs = NewObjects::default();
        let mut planned = self.tip_state.clone();
        let mut planned_missing = self.tip_missing.clone();
        for s in &run {
            planned.insert(s.path.clone(), s.target);
            match dirs_then.get(&s.path) {
                Some(d) if s.target == Rec::Absent => {
                    planned_missing.insert(s.path.clone(), d.clone());
                }
                _ => {
                    planned_missing.remove(&s.path);
                }
            }
        }
        let mut expected = None;
        if !run.is_empty() {
            expected = self
                .build(&mut objs, planned, planned_missing, "rewind-after")?
                .map(|b| (b.root_tree, b.commit));
            self.write_pending(snapshot, before, &run, objs)?;
        }
        let root = self.root()?;
        let sync = self.sync();
        let (mut deletes, mut writes): (Vec<&Step>, Vec<&Step>) =
            run.iter().partition(|s| s.target == Rec::Absent);
        deletes.sort_by_key(|s| std::cmp::Reverse(s.path.depth()));
        writes.sort_by_key(|s| s.path.depth());
        let mut out = Applied {
            undo_snapshot,
            after: before,
            restored: Vec::new(),
            recreated: Vec::new(),
            deleted: Vec::new(),
            skipped: skipped.into_iter().map(|s| s.plan).collect(),
        };
        for s in deletes {
            root.remove(&s.path, sync)?;
            out.deleted.push(s.plan.path.clone());
            // Directories the edit created, now empty: they go too.
            if let Some(top) = dirs_then.get(&s.path) {
                root.remove_empty_dirs(&s.path, top, sync);
            }
        }
        for s in writes {
            let content = self.content(s.target)?;
            let kind = match s.target {
                Rec::Link { .. } => WriteKind::Link,
                Rec::File { exec, .. } => WriteKind::File { exec },
                Rec::Absent => continue,
            };
            root.write(&s.path, &content, kind, sync)?;
            match s.plan.action {
                FileAction::Recreate => out.recreated.push(s.plan.path.clone()),
                _ => out.restored.push(s.plan.path.clone()),
            }
        }
        out.after = self.snapshot_expecting("rewind-after", &[], false, expected)?;
        self.hr.remove_pending_ref(&self.pending)?;
        Ok(out)
    }

    /// Record the restore about to run, so that a rerun after a crash accepts the
    /// files it already wrote instead of calling them changed outside the agent.
    /// `objs` (the snapshot the restore should end at) go in the same pack.
    fn write_pending(
        &mut self,
        target: Oid,
        parent: Oid,
        run: &[Step],
        mut objs: NewObjects,
    ) -> Result<()> {
        let state: BTreeMap<ProjectPath, Rec> =
            run.iter().map(|s| (s.path.clone(), s.target)).collect();
        let trees = build_trees(&state)?;
        for (_, bytes) in trees.values() {
            objs.add(ObjectType::Tree, bytes.clone())?;
        }
        let files = trees.get("").map(|t| t.0).unwrap_or(empty_tree_oid()?);
        let manifest = Manifest {
            version: MANIFEST_VERSION,
            tracked: run.iter().map(|s| s.plan.path.clone()).collect(),
            baseline: BTreeMap::new(),
            reads: BTreeMap::new(),
            restoring: Some(target.to_string()),
            missing_dirs: BTreeMap::new(),
            baseline_missing_dirs: BTreeMap::new(),
        };
        let root_tree = root_tree(&mut objs, files, &manifest)?;
        let c = commit_object(&mut objs, root_tree, Some(parent), "pending-restore", self)?;
        self.hr.write_pack(&objs)?;
        self.hr.set_ref(&self.pending, c, None)?;
        self.hr.packs_written += 1;
        Ok(())
    }

    /// Diff stats from each snapshot to the disk now, for the snapshots on this
    /// session's branch (others are missing from the result).
    pub(crate) fn stats_since(
        &mut self,
        snapshots: &HashSet<Oid>,
    ) -> Result<HashMap<Oid, DiffStats>> {
        let _g = self.hr.shared()?;
        let mut targets = Vec::new();
        for s in snapshots {
            if self.on_branch(*s)? {
                targets.push((*s, self.resolve(*s)?));
            }
        }
        if targets.is_empty() {
            return Ok(HashMap::new());
        }
        let root = self.root()?;
        let mut now: BTreeMap<&ProjectPath, (Rec, Vec<u8>)> = BTreeMap::new();
        for p in &self.tracked {
            let node = root.read(p)?;
            let (r, b) = rec_of(&node)?;
            let bytes = b.map(<[u8]>::to_vec).unwrap_or_default();
            now.insert(p, (r, bytes));
        }
        let mut cache: HashMap<(Option<Oid>, Option<Oid>), (usize, usize)> = HashMap::new();
        let mut out = HashMap::new();
        for (snap, states) in targets {
            let mut st = DiffStats::default();
            for (p, then) in &states {
                let Some((r, bytes)) = now.get(p) else {
                    continue;
                };
                if r == then {
                    continue;
                }
                st.files_changed += 1;
                let key = (then.oid(), r.oid());
                let (a, d) = match cache.get(&key) {
                    Some(v) => *v,
                    None => {
                        let old = self.content(*then)?;
                        let (a, d, _) = line_stats(&old, bytes);
                        cache.insert(key, (a, d));
                        (a, d)
                    }
                };
                st.lines_added += a;
                st.lines_removed += d;
            }
            out.insert(snap, st);
        }
        Ok(out)
    }
}

fn to_plan(
    snapshot: Oid,
    message_id: Option<&str>,
    steps: &[Step],
    stats: DiffStats,
) -> RewindPlan {
    RewindPlan {
        message_id: message_id.map(str::to_owned),
        snapshot: snapshot.to_string(),
        files: steps.iter().map(|s| s.plan.clone()).collect(),
        conflicts: steps
            .iter()
            .filter(|s| s.plan.conflict.is_some())
            .map(|s| s.plan.path.clone())
            .collect(),
        stats,
    }
}

pub(crate) fn snapshot_id(what: &str, s: &str) -> Result<Oid> {
    parse_oid(what, s)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::repo::merge_group;
    use super::*;

    #[test]
    fn branch_names_are_valid_refs_and_reversible() {
        for id in [
            "0190aa00-0000-7000-8000-000000000000",
            "a..b",
            "x.lock",
            "v1.2.",
        ] {
            let r = branch_ref(id);
            assert!(git2::Reference::is_valid_name(&r), "{r}");
            assert_eq!(session_of_branch(&r).as_deref(), Some(id));
        }
    }

    #[test]
    fn marks_name_mode_and_blob() {
        let r = Rec::File {
            oid: Oid::hash_object(ObjectType::Blob, b"x").unwrap(),
            exec: true,
        };
        assert!(r.mark().starts_with("100755 "));
        assert_eq!(Rec::Absent.mark(), "absent");
    }

    #[test]
    fn durable_stores_turn_on_fsync_in_their_handles() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        fs::create_dir_all(&root).unwrap();
        for (d, want) in [
            (crate::Durability::Never, false),
            (crate::Durability::OnSync, true),
            (crate::Durability::Always, true),
        ] {
            let o = crate::StoreOptions {
                home: Some(tmp.path().join("home")),
                durability: d,
                ..Default::default()
            };
            let store = crate::store::StoreCore::open(&root, o).unwrap();
            let hr = HistoryRepo::open(store.history_scope(), true)
                .unwrap()
                .unwrap();
            let cfg = hr.repo.config().unwrap();
            let on = cfg.get_bool("core.fsyncObjectFiles").unwrap_or(false);
            assert_eq!(on, want, "{d:?}");
        }
    }

    #[test]
    fn trees_are_built_exactly_as_libgit2_builds_them() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(tmp.path()).unwrap();
        let blob = |s: &str| repo.blob(s.as_bytes()).unwrap();
        let paths = [
            ("a.b", 0o100644),
            ("a/x", 0o100755),
            ("a/y/z", 0o120000),
            ("a-", 0o100644),
            ("a0/q", 0o100644),
            ("b", 0o100644),
        ];
        let mut state = BTreeMap::new();
        for (p, mode) in paths {
            let oid = blob(p);
            let r = match mode {
                0o100755 => Rec::File { oid, exec: true },
                0o120000 => Rec::Link { oid },
                _ => Rec::File { oid, exec: false },
            };
            state.insert(ProjectPath::from_stored(p).unwrap(), r);
        }
        state.insert(ProjectPath::from_stored("gone").unwrap(), Rec::Absent);
        let ours = build_trees(&state).unwrap();
        let mut upd = git2::build::TreeUpdateBuilder::new();
        for (p, mode) in paths {
            let m = match mode {
                0o100755 => FileMode::BlobExecutable,
                0o120000 => FileMode::Link,
                _ => FileMode::Blob,
            };
            upd.upsert(p, blob(p), m);
        }
        let empty = repo
            .find_tree(repo.treebuilder(None).unwrap().write().unwrap())
            .unwrap();
        assert_eq!(empty.id(), empty_tree_oid().unwrap());
        let theirs = upd.create_updated(&repo, &empty).unwrap();
        assert_eq!(ours[""].0, theirs);
        assert_eq!(ours.len(), 4, "{:?}", ours.keys().collect::<Vec<_>>());
    }

    #[test]
    fn packs_merge_a_size_tier_at_a_time() {
        let packs = |sizes: &[u64]| -> Vec<(String, u64)> {
            sizes
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("p{i}"), *s))
                .collect()
        };
        assert!(merge_group(packs(&[1000; 15])).is_empty());
        assert_eq!(merge_group(packs(&[1000; 16])).len(), 16);
        // Sixteen small packs merge; the big ones stay.
        let mut sizes = vec![5 << 20, 300 << 10];
        sizes.extend([2000u64; 16]);
        let g = merge_group(packs(&sizes));
        assert_eq!(g.len(), 16);
        assert!(!g.contains(&"p0".to_string()) && !g.contains(&"p1".to_string()));
    }

    #[test]
    fn line_stats_count_changed_lines() {
        assert_eq!(line_stats(b"a\nb\nc\n", b"a\nB\nc\nd\n"), (2, 1, false));
        assert_eq!(line_stats(b"a\0", b"b"), (0, 0, true));
    }
}
