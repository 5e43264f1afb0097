//! Info objects: what a host shows about a store, an open session and a view,
//! and the token totals of an index entry.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::index::IndexEntry;
use crate::log::ReadReport;
use crate::store::session::SessionCore;
use crate::store::{StoreCore, ViewCore};

/// Where a store is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreInfo {
    /// The canonical project root.
    pub project_root: PathBuf,
    /// The directory holding the project's session logs.
    pub dir: PathBuf,
    /// The project code: the name of `dir` under the home (FORMAT.md §1).
    pub project_code: String,
    /// The sessions index file.
    pub index_path: PathBuf,
}

/// An open session as its writer knows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// Its log.
    pub path: PathBuf,
    /// The message the conversation continues from; `None` before the first.
    pub head: Option<String>,
    /// Its index entry as this writer keeps it.
    pub entry: IndexEntry,
    /// What opening the log found (and repaired or quarantined).
    pub open_report: ReadReport,
    /// Sessions moved to the trash when this one was created, beyond the
    /// store's `maxSessions`.
    pub pruned: Vec<String>,
}

/// What loading a view found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewInfo {
    /// The head of the loaded log; `None` before the first message.
    pub head: Option<String>,
    /// The `session` header record, if the log has one.
    pub header: Option<Map<String, Value>>,
    /// Messages on every branch.
    pub message_count: usize,
    /// What reading found: skipped lines, a torn tail, broken chains.
    pub report: ReadReport,
    /// State and subagent records, in log order.
    pub records: Vec<Value>,
}

/// Tokens reported for a session (sums of `meta.usage`), in either naming:
/// `input_tokens`/`output_tokens` or `prompt_tokens`/`completion_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    /// Input (prompt) tokens, if any message reported them.
    pub input: Option<u64>,
    /// Output (completion) tokens, if any message reported them.
    pub output: Option<u64>,
    /// Input plus output; `None` when neither was reported.
    pub total: Option<u64>,
}

impl IndexEntry {
    /// The session's input, output and total tokens from its usage sums.
    pub fn token_totals(&self) -> TokenTotals {
        let get = |k: &str| self.token_usage.get(k).and_then(Value::as_u64);
        let input = get("input_tokens").or_else(|| get("prompt_tokens"));
        let output = get("output_tokens").or_else(|| get("completion_tokens"));
        let total = match (input, output) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0).saturating_add(o.unwrap_or(0))),
        };
        TokenTotals {
            input,
            output,
            total,
        }
    }
}

pub(crate) fn store_info(store: &StoreCore) -> StoreInfo {
    StoreInfo {
        project_root: store.project_root().to_path_buf(),
        dir: store.dir().to_path_buf(),
        project_code: store.project_code().to_string(),
        index_path: store.index_path(),
    }
}

pub(crate) fn session_info(s: &SessionCore) -> SessionInfo {
    SessionInfo {
        id: s.id().to_string(),
        path: s.path().to_path_buf(),
        head: s.head(),
        entry: s.entry(),
        open_report: s.open_report().clone(),
        pruned: s.pruned().to_vec(),
    }
}

pub(crate) fn view_info(v: &ViewCore) -> ViewInfo {
    ViewInfo {
        head: v.head().map(str::to_owned),
        header: v.header().cloned(),
        message_count: v.message_count(),
        report: v.report().clone(),
        records: v.records().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(usage: Value) -> IndexEntry {
        IndexEntry {
            token_usage: serde_json::from_value(usage).unwrap_or_default(),
            ..IndexEntry::default()
        }
    }

    #[test]
    fn token_totals_in_either_naming() {
        let t = entry(json!({"input_tokens": 10, "output_tokens": 5, "cache_read": 99}));
        assert_eq!(
            t.token_totals(),
            TokenTotals {
                input: Some(10),
                output: Some(5),
                total: Some(15)
            }
        );
        let t = entry(json!({"prompt_tokens": 7, "completion_tokens": 3}));
        assert_eq!(t.token_totals().total, Some(10));
        // The first naming wins when both are there.
        let t = entry(json!({"input_tokens": 1, "prompt_tokens": 100}));
        assert_eq!(t.token_totals().total, Some(1));
        assert_eq!(t.token_totals().output, None);
        assert_eq!(entry(json!({"other": 4})).token_totals().total, None);
    }
}
