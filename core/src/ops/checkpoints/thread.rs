//! One thread's checkpoints as its log's records fold into them (FORMAT.md
//! §24.5): kept per store handle and brought up to date by reading only what
//! was appended since (by this process or any other), so a read costs what
//! changed.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::values::{self, Encoding};
use super::{PendingWrite, TypedValue};
use crate::blobs::{reference_digest, BlobStore};
use crate::error::{Error, IoContext, Result};
use crate::format::records::kind;

/// Decoded values kept in memory per thread, at most this many bytes.
const DECODED_BUDGET: usize = 64 << 20;

/// Where a stored value's encoded bytes are.
#[derive(Debug, Clone)]
enum Payload {
    Inline(Arc<Vec<u8>>),
    Blob(String),
}

#[derive(Debug, Clone)]
pub(crate) struct StoredValue {
    size: usize,
    encoding: Encoding,
    base: Option<String>,
    payload: Payload,
    /// Deltas from here to a value stored whole (0 for a whole one).
    pub depth: u32,
}

/// A value as a record names it: the serializer's type and the value's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueRef {
    pub kind: String,
    pub id: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    pub parent: Option<String>,
    pub checkpoint: Map<String, Value>,
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub task_id: String,
    pub channel: String,
    pub task_path: String,
    pub idx: i64,
    pub value: ValueRef,
}

/// One namespace (`checkpoint_ns`) of a thread.
#[derive(Debug, Default)]
pub(crate) struct Namespace {
    pub checkpoints: BTreeMap<String, Checkpoint>,
    /// (channel, version key) → the value stored for that version, `None`
    /// for a version stored as empty.
    pub versions: HashMap<(String, String), Option<ValueRef>>,
    /// checkpoint id → (task id, idx) → write.
    pub writes: HashMap<String, HashMap<(String, i64), Write>>,
}

impl Namespace {
    /// The writes pending on `id`, in the order a run applies them:
    /// (task path, task id, idx).
    pub fn ordered_writes(&self, id: &str) -> Vec<&Write> {
        let mut w: Vec<&Write> = self
            .writes
            .get(id)
            .map(|m| m.values().collect())
            .unwrap_or_default();
        w.sort_by(|a, b| (&a.task_path, &a.task_id, a.idx).cmp(&(&b.task_path, &b.task_id, b.idx)));
        w
    }

    /// The value a checkpoint's `channel_versions` names for each channel, in
    /// the order of `channel_versions`; channels stored empty or never stored
    /// are left out.
    pub fn value_refs<'a>(&'a self, cp: &Checkpoint) -> Vec<(String, &'a ValueRef)> {
        let Some(Value::Object(versions)) = cp.checkpoint.get("channel_versions") else {
            return Vec::new();
        };
        versions
            .iter()
            .filter_map(|(channel, v)| {
                let key = (channel.clone(), version_key(v));
                match self.versions.get(&key) {
                    Some(Some(r)) => Some((channel.clone(), r)),
                    _ => None,
                }
            })
            .collect()
    }
}

/// A channel version as a map key: its JSON text (`"00…1.5"`, `3`).
pub(crate) fn version_key(v: &Value) -> String {
    v.to_string()
}

/// A thread's state as folded from its log up to `offset`.
#[derive(Debug)]
pub(crate) struct ThreadState {
    pub path: PathBuf,
    /// The thread id hosts use (the header's `conversationId`, else the session id).
    pub thread_id: String,
    offset: u64,
    pub namespaces: BTreeMap<String, Namespace>,
    values: HashMap<String, StoredValue>,
    decoded: HashMap<String, Arc<Vec<u8>>>,
    decoded_bytes: usize,
}

impl ThreadState {
    pub fn new(path: PathBuf, session_id: &str) -> ThreadState {
        ThreadState {
            path,
            thread_id: session_id.to_owned(),
            offset: 0,
            namespaces: BTreeMap::new(),
            values: HashMap::new(),
            decoded: HashMap::new(),
            decoded_bytes: 0,
        }
    }

    /// Forget everything folded: the log is gone or was replaced.
    fn reset(&mut self) {
        let id = std::mem::take(&mut self.thread_id);
        *self = ThreadState::new(std::mem::take(&mut self.path), &id);
    }

    /// Fold what was appended since the last call. A log that shrank (it was
    /// replaced: deleted and created again) is folded again from its start.
    /// `Ok(false)` when the log does not exist.
    pub fn refresh(&mut self) -> Result<bool> {
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.reset();
                return Ok(false);
            }
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let len = file.metadata().at(&self.path)?.len();
        if len < self.offset {
            self.reset();
        }
        if len == self.offset {
            return Ok(true);
        }
        file.seek(SeekFrom::Start(self.offset)).at(&self.path)?;
        let mut bytes = Vec::with_capacity((len - self.offset) as usize);
        file.take(len - self.offset)
            .read_to_end(&mut bytes)
            .at(&self.path)?;
        // Only whole lines: a torn or in-flight last line waits for its end.
        let Some(end) = memchr::memrchr(b'\n', &bytes) else {
            return Ok(true);
        };
        for line in bytes[..end].split(|&b| b == b'\n') {
            self.fold_line(line);
        }
        self.offset += end as u64 + 1;
        Ok(true)
    }

    /// Fold one line; a line that is not one of these records (or is damaged:
    /// the log's readers report those) changes nothing here.
    fn fold_line(&mut self, line: &[u8]) {
        if memchr::memmem::find(line, b"\"type\"").is_none() {
            return;
        }
        let Ok(Value::Object(rec)) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        match rec.get("type").and_then(Value::as_str) {
            Some(kind::SESSION) => {
                if let Some(c) = rec.get("conversationId").and_then(Value::as_str) {
                    self.thread_id = c.to_owned();
                }
            }
            Some(kind::VALUE) => self.fold_value(&rec),
            Some(kind::CHECKPOINT) => self.fold_checkpoint(rec),
            Some(kind::WRITES) => self.fold_writes(&rec),
            Some(kind::DROP) => self.fold_drop(&rec),
            _ => {}
        }
    }

    fn fold_value(&mut self, rec: &Map<String, Value>) {
        let (Some(id), Some(size)) = (
            rec.get("id").and_then(Value::as_str),
            rec.get("size").and_then(Value::as_u64),
        ) else {
            return;
        };
        if self.values.contains_key(id) {
            return;
        }
        let Some(encoding) = rec
            .get("encoding")
            .and_then(Value::as_str)
            .and_then(Encoding::parse)
        else {
            return;
        };
        let base = rec.get("base").and_then(Value::as_str).map(str::to_owned);
        let payload = if let Some(data) = rec.get("data").and_then(Value::as_str) {
            match base64::engine::general_purpose::STANDARD.decode(data) {
                Ok(b) => Payload::Inline(Arc::new(b)),
                Err(_) => return,
            }
        } else if let Some(d) = rec.get("blob").and_then(reference_digest) {
            Payload::Blob(d.to_owned())
        } else {
            return;
        };
        let depth = match &base {
            Some(b) => match self.values.get(b) {
                Some(v) => v.depth + 1,
                // A base this thread does not hold: the value cannot be decoded.
                None => return,
            },
            None => 0,
        };
        self.values.insert(
            id.to_owned(),
            StoredValue {
                size: size as usize,
                encoding,
                base,
                payload,
                depth,
            },
        );
    }

    fn fold_checkpoint(&mut self, mut rec: Map<String, Value>) {
        let Some(Value::String(id)) = rec.remove("checkpointId") else {
            return;
        };
        let ns = ns_of(&rec);
        let Some(Value::Object(checkpoint)) = rec.remove("checkpoint") else {
            return;
        };
        let metadata = match rec.remove("metadata") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let parent = rec
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let space = self.namespaces.entry(ns).or_default();
        if let Some(Value::Array(vals)) = rec.get("values") {
            for v in vals {
                let (Some(channel), Some(version)) =
                    (v.get("channel").and_then(Value::as_str), v.get("version"))
                else {
                    continue;
                };
                let value = v.get("value").and_then(value_ref);
                space
                    .versions
                    .insert((channel.to_owned(), version_key(version)), value);
            }
        }
        space.checkpoints.insert(
            id,
            Checkpoint {
                parent,
                checkpoint,
                metadata,
            },
        );
    }

    fn fold_writes(&mut self, rec: &Map<String, Value>) {
        let (Some(cp), Some(task_id), Some(Value::Array(writes))) = (
            rec.get("checkpointId").and_then(Value::as_str),
            rec.get("taskId").and_then(Value::as_str),
            rec.get("writes"),
        ) else {
            return;
        };
        let task_path = rec
            .get("taskPath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ns = ns_of(rec);
        let stored = self
            .namespaces
            .entry(ns)
            .or_default()
            .writes
            .entry(cp.to_owned())
            .or_default();
        for w in writes {
            let (Some(idx), Some(channel), Some(value)) = (
                w.get("idx").and_then(Value::as_i64),
                w.get("channel").and_then(Value::as_str),
                w.get("value").and_then(value_ref),
            ) else {
                continue;
            };
            let key = (task_id.to_owned(), idx);
            // A task's write at an index is kept as first written; the special
            // channels' (negative index) are replaced (FORMAT.md §24.4).
            if idx >= 0 && stored.contains_key(&key) {
                continue;
            }
            stored.insert(
                key,
                Write {
                    task_id: task_id.to_owned(),
                    channel: channel.to_owned(),
                    task_path: task_path.to_owned(),
                    idx,
                    value,
                },
            );
        }
    }

    fn fold_drop(&mut self, rec: &Map<String, Value>) {
        let Some(Value::Array(ids)) = rec.get("checkpointIds") else {
            return;
        };
        let ns = ns_of(rec);
        if let Some(space) = self.namespaces.get_mut(&ns) {
            for id in ids.iter().filter_map(Value::as_str) {
                space.checkpoints.remove(id);
                space.writes.remove(id);
            }
        }
    }

    /// Whether this thread holds the value `id` (so a put need not write it).
    pub fn has_value(&self, id: &str) -> bool {
        self.values.contains_key(id)
    }

    pub fn value_depth(&self, id: &str) -> Option<u32> {
        self.values.get(id).map(|v| v.depth)
    }

    /// Remember the bytes of a value just written, for the next delta and read.
    pub fn remember(&mut self, id: &str, bytes: Arc<Vec<u8>>) {
        if self.decoded_bytes + bytes.len() > DECODED_BUDGET {
            self.decoded.clear();
            self.decoded_bytes = 0;
        }
        self.decoded_bytes += bytes.len();
        self.decoded.insert(id.to_owned(), bytes);
    }

    /// The bytes of value `id`, decoding the deltas from the nearest value
    /// held whole or in memory, and checking the result against its id.
    pub fn value(&mut self, id: &str, blobs: &BlobStore) -> Result<Arc<Vec<u8>>> {
        if let Some(b) = self.decoded.get(id) {
            return Ok(b.clone());
        }
        // The chain down to a value in memory or stored whole.
        let mut chain = Vec::new();
        let mut at = id.to_owned();
        let mut start: Option<Arc<Vec<u8>>> = None;
        loop {
            if let Some(b) = self.decoded.get(&at) {
                start = Some(b.clone());
                break;
            }
            let v = self.values.get(&at).ok_or_else(|| {
                Error::Corrupt(format!(
                    "checkpoint value {at} is not in {}",
                    self.path.display()
                ))
            })?;
            chain.push(at.clone());
            match &v.base {
                Some(b) => at = b.clone(),
                None => break,
            }
        }
        let mut bytes = start;
        for vid in chain.into_iter().rev() {
            let v = &self.values[&vid];
            let payload = match &v.payload {
                Payload::Inline(p) => p.clone(),
                Payload::Blob(d) => Arc::new(blobs.get_bytes(d)?),
            };
            let out = match v.encoding {
                Encoding::Identity => payload.as_ref().clone(),
                Encoding::Zstd => values::decompress(
                    &payload,
                    v.size,
                    v.base.as_ref().and(bytes.as_deref().map(Vec::as_slice)),
                )?,
            };
            if values::value_id(&out) != vid {
                return Err(Error::Corrupt(format!(
                    "checkpoint value {vid} in {} does not decode to bytes with that SHA-256",
                    self.path.display()
                )));
            }
            let out = Arc::new(out);
            self.remember(&vid, out.clone());
            bytes = Some(out);
        }
        bytes.ok_or_else(|| Error::Internal(format!("checkpoint value {id} decoded to nothing")))
    }

    pub fn typed(&mut self, r: &ValueRef, blobs: &BlobStore) -> Result<TypedValue> {
        Ok(TypedValue {
            kind: r.kind.clone(),
            bytes: self.value(&r.id, blobs)?.as_ref().clone(),
        })
    }

    pub fn pending_write(&mut self, w: &Write, blobs: &BlobStore) -> Result<PendingWrite> {
        Ok(PendingWrite {
            task_id: w.task_id.clone(),
            channel: w.channel.clone(),
            value: self.typed(&w.value, blobs)?,
            task_path: w.task_path.clone(),
            idx: w.idx,
        })
    }
}

fn ns_of(rec: &Map<String, Value>) -> String {
    rec.get("ns")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn value_ref(v: &Value) -> Option<ValueRef> {
    Some(ValueRef {
        kind: v.get("type")?.as_str()?.to_owned(),
        id: v.get("id")?.as_str()?.to_owned(),
    })
}
