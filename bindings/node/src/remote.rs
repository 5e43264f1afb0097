//! `NativeRemote`: a project's sessions shared through PostgreSQL
//! (docs/DISTRIBUTED.md), bound to the store it pushes from and pulls into.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use parking_lot::Mutex;
use sessionkit::{Lease, RemoteOptions};

use crate::{job, job_as, text, Job};

pub struct Bound {
    remote: sessionkit::Remote,
    store: sessionkit::Store,
}

#[napi]
pub struct NativeRemote {
    b: Arc<Bound>,
}

/// Connect for the project of `store` (the core's `Remote::connect`).
pub(crate) fn connect(
    store: sessionkit::Result<sessionkit::Store>,
    options: Option<String>,
) -> AsyncTask<Job<Bound, NativeRemote>> {
    job_as(
        |b| NativeRemote { b: Arc::new(b) },
        move || {
            let store = store?;
            let opts = crate::options(options.as_deref(), RemoteOptions::from_json)?;
            let remote = sessionkit::Remote::connect(&store, opts)?;
            Ok(Bound { remote, store })
        },
    )
}

#[napi]
impl NativeRemote {
    fn call<R: Send + 'static + ToNapiValue + TypeName>(
        &self,
        f: impl FnOnce(&Bound) -> sessionkit::Result<R> + Send + 'static,
    ) -> AsyncTask<Job<R, R>> {
        let b = self.b.clone();
        job(move || f(&b))
    }

    #[napi(getter)]
    pub fn project(&self) -> String {
        self.b.remote.project().to_string()
    }

    #[napi(getter)]
    pub fn holder(&self) -> String {
        self.b.remote.holder().to_string()
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn schema_version(&self) -> AsyncTask<Job<i64, i64>> {
        self.call(|b| b.remote.schema_version())
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn list(&self) -> AsyncTask<Job<String, String>> {
        self.call(|b| text(&b.remote.list()?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn acquire(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |b| text(&b.remote.acquire(&session_id)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn renew(&self, lease: String) -> AsyncTask<Job<String, String>> {
        self.call(move |b| text(&b.remote.renew(&Lease::from_json(&lease)?)?))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn release(&self, lease: String) -> AsyncTask<Job<(), ()>> {
        self.call(move |b| b.remote.release(&Lease::from_json(&lease)?))
    }

    /// Push under `lease` (JSON), or, without one, take the lease for the push.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn push(
        &self,
        session_id: String,
        lease: Option<String>,
    ) -> AsyncTask<Job<String, String>> {
        self.call(move |b| {
            let report = match lease {
                Some(l) => b
                    .remote
                    .push_with(&b.store, &session_id, &Lease::from_json(&l)?)?,
                None => b.remote.push(&b.store, &session_id)?,
            };
            text(&report)
        })
    }

    /// Follow a session as others push it, from byte `start` (default: where
    /// the remote stands).
    #[napi(ts_return_type = "Promise<NativeFollower>")]
    pub fn follow(
        &self,
        session_id: String,
        start: Option<i64>,
    ) -> AsyncTask<Job<sessionkit::Follower, NativeFollower>> {
        let b = self.b.clone();
        job_as(
            |f| NativeFollower {
                f: Arc::new(Mutex::new(f)),
            },
            move || {
                let start = start
                    .map(|s| {
                        u64::try_from(s).map_err(|_| {
                            sessionkit::Error::InvalidInput(format!(
                                "start must be a byte offset >= 0, not {s}"
                            ))
                        })
                    })
                    .transpose()?;
                b.remote.follow(&session_id, start)
            },
        )
    }

    /// Push a session in the background while this process writes it, every
    /// `interval_ms` (the core's `Remote::push_in_background`).
    #[napi(ts_return_type = "Promise<NativeBackgroundPush>")]
    pub fn push_in_background(
        &self,
        session_id: String,
        interval_ms: u32,
    ) -> AsyncTask<Job<sessionkit::BackgroundPush, NativeBackgroundPush>> {
        let b = self.b.clone();
        job_as(
            |p| NativeBackgroundPush { p: Arc::new(p) },
            move || {
                let every = Duration::from_millis(u64::from(interval_ms));
                b.remote.push_in_background(&b.store, &session_id, every)
            },
        )
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn pull(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |b| text(&b.remote.pull(&b.store, &session_id)?))
    }
}

#[napi]
pub struct NativeFollower {
    f: Arc<Mutex<sessionkit::Follower>>,
}

#[napi]
impl NativeFollower {
    /// Where the next lines start, in bytes of the log.
    #[napi(getter)]
    pub fn offset(&self) -> i64 {
        self.f.lock().offset() as i64
    }

    /// The lines pushed past the offset (each with its newline), waiting up
    /// to `timeout_ms` for some.
    #[napi(ts_return_type = "Promise<Buffer[]>")]
    pub fn next_lines(&self, timeout_ms: u32) -> AsyncTask<Job<Vec<Vec<u8>>, Vec<Buffer>>> {
        let f = self.f.clone();
        job_as(
            |lines| lines.into_iter().map(Buffer::from).collect(),
            move || {
                f.lock()
                    .next_lines(Duration::from_millis(u64::from(timeout_ms)))
            },
        )
    }
}

#[napi]
pub struct NativeBackgroundPush {
    p: Arc<sessionkit::BackgroundPush>,
}

#[napi]
impl NativeBackgroundPush {
    /// Bytes of the session's log the remote holds, as of the last push.
    #[napi(getter)]
    pub fn pushed(&self) -> i64 {
        self.p.pushed() as i64
    }

    /// Push what the log holds now; the report as JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn flush(&self) -> AsyncTask<Job<String, String>> {
        let p = self.p.clone();
        job(move || text(&p.flush()?))
    }

    /// Push the rest, give the lease back, end (once); the report as JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn stop(&self) -> AsyncTask<Job<String, String>> {
        let p = self.p.clone();
        job(move || text(&p.stop()?))
    }
}
