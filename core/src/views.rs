//! Views are folds of the log: the active path (root to head) and the UI view.

use serde_json::{Map, Value};

use crate::blobs::BlobStore;
use crate::error::{Error, Result};
use crate::log::{Entry, LoadedLog};
use crate::records::merge_patch;

/// One message of a view, as a JSON object in text form. Messages that no later
/// record changed are handed out exactly as stored, without re-serialising.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    id: String,
    parent_id: Option<String>,
    json: String,
}

impl Message {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn parent_id(&self) -> Option<&str> {
        self.parent_id.as_deref()
    }

    /// The message as a JSON object text.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The message parsed.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    pub(crate) fn from_json(id: String, parent_id: Option<String>, json: String) -> Message {
        Message {
            id,
            parent_id,
            json,
        }
    }

    pub(crate) fn from_map(
        id: String,
        parent_id: Option<String>,
        map: &Map<String, Value>,
    ) -> Message {
        Message {
            id,
            parent_id,
            json: serde_json::to_string(map).unwrap_or_default(),
        }
    }
}

/// Join messages into one JSON array text (how views cross the C ABI).
pub fn to_json_array(messages: &[Message]) -> String {
    let mut out =
        String::with_capacity(messages.iter().map(|m| m.json.len() + 1).sum::<usize>() + 2);
    out.push('[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&m.json);
    }
    out.push(']');
    out
}

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

    fn head_indices(&self) -> Result<Vec<usize>> {
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
        for p in patches.into_iter().flatten() {
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
            Message {
                id: e.id.clone(),
                parent_id: e.parent_id.clone(),
                json: e.raw.to_string(),
            }
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
        self.head_indices()?
            .into_iter()
            .map(|i| {
                let e = &self.entries[i];
                let (mut map, _) = self.materialize(e, blobs, true)?;
                if !matches!(map.get("visible"), Some(Value::Bool(_))) {
                    map.insert("visible".into(), Value::Bool(true));
                }
                if !matches!(map.get("compacted"), Some(Value::Bool(_))) {
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
