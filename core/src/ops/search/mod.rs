//! Full-text search over the sessions of a project, or of every project in
//! the home: a derived cache per store (`cache`, FORMAT.md §23) brought up to
//! date from the logs before each query answers, so the logs stay the only
//! truth.

mod cache;
mod document;
mod fresh;
mod query;

pub use fresh::SEARCH_FULL_CHECK_MS;
pub use query::{MAX_SEARCH_QUERY_BYTES, MAX_SEARCH_QUERY_TERMS};

use std::ffi::CStr;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::format::ids::{format_ms, parse_ms, validate_path_id};
use crate::format::layout::{subagents_dir_in, SUBAGENTS_DIR};
use crate::platform;
use crate::store::{list_store, subagent_logs_in, ListedLog, StoreCore};
use cache::{Cache, Failure, Filter, LogRef};
use fresh::Look;

/// How many hits a query returns when it does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;

/// A full-text query and its filters (JSON: camelCase fields).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SearchQuery {
    /// What to look for: words (all must match), `"quoted phrases"`,
    /// `prefix*`, and `OR` between two terms. Code and paths are found as
    /// written (`parse_config`, `src/main.rs`). At most
    /// [`MAX_SEARCH_QUERY_BYTES`] bytes and [`MAX_SEARCH_QUERY_TERMS`] terms;
    /// no NUL (nor in the other strings).
    pub text: String,
    /// Every project of the home, not only this store's.
    pub all: bool,
    /// Only messages of this role (`user`, `assistant`, `tool`, `system`).
    pub role: Option<String>,
    /// Only this session (an id or the start of one).
    pub session: Option<String>,
    /// Only messages at or after this time (RFC 3339, or a date `YYYY-MM-DD`).
    pub since: Option<String>,
    /// Only messages at or before this time (RFC 3339, or a date, meaning its end).
    pub until: Option<String>,
    /// Only messages that call this tool, or carry the result of a call to it.
    pub tool: Option<String>,
    /// At most this many hits (default [`DEFAULT_SEARCH_LIMIT`]).
    pub limit: Option<usize>,
}

impl SearchQuery {
    /// Parse a query from its JSON form (`{"text": ..., "role": ..., ...}`);
    /// an unknown field or a wrong type is `InvalidInput`.
    pub fn from_json(json: &str) -> Result<SearchQuery> {
        crate::format::json::options_from_json("search query", json)
    }
}

/// One message that matches, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The project code of the store holding the session.
    pub project: String,
    /// The session.
    pub session_id: String,
    /// The subagent of the session whose log holds the message (its
    /// sidechain), or `None` for the session's own log.
    pub agent_id: Option<String>,
    /// The message: resume or fork at it (in the session, or in the subagent's
    /// log when `agent_id` is set) to continue from there.
    pub message_id: String,
    /// Its role, as written.
    pub role: Option<String>,
    /// Its time (RFC 3339), when it has one.
    pub timestamp: Option<String>,
    /// The tools it calls, and those whose results it carries.
    pub tools: Vec<String>,
    /// A piece of its text around the match, matched words between `«` and `»`.
    pub snippet: String,
    /// Relevance (BM25; higher is better).
    pub score: f64,
}

/// The answer to a [`SearchQuery`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    /// The matches, best first.
    pub hits: Vec<SearchHit>,
    /// Bytes of log read to bring the caches up to date before answering.
    pub indexed_bytes: u64,
    /// How many logs' states (a `stat` each) were compared with the caches'
    /// before answering: every log of the store after a full check, only the
    /// logs the change feed named otherwise (FORMAT.md §23.4). A measure of
    /// the freshness check's cost, for tests and benchmarks; not in the JSON
    /// form.
    #[serde(skip)]
    pub checked: u64,
    /// Damaged caches found, set aside (renamed to these paths) and rebuilt.
    pub set_aside: Vec<PathBuf>,
    /// Projects whose cache another process was updating: their hits may miss
    /// the latest appends (never show a deleted session).
    pub stale: Vec<String>,
}

/// Answer `q` over the store of `store` (or every store of its home).
pub(crate) fn search(store: &StoreCore, q: &SearchQuery) -> Result<SearchResults> {
    let expr = query::to_match(&q.text)?;
    // Refused here, before any cache file is opened: a NUL would otherwise
    // surface as an error of the cache. No role, id or tool name holds a
    // control character (a newline in a tool name would match two tools).
    for (what, value) in [
        ("role", &q.role),
        ("session", &q.session),
        ("since", &q.since),
        ("until", &q.until),
        ("tool", &q.tool),
    ] {
        if let Some(at) = value.as_deref().and_then(|v| v.find(char::is_control)) {
            return Err(Error::invalid(format!(
                "search {what} holds a NUL or another control character at byte {at}"
            )));
        }
    }
    let filter = Filter {
        expr: &expr,
        role: q.role.as_deref(),
        session: q.session.as_deref(),
        since_ms: q
            .since
            .as_deref()
            .map(|s| time_ms("since", s, false))
            .transpose()?,
        until_ms: q
            .until
            .as_deref()
            .map(|s| time_ms("until", s, true))
            .transpose()?,
        tool: q.tool.as_deref(),
        limit: q.limit.unwrap_or(DEFAULT_SEARCH_LIMIT),
        marks: ("«", "»"),
    };
    let dirs = if q.all {
        project_dirs(&store.options().resolve_home()?)?
    } else {
        vec![store.dir().to_path_buf()]
    };
    let mut out = SearchResults::default();
    let mut scored = Vec::new();
    for dir in dirs {
        let project = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        for row in search_store(&dir, &project, &filter, &mut out)? {
            scored.push((row.rank, project.clone(), row));
        }
    }
    // BM25 from FTS5 is negative, lower is better; merged across files and
    // stores as is. Equal scores (a fork's copy of a message scores as its
    // original) go newest first, then by session and message id, so the
    // order never depends on which file or thread answered first.
    scored.sort_by(|(rank_a, project_a, a), (rank_b, project_b, b)| {
        rank_a
            .total_cmp(rank_b)
            .then(b.ts.cmp(&a.ts))
            .then_with(|| a.session.cmp(&b.session))
            .then_with(|| a.agent.cmp(&b.agent))
            .then_with(|| a.message.cmp(&b.message))
            .then_with(|| project_a.cmp(project_b))
    });
    scored.truncate(filter.limit);
    out.hits = scored
        .into_iter()
        .map(|(rank, project, r)| SearchHit {
            project,
            session_id: r.session,
            agent_id: Some(r.agent).filter(|a| !a.is_empty()),
            message_id: r.message,
            role: r.role,
            timestamp: r.ts.map(|ms| format_ms(ms as u64)),
            tools: r
                .tools
                .split('\n')
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect(),
            snippet: r.snippet,
            score: -rank,
        })
        .collect();
    Ok(out)
}

/// Bring the cache of the store in `dir` up to date and query it: each of its
/// files on its own thread, so a build indexes on several cores and a query
/// matches the files at once.
fn search_store(
    dir: &Path,
    project: &str,
    filter: &Filter<'_>,
    out: &mut SearchResults,
) -> Result<Vec<cache::Row>> {
    let paths = cache::cache_paths(dir);
    let blobs = BlobStore::new(dir);
    // The cache's directory first: made after the look, it would change the
    // store directory's time and make the next query check every log.
    if let Some(parent) = paths[0].parent() {
        crate::fsutil::create_private_dir(parent)?;
    }
    // Before anything is listed or read: a change after this is the next
    // query's (§23.4).
    let look = Look::take(dir)?;
    let opened: Vec<_> = on_each(&paths, |path| {
        Cache::open(path).and_then(|c| {
            let state = c.feed_state().map_err(|e| cache::failure(path, e))?;
            Ok((c, state))
        })
    });
    // One listing of the store for every file that must make a full check.
    let full = opened.iter().any(|o| {
        o.as_ref()
            .map_or(true, |(_, state)| look.needs_full(state.as_ref()))
    });
    let listed = if full { Some(logs_in(dir)?) } else { None };
    let mut shards: Vec<Vec<LogRef>> = (0..paths.len()).map(|_| Vec::new()).collect();
    for log in listed.into_iter().flatten() {
        shards[cache::shard_of(&log.session)].push(log);
    }
    let (blobs, look) = (&blobs, &look);
    let work: Vec<_> = paths
        .iter()
        .zip(opened)
        .zip(shards)
        .enumerate()
        .map(|(shard, ((path, opened), listed))| (shard, path, opened, listed))
        .collect();
    let answers = std::thread::scope(|sc| {
        let mut work = work.into_iter();
        let here = work.next();
        let others: Vec<_> = work
            .map(|(shard, path, opened, listed)| {
                sc.spawn(move || {
                    let listed = full.then_some(listed);
                    search_file(dir, path, shard, opened, listed, look, filter, blobs)
                })
            })
            .collect();
        let mut answers = Vec::new();
        if let Some((shard, path, opened, listed)) = here {
            let listed = full.then_some(listed);
            answers.push(search_file(
                dir, path, shard, opened, listed, look, filter, blobs,
            ));
        }
        for other in others {
            answers.push(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        answers
    });
    let mut rows = Vec::new();
    for answer in answers {
        let answer = answer?;
        out.indexed_bytes += answer.indexed_bytes;
        out.checked += answer.checked;
        out.set_aside.extend(answer.set_aside);
        if answer.stale && !out.stale.iter().any(|p| p == project) {
            out.stale.push(project.to_string());
        }
        rows.extend(answer.rows);
    }
    Ok(rows)
}

/// `f` of each of `items`, the first on this thread and the others each on
/// its own, in order.
fn on_each<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|sc| {
        let f = &f;
        let others: Vec<_> = items[1.min(items.len())..]
            .iter()
            .map(|item| sc.spawn(move || f(item)))
            .collect();
        let mut out: Vec<R> = items.first().map(f).into_iter().collect();
        for other in others {
            out.push(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        out
    })
}

/// What one file of a store's cache answered.
struct FileAnswer {
    rows: Vec<cache::Row>,
    indexed_bytes: u64,
    /// Logs whose state was compared with the cache's.
    checked: u64,
    set_aside: Vec<PathBuf>,
    /// Another process held the file: the rows may miss the latest appends.
    stale: bool,
}

type Opened = std::result::Result<(Cache, Option<cache::FeedState>), Failure>;

/// Bring the cache file at `path` (shard `shard`) up to date and query it; a
/// damaged file is set aside and rebuilt once. `listed` holds the logs of its
/// sessions when the store was listed for a full check; otherwise only the
/// logs the change feed has named are looked at (§23.4).
#[allow(clippy::too_many_arguments)]
fn search_file(
    dir: &Path,
    path: &Path,
    shard: usize,
    opened: Opened,
    listed: Option<Vec<LogRef>>,
    look: &Look,
    filter: &Filter<'_>,
    blobs: &BlobStore,
) -> Result<FileAnswer> {
    let mut answer = FileAnswer {
        rows: Vec::new(),
        indexed_bytes: 0,
        checked: 0,
        set_aside: Vec::new(),
        stale: false,
    };
    let mut opened = Some(opened);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = opened
            .take()
            .unwrap_or_else(|| {
                Cache::open(path).and_then(|c| {
                    let state = c.feed_state().map_err(|e| cache::failure(path, e))?;
                    Ok((c, state))
                })
            })
            .and_then(|(mut c, state)| {
                let fresh = freshen(dir, shard, &mut c, state, listed.as_deref(), look, blobs)?;
                answer.indexed_bytes += fresh.indexed_bytes;
                answer.checked += fresh.checked;
                answer.stale |= fresh.stale;
                c.query(filter, |row| hit_text(dir, row, blobs))
            });
        match result {
            Ok(rows) => {
                answer.rows = rows;
                return Ok(answer);
            }
            Err(Failure::Damaged(_)) if attempt == 1 => {
                answer.set_aside.push(cache::set_aside(path)?);
            }
            Err(Failure::Damaged(why)) => {
                return Err(Error::Corrupt(format!(
                    "search cache {}: {why}, again after it was rebuilt",
                    path.display()
                )))
            }
            Err(Failure::Busy) => {
                answer.stale = true;
                return Ok(answer);
            }
            Err(Failure::Other(e)) => return Err(e),
        }
    }
}

/// What bringing one file up to date did.
struct Freshened {
    indexed_bytes: u64,
    checked: u64,
    /// Another process held the file's write lock.
    stale: bool,
}

/// Bring the cache file `c` (shard `shard`, last checked as `state`) up to
/// date (§23.4): with `listed`, every log of its sessions is compared with
/// its row; without, the watched logs and those the feed named since the
/// recorded offset (a `stat` each). Then the check is recorded.
fn freshen(
    dir: &Path,
    shard: usize,
    c: &mut Cache,
    state: Option<cache::FeedState>,
    listed: Option<&[LogRef]>,
    look: &Look,
    blobs: &BlobStore,
) -> std::result::Result<Freshened, Failure> {
    // A full check of a file that has a state reads the feed from its
    // offset, and from its start when the feed was replaced: a writer that
    // opened a log before keeps appending to it.
    let (dev, ino, _) = look.feed_id();
    let from = state
        .as_ref()
        .filter(|s| (s.feed_dev, s.feed_ino) == (dev, ino))
        .map_or(0, |s| s.feed_offset);
    let (named, feed_offset) = look.names_since(dir, from, shard)?;
    let watched = c.watched()?;
    let stated;
    let (logs, known) = match listed {
        Some(logs) => (logs, c.states().map_err(|e| cache::failure(c.path(), e))?),
        None => {
            let mut keys: Vec<(String, String)> = watched.iter().chain(&named).cloned().collect();
            keys.sort();
            keys.dedup();
            stated = stat_logs(dir, &keys)?;
            (&stated[..], c.states_of(&keys)?)
        }
    };
    let mut out = Freshened {
        indexed_bytes: 0,
        checked: logs.len() as u64,
        stale: false,
    };
    match c.refresh(logs, &known, blobs) {
        Ok(n) => out.indexed_bytes = n,
        Err(Failure::Busy) => {
            // Nothing recorded: the next query looks again.
            out.stale = true;
            return Ok(out);
        }
        Err(e) => return Err(e),
    }
    let checked = cache::Checked {
        full: listed.is_some(),
        named: &named,
        feed_offset,
        logs,
        known: &known,
        watched: &watched,
    };
    match c.record(look, &checked) {
        Ok(()) => {}
        Err(Failure::Busy) => out.stale = true,
        Err(e) => return Err(e),
    }
    Ok(out)
}

/// The logs `keys` (session, agent) that exist, with their state: a `stat`
/// each.
fn stat_logs(dir: &Path, keys: &[(String, String)]) -> Result<Vec<LogRef>> {
    let mut logs = Vec::with_capacity(keys.len());
    for (session, agent) in keys {
        let path = log_path(dir, session, agent);
        match std::fs::metadata(&path) {
            Ok(m) => logs.push(LogRef {
                path,
                session: session.clone(),
                agent: agent.clone(),
                seen: (m.ino() as i64, m.len() as i64, cache::mtime_ns(&m)),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    Ok(logs)
}

/// The indexed text of a hit's message, read from its line in the log; `None`
/// when the log is gone (a session deleted while another process held the
/// cache) or the line no longer holds that message (the log rewritten since).
fn hit_text(dir: &Path, row: &cache::Row, blobs: &BlobStore) -> Result<Option<String>> {
    let path = log_path(dir, &row.session, &row.agent);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let (Ok(at), Ok(len)) = (u64::try_from(row.at), usize::try_from(row.len)) else {
        return Ok(None);
    };
    let mut line = vec![0; len];
    match file.read_exact_at(&mut line, at) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    }
    Ok(cache::message_of(&line, blobs)?
        .filter(|(id, _)| *id == row.message)
        .map(|(_, m)| document::of(&m).text))
}

/// Every log of the store in `dir`: each session's, then its subagents', with
/// their state as listed. This runs before every query, so it costs one
/// listing of the store and one `stat` per log, relative to the open store
/// directory (on two threads for a large store: the calls are the kernel's
/// work, a few microseconds each); only a session with a `subagents/`
/// directory is listed for subagent logs. A log deleted while it is listed is
/// left out (the cache then forgets it).
fn logs_in(dir: &Path) -> Result<Vec<LogRef>> {
    const PARALLEL_SESSIONS: usize = 256;
    let store = platform::Dir::open_path(dir).at(dir)?;
    let listed = list_store(&store, dir)?;
    let look = |sessions: &[ListedLog]| -> Result<Vec<LogRef>> {
        let mut logs = Vec::with_capacity(sessions.len());
        let mut name = Vec::new();
        for session in sessions {
            session_logs(dir, &store, session, &mut name, &mut logs)?;
        }
        Ok(logs)
    };
    crate::store::in_two_halves(&listed, PARALLEL_SESSIONS, look)
}

/// Add the logs of `session` to `logs`: its own, then (when it has a sidecar
/// directory) its subagents'. `name` is a buffer for the names looked up.
fn session_logs(
    dir: &Path,
    store: &platform::Dir,
    listed: &ListedLog,
    name: &mut Vec<u8>,
    logs: &mut Vec<LogRef>,
) -> Result<()> {
    let session = listed.id.as_str();
    match store.stat(c_name(name, &[session, ".jsonl"])?) {
        Ok(st) => logs.push(LogRef {
            path: log_path(dir, session, ""),
            session: session.to_string(),
            agent: String::new(),
            seen: (st.ino as i64, st.size, cache::nanos(st.mtime)),
        }),
        Err(rustix::io::Errno::NOENT) => {}
        Err(e) => return Err(Error::io(&log_path(dir, session, ""), e.into())),
    }
    // A sidecar directory without `subagents/` (most: it holds the structure
    // cache) costs one lookup relative to the store.
    if !listed.has_dir
        || store.stat(c_name(name, &[session, "/", SUBAGENTS_DIR])?)
            == Err(rustix::io::Errno::NOENT)
    {
        return Ok(());
    }
    // Only what can be an agent id: not a `.tmp-` file of a crash.
    for (agent, path) in subagent_logs_in(&dir.join(session))? {
        if validate_path_id("agent id", &agent).is_err() {
            continue;
        }
        match std::fs::metadata(&path) {
            Ok(m) => logs.push(LogRef {
                path,
                session: session.to_string(),
                agent,
                seen: (m.ino() as i64, m.len() as i64, cache::mtime_ns(&m)),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    Ok(())
}

/// `parts` joined into `buf` as a name for a system call, relative to the
/// store directory: the ids in it were checked when listed, so a NUL is
/// `InvalidInput` only in theory.
fn c_name<'b>(buf: &'b mut Vec<u8>, parts: &[&str]) -> Result<&'b CStr> {
    buf.clear();
    for p in parts {
        buf.extend_from_slice(p.as_bytes());
    }
    buf.push(0);
    CStr::from_bytes_with_nul(buf)
        .map_err(|_| Error::invalid(format!("{:?} has a NUL", parts.concat())))
}

/// The log of `session` in `dir`, or of its subagent `agent` when not empty.
fn log_path(dir: &Path, session: &str, agent: &str) -> PathBuf {
    if agent.is_empty() {
        dir.join(format!("{session}.jsonl"))
    } else {
        subagents_dir_in(&dir.join(session)).join(format!("{agent}.jsonl"))
    }
}

/// The store directories of every project in `home`.
fn project_dirs(home: &Path) -> Result<Vec<PathBuf>> {
    let projects = home.join("projects");
    let entries = match std::fs::read_dir(&projects) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&projects, e)),
    };
    let mut dirs = Vec::new();
    for e in entries {
        let e = e.at(&projects)?;
        if e.file_type().at(&e.path())?.is_dir() {
            dirs.push(e.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// A filter time in milliseconds: RFC 3339, or a date (its start, or with
/// `end_of_day` its last millisecond).
fn time_ms(what: &str, s: &str, end_of_day: bool) -> Result<i64> {
    let date_only = s.len() == 10 && s.as_bytes().get(4) == Some(&b'-');
    let parsed = if date_only {
        parse_ms(&format!("{s}T00:00:00Z")).map(|ms| if end_of_day { ms + 86_399_999 } else { ms })
    } else {
        parse_ms(s)
    };
    parsed.map(|ms| ms as i64).ok_or_else(|| {
        Error::invalid(format!(
            "search {what}: {s:?} is not an RFC 3339 time or a YYYY-MM-DD date"
        ))
    })
}
