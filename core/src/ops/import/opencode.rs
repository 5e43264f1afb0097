//! opencode sessions (FORMAT.md §22.7): the SQLite database opencode 1.2 and
//! later keeps (`~/.local/share/opencode/opencode.db`), tables `session`,
//! `message` and `part`. One database holds many sessions; each becomes one
//! sessionkit session (as does a session file of the JSON tree of opencode
//! 1.1 and earlier). A session's rows are read into a source of JSON lines
//! (the session row, then one line per message holding its parts), which the
//! import writes as it writes a transcript's lines; since rows change in place
//! in a live database, what is already in is decided by message id, not by the
//! bytes of that text.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Map, Value};

use super::source::SourceFile;
use super::{
    message, path_id, title_of, Converted, ImportFormat, ImportOptions, Item, LineNote,
    SourceReport,
};
use crate::options::StoreOptions;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Whether `path` is a SQLite database (read without blocking: a FIFO is
/// never waited on).
pub(super) fn is_database(path: &Path) -> bool {
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 16];
    file.take(16).read_exact(&mut head).is_ok() && &head == SQLITE_MAGIC
}

/// Import every session of the opencode database at `path`: one report each.
pub(super) fn import_db(
    path: &Path,
    options: &ImportOptions,
    store_options: &StoreOptions,
) -> Vec<SourceReport> {
    let failed = |e: String| vec![SourceReport::new(path, Some(ImportFormat::Opencode)).failed(e)];
    let canonical = match std::fs::canonicalize(path) {
        Ok(c) => c,
        Err(e) => return failed(format!("{}: {e}", path.display())),
    };
    let conn = match open(&canonical) {
        Ok(c) => c,
        Err(e) => {
            return failed(format!(
                "{}: opening the opencode database: {e}",
                path.display()
            ))
        }
    };
    let sessions = match rows(
        &conn,
        "SELECT * FROM session ORDER BY time_created, id",
        &[],
    ) {
        Ok(s) => s,
        Err(e) => {
            return failed(format!(
                "{}: not an opencode database, or one of another version (no readable \
                 `session` table: {e})",
                path.display()
            ))
        }
    };
    let mut out = Vec::new();
    for row in sessions {
        let id = row
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut report = SourceReport::new(path, Some(ImportFormat::Opencode));
        let file = match db_session_source(&conn, &row, &id) {
            Ok(f) => f,
            Err(e) => {
                report.session_id = Some(id.clone());
                out.push(report.failed(format!("{}: session {id:?}: {e}", path.display())));
                continue;
            }
        };
        let conv = convert(&row, &file);
        let key = format!("{}#{id}", canonical.display());
        out.push(super::write::import_rows(
            path,
            &key,
            &file,
            conv,
            options,
            store_options,
        ));
    }
    out
}

/// The database opened read-only, so that an import never writes to it:
/// `mode=ro`, and `query_only` on top. A read-only connection never
/// checkpoints the write-ahead log nor deletes it. `immutable=1` only when
/// there is no log (`-wal`) nor index (`-shm`) beside it: then no running
/// opencode has rows outside the file, and SQLite, told the file cannot
/// change, creates neither beside it (as `mode=ro` alone would); with a log,
/// `immutable` would ignore the newest rows.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let beside = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        std::fs::symlink_metadata(PathBuf::from(p)).is_ok()
    };
    let at_rest = !beside("-wal") && !beside("-shm");
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(*b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str(if at_rest {
        "?mode=ro&immutable=1"
    } else {
        "?mode=ro"
    });
    let conn = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.pragma_update(None, "query_only", true)?;
    // A live opencode holds the database for short writes: wait a little.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// The rows of `sql`, each as a JSON object of its columns as stored.
fn rows(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<Map<String, Value>>> {
    let mut stmt = conn.prepare(sql)?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    let mut it = stmt.query(params)?;
    while let Some(r) = it.next()? {
        let mut m = Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => n.into(),
                ValueRef::Real(f) => json!(f),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                ValueRef::Blob(b) => String::from_utf8_lossy(b).into_owned().into(),
            };
            m.insert(name.clone(), v);
        }
        out.push(m);
    }
    Ok(out)
}

/// A row's `time_created` (Unix ms) as a timestamp.
fn time_of(row: &Map<String, Value>) -> Option<String> {
    row.get("time_created")
        .and_then(Value::as_u64)
        .map(crate::format::ids::format_ms)
}

/// A row's `data` column parsed, when it is a JSON object.
fn data_of(row: &Map<String, Value>) -> Option<Map<String, Value>> {
    match serde_json::from_str(row.get("data")?.as_str()?) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// A session's rows as JSON lines: `{"timestamp", "session": row}`, then per
/// message `{"timestamp", "message": row, "parts": [row, …]}`, columns as
/// stored. The lines end before the first assistant message still being
/// written (no `time.completed`, no `error`): it and what follows are
/// imported once it is done, as a transcript's incomplete last line is.
fn session_source<E>(
    session: &Map<String, Value>,
    messages: Vec<Map<String, Value>>,
    mut parts_of: impl FnMut(&str) -> std::result::Result<Vec<Map<String, Value>>, E>,
) -> std::result::Result<SourceFile, E> {
    let mut text = String::new();
    let mut line = |v: Value| {
        text.push_str(&v.to_string());
        text.push('\n');
    };
    line(json!({"timestamp": time_of(session), "session": session}));
    let mut pending = None;
    for (n, m) in messages.into_iter().enumerate() {
        let data = data_of(&m);
        let running = data.as_ref().is_some_and(|d| {
            d.get("role").and_then(Value::as_str) == Some("assistant")
                && d.get("time").and_then(|t| t.get("completed")).is_none()
                && d.get("error").is_none()
        });
        if running {
            pending = Some(n as u64 + 2);
            break;
        }
        let mid = m
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let parts = parts_of(&mid)?;
        line(json!({"timestamp": time_of(&m), "message": m, "parts": parts}));
    }
    let mut file = SourceFile::from_text(text);
    if let Some(n) = pending {
        file.skipped.push(LineNote {
            line: n,
            reason: "an assistant message still being written (not completed): imported, with \
                     what follows, once it is"
                .into(),
        });
    }
    Ok(file)
}

/// A session of the database as a source.
fn db_session_source(
    conn: &Connection,
    session: &Map<String, Value>,
    id: &str,
) -> rusqlite::Result<SourceFile> {
    let messages = rows(
        conn,
        "SELECT * FROM message WHERE session_id = ?1 ORDER BY time_created, id",
        &[&id],
    )?;
    session_source(session, messages, |mid| {
        rows(
            conn,
            "SELECT * FROM part WHERE message_id = ?1 ORDER BY id",
            &[&mid],
        )
    })
}

/// Whether `path` is a session file of opencode 1.1 and earlier:
/// `storage/session/<project>/ses_*.json`.
pub(super) fn is_session_file(path: &Path) -> bool {
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .map(str::to_string)
    };
    let up = |n: usize| {
        let mut p = Some(path);
        for _ in 0..n {
            p = p.and_then(Path::parent);
        }
        name(p)
    };
    up(0).is_some_and(|n| n.starts_with("ses_") && n.ends_with(".json"))
        && up(2).as_deref() == Some("session")
        && up(3).as_deref() == Some("storage")
}

/// One JSON file of the tree as a row: `{"id", "file", "data"}`, its id
/// from its name (as opencode's own migration takes it: files were moved
/// without their JSON being updated), `data` its exact text.
fn file_row(path: &Path) -> std::result::Result<Map<String, Value>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() || meta.len() > super::MAX_IMPORT_SOURCE_BYTES {
        return Err(format!(
            "{}: not a regular file of a readable size",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let id = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_string();
    let mut m = Map::new();
    m.insert("id".into(), id.into());
    m.insert("file".into(), path.to_string_lossy().into_owned().into());
    m.insert("data".into(), text.into());
    Ok(m)
}

/// The rows of the `*.json` files in `dir` (none when it does not exist).
fn dir_rows(dir: &Path) -> std::result::Result<Vec<Map<String, Value>>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| file_row(p)).collect()
}

/// Import one session of opencode's JSON tree (1.1 and earlier):
/// `storage/session/<project>/<ses>.json`, its messages in
/// `storage/message/<ses>/`, their parts in `storage/part/<msg>/`.
pub(super) fn import_json_session(
    path: &Path,
    options: &ImportOptions,
    store_options: &StoreOptions,
) -> SourceReport {
    let report = || SourceReport::new(path, Some(ImportFormat::Opencode));
    let canonical = match std::fs::canonicalize(path) {
        Ok(c) => c,
        Err(e) => return report().failed(format!("{}: {e}", path.display())),
    };
    let Some(storage) = canonical.ancestors().nth(3).map(Path::to_path_buf) else {
        return report().failed(format!("{}: not under storage/session/", path.display()));
    };
    let built = (|| {
        let row = file_row(&canonical)?;
        let id = row
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut messages = dir_rows(&storage.join("message").join(&id))?;
        for m in &mut messages {
            let t = data_of(m).and_then(|d| d.get("time")?.get("created").cloned());
            m.insert("time_created".into(), t.unwrap_or(Value::Null));
        }
        messages.sort_by_key(|m| {
            (
                m.get("time_created").and_then(Value::as_u64).unwrap_or(0),
                m.get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )
        });
        let file = session_source(&row, messages, |mid| {
            dir_rows(&storage.join("part").join(mid))
        })?;
        // The session's fields, as the database has them in columns.
        let mut fields = row.clone();
        if let Some(d) = data_of(&row) {
            for k in ["directory", "title"] {
                fields.insert(k.into(), d.get(k).cloned().unwrap_or(Value::Null));
            }
            let t = d.get("time").and_then(|t| t.get("created")).cloned();
            fields.insert("time_created".into(), t.unwrap_or(Value::Null));
        }
        Ok::<_, String>((fields, file))
    })();
    let (fields, file) = match built {
        Ok(b) => b,
        Err(e) => return report().failed(e),
    };
    let conv = convert(&fields, &file);
    let key = canonical.to_string_lossy().into_owned();
    super::write::import_rows(path, &key, &file, conv, options, store_options)
}

/// A session's lines as items: the session row a record, each message row a
/// message (and a `tool` message per finished tool part), on one chain.
fn convert(session: &Map<String, Value>, file: &SourceFile) -> Converted {
    let mut out = Converted {
        session_id: path_id(session.get("id")),
        project: session
            .get("directory")
            .and_then(Value::as_str)
            .map(PathBuf::from),
        created_at: time_of(session),
        ..Converted::default()
    };
    // As opencode lists the session: its title.
    out.title = session
        .get("title")
        .and_then(Value::as_str)
        .map(title_of)
        .filter(|t| !t.is_empty());
    let mut last: Option<String> = None;
    for (n, o) in file.objects() {
        let Some(row) = o.get("message").and_then(Value::as_object) else {
            out.items.push(Item::record(n, "").noted(None));
            continue;
        };
        let Some(id) = row
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| crate::format::ids::validate_message_id(i).is_ok())
        else {
            out.items.push(Item::record(
                n,
                "a message row without a valid id: kept as a record",
            ));
            continue;
        };
        let time = time_of(row);
        let parts: Vec<Map<String, Value>> = o
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_object())
            .map(|p| {
                let mut d = data_of(p).unwrap_or_default();
                d.insert("id".into(), p.get("id").cloned().unwrap_or(Value::Null));
                d.insert(
                    "time_created".into(),
                    p.get("time_created").cloned().unwrap_or(Value::Null),
                );
                d
            })
            .collect();
        let Some(data) = data_of(row) else {
            // Kept as a hidden message, so that its id marks it imported.
            let mut m = message(id, last.as_deref(), "system", time);
            m.insert("content".into(), Value::Null);
            m.insert("visible".into(), false.into());
            out.items.push(Item::message(n, m).noted(Some(
                "its data is not a JSON object: kept as a hidden message".into(),
            )));
            last = Some(id.to_string());
            continue;
        };
        let role = data.get("role").and_then(Value::as_str).unwrap_or("");
        let mut texts = Vec::new();
        let mut reasoning = Vec::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        let mut other = Vec::new();
        for p in &parts {
            match p.get("type").and_then(Value::as_str).unwrap_or("") {
                // Injected context and parts not sent to the model are not
                // the conversation; they stay in the raw line.
                "text"
                    if p.get("synthetic") == Some(&Value::Bool(true))
                        || p.get("ignored") == Some(&Value::Bool(true)) => {}
                "text" => texts.push(
                    p.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                ),
                "reasoning" => reasoning.push(
                    p.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                ),
                "tool" => {
                    let state = p.get("state");
                    let input = state
                        .and_then(|s| s.get("input"))
                        .cloned()
                        .unwrap_or(json!({}));
                    calls.push(json!({"id": p.get("callID").cloned().unwrap_or(Value::Null),
                        "type": "function", "function": {"name": p.get("tool").cloned().unwrap_or(Value::Null),
                        "arguments": input.to_string()}}));
                    let output = match state.and_then(|s| s.get("status")).and_then(Value::as_str) {
                        Some("completed") => state.and_then(|s| s.get("output")).cloned(),
                        Some("error") => state.and_then(|s| s.get("error")).cloned(),
                        _ => None,
                    };
                    if let (Some(output), Some(pid)) = (output, p.get("id").and_then(Value::as_str))
                    {
                        let at = state
                            .and_then(|s| s.get("time"))
                            .and_then(|t| t.get("end"))
                            .and_then(Value::as_u64)
                            .map(crate::format::ids::format_ms);
                        results.push((pid.to_string(), p.get("callID").cloned(), output, at));
                    }
                }
                "step-start" | "step-finish" | "snapshot" | "patch" | "compaction" => {}
                t => other.push(t.to_string()),
            }
        }
        let role = match role {
            "user" | "assistant" => role,
            _ => {
                let mut m = message(id, last.as_deref(), "system", time);
                m.insert("content".into(), texts.join("\n").into());
                m.insert("visible".into(), false.into());
                out.items.push(Item::message(n, m).noted(Some(format!(
                    "a message of role {role:?}: kept as a hidden message"
                ))));
                last = Some(id.to_string());
                continue;
            }
        };
        let mut m = message(id, last.as_deref(), role, time.clone());
        m.insert("content".into(), texts.join("\n").into());
        let mut params = Map::new();
        if !calls.is_empty() {
            params.insert("tool_calls".into(), Value::Array(calls));
        }
        if !reasoning.is_empty() {
            params.insert("reasoning_content".into(), reasoning.join("\n").into());
        }
        if !params.is_empty() {
            m.insert("messageParams".into(), Value::Object(params));
        }
        if let Some(t) = data.get("tokens").filter(|t| t.is_object()) {
            m.insert("meta".into(), json!({ "usage": t }));
        }
        // A compaction request (a user message with a `compaction` part) is
        // the CLI's, not a prompt.
        if parts
            .iter()
            .any(|p| p.get("type").and_then(Value::as_str) == Some("compaction"))
        {
            m.insert("visible".into(), false.into());
        }
        let note = (!other.is_empty()).then(|| {
            format!(
                "parts of type {} kept only in the raw line",
                other.join(", ")
            )
        });
        let summary = role == "assistant" && data.get("summary") == Some(&Value::Bool(true));
        let item = if summary {
            Item::compaction(n, m)
        } else {
            Item::message(n, m)
        };
        out.items.push(item.noted(note));
        last = Some(id.to_string());
        for (pid, call, output, at) in results {
            if crate::format::ids::validate_message_id(&pid).is_err() {
                continue;
            }
            let mut t = message(&pid, last.as_deref(), "tool", at.or_else(|| time.clone()));
            let output = match output {
                Value::String(s) => Value::String(s),
                v => Value::String(v.to_string()),
            };
            t.insert("content".into(), output);
            t.insert(
                "messageParams".into(),
                json!({ "tool_call_id": call.unwrap_or(Value::Null) }),
            );
            out.items.push(Item::message(n, t));
            last = Some(pid);
        }
    }
    out
}
