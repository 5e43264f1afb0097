//! sessionkit: a crash-safe, multi-process session store for coding agents.
//!
//! A [`Store`] holds the sessions of one project: an index (a rebuildable cache)
//! and one append-only JSONL log per session, whose records form a tree of
//! messages. Views such as the active path are folds of those records. The byte
//! format is specified in `docs/FORMAT.md`.

pub mod blobs;
pub mod compaction;
pub mod error;
pub mod file_history;
pub mod fork;
mod fsutil;
pub mod ids;
pub mod index;
pub mod index_journal;
mod json;
pub mod log;
mod log_cache;
pub mod options;
mod platform;
pub mod project;
mod project_fs;
pub mod records;
mod resume;
pub mod session;
pub mod store;
mod undo;
pub mod views;
mod writer;

pub use compaction::{CompactionPlan, CompactionPolicy};
pub use error::{Error, ErrorKind, Result};
pub use file_history::{
    ChangeStatus, ConflictKind, DiffStats, ExternalChange, FileAction, FilePlan, GcReport,
    HistorySize, HistorySizeReport, RewindMode, RewindPlan, RewindResult, UndoCandidate,
};
pub use fork::ForkOptions;
pub use index::{IndexEntry, Lineage, Status};
pub use index_journal::{JournalReport, StoredIndex};
pub use log::{BrokenChain, ReadReport, SkippedLine};
pub use options::{Deterministic, Durability, StoreOptions};
pub use session::{CreateOptions, Session, Subagent};
pub use store::{
    BlobGcReport, RebuildReport, SessionView, Store, StoreGcReport, TempGcReport, BLOB_GC_GRACE,
};
pub use undo::{
    BrokenRef, CheckpointProblem, DanglingCheckpoint, FileHistoryCheck, GcPhase, GcProgress,
    HistoryRef,
};
pub use views::{to_json_array, Branch, Message, ModelViewOptions, TreeNode};

/// The crate version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
