//! StoreCore options. They also cross the bindings as JSON (camelCase keys), so unknown
//! keys are an error rather than silently ignored.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::format::ids::Deterministic;

/// When data is forced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Durability {
    /// Never fsync. An append that returned survives a killed process, not a power loss.
    Never,
    /// fsync only when the host calls `sync()`.
    #[default]
    OnSync,
    /// fsync before every append returns; concurrent appends share one fsync.
    Always,
}

/// How a [`crate::Store`] behaves. `StoreOptions::default()` is what a host wants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct StoreOptions {
    /// Root of all stores. Default: `$SESSIONKIT_HOME`, else `~/.sessionkit`.
    pub home: Option<PathBuf>,
    /// When appends are fsynced (default [`Durability::OnSync`]).
    pub durability: Durability,
    /// Sessions kept in a project: when set, creating a session moves the oldest
    /// beyond it to the trash (and reports them). 0, the default, keeps all.
    pub max_sessions: usize,
    /// How long a shared writer waits for another holder of a session's writer
    /// lock before a write fails with `Busy`, in milliseconds (default 5000).
    pub busy_timeout_ms: u64,
    /// Seconds a pruned session stays in the trash before `gc` purges it
    /// (default 604800, 7 days).
    pub trash_grace_secs: u64,
    /// Message `content` / `contentParams` values whose JSON is larger than this
    /// many bytes are stored once as a blob and referenced from the log.
    pub blob_threshold: usize,
    /// Largest log line accepted after large values went to blobs.
    pub max_record_bytes: usize,
    /// A reproducible clock and ids instead of the system's, for tests and
    /// fixtures; `None` (the default) in production.
    pub deterministic: Option<Deterministic>,
    /// The size past which the index journal is compacted even when the index is
    /// smaller (default `JOURNAL_MIN_BYTES`). For tests
    /// that want compactions to happen often; not part of the JSON options.
    #[doc(hidden)]
    #[serde(skip)]
    pub index_journal_min_bytes: Option<u64>,
}

/// How long a lease on a shared session lasts unless renewed: a holder that
/// vanished (a killed process, a lost laptop) stops blocking others after this.
pub const DEFAULT_LEASE_TTL: std::time::Duration = std::time::Duration::from_secs(60);

impl Durability {
    /// Every durability, weakest first.
    pub const ALL: [Durability; 3] = [Durability::Never, Durability::OnSync, Durability::Always];
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            home: None,
            durability: Durability::OnSync,
            max_sessions: 0,
            busy_timeout_ms: 5000,
            trash_grace_secs: 7 * 24 * 60 * 60,
            blob_threshold: 256 * 1024,
            max_record_bytes: 4 * 1024 * 1024,
            deterministic: None,
            index_journal_min_bytes: None,
        }
    }
}

impl StoreOptions {
    /// Parse options from a JSON object (the form the C ABI and bindings use).
    pub fn from_json(json: &str) -> Result<StoreOptions> {
        crate::format::json::options_from_json("store options", json)
    }

    /// [`StoreOptions::busy_timeout_ms`] as a duration.
    pub(crate) fn busy_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.busy_timeout_ms)
    }

    /// The home directory, absolute. A relative one is taken from the current
    /// directory once, here, so a host that changes directory keeps its store.
    pub(crate) fn resolve_home(&self) -> Result<PathBuf> {
        let home = if let Some(h) = &self.home {
            // An empty path would put the store in the current directory,
            // e.g. inside the project: refused rather than guessed.
            if h.as_os_str().is_empty() {
                return Err(Error::invalid(
                    "store options: home is empty (leave it out for $SESSIONKIT_HOME or ~/.sessionkit)",
                ));
            }
            h.clone()
        } else if let Some(h) = std::env::var_os("SESSIONKIT_HOME").filter(|h| !h.is_empty()) {
            PathBuf::from(h)
        } else {
            match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                Some(h) => PathBuf::from(h).join(".sessionkit"),
                None => {
                    return Err(Error::invalid(
                        "no store home: set options.home, SESSIONKIT_HOME or HOME",
                    ))
                }
            }
        };
        std::path::absolute(&home).map_err(|e| Error::io(&home, e))
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.blob_threshold == 0 {
            return Err(Error::invalid("store options: blobThreshold must be > 0"));
        }
        if self.max_record_bytes < 1024 {
            return Err(Error::invalid(
                "store options: maxRecordBytes must be at least 1024",
            ));
        }
        if let Some(d) = &self.deterministic {
            if d.start_ms > crate::format::ids::MAX_MS {
                return Err(Error::invalid(format!(
                    "store options: deterministic.startMs {} is past 9999-12-31T23:59:59.999Z ({})",
                    d.start_ms,
                    crate::format::ids::MAX_MS
                )));
            }
        }
        Ok(())
    }
}
