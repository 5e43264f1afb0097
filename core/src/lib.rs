//! sessionkit: a crash-safe, multi-process session store for coding agents.
//!
//! A [`Store`] holds the sessions of one project: an index (a rebuildable cache)
//! and one append-only JSONL log per session, whose records form a tree of
//! messages. Views such as the active path are folds of those records. The byte
//! format is specified in `docs/FORMAT.md`.

#![warn(missing_docs)]

mod api;
mod blobs;
mod error;
mod format;
mod fsutil;
mod history;
mod index;
mod log;
mod ops;
mod options;
mod store;
mod view;

pub use api::{Session, SessionView, Store, Subagent};
pub use error::{Error, ErrorKind, Result};
pub use history::{
    BrokenRef, CheckpointProblem, DanglingCheckpoint, FileHistoryCheck, GcPhase, GcProgress,
    HistoryRef,
};
pub use history::{
    ChangeStatus, ConflictKind, DiffStats, ExternalChange, FileAction, FilePlan, GcReport,
    HistorySize, HistorySizeReport, RewindMode, RewindPlan, RewindResult, UndoCandidate,
};
pub use index::journal::{JournalReport, StoredIndex};
pub use index::{IndexEntry, Lineage, Status};
pub use log::{BrokenChain, ReadReport, SkippedLine};
pub use ops::compaction::{CompactionPlan, CompactionPolicy};
pub use ops::fork::ForkOptions;
pub use options::{Deterministic, Durability, StoreOptions};
pub use store::session::CreateOptions;
pub use store::{BlobGcReport, RebuildReport, StoreGcReport, TempGcReport, BLOB_GC_GRACE};
pub use view::{to_json_array, Branch, Message, ModelViewOptions, TreeNode};

pub use format::project::project_code;
pub use format::records::{content_text, type_name};

/// Checks and helpers the test suites and fixtures generators use; not part of
/// the stable API.
#[doc(hidden)]
pub mod testing {
    pub use crate::format::ids::{format_ms, validate_message_id, validate_path_id};
    pub use crate::index::IndexFile;
}

/// The crate version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
