//! The checkpoint methods of `NativeStore` (LangGraph's saver, `sessionkit/langgraph`).
//! Structure crosses as JSON text; the serializer's bytes cross as Buffers,
//! which the JSON names by index (`{"type": "json", "index": 0}`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{json, Map, Value};
use sessionkit::{
    ChannelValue, CheckpointPut, CheckpointQuery, CheckpointTuple, PendingWrite, TypedValue,
};

use crate::store::NativeStore;
use crate::{job_as, sync_error, text, Job};

/// Checkpoints as JSON text, and the bytes of their values.
#[napi(object)]
pub struct StoredCheckpoints {
    pub json: String,
    pub buffers: Vec<Buffer>,
}

type Out = (String, Vec<Vec<u8>>);

fn out((json, buffers): Out) -> StoredCheckpoints {
    StoredCheckpoints {
        json,
        buffers: buffers.into_iter().map(Buffer::from).collect(),
    }
}

fn invalid(what: String) -> sessionkit::Error {
    sessionkit::Error::InvalidInput(what)
}

fn parse(what: &str, text: &str) -> sessionkit::Result<Value> {
    sessionkit::parse_json(what, text)
}

/// `{"type": ..., "index": i}` → the value, its bytes taken from `buffers`.
fn typed(v: &Value, buffers: &mut [Option<Vec<u8>>], what: &str) -> sessionkit::Result<TypedValue> {
    let kind = v.get("type").and_then(Value::as_str);
    let index = v.get("index").and_then(Value::as_u64);
    let (Some(kind), Some(i)) = (kind, index) else {
        return Err(invalid(format!("{what} must be {{type, index}}")));
    };
    let bytes = buffers
        .get_mut(i as usize)
        .and_then(Option::take)
        .ok_or_else(|| {
            invalid(format!(
                "{what} names buffer {i}, which is missing or used twice"
            ))
        })?;
    Ok(TypedValue {
        kind: kind.to_owned(),
        bytes,
    })
}

fn object(v: Option<&Value>, what: &str) -> sessionkit::Result<Map<String, Value>> {
    match v {
        Some(Value::Object(m)) => Ok(m.clone()),
        None | Some(Value::Null) => Ok(Map::new()),
        Some(other) => Err(invalid(format!(
            "{what} must be an object, not {}",
            sessionkit::type_name(other)
        ))),
    }
}

fn opt_str(v: Option<&Value>, what: &str) -> sessionkit::Result<Option<String>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(format!(
            "{what} must be a string, not {}",
            sessionkit::type_name(other)
        ))),
    }
}

struct Collect(Vec<Vec<u8>>);

impl Collect {
    fn typed(&mut self, v: &TypedValue) -> Value {
        self.0.push(v.bytes.clone());
        json!({"type": v.kind, "index": self.0.len() - 1})
    }

    fn write(&mut self, w: &PendingWrite) -> Value {
        json!({"taskId": w.task_id, "channel": w.channel, "value": self.typed(&w.value),
               "taskPath": w.task_path, "idx": w.idx})
    }

    fn tuple(&mut self, t: &CheckpointTuple) -> Value {
        let values: Map<String, Value> = t
            .values
            .iter()
            .map(|(c, v)| (c.clone(), self.typed(v)))
            .collect();
        let writes: Vec<Value> = t.writes.iter().map(|w| self.write(w)).collect();
        let sends: Vec<Value> = t.pending_sends.iter().map(|v| self.typed(v)).collect();
        json!({"threadId": t.thread_id, "ns": t.ns, "id": t.id, "parentId": t.parent_id,
               "checkpoint": t.checkpoint, "metadata": t.metadata, "values": values, "writes": writes,
               "pendingSends": sends})
    }
}

fn buffers(bs: Vec<Buffer>) -> Vec<Option<Vec<u8>>> {
    bs.into_iter().map(|b| Some(b.to_vec())).collect()
}

#[napi]
impl NativeStore {
    /// `put`: `{ns, checkpoint, metadata, parentId, values: [{channel, version, value: {type, index} | null}]}`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint_put(
        &self,
        thread_id: String,
        put: String,
        values: Vec<Buffer>,
    ) -> AsyncTask<Job<(), ()>> {
        let mut bytes = buffers(values);
        self.call(move |s| {
            let p = parse("checkpoint put", &put)?;
            let mut vals = Vec::new();
            for (i, v) in p
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let what = format!("values[{i}]");
                let channel = v
                    .get("channel")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid(format!("{what}.channel must be a string")))?;
                let value = match v.get("value") {
                    None | Some(Value::Null) => None,
                    Some(t) => Some(typed(t, &mut bytes, &format!("{what}.value"))?),
                };
                vals.push(ChannelValue {
                    channel: channel.to_owned(),
                    version: v.get("version").cloned().unwrap_or(Value::Null),
                    value,
                });
            }
            let put = CheckpointPut {
                ns: opt_str(p.get("ns"), "ns")?.unwrap_or_default(),
                checkpoint: object(p.get("checkpoint"), "checkpoint")?,
                metadata: object(p.get("metadata"), "metadata")?,
                parent_id: opt_str(p.get("parentId"), "parentId")?,
                values: vals,
            };
            s.checkpoint_put(&thread_id, put)
        })
    }

    /// `putWrites`: `writes` is `[{channel, value: {type, index}}]`.
    #[napi(ts_return_type = "Promise<void>")]
    #[allow(clippy::too_many_arguments)]
    pub fn checkpoint_put_writes(
        &self,
        thread_id: String,
        ns: String,
        checkpoint_id: String,
        task_id: String,
        task_path: String,
        writes: String,
        values: Vec<Buffer>,
    ) -> AsyncTask<Job<(), ()>> {
        let mut bytes = buffers(values);
        self.call(move |s| {
            let w = parse("checkpoint writes", &writes)?;
            let list = w
                .as_array()
                .ok_or_else(|| invalid("writes must be an array".into()))?;
            let mut out = Vec::with_capacity(list.len());
            for (i, x) in list.iter().enumerate() {
                let channel = x
                    .get("channel")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid(format!("writes[{i}].channel must be a string")))?;
                let value = x
                    .get("value")
                    .ok_or_else(|| invalid(format!("writes[{i}] has no value")))?;
                out.push((
                    channel.to_owned(),
                    typed(value, &mut bytes, &format!("writes[{i}].value"))?,
                ));
            }
            s.checkpoint_put_writes(&thread_id, &ns, &checkpoint_id, &task_id, &task_path, out)
        })
    }

    /// One checkpoint (`json` is `null` when there is none).
    #[napi(ts_return_type = "Promise<StoredCheckpoints>")]
    pub fn checkpoint_get(
        &self,
        thread_id: String,
        ns: String,
        checkpoint_id: Option<String>,
    ) -> AsyncTask<Job<Out, StoredCheckpoints>> {
        let h = self.handle();
        job_as(out, move || {
            h.with(|s| {
                let t = s.checkpoint_get(&thread_id, &ns, checkpoint_id.as_deref())?;
                let mut c = Collect(Vec::new());
                let v = t.map_or(Value::Null, |t| c.tuple(&t));
                Ok((text(&v)?, c.0))
            })
        })
    }

    /// `query`: `{threadId, ns, checkpointId, filter, before, limit}`, each optional.
    #[napi(ts_return_type = "Promise<StoredCheckpoints>")]
    pub fn checkpoint_list(&self, query: String) -> AsyncTask<Job<Out, StoredCheckpoints>> {
        let h = self.handle();
        job_as(out, move || {
            h.with(|s| {
                let q = parse("checkpoint query", &query)?;
                let filter = match q.get("filter") {
                    None | Some(Value::Null) => None,
                    f => Some(object(f, "filter")?),
                };
                let limit = match q.get("limit") {
                    None | Some(Value::Null) => None,
                    Some(l) => Some(l.as_u64().ok_or_else(|| {
                        invalid(format!("limit must be a non-negative integer, not {l}"))
                    })? as usize),
                };
                let query = CheckpointQuery {
                    thread_id: opt_str(q.get("threadId"), "threadId")?,
                    ns: opt_str(q.get("ns"), "ns")?,
                    checkpoint_id: opt_str(q.get("checkpointId"), "checkpointId")?,
                    filter,
                    before: opt_str(q.get("before"), "before")?,
                    limit,
                };
                let ts = s.checkpoint_list(&query)?;
                let mut c = Collect(Vec::new());
                let v: Vec<Value> = ts.iter().map(|t| c.tuple(t)).collect();
                Ok((text(&v)?, c.0))
            })
        })
    }

    /// The checkpoints a session holds, without their values (JSON text).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn checkpoint_summaries(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.checkpoint_summaries(&session_id)?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint_delete_thread(&self, thread_id: String) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.checkpoint_delete_thread(&thread_id))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint_copy_thread(&self, source: String, target: String) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.checkpoint_copy_thread(&source, &target))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint_prune(
        &self,
        thread_ids: Vec<String>,
        strategy: String,
    ) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.checkpoint_prune(&thread_ids, strategy.parse()?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint_delete_for_runs(&self, run_ids: Vec<String>) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.checkpoint_delete_for_runs(&run_ids))
    }

    /// `{[channel]: {writes, seed?}}` as JSON, values by buffer index.
    #[napi(ts_return_type = "Promise<StoredCheckpoints>")]
    pub fn checkpoint_delta_history(
        &self,
        thread_id: String,
        ns: String,
        checkpoint_id: Option<String>,
        channels: Vec<String>,
    ) -> AsyncTask<Job<Out, StoredCheckpoints>> {
        let h = self.handle();
        job_as(out, move || {
            h.with(|s| {
                let hs = s.checkpoint_delta_history(
                    &thread_id,
                    &ns,
                    checkpoint_id.as_deref(),
                    &channels,
                )?;
                let mut c = Collect(Vec::new());
                let mut m = Map::new();
                for h in hs {
                    let mut e = Map::new();
                    e.insert(
                        "writes".into(),
                        Value::Array(h.writes.iter().map(|w| c.write(w)).collect()),
                    );
                    if let Some(seed) = &h.seed {
                        e.insert("seed".into(), c.typed(seed));
                    }
                    m.insert(h.channel, Value::Object(e));
                }
                Ok((text(&Value::Object(m))?, c.0))
            })
        })
    }
}

/// The channel version after `current` (JSON text of `null`, a number or a
/// version this made), for a saver's `getNextVersion`.
#[napi]
pub fn next_channel_version(env: Env, current: Option<String>) -> Result<String> {
    let v = match current.as_deref() {
        None => None,
        Some(t) => Some(parse("current", t).map_err(|e| sync_error(&env, &e))?),
    };
    sessionkit::next_channel_version(v.as_ref()).map_err(|e| sync_error(&env, &e))
}
