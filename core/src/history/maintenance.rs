//! StoreCore-wide operations on the file history: deleting and creating branches,
//! garbage collection, size reports, and the check of the links between the
//! session logs and the repository.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid, PackBuilderStage, Repository};
use serde_json::Value;

use super::repo::{
    open_repo, remove_pack, touch_gc_mark, write_pack_files, HistoryRepo, LOCK_FILE,
};
use super::{
    branch_ref, gerr, parse_oid, pending_ref, session_of_branch, GcReport, HistorySize,
    HistorySizeReport, Scope, PENDING_PREFIX,
};
use crate::error::{Error, IoContext, Result};
use crate::format::records::merge_patch;
use crate::fsutil;
use crate::history::{
    BrokenRef, CheckpointProblem, DanglingCheckpoint, FileHistoryCheck, GcPhase, GcProgress,
    HistoryRef,
};
use crate::log::LoadedLog;

// ---------------------------------------------------------------------------
// StoreCore-wide operations.

/// Delete a session's branch (and a pending restore of it). Called with the
/// session's writer lock held, when the session is deleted or pruned.
pub(crate) fn delete_branch(scope: &Scope, session_id: &str) -> Result<()> {
    let Some(mut hr) = HistoryRepo::open(scope, false)? else {
        return Ok(());
    };
    let _g = hr.shared()?;
    for r in [branch_ref(session_id), pending_ref(session_id)] {
        hr.clear_stale_lock(&r);
        hr.delete_ref(&r)?;
    }
    Ok(())
}

/// Start the branch of `session_id` at `snapshot` (a fork continues the file
/// history of the session it was forked from).
pub(crate) fn create_branch(scope: &Scope, session_id: &str, snapshot: &str) -> Result<()> {
    let oid = parse_oid("snapshot", snapshot)?;
    let Some(mut hr) = HistoryRepo::open(scope, true)? else {
        return Err(Error::Internal("file history was not created".into()));
    };
    let _g = hr.shared()?;
    hr.repo.find_commit(oid).map_err(hr.err("snapshot"))?;
    let name = branch_ref(session_id);
    hr.repo
        .reference(&name, oid, false, "fork")
        .map_err(|e| match e.code() {
            ErrorCode::Exists => Error::Conflict(format!(
                "session {session_id} already has a file history branch"
            )),
            _ => gerr(&hr.git_dir, &name, e),
        })?;
    hr.make_ref_owner_only(&name)
}

/// Every ref of the repository with the commit it points at.
///
/// libgit2's iterator skips a loose ref it cannot read (an I/O error, a file
/// being replaced) without a word, and a `gc` that trusted such a list would
/// delete the objects only that ref keeps. So every loose ref file on disk must
/// be in the list: one that is not is read again on its own, which either
/// finds it or reports why it cannot (a ref deleted meanwhile is left out).
fn refs(repo: &Repository, git_dir: &Path) -> Result<Vec<(String, Oid)>> {
    let err = |e| gerr(git_dir, "refs", e);
    let mut out = Vec::new();
    let mut listed = HashSet::new();
    for r in repo.references().map_err(err)? {
        let r = r.map_err(err)?;
        if let Some(name) = r.name() {
            listed.insert(name.to_string());
        }
        let (Some(name), Some(target)) = (r.name(), r.target()) else {
            continue;
        };
        out.push((name.to_string(), target));
    }
    for name in loose_ref_names(git_dir)? {
        if listed.contains(&name) {
            continue;
        }
        match repo.find_reference(&name) {
            Ok(r) => {
                if let Some(target) = r.target() {
                    out.push((name, target));
                }
            }
            Err(e) if e.code() == ErrorCode::NotFound => {}
            Err(e) => return Err(gerr(git_dir, &name, e)),
        }
    }
    Ok(out)
}

/// The names of the loose ref files under `refs/` (lock files excluded).
fn loose_ref_names(git_dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut dirs = vec![git_dir.join("refs")];
    while let Some(dir) = dirs.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries {
            let entry = entry.at(&dir)?;
            let path = entry.path();
            if entry.file_type().at(&path)?.is_dir() {
                dirs.push(path);
            } else if path.extension().is_none_or(|x| x != "lock") {
                if let Ok(rel) = path.strip_prefix(git_dir) {
                    out.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    Ok(out)
}

/// Every object reachable from `tips`, with its type.
fn reachable(hr: &HistoryRepo, tips: &[Oid], seen: &mut HashSet<Oid>) -> Result<(usize, Vec<Oid>)> {
    let repo = &hr.repo;
    let mut commits = 0;
    let mut found = Vec::new();
    let mut stack: Vec<Oid> = tips.to_vec();
    let mut trees: Vec<Oid> = Vec::new();
    while let Some(c) = stack.pop() {
        if !seen.insert(c) {
            continue;
        }
        found.push(c);
        commits += 1;
        let commit = repo.find_commit(c).map_err(hr.err("snapshot"))?;
        trees.push(commit.tree_id());
        stack.extend(commit.parent_ids());
    }
    while let Some(t) = trees.pop() {
        if !seen.insert(t) {
            continue;
        }
        found.push(t);
        let tree = repo.find_tree(t).map_err(hr.err("tree"))?;
        for e in tree.iter() {
            match e.kind() {
                Some(ObjectType::Tree) => trees.push(e.id()),
                Some(ObjectType::Blob) if seen.insert(e.id()) => found.push(e.id()),
                _ => {}
            }
        }
    }
    Ok((commits, found))
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let Ok(rd) = fs::read_dir(dir) else {
        return 0;
    };
    for e in rd.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => total += dir_bytes(&e.path()),
            Ok(_) => total += e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => {}
        }
    }
    total
}

/// The progress of one gc phase: reported at 0 and at each step, `done` only
/// grows and ends at `total`. A phase with nothing to do is not reported.
struct Steps<'p> {
    phase: GcPhase,
    done: u64,
    total: u64,
    progress: &'p mut dyn FnMut(GcProgress),
}

impl<'p> Steps<'p> {
    fn start(phase: GcPhase, total: usize, progress: &'p mut dyn FnMut(GcProgress)) -> Self {
        let total = total as u64;
        if total > 0 {
            progress(GcProgress {
                phase,
                done: 0,
                total,
            });
        }
        Steps {
            phase,
            done: 0,
            total,
            progress,
        }
    }

    fn advance(&mut self, n: usize) {
        self.reach(self.done.saturating_add(n as u64));
    }

    /// Move on to `done`, clamped to the total; never backwards.
    fn reach(&mut self, done: impl TryInto<u64>) {
        let done = done.try_into().unwrap_or(u64::MAX).min(self.total);
        if done > self.done {
            self.done = done;
            (self.progress)(GcProgress {
                phase: self.phase,
                done,
                total: self.total,
            });
        }
    }

    fn finish(&mut self) {
        self.reach(self.total);
    }
}

/// Remove every object no ref reaches: write the reachable ones into one new
/// pack, then delete the old packs and all loose objects. Crash-safe: until the
/// new pack is complete nothing is deleted, and after that every deletion only
/// removes copies or garbage. `progress` hears each phase that has work to do,
/// from `done` 0 up to `total`.
pub(crate) fn gc(scope: &Scope, progress: &mut dyn FnMut(GcProgress)) -> Result<GcReport> {
    let Some(hr) = HistoryRepo::open(scope, false)? else {
        return Ok(GcReport::default());
    };
    let _x = hr.exclusive()?;
    // Reopen under the lock: the pack list must be current.
    let hr = HistoryRepo {
        repo: open_repo(&hr.git_dir, hr.durable)?,
        git_dir: hr.git_dir.clone(),
        lock: hr.lock.clone(),
        durable: hr.durable,
        gc_seen: None,
        packs_written: 0,
        staging: None,
    };
    let objects = hr.git_dir.join("objects");
    let pack_dir = objects.join("pack");
    let bytes_before = dir_bytes(&objects);
    let all_refs = refs(&hr.repo, &hr.git_dir)?;
    let mut seen = HashSet::new();
    let mut keep = Vec::new();
    let mut step = Steps::start(GcPhase::Marking, all_refs.len(), progress);
    for (_, tip) in &all_refs {
        keep.extend(reachable(&hr, &[*tip], &mut seen)?.1);
        step.advance(1);
    }
    let odb = hr.repo.odb().map_err(hr.err("odb"))?;
    let mut existing = HashSet::new();
    odb.foreach(|o| {
        existing.insert(*o);
        true
    })
    .map_err(hr.err("odb"))?;
    let objects_before = existing.len();
    let mut loose = Vec::new();
    let mut stale = Vec::new();
    if let Ok(rd) = fs::read_dir(&objects) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_fanout = name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit());
            if is_fanout {
                for f in fs::read_dir(e.path()).into_iter().flatten().flatten() {
                    loose.push(f.path());
                }
            } else if name.starts_with("tmp_") {
                stale.push(e.path());
            }
        }
    }
    let mut packs = Vec::new();
    if let Ok(rd) = fs::read_dir(&pack_dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_suffix(".idx") {
                packs.push(stem.to_string());
            } else if name
                .strip_suffix(".pack")
                .is_some_and(|stem| !pack_dir.join(format!("{stem}.idx")).exists())
            {
                // A pack whose index was never written: a write cut short.
                stale.push(e.path());
            } else if !name.starts_with("pack-") {
                // Temporary files of a pack write cut short.
                stale.push(e.path());
            }
        }
    }
    let garbage = existing.iter().filter(|o| !seen.contains(o)).count();
    if garbage == 0 && loose.is_empty() && packs.len() <= 1 && stale.is_empty() {
        return Ok(GcReport {
            branches: all_refs.len(),
            objects_before,
            objects_after: objects_before,
            bytes_before,
            bytes_after: bytes_before,
            bytes_freed: 0,
        });
    }
    let mut new_pack: Option<String> = None;
    if !keep.is_empty() {
        let mut step = Steps::start(GcPhase::Packing, keep.len(), progress);
        let name = {
            let mut pb = hr.repo.packbuilder().map_err(hr.err("pack"))?;
            for o in &keep {
                pb.insert_object(*o, None).map_err(hr.err("pack"))?;
            }
            // libgit2 reports the delta search, the long part of the write, at
            // most twice a second, and once more with every object at the end.
            pb.set_progress_callback(|stage, current, _| {
                if stage == PackBuilderStage::Deltafication {
                    step.reach(current);
                }
                true
            })
            .map_err(hr.err("pack"))?;
            fsutil::create_private_dir(&pack_dir)?;
            let odb = hr.repo.odb().map_err(hr.err("odb"))?;
            write_pack_files(&mut pb, &odb, &pack_dir, hr.durable, &hr.git_dir)?
        };
        step.finish();
        new_pack = Some(name);
    }
    // From here on every object worth keeping is in the new pack.
    let old_packs: Vec<&String> = packs
        .iter()
        .filter(|s| Some(*s) != new_pack.as_ref())
        .collect();
    let mut step = Steps::start(
        GcPhase::Pruning,
        old_packs.len() + loose.len() + stale.len(),
        progress,
    );
    for stem in old_packs {
        remove_pack(&pack_dir, stem)?;
        step.advance(1);
    }
    for f in loose.iter().chain(stale.iter()) {
        fsutil::remove_file_if_exists(f)?;
        step.advance(1);
    }
    if let Ok(rd) = fs::read_dir(&objects) {
        for e in rd.flatten() {
            let name = e.file_name();
            if name.len() == 2 {
                let _ = fs::remove_dir(e.path());
            }
        }
    }
    touch_gc_mark(&hr.git_dir, hr.durable)?;
    let bytes_after = dir_bytes(&objects);
    Ok(GcReport {
        branches: all_refs.len(),
        objects_before,
        objects_after: keep.len(),
        bytes_before,
        bytes_after,
        bytes_freed: bytes_before.saturating_sub(bytes_after),
    })
}

/// Per-session sizes of the file history.
pub(crate) fn sizes(scope: &Scope) -> Result<HistorySizeReport> {
    let Some(mut hr) = HistoryRepo::open(scope, false)? else {
        return Ok(HistorySizeReport::default());
    };
    let _g = hr.shared()?;
    let odb = hr.repo.odb().map_err(hr.err("odb"))?;
    let mut per: Vec<(String, usize, Vec<Oid>)> = Vec::new();
    let mut owners: HashMap<Oid, usize> = HashMap::new();
    for (name, tip) in refs(&hr.repo, &hr.git_dir)? {
        let Some(id) = session_of_branch(&name) else {
            continue;
        };
        let mut seen = HashSet::new();
        let (_, objs) = reachable(&hr, &[tip], &mut seen)?;
        let mut snapshots = 0;
        let mut cur = Some(tip);
        while let Some(c) = cur {
            snapshots += 1;
            cur = hr
                .repo
                .find_commit(c)
                .map_err(hr.err("snapshot"))?
                .parent_id(0)
                .ok();
        }
        for o in &objs {
            *owners.entry(*o).or_default() += 1;
        }
        per.push((id, snapshots, objs));
    }
    let mut size_of: HashMap<Oid, u64> = HashMap::new();
    let mut sessions = Vec::new();
    for (id, snapshots, objs) in per {
        let mut bytes = 0;
        let mut exclusive = 0;
        for o in &objs {
            let n = match size_of.get(o) {
                Some(n) => *n,
                None => {
                    let (n, _) = odb.read_header(*o).map_err(hr.err("odb"))?;
                    size_of.insert(*o, n as u64);
                    n as u64
                }
            };
            bytes += n;
            if owners.get(o) == Some(&1) {
                exclusive += n;
            }
        }
        sessions.push(HistorySize {
            session_id: id,
            snapshots,
            objects: objs.len(),
            bytes,
            exclusive_bytes: exclusive,
        });
    }
    sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    Ok(HistorySizeReport {
        disk_bytes: dir_bytes(&hr.git_dir.join("objects")),
        sessions,
    })
}

// ---------------------------------------------------------------------------
// The check of the links between the logs and the repository.

/// Check the links between the session logs and the file history, reading
/// only: refs of sessions whose log is gone, refs whose chain of snapshots
/// reaches a missing commit, and `checkpointHash`es (`hashes`: for each
/// session, its messages' `(id, checkpointHash)`, read from the logs before this
/// call) that name no snapshot of their session. Takes no writer lock, so a busy
/// session is checked too; it waits only for a running `gc`.
pub(crate) fn check_links(
    scope: &Scope,
    mut hashes: Vec<(String, Vec<(String, String)>)>,
) -> Result<FileHistoryCheck> {
    let git_dir = super::git_dir_of(scope);
    let mut out = FileHistoryCheck::default();
    if !git_dir.join("HEAD").exists() {
        for (session, found) in hashes {
            for (message, hash) in found {
                let reason = match parse_oid("checkpointHash", &hash) {
                    Ok(_) => CheckpointProblem::NoFileHistory,
                    Err(_) => CheckpointProblem::NotASnapshotId,
                };
                out.dangling_checkpoints.push(DanglingCheckpoint {
                    session_id: session.clone(),
                    message_id: message,
                    checkpoint_hash: hash,
                    reason,
                });
            }
        }
        return Ok(out);
    }
    out.exists = true;
    let _g = read_lock(&git_dir)?;
    let repo = open_repo(&git_dir, false)?;
    let mut chains: HashMap<String, HashSet<Oid>> = HashMap::new();
    for (name, target) in refs(&repo, &git_dir)? {
        let Some((session, is_branch)) = session_of_ref(&name) else {
            continue;
        };
        if is_branch {
            out.branches += 1;
        }
        // Checked after the refs were listed: a session's log is created
        // before its ref, so a ref seen without a log is not a new session.
        if !session_exists(scope, &session) {
            out.orphan_refs.push(HistoryRef {
                session_id: session,
                ref_name: name,
                target: target.to_string(),
            });
            continue;
        }
        let (chain, missing) = first_parent_chain(&repo, target);
        if let Some(m) = missing {
            out.broken_refs.push(BrokenRef {
                session_id: session.clone(),
                ref_name: name,
                target: target.to_string(),
                missing_commit: m.to_string(),
            });
        }
        if is_branch {
            chains.insert(session, chain);
        }
    }
    let empty = HashSet::new();
    // A session deleted since its log was read took its branch along.
    hashes.retain(|(session, _)| session_exists(scope, session));
    for (session, found) in hashes {
        let chain = chains.get(&session).unwrap_or(&empty);
        for (message, hash) in found {
            let reason = match parse_oid("checkpointHash", &hash) {
                Err(_) => CheckpointProblem::NotASnapshotId,
                Ok(oid) if chain.contains(&oid) => continue,
                Ok(oid) if repo.find_commit(oid).is_err() => CheckpointProblem::Missing,
                Ok(_) => CheckpointProblem::NotOnBranch,
            };
            out.dangling_checkpoints.push(DanglingCheckpoint {
                session_id: session.clone(),
                message_id: message,
                checkpoint_hash: hash,
                reason,
            });
        }
    }
    out.orphan_refs.sort_by(|a, b| a.ref_name.cmp(&b.ref_name));
    out.broken_refs.sort_by(|a, b| a.ref_name.cmp(&b.ref_name));
    Ok(out)
}

/// Delete the file-history refs (branches and pending restores) of sessions
/// whose log no longer exists and that are not in the trash: a deleted
/// session's history is garbage by design, and its objects go with the
/// next `gc`. Returns the refs deleted.
/// A ref that moved meanwhile, or is being updated, is left alone.
pub(crate) fn prune_orphans(scope: &Scope) -> Result<Vec<HistoryRef>> {
    let Some(mut hr) = HistoryRepo::open(scope, false)? else {
        return Ok(Vec::new());
    };
    let _g = hr.shared()?;
    let mut out = Vec::new();
    for (name, target) in refs(&hr.repo, &hr.git_dir)? {
        let Some((session, _)) = session_of_ref(&name) else {
            continue;
        };
        if session_exists(scope, &session) {
            continue;
        }
        let mut r = match hr.repo.find_reference(&name) {
            Ok(r) if r.target() == Some(target) => r,
            Ok(_) => continue,
            Err(e) if e.code() == ErrorCode::NotFound => continue,
            Err(e) => return Err(gerr(&hr.git_dir, &name, e)),
        };
        // libgit2 deletes only if the ref still has the target it was read with.
        match r.delete() {
            Ok(()) => {}
            Err(e) if matches!(e.code(), ErrorCode::Locked | ErrorCode::Modified) => continue,
            Err(e) => return Err(gerr(&hr.git_dir, &name, e)),
        }
        out.push(HistoryRef {
            session_id: session,
            ref_name: name,
            target: target.to_string(),
        });
    }
    Ok(out)
}

/// The session of a branch (`true`) or of a pending restore (`false`).
fn session_of_ref(name: &str) -> Option<(String, bool)> {
    match session_of_branch(name) {
        Some(s) => Some((s, true)),
        None => name
            .strip_prefix(PENDING_PREFIX)
            .map(|s| (s.replace("%2E", "."), false)),
    }
}

/// Whether the session is live, or in the trash (FORMAT.md §10.6): a trashed
/// session keeps its branch until it is purged, so that a restore is complete.
fn session_exists(scope: &Scope, session_id: &str) -> bool {
    scope.layout.log_path(session_id).is_ok_and(|p| p.exists())
        || scope
            .layout
            .trash_entry_dir(session_id)
            .is_ok_and(|d| d.exists())
}

/// A shared `flock` on the repository's lock file, opened for reading only (and
/// not created), so that no `gc` deletes packs while they are read.
fn read_lock(git_dir: &Path) -> Result<Option<super::repo::Held>> {
    let p = git_dir.join(LOCK_FILE);
    let f = match File::open(&p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&p, e)),
    };
    f.lock_shared().at(&p)?;
    Ok(Some(super::repo::Held(std::sync::Arc::new(f))))
}

/// The commits from `tip` down its first parents (the snapshots of a branch),
/// and the first one missing or unreadable, if the chain breaks.
fn first_parent_chain(repo: &Repository, tip: Oid) -> (HashSet<Oid>, Option<Oid>) {
    let mut chain = HashSet::new();
    let mut cur = Some(tip);
    while let Some(c) = cur {
        if chain.contains(&c) {
            break;
        }
        match repo.find_commit(c) {
            Ok(commit) => {
                chain.insert(c);
                cur = commit.parent_id(0).ok();
            }
            Err(_) => return (chain, Some(c)),
        }
    }
    (chain, None)
}

/// The `checkpointHash` strings of a log's messages (patches applied), by
/// message id, in log order.
pub(crate) fn checkpoint_hashes(log: &LoadedLog) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in &log.entries {
        let patches = log.patches.get(&e.id);
        let patched = patches.is_some_and(|p| {
            p.iter()
                .any(|(_, v)| v.to_string().contains("\"checkpointHash\""))
        });
        if !patched && !e.raw.contains("\"checkpointHash\"") {
            continue;
        }
        let Ok(mut v) = serde_json::from_str::<Value>(&e.raw) else {
            continue;
        };
        for (_, p) in patches.into_iter().flatten() {
            merge_patch(&mut v, p);
        }
        if let Some(h) = v.get("checkpointHash").and_then(Value::as_str) {
            out.push((e.id.clone(), h.to_string()));
        }
    }
    out
}
