//! Store-wide operations on the file history: deleting and creating branches,
//! garbage collection and size reports.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid};

use super::repo::{open_repo, remove_pack, touch_gc_mark, HistoryRepo};
use super::{
    branch_ref, gerr, parse_oid, pending_ref, session_of_branch, GcReport, HistorySize,
    HistorySizeReport,
};
use crate::error::{Error, IoContext, Result};
use crate::fsutil;
use crate::store::Store;

// ---------------------------------------------------------------------------
// Store-wide operations.

/// Delete a session's branch (and a pending restore of it). Called with the
/// session's writer lock held, when the session is deleted or pruned.
pub(crate) fn delete_branch(store: &Store, session_id: &str) -> Result<()> {
    let Some(mut hr) = HistoryRepo::open(store, false)? else {
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
pub(crate) fn create_branch(store: &Store, session_id: &str, snapshot: &str) -> Result<()> {
    let oid = parse_oid("snapshot", snapshot)?;
    let Some(mut hr) = HistoryRepo::open(store, true)? else {
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
    Ok(())
}

fn refs(hr: &HistoryRepo) -> Result<Vec<(String, Oid)>> {
    let mut out = Vec::new();
    for r in hr.repo.references().map_err(hr.err("refs"))? {
        let r = r.map_err(hr.err("refs"))?;
        let (Some(name), Some(target)) = (r.name(), r.target()) else {
            continue;
        };
        out.push((name.to_string(), target));
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

/// Remove every object no ref reaches: write the reachable ones into one new
/// pack, then delete the old packs and all loose objects. Crash-safe: until the
/// new pack is complete nothing is deleted, and after that every deletion only
/// removes copies or garbage.
pub(crate) fn gc(store: &Store) -> Result<GcReport> {
    let Some(hr) = HistoryRepo::open(store, false)? else {
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
    };
    let objects = hr.git_dir.join("objects");
    let pack_dir = objects.join("pack");
    let bytes_before = dir_bytes(&objects);
    let all_refs = refs(&hr)?;
    let tips: Vec<Oid> = all_refs.iter().map(|(_, o)| *o).collect();
    let mut seen = HashSet::new();
    let (_, keep) = reachable(&hr, &tips, &mut seen)?;
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
        let mut pb = hr.repo.packbuilder().map_err(hr.err("pack"))?;
        for o in &keep {
            pb.insert_object(*o, None).map_err(hr.err("pack"))?;
        }
        fsutil::create_private_dir(&pack_dir)?;
        pb.write(&pack_dir, 0o444).map_err(hr.err("pack write"))?;
        let name = pb
            .name()
            .map(|n| format!("pack-{n}"))
            .ok_or_else(|| Error::Internal("packbuilder gave no pack name".into()))?;
        if hr.durable {
            for ext in ["pack", "idx"] {
                let p = pack_dir.join(format!("{name}.{ext}"));
                File::open(&p).at(&p)?.sync_all().at(&p)?;
            }
            fsutil::sync_dir_of(&pack_dir.join("x"))?;
        }
        new_pack = Some(name);
    }
    // From here on every object worth keeping is in the new pack.
    for stem in packs.iter().filter(|s| Some(*s) != new_pack.as_ref()) {
        remove_pack(&pack_dir, stem)?;
    }
    for f in loose.iter().chain(stale.iter()) {
        fsutil::remove_file_if_exists(f)?;
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
pub(crate) fn sizes(store: &Store) -> Result<HistorySizeReport> {
    let Some(mut hr) = HistoryRepo::open(store, false)? else {
        return Ok(HistorySizeReport::default());
    };
    let _g = hr.shared()?;
    let odb = hr.repo.odb().map_err(hr.err("odb"))?;
    let mut per: Vec<(String, usize, Vec<Oid>)> = Vec::new();
    let mut owners: HashMap<Oid, usize> = HashMap::new();
    for (name, tip) in refs(&hr)? {
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
