//! Graph checkpoints (LangGraph's checkpointer contract) kept in sessions,
//! FORMAT.md §24: a thread is a session (its id mapped like any conversation
//! id), each checkpoint a record naming its parent, pending writes records,
//! and channel values content-addressed, written once per thread, as deltas
//! against the value they replace. The Python and Node savers only convert
//! their framework's types to these calls; every rule is here.

mod thread;
mod values;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use base64::Engine as _;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::format::layout::conversation_session_id;
use crate::format::records::kind;
use crate::options::Durability;
use crate::store::session::SessionCore;
use crate::store::StoreCore;
use thread::{Namespace, ThreadState, ValueRef};

/// A value as the framework's serializer gives it: its type tag (`"msgpack"`,
/// `"json"`, …) and its bytes. sessionkit stores the bytes; only the
/// framework reads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypedValue {
    /// The serializer's type tag.
    #[serde(rename = "type")]
    pub kind: String,
    /// The serialized bytes (base64 in JSON).
    #[serde(serialize_with = "as_base64", deserialize_with = "from_base64")]
    pub bytes: Vec<u8>,
}

fn as_base64<S: serde::Serializer>(b: &[u8], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b))
}

fn from_base64<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<u8>, D::Error> {
    let s = String::deserialize(d)?;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| serde::de::Error::custom(format!("bytes are not base64: {e}")))
}

/// Channel values as a JSON object, channel → value.
fn values_as_object<S: serde::Serializer>(
    v: &[(String, TypedValue)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, x) in v {
        m.serialize_entry(k, x)?;
    }
    m.end()
}

/// A channel's new version in a checkpoint, with its value; `None` when the
/// channel has no value at that version (LangGraph's "empty").
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelValue {
    /// The channel's name.
    pub channel: String,
    /// A string or a number: whatever the framework's versions are.
    pub version: Value,
    /// The value at that version.
    pub value: Option<TypedValue>,
}

/// A checkpoint to store.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckpointPut {
    /// The namespace (`checkpoint_ns`; `""` for the graph itself).
    pub ns: String,
    /// The checkpoint without its channel values: `id` (required), `ts`, `v`,
    /// `channel_versions`, `versions_seen`, …, kept as given.
    pub checkpoint: Map<String, Value>,
    /// The checkpoint's metadata (`source`, `step`, `run_id`, …), as given.
    pub metadata: Map<String, Value>,
    /// The checkpoint this one follows; `None` for a thread's first.
    pub parent_id: Option<String>,
    /// The channels whose version is new in this checkpoint.
    pub values: Vec<ChannelValue>,
}

/// A write a task made, pending on a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingWrite {
    /// The task that wrote.
    pub task_id: String,
    /// The channel written to.
    pub channel: String,
    /// The value written.
    pub value: TypedValue,
    /// The task's path in the graph (`""` when not given).
    pub task_path: String,
    /// The write's index in its task's list, or the fixed negative index of a
    /// special channel (`__error__` -1, `__scheduled__` -2, `__interrupt__` -3,
    /// `__resume__` -4).
    pub idx: i64,
}

/// A stored checkpoint with its channel values and pending writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointTuple {
    /// The thread, as its host names it.
    pub thread_id: String,
    /// The namespace.
    pub ns: String,
    /// The checkpoint's id.
    pub id: String,
    /// The checkpoint it follows.
    pub parent_id: Option<String>,
    /// The checkpoint as stored, without channel values.
    pub checkpoint: Map<String, Value>,
    /// Its metadata.
    pub metadata: Map<String, Value>,
    /// The value of each channel of `checkpoint.channel_versions` that has one
    /// (in JSON, an object: channel → value).
    #[serde(serialize_with = "values_as_object")]
    pub values: Vec<(String, TypedValue)>,
    /// Ordered by (task path, task id, idx), as a run applies them.
    pub writes: Vec<PendingWrite>,
    /// For a checkpoint of format `v` < 4 with a parent: the values its parent's
    /// tasks wrote to `__pregel_tasks`, in write order, which LangGraph reads
    /// as that channel's value (sends were kept that way before v4).
    pub pending_sends: Vec<TypedValue>,
}

/// Which checkpoints [`crate::Store::checkpoint_list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckpointQuery {
    /// One thread; every thread of the store when `None`.
    pub thread_id: Option<String>,
    /// One namespace; all when `None`.
    pub ns: Option<String>,
    /// Only this checkpoint.
    pub checkpoint_id: Option<String>,
    /// Metadata members that must be equal (a member absent equals `null`).
    pub filter: Option<Map<String, Value>>,
    /// Only checkpoints whose id sorts before this one.
    pub before: Option<String>,
    /// At most this many.
    pub limit: Option<usize>,
}

/// A task's writes to store, as JSON hosts give them (the C ABI, the CLI).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckpointWrites {
    /// The namespace.
    pub ns: String,
    /// The checkpoint the writes are pending on.
    pub checkpoint_id: String,
    /// The task that wrote.
    pub task_id: String,
    /// The task's path (`""` when not given).
    pub task_path: String,
    /// The writes, in the task's order.
    pub writes: Vec<ChannelWrite>,
}

/// One write of [`CheckpointWrites`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelWrite {
    /// The channel written to.
    pub channel: String,
    /// The value written.
    pub value: TypedValue,
}

impl CheckpointPut {
    /// Parse a checkpoint from JSON (`ns`, `checkpoint`, `metadata`,
    /// `parentId`, `values`: `[{channel, version, value: {type, bytes (base64)} | null}]`).
    pub fn from_json(json: &str) -> Result<CheckpointPut> {
        crate::format::json::object_from_json("checkpoint", json)
    }
}

impl CheckpointWrites {
    /// Parse writes from JSON (`ns`, `checkpointId`, `taskId`, `taskPath`,
    /// `writes`: `[{channel, value: {type, bytes (base64)}}]`).
    pub fn from_json(json: &str) -> Result<CheckpointWrites> {
        crate::format::json::object_from_json("checkpoint writes", json)
    }
}

impl CheckpointQuery {
    /// Parse a query from JSON (`threadId`, `ns`, `checkpointId`, `filter`,
    /// `before`, `limit`, each optional); empty text is every checkpoint.
    pub fn from_json(json: &str) -> Result<CheckpointQuery> {
        crate::format::json::options_from_json("checkpoint query", json)
    }
}

/// A checkpoint as listings show it, without its values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointSummary {
    /// The namespace.
    pub ns: String,
    /// The checkpoint's id.
    pub id: String,
    /// The checkpoint it follows.
    pub parent_id: Option<String>,
    /// The checkpoint's `ts`, when it has one.
    pub ts: Option<String>,
    /// Its metadata (`source`, `step`, …).
    pub metadata: Map<String, Value>,
    /// The channels holding a value at this checkpoint.
    pub channels: Vec<String>,
    /// How many writes are pending on it.
    pub writes: usize,
}

/// What [`crate::Store::checkpoint_prune`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneStrategy {
    /// The newest checkpoint of each namespace, with its writes.
    KeepLatest,
    /// Nothing: the thread goes to the trash.
    Delete,
}

impl std::str::FromStr for PruneStrategy {
    type Err = Error;
    fn from_str(s: &str) -> Result<PruneStrategy> {
        match s {
            "keep_latest" => Ok(PruneStrategy::KeepLatest),
            "delete" => Ok(PruneStrategy::Delete),
            other => Err(Error::invalid(format!(
                "prune strategy {other:?} is not one of \"keep_latest\", \"delete\""
            ))),
        }
    }
}

/// One channel's history behind a checkpoint (LangGraph's
/// `get_delta_channel_history`): the writes on the path to it, oldest first,
/// back to the nearest ancestor holding a value for the channel (`seed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeltaHistory {
    /// The channel.
    pub channel: String,
    /// Its writes on the path, oldest first.
    pub writes: Vec<PendingWrite>,
    /// The value at the nearest ancestor holding one; `None` when none does.
    pub seed: Option<TypedValue>,
}

/// The channel where LangGraph before checkpoint format 4 kept pending sends.
pub const TASKS_CHANNEL: &str = "__pregel_tasks";

/// The fixed index of a write to one of these channels, which replaces an
/// earlier one of its task instead of being kept as first written.
pub const SPECIAL_WRITE_INDEX: [(&str, i64); 4] = [
    ("__error__", -1),
    ("__scheduled__", -2),
    ("__interrupt__", -3),
    ("__resume__", -4),
];

/// The version that follows `current` (`None`, a number or a version this
/// function made): `"<counter, 32 digits>.<16 random digits>"`. The counter
/// orders versions; the random part keeps versions made on two branches of a
/// thread apart, so each names its own value.
pub fn next_channel_version(current: Option<&Value>) -> Result<String> {
    let n: u64 = match current {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .ok_or_else(|| Error::invalid(format!("channel version {n} is negative")))?,
        Some(Value::String(s)) => s
            .split('.')
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "channel version {s:?} does not start with a counter"
                ))
            })?,
        Some(other) => {
            return Err(Error::invalid(format!(
                "channel version {other} is not a string or a number"
            )))
        }
    };
    let r = uuid::Uuid::now_v7();
    let mut tail = [0u8; 8];
    tail.copy_from_slice(&r.as_bytes()[8..16]);
    let fraction = u64::from_le_bytes(tail) % 10_000_000_000_000_000;
    Ok(format!("{:032}.{fraction:016}", n + 1))
}

/// The checkpoint threads a store handle has read or written: their folded
/// state, and a shared writer per thread written to.
#[derive(Default)]
pub(crate) struct Threads {
    states: Mutex<HashMap<String, Arc<Mutex<ThreadState>>>>,
    writers: Mutex<HashMap<String, Arc<SessionCore>>>,
}

impl std::fmt::Debug for Threads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Threads")
    }
}

/// The values one write adds to a thread: each once, however many channels
/// or writes carry it, and remembered (for the next delta and read) only once
/// the write succeeded.
#[derive(Default)]
struct NewValues(Vec<(String, Arc<Vec<u8>>)>);

impl NewValues {
    /// Whether value `id` is neither in the thread nor already in this write.
    fn is_new(&self, st: &ThreadState, id: &str) -> bool {
        !st.has_value(id) && !self.0.iter().any(|(w, _)| w == id)
    }

    fn add(&mut self, id: &str, bytes: Vec<u8>) {
        self.0.push((id.to_owned(), Arc::new(bytes)));
    }

    fn remember(self, st: &mut ThreadState) {
        for (id, bytes) in self.0 {
            st.remember(&id, bytes);
        }
    }
}

/// The checkpoint operations of one store, with its handle's [`Threads`].
pub(crate) struct Checkpoints<'a> {
    pub store: &'a StoreCore,
    pub threads: &'a Threads,
}

fn check_id(what: &str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid(format!("{what} is empty")));
    }
    Ok(())
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x == y => true,
            (Some(p), Some(q)) => (x.is_f64() || y.is_f64()) && p == q,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

impl Checkpoints<'_> {
    /// A new record: its `type`, then the time of writing (FORMAT.md §6),
    /// set by [`Checkpoints::append`] when it writes.
    fn record(&self, kind: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        m.insert("timestamp".into(), Value::Null);
        m
    }

    fn session_id(thread_id: &str) -> Result<String> {
        conversation_session_id(thread_id)
    }

    /// The thread's state, brought up to date, and whether it has a log.
    fn thread(&self, session_id: &str) -> Result<(Arc<Mutex<ThreadState>>, bool)> {
        let st = {
            let mut states = self.threads.states.lock();
            match states.get(session_id) {
                Some(s) => s.clone(),
                None => {
                    let path = self.store.log_path(session_id)?;
                    let s = Arc::new(Mutex::new(ThreadState::new(path, session_id)));
                    states.insert(session_id.to_owned(), s.clone());
                    s
                }
            }
        };
        let exists = st.lock().refresh()?;
        Ok((st, exists))
    }

    /// The thread's state, brought up to date; `None` when it has no log.
    fn state(&self, session_id: &str) -> Result<Option<Arc<Mutex<ThreadState>>>> {
        let (st, exists) = self.thread(session_id)?;
        Ok(exists.then_some(st))
    }

    /// Append records to a thread, in one write, creating its session first
    /// if needed; a record over the store's limit fails the call before
    /// anything is created or written.
    fn append(
        &self,
        thread_id: &str,
        session_id: &str,
        mut records: Vec<Map<String, Value>>,
    ) -> Result<()> {
        let max = Some(self.store.options().max_record_bytes);
        // Checked with a time of the length every time has.
        let stamp = |rs: &mut Vec<Map<String, Value>>, t: &str| {
            for r in rs.iter_mut().filter(|r| r.contains_key("timestamp")) {
                r.insert("timestamp".into(), t.into());
            }
        };
        stamp(&mut records, "2000-01-01T00:00:00.000Z");
        for r in &records {
            crate::log::writer::record_line(r, max)?;
        }
        let writer = self.writer(thread_id, session_id)?;
        // One time for the write, taken after a new thread's header.
        stamp(&mut records, &self.store.ids().timestamp());
        writer.append_records(records)
    }

    fn writer(&self, thread_id: &str, session_id: &str) -> Result<Arc<SessionCore>> {
        let mut writers = self.threads.writers.lock();
        if let Some(w) = writers.get(session_id) {
            if w.path().exists() {
                return Ok(w.clone());
            }
        }
        let w = Arc::new(self.store.open_conversation(thread_id)?);
        writers.insert(session_id.to_owned(), w.clone());
        Ok(w)
    }

    fn forget(&self, session_id: &str) {
        self.threads.states.lock().remove(session_id);
        self.threads.writers.lock().remove(session_id);
    }

    /// Store a checkpoint and the values of its new channel versions, in one
    /// write. A value the thread holds already is not written again; a new one
    /// is written as a delta against the value the parent checkpoint had for
    /// its channel.
    pub fn put(&self, thread_id: &str, put: CheckpointPut) -> Result<()> {
        let session_id = Self::session_id(thread_id)?;
        let id = match put.checkpoint.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => {
                return Err(Error::invalid(
                    "checkpoint has no \"id\" (a non-empty string)",
                ))
            }
        };
        if put.checkpoint.contains_key("channel_values") {
            return Err(Error::invalid(format!(
                "checkpoint {id} carries \"channel_values\": pass them as its values"
            )));
        }
        if let Some(p) = &put.parent_id {
            check_id("parent checkpoint id", p)?;
        }
        let (st, _) = self.thread(&session_id)?;
        let mut st = st.lock();
        let mut records = Vec::new();
        let mut written = NewValues::default();
        let mut refs = Vec::with_capacity(put.values.len());
        for cv in &put.values {
            let Some(v) = &cv.value else {
                refs.push((cv, None));
                continue;
            };
            let vid = values::value_id(&v.bytes);
            if written.is_new(&st, &vid) {
                let base = self.delta_base(&mut st, &put, &cv.channel);
                records.push(self.value_record(&vid, &v.bytes, base)?);
                written.add(&vid, v.bytes.clone());
            }
            refs.push((cv, Some((v.kind.clone(), vid))));
        }
        let mut rec = self.record(kind::CHECKPOINT);
        rec.insert("ns".into(), put.ns.clone().into());
        rec.insert("checkpointId".into(), id.into());
        rec.insert(
            "parentId".into(),
            put.parent_id.clone().map_or(Value::Null, Value::from),
        );
        rec.insert("checkpoint".into(), Value::Object(put.checkpoint));
        rec.insert("metadata".into(), Value::Object(put.metadata));
        let vals: Vec<Value> = refs
            .into_iter()
            .map(|(cv, r)| {
                let mut m = Map::new();
                m.insert("channel".into(), cv.channel.clone().into());
                m.insert("version".into(), cv.version.clone());
                m.insert(
                    "value".into(),
                    r.map_or(
                        Value::Null,
                        |(k, id)| serde_json::json!({"type": k, "id": id}),
                    ),
                );
                Value::Object(m)
            })
            .collect();
        rec.insert("values".into(), Value::Array(vals));
        records.push(rec);
        self.append(thread_id, &session_id, records)?;
        written.remember(&mut st);
        st.refresh()?;
        Ok(())
    }

    /// The `value` record of a value, as a delta against `base` when given
    /// and smaller; its encoded bytes go to `blobs/` when over the store's
    /// blob threshold (written first, so the record never names a missing blob).
    fn value_record(
        &self,
        id: &str,
        bytes: &[u8],
        base: Option<(String, Arc<Vec<u8>>)>,
    ) -> Result<Map<String, Value>> {
        let (encoding, payload, base) =
            match values::compress(bytes, base.as_ref().map(|(_, b)| b.as_slice()))? {
                Some(frame) => (values::Encoding::Zstd, frame, base.map(|(id, _)| id)),
                None => (values::Encoding::Identity, bytes.to_vec(), None),
            };
        let mut rec = self.record(kind::VALUE);
        rec.insert("id".into(), id.into());
        rec.insert("size".into(), bytes.len().into());
        rec.insert("encoding".into(), encoding.name().into());
        if let Some(b) = base {
            rec.insert("base".into(), b.into());
        }
        let options = self.store.options();
        if payload.len() > options.blob_threshold {
            let sync = options.durability != Durability::Never;
            let r = self.store.blobs().put(&payload, sync)?;
            rec.insert(
                "blob".into(),
                serde_json::json!({"sha256": r.sha256, "bytes": r.bytes}),
            );
        } else {
            let data = base64::engine::general_purpose::STANDARD.encode(&payload);
            rec.insert("data".into(), data.into());
        }
        Ok(rec)
    }

    /// The value `channel` had in the parent checkpoint, to write a delta
    /// against, unless its chain of deltas is already as long as allowed.
    fn delta_base(
        &self,
        st: &mut ThreadState,
        put: &CheckpointPut,
        channel: &str,
    ) -> Option<(String, Arc<Vec<u8>>)> {
        let parent = put.parent_id.as_ref()?;
        let space = st.namespaces.get(&put.ns)?;
        let cp = space.checkpoints.get(parent)?;
        let version = cp.checkpoint.get("channel_versions")?.get(channel)?;
        let r = space
            .versions
            .get(&(channel.to_owned(), thread::version_key(version)))?
            .as_ref()?
            .id
            .clone();
        if st.value_depth(&r)? + 1 >= values::MAX_DEPTH {
            return None;
        }
        let bytes = st.value(&r, self.store.blobs()).ok()?;
        Some((r, bytes))
    }

    /// Store the writes a task made, pending on a checkpoint.
    pub fn put_writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        writes: Vec<(String, TypedValue)>,
    ) -> Result<()> {
        check_id("checkpoint id", checkpoint_id)?;
        let session_id = Self::session_id(thread_id)?;
        let (st, _) = self.thread(&session_id)?;
        let mut st = st.lock();
        let mut records = Vec::new();
        let mut list = Vec::with_capacity(writes.len());
        let mut written = NewValues::default();
        for (i, (channel, v)) in writes.into_iter().enumerate() {
            let idx = SPECIAL_WRITE_INDEX
                .iter()
                .find(|(c, _)| *c == channel)
                .map_or(i as i64, |(_, n)| *n);
            let vid = values::value_id(&v.bytes);
            if written.is_new(&st, &vid) {
                records.push(self.value_record(&vid, &v.bytes, None)?);
                written.add(&vid, v.bytes);
            }
            list.push(serde_json::json!({
                "idx": idx,
                "channel": channel,
                "value": {"type": v.kind, "id": vid},
            }));
        }
        let mut rec = self.record(kind::WRITES);
        rec.insert("ns".into(), ns.into());
        rec.insert("checkpointId".into(), checkpoint_id.into());
        rec.insert("taskId".into(), task_id.into());
        rec.insert("taskPath".into(), task_path.into());
        rec.insert("writes".into(), Value::Array(list));
        records.push(rec);
        self.append(thread_id, &session_id, records)?;
        written.remember(&mut st);
        st.refresh()?;
        Ok(())
    }

    fn tuple(
        st: &mut ThreadState,
        ns: &str,
        id: &str,
        blobs: &crate::blobs::BlobStore,
    ) -> Result<Option<CheckpointTuple>> {
        let Some(space) = st.namespaces.get(ns) else {
            return Ok(None);
        };
        let Some(cp) = space.checkpoints.get(id).cloned() else {
            return Ok(None);
        };
        let refs: Vec<(String, ValueRef)> = space
            .value_refs(&cp)
            .into_iter()
            .map(|(c, r)| (c, r.clone()))
            .collect();
        let writes: Vec<thread::Write> = space.ordered_writes(id).into_iter().cloned().collect();
        let old_format = cp
            .checkpoint
            .get("v")
            .and_then(Value::as_f64)
            .is_some_and(|v| v < 4.0);
        let sends: Vec<ValueRef> = match (&cp.parent, old_format) {
            (Some(p), true) => space
                .ordered_writes(p)
                .into_iter()
                .filter(|w| w.channel == TASKS_CHANNEL)
                .map(|w| w.value.clone())
                .collect(),
            _ => Vec::new(),
        };
        let mut values = Vec::with_capacity(refs.len());
        for (c, r) in refs {
            values.push((c, st.typed(&r, blobs)?));
        }
        let writes = writes
            .iter()
            .map(|w| st.pending_write(w, blobs))
            .collect::<Result<Vec<_>>>()?;
        let pending_sends = sends
            .iter()
            .map(|r| st.typed(r, blobs))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(CheckpointTuple {
            pending_sends,
            thread_id: st.thread_id.clone(),
            ns: ns.to_owned(),
            id: id.to_owned(),
            parent_id: cp.parent,
            checkpoint: cp.checkpoint,
            metadata: cp.metadata,
            values,
            writes,
        }))
    }

    /// Checkpoint `checkpoint_id` of a thread's namespace, or its newest.
    pub fn get(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointTuple>> {
        let session_id = Self::session_id(thread_id)?;
        let Some(st) = self.state(&session_id)? else {
            return Ok(None);
        };
        let mut st = st.lock();
        let id = match checkpoint_id {
            Some(id) => id.to_owned(),
            None => match st
                .namespaces
                .get(ns)
                .and_then(|s| s.checkpoints.keys().next_back())
            {
                Some(id) => id.clone(),
                None => return Ok(None),
            },
        };
        Self::tuple(&mut st, ns, &id, self.store.blobs())
    }

    /// The checkpoints a session holds, oldest first in each namespace.
    pub fn summaries(&self, session_id: &str) -> Result<Vec<CheckpointSummary>> {
        crate::format::layout::check_session_id(session_id)?;
        let Some(st) = self.state(session_id)? else {
            return Err(Error::NotFound(format!("session {session_id}")));
        };
        let st = st.lock();
        let mut out = Vec::new();
        for (ns, space) in &st.namespaces {
            for (id, cp) in &space.checkpoints {
                out.push(CheckpointSummary {
                    ns: ns.clone(),
                    id: id.clone(),
                    parent_id: cp.parent.clone(),
                    ts: cp
                        .checkpoint
                        .get("ts")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    metadata: cp.metadata.clone(),
                    channels: space.value_refs(cp).into_iter().map(|(c, _)| c).collect(),
                    writes: space.writes.get(id).map_or(0, |w| w.len()),
                });
            }
        }
        Ok(out)
    }

    /// The session ids of every thread: each session of the store.
    fn all_sessions(&self) -> Result<Vec<String>> {
        self.store.log_ids()
    }

    /// Checkpoints matching `q`, newest first within each thread and namespace.
    pub fn list(&self, q: &CheckpointQuery) -> Result<Vec<CheckpointTuple>> {
        let sessions = match &q.thread_id {
            Some(t) => vec![Self::session_id(t)?],
            None => self.all_sessions()?,
        };
        let mut out = Vec::new();
        let mut left = q.limit;
        for sid in sessions {
            if left == Some(0) {
                break;
            }
            let Some(st) = self.state(&sid)? else {
                continue;
            };
            let mut st = st.lock();
            let mut picked: Vec<(String, String)> = Vec::new();
            for (ns, space) in &st.namespaces {
                if q.ns.as_ref().is_some_and(|n| n != ns) {
                    continue;
                }
                for (id, cp) in space.checkpoints.iter().rev() {
                    if left == Some(0) {
                        break;
                    }
                    if q.checkpoint_id.as_ref().is_some_and(|c| c != id)
                        || q.before.as_ref().is_some_and(|b| id >= b)
                    {
                        continue;
                    }
                    if let Some(f) = &q.filter {
                        let null = Value::Null;
                        if !f
                            .iter()
                            .all(|(k, v)| json_eq(v, cp.metadata.get(k).unwrap_or(&null)))
                        {
                            continue;
                        }
                    }
                    picked.push((ns.clone(), id.clone()));
                    if let Some(n) = left.as_mut() {
                        *n -= 1;
                    }
                }
            }
            for (ns, id) in picked {
                if let Some(t) = Self::tuple(&mut st, &ns, &id, self.store.blobs())? {
                    out.push(t);
                }
            }
        }
        Ok(out)
    }

    /// Move a thread's session to the trash (restorable, like any session).
    pub fn delete_thread(&self, thread_id: &str) -> Result<()> {
        let session_id = Self::session_id(thread_id)?;
        self.forget(&session_id);
        match self.store.trash_session(&session_id) {
            Err(Error::NotFound(_)) => Ok(()),
            other => other,
        }
    }

    /// Copy every checkpoint, write and value of `source` into `target`
    /// (created when it does not exist). The copy shares the values stored in
    /// `blobs/`; the source is unchanged. Nothing happens when `source` has no
    /// log.
    pub fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        let src = Self::session_id(source)?;
        let dst = Self::session_id(target)?;
        if src == dst {
            return Err(Error::invalid(format!(
                "copy of thread {source:?} onto itself"
            )));
        }
        let Some(st) = self.state(&src)? else {
            return Ok(());
        };
        let path = st.lock().path.clone();
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let end = memchr::memrchr(b'\n', &bytes).map_or(0, |e| e + 1);
        let mut records = Vec::new();
        for line in bytes[..end].split(|&b| b == b'\n') {
            if memchr::memmem::find(line, b"\"type\"").is_none() {
                continue;
            }
            let Ok(Value::Object(rec)) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if matches!(
                rec.get("type").and_then(Value::as_str),
                Some(kind::VALUE | kind::CHECKPOINT | kind::WRITES | kind::DROP)
            ) {
                records.push(rec);
            }
        }
        self.append(target, &dst, records)
    }

    /// Drop checkpoints (and their writes) from a thread's views with a `drop`
    /// record; the records stay in the log until it is rewritten.
    fn drop_checkpoints(&self, session_id: &str, ids: Vec<(String, Vec<String>)>) -> Result<()> {
        let ids: Vec<_> = ids.into_iter().filter(|(_, v)| !v.is_empty()).collect();
        if ids.is_empty() {
            return Ok(());
        }
        let thread_id = match self.state(session_id)? {
            Some(st) => st.lock().thread_id.clone(),
            None => return Ok(()),
        };
        let records = ids
            .into_iter()
            .map(|(ns, ids)| {
                let mut rec = self.record(kind::DROP);
                rec.insert("ns".into(), ns.into());
                rec.insert("checkpointIds".into(), ids.into());
                rec
            })
            .collect();
        self.append(&thread_id, session_id, records)
    }

    /// Keep only the newest checkpoint of each namespace, or delete the threads.
    pub fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        for t in thread_ids {
            match strategy {
                PruneStrategy::Delete => self.delete_thread(t)?,
                PruneStrategy::KeepLatest => {
                    let sid = Self::session_id(t)?;
                    let Some(st) = self.state(&sid)? else {
                        continue;
                    };
                    let drops = Self::select(&st.lock(), |space: &Namespace| {
                        let newest = space.checkpoints.keys().next_back().cloned();
                        space
                            .checkpoints
                            .keys()
                            .filter(|k| Some(*k) != newest.as_ref())
                            .cloned()
                            .collect()
                    });
                    self.drop_checkpoints(&sid, drops)?;
                }
            }
        }
        Ok(())
    }

    fn select(
        st: &ThreadState,
        pick: impl Fn(&Namespace) -> Vec<String>,
    ) -> Vec<(String, Vec<String>)> {
        st.namespaces
            .iter()
            .map(|(ns, space)| (ns.clone(), pick(space)))
            .collect()
    }

    /// Drop, in every thread, the checkpoints whose `metadata.run_id` is one
    /// of `run_ids`, with their writes.
    pub fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let runs: BTreeSet<&str> = run_ids.iter().map(String::as_str).collect();
        for sid in self.all_sessions()? {
            let Some(st) = self.state(&sid)? else {
                continue;
            };
            let drops = Self::select(&st.lock(), |space: &Namespace| {
                space
                    .checkpoints
                    .iter()
                    .filter(|(_, cp)| {
                        cp.metadata
                            .get("run_id")
                            .and_then(Value::as_str)
                            .is_some_and(|r| runs.contains(r))
                    })
                    .map(|(id, _)| id.clone())
                    .collect()
            });
            self.drop_checkpoints(&sid, drops)?;
        }
        Ok(())
    }

    /// Each channel's writes on the path to a checkpoint (newest of the
    /// namespace when `checkpoint_id` is `None`), back to the nearest
    /// ancestor storing a value for it (the seed), oldest first.
    pub fn delta_history(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
        channels: &[String],
    ) -> Result<Vec<DeltaHistory>> {
        let mut out: Vec<DeltaHistory> = channels
            .iter()
            .map(|c| DeltaHistory {
                channel: c.clone(),
                writes: Vec::new(),
                seed: None,
            })
            .collect();
        let session_id = Self::session_id(thread_id)?;
        let Some(st) = self.state(&session_id)? else {
            return Ok(out);
        };
        let mut st = st.lock();
        let blobs = self.store.blobs();
        let Some(space) = st.namespaces.get(ns) else {
            return Ok(out);
        };
        let target = match checkpoint_id {
            Some(id) => id.to_owned(),
            None => match space.checkpoints.keys().next_back() {
                Some(id) => id.clone(),
                None => return Ok(out),
            },
        };
        // The ancestors, nearest first, each with its values and its writes.
        let mut chain = Vec::new();
        let mut at = space
            .checkpoints
            .get(&target)
            .and_then(|c| c.parent.clone());
        let mut seen = BTreeSet::new();
        while let Some(id) = at {
            let Some(cp) = space.checkpoints.get(&id) else {
                break;
            };
            if !seen.insert(id.clone()) {
                break;
            }
            let refs: HashMap<String, ValueRef> = space
                .value_refs(cp)
                .into_iter()
                .map(|(c, r)| (c, r.clone()))
                .collect();
            let writes: Vec<thread::Write> =
                space.ordered_writes(&id).into_iter().cloned().collect();
            chain.push((refs, writes));
            at = cp.parent.clone();
        }
        let mut remaining: BTreeSet<usize> = (0..out.len()).collect();
        for (refs, writes) in chain {
            if remaining.is_empty() {
                break;
            }
            let mut ended = Vec::new();
            for &i in &remaining {
                if let Some(r) = refs.get(&out[i].channel) {
                    out[i].seed = Some(st.typed(r, blobs)?);
                    ended.push(i);
                }
            }
            for w in writes.iter().rev() {
                for &i in &remaining {
                    if out[i].channel == w.channel {
                        out[i].writes.push(st.pending_write(w, blobs)?);
                    }
                }
            }
            for i in ended {
                remaining.remove(&i);
            }
        }
        for h in &mut out {
            h.writes.reverse();
        }
        Ok(out)
    }
}
