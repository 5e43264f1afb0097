//! What the store-wide file-history operations report: gc progress, checks of
//! refs and checkpoints.

use serde::Serialize;

/// A phase of [`crate::Store::gc_with_progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum GcPhase {
    /// Walking each branch's snapshots for the objects to keep; counts branches.
    Marking,
    /// Writing the objects to keep into one pack; counts objects.
    Packing,
    /// Deleting the old packs, loose objects and leftovers; counts files.
    Pruning,
    /// Reading the session and subagent logs for the blobs they refer to
    /// ([`crate::Store::gc_blobs`]); counts logs.
    ScanningLogs,
    /// Deleting blobs no log refers to; counts candidate blobs.
    PruningBlobs,
}

/// How far a gc got: `done` of `total` in `phase`. Within a phase `done` only
/// grows, from 0 to `total`; a phase with nothing to do is not reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GcProgress {
    /// The phase running.
    pub phase: GcPhase,
    /// Units of the phase done so far.
    pub done: u64,
    /// Units the phase has in all.
    pub total: u64,
}

/// What [`crate::Store::check_file_history`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileHistoryCheck {
    /// Whether the store has a file-history repository (made by the first
    /// snapshot, never deleted).
    pub exists: bool,
    /// Session branches in the repository.
    pub branches: usize,
    /// Refs of sessions whose log no longer exists: garbage, which
    /// [`crate::Store::prune_orphan_file_history`] deletes.
    pub orphan_refs: Vec<HistoryRef>,
    /// Refs of existing sessions whose chain of snapshots reaches a commit that
    /// is missing: the session's file history is damaged.
    pub broken_refs: Vec<BrokenRef>,
    /// `checkpointHash`es that name no snapshot of their session, in log order.
    pub dangling_checkpoints: Vec<DanglingCheckpoint>,
}

impl FileHistoryCheck {
    /// No orphan refs, no broken refs, no checkpoint whose commit was lost.
    pub fn is_healthy(&self) -> bool {
        self.orphan_refs.is_empty()
            && self.broken_refs.is_empty()
            && !self
                .dangling_checkpoints
                .iter()
                .any(|d| d.reason.is_damage())
    }
}

/// A file-history ref (a branch `refs/heads/<id>` or a pending restore
/// `refs/sessionkit/pending/<id>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRef {
    /// The session the ref belongs to.
    pub session_id: String,
    /// The full ref name.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The commit it points at.
    pub target: String,
}

/// A ref whose chain of snapshots is broken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokenRef {
    /// The session the ref belongs to.
    pub session_id: String,
    /// The full ref name.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The commit it points at.
    pub target: String,
    /// The first commit of the chain (the target or an ancestor) that is
    /// missing or unreadable.
    pub missing_commit: String,
}

/// A message whose `checkpointHash` names no snapshot of its session: its files
/// cannot be restored. The conversation is not affected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DanglingCheckpoint {
    /// The session whose log holds the message.
    pub session_id: String,
    /// The message carrying the `checkpointHash`.
    pub message_id: String,
    /// The commit id it names.
    pub checkpoint_hash: String,
    /// Why it names no snapshot.
    pub reason: CheckpointProblem,
}

/// Why a `checkpointHash` names no snapshot of its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CheckpointProblem {
    /// Not a 40-hex commit id (a log written by another tool).
    NotASnapshotId,
    /// The store has no file-history repository: it never took a snapshot, so
    /// the log was written elsewhere (copied or imported).
    NoFileHistory,
    /// The repository has no such commit: the snapshot was lost.
    Missing,
    /// The commit exists but is not on the session's branch.
    NotOnBranch,
}

impl CheckpointProblem {
    /// Whether it means lost data in this store (rather than a log that came
    /// from elsewhere or names another session's snapshot).
    pub fn is_damage(self) -> bool {
        self == CheckpointProblem::Missing
    }
}
