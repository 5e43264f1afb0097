//! The search cache of one store (FORMAT.md §23): an SQLite database with an
//! FTS5 index of message text, derived from the logs and kept up to date by
//! reading only the bytes appended since it last looked. It is never trusted
//! over the logs: a file that is not a cache of this version is set aside and
//! rebuilt, and a log that was rewritten is indexed again from its start. It
//! keeps no copy of the text: a hit's snippet is made from its line in the log.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{
    params, params_from_iter, Connection, ErrorCode, OpenFlags, OptionalExtension, ToSql,
    Transaction, TransactionBehavior,
};
use serde_json::{Map, Value};

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::format::records::{classify, Class};
use crate::log::{self, ReadReport};

use super::document;

mod rank;

/// The cache's own version (FORMAT.md §23.2): a cache of another version is
/// set aside and rebuilt, never read.
pub(crate) const CACHE_VERSION: i64 = 6;

/// Marks the file as a sessionkit search cache (`sks1`), so a stray SQLite
/// database in its place is not mistaken for one.
const APPLICATION_ID: i64 = 0x736b_7331;

/// How many bytes at the start and before the indexed end of a log are hashed
/// to tell an appended log from a rewritten one.
const HASH_SPAN: u64 = 4096;

/// Logs are indexed in transactions of about this many bytes: one per log
/// would make FTS5 write (and later merge) at least one segment per log.
const BATCH_BYTES: u64 = 32 << 20;

/// At least this many bytes to index make a bulk build: FTS5 does not merge
/// segments while it writes them (`automerge` 0) and merges them all once at
/// the end (`optimize`), instead of merging a little after every transaction.
const BULK_BYTES: u64 = 64 << 20;

/// FTS5's automerge setting outside a bulk build (its default).
const AUTOMERGE: i64 = 4;

/// FTS5's buffer of new terms before it writes a segment, in a bulk build
/// (16 MiB: fewer, larger segments; inserts were 1.2 to 1.6 times faster than
/// with the default in a probe) and otherwise (the default, 1 MiB).
const BULK_HASH_SIZE: i64 = 16 << 20;
const HASH_SIZE: i64 = 1 << 20;

/// A query scores at most this many matches per file, the newest (the last
/// indexed in it): every match ordered by its score costs a score, and a
/// word in a tenth of the messages is in tens of thousands of rows. The
/// files together score 2,000 per store, as one file did.
const RANKED: usize = 2000 / SHARDS;

/// How long a query waits for another process updating the same cache before
/// it answers from the cache as it is.
const BUSY_WAIT: Duration = Duration::from_millis(2000);

/// The tokenizer: `unicode61` with `_` as a token character keeps identifiers
/// such as `parse_config` whole; `/` and `.` separate, so a path is a phrase of
/// its parts and `main.rs` finds `src/main.rs`.
const TOKENIZE: &str = "tokenize = \"unicode61 remove_diacritics 2 tokenchars '_'\"";

/// The tables (FORMAT.md §23.3). `messages` is contentless: the text is only
/// indexed (a copy made the cache larger than the logs), while the columns
/// that filters and hits read are kept. A row names its log by the log's id
/// (`logs.id`, declared so that a VACUUM keeps it), not by its session and
/// agent ids: two strings of 36 bytes or more on every message and every
/// call were a seventh of the cache.
const SCHEMA: &str = "
CREATE TABLE logs(
  id INTEGER PRIMARY KEY,
  session TEXT NOT NULL,
  agent TEXT NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  indexed INTEGER NOT NULL,
  head_hash INTEGER NOT NULL,
  tail_hash INTEGER NOT NULL,
  UNIQUE(session, agent)
);
CREATE TABLE calls(
  log INTEGER NOT NULL,
  call TEXT NOT NULL,
  tool TEXT NOT NULL,
  PRIMARY KEY(log, call)
) WITHOUT ROWID;
CREATE TABLE feed(
  dir_mtime_ns INTEGER NOT NULL,
  feed_dev INTEGER NOT NULL,
  feed_ino INTEGER NOT NULL,
  feed_offset INTEGER NOT NULL,
  full_at_ms INTEGER NOT NULL
);
CREATE TABLE watched(
  session TEXT NOT NULL,
  agent TEXT NOT NULL,
  seen_ms INTEGER NOT NULL,
  PRIMARY KEY(session, agent)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE messages USING fts5(
  text, log UNINDEXED, message UNINDEXED, role UNINDEXED, ts UNINDEXED,
  tools UNINDEXED, at UNINDEXED, len UNINDEXED,
  content = '', contentless_delete = 1, contentless_unindexed = 1,
";

/// One log of a store: a session's own (`agent` empty) or one of its
/// subagents' (its sidechain, FORMAT.md §11).
pub(crate) struct LogRef {
    pub session: String,
    pub agent: String,
    pub path: PathBuf,
    /// Its inode, size and modification time (nanoseconds) when it was listed.
    pub seen: (i64, i64, i64),
}

/// How many files the cache is (FORMAT.md §23.1): each indexes the logs of
/// the sessions whose id hashes to it. SQLite writes a file on one thread at a
/// time, and FTS5 spends most of a build tokenizing and writing its index, so
/// a build of two files runs on two threads at nearly twice one file's rate.
pub(crate) const SHARDS: usize = 2;

/// Where the files of the cache of the store in `dir` live: `index.sqlite`,
/// then `index-1.sqlite`.
pub(crate) fn cache_paths(dir: &Path) -> Vec<PathBuf> {
    (0..SHARDS)
        .map(|k| match k {
            0 => dir.join("search").join("index.sqlite"),
            k => dir.join("search").join(format!("index-{k}.sqlite")),
        })
        .collect()
}

/// Which file of the cache indexes the logs of `session` (its own and its
/// subagents'): the XXH3-64 hash of its id, modulo [`SHARDS`].
pub(crate) fn shard_of(session: &str) -> usize {
    (twox_hash::XxHash3_64::oneshot(session.as_bytes()) % SHARDS as u64) as usize
}

/// Why an operation on the cache failed.
pub(crate) enum Failure {
    /// The file is not a usable cache: set it aside and build a new one.
    Damaged(String),
    /// Another process holds the cache's write lock.
    Busy,
    Other(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Other(e)
    }
}

pub(crate) fn failure(path: &Path, e: rusqlite::Error) -> Failure {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            Failure::Damaged(e.to_string())
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Failure::Busy,
        _ => Failure::Other(Error::system(path, format!("search cache: {e}"))),
    }
}

/// One log's state as last indexed.
#[derive(PartialEq, Eq, Clone, Copy)]
pub(crate) struct LogState {
    ino: i64,
    size: i64,
    mtime_ns: i64,
    indexed: i64,
    head_hash: i64,
    tail_hash: i64,
}

/// What the file recorded of the store's last full check (its `feed` row,
/// FORMAT.md §23.4): the store directory's modification time and the change
/// feed's identity and length, as seen before that check, the offset in the
/// feed read up to since, and when the check started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FeedState {
    pub dir_mtime_ns: i64,
    pub feed_dev: i64,
    pub feed_ino: i64,
    pub feed_offset: i64,
    pub full_at_ms: i64,
}

/// What a freshness check found, to record with [`Cache::record`].
pub(crate) struct Checked<'a> {
    /// A full check (every log listed), or one of the watched logs only.
    pub full: bool,
    /// The logs the feed named since the recorded offset, now watched.
    pub named: &'a [(String, String)],
    /// The offset in the feed read up to.
    pub feed_offset: i64,
    /// The logs whose state was compared, and the states the cache knew.
    pub logs: &'a [LogRef],
    pub known: &'a Known,
    /// The logs watched before the check.
    pub watched: &'a [(String, String)],
}

/// The state of every log the cache knows, by (session, agent), sorted.
pub(crate) type Known = Vec<((String, String), LogState)>;

/// A hit as the cache returns it.
pub(crate) struct Row {
    pub session: String,
    /// The subagent whose log holds the message; empty for the session's own.
    pub agent: String,
    pub message: String,
    pub role: Option<String>,
    pub ts: Option<i64>,
    pub tools: String,
    /// Where its line is in the log, and its length.
    pub at: i64,
    pub len: i64,
    pub snippet: String,
    pub rank: f64,
}

/// The filters of a query, in the cache's terms.
pub(crate) struct Filter<'a> {
    pub expr: &'a str,
    pub role: Option<&'a str>,
    pub session: Option<&'a str>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub tool: Option<&'a str>,
    pub limit: usize,
    pub marks: (&'a str, &'a str),
}

impl Filter<'_> {
    /// The match and the filters given, as SQL with numbered parameters and
    /// their values. Only the filters given are written: a condition such as
    /// `?2 IS NULL OR role = ?2` still reads the row of every match, which
    /// for a frequent word cost more than the match itself.
    fn sql(&self) -> (String, Vec<Box<dyn ToSql>>) {
        let mut sql = String::from("messages MATCH ?1");
        let mut args: Vec<Box<dyn ToSql>> = vec![Box::new(self.expr.to_string())];
        let mut and = |cond: &str, value: Box<dyn ToSql>| {
            args.push(value);
            sql.push_str(&format!(
                " AND {}",
                cond.replace('?', &format!("?{}", args.len()))
            ));
        };
        if let Some(role) = self.role {
            and("role = ?", Box::new(role.to_string()));
        }
        if let Some(session) = self.session {
            // A prefix of the id: compared on its length, no LIKE wildcards.
            and(
                "log IN (SELECT id FROM logs WHERE substr(session, 1, length(?)) = ?)",
                Box::new(session.to_string()),
            );
        }
        if let Some(ms) = self.since_ms {
            and("ts >= ?", Box::new(ms));
        }
        if let Some(ms) = self.until_ms {
            and("ts <= ?", Box::new(ms));
        }
        if let Some(tool) = self.tool {
            and(
                "instr(char(10) || tools || char(10), char(10) || ? || char(10)) > 0",
                Box::new(tool.to_string()),
            );
        }
        (sql, args)
    }
}

/// An open search cache.
pub(crate) struct Cache {
    conn: Connection,
    path: PathBuf,
}

impl Cache {
    /// Open the cache at `path`, creating it when there is none; `Damaged` when
    /// the file is not a cache of this version.
    pub(crate) fn open(path: &Path) -> std::result::Result<Cache, Failure> {
        if let Some(parent) = path.parent() {
            crate::fsutil::create_private_dir(parent)?;
        }
        // The file is made here, 0600, before SQLite would make it 0644: it
        // holds every word of the transcripts, and SQLite gives its -wal and
        // -shm files the database file's mode.
        let new = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .and_then(|f| f.metadata())
            .at(path)?
            .len()
            == 0;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| failure(path, e))?;
        let fail = |e| failure(path, e);
        conn.busy_timeout(BUSY_WAIT).map_err(fail)?;
        rank::register(&conn).map_err(fail)?;
        // The table a query's snippets are made in (in memory, this connection
        // only), made as the cache opens while the logs are listed, rather
        // than after the match, when a query waits on it.
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE temp.hits USING fts5(text, {TOKENIZE});"
        ))
        .map_err(fail)?;
        // Pages a bulk build's merge frees are given back to the file system
        // after it (`incremental_vacuum`): an eighth of the file. Set in a
        // new file only, before the WAL mode below writes its first page: in
        // a file with tables the pragma writes to it (a WAL frame, then a
        // checkpoint as the connection closes), at every query.
        if new {
            conn.pragma_update(None, "auto_vacuum", "incremental")
                .map_err(fail)?;
        }
        // WAL: readers never wait for the process updating the cache. NORMAL
        // sync keeps the file whole across a power loss (a lost update is
        // redone from the logs).
        conn.pragma_update(None, "journal_mode", "wal")
            .map_err(fail)?;
        conn.pragma_update(None, "synchronous", "normal")
            .map_err(fail)?;
        let cache = Cache {
            conn,
            path: path.to_path_buf(),
        };
        cache.check_or_create()?;
        Ok(cache)
    }

    fn check_or_create(&self) -> std::result::Result<(), Failure> {
        let fail = |e| failure(&self.path, e);
        let read_marks = |c: &Connection| -> rusqlite::Result<(i64, i64, i64)> {
            let app: i64 = c.pragma_query_value(None, "application_id", |r| r.get(0))?;
            let ver: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0))?;
            let tables: i64 =
                c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
            Ok((app, ver, tables))
        };
        // The three marks from one snapshot: read one by one, they could
        // straddle another connection's creation of the tables and look like
        // a file of another application.
        let (app, ver, tables) = {
            let tx = self.conn.unchecked_transaction().map_err(fail)?;
            let marks = read_marks(&tx).map_err(fail)?;
            tx.commit().map_err(fail)?;
            marks
        };
        if (app, ver) == (APPLICATION_ID, CACHE_VERSION) {
            return Ok(());
        }
        if (app, ver, tables) != (0, 0, 0) {
            return Err(Failure::Damaged(format!(
                "application id {app:#x}, version {ver}: not a search cache of version {CACHE_VERSION}"
            )));
        }
        // An empty file: create the tables, unless another process just did.
        let tx = self.conn.unchecked_transaction().map_err(fail)?;
        let (app, _, tables) = read_marks(&tx).map_err(fail)?;
        if tables == 0 {
            tx.execute_batch(&format!("{SCHEMA}  {TOKENIZE}\n);"))
                .map_err(fail)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(fail)?;
            tx.pragma_update(None, "user_version", CACHE_VERSION)
                .map_err(fail)?;
        } else if app != APPLICATION_ID {
            return Err(Failure::Damaged("tables of another application".into()));
        }
        tx.commit().map_err(fail)
    }

    /// Bring the cache up to date with `logs`: forget logs that are gone,
    /// index what was appended to the others, and index again from the start a
    /// log that was rewritten. A log's rows and its state change in one
    /// transaction, which holds several logs (up to [`BATCH_BYTES`]). Returns
    /// the bytes of log read.
    /// `known` (the states [`Cache::states`] or [`Cache::states_of`] read)
    /// may be stale, as the state of each log to index is read again under
    /// the write lock.
    pub(crate) fn refresh(
        &mut self,
        logs: &[LogRef],
        known: &Known,
        blobs: &BlobStore,
    ) -> std::result::Result<u64, Failure> {
        let path = self.path.clone();
        let fail = |e| failure(&path, e);
        let Changes { gone, read: work } = changes(logs, known);
        for (session, agent) in gone {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(fail)?;
            forget(&tx, session, agent).map_err(fail)?;
            tx.commit().map_err(fail)?;
        }
        let mut pending = 0;
        for (log, old) in &work {
            // The appended bytes; a shorter log is read again from its start.
            let (size, from) = (log.seen.1.max(0), old.map_or(0, |s| s.indexed));
            pending += (if size >= from { size - from } else { size }) as u64;
        }
        if work.is_empty() {
            return Ok(0);
        }
        let bulk = pending >= BULK_BYTES;
        let mut read = 0;
        let mut batch = 0;
        let mut tx: Option<Transaction<'_>> = None;
        for (i, (log, _)) in work.iter().enumerate() {
            let t = match tx.take() {
                Some(t) => t,
                None => {
                    let t = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
                        .map_err(fail)?;
                    if i == 0 {
                        // Set each time: a bulk build cut short leaves it off.
                        fts5(&t, "automerge", if bulk { 0 } else { AUTOMERGE }).map_err(fail)?;
                        let hash = if bulk { BULK_HASH_SIZE } else { HASH_SIZE };
                        fts5(&t, "hashsize", hash).map_err(fail)?;
                    }
                    t
                }
            };
            let n = index_log(&t, &path, log, blobs)?;
            read += n;
            batch += n;
            if batch >= BATCH_BYTES {
                t.commit().map_err(fail)?;
                batch = 0;
            } else {
                tx = Some(t);
            }
        }
        if let Some(t) = tx {
            t.commit().map_err(fail)?;
        }
        if bulk {
            // One merge of everything written: a frequent word's matches are
            // then read from one segment, not from hundreds.
            let t = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
                .map_err(fail)?;
            fts5(&t, "optimize", 0).map_err(fail)?;
            fts5(&t, "automerge", AUTOMERGE).map_err(fail)?;
            t.commit().map_err(fail)?;
            // The merge freed the pages of the segments it merged. The
            // pragma frees a page per row it returns: every row is read.
            self.conn
                .pragma_query(None, "incremental_vacuum", |_| Ok(()))
                .map_err(fail)?;
        }
        Ok(read)
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's record of the last full check, if it has one.
    pub(crate) fn feed_state(&self) -> rusqlite::Result<Option<FeedState>> {
        self.conn
            .prepare_cached(
                "SELECT dir_mtime_ns, feed_dev, feed_ino, feed_offset, full_at_ms FROM feed
                 WHERE rowid = 1",
            )?
            .query_row([], |r| {
                Ok(FeedState {
                    dir_mtime_ns: r.get(0)?,
                    feed_dev: r.get(1)?,
                    feed_ino: r.get(2)?,
                    feed_offset: r.get(3)?,
                    full_at_ms: r.get(4)?,
                })
            })
            .optional()
    }

    /// The logs watched (named by the feed), sorted.
    pub(crate) fn watched(&self) -> std::result::Result<Vec<(String, String)>, Failure> {
        let mut st = self
            .conn
            .prepare_cached("SELECT session, agent FROM watched ORDER BY session, agent")
            .map_err(|e| failure(&self.path, e))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| failure(&self.path, e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| failure(&self.path, e))
    }

    /// The states of the logs `keys` (sorted) that the cache knows, sorted.
    pub(crate) fn states_of(
        &self,
        keys: &[(String, String)],
    ) -> std::result::Result<Known, Failure> {
        let fail = |e| failure(&self.path, e);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT ino, size, mtime_ns, indexed, head_hash, tail_hash FROM logs
                 WHERE session = ?1 AND agent = ?2",
            )
            .map_err(fail)?;
        let mut known = Vec::new();
        for (s, a) in keys {
            if let Some(state) = st
                .query_row([s, a], |r| state_of(r, 0))
                .optional()
                .map_err(fail)?
            {
                known.push(((s.clone(), a.clone()), state));
            }
        }
        Ok(known)
    }

    /// Record a freshness check seen as `look` (FORMAT.md §23.4), in one
    /// transaction: the feed's offset, and after a full check the directory's
    /// time, the feed's identity and the check's time; the logs the feed
    /// named become watched, a watched log that changed is marked seen now,
    /// and a full check lets go of the watched logs that are gone or
    /// unchanged for [`super::fresh::WATCH_FOR_MS`]. Writes nothing when
    /// there is nothing new.
    pub(crate) fn record(
        &mut self,
        look: &super::fresh::Look,
        checked: &Checked<'_>,
    ) -> std::result::Result<(), Failure> {
        let Changes { gone, read } = changes(checked.logs, checked.known);
        let changed: Vec<(&str, &str)> = read
            .iter()
            .map(|(l, _)| (l.session.as_str(), l.agent.as_str()))
            .filter(|k| {
                checked
                    .watched
                    .binary_search_by(|(s, a)| (s.as_str(), a.as_str()).cmp(k))
                    .is_ok()
            })
            .collect();
        let (dev, ino, _) = look.feed_id();
        let old = self.feed_state().map_err(|e| failure(&self.path, e))?;
        if !checked.full
            && checked.named.is_empty()
            && changed.is_empty()
            && gone.is_empty()
            && old.as_ref().map(|s| s.feed_offset) == Some(checked.feed_offset)
        {
            return Ok(());
        }
        let path = self.path.clone();
        let fail = |e| failure(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        if checked.full {
            tx.execute(
                "INSERT OR REPLACE INTO feed(rowid, dir_mtime_ns, feed_dev, feed_ino, feed_offset, full_at_ms)
                 VALUES (1, ?1, ?2, ?3, ?4, ?5)",
                params![look.dir_mtime_ns, dev, ino, checked.feed_offset, look.now_ms],
            )
            .map_err(fail)?;
        } else {
            // Only forward, and only in the feed it was read from: another
            // process may have recorded a later check meanwhile.
            tx.execute(
                "UPDATE feed SET feed_offset = max(feed_offset, ?1)
                 WHERE rowid = 1 AND feed_dev = ?2 AND feed_ino = ?3",
                params![checked.feed_offset, dev, ino],
            )
            .map_err(fail)?;
        }
        {
            let mut watch = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO watched(session, agent, seen_ms) VALUES (?1, ?2, ?3)",
                )
                .map_err(fail)?;
            for (s, a) in checked.named {
                watch.execute(params![s, a, look.now_ms]).map_err(fail)?;
            }
            for (s, a) in &changed {
                watch.execute(params![s, a, look.now_ms]).map_err(fail)?;
            }
            let mut unwatch = tx
                .prepare_cached("DELETE FROM watched WHERE session = ?1 AND agent = ?2")
                .map_err(fail)?;
            for (s, a) in &gone {
                unwatch.execute([s, a]).map_err(fail)?;
            }
            if checked.full {
                let mut listed: Vec<(&str, &str)> = checked
                    .logs
                    .iter()
                    .map(|l| (l.session.as_str(), l.agent.as_str()))
                    .collect();
                listed.sort_unstable();
                for (s, a) in checked.watched {
                    if listed.binary_search(&(s.as_str(), a.as_str())).is_err() {
                        unwatch.execute([s, a]).map_err(fail)?;
                    }
                }
            }
        }
        if checked.full {
            tx.execute(
                "DELETE FROM watched WHERE seen_ms < ?1",
                [look.now_ms.saturating_sub(super::fresh::WATCH_FOR_MS)],
            )
            .map_err(fail)?;
        }
        tx.commit().map_err(fail)
    }

    /// Every log's state, sorted by session and agent (the table's key: no
    /// sort is run) for a lookup that neither hashes nor allocates.
    pub(crate) fn states(&self) -> rusqlite::Result<Known> {
        let mut st = self.conn.prepare_cached(
            "SELECT session, agent, ino, size, mtime_ns, indexed, head_hash, tail_hash FROM logs
             ORDER BY session, agent",
        )?;
        let rows = st.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), state_of(r, 2)?)))?;
        rows.collect()
    }

    /// The best `filter.limit` matches, best first (BM25; lower is better),
    /// among the newest [`RANKED`] matches, each with a snippet of its text.
    /// The cache keeps no text: `text_of` reads a hit's message from its log
    /// (the line at `at`, `len` bytes), and a hit whose line no longer holds
    /// it (its log deleted or rewritten since) is dropped.
    pub(crate) fn query(
        &self,
        filter: &Filter<'_>,
        text_of: impl Fn(&Row) -> Result<Option<String>>,
    ) -> std::result::Result<Vec<Row>, Failure> {
        let fail = |e| failure(&self.path, e);
        let (filters, args) = filter.sql();
        // The matches are walked newest first, which costs no sort, and each
        // of the newest RANKED is scored in the same walk; the best are taken
        // here. (Ordering by rank in SQL would walk the matches twice: once to
        // find where the newest RANKED start, once to score them.)
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT rowid, {}(messages) FROM messages WHERE {filters}
                 ORDER BY rowid DESC LIMIT {RANKED}",
                rank::NAME.to_string_lossy()
            ))
            .map_err(fail)?;
        let mut ranked = st
            .query_map(params_from_iter(&args), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .map_err(fail)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(fail)?;
        // Best first; among equal scores, the newest first (as walked). Only
        // the best are read whole.
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        ranked.truncate(filter.limit);
        let mut read = self
            .conn
            .prepare_cached(
                "SELECT l.session, l.agent, m.message, m.role, m.ts, m.tools, m.at, m.len
                 FROM messages AS m JOIN logs AS l ON l.id = m.log WHERE m.rowid = ?1",
            )
            .map_err(fail)?;
        let rows = ranked
            .into_iter()
            .filter_map(|(rowid, rank)| {
                read.query_row([rowid], |r| {
                    Ok(Row {
                        session: r.get(0)?,
                        agent: r.get(1)?,
                        message: r.get(2)?,
                        role: r.get(3)?,
                        ts: r.get(4)?,
                        tools: r.get(5)?,
                        at: r.get(6)?,
                        len: r.get(7)?,
                        snippet: String::new(),
                        rank,
                    })
                })
                .optional()
                .transpose()
            })
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(fail)?;
        let mut hits = Vec::with_capacity(rows.len());
        let mut texts = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(text) = text_of(&row)? {
                hits.push(row);
                texts.push(text);
            }
        }
        if hits.is_empty() {
            // Nothing to mark: most files have no hit for a rare word.
            return Ok(hits);
        }
        let snippets = self.snippets(filter, &texts).map_err(fail)?;
        for (i, hit) in hits.iter_mut().enumerate() {
            if let Some(s) = snippets.get(&(i as i64)) {
                hit.snippet.clone_from(s);
            }
        }
        Ok(hits)
    }

    /// FTS5's snippets of `texts` for the query of `filter`, by index: the
    /// hits' texts go into a temporary table of the same tokenizer (in
    /// memory, this connection only), so the words marked are the ones the
    /// cache matched.
    fn snippets(
        &self,
        filter: &Filter<'_>,
        texts: &[String],
    ) -> rusqlite::Result<HashMap<i64, String>> {
        self.conn.execute_batch("DELETE FROM temp.hits;")?;
        let mut insert = self
            .conn
            .prepare_cached("INSERT INTO temp.hits(rowid, text) VALUES (?1, ?2)")?;
        for (i, text) in texts.iter().enumerate() {
            insert.execute(params![i as i64, text])?;
        }
        let mut st = self.conn.prepare_cached(
            "SELECT rowid, snippet(hits, 0, ?2, ?3, '…', 24) FROM temp.hits WHERE hits MATCH ?1",
        )?;
        let rows = st.query_map(params![filter.expr, filter.marks.0, filter.marks.1], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        rows.collect()
    }
}

/// The message a log line holds, with its id, blob references resolved; `None`
/// for a line that is not a message record (§6) or not JSON.
pub(crate) fn message_of(
    bytes: &[u8],
    blobs: &BlobStore,
) -> Result<Option<(String, Map<String, Value>)>> {
    let Ok((text, probe)) = log::probe(bytes) else {
        return Ok(None);
    };
    let Ok(Class::Message { id, .. }) = classify(&probe) else {
        return Ok(None);
    };
    let id = id.to_string();
    let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    blobs.inline(&mut m)?;
    Ok(Some((id, m)))
}

/// What a refresh must do (see [`changes`]).
struct Changes<'a> {
    /// The logs the cache knows that are gone (session, agent).
    gone: Vec<(&'a str, &'a str)>,
    /// The logs to read, each with its known state.
    read: Vec<(&'a LogRef, Option<LogState>)>,
}

/// What a refresh must do, from the logs as listed and the states the cache
/// knows: the logs it knows that are gone, and the logs it must read (new, or
/// changed since it looked: inode, size or time), each with its known state.
/// One walk of both lists in key order: this runs before every query, over
/// every log of the store.
fn changes<'a>(logs: &'a [LogRef], known: &'a Known) -> Changes<'a> {
    let key = |l: &'a LogRef| (l.session.as_str(), l.agent.as_str());
    // Listed in session order already, so this sort is one pass.
    let mut listed: Vec<&LogRef> = logs.iter().collect();
    listed.sort_by(|a, b| key(a).cmp(&key(b)));
    let (mut gone, mut work) = (Vec::new(), Vec::new());
    let mut known = known.iter().peekable();
    for log in listed {
        let mut old = None;
        while let Some(((s, a), state)) = known.peek() {
            match (s.as_str(), a.as_str()).cmp(&key(log)) {
                Ordering::Less => gone.push((s.as_str(), a.as_str())),
                Ordering::Equal => old = Some(*state),
                Ordering::Greater => break,
            }
            known.next();
            if old.is_some() {
                break;
            }
        }
        if old.is_some_and(|s| (s.ino, s.size, s.mtime_ns) == log.seen) {
            continue;
        }
        work.push((log, old));
    }
    gone.extend(known.map(|((s, a), _)| (s.as_str(), a.as_str())));
    Changes { gone, read: work }
}

/// The state of a log as a row of `logs` holds it, from column `at` on.
fn state_of(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<LogState> {
    Ok(LogState {
        ino: r.get(at)?,
        size: r.get(at + 1)?,
        mtime_ns: r.get(at + 2)?,
        indexed: r.get(at + 3)?,
        head_hash: r.get(at + 4)?,
        tail_hash: r.get(at + 5)?,
    })
}

/// Index `log` in `tx` from where the cache left off, or from its start when
/// it was rewritten since (a new file, shorter, or other bytes where the
/// indexed ones were). Where the cache left off is read in `tx`, which holds
/// the write lock: another process may have indexed the log since this one
/// last looked, and reading from a stale offset would index lines twice.
fn index_log(
    tx: &Transaction<'_>,
    cache: &Path,
    log: &LogRef,
    blobs: &BlobStore,
) -> std::result::Result<u64, Failure> {
    let fail = |e| failure(cache, e);
    let (session, agent) = (log.session.as_str(), log.agent.as_str());
    let old = tx
        .prepare_cached(
            "SELECT id, ino, size, mtime_ns, indexed, head_hash, tail_hash FROM logs
             WHERE session = ?1 AND agent = ?2",
        )
        .and_then(|mut st| {
            st.query_row([session, agent], |r| {
                Ok((r.get::<_, i64>(0)?, state_of(r, 1)?))
            })
            .optional()
        })
        .map_err(fail)?;
    let (id, old) = (old.map(|(id, _)| id), old.map(|(_, s)| s));
    let mut file = match File::open(&log.path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(&log.path, e).into()),
    };
    let meta = file.metadata().at(&log.path)?;
    let start = match old {
        Some(s) if s.ino == meta.ino() as i64 && s.indexed as u64 <= meta.len() => {
            let (head, tail) = hashes(&file, &log.path, s.indexed as u64)?;
            if (head, tail) == (s.head_hash, s.tail_hash) {
                s.indexed as u64
            } else {
                0
            }
        }
        _ => 0,
    };
    // A log the cache has no row for has nothing to delete: deleting by the
    // unindexed `log` column scans the whole table, once per new log.
    if let Some(id) = id.filter(|_| start == 0) {
        forget_log(tx, id).map_err(fail)?;
    }
    // The log's row first, for its id: its state is written after the scan.
    let id = match id.filter(|_| start > 0) {
        Some(id) => id,
        None => {
            tx.execute(
                "INSERT INTO logs(session, agent, ino, size, mtime_ns, indexed, head_hash, tail_hash)
                 VALUES (?1, ?2, 0, 0, 0, 0, 0, 0)",
                [session, agent],
            )
            .map_err(fail)?;
            tx.last_insert_rowid()
        }
    };
    let mut sql_error = None;
    let end = {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO messages(text, log, message, role, ts, tools, at, len)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(fail)?;
        let mut remember = tx
            .prepare_cached("INSERT OR REPLACE INTO calls(log, call, tool) VALUES (?1, ?2, ?3)")
            .map_err(fail)?;
        let mut recall = tx
            .prepare_cached("SELECT tool FROM calls WHERE log = ?1 AND call = ?2")
            .map_err(fail)?;
        let mut report = ReadReport::default();
        log::scan(&mut file, &log.path, start, &mut report, |line, _| {
            if sql_error.is_some() {
                return Ok(());
            }
            let Some((message, m)) = message_of(line.bytes, blobs)? else {
                return Ok(());
            };
            let doc = document::of(&m);
            let row = (|| -> rusqlite::Result<()> {
                for (call, tool) in &doc.calls {
                    remember.execute(params![id, call, tool])?;
                }
                if doc.text.is_empty() {
                    return Ok(());
                }
                // A result carries only its call's id: it is found by the
                // tool's name too, as the call that asked for it is.
                let mut tools: Vec<String> = doc.tools.iter().map(|t| t.to_string()).collect();
                for call in &doc.answers {
                    let tool: Option<String> = recall
                        .query_row(params![id, call], |r| r.get(0))
                        .optional()?;
                    if let Some(t) = tool.filter(|t| !tools.contains(t)) {
                        tools.push(t);
                    }
                }
                insert.execute(params![
                    doc.text,
                    id,
                    message,
                    doc.role,
                    doc.ts,
                    tools.join("\n"),
                    line.offset as i64,
                    line.bytes.len() as i64
                ])?;
                Ok(())
            })();
            if let Err(e) = row {
                sql_error = Some(e);
            }
            Ok(())
        })?
    };
    if let Some(e) = sql_error {
        return Err(fail(e));
    }
    let (head_hash, tail_hash) = hashes(&file, &log.path, end)?;
    // The size and time as read: an append after the scan changes them, so
    // the next query looks again.
    let state = LogState {
        ino: meta.ino() as i64,
        size: meta.len() as i64,
        mtime_ns: mtime_ns(&meta),
        indexed: end as i64,
        head_hash,
        tail_hash,
    };
    tx.execute(
        "UPDATE logs SET ino = ?2, size = ?3, mtime_ns = ?4, indexed = ?5, head_hash = ?6,
         tail_hash = ?7 WHERE id = ?1",
        params![
            id,
            state.ino,
            state.size,
            state.mtime_ns,
            state.indexed,
            state.head_hash,
            state.tail_hash
        ],
    )
    .map_err(fail)?;
    Ok(end - start)
}

/// An FTS5 command (`optimize`) or persistent setting (`automerge`).
fn fts5(tx: &Transaction<'_>, key: &str, value: i64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO messages(messages, rank) VALUES (?1, ?2)",
        params![key, value],
    )
    .map(drop)
}

/// Delete everything the cache holds of one log.
fn forget(tx: &Transaction<'_>, session: &str, agent: &str) -> rusqlite::Result<()> {
    let id: Option<i64> = tx
        .query_row(
            "SELECT id FROM logs WHERE session = ?1 AND agent = ?2",
            [session, agent],
            |r| r.get(0),
        )
        .optional()?;
    match id {
        Some(id) => forget_log(tx, id),
        None => Ok(()),
    }
}

/// Delete everything the cache holds of the log whose row is `id`.
fn forget_log(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<()> {
    for (table, key) in [("messages", "log"), ("calls", "log"), ("logs", "id")] {
        tx.execute(&format!("DELETE FROM {table} WHERE {key} = ?1"), [id])?;
    }
    Ok(())
}

/// A log's modification time in nanoseconds, as `logs.mtime_ns` holds it.
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    nanos((meta.mtime(), meta.mtime_nsec()))
}

/// Seconds and nanoseconds as nanoseconds, saturating.
pub(crate) fn nanos((secs, nsec): (i64, i64)) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

/// Hashes of the first bytes of a log and of the bytes just before `end`.
fn hashes(file: &File, path: &Path, end: u64) -> Result<(i64, i64)> {
    let span = end.min(HASH_SPAN);
    let read = |at: u64| -> Result<i64> {
        let mut buf = vec![0u8; span as usize];
        file.read_exact_at(&mut buf, at).at(path)?;
        Ok(twox_hash::XxHash3_64::oneshot(&buf) as i64)
    };
    Ok((read(0)?, read(end - span)?))
}

/// Move a damaged cache out of the way (beside it, as `*.damaged`, replacing
/// an older one), with its WAL files, and say where it went.
pub(crate) fn set_aside(path: &Path) -> Result<PathBuf> {
    let aside = path.with_extension("sqlite.damaged");
    std::fs::rename(path, &aside).at(path)?;
    // A file of an older version may have been made 0644 by SQLite.
    std::fs::set_permissions(&aside, std::fs::Permissions::from_mode(0o600)).at(&aside)?;
    for ext in ["sqlite-wal", "sqlite-shm"] {
        crate::fsutil::remove_file_if_exists(&path.with_extension(ext))?;
    }
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(session: &str, agent: &str, size: i64) -> LogRef {
        LogRef {
            session: session.into(),
            agent: agent.into(),
            path: PathBuf::from(format!("{session}-{agent}")),
            seen: (1, size, 7),
        }
    }

    fn state(size: i64) -> LogState {
        LogState {
            ino: 1,
            size,
            mtime_ns: 7,
            indexed: size,
            head_hash: 0,
            tail_hash: 0,
        }
    }

    #[test]
    fn the_rank_is_fts5s_bm25_while_a_phrase_is_in_fewer_rows_than_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            Cache::open(&dir.path().join("index.sqlite")).unwrap_or_else(|_| panic!("open"));
        let texts = [
            "parse_config fails in src/main.rs",
            "src/main.rs and src/lib.rs, src/main.rs again",
            "nothing here but words and words",
            "parse_config parse_config in src/lib.rs",
            "a longer message that mentions parse_config once among many other words",
        ];
        for t in texts {
            cache
                .conn
                .execute(
                    "INSERT INTO messages(text, log, message) VALUES (?1, 1, 'm')",
                    [t],
                )
                .unwrap();
        }
        let scores = |f: &str, q: &str| -> Vec<(i64, f64)> {
            let mut st = cache
                .conn
                .prepare(&format!(
                    "SELECT rowid, {f}(messages) FROM messages WHERE messages MATCH ?1 ORDER BY rowid"
                ))
                .unwrap();
            st.query_map([q], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        for q in [
            "parse_config",
            "\"src main rs\"",
            "parse_config OR words",
            "src lib",
        ] {
            let (ours, theirs) = (scores(rank::NAME.to_str().unwrap(), q), scores("bm25", q));
            assert!(!ours.is_empty(), "{q}");
            assert_eq!(ours.len(), theirs.len(), "{q}");
            for ((a, x), (b, y)) in ours.iter().zip(&theirs) {
                assert_eq!(a, b);
                assert!((x - y).abs() < 1e-9, "{q}: row {a}: {x} against bm25 {y}");
            }
        }
    }

    #[test]
    fn a_phrase_in_more_rows_than_are_counted_weighs_as_one_in_that_many() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            Cache::open(&dir.path().join("index.sqlite")).unwrap_or_else(|_| panic!("open"));
        let (rows, with) = (4 * rank::COUNTED, rank::COUNTED + rank::COUNTED / 5);
        cache.conn.execute_batch("BEGIN").unwrap();
        for i in 0..rows {
            let text = if i < with {
                "common word"
            } else {
                "other word"
            };
            cache
                .conn
                .execute(
                    "INSERT INTO messages(text, log, message) VALUES (?1, 1, 'm')",
                    [text],
                )
                .unwrap();
        }
        cache.conn.execute_batch("COMMIT").unwrap();
        let score = |f: &str| -> f64 {
            cache
                .conn
                .query_row(
                    &format!("SELECT {f}(messages) FROM messages WHERE messages MATCH 'common' AND rowid = 1"),
                    [],
                    |r| r.get(0),
                )
                .unwrap()
        };
        // One phrase: the scores differ only by its weight, BM25's IDF.
        let idf = |hits: i64| ((rows - hits) as f64 + 0.5).ln() - (hits as f64 + 0.5).ln();
        let ratio = score(rank::NAME.to_str().unwrap()) / score("bm25");
        assert!(
            (ratio - idf(rank::COUNTED) / idf(with)).abs() < 1e-9,
            "{ratio}"
        );
    }

    #[test]
    fn opening_a_cache_writes_nothing_to_it_and_a_new_one_is_auto_vacuumed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let first = Cache::open(&path).unwrap_or_else(|_| panic!("open"));
        let setting: i64 = first
            .conn
            .pragma_query_value(None, "auto_vacuum", |r| r.get(0))
            .unwrap();
        assert_eq!(setting, 2, "incremental");
        let version = |c: &Cache| -> i64 {
            c.conn
                .pragma_query_value(None, "data_version", |r| r.get(0))
                .unwrap()
        };
        let before = version(&first);
        // Every query opens the cache: an open that wrote (as setting
        // auto_vacuum in a file with tables does) cost a checkpoint each.
        let second = Cache::open(&path).unwrap_or_else(|_| panic!("open"));
        drop(second);
        assert_eq!(version(&first), before, "another connection committed");
    }

    #[test]
    fn changes_names_the_logs_gone_and_those_to_read_in_any_listed_order() {
        let known: Known = [("a", "", 10), ("b", "", 20), ("b", "x", 5), ("d", "", 1)]
            .into_iter()
            .map(|(s, a, n)| ((s.to_string(), a.to_string()), state(n)))
            .collect();
        // Subagents come in the order their directory lists them.
        let logs = [
            log("b", "", 20),
            log("b", "y", 3),
            log("b", "x", 6),
            log("c", "", 4),
        ];
        let c = changes(&logs, &known);
        assert_eq!(c.gone, [("a", ""), ("d", "")]);
        let work: Vec<_> = c
            .read
            .iter()
            .map(|(l, old)| (l.session.as_str(), l.agent.as_str(), old.map(|s| s.size)))
            .collect();
        assert_eq!(
            work,
            [("b", "x", Some(5)), ("b", "y", None), ("c", "", None)]
        );
        let c = changes(&[], &known);
        assert_eq!(c.gone.len(), 4);
        assert!(c.read.is_empty());
    }
}
