//! `NativeStore`: the sessions of one project (the C ABI's `sk_store`).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use sessionkit::{
    CreateOptions, DoctorOptions, ExportFormat, ForkOptions, ModelViewOptions, SearchQuery,
    StoreOptions,
};

use crate::session::NativeSession;
use crate::view::{pages, NativeView, Pages};
use crate::{job, job_as, sync_error, text, Handle, Job};

pub(crate) type S = Arc<Handle<sessionkit::Store>>;

#[napi]
pub struct NativeStore {
    h: S,
}

/// Open (creating if needed) the store of a project.
#[napi(ts_return_type = "Promise<NativeStore>")]
pub fn open_store(
    project_root: String,
    options: Option<String>,
) -> AsyncTask<Job<sessionkit::Store, NativeStore>> {
    job_as(
        |s| NativeStore {
            h: Handle::new(format!("store {}", s.dir().display()), s),
        },
        move || {
            let opts = crate::options(options.as_deref(), StoreOptions::from_json)?;
            sessionkit::Store::open(&project_root, opts)
        },
    )
}

fn session(s: sessionkit::Session) -> NativeSession {
    NativeSession::new(s)
}

#[napi]
impl NativeStore {
    pub(crate) fn call<R: Send + 'static + ToNapiValue + TypeName>(
        &self,
        f: impl FnOnce(&sessionkit::Store) -> sessionkit::Result<R> + Send + 'static,
    ) -> AsyncTask<Job<R, R>> {
        let h = self.h.clone();
        job(move || h.with(f))
    }

    /// The handle, for a task that converts its result itself.
    pub(crate) fn handle(&self) -> S {
        self.h.clone()
    }

    fn call_session(
        &self,
        f: impl FnOnce(&sessionkit::Store) -> sessionkit::Result<sessionkit::Session> + Send + 'static,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        let h = self.h.clone();
        job_as(session, move || h.with(f))
    }

    fn call_view(
        &self,
        f: impl FnOnce(&sessionkit::Store) -> sessionkit::Result<sessionkit::SessionView>
            + Send
            + 'static,
    ) -> AsyncTask<Job<sessionkit::SessionView, NativeView>> {
        let h = self.h.clone();
        job_as(NativeView::new, move || h.with(f))
    }

    /// Forget the store; later calls reject. Sessions open from it stay open.
    #[napi]
    pub fn close(&self) {
        drop(self.h.take());
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.h.is_closed()
    }

    /// The store's info as JSON text (no disk access).
    #[napi]
    pub fn info(&self, env: Env) -> Result<String> {
        self.h
            .with(|s| text(&s.info()))
            .map_err(|e| sync_error(&env, &e))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn list_sessions(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.list_sessions()?))
    }

    /// A page of the listing, `{sessions, total}` as JSON; `options` is the
    /// core's ListOptions as JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn list_page(&self, options: Option<String>) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let opts = crate::options(options.as_deref(), sessionkit::ListOptions::from_json)?;
            text(&s.list_page(&opts)?)
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn session_entry(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.session_entry(&session_id)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn resolve_session(&self, prefix: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| s.resolve_session(&prefix))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn continue_session(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.continue_session()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rename_session(
        &self,
        session_id: String,
        title: String,
    ) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.rename_session(&session_id, &title)?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn delete_session(&self, session_id: String) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.delete_session(&session_id))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn list_trash(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.list_trash()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn restore_session(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.restore_session(&session_id)?))
    }

    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn read_session(
        &self,
        session_id: String,
    ) -> AsyncTask<Job<sessionkit::SessionView, NativeView>> {
        self.call_view(move |s| s.read_session(&session_id))
    }

    #[napi(ts_return_type = "Promise<NativePages>")]
    pub fn model_view(&self, session_id: String, options: Option<String>) -> Pages {
        let h = self.h.clone();
        pages(move || {
            let opts = crate::options(options.as_deref(), ModelViewOptions::from_json)?;
            h.with(|s| s.model_view(&session_id, &opts))
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn list_subagents(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.list_subagents(&session_id)?))
    }

    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn read_subagent(
        &self,
        session_id: String,
        agent_id: String,
    ) -> AsyncTask<Job<sessionkit::SessionView, NativeView>> {
        self.call_view(move |s| s.read_subagent(&session_id, &agent_id))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn rebuild_index(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.rebuild_index()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn gc(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.gc_all(&mut |_| {})?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn file_history_sizes(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.file_history_sizes()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn check_file_history(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.check_file_history()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn prune_orphan_file_history(&self) -> AsyncTask<Job<String, String>> {
        self.call(|s| text(&s.prune_orphan_file_history()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn doctor(&self, options: Option<String>) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let opts = crate::options(options.as_deref(), DoctorOptions::from_json)?;
            text(&s.doctor(&opts, &mut |_| {})?)
        })
    }

    /// Full-text search; `query` is the core's SearchQuery as JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn search(&self, query: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.search(&SearchQuery::from_json(&query)?)?))
    }

    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn session_ids(&self) -> AsyncTask<Job<Vec<String>, Vec<String>>> {
        self.call(|s| s.session_ids())
    }

    /// Where a session's log is (no disk access; the id is validated).
    #[napi]
    pub fn log_path(&self, env: Env, session_id: String) -> Result<String> {
        self.h
            .with(|s| s.log_path(&session_id))
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| sync_error(&env, &e))
    }

    /// The directory holding the memories of `scope` (no disk access).
    #[napi]
    pub fn memory_path(&self, env: Env, scope: String) -> Result<String> {
        self.h
            .with(|s| Ok(s.memory_path(sessionkit::MemoryScope::parse(&scope)?)))
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| sync_error(&env, &e))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn export_session(
        &self,
        session_id: String,
        format: String,
    ) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let format: ExportFormat = format.parse()?;
            s.export_session(&session_id, format)
        })
    }

    /// `options`: the core's ExportToOptions as JSON; the result as JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn export_to(&self, session_id: String, options: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let options = sessionkit::ExportToOptions::from_json(&options)?;
            text(&s.export_to(&session_id, &options)?)
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn branch_file_history(
        &self,
        session_id: String,
        snapshot: String,
    ) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.branch_file_history(&session_id, &snapshot))
    }

    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn create_session(
        &self,
        options: Option<String>,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        self.call_session(move |s| {
            let opts = crate::options(options.as_deref(), CreateOptions::from_json)?;
            s.create_session(opts)
        })
    }

    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn open_session(
        &self,
        session_id: String,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        self.call_session(move |s| s.open_session(&session_id))
    }

    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn open_or_create_session(
        &self,
        session_id: String,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        self.call_session(move |s| s.open_or_create_session(&session_id))
    }

    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn open_shared(
        &self,
        session_id: String,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        self.call_session(move |s| s.open_shared(&session_id))
    }

    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn open_conversation(
        &self,
        conversation_id: String,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        self.call_session(move |s| s.open_conversation(&conversation_id))
    }

    #[napi(ts_return_type = "Promise<NativeSession>")]
    pub fn fork_session(
        &self,
        source_id: String,
        options: Option<String>,
    ) -> AsyncTask<Job<sessionkit::Session, NativeSession>> {
        self.call_session(move |s| {
            let opts = crate::options(options.as_deref(), ForkOptions::from_json)?;
            s.fork_session(&source_id, opts)
        })
    }

    /// Connect to the shared PostgreSQL store for this project; `options` is
    /// the core's RemoteOptions as JSON.
    #[napi(ts_return_type = "Promise<NativeRemote>")]
    pub fn connect_remote(
        &self,
        options: Option<String>,
    ) -> AsyncTask<Job<crate::remote::Bound, crate::remote::NativeRemote>> {
        crate::remote::connect(self.h.with(|s| Ok(s.clone())), options)
    }

    /// The project's directory name under `<home>/projects/`.
    #[napi(getter)]
    pub fn project_code(&self, env: Env) -> Result<String> {
        self.h
            .with(|s| Ok(s.project_code().to_string()))
            .map_err(|e| sync_error(&env, &e))
    }
}
