//! Views are folds of the log: the active path (root to head) and the UI view.

pub(crate) mod model_item;
pub(crate) mod resume;

pub(crate) use model_item::ModelItem;

use serde_json::{Map, Value};

use crate::blobs::BlobStore;
use crate::error::{Error, Result};
use crate::format::records::merge_patch;
pub use crate::log::message::{group_results_json, take_page, to_json_array, Message, MessagePage};
use crate::log::{Entry, LoadedLog};

impl LoadedLog {
    /// Indices of the messages from the root to `id`, in order. A missing parent
    /// ends the walk (it is reported as a broken chain); a loop is corruption.
    pub(crate) fn path_indices(&self, id: &str) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        let mut cur = self.by_id.get(id).copied();
        while let Some(i) = cur {
            if out.len() > self.entries.len() {
                return Err(Error::Corrupt(format!(
                    "{}: the parent chain of message {id:?} loops",
                    self.path.display()
                )));
            }
            out.push(i);
            cur = self.entries[i]
                .parent_id
                .as_deref()
                .and_then(|p| self.by_id.get(p).copied());
        }
        out.reverse();
        Ok(out)
    }

    pub(crate) fn head_indices(&self) -> Result<Vec<usize>> {
        match &self.head {
            Some(h) => self.path_indices(h),
            None => Ok(Vec::new()),
        }
    }

    fn materialize(
        &self,
        e: &Entry,
        blobs: &BlobStore,
        force: bool,
    ) -> Result<(Map<String, Value>, bool)> {
        let patches = self.patches.get(&e.id);
        if !force && patches.is_none() && !e.has_blob {
            return Ok((Map::new(), false));
        }
        let mut v: Value = serde_json::from_str(&e.raw)
            .map_err(|err| Error::Corrupt(format!("message {}: {err}", e.id)))?;
        for (_, p) in patches.into_iter().flatten() {
            merge_patch(&mut v, p);
        }
        let Value::Object(mut map) = v else {
            return Err(Error::Corrupt(format!(
                "message {} is not a JSON object",
                e.id
            )));
        };
        if e.has_blob {
            blobs.inline(&mut map)?;
        }
        Ok((map, true))
    }

    fn message_at(&self, i: usize, blobs: &BlobStore) -> Result<Message> {
        let e = &self.entries[i];
        let (map, changed) = self.materialize(e, blobs, false)?;
        Ok(if changed {
            Message::from_map(e.id.clone(), e.parent_id.clone(), &map)
        } else {
            Message::from_shared(e.id.clone(), e.parent_id.clone(), e.raw.clone())
        })
    }

    /// One message by id, with patches applied and blobs inlined.
    pub fn message(&self, id: &str, blobs: &BlobStore) -> Result<Message> {
        let i = *self
            .by_id
            .get(id)
            .ok_or_else(|| Error::NotFound(format!("message {id:?} in {}", self.path.display())))?;
        self.message_at(i, blobs)
    }

    /// The messages from the root to the head, as stored (patches applied, blobs
    /// inlined).
    pub fn active_path(&self, blobs: &BlobStore) -> Result<Vec<Message>> {
        self.head_indices()?
            .into_iter()
            .map(|i| self.message_at(i, blobs))
            .collect()
    }

    /// The active path with `visible` and `compacted` always present as booleans.
    pub fn ui_view(&self, blobs: &BlobStore) -> Result<Vec<Message>> {
        let compacted = self.compacted_ids()?;
        self.head_indices()?
            .into_iter()
            .map(|i| {
                let e = &self.entries[i];
                let (mut map, _) = self.materialize(e, blobs, true)?;
                if !matches!(map.get("visible"), Some(Value::Bool(_))) {
                    map.insert("visible".into(), Value::Bool(true));
                }
                if compacted.contains(&e.id) {
                    map.insert("compacted".into(), Value::Bool(true));
                } else if !matches!(map.get("compacted"), Some(Value::Bool(_))) {
                    map.insert("compacted".into(), Value::Bool(false));
                }
                Ok(Message::from_map(e.id.clone(), e.parent_id.clone(), &map))
            })
            .collect()
    }

    /// Ids of every message, in log order.
    pub fn message_ids(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.id.as_str())
    }
}

/// Tool calls and results as the views need them (read by [`crate::format::tool_calls`]).
pub(crate) mod tools {
    use serde_json::{Map, Value};

    pub use crate::format::tool_calls::ToolStyle as Style;

    /// Ids of the tool calls an assistant message makes.
    pub fn calls(m: &Map<String, Value>) -> Vec<(String, Style)> {
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            return Vec::new();
        }
        crate::format::tool_calls::tool_calls(m)
            .into_iter()
            .filter_map(|c| Some((c.id?.to_string(), c.style)))
            .collect()
    }

    /// Ids of the tool calls a message answers.
    pub fn results(m: &Map<String, Value>) -> Vec<String> {
        crate::format::tool_calls::tool_results(m)
            .into_iter()
            .filter_map(|r| r.call_id.map(str::to_owned))
            .collect()
    }

    pub fn is_result(m: &Map<String, Value>) -> bool {
        m.get("role").and_then(Value::as_str) == Some("tool") || !results(m).is_empty()
    }

    /// The result a dangling tool call gets so the request stays valid.
    pub fn interrupted(
        assistant_id: &str,
        call_id: &str,
        style: Style,
        session_id: Option<&Value>,
    ) -> Map<String, Value> {
        let text = "[interrupted: this tool call did not complete]";
        let mut m = Map::new();
        m.insert(
            "id".into(),
            format!("{assistant_id}:interrupted:{call_id}").into(),
        );
        m.insert("parentId".into(), assistant_id.into());
        if let Some(s) = session_id {
            m.insert("sessionId".into(), s.clone());
        }
        match style {
            Style::OpenAi => {
                m.insert("role".into(), "tool".into());
                m.insert("content".into(), text.into());
                m.insert(
                    "messageParams".into(),
                    serde_json::json!({ "tool_call_id": call_id }),
                );
            }
            Style::Anthropic => {
                m.insert("role".into(), "user".into());
                m.insert("content".into(), "".into());
                m.insert(
                    "contentParams".into(),
                    serde_json::json!([{ "type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": true }]),
                );
            }
        }
        m.insert(
            "meta".into(),
            serde_json::json!({ "synthetic": "interrupted" }),
        );
        m
    }
}

/// Limits on the model view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelViewOptions {
    /// Keep only the last N messages after the leading system messages.
    pub last_n: Option<usize>,
    /// Keep only as many trailing messages as fit this many tokens (leading system
    /// messages always count and are always kept).
    pub token_budget: Option<u64>,
}

impl ModelViewOptions {
    /// Parse options from a JSON object (`lastN`, `tokenBudget`); empty text
    /// gives the defaults. Fails with `InvalidInput` on unknown fields or bad JSON.
    pub fn from_json(json: &str) -> Result<ModelViewOptions> {
        crate::format::json::options_from_json("model view options", json)
    }
}

/// Tokens a message counts for: `meta.tokens` when the host set it, else an
/// estimate of one token per four bytes of its content and parameters.
pub fn token_count(m: &Map<String, Value>) -> u64 {
    tokens_of(m.get("meta"), || {
        ["content", "contentParams", "messageParams"]
            .iter()
            .filter_map(|f| m.get(*f))
            .filter(|v| !v.is_null())
            .map(|v| match v {
                Value::String(s) => s.len(),
                other => other.to_string().len(),
            })
            .sum()
    })
}

/// [`token_count`] from a message's `meta` and, only when that states no
/// count, the bytes of its content and parameters.
pub(crate) fn tokens_of(meta: Option<&Value>, bytes: impl FnOnce() -> usize) -> u64 {
    match meta.and_then(|x| x.get("tokens")).and_then(Value::as_u64) {
        Some(t) => t,
        None => (bytes() as u64).div_ceil(4).max(1),
    }
}

/// The sum of token counts, stopping at `u64::MAX`: counts are stored numbers a
/// host wrote (`meta.tokens`), and a sum of them must neither overflow nor wrap.
pub(crate) fn token_sum(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

/// Turn model items (stored form) into the model view (FORMAT.md §8.6): drop
/// what the model must not see, inline blobs, pair tool calls with results
/// (dropping orphan results, answering dangling calls), apply limits.
pub(crate) fn finish_model_view(
    items: Vec<ModelItem>,
    opts: &ModelViewOptions,
    blobs: &BlobStore,
) -> Result<Vec<Message>> {
    let mut inlined = Vec::with_capacity(items.len());
    for mut m in items.into_iter().filter(|m| !m.excluded()) {
        // Before pairing: a call or a result may be held in a blob.
        if let ModelItem::Full { map, .. } = &mut m {
            blobs.inline(map)?;
        }
        inlined.push(m);
    }
    let out = pair_tool_calls(inlined);

    let lead = out.iter().take_while(|m| m.is_system()).count();
    let mut start = lead;
    if let Some(n) = opts.last_n {
        start = start.max(out.len().saturating_sub(n));
    }
    if let Some(budget) = opts.token_budget {
        let tokens = ModelItem::tokens;
        let mut used = token_sum(out[..lead].iter().map(tokens));
        let mut s = out.len();
        while s > lead && used.saturating_add(tokens(&out[s - 1])) <= budget {
            used = used.saturating_add(tokens(&out[s - 1]));
            s -= 1;
        }
        start = start.max(s);
    }
    // A cut must not leave a tool result without its call.
    while start < out.len() && start > lead && out[start].is_result() {
        start += 1;
    }
    let keep = out
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i < lead || *i >= start);
    Ok(keep.map(|(_, m)| m.into_message()).collect())
}

/// Step 4 of the model view: drop every message carrying a result whose call no
/// earlier message makes, and give every call that nothing answers a synthetic
/// result, after its message and the results that follow it.
fn pair_tool_calls(items: Vec<ModelItem>) -> Vec<ModelItem> {
    // Each message's calls and results, read once.
    let mut called: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut answered: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut kept = Vec::with_capacity(items.len());
    for m in items {
        let results = m.results();
        if results.iter().any(|r| !called.contains(r)) {
            continue; // an orphan: its call was skipped, compacted away or unreadable
        }
        let calls = m.calls();
        called.extend(calls.iter().map(|(id, _)| id.clone()));
        let is_result = m.is_result();
        answered.extend(results);
        kept.push((m, calls, is_result));
    }
    let mut out: Vec<ModelItem> = Vec::with_capacity(kept.len());
    let mut pending: Vec<ModelItem> = Vec::new();
    for (m, calls, is_result) in kept {
        if !pending.is_empty() && !is_result {
            out.append(&mut pending);
        }
        // Only a message read whole makes calls.
        let (aid, sid) = match &m {
            ModelItem::Full { map, .. } if !calls.is_empty() => (
                map.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                map.get("sessionId").cloned(),
            ),
            _ => (String::new(), None),
        };
        out.push(m);
        if !calls.is_empty() {
            out.append(&mut pending);
            for (call, style) in calls {
                if !answered.contains(&call) {
                    let synthetic = tools::interrupted(&aid, &call, style, sid.as_ref());
                    pending.push(ModelItem::from(synthetic));
                }
            }
        }
    }
    out.append(&mut pending);
    out
}

impl LoadedLog {
    /// The messages the model sees, in stored form (blob references not inlined,
    /// no synthetic results): the prefix of the latest compaction on the active
    /// path, then the path after its summary.
    pub(crate) fn model_items(&self) -> Result<Vec<Map<String, Value>>> {
        self.model_entries()?
            .into_iter()
            .map(ModelItem::into_map)
            .collect()
    }

    /// [`LoadedLog::model_items`], each with its stored line where that is its
    /// value as it is.
    pub(crate) fn model_entries(&self) -> Result<Vec<ModelItem>> {
        let path = self.head_indices()?;
        let latest = path
            .iter()
            .enumerate()
            .rev()
            .find_map(|(pos, &i)| self.compactions.get(&self.entries[i].id).map(|c| (pos, c)));
        let (mut items, from): (Vec<ModelItem>, usize) = match latest {
            Some((pos, (offset, rec))) => (
                self.prefix_of(rec, *offset)
                    .into_iter()
                    .map(ModelItem::from)
                    .collect(),
                pos + 1,
            ),
            None => (Vec::new(), 0),
        };
        for &i in &path[from..] {
            let e = &self.entries[i];
            let patched = self.patches.get(&e.id).is_some_and(|p| !p.is_empty());
            let ids = (e.id.as_str(), e.parent_id.as_deref());
            items.push(ModelItem::stored(
                ids,
                e.raw.clone(),
                None,
                !patched,
                |mut v| {
                    for (_, p) in self.patches.get(&e.id).into_iter().flatten() {
                        merge_patch(&mut v, p);
                    }
                    v
                },
            )?);
        }
        Ok(items)
    }

    /// A compaction's prefix, with the patches written after it applied.
    pub(crate) fn prefix_of(&self, rec: &Value, offset: u64) -> Vec<Map<String, Value>> {
        prefix_with_patches(rec, offset, |id| {
            self.patches.get(id).map(Vec::as_slice).unwrap_or(&[])
        })
    }

    /// What goes to the model on resume.
    pub fn model_view(&self, opts: &ModelViewOptions, blobs: &BlobStore) -> Result<Vec<Message>> {
        finish_model_view(self.model_entries()?, opts, blobs)
    }

    /// Ids of the messages on the active path that an active compaction replaces.
    pub(crate) fn compacted_ids(&self) -> Result<std::collections::HashSet<String>> {
        let path = self.head_indices()?;
        let mut out = std::collections::HashSet::new();
        for &i in &path {
            if let Some((_, rec)) = self.compactions.get(&self.entries[i].id) {
                for r in rec["replaces"].as_array().into_iter().flatten() {
                    if let Some(s) = r.as_str() {
                        out.insert(s.to_string());
                    }
                }
            }
        }
        Ok(out)
    }
}

pub(crate) fn prefix_with_patches<'a>(
    rec: &Value,
    offset: u64,
    patches: impl Fn(&str) -> &'a [(u64, Value)],
) -> Vec<Map<String, Value>> {
    rec["prefix"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let mut v = m.clone();
            let id = v
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            for (off, p) in patches(&id) {
                if *off > offset {
                    merge_patch(&mut v, p);
                }
            }
            match v {
                Value::Object(m) => Some(m),
                _ => None,
            }
        })
        .collect()
}

/// One message in the tree view of a session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode {
    /// The message id.
    pub id: String,
    /// Its parent, if it has one in the log.
    pub parent_id: Option<String>,
    /// Its `role` (`""` if it has none).
    pub role: String,
    /// Its `timestamp`.
    pub timestamp: Option<String>,
    /// The first 80 characters of the message's text.
    pub preview: String,
    /// How many messages have it as their parent.
    pub children: usize,
    /// Whether it is on the path from the root to the head.
    pub on_active_path: bool,
    /// Whether it is the head.
    pub is_head: bool,
    /// Whether a compaction on the active path replaced it.
    pub compacted: bool,
}

/// A branch: the path from the root to a leaf.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Branch {
    /// The last message of the branch (a leaf, or the head).
    pub leaf_id: String,
    /// Messages from the root to the leaf.
    pub length: usize,
    /// The last message this branch shares with the active path.
    pub fork_point_id: Option<String>,
    /// Whether it ends at the head.
    pub is_active: bool,
    /// The leaf's `timestamp`.
    pub last_timestamp: Option<String>,
}

impl LoadedLog {
    /// Every message with its place in the tree, in log order.
    pub fn tree(&self) -> Result<Vec<TreeNode>> {
        let active: std::collections::HashSet<usize> = self.head_indices()?.into_iter().collect();
        let compacted = self.compacted_ids()?;
        let mut children = vec![0usize; self.entries.len()];
        for e in &self.entries {
            if let Some(p) = e.parent_id.as_deref().and_then(|p| self.by_id.get(p)) {
                children[*p] += 1;
            }
        }
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let v: Value = serde_json::from_str(&e.raw).unwrap_or(Value::Null);
                let text = v
                    .get("content")
                    .and_then(crate::format::records::content_text)
                    .unwrap_or_default();
                Ok(TreeNode {
                    id: e.id.clone(),
                    parent_id: e.parent_id.clone(),
                    role: v["role"].as_str().unwrap_or_default().to_string(),
                    timestamp: v["timestamp"].as_str().map(str::to_owned),
                    preview: text
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .chars()
                        .take(80)
                        .collect(),
                    children: children[i],
                    on_active_path: active.contains(&i),
                    is_head: self.head.as_deref() == Some(e.id.as_str()),
                    compacted: compacted.contains(&e.id),
                })
            })
            .collect()
    }

    /// The branches of the session: one per leaf, the active one marked.
    pub fn branches(&self) -> Result<Vec<Branch>> {
        let active: std::collections::HashSet<usize> = self.head_indices()?.into_iter().collect();
        let mut has_child = vec![false; self.entries.len()];
        for e in &self.entries {
            if let Some(p) = e.parent_id.as_deref().and_then(|p| self.by_id.get(p)) {
                has_child[*p] = true;
            }
        }
        let head = self.head.as_deref();
        let mut out = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if has_child[i] && head != Some(e.id.as_str()) {
                continue;
            }
            let path = self.path_indices(&e.id)?;
            let fork = path
                .iter()
                .rev()
                .find(|j| active.contains(j))
                .map(|&j| self.entries[j].id.clone());
            let v: Value = serde_json::from_str(&e.raw).unwrap_or(Value::Null);
            out.push(Branch {
                leaf_id: e.id.clone(),
                length: path.len(),
                fork_point_id: fork,
                is_active: head == Some(e.id.as_str()),
                last_timestamp: v["timestamp"].as_str().map(str::to_owned),
            });
        }
        Ok(out)
    }
}
