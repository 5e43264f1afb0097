//! Files inside the project root, reached without ever leaving it.
//!
//! File history reads and restores files of the user's project. Every path it
//! touches is first checked lexically ([`ProjectPath::new`]: relative or under the
//! root, no `..`, never inside a `.git` directory), then reached one component at
//! a time from a descriptor of the root with `O_NOFOLLOW`: a symlink anywhere below
//! the root (a directory swapped for a link to `/etc`, say) stops the walk instead
//! of redirecting it. The last component is examined with `AT_SYMLINK_NOFOLLOW`, so
//! a symlink is read, replaced or removed as a link, never followed.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A validated path of a file in the project: relative, `/`-separated, UTF-8,
/// without `.`, `..` or empty components, and not inside any `.git` directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProjectPath(String);

impl ProjectPath {
    /// Check a path given by a host: relative to `root`, or absolute and under it.
    /// `exclude` is a directory that must not be tracked either (the store, when a
    /// host keeps it inside the project).
    pub fn new(root: &Path, exclude: &Path, input: &Path) -> Result<ProjectPath> {
        let shown = input.display();
        if input.as_os_str().is_empty() {
            return Err(Error::invalid("file path is empty"));
        }
        let rel: &Path = if input.is_absolute() {
            input.strip_prefix(root).map_err(|_| {
                Error::invalid(format!(
                    "file path {shown} is outside the project root {}",
                    root.display()
                ))
            })?
        } else {
            input
        };
        let mut parts: Vec<&str> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => {
                    let s = s.to_str().ok_or_else(|| {
                        Error::invalid(format!("file path {shown} is not valid UTF-8"))
                    })?;
                    if s.eq_ignore_ascii_case(".git") {
                        return Err(Error::invalid(format!(
                            "file path {shown} is inside a .git directory; git data is never tracked"
                        )));
                    }
                    parts.push(s);
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(Error::invalid(format!(
                        "file path {shown} contains \"..\"; give a path inside the project root"
                    )))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(Error::invalid(format!(
                        "file path {shown} is outside the project root {}",
                        root.display()
                    )))
                }
            }
        }
        if parts.is_empty() {
            return Err(Error::invalid(format!(
                "file path {shown} is the project root, not a file"
            )));
        }
        let joined = parts.join("/");
        if let Ok(ex) = exclude.strip_prefix(root) {
            if !ex.as_os_str().is_empty() && Path::new(&joined).starts_with(ex) {
                return Err(Error::invalid(format!(
                    "file path {shown} is inside the sessionkit store {}",
                    exclude.display()
                )));
            }
        }
        Ok(ProjectPath(joined))
    }

    /// A path read back from the file history, checked like host input.
    pub(crate) fn from_stored(s: &str) -> Result<ProjectPath> {
        let bad = s.is_empty()
            || s.split('/')
                .any(|c| c.is_empty() || c == "." || c == ".." || c.eq_ignore_ascii_case(".git"))
            || s.contains('\0');
        if bad {
            return Err(Error::Corrupt(format!(
                "file history names an invalid path {s:?}"
            )));
        }
        Ok(ProjectPath(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn components(&self) -> (Vec<&str>, &str) {
        let mut v: Vec<&str> = self.0.split('/').collect();
        let last = v.pop().unwrap_or_default();
        (v, last)
    }

    /// How deep the path is (for deleting children before parents).
    pub fn depth(&self) -> usize {
        self.0.matches('/').count()
    }
}

impl std::fmt::Display for ProjectPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why the walk to a path stopped before its last component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// A component below the root is a symlink.
    Symlink,
    /// A component below the root is a file (or something else that is not a directory).
    NotDir,
}

/// What is at a path right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Absent,
    File {
        content: Vec<u8>,
        exec: bool,
    },
    Link {
        target: Vec<u8>,
    },
    Dir,
    /// A FIFO, socket or device: never read, never replaced.
    Special,
    /// A component before the last is not a plain directory: `at` is its path.
    Blocked {
        at: String,
        why: Block,
    },
}

/// What [`Root::read_unless`] found.
#[derive(Debug)]
pub enum Lookup {
    /// The file or link still has the status given.
    Unchanged,
    /// Nothing is there because this directory on its path is missing (the
    /// highest one missing).
    Missing(String),
    /// What is there, with the status of a file or link (taken before its bytes
    /// were read).
    Node(Node, Option<StatKey>),
}

/// The status of a file or link that changes whenever its bytes, its mode or
/// the file itself (replaced by another) do: device, inode, mode, size,
/// modification and change times. The change time cannot be set from user space,
/// so a tool that puts the old modification time back is still seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatKey {
    dev: u64,
    ino: u64,
    mode: u32,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl StatKey {
    fn of(st: &libc::stat) -> StatKey {
        StatKey {
            dev: st.st_dev,
            ino: st.st_ino,
            mode: st.st_mode,
            size: st.st_size,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        }
    }

    /// The later of the modification and change times, in nanoseconds since
    /// the epoch.
    pub fn changed_ns(&self) -> i128 {
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        ns(self.mtime).max(ns(self.ctime))
    }
}

/// The project root, opened once per operation.
pub struct Root {
    fd: OwnedFd,
    path: PathBuf,
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn openat(dir: RawFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    loop {
        // SAFETY: `name` is a valid C string; the result is a fresh descriptor we own.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
        if fd >= 0 {
            // SAFETY: `fd` was just returned by openat and is owned by nobody else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn lstatat(dir: RawFd, name: &CStr) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value to be overwritten by fstatat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor, C string and out-pointer.
    cvt(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: as in `lstatat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor and out-pointer.
    cvt(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

fn readlinkat(dir: RawFd, name: &CStr) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    loop {
        // SAFETY: the buffer is valid for `buf.len()` bytes.
        let n = unsafe {
            libc::readlinkat(
                dir,
                name.as_ptr(),
                buf.as_mut_ptr().cast::<libc::c_char>(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        if n < buf.len() {
            buf.truncate(n);
            return Ok(buf);
        }
        buf.resize(buf.len() * 2, 0);
    }
}

fn unlinkat(dir: RawFd, name: &CStr) -> io::Result<()> {
    unlinkat_flags(dir, name, 0)
}

/// `unlinkat`; with `AT_REMOVEDIR`, removes an empty directory (never through a
/// link: a link is not a directory).
fn unlinkat_flags(dir: RawFd, name: &CStr, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: valid descriptor and C string.
    cvt(unsafe { libc::unlinkat(dir, name.as_ptr(), flags) }).map(drop)
}

fn renameat(dir: RawFd, from: &CStr, to: &CStr) -> io::Result<()> {
    // SAFETY: valid descriptor and C strings.
    cvt(unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) }).map(drop)
}

fn file_type(st: &libc::stat) -> libc::mode_t {
    st.st_mode & libc::S_IFMT
}

/// The name of the temporary file a restore writes before renaming it into place.
/// It is fixed per file, so a restore cut short by a crash leaves at most one, and
/// the next restore of that file removes it.
fn temp_name(name: &str) -> String {
    let t = format!(".{name}.sessionkit-restore");
    if t.len() <= 255 {
        return t;
    }
    let d = Sha256::digest(name.as_bytes());
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(".sessionkit-restore-{hex}")
}

enum Parent {
    Dir(OwnedFd),
    /// A directory on the way does not exist (so neither does the file): the
    /// first one missing.
    Missing(String),
    Blocked {
        at: String,
        why: Block,
    },
}

impl Root {
    pub fn open(path: &Path) -> Result<Root> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| Error::invalid(format!("project root {} has a NUL", path.display())))?;
        let fd = openat(libc::AT_FDCWD, &c, libc::O_RDONLY | libc::O_DIRECTORY, 0)
            .map_err(|e| Error::io(path, e))?;
        Ok(Root {
            fd,
            path: path.to_path_buf(),
        })
    }

    fn full(&self, p: &str) -> PathBuf {
        self.path.join(p)
    }

    /// Walk to the directory holding `p`, creating missing directories when asked.
    fn parent(&self, p: &ProjectPath, create: bool) -> Result<Parent> {
        let (dirs, _) = p.components();
        let mut cur: Option<OwnedFd> = None;
        let mut walked = String::new();
        for d in dirs {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(d);
            let dir_fd = cur.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
            let name = cstr(d).map_err(|e| Error::io(&self.full(&walked), e))?;
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
            let opened = match openat(dir_fd, &name, flags, 0) {
                Ok(fd) => fd,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    if !create {
                        return Ok(Parent::Missing(walked));
                    }
                    // SAFETY: valid descriptor and C string.
                    let r = unsafe { libc::mkdirat(dir_fd, name.as_ptr(), 0o777) };
                    if r < 0 {
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() != Some(libc::EEXIST) {
                            return Err(Error::io(&self.full(&walked), e));
                        }
                    }
                    match openat(dir_fd, &name, flags, 0) {
                        Ok(fd) => fd,
                        Err(_) => return self.classify_block(dir_fd, &name, walked),
                    }
                }
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EMLINK)
                    ) =>
                {
                    return self.classify_block(dir_fd, &name, walked);
                }
                Err(e) => return Err(Error::io(&self.full(&walked), e)),
            };
            cur = Some(opened);
        }
        match cur {
            Some(fd) => Ok(Parent::Dir(fd)),
            None => {
                let fd = self.fd.try_clone().map_err(|e| Error::io(&self.path, e))?;
                Ok(Parent::Dir(fd))
            }
        }
    }

    fn classify_block(&self, dir: RawFd, name: &CStr, at: String) -> Result<Parent> {
        let why = match lstatat(dir, name) {
            Ok(st) if file_type(&st) == libc::S_IFLNK => Block::Symlink,
            Ok(_) => Block::NotDir,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(Parent::Missing(at)),
            Err(e) => return Err(Error::io(&self.full(&at), e)),
        };
        Ok(Parent::Blocked { at, why })
    }

    /// What is at `p`, with the bytes of a file or the target of a link.
    pub fn read(&self, p: &ProjectPath) -> Result<Node> {
        match self.read_unless(p, None)? {
            Lookup::Node(node, _) => Ok(node),
            Lookup::Missing(_) => Ok(Node::Absent),
            Lookup::Unchanged => Err(Error::Internal(format!(
                "{}: read without a status to compare",
                self.full(p.as_str()).display()
            ))),
        }
    }

    /// As [`Root::read`], but when `known` is given and the file or link at `p`
    /// still has that status, nothing is read: [`Lookup::Unchanged`]. A file or
    /// link read comes with its status, taken before its bytes were read.
    pub fn read_unless(&self, p: &ProjectPath, known: Option<&StatKey>) -> Result<Lookup> {
        let dir = match self.parent(p, false)? {
            Parent::Dir(fd) => fd,
            Parent::Missing(dir) => return Ok(Lookup::Missing(dir)),
            Parent::Blocked { at, why } => {
                return Ok(Lookup::Node(Node::Blocked { at, why }, None))
            }
        };
        let (_, last) = p.components();
        let name = cstr(last).map_err(|e| Error::io(&self.full(p.as_str()), e))?;
        let at = |e| Error::io(&self.full(p.as_str()), e);
        // A file may be swapped for a link between the stat and the open; O_NOFOLLOW
        // turns that into ELOOP, and we look again.
        let node = |n| Ok(Lookup::Node(n, None));
        for _ in 0..3 {
            let st = match lstatat(dir.as_raw_fd(), &name) {
                Ok(st) => st,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return node(Node::Absent),
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return node(Node::Absent),
                Err(e) => return Err(at(e)),
            };
            let kind = file_type(&st);
            if matches!(kind, libc::S_IFLNK | libc::S_IFREG) && known == Some(&StatKey::of(&st)) {
                return Ok(Lookup::Unchanged);
            }
            match kind {
                libc::S_IFLNK => match readlinkat(dir.as_raw_fd(), &name) {
                    Ok(target) => {
                        return Ok(Lookup::Node(Node::Link { target }, Some(StatKey::of(&st))))
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => continue,
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return node(Node::Absent),
                    Err(e) => return Err(at(e)),
                },
                libc::S_IFDIR => return node(Node::Dir),
                libc::S_IFREG => {
                    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;
                    let fd = match openat(dir.as_raw_fd(), &name, flags, 0) {
                        Ok(fd) => fd,
                        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => continue,
                        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                            return node(Node::Absent)
                        }
                        Err(e) => return Err(at(e)),
                    };
                    let st = fstat(fd.as_raw_fd()).map_err(at)?;
                    if file_type(&st) != libc::S_IFREG {
                        continue;
                    }
                    let mut f = File::from(fd);
                    let mut content = Vec::with_capacity(st.st_size.max(0) as usize);
                    f.read_to_end(&mut content).map_err(at)?;
                    return Ok(Lookup::Node(
                        Node::File {
                            content,
                            exec: st.st_mode & libc::S_IXUSR != 0,
                        },
                        Some(StatKey::of(&st)),
                    ));
                }
                _ => return node(Node::Special),
            }
        }
        Err(Error::Conflict(format!(
            "file {} keeps changing between a file and a symlink",
            self.full(p.as_str()).display()
        )))
    }

    /// Replace `p` with a regular file (or a symlink when `link`), atomically:
    /// write a temporary file beside it, then rename it over the old one. A link
    /// at `p` is replaced, never written through. Missing parent directories are
    /// created; a symlinked or non-directory parent is refused.
    pub fn write(
        &self,
        p: &ProjectPath,
        content: &[u8],
        kind: WriteKind,
        sync: bool,
    ) -> Result<()> {
        let full = self.full(p.as_str());
        let at = |e| Error::io(&full, e);
        let dir = match self.parent(p, true)? {
            Parent::Dir(fd) => fd,
            Parent::Missing(_) => {
                return Err(Error::Conflict(format!(
                    "{}: a directory on its path vanished during the restore",
                    full.display()
                )))
            }
            Parent::Blocked { at: b, why } => {
                return Err(Error::Conflict(format!(
                    "{}: {b} is {} ; refusing to restore through it",
                    full.display(),
                    match why {
                        Block::Symlink => "a symlink",
                        Block::NotDir => "not a directory",
                    }
                )))
            }
        };
        let dfd = dir.as_raw_fd();
        let (_, last) = p.components();
        let name = cstr(last).map_err(at)?;
        let tmp = cstr(&temp_name(last)).map_err(at)?;
        match unlinkat(dfd, &tmp) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => return Err(at(e)),
        }
        let existing = match lstatat(dfd, &name) {
            Ok(st) => Some(st),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
            Err(e) => return Err(at(e)),
        };
        if let Some(st) = &existing {
            if file_type(st) == libc::S_IFDIR {
                return Err(Error::Conflict(format!(
                    "{} is a directory; refusing to replace it",
                    full.display()
                )));
            }
        }
        let result = (|| -> io::Result<()> {
            match kind {
                WriteKind::Link => {
                    let target = CString::new(content).map_err(|_| {
                        io::Error::new(io::ErrorKind::InvalidData, "symlink target has a NUL")
                    })?;
                    // SAFETY: valid C strings and descriptor.
                    cvt(unsafe { libc::symlinkat(target.as_ptr(), dfd, tmp.as_ptr()) })?;
                }
                WriteKind::File { exec } => {
                    let create_mode = if exec { 0o777 } else { 0o666 };
                    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
                    let fd = openat(dfd, &tmp, flags, create_mode)?;
                    // Keep the permissions of a file being replaced, with the
                    // executable bits set or cleared as recorded.
                    if let Some(st) = existing.filter(|s| file_type(s) == libc::S_IFREG) {
                        let perm = st.st_mode & 0o7777;
                        let perm = if exec {
                            perm | ((perm & 0o444) >> 2)
                        } else {
                            perm & !0o111
                        };
                        // SAFETY: valid descriptor.
                        cvt(unsafe { libc::fchmod(fd.as_raw_fd(), perm) })?;
                    }
                    let mut f = File::from(fd);
                    f.write_all(content)?;
                    if sync {
                        f.sync_all()?;
                    }
                }
            }
            renameat(dfd, &tmp, &name)
        })();
        if let Err(e) = result {
            let _ = unlinkat(dfd, &tmp);
            return Err(at(e));
        }
        if sync {
            sync_fd(dfd).map_err(at)?;
        }
        Ok(())
    }

    /// Remove the temporary file a restore of `p` may have left behind when it was
    /// killed between writing and renaming.
    pub fn remove_temp(&self, p: &ProjectPath) -> Result<()> {
        if let Parent::Dir(dir) = self.parent(p, false)? {
            let (_, last) = p.components();
            if let Ok(tmp) = cstr(&temp_name(last)) {
                let _ = unlinkat(dir.as_raw_fd(), &tmp);
            }
        }
        Ok(())
    }

    /// Remove the file or link at `p` (a link itself, not its target). A directory
    /// is never removed. Returns whether something was removed.
    pub fn remove(&self, p: &ProjectPath, sync: bool) -> Result<bool> {
        let full = self.full(p.as_str());
        let at = |e| Error::io(&full, e);
        let dir = match self.parent(p, false)? {
            Parent::Dir(fd) => fd,
            Parent::Missing(_) => return Ok(false),
            Parent::Blocked { at: b, .. } => {
                return Err(Error::Conflict(format!(
                    "{}: {b} is not a plain directory; refusing to delete through it",
                    full.display()
                )))
            }
        };
        let (_, last) = p.components();
        let name = cstr(last).map_err(at)?;
        if let Ok(tmp) = cstr(&temp_name(last)) {
            let _ = unlinkat(dir.as_raw_fd(), &tmp);
        }
        match lstatat(dir.as_raw_fd(), &name) {
            Ok(st) if file_type(&st) == libc::S_IFDIR => {
                return Err(Error::Conflict(format!(
                    "{} is a directory; refusing to delete it",
                    full.display()
                )))
            }
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(false),
            Err(e) => return Err(at(e)),
        }
        match unlinkat(dir.as_raw_fd(), &name) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(false),
            Err(e) => return Err(at(e)),
        }
        if sync {
            sync_fd(dir.as_raw_fd()).map_err(at)?;
        }
        Ok(true)
    }
}

impl Root {
    /// Remove the directories on `p`'s path from its own up to `top` (one of
    /// them), deepest first, each only if it is an empty directory: the first
    /// that is not (it holds something, it is a link or a file, it cannot be
    /// removed) stops the removal. Returns the directories removed.
    pub fn remove_empty_dirs(&self, p: &ProjectPath, top: &str, sync: bool) -> Vec<String> {
        let (dirs, _) = p.components();
        let prefixes: Vec<String> = (1..=dirs.len()).map(|i| dirs[..i].join("/")).collect();
        let Some(start) = prefixes.iter().position(|d| d == top) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        for d in prefixes[start..].iter().rev() {
            let Ok(dir) = ProjectPath::from_stored(d) else {
                break;
            };
            let Ok(Parent::Dir(parent)) = self.parent(&dir, false) else {
                break;
            };
            let (_, last) = dir.components();
            let Ok(name) = cstr(last) else {
                break;
            };
            match unlinkat_flags(parent.as_raw_fd(), &name, libc::AT_REMOVEDIR) {
                Ok(()) => {
                    if sync {
                        let _ = sync_fd(parent.as_raw_fd());
                    }
                    removed.push(d.clone());
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(_) => break,
            }
        }
        removed
    }
}

/// What [`Root::write`] creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    File { exec: bool },
    Link,
}

fn sync_fd(fd: RawFd) -> io::Result<()> {
    // SAFETY: valid descriptor.
    cvt(unsafe { libc::fsync(fd) }).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pp(root: &str, p: &str) -> Result<ProjectPath> {
        ProjectPath::new(Path::new(root), Path::new("/elsewhere"), Path::new(p))
    }

    #[test]
    fn paths_are_normalised_and_checked() {
        assert_eq!(pp("/r", "a/./b").unwrap().as_str(), "a/b");
        assert_eq!(pp("/r", "/r/a/b").unwrap().as_str(), "a/b");
        for bad in [
            "../x",
            "a/../b",
            "/etc/passwd",
            ".git/config",
            "a/.GIT/x",
            "",
            ".",
            "/r",
        ] {
            let e = pp("/r", bad).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidInput, "{bad}: {e}");
        }
        let e = ProjectPath::new(
            Path::new("/r"),
            Path::new("/r/.store"),
            Path::new(".store/x"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("store"), "{e}");
    }

    #[test]
    fn a_known_status_spares_the_read_until_the_file_changes() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), "abc").unwrap();
        let root = Root::open(tmp.path()).unwrap();
        let p = pp("/r", "f").unwrap();
        let Lookup::Node(Node::File { content, .. }, Some(key)) =
            root.read_unless(&p, None).unwrap()
        else {
            panic!("not a file with a status");
        };
        assert_eq!(content, b"abc");
        assert!(matches!(
            root.read_unless(&p, Some(&key)).unwrap(),
            Lookup::Unchanged
        ));
        // Same size, same modification time: the change time still moves.
        let f = File::options()
            .write(true)
            .open(tmp.path().join("f"))
            .unwrap();
        let mtime = f.metadata().unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        (&f).write_all(b"xyz").unwrap();
        f.set_modified(mtime).unwrap();
        match root.read_unless(&p, Some(&key)).unwrap() {
            Lookup::Node(Node::File { content, .. }, _) => assert_eq!(content, b"xyz"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn long_names_get_a_short_temp_name() {
        assert_eq!(temp_name("a.txt"), ".a.txt.sessionkit-restore");
        assert!(temp_name(&"x".repeat(250)).len() < 64);
    }
}
