//! The platform boundary: every call the core makes that depends on the
//! operating system goes through this module, behind small safe functions —
//! the system calls of the project-file walk (through rustix), private modes on
//! create, file identities and times from metadata, positioned reads, the bytes
//! of paths, error numbers read back from libgit2's messages, and a count of
//! the process's forks.
//!
//! Linux is tested; other Unix systems should work as they are (rustix and the
//! standard library's Unix extensions cover them). Windows needs its own
//! version of this module (and of the walk's no-symlink rules).

use std::ffi::{CStr, OsStr};
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// An error number of the system, as the project-file walk tells its cases
/// apart (`Errno::NOENT`, `Errno::LOOP`, ...); it converts into an `io::Error`.
pub(crate) use rustix::io::Errno;

/// The error number behind a message that ends with the system's text for it,
/// as libgit2 writes its OS errors ("failed to make directory '/x': Not a
/// directory"): libgit2 clears `errno` once it has written the text, so the
/// number is only found again from the text.
pub(crate) fn errno_from_message(message: &str) -> Option<i32> {
    // Past the largest error number of Linux (133) and of the BSDs and macOS.
    (1..256).find(|&n| {
        let text = errno_text(n);
        !text.is_empty()
            && (message == text
                || message
                    .strip_suffix(text.as_str())
                    .is_some_and(|m| m.ends_with(": ")))
    })
}

/// The system's text for error number `n` (`strerror`), as the standard library
/// gives it in "Not a directory (os error 20)".
fn errno_text(n: i32) -> String {
    let shown = io::Error::from_raw_os_error(n).to_string();
    let suffix = format!(" (os error {n})");
    match shown.strip_suffix(&suffix) {
        Some(text) if !text.starts_with("Unknown error") => text.to_string(),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------
// The standard library's Unix extensions, used by the rest of the core.

/// Files the core creates are 0600 and its directories 0700: transcripts hold
/// secrets.
pub(crate) trait Private {
    /// Create with the owner's permissions only.
    fn private(&mut self) -> &mut Self;
}

impl Private for fs::OpenOptions {
    fn private(&mut self) -> &mut Self {
        self.mode(0o600)
    }
}

impl Private for fs::DirBuilder {
    fn private(&mut self) -> &mut Self {
        self.mode(0o700)
    }
}

/// The permissions of a private file, for files another crate creates.
pub(crate) fn private_file_permissions() -> fs::Permissions {
    fs::Permissions::from_mode(0o600)
}

/// Take the group and other permission bits off a file or directory another
/// library created (libgit2 has no setting for its modes): owner-only, as
/// everything the core creates. Symbolic links are left alone.
pub(crate) fn make_owner_only(path: &std::path::Path) -> io::Result<()> {
    let m = fs::symlink_metadata(path)?;
    let mode = m.permissions().mode();
    if m.file_type().is_symlink() || mode & 0o077 == 0 {
        return Ok(());
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o700))
}

/// Rename `from` to `to` (a file or a directory) unless `to` exists, atomically
/// where the system can (`renameat2(RENAME_NOREPLACE)`): moving a session into
/// or out of the trash must never replace a log. `AlreadyExists` when `to` is
/// there; where the file system has no such flag, a check then a rename, which
/// the caller's project lock keeps from racing another mover.
pub(crate) fn rename_noreplace(from: &std::path::Path, to: &std::path::Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {}
            r => return r.map_err(io::Error::from),
        }
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    fs::rename(from, to)
}

/// A file's identity: its device and inode. While a file is open its inode
/// cannot be reused, so the same identity means the same file.
pub(crate) fn file_id(m: &fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

/// A file's modification time as seconds and nanoseconds (as stored, without
/// the rounding of `SystemTime` conversions).
pub(crate) fn mtime(m: &fs::Metadata) -> (i64, i64) {
    (m.mtime(), m.mtime_nsec())
}

/// Read from `offset` without moving the file's position (`pread`), so threads
/// sharing the file do not race; returns how much was read.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    file.read_at(buf, offset)
}

/// As [`read_at`], filling `buf` entirely.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(buf, offset)
}

/// The bytes of an OS string, as the system sees them.
pub(crate) fn os_str_bytes(s: &OsStr) -> &[u8] {
    s.as_bytes()
}

/// A path's bytes, as the system sees them.
pub(crate) fn path_bytes(path: &std::path::Path) -> &[u8] {
    os_str_bytes(path.as_os_str())
}

// ---------------------------------------------------------------------------
// Files reached from an open directory, never through a symlink (`project_fs`).
// Every call is rustix's safe wrapper of the system call of the same name.

/// What kind of file a status describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// The status of a file (`struct stat`), in the core's own types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub kind: Kind,
    /// Type and permission bits (`st_mode`).
    pub mode: u32,
    pub dev: u64,
    pub ino: u64,
    pub size: i64,
    /// Seconds and nanoseconds.
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

impl Stat {
    // The field types of `struct stat` differ between systems and architectures;
    // these casts widen them (or keep them) to the core's types.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Stat {
        let kind = match FileType::from_raw_mode(st.st_mode as _) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        };
        Stat {
            kind,
            mode: st.st_mode as u32,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as i64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    /// Whether the owner may execute the file.
    pub fn owner_exec(&self) -> bool {
        self.mode & 0o100 != 0
    }
}

/// An open directory; names given to its methods are single components.
pub(crate) struct Dir(OwnedFd);

impl Dir {
    /// Open the directory at `path` (which may pass through symlinks).
    pub fn open(path: &CStr) -> Result<Dir, Errno> {
        open(rustix::fs::CWD, path, OFlags::RDONLY | OFlags::DIRECTORY, 0).map(Dir)
    }

    /// Open the directory at `path`, as [`Dir::open`]; a path with a NUL byte
    /// is `InvalidInput`.
    pub fn open_path(path: &std::path::Path) -> std::io::Result<Dir> {
        let c = std::ffi::CString::new(path_bytes(path)).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL byte in the path")
        })?;
        Ok(Dir::open(&c)?)
    }

    /// Open the subdirectory `name`; a symlink is refused (`ELOOP`), a file too
    /// (`ENOTDIR`).
    pub fn open_dir_nofollow(&self, name: &CStr) -> Result<Dir, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        open(&self.0, name, flags, 0).map(Dir)
    }

    /// Open the file `name` for reading; a symlink is refused (`ELOOP`), and a
    /// FIFO does not block the open.
    pub fn open_file_nofollow(&self, name: &CStr) -> Result<File, Errno> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        open(&self.0, name, flags, 0).map(File::from)
    }

    /// Create the file `name`, which must not exist (not even as a symlink), with
    /// permissions `mode` (less the umask).
    pub fn create_file(&self, name: &CStr, mode: u32) -> Result<File, Errno> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        open(&self.0, name, flags, mode).map(File::from)
    }

    /// Call `f` with the name of each entry (not `.` or `..`) and whether it
    /// is a directory (a symlink is not). The type comes with the listing: a
    /// call per entry only where the file system does not give it.
    pub fn for_each_entry(&self, mut f: impl FnMut(&[u8], bool)) -> Result<(), Errno> {
        for entry in rustix::fs::Dir::read_from(&self.0)? {
            let entry = entry?;
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let is_dir = match entry.file_type() {
                FileType::Directory => true,
                // Gone since it was listed: not a directory.
                FileType::Unknown => self
                    .stat_nofollow(name)
                    .is_ok_and(|st| st.kind == Kind::Dir),
                _ => false,
            };
            f(name.to_bytes(), is_dir);
        }
        Ok(())
    }

    /// The status of `name`, or of the file a symlink `name` points to.
    pub fn stat(&self, name: &CStr) -> Result<Stat, Errno> {
        rustix::fs::statat(&self.0, name, AtFlags::empty()).map(|st| Stat::of(&st))
    }

    /// The status of `name` itself, a symlink included (`lstat`).
    pub fn stat_nofollow(&self, name: &CStr) -> Result<Stat, Errno> {
        rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW).map(|st| Stat::of(&st))
    }

    /// The target of the symlink `name`, as bytes.
    pub fn read_link(&self, name: &CStr) -> Result<Vec<u8>, Errno> {
        rustix::fs::readlinkat(&self.0, name, Vec::new()).map(|t| t.into_bytes())
    }

    /// Create the symlink `name` pointing at `target`.
    pub fn symlink(&self, target: &CStr, name: &CStr) -> Result<(), Errno> {
        rustix::fs::symlinkat(target, &self.0, name)
    }

    /// Create the directory `name` with permissions `mode` (less the umask).
    pub fn mkdir(&self, name: &CStr, mode: u32) -> Result<(), Errno> {
        rustix::fs::mkdirat(&self.0, name, Mode::from_raw_mode(mode as _))
    }

    /// Remove the file or symlink `name` (never a directory).
    pub fn unlink(&self, name: &CStr) -> Result<(), Errno> {
        rustix::fs::unlinkat(&self.0, name, AtFlags::empty())
    }

    /// Remove the directory `name` if it is empty (a symlink is not one).
    pub fn remove_dir(&self, name: &CStr) -> Result<(), Errno> {
        rustix::fs::unlinkat(&self.0, name, AtFlags::REMOVEDIR)
    }

    /// Rename `from` to `to`, both in this directory, replacing `to`.
    pub fn rename(&self, from: &CStr, to: &CStr) -> Result<(), Errno> {
        rustix::fs::renameat(&self.0, from, &self.0, to)
    }

    /// Make the directory's entries durable (`fsync`).
    pub fn sync(&self) -> Result<(), Errno> {
        rustix::fs::fsync(&self.0)
    }

    pub fn try_clone(&self) -> io::Result<Dir> {
        self.0.try_clone().map(Dir)
    }
}

/// `openat`, close-on-exec, retried when a signal interrupts it.
fn open(dir: impl AsFd, name: &CStr, flags: OFlags, mode: u32) -> Result<OwnedFd, Errno> {
    let mode = Mode::from_raw_mode(mode as _);
    loop {
        match rustix::fs::openat(&dir, name, flags | OFlags::CLOEXEC, mode) {
            Err(Errno::INTR) => continue,
            r => return r,
        }
    }
}

/// The status of an open file (`fstat`).
pub(crate) fn file_stat(file: &File) -> Result<Stat, Errno> {
    rustix::fs::fstat(file).map(|st| Stat::of(&st))
}

/// Set the permission bits of an open file (`fchmod`).
pub(crate) fn set_permissions(file: &File, mode: u32) -> Result<(), Errno> {
    rustix::fs::fchmod(file, Mode::from_raw_mode(mode as _))
}

/// The process holding the `flock` on `file`, when the system says
/// (Linux's `/proc/locks`); for an error message only, so `None` elsewhere or
/// when the lock was let go meanwhile.
pub(crate) fn flock_holder(file: &File) -> Option<u32> {
    let st = rustix::fs::fstat(file).ok()?;
    let dev = st.st_dev as u64;
    // `/proc/locks` names a file as `major:minor:inode`, the device in hex.
    let want = format!(
        "{:02x}:{:02x}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev),
        st.st_ino
    );
    let find = |locks: &str| {
        locks.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter's line has "->".
            (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&want.as_str()))
                .then(|| f.get(4)?.parse().ok())
                .flatten()
        })
    };
    // The kernel lists the locks a page at a time: while other processes take
    // and release locks, a read can miss a line. A few reads find it.
    (0..4).find_map(|_| find(&fs::read_to_string("/proc/locks").ok()?))
}

// ---------------------------------------------------------------------------
// Forks of the process, so that a writer handle can tell it was inherited.

/// Forks of this process so far, counted in each child by a `pthread_atfork`
/// handler, so that checking the owner costs a write no `getpid` system call.
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn forked_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// [`FORKS`], or `None` while the handler is not (or could not be) registered.
/// Never blocks: a fork while another thread blocked here would leave the child
/// waiting for a thread it does not have.
pub(crate) fn fork_count() -> Option<u64> {
    const UNREGISTERED: u8 = 0;
    const REGISTERING: u8 = 1;
    const REGISTERED: u8 = 2;
    const FAILED: u8 = 3;
    static STATE: AtomicU8 = AtomicU8::new(UNREGISTERED);
    match STATE.load(Ordering::Acquire) {
        REGISTERED => Some(FORKS.load(Ordering::Relaxed)),
        UNREGISTERED
            if STATE
                .compare_exchange(
                    UNREGISTERED,
                    REGISTERING,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok() =>
        {
            // pthread_atfork has no safe form in rustix, hence libc here.
            // SAFETY: the handler only increments an atomic (async-signal-safe).
            let ok = unsafe { libc::pthread_atfork(None, None, Some(forked_child)) } == 0;
            STATE.store(if ok { REGISTERED } else { FAILED }, Ordering::Release);
            ok.then(|| FORKS.load(Ordering::Relaxed))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Background work and fork().

/// A job for the background thread.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Jobs waiting for the background thread. Taken by that thread only inside
/// its [`BackgroundWork`] window, so never held at a fork.
static JOBS: parking_lot::Mutex<Vec<Job>> = parking_lot::Mutex::new(Vec::new());
/// The background thread of this process (`None` before the first job), with
/// the process id it was started in: a forked child has no such thread.
static WORKER: parking_lot::Mutex<Option<(u32, std::thread::Thread)>> =
    parking_lot::Mutex::new(None);
/// Run `job` on the process's one background thread (the pack merge), started
/// on first use and kept: a thread that starts or exits allocates and frees
/// outside any window a fork could wait for (its name, thread-local state,
/// libgit2's per-thread errors), and a child forked at that moment would find
/// the allocator's lock held by a thread it does not have. The kept thread
/// touches nothing shared between jobs: it sleeps in `park`, a futex on an
/// atomic. If no thread can be started, `job` runs here.
pub(crate) fn run_in_background(job: Job) {
    let pid = std::process::id();
    let mut worker = WORKER.lock();
    if worker.as_ref().map(|(p, _)| *p) != Some(pid) {
        // First use, or a forked child: the jobs queued in the parent belong
        // to the parent's thread, which this process does not have.
        std::mem::forget(std::mem::take(&mut *JOBS.lock()));
        match spawn_kept("sessionkit-background", background_thread) {
            Ok(handle) => *worker = Some((pid, handle.thread().clone())),
            Err(_) => {
                drop(worker);
                job();
                return;
            }
        }
    }
    JOBS.lock().push(job);
    if let Some((_, thread)) = worker.as_ref() {
        thread.unpark();
    }
}

/// Start a thread that lives until the process ends or a host joins it, and
/// return once its start-up is over: the allocations a new thread makes for
/// itself happen while the caller waits, never while a fork may be made. Its
/// work must then run inside [`BackgroundWork`] windows, and its exit be
/// joined by a host.
pub(crate) fn spawn_kept(
    name: &str,
    body: impl FnOnce() + Send + 'static,
) -> io::Result<std::thread::JoinHandle<()>> {
    register_fork_handlers();
    let started = std::sync::Arc::new(std::sync::Barrier::new(2));
    let in_thread = std::sync::Arc::clone(&started);
    let handle = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            in_thread.wait();
            body();
            // Held to the end, so that the last reference (a free) is not
            // dropped here while the caller may be forking.
            drop(in_thread);
        })?;
    started.wait();
    Ok(handle)
}

fn background_thread() {
    loop {
        {
            let _work = BackgroundWork::begin();
            let jobs = std::mem::take(&mut *JOBS.lock());
            for job in jobs {
                job();
            }
            // The jobs and their queue are freed here, inside the window.
        }
        std::thread::park();
    }
}

/// Background threads now inside libgit2 or the library.
static BACKGROUND: AtomicUsize = AtomicUsize::new(0);
/// Forks between their `pthread_atfork` prepare and parent handlers.
static FORKING: AtomicUsize = AtomicUsize::new(0);

/// Held by a kept thread for its work. A `fork()` waits for the work
/// to end, and no work starts while the fork is made: a child has only the
/// forking thread, and a lock (the allocator's, libgit2's pack-window mutex,
/// the registry of repositories) held by a thread it does not have would stay
/// held in the child for good, and its next call that takes it would hang.
pub(crate) struct BackgroundWork(());

impl BackgroundWork {
    /// Wait while a fork is being made, then count this thread in.
    pub(crate) fn begin() -> BackgroundWork {
        loop {
            while FORKING.load(Ordering::SeqCst) > 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            BACKGROUND.fetch_add(1, Ordering::SeqCst);
            if FORKING.load(Ordering::SeqCst) == 0 {
                return BackgroundWork(());
            }
            BACKGROUND.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for BackgroundWork {
    fn drop(&mut self) {
        BACKGROUND.fetch_sub(1, Ordering::SeqCst);
    }
}

extern "C" fn fork_prepare() {
    FORKING.fetch_add(1, Ordering::SeqCst);
    while BACKGROUND.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

extern "C" fn fork_parent() {
    FORKING.fetch_sub(1, Ordering::SeqCst);
}

extern "C" fn fork_child() {
    // The child has no background thread and no other fork in progress.
    FORKING.store(0, Ordering::SeqCst);
    BACKGROUND.store(0, Ordering::SeqCst);
}

/// Register the handlers above, once, before the background thread starts.
fn register_fork_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: the handlers touch atomics and sleep; none takes a lock. On
    // failure (ENOMEM) forks are not held back, as before.
    ONCE.call_once(|| unsafe {
        libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_number_is_found_again_from_its_text() {
        for n in [2, 13, 20, 28, 36] {
            let text = errno_text(n);
            assert!(!text.is_empty(), "{n}");
            let msg = format!("failed to make directory '/tmp/x': {text}");
            assert_eq!(errno_from_message(&msg), Some(n), "{msg}");
            assert_eq!(errno_from_message(&text), Some(n));
        }
        assert_eq!(errno_from_message("object not found"), None);
        assert_eq!(errno_from_message(""), None);
        // Only a whole text after ": " counts ("Is a directory" is not "a directory").
        let text = errno_text(21);
        assert_eq!(errno_from_message(&format!("x{text}")), None);
    }
}
