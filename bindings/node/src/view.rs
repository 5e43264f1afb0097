//! `NativeView`: a session or sidechain read without a lock (the C ABI's
//! `sk_view`). A view is in memory: reading it still runs on the pool, since
//! folding and serialising a long session takes time.
//!
//! `NativePages`: the messages of a view handed out a page at a time, so the
//! event loop never parses more than a page's JSON text at once.

use std::collections::VecDeque;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use parking_lot::Mutex;
use sessionkit::{Message, MessagePage, ModelViewOptions};

use crate::{job, job_as, sync_error, text, Job};

type Str = AsyncTask<Job<String, String>>;
pub(crate) type Pages = AsyncTask<Job<Vec<Message>, NativePages>>;

/// The messages of one view (folded on the pool), not yet handed out.
#[napi]
pub struct NativePages {
    count: u32,
    left: Arc<Mutex<VecDeque<Message>>>,
}

impl NativePages {
    fn new(messages: Vec<Message>) -> NativePages {
        NativePages {
            count: u32::try_from(messages.len()).unwrap_or(u32::MAX),
            left: Arc::new(Mutex::new(messages.into())),
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

    /// The next messages, of at most `max_bytes` of text (at least one
    /// message, however long); `null` once all were handed out. A page is
    /// either one JSON array text, or `{ text, spans }`: the part of the log
    /// the messages were read from, handed over without a copy, and where
    /// each message's JSON text is in it (`text.slice(spans[2i], spans[2i+1])`).
    #[napi(ts_return_type = "Promise<string | { text: string, spans: Uint32Array } | null>")]
    pub fn next_page(&self, max_bytes: u32) -> AsyncTask<Job<Option<Page>, Option<Page>>> {
        let left = self.left.clone();
        job(move || {
            let page = sessionkit::take_page(&mut left.lock(), max_bytes as usize, shareable);
            Ok(page.map(|page| {
                // Decided here, on the pool: a joined page is scanned for
                // ASCII as `take_page` scanned the shared ones.
                let external = match &page {
                    MessagePage::Joined(text) => shareable(text),
                    MessagePage::Shared { .. } => true,
                };
                Page { page, external }
            }))
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

/// A page of messages for JavaScript. Its text goes to V8 without a copy
/// where it is ASCII (an external one-byte string, which V8 reads in place and
/// lets go of through the finalizer when it is collected); otherwise it is
/// copied into V8's heap.
pub struct Page {
    page: MessagePage,
    /// Its text is [`shareable`] (a shared page's always is).
    external: bool,
}

/// Whether `text` can go to V8 without a copy: this Node has external
/// strings, and `text` is ASCII (hence Latin-1) and not empty.
fn shareable(text: &str) -> bool {
    external_latin1().is_some() && !text.is_empty() && text.is_ascii()
}

impl TypeName for Page {
    fn type_name() -> &'static str {
        "String"
    }
    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for Page {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        match val.page {
            MessagePage::Joined(text) if val.external => {
                // SAFETY: the caller's env; the text is ASCII.
                unsafe { external(env, Box::new(Text::Own(text))) }
            }
            // SAFETY: the caller's env, as for any conversion.
            MessagePage::Joined(text) => unsafe { String::to_napi_value(env, text) },
            MessagePage::Shared {
                text,
                start,
                end,
                spans,
            } => {
                let spans: Vec<u32> = spans
                    .iter()
                    .flat_map(|&(a, b)| [a, b])
                    .map(|x| u32::try_from(x).unwrap_or(u32::MAX))
                    .collect();
                // SAFETY: the caller's env; `take_page` shares only ASCII parts.
                let text = unsafe { external(env, Box::new(Text::Part(text, start, end)))? };
                // SAFETY: the caller's env, as for any conversion.
                let spans = unsafe { Uint32Array::to_napi_value(env, Uint32Array::new(spans))? };
                let mut page = std::ptr::null_mut();
                // SAFETY: plain Node-API calls on the caller's env, their
                // statuses checked.
                unsafe {
                    check(sys::napi_create_object(env, &mut page))?;
                    check(sys::napi_set_named_property(
                        env,
                        page,
                        c"text".as_ptr(),
                        text,
                    ))?;
                    check(sys::napi_set_named_property(
                        env,
                        page,
                        c"spans".as_ptr(),
                        spans,
                    ))?;
                }
                Ok(page)
            }
        }
    }
}

fn check(status: sys::napi_status) -> Result<()> {
    match status {
        sys::Status::napi_ok => Ok(()),
        _ => Err(Error::new(
            Status::GenericFailure,
            "could not make a page of messages",
        )),
    }
}

/// Text a page's string is made of: its own, or part of a read buffer.
enum Text {
    Own(String),
    Part(Arc<String>, usize, usize),
}

impl Text {
    fn bytes(&self) -> &[u8] {
        match self {
            Text::Own(s) => s.as_bytes(),
            Text::Part(s, a, b) => &s.as_bytes()[*a..*b],
        }
    }
}

/// `text` (ASCII, not empty) as an external one-byte string.
///
/// # Safety
/// `env` must be the env of the running call.
unsafe fn external(env: sys::napi_env, text: Box<Text>) -> Result<sys::napi_value> {
    let create = external_latin1()
        .ok_or_else(|| Error::new(Status::GenericFailure, "this Node has no external strings"))?;
    let (ptr, len) = (text.bytes().as_ptr(), text.bytes().len());
    let hint = Box::into_raw(text);
    // The text is memory V8 does not allocate: its collector is told of it
    // (and of its release, in the finalizer), so that strings no longer used
    // are collected as soon as their size calls for.
    let mut total = 0;
    // SAFETY: the caller's env.
    unsafe { sys::napi_adjust_external_memory(env, len as i64, &mut total) };
    let mut value = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `ptr[..len]` is ASCII, hence Latin-1, and lives as long as the
    // box `hint` owns, which the finalizer drops once: at once if V8 copied
    // the text, else when the string is collected.
    let status = unsafe {
        create(
            env,
            ptr.cast(),
            len as isize,
            Some(drop_text),
            hint.cast(),
            &mut value,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: on failure V8 took nothing, so the box is still ours.
        unsafe { drop_text(env, std::ptr::null_mut(), hint.cast()) };
        return Err(Error::new(
            Status::GenericFailure,
            "could not make a page's string",
        ));
    }
    Ok(value)
}

unsafe extern "C" fn drop_text(env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the box `external` leaked, finalized once.
    let text = unsafe { Box::from_raw(hint.cast::<Text>()) };
    let mut total = 0;
    // SAFETY: the env the string was made in, which calls its finalizers.
    unsafe { sys::napi_adjust_external_memory(env, -(text.bytes().len() as i64), &mut total) };
}

type CreateExternalLatin1 = unsafe extern "C" fn(
    sys::napi_env,
    *const c_char,
    isize,
    sys::napi_finalize,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// `node_api_create_external_string_latin1`, looked up in the running Node
/// (18.18, 20.4 and later have it); `None` where it is missing.
fn external_latin1() -> Option<CreateExternalLatin1> {
    static CREATE: OnceLock<Option<CreateExternalLatin1>> = OnceLock::new();
    *CREATE.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; a non-null result is the
        // function Node-API declares with this signature.
        let p = unsafe {
            libc::dlsym(
                libc::RTLD_DEFAULT,
                c"node_api_create_external_string_latin1".as_ptr(),
            )
        };
        (!p.is_null())
            .then(|| unsafe { std::mem::transmute::<*mut c_void, CreateExternalLatin1>(p) })
    })
}
