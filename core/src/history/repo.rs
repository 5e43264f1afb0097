//! The internal repository: creating and opening it, its locks and refs, and
//! writing objects as packs (and merging packs).

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::{
    Buf, ConfigLevel, ErrorCode, Indexer, ObjectType, Odb, OdbLookupFlags, Oid, Repository,
    RepositoryInitMode, RepositoryInitOptions, RepositoryOpenFlags,
};
use parking_lot::Mutex;

use super::objects::NewObjects;
use super::{gerr, DIR, PENDING_PREFIX};
use crate::error::{Error, IoContext, Result};
use crate::fsutil;
use crate::platform::{self, Private};

pub(super) const GIT_DIR: &str = ".git";
/// A config file added (at the highest level) to every handle of a store whose
/// durability is not `Never`: it turns on `core.fsyncObjectFiles`, which makes
/// libgit2 fsync objects and refs. Written once, at init.
pub(super) const DURABLE_CONFIG: &str = "sessionkit-durable.config";
pub(super) const DURABLE_CONFIG_TEXT: &str = "[core]\n\tfsyncObjectFiles = true\n";
/// Snapshots and restores hold a shared `flock` on this file, `gc` an exclusive one.
pub(super) const LOCK_FILE: &str = "sessionkit.lock";
/// Replaced whenever packs were deleted (`gc`, a pack merge), so open handles
/// reload their pack list.
pub(super) const GC_MARK: &str = "sessionkit-gc";
/// Per repository, in this process: packs written since its pack directory was
/// last looked at, and whether a merge is running.
#[derive(Default)]
struct RepoState {
    writes: usize,
    merging: bool,
}

static REPOS: Mutex<Option<HashMap<PathBuf, RepoState>>> = Mutex::new(None);

/// This many packs of one size tier are merged into one.
pub(super) const MERGE_FANIN: usize = 16;
/// A config file for the handles that write small packs: no delta search (cheap
/// packs; `gc` compresses with deltas). libgit2 1.9 reads its big-file
/// threshold, below which objects are deltified, from `pack.deltaCacheSize`.
pub(super) const NO_DELTA_CONFIG: &str = "sessionkit-nodelta.config";
pub(super) const NO_DELTA_CONFIG_TEXT: &str = "[pack]\n\tdeltaCacheSize = 0\n";
/// How many packs are written (per repository, in this process) between looks at
/// the pack directory.
pub(super) const MERGE_CHECK_EVERY: usize = 4;
/// The mode of pack files: read-only, as git makes them, and owner-only.
pub(super) const PACK_MODE: u32 = 0o400;

// ---------------------------------------------------------------------------
// The repository.

pub(crate) fn git_dir_of(scope: &super::Scope) -> PathBuf {
    scope.layout.dir.join(DIR).join(GIT_DIR)
}

/// An open handle on the internal repository, with its gc lock.
pub(super) struct HistoryRepo {
    pub(super) repo: Repository,
    pub(super) git_dir: PathBuf,
    pub(super) lock: Arc<File>,
    pub(super) durable: bool,
    pub(super) gc_seen: Option<(u64, i64, i64)>,
    /// Packs written through this handle since the last check for merging.
    pub(super) packs_written: usize,
    /// See [`HistoryRepo::ensure_staging`].
    pub(super) staging: Option<Repository>,
}

/// A held `flock` on the repository's lock file.
pub(super) struct Held(pub(super) Arc<File>);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

pub(super) fn gc_mark(git_dir: &Path) -> Option<(u64, i64, i64)> {
    fs::metadata(git_dir.join(GC_MARK)).ok().map(|m| {
        let ((_, ino), (s, ns)) = (platform::file_id(&m), platform::mtime(&m));
        (ino, s, ns)
    })
}

pub(super) fn init_repo(git_dir: &Path, sync: bool) -> Result<()> {
    let parent = git_dir.parent().unwrap_or(git_dir);
    fsutil::create_private_dir(parent)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    // Built beside and renamed into place, so a crash never leaves half a
    // repository where one is expected.
    let tmp = parent.join(format!(".init-{}-{nanos}", std::process::id()));
    let mut o = RepositoryInitOptions::new();
    // Owner-only directories (libgit2 chmods its own to a custom mode). Its
    // files follow the umask whatever the mode: see `make_tree_owner_only`.
    o.bare(true)
        .mode(RepositoryInitMode::from_bits_retain(0o700))
        .no_reinit(true)
        .mkpath(false)
        .external_template(false)
        .initial_head("sessionkit");
    let repo = Repository::init_opts(&tmp, &o).map_err(|e| gerr(&tmp, "init", e))?;
    {
        let mut cfg = repo.config().map_err(|e| gerr(&tmp, "config", e))?;
        let set = |cfg: &mut git2::Config, k: &str, v: &str| {
            cfg.set_str(k, v).map_err(|e| gerr(&tmp, "config", e))
        };
        set(&mut cfg, "core.logAllRefUpdates", "false")?;
        set(&mut cfg, "gc.auto", "0")?;
    }
    drop(repo);
    for (name, text) in [
        (DURABLE_CONFIG, DURABLE_CONFIG_TEXT),
        (NO_DELTA_CONFIG, NO_DELTA_CONFIG_TEXT),
    ] {
        let p = tmp.join(name);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .private()
            .open(&p)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .at(&p)?;
    }
    make_tree_owner_only(&tmp)?;
    if sync {
        for f in ["HEAD", "config", DURABLE_CONFIG] {
            let p = tmp.join(f);
            File::open(&p).at(&p)?.sync_all().at(&p)?;
        }
        fsutil::sync_dir_of(&tmp.join("HEAD"))?;
    }
    match fs::rename(&tmp, git_dir) {
        Ok(()) => {}
        Err(_) if git_dir.join("HEAD").exists() => {
            // Another process won the race; use its repository.
            let _ = fs::remove_dir_all(&tmp);
            return Ok(());
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(Error::io(git_dir, e));
        }
    }
    if sync {
        fsutil::sync_dir_of(git_dir)?;
    }
    Ok(())
}

pub(super) fn open_repo(git_dir: &Path, durable: bool) -> Result<Repository> {
    let flags =
        RepositoryOpenFlags::NO_SEARCH | RepositoryOpenFlags::NO_DOTGIT | RepositoryOpenFlags::BARE;
    let repo = Repository::open_ext(git_dir, flags, std::iter::empty::<&std::ffi::OsStr>())
        .map_err(|e| gerr(git_dir, "open", e))?;
    if durable {
        let extra = git_dir.join(DURABLE_CONFIG);
        if !extra.exists() {
            fsutil::atomic_write(&extra, DURABLE_CONFIG_TEXT.as_bytes(), true, true)?;
        }
        // The handle's config is live: the odb and refdb, loaded lazily after
        // this, read core.fsyncObjectFiles from it.
        let mut cfg = repo.config().map_err(|e| gerr(git_dir, "config", e))?;
        cfg.add_file(&extra, ConfigLevel::App, true)
            .map_err(|e| gerr(git_dir, "config", e))?;
    }
    Ok(repo)
}

impl HistoryRepo {
    /// Open the repository of a store, creating it when `create` (else `None` if
    /// there is none yet).
    pub(crate) fn open(scope: &super::Scope, create: bool) -> Result<Option<HistoryRepo>> {
        let git_dir = git_dir_of(scope);
        let durable = scope.durable;
        if !git_dir.join("HEAD").exists() {
            if !create {
                return Ok(None);
            }
            init_repo(&git_dir, durable)?;
        }
        let repo = open_repo(&git_dir, durable)?;
        let lock_path = git_dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .private()
            .open(&lock_path)
            .at(&lock_path)?;
        Ok(Some(HistoryRepo {
            repo,
            gc_seen: gc_mark(&git_dir),
            git_dir,
            lock: Arc::new(lock),
            durable,
            packs_written: 0,
            staging: None,
        }))
    }

    pub(super) fn err(&self, what: &str) -> impl Fn(git2::Error) -> Error + '_ {
        let what = what.to_string();
        move |e| gerr(&self.git_dir, &what, e)
    }

    /// Take the shared lock (snapshots, restores, branch changes). A `gc` that
    /// ran since this handle was opened rewrote the object files: reopen.
    pub(super) fn shared(&mut self) -> Result<Held> {
        let p = self.git_dir.join(LOCK_FILE);
        self.lock.lock_shared().at(&p)?;
        let held = Held(self.lock.clone());
        let mark = gc_mark(&self.git_dir);
        if mark != self.gc_seen {
            self.repo = open_repo(&self.git_dir, self.durable)?;
            self.gc_seen = mark;
        }
        Ok(held)
    }

    pub(super) fn exclusive(&self) -> Result<Held> {
        let p = self.git_dir.join(LOCK_FILE);
        self.lock.lock().at(&p)?;
        Ok(Held(self.lock.clone()))
    }

    pub(super) fn tip(&self, refname: &str) -> Result<Option<Oid>> {
        match self.repo.refname_to_id(refname) {
            Ok(o) => Ok(Some(o)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(gerr(&self.git_dir, refname, e)),
        }
    }

    pub(super) fn delete_ref(&self, refname: &str) -> Result<()> {
        match self.repo.find_reference(refname) {
            Ok(mut r) => r.delete().map_err(self.err(refname)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
            Err(e) => Err(gerr(&self.git_dir, refname, e)),
        }
    }

    /// Write `objs` (the new objects of one snapshot) as one pack. A pack is two
    /// files whatever the number of objects, where loose objects would be one
    /// file each; `maybe_merge_packs` keeps the number of packs small.
    ///
    /// libgit2 builds the pack in memory (a packbuilder over an in-memory object
    /// database) and its indexer writes it in one piece with its index: the
    /// packbuilder's own `write` would feed the indexer an object at a time, each
    /// costing a write and an unmap.
    pub(super) fn write_pack(&mut self, objs: &NewObjects) -> Result<()> {
        self.ensure_staging()?;
        let disk = self.repo.odb().map_err(self.err("odb"))?;
        let todo: Vec<&(Oid, ObjectType, Vec<u8>)> = objs
            .objs
            .iter()
            .filter(|(o, _, _)| !disk.exists_ext(*o, OdbLookupFlags::NO_REFRESH))
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        let mem = Odb::new().map_err(self.err("odb"))?;
        mem.add_new_mempack_backend(1).map_err(self.err("odb"))?;
        for (oid, kind, bytes) in &todo {
            let o = mem.write(*kind, bytes).map_err(self.err("odb"))?;
            debug_assert_eq!(o, *oid);
        }
        let staging = self
            .staging
            .as_ref()
            .ok_or_else(|| Error::Internal("pack staging repository".into()))?;
        staging.set_odb(&mem).map_err(self.err("odb"))?;
        let mut buf = Buf::new();
        {
            let mut pb = staging.packbuilder().map_err(self.err("pack"))?;
            pb.set_threads(1);
            for (oid, _, _) in &todo {
                pb.insert_object(*oid, None).map_err(self.err("pack"))?;
            }
            pb.write_buf(&mut buf).map_err(self.err("pack"))?;
        }
        let pack_dir = self.git_dir.join("objects").join("pack");
        // The pack holds whole objects only, so the indexer needs no odb.
        let mut ix = Indexer::new(None, &pack_dir, PACK_MODE, false).map_err(self.err("pack"))?;
        ix.write_all(&buf).at(&pack_dir)?;
        let name = format!("pack-{}", ix.commit().map_err(self.err("pack write"))?);
        if self.durable {
            sync_pack(&pack_dir, &name)?;
        }
        disk.refresh().map_err(self.err("odb"))?;
        Ok(())
    }

    /// A repository over an in-memory object database, kept for building packs:
    /// its config (no delta search) is read once, not at every snapshot.
    fn ensure_staging(&mut self) -> Result<()> {
        if self.staging.is_none() {
            let odb = Odb::new().map_err(self.err("odb"))?;
            let repo = Repository::from_odb(odb).map_err(self.err("odb"))?;
            no_deltas(&repo, &self.git_dir)?;
            self.staging = Some(repo);
        }
        Ok(())
    }

    /// Delete a pending-restore ref. Only its session's writer touches it, so
    /// its loose file is simply unlinked (libgit2's delete would also create and
    /// remove a lock file); a ref that git packed into `packed-refs` is deleted
    /// through libgit2.
    pub(super) fn remove_pending_ref(&self, refname: &str) -> Result<()> {
        fsutil::remove_file_if_exists(&self.git_dir.join(refname))?;
        if self.tip(refname)?.is_some() {
            self.delete_ref(refname)?;
        }
        Ok(())
    }

    /// Point `name` at `new`, if it still points at `old` (`None`: if it does not
    /// exist; for a pending ref, `None` overwrites whatever is there).
    pub(super) fn set_ref(&self, name: &str, new: Oid, old: Option<Oid>) -> Result<()> {
        let r = match old {
            Some(old) => self
                .repo
                .reference_matching(name, new, true, old, "snapshot"),
            None if name.starts_with(PENDING_PREFIX) => {
                self.repo.reference(name, new, true, "pending restore")
            }
            None => self.repo.reference(name, new, false, "snapshot"),
        };
        r.map(drop).map_err(|e| match e.code() {
            ErrorCode::Exists | ErrorCode::Modified => Error::Conflict(format!(
                "file history {}: {name} was moved by another writer",
                self.git_dir.display()
            )),
            _ => gerr(&self.git_dir, name, e),
        })?;
        self.make_ref_owner_only(name)
    }

    /// libgit2 writes every loose ref as a new file, and the directories above
    /// it, with modes from the umask alone (it has no setting for them): take
    /// the group and other bits off the ref and the directories up to the
    /// repository's.
    pub(super) fn make_ref_owner_only(&self, name: &str) -> Result<()> {
        let mut p = self.git_dir.join(name);
        while p != self.git_dir && p.starts_with(&self.git_dir) {
            match platform::make_owner_only(&p) {
                // A ref git packed into `packed-refs` has no file of its own.
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io(&p, e));
                }
                _ => {}
            }
            p.pop();
        }
        Ok(())
    }

    /// Keep the number of packs small (see `merge_group`). One merge at a time per
    /// repository in this process, on the background thread: a snapshot never
    /// waits for it.
    pub(super) fn maybe_merge_packs(&mut self) {
        let written = std::mem::take(&mut self.packs_written);
        if written == 0 {
            return;
        }
        // Counted per repository for the whole process: sessions come and go
        // (a handle may write a single pack), the packs add up.
        {
            let mut repos = REPOS.lock();
            let r = repos
                .get_or_insert_with(HashMap::new)
                .entry(self.git_dir.clone())
                .or_default();
            r.writes += written;
            if r.writes < MERGE_CHECK_EVERY || r.merging {
                return;
            }
            r.writes = 0;
            r.merging = true;
        }
        let done = |git_dir: &Path| {
            if let Some(r) = REPOS.lock().as_mut().and_then(|m| m.get_mut(git_dir)) {
                r.merging = false;
            }
        };
        let pack_dir = self.git_dir.join("objects").join("pack");
        let group = merge_group(list_packs(&pack_dir));
        if group.is_empty() {
            done(&self.git_dir);
            return;
        }
        let git_dir = self.git_dir.clone();
        let durable = self.durable;
        platform::run_in_background(Box::new(move || {
            // Housekeeping: on failure the packs stay as they are, and the
            // next merge or `gc` picks them up.
            let _ = merge_packs(&git_dir, durable, &group);
            done(&git_dir);
        }));
    }

    /// Remove a ref's lock file left by a process killed mid-update. Only called
    /// while holding the session's writer lock, so nobody else is updating it.
    pub(super) fn clear_stale_lock(&self, refname: &str) {
        let _ = fs::remove_file(self.git_dir.join(format!("{refname}.lock")));
    }
}

/// The packs in `dir`, by file stem (`pack-<id>`), with the size of the pack.
pub(super) fn list_packs(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".idx") {
            let size = fs::metadata(dir.join(format!("{stem}.pack")))
                .map(|m| m.len())
                .unwrap_or(0);
            out.push((stem.to_string(), size));
        }
    }
    out
}

/// The object ids listed in a pack index (version 2).
pub(super) fn read_idx_oids(path: &Path) -> Result<Vec<Oid>> {
    let b = fs::read(path).at(path)?;
    let bad = || Error::Corrupt(format!("{}: not a version 2 pack index", path.display()));
    let start = 8 + 256 * 4;
    if b.len() < start || b[..4] != [0xff, b't', b'O', b'c'] || b[4..8] != [0, 0, 0, 2] {
        return Err(bad());
    }
    let mut count = [0u8; 4];
    count.copy_from_slice(&b[start - 4..start]);
    let n = u32::from_be_bytes(count) as usize;
    if b.len() < start + n * 20 {
        return Err(bad());
    }
    (0..n)
        .map(|i| Oid::from_bytes(&b[start + i * 20..start + (i + 1) * 20]).map_err(|_| bad()))
        .collect()
}

/// Which packs to merge (file stems). Packs fall in size tiers, each 16 times
/// the one below (tier 0: under 64 KiB); when a tier holds `MERGE_FANIN` packs,
/// they become one pack of the next tier. An object is thus rewritten about
/// log16 of the repository size times, and there are fewer than
/// `MERGE_FANIN` packs per tier.
pub(super) fn merge_group(packs: Vec<(String, u64)>) -> Vec<String> {
    let tier = |size: u64| {
        let mut t = 0;
        let mut limit: u64 = 64 << 10;
        while size >= limit && t < 12 {
            t += 1;
            limit = limit.saturating_mul(16);
        }
        t
    };
    let mut tiers: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for (stem, size) in packs {
        tiers.entry(tier(size)).or_default().push(stem);
    }
    tiers
        .into_values()
        .find(|t| t.len() >= MERGE_FANIN)
        .unwrap_or_default()
}

/// Merge the packs `group` (file stems) into one. Holds the shared lock on its
/// own descriptor, so no `gc` runs meanwhile. Other handles may be reading the
/// merged packs: a pack is deleted only once the new one holds all its objects,
/// libgit2 passes over a pack that vanished (and rescans), and the gc mark makes
/// every handle reload its pack list.
pub(super) fn merge_packs(git_dir: &Path, durable: bool, group: &[String]) -> Result<()> {
    let lock_path = git_dir.join(LOCK_FILE);
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
        .at(&lock_path)?;
    lock.lock_shared().at(&lock_path)?;
    let _held = Held(Arc::new(lock));
    let pack_dir = git_dir.join("objects").join("pack");
    let repo = open_repo(git_dir, durable)?;
    no_deltas(&repo, git_dir)?;
    let mut pb = repo.packbuilder().map_err(|e| gerr(git_dir, "pack", e))?;
    pb.set_threads(1);
    for stem in group {
        for oid in read_idx_oids(&pack_dir.join(format!("{stem}.idx")))? {
            pb.insert_object(oid, None)
                .map_err(|e| gerr(git_dir, "pack", e))?;
        }
    }
    let odb = repo.odb().map_err(|e| gerr(git_dir, "odb", e))?;
    let name = write_pack_files(&mut pb, &odb, &pack_dir, durable, git_dir)?;
    for stem in group.iter().filter(|s| **s != name) {
        remove_pack(&pack_dir, stem)?;
    }
    touch_gc_mark(git_dir, durable)
}

/// Make `repo` write packs without looking for deltas.
pub(super) fn no_deltas(repo: &Repository, git_dir: &Path) -> Result<()> {
    let path = git_dir.join(NO_DELTA_CONFIG);
    if !path.exists() {
        fsutil::atomic_write(&path, NO_DELTA_CONFIG_TEXT.as_bytes(), false, false)?;
    }
    let mut cfg = repo.config().map_err(|e| gerr(git_dir, "config", e))?;
    cfg.add_file(&path, ConfigLevel::App, true)
        .map_err(|e| gerr(git_dir, "config", e))
}

/// Write the packbuilder's pack into `pack_dir` (fsynced when `durable`) and
/// return its file stem.
///
/// The pack streams through `foreach` into an indexer, which is what libgit2's
/// `git_packbuilder_write` does inside: git2's `PackBuilder::write` (0.20)
/// leaks the 16-byte progress payload it boxes for that call, at every gc and
/// pack merge (`tests/c/leak_check.sh` keeps it out).
pub(super) fn write_pack_files(
    pb: &mut git2::PackBuilder<'_>,
    odb: &Odb<'_>,
    pack_dir: &Path,
    durable: bool,
    git_dir: &Path,
) -> Result<String> {
    let mut ix = Indexer::new(Some(odb), pack_dir, PACK_MODE, false)
        .map_err(|e| gerr(git_dir, "pack", e))?;
    let mut failed: Option<std::io::Error> = None;
    let walked = pb.foreach(|chunk| match ix.write_all(chunk) {
        Ok(()) => true,
        Err(e) => {
            failed = Some(e);
            false
        }
    });
    // The indexer's error first: the walk it stopped only says "no error". It
    // comes from libgit2 as text, which names the OS error (read back here).
    if let Some(e) = failed {
        return Err(match e.raw_os_error() {
            Some(_) => Error::io(pack_dir, e),
            None => Error::system(pack_dir, format!("pack write: {e}")),
        });
    }
    walked.map_err(|e| gerr(git_dir, "pack write", e))?;
    let name = format!(
        "pack-{}",
        ix.commit().map_err(|e| gerr(git_dir, "pack write", e))?
    );
    if durable {
        sync_pack(pack_dir, &name)?;
    }
    Ok(name)
}

/// Make everything under `dir`, which libgit2 just created, owner-only
/// (directories 0700; its files, e.g. `HEAD` and `config`, follow the umask).
fn make_tree_owner_only(dir: &Path) -> Result<()> {
    platform::make_owner_only(dir).at(dir)?;
    for e in fs::read_dir(dir).at(dir)? {
        let p = e.at(dir)?.path();
        if fs::symlink_metadata(&p).at(&p)?.is_dir() {
            make_tree_owner_only(&p)?;
        } else {
            platform::make_owner_only(&p).at(&p)?;
        }
    }
    Ok(())
}

/// fsync a pack, its index and the pack directory.
fn sync_pack(pack_dir: &Path, name: &str) -> Result<()> {
    for ext in ["pack", "idx"] {
        let p = pack_dir.join(format!("{name}.{ext}"));
        File::open(&p).at(&p)?.sync_all().at(&p)?;
    }
    File::open(pack_dir).at(pack_dir)?.sync_all().at(pack_dir)
}

/// Delete a pack: its index first, since a pack without an index is ignored.
pub(super) fn remove_pack(dir: &Path, stem: &str) -> Result<()> {
    for ext in ["idx", "pack", "rev", "keep", "mtimes", "promisor"] {
        fsutil::remove_file_if_exists(&dir.join(format!("{stem}.{ext}")))?;
    }
    Ok(())
}

/// Tell every open handle that packs were removed (they reopen on their next
/// operation).
pub(super) fn touch_gc_mark(git_dir: &Path, durable: bool) -> Result<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    fsutil::atomic_write(
        &git_dir.join(GC_MARK),
        format!("{nanos}\n").as_bytes(),
        durable,
        durable,
    )
}
