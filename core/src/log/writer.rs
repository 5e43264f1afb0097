//! The append side of a log: one `write(2)` of whole lines per append on an
//! `O_APPEND` file, an exclusive lock per log, and group commit for fsync.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::format::facts::Written;
use crate::format::ids::IdSource;
use crate::format::json;
use crate::format::records::prepare_message;
use crate::fsutil;
use crate::log::message::Message;
use crate::log::{ReadReport, SkippedLine};
use crate::options::Durability;
use crate::platform::{self, Private};

/// How long opening a log retries a lock held for a moment (a child process
/// forked by a writer that just closed).
const OPEN_RETRY: Duration = Duration::from_millis(63);
/// The longest sleep between two tries of a held lock.
const MAX_LOCK_POLL: Duration = Duration::from_millis(4);

/// An open, locked log file.
#[derive(Debug)]
pub(crate) struct LogWriter {
    path: PathBuf,
    file: File,
    durability: Durability,
    /// Bytes in the file (only this writer appends).
    len: AtomicU64,
    /// Appends written so far, and how many of them are known durable.
    written: AtomicU64,
    synced: Mutex<u64>,
    /// fsync calls made on the log, for tests and benchmarks of group commit.
    fsyncs: AtomicU64,
    /// A write failed part way and its bytes could not be cut off again.
    broken: AtomicBool,
    /// The store directory and the change feed's line for this log
    /// (FORMAT.md §10.8), appended to the feed before the first write.
    feed: Option<(PathBuf, String)>,
    /// Whether the feed line was written.
    announced: AtomicBool,
}

impl LogWriter {
    /// Open an existing log (or create a new one) and take its exclusive lock.
    pub fn open(
        path: &Path,
        create_new: bool,
        durability: Durability,
        what: &str,
    ) -> Result<LogWriter> {
        let w = Self::open_unlocked(path, create_new, durability, what)?;
        // A writer that just closed can still hold the lock for a moment: a child
        // process forked by the host shares the lock's open file until it execs.
        // Retry briefly before answering Busy.
        w.lock_within(OPEN_RETRY, what)?;
        Ok(w)
    }

    /// Open a log without taking its lock: a shared writer takes it around
    /// each write ([`LogWriter::lock_within`]) and lets it go after.
    pub fn open_unlocked(
        path: &Path,
        create_new: bool,
        durability: Durability,
        what: &str,
    ) -> Result<LogWriter> {
        let mut oo = OpenOptions::new();
        oo.read(true).append(true);
        if create_new {
            oo.create_new(true).private();
        }
        let file = oo.open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::NotFound(format!("{what} (no file {})", path.display()))
            }
            std::io::ErrorKind::AlreadyExists => {
                Error::Conflict(format!("{what} already exists ({})", path.display()))
            }
            _ => Error::io(path, e),
        })?;
        let len = file.metadata().at(path)?.len();
        Ok(LogWriter {
            path: path.to_path_buf(),
            file,
            durability,
            len: AtomicU64::new(len),
            written: AtomicU64::new(0),
            synced: Mutex::new(0),
            fsyncs: AtomicU64::new(0),
            broken: AtomicBool::new(false),
            feed: None,
            announced: AtomicBool::new(false),
        })
    }

    /// This writer, naming its log in the change feed of the store in `dir`
    /// (`line`, [`crate::log::feed::line`]) before its first write.
    pub fn with_feed(mut self, dir: &Path, line: String) -> LogWriter {
        self.feed = Some((dir.to_path_buf(), line));
        self
    }

    /// Take the log's exclusive lock, waiting up to `timeout` for another
    /// holder (another handle, here or in another process) to let it go; then
    /// `Busy`, naming the holder when the system says. Once held, the path must
    /// still name this file: a log deleted (or moved away) meanwhile is
    /// `NotFound`, one replaced by another file `Conflict`, so that no append
    /// goes to a file nobody reads. The file's size is then this writer's
    /// length (others may have appended before the lock); returns the length
    /// it had before, where what they appended starts.
    pub fn lock_within(&self, timeout: Duration, what: &str) -> Result<u64> {
        let start = Instant::now();
        let mut wait = Duration::from_micros(100);
        loop {
            match self.file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let waited = start.elapsed();
                    if waited >= timeout {
                        let holder = platform::flock_holder(&self.file)
                            .map(|pid| format!(" (held by process {pid})"))
                            .unwrap_or_default();
                        return Err(Error::Busy(format!(
                            "{what} is open for writing by another writer{holder}; waited {} ms ({})",
                            waited.as_millis(),
                            self.path.display()
                        )));
                    }
                    std::thread::sleep(wait.min(timeout - waited));
                    wait = (wait * 2).min(MAX_LOCK_POLL);
                }
                Err(TryLockError::Error(e)) => return Err(Error::io(&self.path, e)),
            }
        }
        match self.check_still_named() {
            Ok(size) => Ok(self.len.swap(size, Ordering::AcqRel)),
            Err(e) => {
                let _ = self.file.unlock();
                Err(e)
            }
        }
    }

    /// Fail unless the path still names the open file; its size otherwise.
    fn check_still_named(&self) -> Result<u64> {
        let meta = self.file.metadata().at(&self.path)?;
        match std::fs::metadata(&self.path) {
            Ok(m) if platform::file_id(&m) == platform::file_id(&meta) => Ok(meta.len()),
            Ok(_) => Err(Error::Conflict(format!(
                "{} was replaced by another file since it was opened; open it again",
                self.path.display()
            ))),
            Err(_) => Err(Error::NotFound(format!(
                "{} was deleted or moved since it was opened",
                self.path.display()
            ))),
        }
    }

    /// Let go of the lock taken by [`LogWriter::lock_within`].
    pub fn unlock(&self) {
        // Unlocking a held flock on an open descriptor cannot fail but for a
        // bad descriptor, which an open `File` is not.
        let _ = self.file.unlock();
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Give a log written under a temporary name (opened with `create_new`) its
    /// name `path`: `link(2)`, which fails if `path` exists, then the temporary
    /// name goes. Until then no reader sees the log, and a crash leaves only the
    /// temporary file, which gc removes. The lock stays held: it is the file's.
    pub fn publish(&mut self, path: &Path, what: &str) -> Result<()> {
        std::fs::hard_link(&self.path, path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                Error::Conflict(format!("{what} already exists ({})", path.display()))
            }
            _ => Error::io(path, e),
        })?;
        let staged = std::mem::replace(&mut self.path, path.to_path_buf());
        // The log is in place: a temporary name left behind is only a name, and
        // gc removes it.
        let _ = std::fs::remove_file(&staged);
        if self.durability != Durability::Never {
            fsutil::sync_dir_of(path)?;
        }
        Ok(())
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn fsync_count(&self) -> u64 {
        self.fsyncs.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> u64 {
        self.len.load(Ordering::Acquire)
    }

    /// Append whole lines in one write. Callers serialise calls (they hold the
    /// session's state lock) so the file order is the order of their state changes.
    /// Returns the append's sequence number for [`LogWriter::sync_to`].
    pub fn write(&self, buf: &[u8]) -> Result<u64> {
        debug_assert!(buf.ends_with(b"\n"));
        if self.broken.load(Ordering::Acquire) {
            return Err(Error::io(
                &self.path,
                std::io::Error::other("an earlier write failed part way; reopen the log"),
            ));
        }
        if let Some((dir, line)) = &self.feed {
            if !self.announced.swap(true, Ordering::AcqRel) {
                crate::log::feed::append(dir, line);
            }
        }
        #[cfg(feature = "planted-bugs")]
        if let Some(seq) = self.planted_drop(buf)? {
            return Ok(seq);
        }
        if let Err(e) = (&self.file).write_all(buf) {
            // A write can stop part way (disk full, file size limit, I/O error).
            // Cut off what reached the file, so a failed append leaves nothing
            // and the next record does not land on the end of a partial line.
            if self.file.set_len(self.len()).is_err() {
                self.broken.store(true, Ordering::Release);
            }
            return Err(Error::io(&self.path, e));
        }
        self.len.fetch_add(buf.len() as u64, Ordering::AcqRel);
        Ok(self.written.fetch_add(1, Ordering::AcqRel) + 1)
    }

    /// A bug planted on purpose, compiled only with the cargo feature
    /// `planted-bugs` (the fault harness's self-check, tests/faults/run.sh) and
    /// active only under `SESSIONKIT_PLANT_BUG=drop-acked-append`: a write
    /// interrupted (EINTR) before it wrote a byte is taken as done, so the append
    /// is acknowledged and its line is not in the log. `Some(seq)` when this
    /// path wrote (or dropped) the lines, `None` to write them as usual.
    #[cfg(feature = "planted-bugs")]
    fn planted_drop(&self, buf: &[u8]) -> Result<Option<u64>> {
        if std::env::var_os("SESSIONKIT_PLANT_BUG").is_none_or(|v| v != "drop-acked-append") {
            return Ok(None);
        }
        match (&self.file).write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                Ok(Some(self.written.fetch_add(1, Ordering::AcqRel) + 1))
            }
            Err(e) => Err(Error::io(&self.path, e)),
            Ok(n) if n == buf.len() => {
                self.len.fetch_add(buf.len() as u64, Ordering::AcqRel);
                Ok(Some(self.written.fetch_add(1, Ordering::AcqRel) + 1))
            }
            // A short write: cut it off and write the lines the usual way.
            Ok(_) => {
                self.file.set_len(self.len()).at(&self.path)?;
                Ok(None)
            }
        }
    }

    /// Make append `seq` durable. Concurrent callers share one fsync: whoever gets
    /// the lock syncs everything written so far, later callers find it done.
    pub fn sync_to(&self, seq: u64) -> Result<()> {
        let mut synced = self.synced.lock();
        if *synced >= seq {
            return Ok(());
        }
        let target = self.written.load(Ordering::Acquire);
        self.file.sync_data().at(&self.path)?;
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        *synced = target;
        Ok(())
    }

    /// Sync after an append according to the durability setting.
    pub fn after_append(&self, seq: u64) -> Result<()> {
        if self.durability == Durability::Always {
            self.sync_to(seq)?;
        }
        Ok(())
    }

    /// An explicit `sync()`: everything written so far becomes durable.
    pub fn sync(&self) -> Result<()> {
        if self.durability == Durability::Never {
            return Ok(());
        }
        let seq = self.written.load(Ordering::Acquire);
        self.sync_to(seq.max(1))
    }

    /// Terminate a torn last line so the next record starts on a line of its own.
    /// Nothing is truncated: the torn bytes stay, as a line the reader skips.
    pub fn repair_tail(&self, report: &ReadReport) -> Result<bool> {
        if report.torn_tail.is_none() {
            return Ok(false);
        }
        let seq = self.write(b"\n")?;
        if self.durability != Durability::Never {
            self.sync_to(seq)?;
        }
        Ok(true)
    }
}

/// Copy the unusable lines of a log to `<log>.corrupt`, each once (see
/// [`Quarantined::covers`]), so the bytes survive even if a later tool rewrites
/// the log.
pub(crate) fn quarantine(log: &Path, report: &ReadReport) -> Result<usize> {
    let bad: Vec<&SkippedLine> = report
        .skipped
        .iter()
        .chain(report.torn_tail.iter())
        .collect();
    if bad.is_empty() {
        return Ok(0);
    }
    let qpath = PathBuf::from(format!("{}.corrupt", log.display()));
    let seen = quarantined(log)?;
    let fresh: Vec<&SkippedLine> = bad.into_iter().filter(|s| !seen.covers(s)).collect();
    if fresh.is_empty() {
        return Ok(0);
    }
    let data = std::fs::read(log).at(log)?;
    let mut f = fsutil::open_append(&qpath)?;
    // A writer killed mid-append leaves a cut last line: start on a line of our
    // own, so the cut bytes are a line readers skip instead of swallowing ours.
    let mut out = Vec::new();
    if !ends_with_newline(&mut f).at(&qpath)? {
        out.push(b'\n');
    }
    for s in &fresh {
        let start = (s.offset as usize).min(data.len());
        let end = (start + s.length as usize).min(data.len());
        let rec = serde_json::json!({
            "offset": s.offset,
            "line": s.line,
            "length": s.length,
            "kind": s.kind,
            "reason": s.reason,
            "bytesBase64": base64::engine::general_purpose::STANDARD.encode(&data[start..end]),
        });
        out.extend(serde_json::to_vec(&rec).map_err(|e| Error::Internal(e.to_string()))?);
        out.push(b'\n');
    }
    f.write_all(&out).at(&qpath)?;
    Ok(fresh.len())
}

/// Whether a file is empty or its last byte is `\n`.
fn ends_with_newline(f: &mut File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if f.metadata()?.len() == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The byte ranges of a log that its quarantine file `<log>.corrupt` holds.
#[derive(Debug, Default)]
pub(crate) struct Quarantined {
    /// `(offset, length)` of each record, sorted, without repeats.
    ranges: Vec<(u64, u64)>,
}

impl Quarantined {
    /// The number of distinct records.
    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// A segment is already quarantined when it lies within the bytes of a
    /// record: a repaired torn tail, read again as a NUL run and a skipped line
    /// (or as one line at the same offset), is not copied twice.
    pub(crate) fn covers(&self, s: &SkippedLine) -> bool {
        let end = s.offset.saturating_add(s.length);
        self.ranges
            .iter()
            .any(|&(o, l)| o <= s.offset && end <= o.saturating_add(l))
    }
}

/// What a log's quarantine file holds (nothing when it does not exist). Lines
/// that are not JSON objects with integer `offset` and `length` (a record cut
/// by a crash) are skipped.
pub(crate) fn quarantined(log: &Path) -> Result<Quarantined> {
    let qpath = PathBuf::from(format!("{}.corrupt", log.display()));
    let bytes = match std::fs::read(&qpath) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Quarantined::default()),
        Err(e) => return Err(Error::io(&qpath, e)),
    };
    let mut ranges: Vec<(u64, u64)> = bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let v = serde_json::from_slice::<Value>(l).ok()?;
            Some((v.get("offset")?.as_u64()?, v.get("length")?.as_u64()?))
        })
        .collect();
    ranges.sort_unstable();
    ranges.dedup();
    Ok(Quarantined { ranges })
}

/// The tree position of a log's writer: its head and the ids it holds.
#[derive(Debug, Default)]
pub(crate) struct Chain {
    pub head: Option<String>,
    pub ids: MessageIds,
    /// The last batch's buffer, for the next: the escaper reserves six bytes per
    /// byte of a string before it writes, and growing a new buffer to that for
    /// every append cost more than a tenth of it.
    scratch: Vec<u8>,
}

/// The message ids of a log. Hashed with foldhash, as the reader's are: every
/// append adds one, and SipHash made that a noticeable part of an append.
pub(crate) type MessageIds = HashSet<String, foldhash::fast::RandomState>;

/// The deepest a log line may nest arrays and objects (a container counts one
/// level). Readers parse lines with serde_json, which refuses a 128th level; the
/// margin covers the index and its journal, which hold some values of a record
/// a level or two deeper than the log does.
pub(crate) const MAX_NESTING: usize = 100;

/// Refuse `value` if it nests arrays and objects more than `levels` deep: its
/// line could be written but never read back.
pub(crate) fn check_nesting(what: &dyn Fn() -> String, value: &Value, levels: usize) -> Result<()> {
    fn deeper(v: &Value, levels: usize) -> bool {
        match v {
            Value::Array(a) => levels == 0 || a.iter().any(|c| deeper(c, levels - 1)),
            Value::Object(m) => levels == 0 || m.values().any(|c| deeper(c, levels - 1)),
            _ => false,
        }
    }
    if deeper(value, levels) {
        return Err(Error::invalid(format!(
            "{} nests arrays and objects more than {levels} levels deep; a log line holds at most {MAX_NESTING}",
            what()
        )));
    }
    Ok(())
}

/// The largest batch buffer kept for the next append.
const SCRATCH_BYTES: usize = 1 << 20;

/// Everything needed to turn host messages into log lines.
pub(crate) struct AppendCtx<'a> {
    pub session_id: &'a str,
    pub agent_id: Option<&'a str>,
    pub ids: &'a IdSource,
    pub blobs: &'a BlobStore,
    pub blob_threshold: usize,
    pub max_record_bytes: usize,
    pub sync_blobs: bool,
}

/// A batch ready to be written: the bytes, the messages as the host will see them,
/// and what the index entry folds from each (before large values moved to
/// blobs). The last message is the new head.
pub(crate) struct Batch {
    pub bytes: Vec<u8>,
    pub messages: Vec<Message>,
    pub written: Vec<Written>,
}

impl Chain {
    pub fn new(head: Option<String>, ids: MessageIds) -> Chain {
        Chain {
            head,
            ids,
            scratch: Vec::new(),
        }
    }

    /// Check and serialise `inputs` against this chain without changing its
    /// position (the batch takes the buffer the last one left).
    pub fn prepare(&mut self, inputs: Vec<Value>, ctx: &AppendCtx<'_>) -> Result<Batch> {
        let mut batch = self.prepare_empty();
        self.prepare_into(&mut batch, inputs, ctx)?;
        Ok(batch)
    }

    /// Check and serialise groups of messages into one batch, each group as if
    /// appended alone after the groups before it that were accepted. A refused
    /// group leaves the batch as it was and gets its own error; the others are
    /// written together. Returns the batch and, per group, how many of the
    /// batch's messages are its own.
    pub fn prepare_groups(
        &mut self,
        groups: Vec<Vec<Value>>,
        ctx: &AppendCtx<'_>,
    ) -> (Batch, Vec<Result<usize>>) {
        let mut batch = self.prepare_empty();
        let counts = groups
            .into_iter()
            .map(|group| {
                let (bytes, messages) = (batch.bytes.len(), batch.messages.len());
                match self.prepare_into(&mut batch, group, ctx) {
                    Ok(()) => Ok(batch.messages.len() - messages),
                    Err(e) => {
                        batch.bytes.truncate(bytes);
                        batch.messages.truncate(messages);
                        batch.written.truncate(messages);
                        Err(e)
                    }
                }
            })
            .collect();
        (batch, counts)
    }

    /// Check and serialise `inputs` onto the end of `batch`: the first one's
    /// parent is the batch's last message, else this chain's head. On an error
    /// the batch may hold part of `inputs`; the caller drops or truncates it.
    fn prepare_into(
        &mut self,
        batch: &mut Batch,
        inputs: Vec<Value>,
        ctx: &AppendCtx<'_>,
    ) -> Result<()> {
        if inputs.is_empty() {
            return Err(Error::invalid("an append needs at least one message"));
        }
        let many = inputs.len() > 1;
        batch.messages.reserve(inputs.len());
        batch.written.reserve(inputs.len());
        for (i, input) in inputs.into_iter().enumerate() {
            let at = |e: Error| if many { prefix_err(e, i) } else { e };
            check_nesting(&|| "the message".into(), &input, MAX_NESTING).map_err(at)?;
            let known =
                |id: &str| self.ids.contains(id) || batch.messages.iter().any(|m| m.id() == id);
            let head = match batch.messages.last() {
                Some(m) => Some(m.id()),
                None => self.head.as_deref(),
            };
            let mut p = prepare_message(
                input,
                ctx.session_id,
                head,
                || ctx.ids.new_id(),
                || ctx.ids.timestamp(),
                known,
            )
            .map_err(at)?;
            if let Some(a) = ctx.agent_id {
                p.set_agent_id(a);
            }
            // Serialised straight into the batch; the host's copy shares one
            // allocation with every later reader of this message.
            let start = batch.bytes.len();
            let full: Arc<str> = p.write_json(ctx.session_id, &mut batch.bytes).into();
            if full.len() > ctx.blob_threshold {
                let mut stored = p.to_map(ctx.session_id);
                ctx.blobs
                    .extract(&mut stored, ctx.blob_threshold, ctx.sync_blobs)
                    .map_err(at)?;
                batch.bytes.truncate(start);
                json::write_map(&stored, &mut batch.bytes);
            }
            let len = batch.bytes.len() - start;
            if len > ctx.max_record_bytes {
                return Err(at(Error::invalid(format!(
                    "message {} is {len} bytes without its content, over the limit of {} bytes",
                    p.id, ctx.max_record_bytes
                ))));
            }
            batch.bytes.push(b'\n');
            let bytes = full.len();
            batch
                .messages
                .push(Message::from_shared(p.id, p.parent_id, full));
            batch
                .written
                .push(Written::new(p.role, p.timestamp, p.rest, bytes));
        }
        Ok(())
    }

    /// A batch of no messages, for records written alone.
    pub fn prepare_empty(&mut self) -> Batch {
        Batch {
            bytes: std::mem::take(&mut self.scratch),
            messages: Vec::new(),
            written: Vec::new(),
        }
    }

    /// Take in a batch that was written.
    pub fn commit(&mut self, batch: &mut Batch) {
        if let Some(last) = batch.messages.last() {
            // In the buffer the old head had: the head moves on every append.
            match &mut self.head {
                Some(h) => {
                    h.clear();
                    h.push_str(last.id());
                }
                None => self.head = Some(last.id().to_owned()),
            }
        }
        self.ids
            .extend(batch.messages.iter().map(|m| m.id().to_owned()));
        if batch.bytes.capacity() <= SCRATCH_BYTES {
            self.scratch = std::mem::take(&mut batch.bytes);
            self.scratch.clear();
        }
    }
}

fn prefix_err(e: Error, i: usize) -> Error {
    let p = |m: String| format!("batch message {i}: {m}");
    match e {
        Error::InvalidInput(m) => Error::InvalidInput(p(m)),
        Error::NotFound(m) => Error::NotFound(p(m)),
        Error::Conflict(m) => Error::Conflict(p(m)),
        other => other,
    }
}

/// Serialise one non-message record as a line.
/// A record as its log line. `max` is the store's `maxRecordBytes`: a record
/// with a host's values in it (a title, state, subagent metadata or result) is
/// held to the same limit as a message; `None` for a record the library makes
/// from messages already held to it.
pub(crate) fn record_line(rec: &Map<String, Value>, max: Option<usize>) -> Result<Vec<u8>> {
    let kind = rec.get("type").and_then(Value::as_str).unwrap_or("unknown");
    for (k, v) in rec {
        check_nesting(
            &|| format!("the {k:?} of a {kind} record"),
            v,
            MAX_NESTING - 1,
        )?;
    }
    let mut b = Vec::new();
    json::write_map(rec, &mut b);
    if let Some(max) = max.filter(|&m| b.len() > m) {
        return Err(Error::invalid(format!(
            "a {kind} record of {} bytes is over the limit of {max} bytes (maxRecordBytes)",
            b.len()
        )));
    }
    b.push(b'\n');
    Ok(b)
}
