//! The trash (FORMAT.md §1.2, §10.6): pruning moves a session's files into
//! `trash/<id>/` instead of deleting them. A host lists and restores trashed
//! sessions; `gc` purges those older than the grace period. Every move is a
//! rename within the project directory, under the project lock, with the log
//! moved so that it is never lost: last into the trash, first out of it.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::format::ids::{format_ms, parse_ms};
use crate::format::layout::{check_session_id, session_files_in, SessionFiles, TRASHED_FILE};
use crate::fsutil;
use crate::index::{fold_log, IndexEdit, IndexEntry};
use crate::platform;
use crate::store::{subagent_logs_in, StoreCore};

/// Why a session was trashed: pruned beyond `maxSessions`.
const REASON_PRUNED: &str = "pruned";
/// Why a session was trashed: a host deleted it (a checkpointer's `delete_thread`).
const REASON_DELETED: &str = "deleted";

/// A session in the trash, as [`crate::Store::list_trash`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrashedSession {
    /// The session id (restore it under this id).
    pub id: String,
    /// When it was moved to the trash (RFC 3339).
    pub trashed_at: String,
    /// Why: `"pruned"` (beyond `maxSessions`) or `"deleted"` (a host deleted
    /// it to the trash: a checkpointer's `delete_thread`).
    pub reason: String,
    /// Its title, from the index entry kept with it.
    pub title: String,
    /// When it was last updated, from the kept entry.
    pub updated_at: String,
    /// Its messages, from the kept entry.
    pub message_count: u64,
    /// When `gc` may purge it: `trashedAt` plus the store's `trashGraceSecs`.
    pub purge_after: String,
}

/// The file `trash/<id>/trashed.json`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrashRecord {
    id: String,
    trashed_at: String,
    reason: String,
    /// The session's index entry when it was trashed.
    entry: Value,
    /// Fields a newer writer added, kept.
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

/// A trash entry as found on disk.
struct Found {
    id: String,
    dir: PathBuf,
    files: SessionFiles,
}

/// Rename `from` to `to` unless `to` exists: false when `from` is gone.
fn move_if_exists(from: &Path, to: &Path, id: &str) -> Result<bool> {
    match platform::rename_noreplace(from, to) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && from.symlink_metadata().is_err() => {
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(Error::Conflict(format!(
            "session {id}: cannot move {} to {}: it exists",
            from.display(),
            to.display()
        ))),
        Err(e) => Err(Error::io(from, e)),
    }
}

/// Remove a structure cache (a cache, rebuilt from the log) left in a live
/// sidecar directory `dir`, and `dir` if that empties it: a reader may write one
/// while the session is in the trash, and it must not block a restore.
fn clear_stale_sidecar(dir: &Path) -> Result<()> {
    fsutil::remove_file_if_exists(&dir.join(crate::format::layout::STRUCTURE_CACHE_FILE))?;
    let _ = fs::remove_dir(dir);
    Ok(())
}

fn remove_dir_all_if_exists(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(dir, e)),
    }
}

impl StoreCore {
    fn live_files(&self, id: &str) -> SessionFiles {
        session_files_in(self.dir(), id)
    }

    /// The entries of the trash: directories `trash/<id>/` whose name is a
    /// session id, sorted by id. Other names are not the library's and are
    /// left alone.
    fn trash_entries(&self) -> Result<Vec<Found>> {
        let trash = self.inner.layout.trash_dir();
        let Some(rd) = fsutil::read_dir_if_exists(&trash)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for d in rd {
            let d = d.at(&trash)?;
            let Some(id) = d.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if check_session_id(&id).is_err() || !d.file_type().at(&d.path())?.is_dir() {
                continue;
            }
            let dir = d.path();
            let files = session_files_in(&dir, &id);
            out.push(Found { id, dir, files });
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// Make the renames into the directories of `paths` durable, unless the
    /// store never fsyncs (as a new log is, FORMAT.md §14).
    fn sync_if_durable(&self, paths: &[&Path]) -> Result<()> {
        if self.options().durability != crate::options::Durability::Never {
            for p in paths {
                fsutil::sync_dir_of(p)?;
            }
        }
        Ok(())
    }

    /// Move session `id` to the trash. The caller holds the project lock and
    /// the session's writer lock. The order is the one FORMAT.md §10.6 gives:
    /// `trashed.json` first, then the quarantine file and the sidecar directory,
    /// the log last, so a crash at any point leaves the log in one place and a
    /// state [`StoreCore::settle_trash_entry`] finishes.
    fn move_to_trash(
        &self,
        id: &str,
        entry: &IndexEntry,
        trashed_at: &str,
        reason: &str,
    ) -> Result<()> {
        let dir = self.inner.layout.trash_entry_dir(id)?;
        let live = self.live_files(id);
        let trashed = session_files_in(&dir, id);
        fsutil::create_private_dir(&dir)?;
        let record = TrashRecord {
            id: id.to_owned(),
            trashed_at: trashed_at.to_owned(),
            reason: reason.to_owned(),
            entry: serde_json::to_value(entry)
                .map_err(|e| Error::Internal(format!("index entry of {id}: {e}")))?,
            extra: Default::default(),
        };
        let mut bytes = serde_json::to_vec_pretty(&record)
            .map_err(|e| Error::Internal(format!("trash record of {id}: {e}")))?;
        bytes.push(b'\n');
        let sync = self.options().durability != crate::options::Durability::Never;
        fsutil::atomic_write(&dir.join(TRASHED_FILE), &bytes, sync, sync)?;
        move_if_exists(&live.corrupt, &trashed.corrupt, id)?;
        move_if_exists(&live.sidecar, &trashed.sidecar, id)?;
        if !move_if_exists(&live.log, &trashed.log, id)? {
            return Err(Error::NotFound(format!(
                "session {id}: log {} vanished while it was being trashed",
                live.log.display()
            )));
        }
        self.sync_if_durable(&[&live.log, &trashed.log])
    }

    /// Finish a move of session `id` into or out of the trash, or a purge,
    /// that a crash cut short (FORMAT.md §10.6). Under the project lock.
    /// - log in the trash: a complete trashed session, nothing to do;
    /// - log live, trash entry without it: a prune or a restore stopped half
    ///   way; the session is live, so what is in the trash goes back;
    /// - log in neither: a purge stopped half way (or the half-trashed session
    ///   was deleted); the purge is finished.
    ///
    /// The session's index entry follows: folded again when it is live.
    fn settle_trash_entry(&self, idx: &mut IndexEdit, found: &Found) -> Result<()> {
        if found.files.log.exists() {
            return Ok(());
        }
        let id = &found.id;
        let live = self.live_files(id);
        if live.log.exists() {
            move_if_exists(&found.files.corrupt, &live.corrupt, id)?;
            if found.files.sidecar.exists() {
                clear_stale_sidecar(&live.sidecar)?;
                move_if_exists(&found.files.sidecar, &live.sidecar, id)?;
            }
            idx.upsert(fold_log(id, &live.log, self.blobs())?.0);
        } else {
            crate::history::delete_branch(self.history_scope(), id)?;
            idx.remove(id);
        }
        remove_dir_all_if_exists(&found.dir)
    }

    /// Settle every incomplete trash entry, inside an index update.
    fn settle_trash_locked(&self, idx: &mut IndexEdit) -> Result<()> {
        for f in self.trash_entries()? {
            self.settle_trash_entry(idx, &f)?;
        }
        Ok(())
    }

    /// Prune the oldest sessions beyond `max_sessions` into the trash, skipping
    /// any held by a writer, any whose id already has a trashed log, and
    /// `keep`. Runs inside an index update (under the project lock).
    pub(crate) fn prune(&self, idx: &mut IndexEdit, keep: &str) -> Result<Vec<String>> {
        let max = self.inner.options.max_sessions;
        let mut pruned = Vec::new();
        if max == 0 || idx.sessions().len() <= max {
            return Ok(pruned);
        }
        self.settle_trash_locked(idx)?;
        idx.sort();
        let mut excess = idx.sessions().len() - max;
        let candidates: Vec<String> = idx.sessions().iter().rev().map(|e| e.id.clone()).collect();
        // One reading of the clock for all: it is deterministic in tests.
        let mut trashed_at = None;
        for id in candidates {
            if excess == 0 {
                break;
            }
            if id == keep {
                continue;
            }
            let path = self.log_path(&id)?;
            let trashed = session_files_in(&self.inner.layout.trash_entry_dir(&id)?, &id);
            if trashed.log.exists() {
                continue;
            }
            let held = match crate::log::writer::LogWriter::open(
                &path,
                false,
                crate::options::Durability::Never,
                "session",
            ) {
                Ok(w) => w,
                // An entry without a log: the log is gone, only the entry goes.
                Err(Error::NotFound(_)) => {
                    idx.remove(&id);
                    excess -= 1;
                    continue;
                }
                Err(Error::Busy(_)) => continue,
                Err(e) => return Err(e),
            };
            let mut entry = idx
                .get(&id)
                .cloned()
                .unwrap_or_else(|| IndexEntry::new(&id));
            if fs::metadata(&path).map(|m| m.len()).ok() != Some(entry.log_bytes) {
                entry = fold_log(&id, &path, self.blobs())?.0;
            }
            let at = trashed_at.get_or_insert_with(|| self.ids().timestamp());
            self.move_to_trash(&id, &entry, at, REASON_PRUNED)?;
            drop(held);
            idx.remove(&id);
            pruned.push(id);
            excess -= 1;
        }
        Ok(pruned)
    }

    /// Move session `id` to the trash on a host's request (a checkpointer's
    /// `delete_thread`): restorable like a pruned session until `gc` purges it
    /// after the grace period. An earlier trashed copy of the same id (deleted
    /// before, created again, deleted again) is purged first: both deletions
    /// were asked for, and the trash holds one copy per id. `NotFound` for an
    /// unknown session; `Busy` while a writer holds it.
    pub(crate) fn trash_session(&self, id: &str) -> Result<()> {
        let path = self.log_path(id)?;
        // Held while moving, so no writer is mid-append.
        let held = crate::log::writer::LogWriter::open(
            &path,
            false,
            crate::options::Durability::Never,
            &format!("session {id}"),
        )?;
        self.update_index(self.durable(), |idx| {
            self.settle_trash_locked(idx)?;
            let dir = self.inner.layout.trash_entry_dir(id)?;
            if session_files_in(&dir, id).log.exists() {
                remove_dir_all_if_exists(&dir)?;
            }
            let entry = fold_log(id, &path, self.blobs())?.0;
            let at = self.ids().timestamp();
            self.move_to_trash(id, &entry, &at, REASON_DELETED)?;
            idx.remove(id);
            Ok(())
        })?;
        drop(held);
        Ok(())
    }

    /// The trashed sessions, most recently trashed first. Finishes (under the
    /// project lock) any move a crash cut short before listing.
    pub(crate) fn list_trash(&self) -> Result<Vec<TrashedSession>> {
        let mut found = self.trash_entries()?;
        if found.iter().any(|f| !f.files.log.exists()) {
            self.update_index(self.durable(), |idx| self.settle_trash_locked(idx))?;
            found = self.trash_entries()?;
        }
        let grace = self.options().trash_grace_secs.saturating_mul(1000);
        let mut out = Vec::new();
        for f in found {
            if !f.files.log.exists() {
                continue; // purged or restored meanwhile
            }
            let (record, trashed_ms) = self.read_record(&f)?;
            let entry = match record
                .as_ref()
                .and_then(|r| serde_json::from_value::<IndexEntry>(r.entry.clone()).ok())
            {
                Some(e) => e,
                None => fold_log(&f.id, &f.files.log, self.blobs())?.0,
            };
            out.push(TrashedSession {
                id: f.id,
                trashed_at: format_ms(trashed_ms),
                reason: record.map_or_else(|| "unknown".to_owned(), |r| r.reason),
                title: entry.title,
                updated_at: entry.updated_at,
                message_count: entry.message_count,
                purge_after: format_ms(
                    trashed_ms
                        .saturating_add(grace)
                        .min(crate::format::ids::MAX_MS),
                ),
            });
        }
        out.sort_by(|a, b| b.trashed_at.cmp(&a.trashed_at).then(a.id.cmp(&b.id)));
        Ok(out)
    }

    /// A trash entry's record, and when it was trashed: the record's
    /// `trashedAt`, or, when `trashed.json` is missing or unreadable, the
    /// modification time of the trashed log (the rename into the trash does
    /// not change it, so it is no later than the trashing).
    fn read_record(&self, f: &Found) -> Result<(Option<TrashRecord>, u64)> {
        let path = f.dir.join(TRASHED_FILE);
        let record = match fs::read(&path) {
            Ok(b) => serde_json::from_slice::<TrashRecord>(&b).ok(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(&path, e)),
        };
        let ms = match record.as_ref().and_then(|r| parse_ms(&r.trashed_at)) {
            Some(ms) => ms,
            None => {
                let m = fs::metadata(&f.files.log).at(&f.files.log)?;
                m.modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_millis() as u64)
            }
        };
        Ok((record, ms))
    }

    /// Move session `id` back from the trash and add its index entry, folded
    /// from its log. The log moves first: from then on the session is live,
    /// and a crash leaves the rest for [`StoreCore::settle_trash_entry`].
    /// `NotFound` if `id` is not in the trash, `Conflict` if a live session
    /// has that id.
    pub(crate) fn restore_session(&self, id: &str) -> Result<IndexEntry> {
        let dir = self.inner.layout.trash_entry_dir(id)?;
        let trashed = session_files_in(&dir, id);
        let live = self.live_files(id);
        self.update_index(self.durable(), |idx| {
            if dir.exists() {
                self.settle_trash_entry(
                    idx,
                    &Found {
                        id: id.to_owned(),
                        dir: dir.clone(),
                        files: trashed.clone(),
                    },
                )?;
            }
            if !trashed.log.exists() {
                return Err(Error::NotFound(format!(
                    "session {id} in the trash ({})",
                    dir.display()
                )));
            }
            if live.log.exists() {
                return Err(Error::Conflict(format!(
                    "session {id} exists ({}); its trashed copy stays in {}",
                    live.log.display(),
                    dir.display()
                )));
            }
            if trashed.sidecar.exists() {
                clear_stale_sidecar(&live.sidecar)?;
                if live.sidecar.symlink_metadata().is_ok() {
                    return Err(Error::Conflict(format!(
                        "session {id}: {} exists; its trashed copy stays in {}",
                        live.sidecar.display(),
                        dir.display()
                    )));
                }
            }
            move_if_exists(&trashed.log, &live.log, id)?;
            move_if_exists(&trashed.corrupt, &live.corrupt, id)?;
            move_if_exists(&trashed.sidecar, &live.sidecar, id)?;
            remove_dir_all_if_exists(&dir)?;
            self.sync_if_durable(&[&live.log, &dir])?;
            let (entry, _) = fold_log(id, &live.log, self.blobs())?;
            idx.upsert(entry.clone());
            Ok(entry)
        })
    }

    /// Purge the trashed sessions whose `trashedAt` is at least
    /// `trash_grace_secs` old: their log first (the session is gone from then
    /// on), then their file-history branch, then the rest of `trash/<id>/`.
    /// Returns the ids purged. Reads the clock only when the trash is not empty.
    pub(crate) fn purge_trash(&self) -> Result<Vec<String>> {
        let mut purged = Vec::new();
        if self.trash_entries()?.is_empty() {
            return Ok(purged);
        }
        self.update_index(self.durable(), |idx| {
            self.settle_trash_locked(idx)?;
            let now = self.ids().now_ms();
            let grace = self.options().trash_grace_secs.saturating_mul(1000);
            for f in self.trash_entries()? {
                let (_, trashed_ms) = self.read_record(&f)?;
                if trashed_ms.saturating_add(grace) > now {
                    continue;
                }
                fsutil::remove_file_if_exists(&f.files.log)?;
                crate::history::delete_branch(self.history_scope(), &f.id)?;
                remove_dir_all_if_exists(&f.dir)?;
                purged.push(f.id);
            }
            Ok(())
        })?;
        Ok(purged)
    }

    /// Every log in the trash, sessions' and their subagents', each with where
    /// it is when live: a restore may move it while a gc reads.
    pub(crate) fn trashed_log_paths(&self) -> Result<Vec<(PathBuf, PathBuf)>> {
        let mut out = Vec::new();
        for f in self.trash_entries()? {
            let live = self.live_files(&f.id);
            out.push((f.files.log.clone(), live.log.clone()));
            for (name, p) in subagent_logs_in(&f.files.sidecar)? {
                let alt = crate::format::layout::subagents_dir_in(&live.sidecar)
                    .join(format!("{name}.jsonl"));
                out.push((p, alt));
            }
        }
        Ok(out)
    }
}
