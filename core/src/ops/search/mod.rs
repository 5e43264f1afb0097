//! Full-text search over the sessions of a project, or of every project in
//! the home: a derived cache per store (`cache`, FORMAT.md §23) brought up to
//! date from the logs before each query answers, so the logs stay the only
//! truth.

mod cache;
mod document;
mod query;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::blobs::BlobStore;
use crate::error::{Error, IoContext, Result};
use crate::format::ids::{format_ms, parse_ms, validate_path_id};
use crate::format::layout::subagents_dir_in;
use crate::store::{log_ids_in, subagent_logs_in, StoreCore};
use cache::{Cache, Failure, Filter, LogRef};

/// How many hits a query returns when it does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;

/// A full-text query and its filters (JSON: camelCase fields).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SearchQuery {
    /// What to look for: words (all must match), `"quoted phrases"`,
    /// `prefix*`, and `OR` between two terms. Code and paths are found as
    /// written (`parse_config`, `src/main.rs`).
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
    // BM25 from FTS5 is negative, lower is better; merged across stores as is.
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
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

/// Bring the cache of the store in `dir` up to date and query it; a damaged
/// cache is set aside and rebuilt once.
fn search_store(
    dir: &Path,
    project: &str,
    filter: &Filter<'_>,
    out: &mut SearchResults,
) -> Result<Vec<cache::Row>> {
    let path = cache::cache_path(dir);
    let logs = logs_in(dir)?;
    let blobs = BlobStore::new(dir);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = Cache::open(&path).and_then(|mut c| {
            match c.refresh(&logs, &blobs) {
                Ok(n) => out.indexed_bytes += n,
                Err(Failure::Busy) => out.stale.push(project.to_string()),
                Err(e) => return Err(e),
            }
            c.query(filter)
        });
        match result {
            Ok(mut rows) => {
                // A session deleted while another process held the cache.
                rows.retain(|r| log_path(dir, &r.session, &r.agent).exists());
                return Ok(rows);
            }
            Err(Failure::Damaged(_)) if attempt == 1 => {
                out.set_aside.push(cache::set_aside(&path)?);
            }
            Err(Failure::Damaged(why)) => {
                return Err(Error::Corrupt(format!(
                    "search cache {}: {why}, again after it was rebuilt",
                    path.display()
                )))
            }
            Err(Failure::Busy) => {
                out.stale.push(project.to_string());
                return Ok(Vec::new());
            }
            Err(Failure::Other(e)) => return Err(e),
        }
    }
}

/// Every log of the store in `dir`: each session's, then its subagents'.
fn logs_in(dir: &Path) -> Result<Vec<LogRef>> {
    let mut logs = Vec::new();
    for session in log_ids_in(dir)? {
        let agents = subagent_logs_in(&dir.join(&session))?;
        logs.push(LogRef {
            path: log_path(dir, &session, ""),
            session: session.clone(),
            agent: String::new(),
        });
        // Only what can be an agent id: not a `.tmp-` file of a crash.
        logs.extend(
            agents
                .into_iter()
                .filter(|(agent, _)| validate_path_id("agent id", agent).is_ok())
                .map(|(agent, path)| LogRef {
                    path,
                    session: session.clone(),
                    agent,
                }),
        );
    }
    Ok(logs)
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
