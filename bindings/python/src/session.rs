//! `Session` and `Subagent`: a session or a subagent's sidechain open for
//! writing (the C ABI's `sk_session` and `sk_subagent`).

use parking_lot::RwLock;
use pyo3::prelude::*;
use serde_json::Value;
use sessionkit::{CompactionPolicy, ModelViewOptions, RewindMode};

use crate::store::options;
use crate::view::SessionView;
use crate::{
    arg_bool, arg_int, arg_paths, arg_str, detach, dumps, error, invalid, json_py, message_py,
    messages_py, opt_int, opt_str, to_json, to_objects, to_py,
};

/// A handle that holds a lock until it is closed: shared by any number of
/// threads, each call holding it for reading; `close` takes it for writing, so
/// it waits for calls in flight, and every later call raises.
pub(crate) struct Handle<T> {
    what: String,
    inner: RwLock<Option<T>>,
}

impl<T: Send + Sync> Handle<T> {
    fn new(what: String, value: T) -> Handle<T> {
        Handle {
            what,
            inner: RwLock::new(Some(value)),
        }
    }

    /// Run `f` on the open handle with the GIL released.
    fn call<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&T) -> sessionkit::Result<R> + Send,
    ) -> PyResult<R> {
        let r = py.detach(|| self.inner.read().as_ref().map(f));
        match r {
            Some(r) => r.map_err(|e| error(py, &e)),
            None => Err(self.closed(py)),
        }
    }

    /// Run `f` on the open handle, holding the GIL (quick accessors).
    fn get<R>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R) -> PyResult<R> {
        match self.inner.read().as_ref() {
            Some(v) => Ok(f(v)),
            None => Err(self.closed(py)),
        }
    }

    fn closed(&self, py: Python<'_>) -> PyErr {
        invalid(py, format!("{} is closed", self.what))
    }

    /// Take the handle out for closing; `None` if it was closed already.
    fn take(&self, py: Python<'_>) -> Option<T> {
        py.detach(|| self.inner.write().take())
    }

    fn is_closed(&self) -> bool {
        self.inner.read().is_none()
    }
}

fn model_view_options(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<ModelViewOptions> {
    options(py, value, "options", ModelViewOptions::from_json)
}

#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Session {
    id: String,
    h: Handle<sessionkit::Session>,
}

impl Session {
    pub(crate) fn new(s: sessionkit::Session) -> Session {
        let id = s.id().to_string();
        Session {
            h: Handle::new(format!("session {id}"), s),
            id,
        }
    }
}

#[pymethods]
impl Session {
    /// Flush the index entry and release the lock. Closing a closed session
    /// does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        match self.h.take(py) {
            Some(s) => detach(py, || s.close()),
            None => Ok(()),
        }
    }

    /// Delete the session for good and start it again under its id: this
    /// handle is closed, the new one returned.
    fn erase(&self, py: Python<'_>) -> PyResult<Session> {
        let Some(s) = self.h.take(py) else {
            return Err(self.h.closed(py));
        };
        let s = detach(py, || s.erase())?;
        Ok(Session::new(s))
    }

    #[getter]
    fn closed(&self) -> bool {
        self.h.is_closed()
    }

    #[getter]
    fn id(&self) -> String {
        self.id.clone()
    }

    fn info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = self.h.get(py, |s| s.info())?;
        to_py(py, &v)
    }

    fn head(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.h.get(py, |s| s.head())
    }

    #[getter]
    fn shared(&self, py: Python<'_>) -> PyResult<bool> {
        self.h.get(py, |s| s.is_shared())
    }

    fn last_snapshot(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.h.call(py, |s| s.last_snapshot())
    }

    fn fsync_count(&self, py: Python<'_>) -> PyResult<u64> {
        self.h.get(py, |s| s.fsync_count())
    }

    fn append(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let m = to_json(py, message, "message")?;
        let text = self.h.call(py, |s| s.append(m))?;
        message_py(py, &text)
    }

    fn append_batch(&self, py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let ms = to_objects(py, messages, "messages")?;
        let text = self.h.call(py, |s| s.append_batch(ms))?;
        messages_py(py, &text)
    }

    /// Append groups of messages in one write; the JSON text of a result per
    /// group (`{"ok": [messages]}` or `{"error": {code, message, errno}}`).
    fn append_groups(&self, py: Python<'_>, groups: &Bound<'_, PyAny>) -> PyResult<String> {
        let gs = arg_groups(py, groups)?;
        let results = self.h.call(py, |s| s.append_groups(gs))?;
        Ok(sessionkit::group_results_json(&results))
    }

    fn update_state(&self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let v = to_json(py, state, "state")?;
        let e = self.h.call(py, |s| s.update_state(v))?;
        to_py(py, &e)
    }

    fn patch_message(
        &self,
        py: Python<'_>,
        message_id: &Bound<'_, PyAny>,
        patch: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id = arg_str(py, message_id, "message_id")?;
        let p = to_json(py, patch, "patch")?;
        self.h.call(py, |s| s.patch_message(&id, p))
    }

    #[pyo3(signature = (message_id=None))]
    fn set_head(&self, py: Python<'_>, message_id: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let id = opt_str(py, message_id, "message_id")?;
        self.h.call(py, |s| s.set_head(id.as_deref()))
    }

    fn resume_at(&self, py: Python<'_>, message_id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = arg_str(py, message_id, "message_id")?;
        self.h.call(py, |s| s.resume_at(&id))
    }

    fn rename(&self, py: Python<'_>, title: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let title = arg_str(py, title, "title")?;
        let e = self.h.call(py, |s| s.rename(&title))?;
        to_py(py, &e)
    }

    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        self.h.call(py, |s| s.sync())
    }

    fn flush_index(&self, py: Python<'_>) -> PyResult<()> {
        self.h.call(py, |s| s.flush_index())
    }

    fn read(&self, py: Python<'_>) -> PyResult<SessionView> {
        self.h.call(py, |s| s.read()).map(SessionView::new)
    }

    fn active_path(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = self.h.call(py, |s| s.active_path())?;
        messages_py(py, &text)
    }

    #[pyo3(signature = (options=None))]
    fn model_view(
        &self,
        py: Python<'_>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let opts = model_view_options(py, options)?;
        let text = self.h.call(py, |s| s.model_view(&opts))?;
        messages_py(py, &text)
    }

    fn select_compaction(&self, py: Python<'_>, policy: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let policy = CompactionPolicy::from_json(&dumps(py, policy, "policy")?)
            .map_err(|e| error(py, &e))?;
        let plan = self.h.call(py, |s| s.select_compaction(&policy))?;
        to_py(py, &plan)
    }

    fn apply_compaction(
        &self,
        py: Python<'_>,
        replaces: &Bound<'_, PyAny>,
        summary: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let replaces = arg_ids(py, replaces, "replaces")?;
        let summary = to_json(py, summary, "summary")?;
        let text = self
            .h
            .call(py, |s| s.apply_compaction(&replaces, summary))?;
        message_py(py, &text)
    }

    #[pyo3(signature = (agent_id=None, meta=None))]
    fn spawn_subagent(
        &self,
        py: Python<'_>,
        agent_id: Option<&Bound<'_, PyAny>>,
        meta: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Subagent> {
        let aid = opt_str(py, agent_id, "agent_id")?;
        let meta = match meta {
            Some(m) if !m.is_none() => to_json(py, m, "meta")?,
            _ => Value::Object(Default::default()),
        };
        self.h
            .call(py, |s| s.spawn_subagent(aid.as_deref(), meta))
            .map(Subagent::new)
    }

    fn open_subagent(&self, py: Python<'_>, agent_id: &Bound<'_, PyAny>) -> PyResult<Subagent> {
        let aid = arg_str(py, agent_id, "agent_id")?;
        self.h
            .call(py, |s| s.open_subagent(&aid))
            .map(Subagent::new)
    }

    fn user_input(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let m = to_json(py, message, "message")?;
        let text = self.h.call(py, |s| s.user_input(m))?;
        message_py(py, &text)
    }

    fn track_read(&self, py: Python<'_>, paths: &Bound<'_, PyAny>) -> PyResult<()> {
        let paths = arg_paths(py, paths)?;
        self.h.call(py, |s| s.track_read(&paths))
    }

    fn before_edit(&self, py: Python<'_>, paths: &Bound<'_, PyAny>) -> PyResult<String> {
        let paths = arg_paths(py, paths)?;
        self.h.call(py, |s| s.before_edit(&paths))
    }

    fn after_edit(&self, py: Python<'_>, paths: &Bound<'_, PyAny>) -> PyResult<String> {
        let paths = arg_paths(py, paths)?;
        self.h.call(py, |s| s.after_edit(&paths))
    }

    fn tracked_files(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.h.call(py, |s| s.tracked_files())
    }

    fn external_changes(&self, py: Python<'_>, paths: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let paths = arg_paths(py, paths)?;
        let v = self.h.call(py, |s| s.external_changes(&paths))?;
        to_py(py, &v)
    }

    fn ensure_unchanged(&self, py: Python<'_>, paths: &Bound<'_, PyAny>) -> PyResult<()> {
        let paths = arg_paths(py, paths)?;
        self.h.call(py, |s| s.ensure_unchanged_since_read(&paths))
    }

    fn undo_candidates(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = self.h.call(py, |s| s.undo_candidates())?;
        to_py(py, &v)
    }

    fn rewind_plan(&self, py: Python<'_>, message_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, message_id, "message_id")?;
        let v = self.h.call(py, |s| s.rewind_plan(&id))?;
        to_py(py, &v)
    }

    fn rewind_preview(
        &self,
        py: Python<'_>,
        message_id: &Bound<'_, PyAny>,
        mode: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, message_id, "message_id")?;
        let mode = arg_mode(py, mode)?;
        let v = self.h.call(py, |s| s.rewind_preview(&id, mode))?;
        to_py(py, &v)
    }

    fn rewind_turns(
        &self,
        py: Python<'_>,
        turns: &Bound<'_, PyAny>,
        mode: &Bound<'_, PyAny>,
        force: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let turns: usize = arg_int(py, turns, "turns")?;
        let mode = arg_mode(py, mode)?;
        let force = arg_bool(py, force, "force")?;
        let v = self.h.call(py, |s| s.rewind_turns(turns, mode, force))?;
        to_py(py, &v)
    }

    fn rewind(
        &self,
        py: Python<'_>,
        message_id: &Bound<'_, PyAny>,
        mode: &Bound<'_, PyAny>,
        force: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, message_id, "message_id")?;
        let mode = arg_mode(py, mode)?;
        let force = arg_bool(py, force, "force")?;
        let v = self.h.call(py, |s| s.rewind(&id, mode, force))?;
        to_py(py, &v)
    }

    fn snapshot_plan(&self, py: Python<'_>, snapshot: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let snap = arg_str(py, snapshot, "snapshot")?;
        let v = self.h.call(py, |s| s.snapshot_plan(&snap))?;
        to_py(py, &v)
    }

    fn restore_snapshot(
        &self,
        py: Python<'_>,
        snapshot: &Bound<'_, PyAny>,
        force: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let snap = arg_str(py, snapshot, "snapshot")?;
        let force = arg_bool(py, force, "force")?;
        let v = self.h.call(py, |s| s.restore_snapshot(&snap, force))?;
        to_py(py, &v)
    }

    #[pyo3(signature = (limit=None, model_view=None))]
    fn responses_items(
        &self,
        py: Python<'_>,
        limit: Option<&Bound<'_, PyAny>>,
        model_view: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let limit: Option<usize> = opt_int(py, limit, "limit")?;
        let model_view = match model_view {
            Some(v) => arg_bool(py, v, "model_view")?,
            None => false,
        };
        let text = self.h.call(py, |s| s.responses_items(limit, model_view))?;
        json_py(py, &text)
    }

    fn append_responses_items(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<()> {
        let items = arg_items(py, items)?;
        self.h
            .call(py, |s| s.append_responses_items(items).map(drop))
    }

    fn replace_responses_items_with_compaction(
        &self,
        py: Python<'_>,
        items: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let items = arg_items(py, items)?;
        self.h.call(py, |s| {
            s.replace_responses_items_with_compaction(items).map(drop)
        })
    }

    fn pop_responses_item(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let item = self.h.call(py, |s| s.pop_responses_item())?;
        item.map(|t| json_py(py, &t)).transpose()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.h.get(py, |s| s.info().entry.title) {
            Ok(title) => format!("<sessionkit Session {} {title:?} (open)>", self.id),
            Err(_) => format!("<sessionkit Session {} (closed)>", self.id),
        }
    }
}

fn arg_mode(py: Python<'_>, mode: &Bound<'_, PyAny>) -> PyResult<RewindMode> {
    arg_str(py, mode, "mode")?
        .parse()
        .map_err(|e| error(py, &e))
}

/// A list of lists of messages (dicts), for `append_groups`.
fn arg_groups(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<Value>>> {
    let not_groups = |what: &str| {
        invalid(
            py,
            format!("argument `groups` must be a list of lists of dicts; {what}"),
        )
    };
    let Value::Array(groups) = to_json(py, value, "groups")? else {
        return Err(not_groups("it is not a list"));
    };
    groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| match g {
            Value::Array(ms) => match ms.iter().position(|m| !m.is_object()) {
                Some(j) => Err(not_groups(&format!(
                    "groups[{i}][{j}] is {}",
                    sessionkit::type_name(&ms[j])
                ))),
                None => Ok(ms),
            },
            other => Err(not_groups(&format!(
                "groups[{i}] is {}",
                sessionkit::type_name(&other)
            ))),
        })
        .collect()
}

fn arg_ids(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    match to_json(py, value, name)? {
        Value::Array(ids) if ids.iter().all(Value::is_string) => Ok(ids
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()),
        other => Err(invalid(
            py,
            format!(
                "argument `{name}` must be a list of message ids (str), not {}",
                sessionkit::type_name(&other)
            ),
        )),
    }
}

#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Subagent {
    id: String,
    session_id: String,
    h: Handle<sessionkit::Subagent>,
}

impl Subagent {
    fn new(a: sessionkit::Subagent) -> Subagent {
        let (id, session_id) = (a.id().to_string(), a.session_id().to_string());
        Subagent {
            h: Handle::new(format!("subagent {id} of session {session_id}"), a),
            id,
            session_id,
        }
    }
}

#[pymethods]
impl Subagent {
    /// Release the sidechain's lock. Closing a closed subagent does nothing.
    fn close(&self, py: Python<'_>) {
        drop(self.h.take(py));
    }

    #[getter]
    fn closed(&self) -> bool {
        self.h.is_closed()
    }

    #[getter]
    fn id(&self) -> String {
        self.id.clone()
    }

    #[getter]
    fn session_id(&self) -> String {
        self.session_id.clone()
    }

    fn append(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let m = to_json(py, message, "message")?;
        let text = self.h.call(py, |a| a.append(m))?;
        message_py(py, &text)
    }

    fn append_batch(&self, py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let ms = to_objects(py, messages, "messages")?;
        let text = self.h.call(py, |a| a.append_batch(ms))?;
        messages_py(py, &text)
    }

    /// As `Session.append_groups`, into the sidechain.
    fn append_groups(&self, py: Python<'_>, groups: &Bound<'_, PyAny>) -> PyResult<String> {
        let gs = arg_groups(py, groups)?;
        let results = self.h.call(py, |a| a.append_groups(gs))?;
        Ok(sessionkit::group_results_json(&results))
    }

    fn finish(
        &self,
        py: Python<'_>,
        result: &Bound<'_, PyAny>,
        failed: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let r = to_json(py, result, "result")?;
        let failed = arg_bool(py, failed, "failed")?;
        self.h.call(py, |a| a.finish(r, failed))
    }

    fn read(&self, py: Python<'_>) -> PyResult<SessionView> {
        self.h.call(py, |a| a.read()).map(SessionView::new)
    }

    fn __repr__(&self) -> String {
        let state = if self.h.is_closed() { "closed" } else { "open" };
        format!(
            "<sessionkit Subagent {} of session {} ({state})>",
            self.id, self.session_id
        )
    }
}

/// The argument `items`: a list of Responses items (the core checks each).
fn arg_items(py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    match to_json(py, items, "items")? {
        Value::Array(items) => Ok(items),
        other => Err(invalid(
            py,
            format!(
                "argument `items` must be a list, not {}",
                sessionkit::type_name(&other)
            ),
        )),
    }
}
