//! Compaction: older messages replaced in the model's view by a summary the host
//! writes. The originals stay in the log; the summary and a `compaction` record are
//! appended, and the record carries the model view as of the compaction (its
//! `prefix`) so that resuming reads only the log after it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::format::records::kind;
use crate::store::session::SessionCore;
use crate::view::{token_count, token_sum, tools, Message};

/// How to pick what to compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionPolicy {
    /// The model view should fit in this many tokens after compaction.
    pub token_budget: u64,
    /// Turns (a user input and what follows it) at the end that are never compacted.
    #[serde(default = "default_keep")]
    pub keep_last_turns: usize,
    /// Tokens to reserve for the summary itself.
    #[serde(default = "default_summary")]
    pub summary_tokens: u64,
}

/// Turns kept whole at the end when a policy does not say (`keepLastTurns`).
pub const DEFAULT_KEEP_LAST_TURNS: usize = 2;
/// Tokens reserved for the summary when a policy does not say (`summaryTokens`).
pub const DEFAULT_SUMMARY_TOKENS: u64 = 1000;

fn default_keep() -> usize {
    DEFAULT_KEEP_LAST_TURNS
}
fn default_summary() -> u64 {
    DEFAULT_SUMMARY_TOKENS
}

impl CompactionPolicy {
    /// A policy for a budget of `token_budget` tokens, with the default `keep_last_turns` (2) and `summary_tokens` (1000).
    pub fn new(token_budget: u64) -> CompactionPolicy {
        CompactionPolicy {
            token_budget,
            keep_last_turns: default_keep(),
            summary_tokens: default_summary(),
        }
    }

    /// Parse a policy from a JSON object (`tokenBudget`, and optionally
    /// `keepLastTurns` and `summaryTokens`). Fails with `InvalidInput`, also
    /// for an array (serde would read its fields by position).
    pub fn from_json(json: &str) -> Result<CompactionPolicy> {
        crate::format::json::object_from_json("compaction policy", json)
    }
}

/// What the policy picked: the host summarises `messages` and passes `replaces`
/// back to [`crate::Session::apply_compaction`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPlan {
    /// The ids of the messages to replace, a contiguous run of the model view.
    pub replaces: Vec<String>,
    /// The messages to summarise, in full.
    pub messages: Vec<Value>,
    /// Tokens of the model view now.
    pub tokens_before: u64,
    /// Tokens of the model view after the compaction, without the summary.
    pub tokens_after: u64,
}

fn role(m: &Map<String, Value>) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or_default()
}

fn id(m: &Map<String, Value>) -> &str {
    m.get("id").and_then(Value::as_str).unwrap_or_default()
}

/// A user message that starts a turn (not one that only carries tool results).
fn starts_turn(m: &Map<String, Value>) -> bool {
    role(m) == "user" && !tools::is_result(m)
}

/// Pick the earliest run of non-system messages whose removal brings the model
/// view under the budget, keeping the last turns and never separating a tool call
/// from its results. `None` when the view already fits or nothing can go.
pub(crate) fn select(
    items: &[Map<String, Value>],
    policy: &CompactionPolicy,
) -> Option<(usize, usize)> {
    let tokens: Vec<u64> = items.iter().map(token_count).collect();
    let total = token_sum(tokens.iter().copied());
    if total <= policy.token_budget {
        return None;
    }
    let turn_starts: Vec<usize> = (0..items.len())
        .filter(|&i| starts_turn(&items[i]))
        .collect();
    let protected = if policy.keep_last_turns == 0 {
        items.len()
    } else if turn_starts.len() >= policy.keep_last_turns {
        turn_starts[turn_starts.len() - policy.keep_last_turns]
    } else {
        0
    };
    let start = items.iter().position(|m| role(m) != "system")?;
    let end = (start..protected.max(start))
        .find(|&i| role(&items[i]) == "system")
        .unwrap_or(protected.max(start));
    // A cut before `j` is valid when items[j] is not a tool result.
    let valid = |j: usize| j == items.len() || !tools::is_result(&items[j]);
    let mut best = None;
    let mut removed = 0u64;
    for j in start + 1..=end {
        removed = removed.saturating_add(tokens[j - 1]);
        if !valid(j) {
            continue;
        }
        best = Some(j);
        let after = total.saturating_sub(removed);
        if after.saturating_add(policy.summary_tokens) <= policy.token_budget {
            break;
        }
    }
    best.map(|j| (start, j))
}

/// Check that `replaces` is a contiguous run of the model view that keeps each
/// tool call with its results; returns the run's bounds.
fn check_run(items: &[Map<String, Value>], replaces: &[String]) -> Result<(usize, usize)> {
    let Some(first) = replaces.first() else {
        return Err(Error::invalid(
            "a compaction must replace at least one message",
        ));
    };
    let start = items.iter().position(|m| id(m) == first).ok_or_else(|| {
        Error::invalid(format!("message {first:?} is not in the model view (not on the active path, or already compacted)"))
    })?;
    for (k, r) in replaces.iter().enumerate() {
        match items.get(start + k) {
            Some(m) if id(m) == r => {}
            _ => {
                return Err(Error::invalid(format!(
                    "the messages to compact must be a contiguous run of the model view in order; {r:?} is not next after {:?}",
                    replaces[k.saturating_sub(1)]
                )))
            }
        }
    }
    let end = start + replaces.len();
    let run = &items[start..end];
    let inside_calls: std::collections::HashSet<String> =
        run.iter().flat_map(tools::calls).map(|c| c.0).collect();
    let inside_results: std::collections::HashSet<String> =
        run.iter().flat_map(tools::results).collect();
    for m in items[..start].iter().chain(&items[end..]) {
        for r in tools::results(m) {
            if inside_calls.contains(&r) {
                return Err(Error::invalid(format!(
                    "the compaction would separate tool call {r:?} from its result {:?}",
                    id(m)
                )));
            }
        }
        for (c, _) in tools::calls(m) {
            if inside_results.contains(&c) {
                return Err(Error::invalid(format!(
                    "the compaction would separate the result of tool call {c:?} from its call {:?}",
                    id(m)
                )));
            }
        }
    }
    Ok((start, end))
}

/// The `compaction` record (FORMAT.md §6.7) of the stored `summary` message
/// that replaces `replaces`, with the model view as of it, `prefix`.
pub(crate) fn compaction_record(
    summary: &Map<String, Value>,
    replaces: &[String],
    prefix: Vec<Value>,
) -> Map<String, Value> {
    let mut rec = Map::new();
    rec.insert("type".into(), kind::COMPACTION.into());
    // The summary's own time, so the record is never older than it.
    rec.insert(
        "timestamp".into(),
        summary.get("timestamp").cloned().unwrap_or(Value::Null),
    );
    rec.insert("summaryId".into(), id(summary).into());
    rec.insert(
        "replaces".into(),
        replaces.iter().cloned().map(Value::String).collect(),
    );
    rec.insert("prefix".into(), Value::Array(prefix));
    rec
}

impl SessionCore {
    /// Ask the policy what to compact. Changes nothing.
    pub(crate) fn select_compaction(
        &self,
        policy: &CompactionPolicy,
    ) -> Result<Option<CompactionPlan>> {
        let view = self.read()?;
        let items = view.log().model_items()?;
        let Some((a, b)) = select(&items, policy) else {
            return Ok(None);
        };
        let tokens_before = token_sum(items.iter().map(token_count));
        let removed = token_sum(items[a..b].iter().map(token_count));
        let mut messages = Vec::with_capacity(b - a);
        for m in &items[a..b] {
            let mut m = m.clone();
            view.blobs.inline(&mut m)?;
            messages.push(Value::Object(m));
        }
        Ok(Some(CompactionPlan {
            replaces: items[a..b].iter().map(|m| id(m).to_string()).collect(),
            messages,
            tokens_before,
            tokens_after: tokens_before.saturating_sub(removed),
        }))
    }

    /// Replace `replaces` (a contiguous run of the model view) by `summary` in the
    /// model's view. Appends an invisible system summary message and a compaction
    /// record in one write; returns the summary message.
    pub(crate) fn apply_compaction(&self, replaces: &[String], summary: Value) -> Result<Message> {
        if !(summary.is_string() || summary.is_array()) {
            return Err(Error::invalid(
                "a compaction summary must be a string or an array of content blocks",
            ));
        }
        let summary_msg = json!({
            "role": "system",
            "content": summary,
            "visible": false,
            "meta": {"compaction": {"replaces": replaces.len()}},
        });
        self.apply_compaction_with(replaces, summary_msg)
    }

    /// [`SessionCore::apply_compaction`] with the summary message given whole
    /// (an import keeps the source's id, parent and time for it).
    pub(crate) fn apply_compaction_with(
        &self,
        replaces: &[String],
        summary_msg: Value,
    ) -> Result<Message> {
        // One write: a shared handle compacts the view as it is under the lock.
        self.write_transaction(|| self.compact_locked(replaces, summary_msg))
    }

    fn compact_locked(&self, replaces: &[String], summary_msg: Value) -> Result<Message> {
        let view = self.read()?;
        let items = view.log().model_items()?;
        let (start, end) = check_run(&items, replaces)?;
        if view.head() != self.head().as_deref() {
            return Err(Error::Conflict(
                "the session changed while compacting; try again".into(),
            ));
        }
        let build = |stored: &[Map<String, Value>]| {
            let s = stored
                .first()
                .ok_or_else(|| Error::Internal("empty batch".into()))?;
            let mut prefix: Vec<Value> =
                items[..start].iter().cloned().map(Value::Object).collect();
            prefix.push(Value::Object(s.clone()));
            prefix.extend(items[end..].iter().cloned().map(Value::Object));
            Ok(vec![compaction_record(s, replaces, prefix)])
        };
        let out = self.append_with(vec![summary_msg], Some(&build))?;
        out.into_iter()
            .next()
            .ok_or_else(|| Error::Internal("empty batch".into()))
    }
}
