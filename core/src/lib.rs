//! sessionkit: a crash-safe, multi-process session store for coding agents.
//!
//! A [`Store`] holds the sessions of one project: an index (a rebuildable cache)
//! and one append-only JSONL log per session, whose records form a tree of
//! messages. Views such as the active path are folds of those records. The byte
//! format is specified in `docs/FORMAT.md`.
//!
//! # A session from start to undo
//!
//! Open the store of a project, write a session, read its views, fork it,
//! compact it, and undo an edit the agent made to the project's files:
//!
//! ```
//! use serde_json::json;
//! use sessionkit::{
//!     CompactionPolicy, CreateOptions, FileAction, ForkOptions, ModelViewOptions, RewindMode,
//!     Store, StoreOptions,
//! };
//!
//! # fn main() -> sessionkit::Result<()> {
//! # let tmp = tempfile::tempdir().expect("temp dir");
//! # let project = tmp.path().join("project");
//! # std::fs::create_dir(&project).expect("project dir");
//! // `home: None` (the default) keeps the stores under $SESSIONKIT_HOME or ~/.sessionkit.
//! let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
//! let store = Store::open(&project, options)?;
//!
//! // A session open for writing holds its lock until it is closed or dropped.
//! let session = store.create_session(CreateOptions::default())?;
//! session.append(json!({"role": "user", "content": "What does this project do?"}))?;
//! session.append(json!({"role": "assistant", "content": "It greets people."}))?;
//!
//! // A user input snapshots the files the session tracks, so its turn can be undone;
//! // a tool edit is wrapped in `before_edit` and `after_edit`.
//! let ask = session.user_input(json!({"content": "Add a greeting file"}))?;
//! session.before_edit(&["hello.txt"])?;
//! std::fs::write(project.join("hello.txt"), "hello\n").expect("write");
//! session.after_edit(&["hello.txt"])?;
//! session.append(json!({"role": "assistant", "content": "Added hello.txt."}))?;
//!
//! // Views are folds of the log; reading takes no lock.
//! let view = store.read_session(session.id())?;
//! assert_eq!(view.active_path()?.len(), 4);
//! assert_eq!(view.model_view(&ModelViewOptions::default())?.len(), 4);
//!
//! // A fork is a new session holding the same messages, with its own lock.
//! let fork = store.fork_session(session.id(), ForkOptions::default())?;
//! assert_eq!(fork.active_path()?.len(), 4);
//!
//! // Compaction: the policy picks what to replace, the host writes the summary.
//! let policy = CompactionPolicy { keep_last_turns: 1, ..CompactionPolicy::new(10) };
//! if let Some(plan) = session.select_compaction(&policy)? {
//!     session.apply_compaction(&plan.replaces, json!("The user asked what the project does."))?;
//! }
//! assert_eq!(session.model_view(&ModelViewOptions::default())?.len(), 3);
//!
//! // Undo: the dry run says what would happen to each file; the rewind does it.
//! let plan = session.rewind_plan(ask.id())?;
//! assert_eq!(plan.files[0].action, FileAction::Delete);
//! session.rewind(ask.id(), RewindMode::Both, false)?;
//! assert!(!project.join("hello.txt").exists());
//! session.close()?;
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod api;
mod blobs;
mod defaults;
mod error;
mod format;
mod fsutil;
mod history;
mod index;
mod instructions;
mod log;
mod memory;
mod ops;
mod options;
mod platform;
#[cfg(feature = "remote")]
mod remote;
mod settings;
mod store;
mod view;

pub use api::{import, list_all_sessions, Session, SessionView, Store, Subagent};
#[cfg(feature = "remote")]
pub use api::{Remote, RemoteOptions};
pub use defaults::{
    defaults, defaults_json, DEFAULT_PROJECT, DEFAULT_PUSH_INTERVAL, DEFAULT_REWIND_TURNS,
    DEFAULT_REWIND_TURNS_MODE,
};
pub use error::{Error, ErrorKind, Result};
pub use format::decode::parse_json;
pub use format::records::SkipKind;
pub use format::tool_calls::{tool_calls, tool_results, ToolCall, ToolResult, ToolStyle};
pub use history::{
    BrokenRef, CheckpointProblem, DanglingCheckpoint, FileHistoryCheck, GcPhase, GcProgress,
    HistoryRef,
};
pub use history::{
    ChangeStatus, ConflictKind, DiffStats, ExternalChange, FileAction, FilePlan, GcReport,
    HistorySize, HistorySizeReport, RewindMode, RewindPlan, RewindResult, UndoCandidate,
};
pub use index::journal::{JournalReport, StoredIndex};
pub use index::{IndexEntry, Lineage, ListOptions, SessionPage, Status};
pub use log::{BrokenChain, MissingBlob, ReadReport, SkippedLine};
pub use ops::checkpoints::{
    next_channel_version, ChannelValue, ChannelWrite, CheckpointPut, CheckpointQuery,
    CheckpointSummary, CheckpointTuple, CheckpointWrites, DeltaHistory, PendingWrite,
    PruneStrategy, TypedValue, SPECIAL_WRITE_INDEX, TASKS_CHANNEL,
};
pub use ops::compaction::{
    CompactionPlan, CompactionPolicy, DEFAULT_KEEP_LAST_TURNS, DEFAULT_SUMMARY_TOKENS,
};
pub use ops::doctor::{
    DoctorOptions, DoctorPhase, DoctorProgress, DoctorReport, HistoryCheck, HistoryState,
    IndexCheck, IndexState, LogCheck,
};
pub use ops::export::native::{ExportTarget, ExportToOptions, IdSource, NativeExport};
pub use ops::export::ExportFormat;
pub use ops::fork::ForkOptions;
pub use ops::home::ProjectSessions;
pub use ops::import::{
    default_sources, import_source_of, sort_import_sources, DefaultSource, ImportFormat,
    ImportOptions, ImportProgress, ImportReport, LineNote, PathMapping, SourceOutcome,
    SourceReport, MAX_IMPORT_SOURCE_BYTES,
};
pub use ops::info::{SessionInfo, StoreInfo, TokenTotals, ViewInfo};
pub use ops::rewind::{HeadMove, RewindPreview};
pub use ops::search::{
    SearchHit, SearchQuery, SearchResults, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_QUERY_BYTES,
    MAX_SEARCH_QUERY_TERMS, SEARCH_FULL_CHECK_MS,
};
#[cfg(feature = "remote")]
pub use remote::{BackgroundPush, Follower, Lease, PullReport, PushReport, RemoteSession};

/// OpenAI Responses input items (the OpenAI Agents SDK's session items) stored
/// as messages, and back.
pub mod responses {
    pub use crate::ops::responses::{
        item_to_message, items_json, message_to_item_json, ItemsOptions,
    };
}
pub use options::{Deterministic, Durability, StoreOptions, DEFAULT_LEASE_TTL};
pub use store::session::CreateOptions;
pub use store::trash::TrashedSession;
pub use store::{BlobGcReport, RebuildReport, StoreGcReport, TempGcReport, BLOB_GC_GRACE};
pub use view::{
    group_results_json, take_page, to_json_array, Branch, Message, MessagePage, ModelViewOptions,
    TreeNode,
};

pub use format::ids::new_session_id;
pub use format::layout::{conversation_session_id, MAX_CONVERSATION_ID_BYTES};
pub use format::project::project_code;
pub use format::records::{content_text, type_name};
pub use instructions::{
    InstructionFile, InstructionLevel, InstructionOptions, InstructionProblem, Instructions,
    ProblemKind, DEFAULT_INSTRUCTION_NAMES, DEFAULT_MAX_INCLUDE_DEPTH,
};
pub use memory::{
    validate_name as validate_memory_name, MemoryEntry, MemoryScope, MAX_MEMORY_BYTES,
};
pub use settings::migrate::{
    CURRENT_VERSION as SETTINGS_VERSION, VERSION_KEY as SETTINGS_VERSION_KEY,
};
pub use settings::{
    SettingSource, SettingValue, Settings, SettingsOptions, SettingsSourceReport, SettingsWrite,
    SourceStatus, MAX_SETTINGS_BYTES as SETTINGS_MAX_BYTES,
    MAX_SETTINGS_NESTING as SETTINGS_MAX_NESTING,
    MAX_SETTINGS_REPAIR_BYTES as SETTINGS_MAX_REPAIR_BYTES,
};

/// Checks and helpers the test suites and fixtures generators use; not part of
/// the stable API.
#[doc(hidden)]
pub mod testing {
    pub use crate::format::ids::{format_ms, validate_message_id, validate_path_id};
    pub use crate::index::IndexFile;
    pub mod fuzz;

    /// Every file, directory and symbolic link under `dirs`, with its bytes (a
    /// directory: `<dir>`; a link: its target; a FIFO, socket or device: its
    /// kind only, never opened), without the `.lock` files an open store
    /// holds. Two snapshots are equal when nothing under `dirs` was written.
    pub fn tree_snapshot(
        dirs: &[&std::path::Path],
    ) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
        use std::path::{Path, PathBuf};
        fn walk(dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            for d in rd {
                let p = d.expect("a directory entry").path();
                let meta = std::fs::symlink_metadata(&p).expect("a file's metadata");
                if meta.is_symlink() {
                    let target = std::fs::read_link(&p).expect("a link's target");
                    out.insert(p, target.into_os_string().into_encoded_bytes());
                } else if meta.is_dir() {
                    out.insert(p.clone(), b"<dir>".to_vec());
                    walk(&p, out);
                } else if meta.is_file() {
                    out.insert(p.clone(), std::fs::read(&p).expect("a file's bytes"));
                } else {
                    out.insert(p, b"<special>".to_vec());
                }
            }
        }
        let mut out = std::collections::BTreeMap::new();
        for d in dirs {
            walk(d, &mut out);
        }
        out.retain(|p, _| p.file_name().is_none_or(|n| n != ".lock"));
        out
    }

    /// The seed of a property test's random inputs: `PROPTEST_RNG_SEED` when
    /// set, else a fresh random one. Printed either way (libtest shows it with
    /// a failing test's output), so that a failure anywhere, CI included, is
    /// rerun with `PROPTEST_RNG_SEED=<seed> cargo test ... <test name>`. The
    /// property tests put it in their config as `RngSeed::Fixed(seed)`.
    pub fn proptest_seed() -> u64 {
        use std::hash::{BuildHasher, Hasher};
        let seed = match std::env::var("PROPTEST_RNG_SEED") {
            Ok(v) => v
                .parse()
                .unwrap_or_else(|_| panic!("PROPTEST_RNG_SEED={v:?} is not a u64")),
            // RandomState's keys are random per process and per call.
            Err(_) => std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish(),
        };
        let test = std::thread::current().name().unwrap_or("?").to_string();
        eprintln!("proptest seed of {test}: rerun with PROPTEST_RNG_SEED={seed}");
        seed
    }

    pub mod pg;
}

/// The README's examples, compiled and run with the doc tests. Its Rust example
/// opens the default store: `build.rs` gives it a temporary `SESSIONKIT_HOME`
/// in hidden lines, so a doc test run never writes to the user's home.
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/README.doctest.md"))]
struct ReadmeDoctests;

/// The crate's own README (its page on crates.io): its example compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

/// The crate version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
