//! The native addon under the `sessionkit` npm package. It converts types and
//! maps errors, nothing else: every method calls one operation of the core
//! (`sessionkit`), mirroring the Python module and the C ABI.
//!
//! Values cross as JSON text: the JavaScript layer (`index.js`) turns objects
//! into text with `JSON.stringify` (which refuses cycles and BigInt) and parses
//! what comes back. Every call that touches disk is an `AsyncTask`: the text is
//! parsed, the core works and the result is serialised on the libuv pool, so
//! the event loop only copies a string. Two exceptions: a view's messages come
//! in pages (`NativePages`), so the event loop never parses a whole long view
//! at once, and a follower waits on a thread of its own (`NativeFollower`),
//! which settles its promises from there: a wait holds no pool thread. Errors
//! are `Error`s with `code` (the core's error kind name, the C status name) and
//! `errno` (or `null`); a panic in the core is caught on the pool (or the
//! follower's thread) and rejects as `INTERNAL`.

// napi-derive registers the exports only outside `cfg(test)`.
#![cfg_attr(test, allow(dead_code))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::{Env, JsValue, Task};
use napi_derive::napi;
use parking_lot::RwLock;
use serde_json::Value;
use sessionkit::{Error as CoreError, ErrorKind};

mod checkpoints;
mod config;
mod remote;
mod session;
mod store;
mod view;

type Work<T> = Box<dyn FnOnce() -> sessionkit::Result<T> + Send>;

/// One call into the core, run on the libuv pool; `conv` makes its result a
/// JavaScript value on the main thread.
pub struct Job<T: Send + 'static, J> {
    work: Option<Work<T>>,
    conv: fn(T) -> J,
}

impl<T: Send + 'static, J: ToNapiValue + TypeName> Task for Job<T, J> {
    type Output = sessionkit::Result<T>;
    type JsValue = J;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let Some(work) = self.work.take() else {
            return Ok(Err(CoreError::Internal("a task ran twice".into())));
        };
        // No panic may cross into Node: it would abort the process.
        Ok(catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|p| Err(panic_error(p.as_ref()))))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<J> {
        match output {
            Ok(v) => Ok((self.conv)(v)),
            Err(e) => Err(js_error(&env, e.kind(), &e.to_string(), e.os_errno())),
        }
    }
}

/// A caught panic as the `INTERNAL` error it rejects with.
pub(crate) fn panic_error(p: &(dyn std::any::Any + Send)) -> CoreError {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    CoreError::Internal(format!("panic in sessionkit: {what}"))
}

/// A task whose result crosses as it is.
pub(crate) fn job<T: Send + 'static + ToNapiValue + TypeName>(
    f: impl FnOnce() -> sessionkit::Result<T> + Send + 'static,
) -> AsyncTask<Job<T, T>> {
    AsyncTask::new(Job {
        work: Some(Box::new(f)),
        conv: |v| v,
    })
}

/// A task whose result is made a JavaScript class instance.
pub(crate) fn job_as<T: Send + 'static, J: ToNapiValue + TypeName>(
    conv: fn(T) -> J,
    f: impl FnOnce() -> sessionkit::Result<T> + Send + 'static,
) -> AsyncTask<Job<T, J>> {
    AsyncTask::new(Job {
        work: Some(Box::new(f)),
        conv,
    })
}

/// The package's error classes, as `index.js` registers them once per
/// environment (`setErrorFactory`): an object whose `make(code, message,
/// errno)` returns the error of the class for `code`.
struct ErrorFactory(ObjectRef<false>);

/// `make(code, message, errno)`: the factory's function.
type MakeError<'env> =
    Function<'env, FnArgs<(&'static str, &'env str, Option<i32>)>, Unknown<'env>>;

/// Register the function that makes the package's errors (`index.js` calls
/// it once, when it loads): `{ make(code, message, errno) }`. The object is
/// kept for the life of the environment.
#[napi(
    ts_args_type = "factory: { make(code: string, message: string, errno: number | null): Error }"
)]
pub fn set_error_factory(env: Env, factory: ObjectRef<false>) -> Result<()> {
    env.set_instance_data(ErrorFactory(factory), (), |_| {})
}

/// The JavaScript error for a core error: an instance of the package's class
/// for its kind when `index.js` registered them, else an `Error`; `code` is
/// the kind's name, `errno` the OS error number or `null`.
pub(crate) fn js_error(env: &Env, kind: ErrorKind, message: &str, errno: Option<i32>) -> Error {
    let classed = (|| -> napi::Result<Option<Error>> {
        let Some(factory) = env.get_instance_data::<ErrorFactory>()? else {
            return Ok(None);
        };
        let holder = factory.0.get_value(env)?;
        let make: MakeError = holder.get_named_property("make")?;
        let e = make.call((kind.name(), message, errno).into())?;
        Ok(Some(Error::from(e)))
    })();
    if let Ok(Some(e)) = classed {
        return e;
    }
    let made = (|| -> napi::Result<Error> {
        let mut obj = env.create_error(Error::new(Status::GenericFailure, message.to_owned()))?;
        obj.set_named_property("code", kind.name())?;
        obj.set_named_property("errno", errno)?;
        Ok(Error::from(obj.to_unknown()))
    })();
    made.unwrap_or_else(|e| Error::new(Status::GenericFailure, format!("{message} ({e})")))
}

/// The error of a synchronous call.
pub(crate) fn sync_error(env: &Env, e: &CoreError) -> Error {
    js_error(env, e.kind(), &e.to_string(), e.os_errno())
}

/// A JSON text from JavaScript as a value, checked as the C ABI and Python
/// check theirs (FORMAT.md §5: no repeated names, lone surrogates, infinite
/// numbers or nesting past 127 levels), so nothing a reader would skip is
/// written; `INVALID_INPUT` naming the argument.
pub(crate) fn parse_arg(text: &str, name: &str) -> sessionkit::Result<Value> {
    sessionkit::parse_json(&format!("argument `{name}`"), text)
}

/// A JSON text argument that must be an array of objects (messages, items).
pub(crate) fn parse_objects(
    text: &str,
    name: &str,
    objects: bool,
) -> sessionkit::Result<Vec<Value>> {
    match parse_arg(text, name)? {
        Value::Array(items) => {
            if objects {
                if let Some((i, bad)) = items.iter().enumerate().find(|(_, m)| !m.is_object()) {
                    return Err(CoreError::InvalidInput(format!(
                        "argument `{name}` must be an array of objects; item {i} is {}",
                        sessionkit::type_name(bad)
                    )));
                }
            }
            Ok(items)
        }
        other => Err(CoreError::InvalidInput(format!(
            "argument `{name}` must be an array, not {}",
            sessionkit::type_name(&other)
        ))),
    }
}

/// Options given as JSON text (or absent), parsed by the core as the C ABI's
/// JSON options are.
pub(crate) fn options<T: Default>(
    text: Option<&str>,
    parse: fn(&str) -> sessionkit::Result<T>,
) -> sessionkit::Result<T> {
    match text {
        Some(t) => parse(t),
        None => Ok(T::default()),
    }
}

/// A result as JSON text (serialised on the pool).
pub(crate) fn text<T: serde::Serialize>(v: &T) -> sessionkit::Result<String> {
    serde_json::to_string(v)
        .map_err(|e| CoreError::Internal(format!("cannot serialise a result: {e}")))
}

/// A handle closed once: calls share it, `close` takes it out and waits for
/// calls in flight; later calls reject with `INVALID_INPUT`.
pub(crate) struct Handle<T> {
    what: String,
    inner: RwLock<Option<T>>,
}

impl<T> Handle<T> {
    pub(crate) fn new(what: String, v: T) -> Arc<Handle<T>> {
        Arc::new(Handle {
            what,
            inner: RwLock::new(Some(v)),
        })
    }

    pub(crate) fn with<R>(
        &self,
        f: impl FnOnce(&T) -> sessionkit::Result<R>,
    ) -> sessionkit::Result<R> {
        match self.inner.read().as_ref() {
            Some(v) => f(v),
            None => Err(CoreError::InvalidInput(format!("{} is closed", self.what))),
        }
    }

    pub(crate) fn take(&self) -> Option<T> {
        self.inner.write().take()
    }

    /// Take the value out for a call that consumes it; `INVALID_INPUT` when
    /// the handle is closed.
    pub(crate) fn take_open(&self) -> sessionkit::Result<T> {
        self.take()
            .ok_or_else(|| CoreError::InvalidInput(format!("{} is closed", self.what)))
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.inner.read().is_none()
    }
}

/// The library's version (the crate version).
#[napi]
pub fn version() -> &'static str {
    sessionkit::VERSION
}

/// The core's table of error kinds as JSON text: `[code, name, description]`
/// each, in the order of their numbers.
#[napi]
pub fn error_kinds() -> String {
    let rows: Vec<(i32, &str, &str)> = ErrorKind::ALL
        .iter()
        .map(|k| (k.code(), k.name(), k.description()))
        .collect();
    serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into())
}

/// The core's table of enum names and defaults as JSON text (`{"enums":
/// {...}, "defaults": {...}}`), which `index.js` takes its values from.
#[napi]
pub fn defaults() -> String {
    sessionkit::defaults_json()
}

/// A diagnostic: a task that does nothing, run on the libuv pool. Its Promise
/// settles after one round trip through the pool, the hop every call that
/// touches disk pays on top of its work (docs/BENCHMARKS.md measures it).
#[napi(ts_return_type = "Promise<void>")]
pub fn pool_round_trip() -> AsyncTask<Job<(), ()>> {
    job(|| Ok(()))
}

/// Import Claude Code, Codex or seed-style transcripts: `paths` a JSON array
/// of paths, `options` the core's ImportOptions as JSON; the report as JSON.
#[napi(ts_return_type = "Promise<string>")]
pub fn import_transcripts(
    paths: String,
    options: Option<String>,
) -> AsyncTask<Job<String, String>> {
    job(move || {
        let paths: Vec<std::path::PathBuf> = serde_json::from_str(&paths).map_err(|e| {
            CoreError::InvalidInput(format!("paths must be a JSON array of strings: {e}"))
        })?;
        let opts = crate::options(options.as_deref(), sessionkit::ImportOptions::from_json)?;
        text(&sessionkit::import(&paths, &opts, &mut |_| {})?)
    })
}

/// The sessions of every project in a home (`options`: store options as
/// JSON), as JSON.
#[napi(ts_return_type = "Promise<string>")]
pub fn list_all_sessions(options: Option<String>) -> AsyncTask<Job<String, String>> {
    job(move || {
        let opts = crate::options(options.as_deref(), sessionkit::StoreOptions::from_json)?;
        text(&sessionkit::list_all_sessions(&opts)?)
    })
}

/// The session id that holds the conversation `conversation_id` (FORMAT.md §3.3).
#[napi]
pub fn conversation_session_id(env: Env, conversation_id: String) -> Result<String> {
    sessionkit::conversation_session_id(&conversation_id).map_err(|e| sync_error(&env, &e))
}

/// The directory name of a project under `<home>/projects/`.
#[napi]
pub fn project_code(canonical_root: String) -> String {
    sessionkit::project_code(std::path::Path::new(&canonical_root))
}
