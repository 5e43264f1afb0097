//! `NativeRemote`: a project's sessions shared through PostgreSQL
//! (docs/DISTRIBUTED.md), bound to the store it pushes from and pulls into.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use napi::bindgen_prelude::*;
use napi::JsDeferred;
use napi_derive::napi;
use parking_lot::Mutex;
use sessionkit::{Lease, RemoteOptions};

use crate::{job, job_as, sync_error, text, Handle, Job};

pub struct Bound {
    remote: sessionkit::Remote,
    store: sessionkit::Store,
}

#[napi]
pub struct NativeRemote {
    b: Arc<Handle<Bound>>,
    project: String,
    holder: String,
}

/// Connect for the project of `store` (the core's `Remote::connect`).
pub(crate) fn connect(
    store: sessionkit::Result<sessionkit::Store>,
    options: Option<String>,
) -> AsyncTask<Job<Bound, NativeRemote>> {
    job_as(
        |b| NativeRemote {
            project: b.remote.project().to_string(),
            holder: b.remote.holder().to_string(),
            b: Handle::new("the remote".into(), b),
        },
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
        job(move || b.with(f))
    }

    #[napi(getter)]
    pub fn project(&self) -> String {
        self.project.clone()
    }

    #[napi(getter)]
    pub fn holder(&self) -> String {
        self.holder.clone()
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.b.is_closed()
    }

    /// Close the connection once the calls in flight are done (on the pool:
    /// they may be waiting for the network); later calls reject. Followers
    /// and background pushes have connections of their own and stay.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Job<(), ()>> {
        let b = self.b.clone();
        job(move || {
            drop(b.take());
            Ok(())
        })
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
    ) -> AsyncTask<Job<NativeFollower, NativeFollower>> {
        let b = self.b.clone();
        job(move || {
            b.with(|b| {
                let start = start
                    .map(|s| {
                        u64::try_from(s).map_err(|_| {
                            sessionkit::Error::InvalidInput(format!(
                                "start must be a byte offset >= 0, not {s}"
                            ))
                        })
                    })
                    .transpose()?;
                NativeFollower::start(b.remote.follow(&session_id, start)?)
            })
        })
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
                b.with(|b| b.remote.push_in_background(&b.store, &session_id, every))
            },
        )
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn pull(&self, session_id: String) -> AsyncTask<Job<String, String>> {
        self.call(move |b| text(&b.remote.pull(&b.store, &session_id)?))
    }
}

/// What settles a wait's promise, on the JavaScript thread.
type Settle = Box<dyn FnOnce(Env) -> Result<Vec<Buffer>> + Send>;

/// A wait for lines, handed to the follower's thread: its number (for
/// `cancel`), how long it may wait, and the promise to settle.
struct Ask {
    id: u64,
    timeout: Duration,
    reply: JsDeferred<Vec<Buffer>, Settle>,
}

/// What the JavaScript thread and the follower's thread share: no lock, so
/// reading the offset never waits for a wait in flight.
struct Shared {
    /// The offset after the lines handed out (not counting lines kept back
    /// from a cancelled wait).
    offset: AtomicU64,
    /// The number of the last wait asked for, and of the last one cancelled.
    asked: AtomicU64,
    cancelled: AtomicU64,
    closed: AtomicBool,
}

impl Shared {
    fn gives_up(&self, id: u64) -> bool {
        self.closed.load(Ordering::Acquire) || self.cancelled.load(Ordering::Acquire) >= id
    }
}

/// How long one call into the core waits at most: a cancelled or closed
/// wait ends within this, since a notification wait cannot be interrupted.
const SLICE: Duration = Duration::from_millis(500);

/// A followed session. Its waits run on a thread of its own, one at a time in
/// call order, and settle their promises from there: a waiting follower holds
/// no thread of the libuv pool, and `offset` is an atomic.
#[napi]
pub struct NativeFollower {
    shared: Arc<Shared>,
    asks: Mutex<Option<mpsc::Sender<Ask>>>,
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl NativeFollower {
    /// Start the follower's thread (on the pool, with the follow).
    fn start(f: sessionkit::Follower) -> sessionkit::Result<NativeFollower> {
        let shared = Arc::new(Shared {
            offset: AtomicU64::new(f.offset()),
            asked: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        });
        let (tx, rx) = mpsc::channel::<Ask>();
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("sessionkit-follower".into())
            .spawn(move || follow_thread(f, &s, &rx))
            .map_err(|e| {
                sessionkit::Error::Internal(format!("cannot start a follower's thread: {e}"))
            })?;
        Ok(NativeFollower {
            shared,
            asks: Mutex::new(Some(tx)),
            thread: Arc::new(Mutex::new(Some(thread))),
        })
    }
}

/// The follower's thread: answers the waits asked of it until the follower
/// is closed or collected. Lines read by a wait that was cancelled meanwhile
/// are kept for the next wait, so none is lost.
fn follow_thread(mut f: sessionkit::Follower, s: &Shared, asks: &mpsc::Receiver<Ask>) {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    while let Ok(ask) = asks.recv() {
        let got = catch_unwind(AssertUnwindSafe(|| {
            if !kept.is_empty() || s.gives_up(ask.id) {
                return Ok(Vec::new());
            }
            let deadline = Instant::now() + ask.timeout;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let lines = f.next_lines(left.min(SLICE))?;
                if !lines.is_empty() || left <= SLICE || s.gives_up(ask.id) {
                    return Ok(lines);
                }
            }
        }))
        .unwrap_or_else(|p| Err(crate::panic_error(p.as_ref())));
        let result = got.map(|lines| {
            kept.extend(lines);
            if s.gives_up(ask.id) {
                return Vec::new();
            }
            std::mem::take(&mut kept)
        });
        let kept_bytes: u64 = kept.iter().map(|l| l.len() as u64).sum();
        s.offset.store(f.offset() - kept_bytes, Ordering::Release);
        ask.reply.resolve(Box::new(move |env| match result {
            Ok(lines) => Ok(lines.into_iter().map(Buffer::from).collect()),
            Err(e) => Err(sync_error(&env, &e)),
        }));
    }
}

#[napi]
impl NativeFollower {
    /// Where the next lines start, in bytes of the log.
    #[napi(getter)]
    pub fn offset(&self) -> i64 {
        self.shared.offset.load(Ordering::Acquire) as i64
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// The number the next `nextLines` will have (what `cancel` takes).
    #[napi(getter)]
    pub fn next_wait(&self) -> f64 {
        (self.shared.asked.load(Ordering::Acquire) + 1) as f64
    }

    /// The lines pushed past the offset (each with its newline), waiting up
    /// to `timeout_ms` for some; on the follower's own thread.
    #[napi(ts_return_type = "Promise<Buffer[]>")]
    pub fn next_lines<'e>(&self, env: &'e Env, timeout_ms: u32) -> Result<Object<'e>> {
        let (reply, promise) = env.create_deferred()?;
        let id = self.shared.asked.fetch_add(1, Ordering::AcqRel) + 1;
        let ask = Ask {
            id,
            timeout: Duration::from_millis(u64::from(timeout_ms)),
            reply,
        };
        let sent = match self.asks.lock().as_ref() {
            Some(tx) => tx.send(ask).map_err(|e| e.0),
            None => Err(ask),
        };
        if let Err(ask) = sent {
            let e = sessionkit::Error::InvalidInput("the follower is closed".into());
            ask.reply
                .resolve(Box::new(move |env| Err(sync_error(&env, &e))));
        }
        Ok(promise)
    }

    /// End the waits numbered up to `wait` (within half a second): they resolve to
    /// no lines, and lines they read meanwhile go to the next wait.
    #[napi]
    pub fn cancel(&self, wait: f64) {
        self.shared
            .cancelled
            .fetch_max(wait as u64, Ordering::AcqRel);
    }

    /// End the follower: waits in flight resolve to no lines, later ones
    /// reject; resolves once its thread has ended and its connection closed.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Job<(), ()>> {
        self.shared.closed.store(true, Ordering::Release);
        drop(self.asks.lock().take());
        let thread = self.thread.clone();
        job(move || {
            if let Some(t) = thread.lock().take() {
                let _ = t.join();
            }
            Ok(())
        })
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
