//! The background push: one session's new lines copied to the remote while this
//! process writes it, on a thread of its own with a connection of its own, so
//! an append never waits for the network.
//!
//! The thread holds the session's lease, pushes what the log gained every
//! interval (or at once when asked to flush), renews the lease a third of the
//! way through its time, and on stop pushes the rest and gives the lease back.
//! It follows the library's rule for threads and `fork()`: its work (pushes,
//! renewals, anything that allocates) runs inside a [`BackgroundWork`] window
//! that a fork waits for, and between windows it only waits on a condition
//! variable. A handle inherited by a forked child is inert there: the child has
//! no such thread, so it neither joins nor touches the shared state.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{Connection, Lease, PushReport};
use crate::error::{Error, IoContext, Result};
use crate::platform::{self, BackgroundWork};
use crate::store::StoreCore;

/// The shortest interval between pushes: below it a writer's every append
/// would cost a round trip to the server.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// One session pushed in the background; see the module's comment. Dropping it
/// stops the push as [`BackgroundPush::stop`] does, ignoring the result.
#[derive(Debug)]
pub struct BackgroundPush {
    shared: Arc<Shared>,
    /// Taken by the stop that joins it.
    thread: Mutex<Option<JoinHandle<()>>>,
    id: String,
    /// The process that started the thread: a forked child has another id.
    pid: u32,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the thread (a flush, a stop) and the hosts waiting on a flush.
    wake: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Pushes asked for (a flush, the stop) and done.
    asked: u64,
    done: u64,
    stop: bool,
    /// The thread ended (it panicked): nothing more is pushed.
    ended: bool,
    /// The result of the last push asked for, until its host takes it.
    result: Option<Result<PushReport>>,
    /// Bytes of the log on the remote, as far as this push knows.
    pushed: u64,
    /// Why the lease was lost, once it was: nothing more is pushed.
    lost: Option<String>,
}

/// What the thread needs: its connection, the session and its lease.
struct Pusher {
    url: String,
    conn: Option<Connection>,
    store: StoreCore,
    project: String,
    id: String,
    lease: Lease,
    ttl: Duration,
    renewed: Instant,
}

impl BackgroundPush {
    /// Take the lease of session `id` on a new connection (`Busy` while another
    /// holder has it) and start pushing its new lines every `interval`.
    pub(crate) fn start(
        url: &str,
        store: StoreCore,
        project: &str,
        id: &str,
        holder: &str,
        ttl: Duration,
        interval: Duration,
    ) -> Result<BackgroundPush> {
        if interval < MIN_INTERVAL || interval > ttl / 3 {
            return Err(Error::InvalidInput(format!(
                "the background push interval must be from {} ms to a third of the lease time ({} ms), not {} ms",
                MIN_INTERVAL.as_millis(),
                (ttl / 3).as_millis(),
                interval.as_millis()
            )));
        }
        store.log_path(id)?;
        let mut conn = Connection::open(url)?;
        let lease = conn.acquire(project, id, holder, ttl)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let pusher = Pusher {
            url: url.to_string(),
            conn: Some(conn),
            store,
            project: project.to_string(),
            id: id.to_string(),
            lease,
            ttl,
            renewed: Instant::now(),
        };
        let thread_shared = Arc::clone(&shared);
        let thread = platform::spawn_kept("sessionkit-push", move || {
            let run = std::panic::AssertUnwindSafe(|| pusher.run(&thread_shared, interval));
            if std::panic::catch_unwind(run).is_err() {
                let mut s = thread_shared.lock();
                s.ended = true;
                thread_shared.wake.notify_all();
            }
        })
        .map_err(|e| Error::io(std::path::Path::new("background push thread"), e))?;
        Ok(BackgroundPush {
            shared,
            thread: Mutex::new(Some(thread)),
            id: id.to_string(),
            pid: std::process::id(),
        })
    }

    /// Push what the log holds now and wait for it: the report of that push,
    /// or its error (`Busy` once the lease was lost to another holder).
    pub fn flush(&self) -> Result<PushReport> {
        self.check_process()?;
        let mut state = self.shared.lock();
        if state.stop {
            return Err(self.stopped());
        }
        state.asked += 1;
        let ticket = state.asked;
        self.shared.wake.notify_all();
        while state.done < ticket && !state.ended {
            state = self
                .shared
                .wake
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        self.take_result(&mut state)
    }

    /// The session pushed.
    pub fn session_id(&self) -> &str {
        &self.id
    }

    /// Bytes of the session's log the remote holds, as of the last push.
    pub fn pushed(&self) -> u64 {
        self.shared.lock().pushed
    }

    /// Push the rest, give the lease back and end the thread: the report of
    /// the last push, or the error of the push or of the release. Once only:
    /// a second stop, or a flush after it, is `InvalidInput`.
    pub fn stop(&self) -> Result<PushReport> {
        self.check_process()?;
        self.end()
    }

    fn end(&self) -> Result<PushReport> {
        let taken = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(thread) = taken else {
            return Err(self.stopped());
        };
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        let _ = thread.join();
        let mut state = self.shared.lock();
        self.take_result(&mut state)
    }

    /// The result a flush or the stop waited for. Several hosts flushing at
    /// once share one push: the first takes its result, the others a report
    /// of where the remote stands.
    fn take_result(&self, state: &mut State) -> Result<PushReport> {
        if let Some(result) = state.result.take() {
            return result;
        }
        if state.ended {
            return Err(Error::Internal(format!(
                "the background push of session {} ended with a panic",
                self.id
            )));
        }
        Ok(PushReport {
            session_id: self.id.clone(),
            from: state.pushed,
            to: state.pushed,
            ..PushReport::default()
        })
    }

    fn stopped(&self) -> Error {
        Error::InvalidInput(format!(
            "the background push of session {} was stopped already",
            self.id
        ))
    }

    /// A handle inherited across `fork()` has no thread behind it.
    fn check_process(&self) -> Result<()> {
        if std::process::id() != self.pid {
            return Err(Error::InvalidInput(format!(
                "the background push of session {} belongs to the parent process of this fork",
                self.id
            )));
        }
        Ok(())
    }
}

impl Drop for BackgroundPush {
    fn drop(&mut self) {
        if self.check_process().is_ok() {
            // Nothing to do when it was stopped already.
            let _ = self.end();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Pusher {
    fn run(mut self, shared: &Shared, interval: Duration) {
        let mut state = shared.lock();
        loop {
            if !state.stop && state.asked == state.done {
                // Waiting allocates nothing and holds no lock a child could need.
                state = shared
                    .wake
                    .wait_timeout(state, interval)
                    .map_or_else(|e| e.into_inner().0, |(s, _)| s);
            }
            let (stop, asked, lost, pushed) =
                (state.stop, state.asked, state.lost.is_some(), state.pushed);
            drop(state);
            let work = BackgroundWork::begin();
            let pushing = (!lost).then(|| self.push_once(pushed));
            let released = stop.then(|| self.release());
            let mut s = shared.lock();
            let result = match pushing {
                Some(Ok(report)) => {
                    s.pushed = report.to;
                    Ok(report)
                }
                Some(Err(Error::Busy(why))) => {
                    s.lost = Some(why.clone());
                    Err(Error::Busy(why))
                }
                Some(Err(e)) => Err(e),
                None => Err(Error::Busy(s.lost.clone().unwrap_or_default())),
            };
            // A timed push's error is dropped: the next one retries.
            if asked > s.done || stop {
                s.result = Some(match (result, released) {
                    (Ok(_), Some(Err(e))) => Err(e),
                    (result, _) => result,
                });
                s.done = asked;
                shared.wake.notify_all();
            }
            if stop {
                drop(s);
                drop(self);
                drop(work);
                return;
            }
            drop(s);
            drop(work);
            state = shared.lock();
        }
    }

    /// Renew the lease once a third of its time has gone, then push what the
    /// log gained since `pushed` (nothing is sent when it gained nothing). A
    /// broken connection is opened again.
    fn push_once(&mut self, pushed: u64) -> Result<PushReport> {
        let path = self.store.log_path(&self.id)?;
        let len = std::fs::metadata(&path).at(&path)?.len();
        let renew = self.renewed.elapsed() >= self.ttl / 3;
        if len == pushed && pushed > 0 && !renew {
            return Ok(PushReport {
                session_id: self.id.clone(),
                from: len,
                to: len,
                ..PushReport::default()
            });
        }
        let conn = connection(&mut self.conn, &self.url)?;
        if renew {
            self.lease = conn.renew(&self.project, &self.lease, self.ttl)?;
            self.renewed = Instant::now();
        }
        super::push(conn, &self.store, &self.project, &self.id, &self.lease)
    }

    fn release(&mut self) -> Result<()> {
        connection(&mut self.conn, &self.url)?.release(&self.project, &self.lease)
    }
}

/// The connection in `slot`, opened again when it broke (or was never made).
fn connection<'a>(slot: &'a mut Option<Connection>, url: &str) -> Result<&'a mut Connection> {
    if slot.as_ref().is_some_and(|c| c.client.is_closed()) {
        *slot = None;
    }
    match slot {
        Some(c) => Ok(c),
        None => Ok(slot.insert(Connection::open(url)?)),
    }
}
