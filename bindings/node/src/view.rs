//! `NativeView`: a session or sidechain read without a lock (the C ABI's
//! `sk_view`). A view is in memory: reading it still runs on the pool, since
//! folding and serialising a long session takes time.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use sessionkit::ModelViewOptions;

use crate::{job, sync_error, text, Job};

type Str = AsyncTask<Job<String, String>>;

#[napi]
pub struct NativeView {
    view: Arc<sessionkit::SessionView>,
}

impl NativeView {
    pub(crate) fn new(view: sessionkit::SessionView) -> NativeView {
        NativeView {
            view: Arc::new(view),
        }
    }

    fn call(
        &self,
        f: impl FnOnce(&sessionkit::SessionView) -> sessionkit::Result<String> + Send + 'static,
    ) -> Str {
        let v = self.view.clone();
        job(move || f(&v))
    }
}

#[napi]
impl NativeView {
    #[napi]
    pub fn info(&self, env: Env) -> Result<String> {
        text(&self.view.info()).map_err(|e| sync_error(&env, &e))
    }

    #[napi]
    pub fn records(&self, env: Env) -> Result<String> {
        text(&self.view.records()).map_err(|e| sync_error(&env, &e))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn active_path(&self) -> Str {
        self.call(|v| Ok(sessionkit::to_json_array(&v.active_path()?)))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn ui_view(&self) -> Str {
        self.call(|v| Ok(sessionkit::to_json_array(&v.ui_view()?)))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn model_view(&self, options: Option<String>) -> Str {
        self.call(move |v| {
            let opts = crate::options(options.as_deref(), ModelViewOptions::from_json)?;
            Ok(sessionkit::to_json_array(&v.model_view(&opts)?))
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn message(&self, message_id: String) -> Str {
        self.call(move |v| Ok(v.message(&message_id)?.json().to_owned()))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn resolve_message(&self, prefix: String) -> Str {
        self.call(move |v| v.resolve_message(&prefix))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn tree(&self) -> Str {
        self.call(|v| text(&v.tree()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn branches(&self) -> Str {
        self.call(|v| text(&v.branches()?))
    }
}
