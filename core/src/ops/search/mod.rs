//! Full-text search over the sessions of a project, or of every project in
//! the home: a derived cache per store (`cache`, FORMAT.md §23) brought up to
//! date from the logs before each query answers, so the logs stay the only
//! truth.

mod cache;
mod document;
mod query;

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
    let open_all = || paths.iter().map(|p| Cache::open_known(p)).collect();
    // Listing the logs (a stat per log) is most of what a query costs before
    // it matches: the cache opens and reads what it knows meanwhile.
    let (logs, opened): (_, Vec<_>) = std::thread::scope(|sc| {
        let opening = sc.spawn(open_all);
        let logs = logs_in(dir);
        let opened = opening.join().unwrap_or_else(|_| open_all());
        (logs, opened)
    });
    let mut shards: Vec<Vec<LogRef>> = (0..paths.len()).map(|_| Vec::new()).collect();
    for log in logs? {
        shards[cache::shard_of(&log.session)].push(log);
    }
    let blobs = &blobs;
    let answers: Vec<_> = std::thread::scope(|sc| {
        let mut work = paths.iter().zip(opened).zip(&shards);
        let here = work.next();
        let others: Vec<_> = work
            .map(|((path, opened), logs)| {
                sc.spawn(move || search_file(dir, path, opened, logs, filter, blobs))
            })
            .collect();
        let mut answers = Vec::new();
        if let Some(((path, opened), logs)) = here {
            answers.push(search_file(dir, path, opened, logs, filter, blobs));
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
        out.set_aside.extend(answer.set_aside);
        if answer.stale && !out.stale.iter().any(|p| p == project) {
            out.stale.push(project.to_string());
        }
        rows.extend(answer.rows);
    }
    Ok(rows)
}

/// What one file of a store's cache answered.
struct FileAnswer {
    rows: Vec<cache::Row>,
    indexed_bytes: u64,
    set_aside: Vec<PathBuf>,
    /// Another process held the file: the rows may miss the latest appends.
    stale: bool,
}

/// Bring the cache file at `path` up to date with `logs` (those of the
/// sessions it indexes) and query it; a damaged file is set aside and rebuilt
/// once.
fn search_file(
    dir: &Path,
    path: &Path,
    opened: std::result::Result<(Cache, cache::Known), Failure>,
    logs: &[LogRef],
    filter: &Filter<'_>,
    blobs: &BlobStore,
) -> Result<FileAnswer> {
    let mut answer = FileAnswer {
        rows: Vec::new(),
        indexed_bytes: 0,
        set_aside: Vec::new(),
        stale: false,
    };
    let mut opened = Some(opened);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = opened
            .take()
            .unwrap_or_else(|| Cache::open_known(path))
            .and_then(|(mut c, known)| {
                match c.refresh(logs, &known, blobs) {
                    Ok(n) => answer.indexed_bytes += n,
                    Err(Failure::Busy) => answer.stale = true,
                    Err(e) => return Err(e),
                }
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
    if listed.len() < PARALLEL_SESSIONS {
        return look(&listed);
    }
    let (first, second) = listed.split_at(listed.len() / 2);
    std::thread::scope(|sc| {
        let other = sc.spawn(|| look(second));
        let mut logs = look(first)?;
        match other.join() {
            Ok(rest) => logs.extend(rest?),
            Err(_) => logs.extend(look(second)?),
        }
        Ok(logs)
    })
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
