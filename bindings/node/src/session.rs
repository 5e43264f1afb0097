//! `NativeSession` and `NativeSubagent`: a session or a subagent's sidechain
//! open for writing (the C ABI's `sk_session` and `sk_subagent`).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use sessionkit::{CompactionPolicy, Message, ModelViewOptions, RewindMode};

use crate::view::{pages, NativeView, Pages};
use crate::{job, job_as, parse_arg, parse_objects, sync_error, text, Handle, Job};

type Str = AsyncTask<Job<String, String>>;
type Unit = AsyncTask<Job<(), ()>>;

#[napi]
pub struct NativeSession {
    id: String,
    h: Arc<Handle<sessionkit::Session>>,
}

impl NativeSession {
    pub(crate) fn new(s: sessionkit::Session) -> NativeSession {
        let id = s.id().to_string();
        NativeSession {
            h: Handle::new(format!("session {id}"), s),
            id,
        }
    }

    fn call<R: Send + 'static + ToNapiValue + TypeName>(
        &self,
        f: impl FnOnce(&sessionkit::Session) -> sessionkit::Result<R> + Send + 'static,
    ) -> AsyncTask<Job<R, R>> {
        let h = self.h.clone();
        job(move || h.with(f))
    }
}

fn paths_of(paths: &str) -> sessionkit::Result<Vec<String>> {
    match parse_arg(paths, "paths")? {
        Value::Array(ps) if ps.iter().all(Value::is_string) => Ok(ps
            .into_iter()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect()),
        other => Err(sessionkit::Error::InvalidInput(format!(
            "argument `paths` must be an array of strings, not {}",
            sessionkit::type_name(&other)
        ))),
    }
}

fn ids_of(ids: &str, name: &str) -> sessionkit::Result<Vec<String>> {
    match parse_arg(ids, name)? {
        Value::Array(ps) if ps.iter().all(Value::is_string) => Ok(ps
            .into_iter()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect()),
        other => Err(sessionkit::Error::InvalidInput(format!(
            "argument `{name}` must be an array of message ids (strings), not {}",
            sessionkit::type_name(&other)
        ))),
    }
}

/// The groups' texts parsed, each on its own: a group that is not an array
/// of objects gets its own INVALID_INPUT in the results, in its place, and
/// is not handed to the core (as the core leaves out a group it refuses).
fn append_groups(
    groups: Vec<String>,
    append: impl FnOnce(Vec<Vec<Value>>) -> sessionkit::Result<Vec<sessionkit::Result<Vec<Message>>>>,
) -> sessionkit::Result<String> {
    let mut parsed = Vec::with_capacity(groups.len());
    let mut refused = Vec::with_capacity(groups.len());
    for g in &groups {
        match parse_objects(g, "messages", true) {
            Ok(ms) => {
                parsed.push(ms);
                refused.push(None);
            }
            Err(e) => refused.push(Some(e)),
        }
    }
    let mut appended = append(parsed)?.into_iter();
    let results: Vec<_> = refused
        .into_iter()
        .map(|r| match r {
            Some(e) => Err(e),
            None => appended.next().unwrap_or_else(|| {
                Err(sessionkit::Error::Internal(
                    "a group without a result".into(),
                ))
            }),
        })
        .collect();
    Ok(sessionkit::group_results_json(&results))
}

#[napi]
impl NativeSession {
    /// Flush the index entry and release the lock, on the pool (it waits for
    /// calls in flight). Closing a closed session does nothing.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> Unit {
        let h = self.h.clone();
        job(move || match h.take() {
            Some(s) => s.close(),
            None => Ok(()),
        })
    }

    /// Delete the session for good and start it again under its id: this
    /// handle is closed, the new one resolved.
    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn erase(&self) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        let h = self.h.clone();
        job_as(NativeSession::new, move || h.take_open()?.erase())
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.h.is_closed()
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The session's info as JSON text (kept in memory).
    #[napi]
    pub fn info(&self, env: Env) -> Result<String> {
        self.h
            .with(|s| text(&s.info()))
            .map_err(|e| sync_error(&env, &e))
    }

    #[napi]
    pub fn head(&self, env: Env) -> Result<Option<String>> {
        self.h
            .with(|s| Ok(s.head()))
            .map_err(|e| sync_error(&env, &e))
    }

    #[napi(getter)]
    pub fn shared(&self, env: Env) -> Result<bool> {
        self.h
            .with(|s| Ok(s.is_shared()))
            .map_err(|e| sync_error(&env, &e))
    }

    #[napi]
    pub fn fsync_count(&self, env: Env) -> Result<i64> {
        self.h
            .with(|s| Ok(s.fsync_count() as i64))
            .map_err(|e| sync_error(&env, &e))
    }

    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn last_snapshot(&self) -> AsyncTask<Job<Option<String>, Option<String>>> {
        self.call(|s| s.last_snapshot())
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn append(&self, message: String) -> Str {
        self.call(move |s| Ok(s.append(parse_arg(&message, "message")?)?.json().to_owned()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn append_batch(&self, messages: String) -> Str {
        self.call(move |s| {
            let ms = parse_objects(&messages, "messages", true)?;
            Ok(sessionkit::to_json_array(&s.append_batch(ms)?))
        })
    }

    /// Append groups of messages in one write (`groups`: each group's JSON
    /// array text), each group checked by the core as if appended alone;
    /// the core's result per group as JSON text (`[{"ok": [...]} |
    /// {"error": {code, message, errno}}, ...]`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn append_groups(&self, groups: Vec<String>) -> Str {
        self.call(move |s| append_groups(groups, |gs| s.append_groups(gs)))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn update_state(&self, state: String) -> Str {
        self.call(move |s| text(&s.update_state(parse_arg(&state, "state")?)?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn patch_message(&self, message_id: String, patch: String) -> Unit {
        self.call(move |s| s.patch_message(&message_id, parse_arg(&patch, "patch")?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_head(&self, message_id: Option<String>) -> Unit {
        self.call(move |s| s.set_head(message_id.as_deref()))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn resume_at(&self, message_id: String) -> Unit {
        self.call(move |s| s.resume_at(&message_id))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rename(&self, title: String) -> Str {
        self.call(move |s| text(&s.rename(&title)?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn sync(&self) -> Unit {
        self.call(|s| s.sync())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn flush_index(&self) -> Unit {
        self.call(|s| s.flush_index())
    }

    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn read(&self) -> AsyncTask<Job<sessionkit::SessionView, NativeView>> {
        let h = self.h.clone();
        job_as(NativeView::new, move || h.with(|s| s.read()))
    }

    #[napi(ts_return_type = "Promise<NativePages>")]
    pub fn active_path(&self) -> Pages {
        let h = self.h.clone();
        pages(move || h.with(|s| s.active_path()))
    }

    #[napi(ts_return_type = "Promise<NativePages>")]
    pub fn model_view(&self, options: Option<String>) -> Pages {
        let h = self.h.clone();
        pages(move || {
            let opts = crate::options(options.as_deref(), ModelViewOptions::from_json)?;
            h.with(|s| s.model_view(&opts))
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn select_compaction(&self, policy: String) -> Str {
        self.call(move |s| text(&s.select_compaction(&CompactionPolicy::from_json(&policy)?)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn apply_compaction(&self, replaces: String, summary: String) -> Str {
        self.call(move |s| {
            let replaces = ids_of(&replaces, "replaces")?;
            let summary = parse_arg(&summary, "summary")?;
            Ok(s.apply_compaction(&replaces, summary)?.json().to_owned())
        })
    }

    #[napi(ts_return_type = "Promise<NativeSubagent>")]
    pub fn spawn_subagent(
        &self,
        agent_id: Option<String>,
        meta: Option<String>,
    ) -> AsyncTask<Job<sessionkit::Subagent, NativeSubagent>> {
        let h = self.h.clone();
        job_as(NativeSubagent::new, move || {
            let meta = match meta {
                Some(m) => parse_arg(&m, "meta")?,
                None => Value::Object(Default::default()),
            };
            h.with(|s| s.spawn_subagent(agent_id.as_deref(), meta))
        })
    }

    #[napi(ts_return_type = "Promise<NativeSubagent>")]
    pub fn open_subagent(
        &self,
        agent_id: String,
    ) -> AsyncTask<Job<sessionkit::Subagent, NativeSubagent>> {
        let h = self.h.clone();
        job_as(NativeSubagent::new, move || {
            h.with(|s| s.open_subagent(&agent_id))
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn user_input(&self, message: String) -> Str {
        self.call(move |s| {
            Ok(s.user_input(parse_arg(&message, "message")?)?
                .json()
                .to_owned())
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn track_read(&self, paths: String) -> Unit {
        self.call(move |s| s.track_read(&paths_of(&paths)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn before_edit(&self, paths: String) -> Str {
        self.call(move |s| s.before_edit(&paths_of(&paths)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn after_edit(&self, paths: String) -> Str {
        self.call(move |s| s.after_edit(&paths_of(&paths)?))
    }

    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn tracked_files(&self) -> AsyncTask<Job<Vec<String>, Vec<String>>> {
        self.call(|s| s.tracked_files())
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn external_changes(&self, paths: String) -> Str {
        self.call(move |s| text(&s.external_changes(&paths_of(&paths)?)?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn ensure_unchanged(&self, paths: String) -> Unit {
        self.call(move |s| s.ensure_unchanged_since_read(&paths_of(&paths)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn undo_candidates(&self) -> Str {
        self.call(|s| text(&s.undo_candidates()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rewind_plan(&self, message_id: String) -> Str {
        self.call(move |s| text(&s.rewind_plan(&message_id)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rewind_preview(&self, message_id: String, mode: String) -> Str {
        self.call(move |s| {
            let mode: RewindMode = mode.parse()?;
            text(&s.rewind_preview(&message_id, mode)?)
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rewind(&self, message_id: String, mode: String, force: bool) -> Str {
        self.call(move |s| {
            let mode: RewindMode = mode.parse()?;
            text(&s.rewind(&message_id, mode, force)?)
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rewind_turns(&self, turns: u32, mode: String, force: bool) -> Str {
        self.call(move |s| {
            let mode: RewindMode = mode.parse()?;
            text(&s.rewind_turns(turns as usize, mode, force)?)
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn snapshot_plan(&self, snapshot: String) -> Str {
        self.call(move |s| text(&s.snapshot_plan(&snapshot)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn restore_snapshot(&self, snapshot: String, force: bool) -> Str {
        self.call(move |s| text(&s.restore_snapshot(&snapshot, force)?))
    }

    /// The session as OpenAI Responses items (JSON text of an array).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn responses_items(&self, limit: Option<u32>, model_view: Option<bool>) -> Str {
        self.call(move |s| {
            s.responses_items(limit.map(|l| l as usize), model_view.unwrap_or(false))
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn append_responses_items(&self, items: String) -> Unit {
        self.call(move |s| {
            s.append_responses_items(parse_objects(&items, "items", false)?)
                .map(drop)
        })
    }

    /// Make the items (a `compaction` item, then the items kept after it) the
    /// history as the model sees it, the originals kept and marked compacted.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn replace_responses_items_with_compaction(&self, items: String) -> Unit {
        self.call(move |s| {
            s.replace_responses_items_with_compaction(parse_objects(&items, "items", false)?)
                .map(drop)
        })
    }

    /// The last item (JSON text) with the head moved back before it, or null.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn pop_responses_item(&self) -> AsyncTask<Job<Option<String>, Option<String>>> {
        self.call(|s| s.pop_responses_item())
    }
}

#[napi]
pub struct NativeSubagent {
    id: String,
    session_id: String,
    h: Arc<Handle<sessionkit::Subagent>>,
}

impl NativeSubagent {
    fn new(a: sessionkit::Subagent) -> NativeSubagent {
        let (id, session_id) = (a.id().to_string(), a.session_id().to_string());
        NativeSubagent {
            h: Handle::new(format!("subagent {id} of session {session_id}"), a),
            id,
            session_id,
        }
    }

    fn call<R: Send + 'static + ToNapiValue + TypeName>(
        &self,
        f: impl FnOnce(&sessionkit::Subagent) -> sessionkit::Result<R> + Send + 'static,
    ) -> AsyncTask<Job<R, R>> {
        let h = self.h.clone();
        job(move || h.with(f))
    }
}

#[napi]
impl NativeSubagent {
    /// Release the sidechain's lock. Closing a closed subagent does nothing.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> Unit {
        let h = self.h.clone();
        job(move || {
            drop(h.take());
            Ok(())
        })
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.h.is_closed()
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.session_id.clone()
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn append(&self, message: String) -> Str {
        self.call(move |a| Ok(a.append(parse_arg(&message, "message")?)?.json().to_owned()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn append_batch(&self, messages: String) -> Str {
        self.call(move |a| {
            let ms = parse_objects(&messages, "messages", true)?;
            Ok(sessionkit::to_json_array(&a.append_batch(ms)?))
        })
    }

    /// Append groups of messages in one write (`groups`: each group's JSON
    /// array text), each group checked by the core as if appended alone;
    /// the core's result per group as JSON text (`[{"ok": [...]} |
    /// {"error": {code, message, errno}}, ...]`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn append_groups(&self, groups: Vec<String>) -> Str {
        self.call(move |a| append_groups(groups, |gs| a.append_groups(gs)))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn finish(&self, result: String, failed: bool) -> Unit {
        self.call(move |a| a.finish(parse_arg(&result, "result")?, failed))
    }

    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn read(&self) -> AsyncTask<Job<sessionkit::SessionView, NativeView>> {
        let h = self.h.clone();
        job_as(NativeView::new, move || h.with(|a| a.read()))
    }
}
