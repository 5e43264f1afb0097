//! Shared writers: a session handle that takes the log's writer lock only for
//! the moment of each write, so any number of handles, in any number of
//! threads and processes, write one conversation (FORMAT.md §13). Under the
//! lock the handle first folds in what the others appended since its last
//! write, so each write continues from the head at that moment and no write
//! forks the session silently.

use std::cell::Cell;
use std::time::Duration;

use parking_lot::{ReentrantMutex, ReentrantMutexGuard};

use crate::blobs::BlobStore;
use crate::error::{Error, Result};
use crate::format::records::{classify, Class};
use crate::index::{parse_whole, LiveEntry};
use crate::log::writer::{quarantine, Chain, LogWriter};
use crate::log::{self, ReadReport};

/// The writer lock of a shared handle: held while `depth` > 0. Re-entrant, so
/// an operation that writes more than once (pop: read the head, then move it)
/// holds it throughout; other threads of the process wait here, other
/// processes on the `flock`.
pub(crate) struct SharedLock {
    pub timeout: Duration,
    /// What the log is, for a `Busy` message ("session <id>").
    pub what: String,
    depth: ReentrantMutex<Cell<u32>>,
}

impl SharedLock {
    pub fn new(timeout: Duration, what: String) -> SharedLock {
        SharedLock {
            timeout,
            what,
            depth: ReentrantMutex::new(Cell::new(0)),
        }
    }

    /// Hold the lock: on the outermost call, take the `flock` (waiting up to
    /// the timeout) and run `catch_up` with the length this handle knew, where
    /// what others appended starts; the lock is let go when the last guard of
    /// this thread drops.
    pub fn hold<'a>(
        &'a self,
        writer: &'a LogWriter,
        catch_up: impl FnOnce(u64) -> Result<()>,
    ) -> Result<WriteGuard<'a>> {
        let depth = self.depth.lock();
        if depth.get() == 0 {
            let from = writer.lock_within(self.timeout, &self.what)?;
            if let Err(e) = catch_up(from) {
                writer.unlock();
                return Err(e);
            }
        }
        depth.set(depth.get() + 1);
        Ok(WriteGuard {
            held: Some((depth, writer)),
        })
    }
}

/// Proof that this thread may write; for an exclusive handle it holds nothing.
pub(crate) struct WriteGuard<'a> {
    held: Option<(ReentrantMutexGuard<'a, Cell<u32>>, &'a LogWriter)>,
}

impl WriteGuard<'_> {
    pub fn exclusive() -> WriteGuard<'static> {
        WriteGuard { held: None }
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if let Some((depth, writer)) = &self.held {
            depth.set(depth.get() - 1);
            if depth.get() == 0 {
                writer.unlock();
            }
        }
    }
}

/// Fold what other writers appended since this handle's last write (the bytes
/// from `from` to the length the lock found) into its chain (head, ids) and
/// index entry, as a reader folds those lines (FORMAT.md
/// §8.1, §8.2, §10.3). Runs under the writer lock, so nobody is mid-append: a
/// torn last line was left by a writer killed mid-write, and is terminated and
/// quarantined as opening a log does (§9.3, §9.4). Costs what was appended.
pub(crate) fn fold_tail(
    writer: &LogWriter,
    from: u64,
    chain: &mut Chain,
    entry: &mut LiveEntry,
    blobs: &BlobStore,
) -> Result<()> {
    let size = writer.len();
    if size == from {
        return Ok(());
    }
    let path = writer.path();
    if size < from {
        return Err(Error::Conflict(format!(
            "{} shrank from {from} to {size} bytes since this handle last wrote (something \
             other than an append changed it); open the session again",
            path.display()
        )));
    }
    let mut file = writer.file().try_clone().map_err(|e| Error::io(path, e))?;
    let mut report = ReadReport::default();
    log::scan(&mut file, path, from, &mut report, |line, report| {
        let (text, p) = match log::probe(line.bytes) {
            Ok(x) => x,
            Err(why) => {
                log::skip(report, &line, why);
                return Ok(());
            }
        };
        let class = match classify(&p) {
            Ok(c) => c,
            Err(why) => {
                log::skip(report, &line, why);
                return Ok(());
            }
        };
        let fold = |entry: &mut LiveEntry, bytes: usize| {
            if let Some(rec) = parse_whole(text, p.has_blob(), blobs) {
                entry.apply(rec, bytes);
            }
        };
        match class {
            Class::Message { id, .. } => {
                // The first of duplicate ids counts (§8.2).
                if chain.ids.insert(id.to_owned()) {
                    chain.head = Some(id.to_owned());
                    fold(entry, line.bytes.len());
                } else {
                    report.duplicate_ids.push(id.to_owned());
                }
            }
            Class::Head(None) => {
                chain.head = None;
                fold(entry, 0);
            }
            Class::Head(Some(t)) => {
                if chain.ids.contains(t) {
                    chain.head = Some(t.to_owned());
                    fold(entry, 0);
                }
            }
            // A header after the first changes nothing a writer keeps.
            Class::Session { .. } => {}
            _ => fold(entry, 0),
        }
        Ok(())
    })?;
    // The torn bytes become a line of their own, which readers skip.
    writer.repair_tail(&report)?;
    quarantine(path, &report)?;
    Ok(())
}
