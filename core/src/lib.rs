//! sessionkit: a crash-safe, multi-process session store for coding agents.
//!
//! A [`Store`] holds the sessions of one project: an index (a rebuildable cache)
//! and one append-only JSONL log per session, whose records form a tree of
//! messages. Views such as the active path are folds of those records. The byte
//! format is specified in `docs/FORMAT.md`.

pub mod blobs;
pub mod error;
mod fsutil;
pub mod ids;
pub mod index;
pub mod log;
pub mod options;
pub mod project;
pub mod records;
pub mod session;
pub mod store;
pub mod views;
mod writer;

pub use error::{Error, ErrorKind, Result};
pub use index::{IndexEntry, Lineage, Status};
pub use log::{BrokenChain, ReadReport, SkippedLine};
pub use options::{Deterministic, Durability, StoreOptions};
pub use session::{CreateOptions, Session, Subagent};
pub use store::{RebuildReport, SessionView, Store};
pub use views::{to_json_array, Message};

/// The crate version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
