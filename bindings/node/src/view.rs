//! `NativeView`: a session or sidechain read without a lock (the C ABI's
//! `sk_view`). A view is in memory: reading it still runs on the pool, since
//! folding and serialising a long session takes time.
//!
//! `NativePages`: the messages of a view handed out a page at a time, so the
//! event loop never parses more than a page's JSON text at once.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use parking_lot::Mutex;
use sessionkit::{Message, ModelViewOptions};

use crate::{job, job_as, sync_error, text, Job};

type Str = AsyncTask<Job<String, String>>;
pub(crate) type Pages = AsyncTask<Job<Vec<Message>, NativePages>>;

/// The messages of one view (folded on the pool), not yet handed out.
#[napi]
pub struct NativePages {
    count: u32,
    left: Arc<Mutex<std::iter::Peekable<std::vec::IntoIter<Message>>>>,
}

impl NativePages {
    fn new(messages: Vec<Message>) -> NativePages {
        NativePages {
            count: u32::try_from(messages.len()).unwrap_or(u32::MAX),
            left: Arc::new(Mutex::new(messages.into_iter().peekable())),
        }
    }
}

/// A task folding a view into pages.
pub(crate) fn pages(
    f: impl FnOnce() -> sessionkit::Result<Vec<Message>> + Send + 'static,
) -> Pages {
    job_as(NativePages::new, f)
}

#[napi]
impl NativePages {
    /// How many messages the view has.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        self.count
    }

    /// The next messages as one JSON array text of at most `max_bytes`
    /// (at least one message, however long); `null` once all were handed
    /// out. Joined on the pool; each message's memory is freed as it goes.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn next_page(&self, max_bytes: u32) -> AsyncTask<Job<Option<String>, Option<String>>> {
        let left = self.left.clone();
        job(move || {
            let mut left = left.lock();
            let mut page: Vec<Message> = Vec::new();
            let mut bytes = 2usize;
            while let Some(m) = left.peek() {
                let more = m.json().len() + 1;
                if !page.is_empty() && bytes + more > max_bytes as usize {
                    break;
                }
                bytes += more;
                page.extend(left.next());
            }
            Ok((!page.is_empty()).then(|| sessionkit::to_json_array(&page)))
        })
    }
}

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

    #[napi(ts_return_type = "Promise<NativePages>")]
    pub fn active_path(&self) -> Pages {
        let v = self.view.clone();
        pages(move || v.active_path())
    }

    #[napi(ts_return_type = "Promise<NativePages>")]
    pub fn ui_view(&self) -> Pages {
        let v = self.view.clone();
        pages(move || v.ui_view())
    }

    #[napi(ts_return_type = "Promise<NativePages>")]
    pub fn model_view(&self, options: Option<String>) -> Pages {
        let v = self.view.clone();
        pages(move || {
            let opts = crate::options(options.as_deref(), ModelViewOptions::from_json)?;
            v.model_view(&opts)
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
