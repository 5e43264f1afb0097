//! `Store`: the sessions of one project (the C ABI's `sk_store`).

use pyo3::prelude::*;
use sessionkit::{
    CreateOptions, DoctorOptions, ExportFormat, ForkOptions, InstructionOptions, MemoryScope,
    ModelViewOptions, SearchQuery, SettingSource, SettingsOptions, StoreOptions,
};

use crate::checkpoints::{channel_values, object, strings, tuple_py, typed_py, writes, writes_py};
use crate::session::Session;
use crate::view::SessionView;
use crate::{arg_str, detach, dumps, error, invalid, messages_py, opt_str, to_py};

/// Options given as a dict (or None), parsed by the core as the C ABI's JSON
/// options are: unknown keys and bad values are `InvalidInputError`.
pub(crate) fn options<T: Default>(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    name: &str,
    parse: fn(&str) -> sessionkit::Result<T>,
) -> PyResult<T> {
    match value {
        Some(v) if !v.is_none() => parse(&dumps(py, v, name)?).map_err(|e| error(py, &e)),
        _ => Ok(T::default()),
    }
}

fn setting_source(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<SettingSource> {
    SettingSource::parse(&arg_str(py, v, "source")?).map_err(|e| error(py, &e))
}

fn memory_scope(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<MemoryScope> {
    MemoryScope::parse(&arg_str(py, v, "scope")?).map_err(|e| error(py, &e))
}

#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Store {
    inner: sessionkit::Store,
    closed: std::sync::atomic::AtomicBool,
}

impl Store {
    /// The store, unless this handle was closed.
    pub(crate) fn open(&self, py: Python<'_>) -> PyResult<&sessionkit::Store> {
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return Err(invalid(
                py,
                format!("the store of {} is closed", self.inner.dir().display()),
            ));
        }
        Ok(&self.inner)
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (project_root, options=None))]
    fn new(
        py: Python<'_>,
        project_root: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Store> {
        let root = arg_str(py, project_root, "project_root")?;
        let opts = self::options(py, options, "options", StoreOptions::from_json)?;
        let store = detach(py, || sessionkit::Store::open(&root, opts))?;
        Ok(Store {
            inner: store,
            closed: Default::default(),
        })
    }

    fn info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        to_py(py, &store.info())
    }

    fn list_sessions(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.list_sessions())?;
        to_py(py, &v)
    }

    #[pyo3(signature = (options=None))]
    fn list_page(&self, py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let opts = self::options(py, options, "options", sessionkit::ListOptions::from_json)?;
        let v = detach(py, || store.list_page(&opts))?;
        to_py(py, &v)
    }

    fn session_entry(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let v = detach(py, || store.session_entry(&id))?;
        to_py(py, &v)
    }

    fn resolve_session(&self, py: Python<'_>, prefix: &Bound<'_, PyAny>) -> PyResult<String> {
        let store = self.open(py)?;
        let prefix = arg_str(py, prefix, "prefix")?;
        detach(py, || store.resolve_session(&prefix))
    }

    fn continue_session(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.continue_session())?;
        to_py(py, &v)
    }

    fn rename_session(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        title: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let title = arg_str(py, title, "title")?;
        let v = detach(py, || store.rename_session(&id, &title))?;
        to_py(py, &v)
    }

    // -- LangGraph checkpoints (sessionkit.integrations.langgraph) -------------

    #[allow(clippy::too_many_arguments)]
    fn checkpoint_put(
        &self,
        py: Python<'_>,
        thread_id: &Bound<'_, PyAny>,
        ns: &Bound<'_, PyAny>,
        checkpoint: &Bound<'_, PyAny>,
        metadata: &Bound<'_, PyAny>,
        parent_id: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let thread = arg_str(py, thread_id, "thread_id")?;
        let put = sessionkit::CheckpointPut {
            ns: arg_str(py, ns, "ns")?,
            checkpoint: object(py, checkpoint, "checkpoint")?,
            metadata: object(py, metadata, "metadata")?,
            parent_id: opt_str(py, Some(parent_id), "parent_id")?,
            values: channel_values(py, values)?,
        };
        detach(py, || store.checkpoint_put(&thread, put))
    }

    #[allow(clippy::too_many_arguments)]
    fn checkpoint_put_writes(
        &self,
        py: Python<'_>,
        thread_id: &Bound<'_, PyAny>,
        ns: &Bound<'_, PyAny>,
        checkpoint_id: &Bound<'_, PyAny>,
        task_id: &Bound<'_, PyAny>,
        task_path: &Bound<'_, PyAny>,
        writes: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let thread = arg_str(py, thread_id, "thread_id")?;
        let ns = arg_str(py, ns, "ns")?;
        let cp = arg_str(py, checkpoint_id, "checkpoint_id")?;
        let task = arg_str(py, task_id, "task_id")?;
        let path = arg_str(py, task_path, "task_path")?;
        let w = self::writes(py, writes)?;
        detach(py, || {
            store.checkpoint_put_writes(&thread, &ns, &cp, &task, &path, w)
        })
    }

    #[pyo3(signature = (thread_id, ns, checkpoint_id=None))]
    fn checkpoint_get(
        &self,
        py: Python<'_>,
        thread_id: &Bound<'_, PyAny>,
        ns: &Bound<'_, PyAny>,
        checkpoint_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let store = self.open(py)?;
        let thread = arg_str(py, thread_id, "thread_id")?;
        let ns = arg_str(py, ns, "ns")?;
        let cp = opt_str(py, checkpoint_id, "checkpoint_id")?;
        let t = detach(py, || store.checkpoint_get(&thread, &ns, cp.as_deref()))?;
        t.map(|t| tuple_py(py, &t)).transpose()
    }

    #[pyo3(signature = (thread_id=None, ns=None, checkpoint_id=None, filter=None, before=None, limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn checkpoint_list(
        &self,
        py: Python<'_>,
        thread_id: Option<&Bound<'_, PyAny>>,
        ns: Option<&Bound<'_, PyAny>>,
        checkpoint_id: Option<&Bound<'_, PyAny>>,
        filter: Option<&Bound<'_, PyAny>>,
        before: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let store = self.open(py)?;
        let q = sessionkit::CheckpointQuery {
            thread_id: opt_str(py, thread_id, "thread_id")?,
            ns: opt_str(py, ns, "ns")?,
            checkpoint_id: opt_str(py, checkpoint_id, "checkpoint_id")?,
            filter: match filter {
                Some(f) if !f.is_none() => Some(object(py, f, "filter")?),
                _ => None,
            },
            before: opt_str(py, before, "before")?,
            limit: crate::opt_int(py, limit, "limit")?,
        };
        let ts = detach(py, || store.checkpoint_list(&q))?;
        ts.iter().map(|t| tuple_py(py, t)).collect()
    }

    fn checkpoint_delete_thread(
        &self,
        py: Python<'_>,
        thread_id: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let thread = arg_str(py, thread_id, "thread_id")?;
        detach(py, || store.checkpoint_delete_thread(&thread))
    }

    fn checkpoint_copy_thread(
        &self,
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        target: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let source = arg_str(py, source, "source")?;
        let target = arg_str(py, target, "target")?;
        detach(py, || store.checkpoint_copy_thread(&source, &target))
    }

    fn checkpoint_prune(
        &self,
        py: Python<'_>,
        thread_ids: &Bound<'_, PyAny>,
        strategy: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let ids = strings(py, thread_ids, "thread_ids")?;
        let strategy: sessionkit::PruneStrategy = arg_str(py, strategy, "strategy")?
            .parse()
            .map_err(|e| error(py, &e))?;
        detach(py, || store.checkpoint_prune(&ids, strategy))
    }

    fn checkpoint_delete_for_runs(
        &self,
        py: Python<'_>,
        run_ids: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let ids = strings(py, run_ids, "run_ids")?;
        detach(py, || store.checkpoint_delete_for_runs(&ids))
    }

    #[pyo3(signature = (thread_id, ns, checkpoint_id, channels))]
    fn checkpoint_delta_history(
        &self,
        py: Python<'_>,
        thread_id: &Bound<'_, PyAny>,
        ns: &Bound<'_, PyAny>,
        checkpoint_id: Option<&Bound<'_, PyAny>>,
        channels: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let thread = arg_str(py, thread_id, "thread_id")?;
        let ns = arg_str(py, ns, "ns")?;
        let cp = opt_str(py, checkpoint_id, "checkpoint_id")?;
        let channels = strings(py, channels, "channels")?;
        let hs = detach(py, || {
            store.checkpoint_delta_history(&thread, &ns, cp.as_deref(), &channels)
        })?;
        let out = pyo3::types::PyDict::new(py);
        for h in hs {
            let e = pyo3::types::PyDict::new(py);
            e.set_item("writes", writes_py(py, &h.writes)?)?;
            if let Some(seed) = &h.seed {
                e.set_item("seed", typed_py(py, seed)?)?;
            }
            out.set_item(&h.channel, e)?;
        }
        Ok(out.into_any().unbind())
    }

    fn delete_session(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<()> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        detach(py, || store.delete_session(&id))
    }

    fn list_trash(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.list_trash())?;
        to_py(py, &v)
    }

    fn restore_session(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let v = detach(py, || store.restore_session(&id))?;
        to_py(py, &v)
    }

    fn read_session(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<SessionView> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let view = detach(py, || store.read_session(&id))?;
        Ok(SessionView::new(view))
    }

    #[pyo3(signature = (session_id, options=None))]
    fn model_view(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let opts = self::options(py, options, "options", ModelViewOptions::from_json)?;
        let text = detach(py, || store.model_view(&id, &opts))?;
        messages_py(py, &text)
    }

    fn list_subagents(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let v = detach(py, || store.list_subagents(&id))?;
        to_py(py, &v)
    }

    fn read_subagent(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        agent_id: &Bound<'_, PyAny>,
    ) -> PyResult<SessionView> {
        let store = self.open(py)?;
        let sid = arg_str(py, session_id, "session_id")?;
        let aid = arg_str(py, agent_id, "agent_id")?;
        let view = detach(py, || store.read_subagent(&sid, &aid))?;
        Ok(SessionView::new(view))
    }

    fn rebuild_index(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.rebuild_index())?;
        to_py(py, &v)
    }

    fn gc(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.gc_all(&mut |_| {}))?;
        to_py(py, &v)
    }

    fn file_history_sizes(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.file_history_sizes())?;
        to_py(py, &v)
    }

    fn check_file_history(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.check_file_history())?;
        to_py(py, &v)
    }

    fn prune_orphan_file_history(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let v = detach(py, || store.prune_orphan_file_history())?;
        to_py(py, &v)
    }

    fn search(&self, py: Python<'_>, query: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let q = self::options(py, Some(query), "query", SearchQuery::from_json)?;
        let v = detach(py, || store.search(&q))?;
        to_py(py, &v)
    }

    #[pyo3(signature = (options=None))]
    fn doctor(&self, py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let opts = self::options(py, options, "options", DoctorOptions::from_json)?;
        let v = detach(py, || store.doctor(&opts, &mut |_| {}))?;
        to_py(py, &v)
    }

    // -- settings, instruction files, memory (docs/SETTINGS.md) -----------------

    #[pyo3(signature = (options=None))]
    fn settings(&self, py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let opts = self::options(py, options, "options", SettingsOptions::from_json)?;
        let v = py.detach(|| store.settings(&opts));
        to_py(py, &v)
    }

    fn set_setting(
        &self,
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let source = setting_source(py, source)?;
        let key = arg_str(py, key, "key")?;
        let value = sessionkit::parse_json("argument `value`", &dumps(py, value, "value")?)
            .map_err(|e| error(py, &e))?;
        let v = detach(py, || store.set_setting(source, &key, value))?;
        to_py(py, &v)
    }

    fn unset_setting(
        &self,
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let source = setting_source(py, source)?;
        let key = arg_str(py, key, "key")?;
        let v = detach(py, || store.unset_setting(source, &key))?;
        to_py(py, &v)
    }

    fn migrate_settings(&self, py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let source = setting_source(py, source)?;
        let v = detach(py, || store.migrate_settings(source))?;
        to_py(py, &v)
    }

    #[pyo3(signature = (dir, options=None))]
    fn instructions(
        &self,
        py: Python<'_>,
        dir: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let dir = arg_str(py, dir, "dir")?;
        let opts = self::options(py, options, "options", InstructionOptions::from_json)?;
        let v = detach(py, || store.instructions(std::path::Path::new(&dir), &opts))?;
        to_py(py, &v)
    }

    fn memory_write(
        &self,
        py: Python<'_>,
        scope: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
        content: &Bound<'_, PyAny>,
        replace: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let replace = crate::arg_bool(py, replace, "replace")?;
        let scope = memory_scope(py, scope)?;
        let name = arg_str(py, name, "name")?;
        let content = arg_str(py, content, "content")?;
        let v = detach(py, || match replace {
            true => store.update_memory(scope, &name, &content),
            false => store.add_memory(scope, &name, &content),
        })?;
        to_py(py, &v)
    }

    fn memory_delete(
        &self,
        py: Python<'_>,
        scope: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let scope = memory_scope(py, scope)?;
        let name = arg_str(py, name, "name")?;
        detach(py, || store.delete_memory(scope, &name))
    }

    fn memory_path(&self, py: Python<'_>, scope: &Bound<'_, PyAny>) -> PyResult<String> {
        let store = self.open(py)?;
        let scope = memory_scope(py, scope)?;
        Ok(store.memory_path(scope).to_string_lossy().into_owned())
    }

    fn checkpoint_summaries(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let v = detach(py, || store.checkpoint_summaries(&id))?;
        to_py(py, &v)
    }

    fn memory_list(&self, py: Python<'_>, scope: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let scope = memory_scope(py, scope)?;
        let v = detach(py, || store.list_memories(scope))?;
        to_py(py, &v)
    }

    fn memory_read(
        &self,
        py: Python<'_>,
        scope: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let store = self.open(py)?;
        let scope = memory_scope(py, scope)?;
        let name = arg_str(py, name, "name")?;
        detach(py, || store.read_memory(scope, &name))
    }

    fn session_ids(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let store = self.open(py)?;
        detach(py, || store.session_ids())
    }

    fn log_path(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<String> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let p = store.log_path(&id).map_err(|e| error(py, &e))?;
        Ok(p.to_string_lossy().into_owned())
    }

    fn export_session(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        format: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let format = arg_str(py, format, "format")?;
        let format: ExportFormat = format.parse().map_err(|e| error(py, &e))?;
        detach(py, || store.export_session(&id, format))
    }

    fn export_to(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        options: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let options = sessionkit::ExportToOptions::from_json(&dumps(py, options, "options")?)
            .map_err(|e| error(py, &e))?;
        let out = detach(py, || store.export_to(&id, &options))?;
        to_py(py, &out)
    }

    fn branch_file_history(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        snapshot: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let snap = arg_str(py, snapshot, "snapshot")?;
        detach(py, || store.branch_file_history(&id, &snap))
    }

    #[pyo3(signature = (options=None))]
    fn create_session(
        &self,
        py: Python<'_>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Session> {
        let store = self.open(py)?;
        let opts = self::options(py, options, "options", CreateOptions::from_json)?;
        let s = detach(py, || store.create_session(opts))?;
        Ok(Session::new(s))
    }

    fn open_session(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Session> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let s = detach(py, || store.open_session(&id))?;
        Ok(Session::new(s))
    }

    fn open_or_create_session(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
    ) -> PyResult<Session> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let s = detach(py, || store.open_or_create_session(&id))?;
        Ok(Session::new(s))
    }

    fn open_shared(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Session> {
        let store = self.open(py)?;
        let id = arg_str(py, session_id, "session_id")?;
        let s = detach(py, || store.open_shared(&id))?;
        Ok(Session::new(s))
    }

    fn open_conversation(
        &self,
        py: Python<'_>,
        conversation_id: &Bound<'_, PyAny>,
    ) -> PyResult<Session> {
        let store = self.open(py)?;
        let id = arg_str(py, conversation_id, "conversation_id")?;
        let s = detach(py, || store.open_conversation(&id))?;
        Ok(Session::new(s))
    }

    #[pyo3(signature = (source_id, options=None))]
    fn fork_session(
        &self,
        py: Python<'_>,
        source_id: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Session> {
        let store = self.open(py)?;
        let src = arg_str(py, source_id, "source_id")?;
        let opts = self::options(py, options, "options", ForkOptions::from_json)?;
        let s = detach(py, || store.fork_session(&src, opts))?;
        Ok(Session::new(s))
    }

    /// The project's directory name under `<home>/projects/` (also in `info`).
    #[getter]
    fn project_code(&self) -> String {
        self.inner.project_code().to_string()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Refuse every later call. The store holds no lock nor file open between
    /// calls, and sessions opened from it stay open. Closing twice does nothing.
    fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { ", closed" } else { "" };
        format!(
            "<sessionkit Store project={:?} code={}{state}>",
            self.inner.project_root().display().to_string(),
            self.inner.project_code()
        )
    }
}
