//! Push and pull: a session's log copied by byte offset, with the blobs its lines
//! name, so that a log pulled anywhere is byte for byte the log pushed.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use serde::Serialize;

use super::{lost_lease, remote_error, Connection, Lease, BATCH_BYTES, MAX_LINE_BYTES};
use crate::error::{Error, IoContext, Result};
use crate::index::IndexEntry;
use crate::options::Durability;
use crate::store::StoreCore;

/// What a push copied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushReport {
    /// The session id.
    pub session_id: String,
    /// Bytes the remote held before.
    pub from: u64,
    /// Bytes the remote holds now.
    pub to: u64,
    /// Transactions that sent lines.
    pub batches: u64,
    /// Blobs uploaded (those the remote lacked).
    pub blobs: u64,
}

/// What a pull copied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullReport {
    /// The session id.
    pub session_id: String,
    /// Bytes of the local log before.
    pub from: u64,
    /// Bytes of the local log now.
    pub to: u64,
    /// Blobs fetched (those the local store lacked).
    pub blobs: u64,
}

/// Copy the lines of session `id` the remote lacks, in batches of whole lines,
/// each batch one transaction that checks `lease` is still the current one. A
/// retried push starts where the remote stands and duplicates nothing.
pub(crate) fn push(
    conn: &mut Connection,
    store: &StoreCore,
    project: &str,
    id: &str,
    lease: &Lease,
) -> Result<PushReport> {
    let path = store.log_path(id)?;
    let target = conn.target.clone();
    let err = |doing: &str, e| remote_error(&target, &format!("{doing} session {id}"), e);
    let row = conn
        .client
        .query_opt(
            "SELECT pushed, lease_token FROM sessionkit_sessions WHERE project = $1 AND id = $2",
            &[&project, &id],
        )
        .map_err(|e| err("reading the pushed length of", e))?;
    // Fenced off before anything else: a holder whose lease was taken learns
    // that, not that its log diverged.
    let from = match row {
        Some(r) if r.get::<_, i64>(1) == lease.token => r.get::<_, i64>(0) as u64,
        _ => return Err(lost_lease(&target, lease)),
    };
    let mut file = File::open(&path).at(&path)?;
    let len = file.metadata().at(&path)?.len();
    if from > len {
        return Err(Error::Conflict(format!(
            "the remote {target} holds {from} bytes of session {id} and the local log only {len} ({}): pull it first",
            path.display()
        )));
    }
    check_last_chunk(conn, &mut file, &path, project, id, from)?;
    let mut report = PushReport {
        session_id: id.to_string(),
        from,
        to: from,
        ..PushReport::default()
    };
    file.seek(SeekFrom::Start(from)).at(&path)?;
    let mut rest = Vec::new();
    file.read_to_end(&mut rest).at(&path)?;
    // Only whole lines: a writer may be half way through one.
    let whole = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut at = 0;
    while at < whole {
        let end = batch_end(&rest[..whole], at).map_err(|line| {
            Error::InvalidInput(format!(
                "a line of {line} bytes at byte {} of session {id} ({}) is longer than the remote accepts ({MAX_LINE_BYTES})",
                from + at as u64,
                path.display()
            ))
        })?;
        let batch = &rest[at..end];
        report.blobs += upload_blobs(conn, store, batch)?;
        let offset = (from + at as u64) as i64;
        let mut tx = conn.client.transaction().map_err(|e| err("pushing", e))?;
        let row = tx
            .query_one(
                "SELECT pushed, lease_token FROM sessionkit_sessions
                 WHERE project = $1 AND id = $2 FOR UPDATE",
                &[&project, &id],
            )
            .map_err(|e| err("pushing", e))?;
        let (now_pushed, token): (i64, i64) = (row.get(0), row.get(1));
        if token != lease.token {
            return Err(lost_lease(&target, lease));
        }
        if now_pushed != offset {
            return Err(Error::Conflict(format!(
                "session {id} on the remote {target} moved to {now_pushed} bytes while pushing from {offset}"
            )));
        }
        tx.execute(
            "INSERT INTO sessionkit_log_chunks (project, id, byte_offset, bytes) VALUES ($1, $2, $3, $4)",
            &[&project, &id, &offset, &batch],
        )
        .map_err(|e| err("pushing lines of", e))?;
        tx.execute(
            "UPDATE sessionkit_sessions SET pushed = $3 WHERE project = $1 AND id = $2",
            &[&project, &id, &(offset + batch.len() as i64)],
        )
        .map_err(|e| err("pushing", e))?;
        tx.execute(
            "SELECT pg_notify('sessionkit_lines', $1)",
            &[&format!("{project}/{id}")],
        )
        .map_err(|e| err("notifying followers of", e))?;
        tx.commit().map_err(|e| err("committing lines of", e))?;
        report.batches += 1;
        at = end;
        report.to = from + at as u64;
    }
    let entry = store.session_entry(id)?;
    let text = serde_json::to_string(&entry)
        .map_err(|e| Error::Internal(format!("index entry of session {id}: {e}")))?;
    conn.client
        .execute(
            "UPDATE sessionkit_sessions SET entry = $3
             WHERE project = $1 AND id = $2 AND lease_token = $4",
            &[&project, &id, &text, &lease.token],
        )
        .map_err(|e| err("pushing the index entry of", e))?;
    Ok(report)
}

/// The end of the batch starting at `at`: whole lines up to [`BATCH_BYTES`], or
/// one longer line alone; `Err(length)` for a line over [`MAX_LINE_BYTES`].
fn batch_end(bytes: &[u8], at: usize) -> std::result::Result<usize, usize> {
    let mut end = at;
    while end < bytes.len() {
        let line_end = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |i| end + i + 1);
        if line_end - end > MAX_LINE_BYTES {
            // The lines before it go first; the next batch starts at it and fails.
            return if end > at {
                Ok(end)
            } else {
                Err(line_end - end - 1)
            };
        }
        if line_end - at > BATCH_BYTES && end > at {
            break;
        }
        end = line_end;
    }
    Ok(end)
}

/// The local log must continue what the remote holds: the last chunk before
/// `upto` is compared with the local bytes at its offset.
fn check_last_chunk(
    conn: &mut Connection,
    file: &mut File,
    path: &std::path::Path,
    project: &str,
    id: &str,
    upto: u64,
) -> Result<()> {
    if upto == 0 {
        return Ok(());
    }
    let row = conn
        .client
        .query_opt(
            "SELECT byte_offset, bytes FROM sessionkit_log_chunks
             WHERE project = $1 AND id = $2 AND byte_offset < $3
             ORDER BY byte_offset DESC LIMIT 1",
            &[&project, &id, &(upto as i64)],
        )
        .map_err(|e| conn.fail(&format!("reading the last lines of session {id}"), e))?;
    let Some(row) = row else { return Ok(()) };
    let offset: i64 = row.get(0);
    let remote: Vec<u8> = row.get(1);
    let mut local = vec![0; remote.len()];
    file.seek(SeekFrom::Start(offset as u64)).at(path)?;
    file.read_exact(&mut local).at(path)?;
    if local != remote {
        return Err(Error::Conflict(format!(
            "session {id} differs from the remote {} at byte {offset} ({}): the logs diverged; fork it",
            conn.target,
            path.display()
        )));
    }
    Ok(())
}

/// Upload the blobs `lines` name that the remote lacks, before the lines (a blob
/// is complete before the record that names it, remotely too). A blob missing
/// locally is left out: the reader reports it missing, as it does here.
fn upload_blobs(conn: &mut Connection, store: &StoreCore, lines: &[u8]) -> Result<u64> {
    let digests: BTreeSet<String> = crate::store::blob_digests_in(lines).into_iter().collect();
    if digests.is_empty() {
        return Ok(0);
    }
    let wanted: Vec<&str> = digests.iter().map(String::as_str).collect();
    let have: BTreeSet<String> = conn
        .client
        .query(
            "SELECT sha256 FROM sessionkit_blobs WHERE sha256 = ANY($1)",
            &[&wanted],
        )
        .map_err(|e| conn.fail("listing blobs", e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut sent = 0;
    for d in digests.difference(&have) {
        let path = store.blobs().path_of(d)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&path, e)),
        };
        conn.client
            .execute(
                "INSERT INTO sessionkit_blobs (sha256, bytes) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&d, &bytes],
            )
            .map_err(|e| conn.fail(&format!("uploading blob {d}"), e))?;
        sent += 1;
    }
    Ok(sent)
}

/// Bring the local copy of session `id` up to what the remote holds: the lines
/// it lacks are appended through the session's writer (its lock: a session open
/// here for writing is `Busy`), the blobs they name fetched first, and the index
/// entry set. A local log that is not a prefix of the remote one is a
/// `Conflict`.
///
/// The entry is the one pushed with the lines when it describes exactly the
/// bytes now held (its `logBytes` is the pushed length): a pull parses nothing.
/// Otherwise (a push cut between its lines and its entry, a log that grew while
/// it was pushed) the log is folded here, as an index rebuild would.
pub(crate) fn pull(
    conn: &mut Connection,
    store: &StoreCore,
    project: &str,
    id: &str,
) -> Result<PullReport> {
    let path = store.log_path(id)?;
    let target = conn.target.clone();
    let err = |doing: &str, e| remote_error(&target, &format!("{doing} session {id}"), e);
    let row = conn
        .client
        .query_opt(
            "SELECT pushed, entry FROM sessionkit_sessions WHERE project = $1 AND id = $2",
            &[&project, &id],
        )
        .map_err(|e| err("reading", e))?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "session {id} of project {project} on the remote {target}"
            ))
        })?;
    let pushed = row.get::<_, i64>(0) as u64;
    let pushed_entry: Option<String> = row.get(1);
    let durability = store.options().durability;
    let exists = path.exists();
    // A lease taken before the first push makes a row with no line: there is
    // no session to bring here, and an empty local log would be a phantom
    // that `list` shows.
    if pushed == 0 && !exists {
        return Err(Error::NotFound(format!(
            "session {id} of project {project} on the remote {target}: never pushed (it holds no line)"
        )));
    }
    // The index read (or, in a store without one, built from the logs) before
    // the pulled bytes land: built after, it would fold them all again.
    store.update_index(false, |_| Ok(()))?;
    let writer = store.open_log_writer(id, None, &path, !exists, true, &format!("session {id}"))?;
    let from = writer.len();
    let mut report = PullReport {
        session_id: id.to_string(),
        from,
        to: from,
        blobs: 0,
    };
    if from > pushed {
        return Err(Error::Conflict(format!(
            "the local log of session {id} ({}) has {from} bytes, the remote {target} only {pushed}: push it, or fork",
            path.display()
        )));
    }
    let mut at = from;
    let mut seq = 0;
    while at < pushed {
        // The chunk holding byte `at` and those after it, in order: `at` is a
        // chunk's start after the first batch, the key's range scan then.
        let rows = conn
            .client
            .query(
                "SELECT byte_offset, bytes FROM sessionkit_log_chunks
                 WHERE project = $1 AND id = $2 AND byte_offset < $4
                   AND byte_offset >= coalesce((SELECT max(byte_offset) FROM sessionkit_log_chunks
                       WHERE project = $1 AND id = $2 AND byte_offset <= $3), 0)
                 ORDER BY byte_offset LIMIT 16",
                &[&project, &id, &(at as i64), &(pushed as i64)],
            )
            .map_err(|e| err("pulling lines of", e))?;
        if rows.is_empty() {
            return Err(Error::Corrupt(format!(
                "the remote {target} says session {id} has {pushed} bytes but holds none from byte {at}"
            )));
        }
        for row in rows {
            let offset = row.get::<_, i64>(0) as u64;
            let bytes: &[u8] = row.get(1);
            if offset > at || offset + bytes.len() as u64 <= at {
                return Err(Error::Corrupt(format!(
                    "the remote {target} lacks the bytes of session {id} from byte {at}"
                )));
            }
            let skip = (at - offset) as usize;
            if skip > 0 {
                let mut local = vec![0; skip];
                crate::platform::read_exact_at(writer.file(), &mut local, offset).at(&path)?;
                if local != bytes[..skip] {
                    return Err(Error::Conflict(format!(
                        "the local log of session {id} ({}) differs from the remote {target} at byte {offset}: fork it",
                        path.display()
                    )));
                }
            }
            let new = &bytes[skip..];
            report.blobs += fetch_blobs(conn, store, new, durability != Durability::Never)?;
            seq = writer.write(new)?;
            at += new.len() as u64;
        }
    }
    report.to = at;
    if at == from && exists {
        return Ok(report);
    }
    // One fsync for the whole pull, before the index names its length: a crash
    // before it leaves a prefix of whole chunks, which the next pull continues.
    writer.after_append(seq)?;
    if !exists && durability != Durability::Never {
        crate::fsutil::sync_dir_of(&path)?;
    }
    let entry = match pushed_entry.and_then(|text| entry_for(&text, id, at)) {
        Some(entry) => entry,
        None => {
            let (mut entry, _) = crate::index::fold_log(id, &path, store.blobs())?;
            entry.log_bytes = at;
            entry
        }
    };
    store.update_index(store.durable(), |idx| {
        idx.upsert(entry);
        Ok(())
    })?;
    Ok(report)
}

/// The pushed index entry of session `id`, when it describes exactly the first
/// `len` bytes of its log; `None` (fold the log instead) for any other.
fn entry_for(text: &str, id: &str, len: u64) -> Option<IndexEntry> {
    let entry: IndexEntry = serde_json::from_str(text).ok()?;
    (entry.id == id && entry.log_bytes == len).then_some(entry)
}

/// Fetch the blobs `lines` name that the local store lacks; each is checked
/// against its digest as it is written.
fn fetch_blobs(conn: &mut Connection, store: &StoreCore, lines: &[u8], sync: bool) -> Result<u64> {
    let mut fetched = 0;
    for d in crate::store::blob_digests_in(lines)
        .into_iter()
        .collect::<BTreeSet<_>>()
    {
        if store.blobs().path_of(&d)?.exists() {
            continue;
        }
        let row = conn
            .client
            .query_opt(
                "SELECT bytes FROM sessionkit_blobs WHERE sha256 = $1",
                &[&d],
            )
            .map_err(|e| conn.fail(&format!("fetching blob {d}"), e))?;
        // A blob the pushing machine lacked stays missing here too (reported by readers).
        let Some(row) = row else { continue };
        let bytes: Vec<u8> = row.get(0);
        let got = store.blobs().put(&bytes, sync)?;
        if got.sha256 != d {
            return Err(Error::Corrupt(format!(
                "blob {d} on the remote {} has the digest {}",
                conn.target, got.sha256
            )));
        }
        fetched += 1;
    }
    Ok(fetched)
}
