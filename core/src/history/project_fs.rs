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
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::platform::{self, Dir, Errno, Kind};

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
    fn of(st: &platform::Stat) -> StatKey {
        StatKey {
            dev: st.dev,
            ino: st.ino,
            mode: st.mode,
            size: st.size,
            mtime: st.mtime,
            ctime: st.ctime,
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
    dir: Dir,
    path: PathBuf,
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
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
    Dir(Dir),
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
        let c = CString::new(platform::path_bytes(path))
            .map_err(|_| Error::invalid(format!("project root {} has a NUL", path.display())))?;
        let dir = Dir::open(&c).map_err(|e| Error::io(path, e.into()))?;
        Ok(Root {
            dir,
            path: path.to_path_buf(),
        })
    }

    fn full(&self, p: &str) -> PathBuf {
        self.path.join(p)
    }

    /// Walk to the directory holding `p`, creating missing directories when asked.
    fn parent(&self, p: &ProjectPath, create: bool) -> Result<Parent> {
        let (dirs, _) = p.components();
        let mut cur: Option<Dir> = None;
        let mut walked = String::new();
        for d in dirs {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(d);
            let dir = cur.as_ref().unwrap_or(&self.dir);
            let name = cstr(d).map_err(|e| Error::io(&self.full(&walked), e))?;
            let opened = match dir.open_dir_nofollow(&name) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    if !create {
                        return Ok(Parent::Missing(walked));
                    }
                    match dir.mkdir(&name, 0o777) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(Error::io(&self.full(&walked), e.into())),
                    }
                    match dir.open_dir_nofollow(&name) {
                        Ok(fd) => fd,
                        Err(_) => return self.classify_block(dir, &name, walked),
                    }
                }
                Err(Errno::LOOP | Errno::NOTDIR | Errno::MLINK) => {
                    return self.classify_block(dir, &name, walked);
                }
                Err(e) => return Err(Error::io(&self.full(&walked), e.into())),
            };
            cur = Some(opened);
        }
        match cur {
            Some(fd) => Ok(Parent::Dir(fd)),
            None => {
                let fd = self.dir.try_clone().map_err(|e| Error::io(&self.path, e))?;
                Ok(Parent::Dir(fd))
            }
        }
    }

    fn classify_block(&self, dir: &Dir, name: &CStr, at: String) -> Result<Parent> {
        let why = match dir.stat_nofollow(name) {
            Ok(st) if st.kind == Kind::Symlink => Block::Symlink,
            Ok(_) => Block::NotDir,
            Err(Errno::NOENT) => return Ok(Parent::Missing(at)),
            Err(e) => return Err(Error::io(&self.full(&at), e.into())),
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
            let st = match dir.stat_nofollow(&name) {
                Ok(st) => st,
                Err(Errno::NOENT) => return node(Node::Absent),
                Err(Errno::NOTDIR) => return node(Node::Absent),
                Err(e) => return Err(at(e.into())),
            };
            if matches!(st.kind, Kind::Symlink | Kind::File) && known == Some(&StatKey::of(&st)) {
                return Ok(Lookup::Unchanged);
            }
            match st.kind {
                Kind::Symlink => match dir.read_link(&name) {
                    Ok(target) => {
                        return Ok(Lookup::Node(Node::Link { target }, Some(StatKey::of(&st))))
                    }
                    Err(Errno::INVAL) => continue,
                    Err(Errno::NOENT) => return node(Node::Absent),
                    Err(e) => return Err(at(e.into())),
                },
                Kind::Dir => return node(Node::Dir),
                Kind::File => {
                    let mut f = match dir.open_file_nofollow(&name) {
                        Ok(f) => f,
                        Err(Errno::LOOP) => continue,
                        Err(Errno::NOENT) => return node(Node::Absent),
                        Err(e) => return Err(at(e.into())),
                    };
                    let st = platform::file_stat(&f).map_err(|e| at(e.into()))?;
                    if st.kind != Kind::File {
                        continue;
                    }
                    let mut content = Vec::with_capacity(st.size.max(0) as usize);
                    f.read_to_end(&mut content).map_err(at)?;
                    return Ok(Lookup::Node(
                        Node::File {
                            content,
                            exec: st.owner_exec(),
                        },
                        Some(StatKey::of(&st)),
                    ));
                }
                Kind::Other => return node(Node::Special),
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
        let (_, last) = p.components();
        let name = cstr(last).map_err(at)?;
        let tmp = cstr(&temp_name(last)).map_err(at)?;
        match dir.unlink(&tmp) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(at(e.into())),
        }
        let existing = match dir.stat_nofollow(&name) {
            Ok(st) => Some(st),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(at(e.into())),
        };
        if let Some(st) = &existing {
            if st.kind == Kind::Dir {
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
                    dir.symlink(&target, &tmp)?;
                }
                WriteKind::File { exec } => {
                    let create_mode = if exec { 0o777 } else { 0o666 };
                    let mut f = dir.create_file(&tmp, create_mode)?;
                    // Keep the permissions of a file being replaced, with the
                    // executable bits set or cleared as recorded.
                    if let Some(st) = existing.filter(|s| s.kind == Kind::File) {
                        let perm = st.mode & 0o7777;
                        let perm = if exec {
                            perm | ((perm & 0o444) >> 2)
                        } else {
                            perm & !0o111
                        };
                        platform::set_permissions(&f, perm)?;
                    }
                    f.write_all(content)?;
                    if sync {
                        f.sync_all()?;
                    }
                }
            }
            Ok(dir.rename(&tmp, &name)?)
        })();
        if let Err(e) = result {
            let _ = dir.unlink(&tmp);
            return Err(at(e));
        }
        if sync {
            dir.sync().map_err(|e| at(e.into()))?;
        }
        Ok(())
    }

    /// Remove the temporary file a restore of `p` may have left behind when it was
    /// killed between writing and renaming.
    pub fn remove_temp(&self, p: &ProjectPath) -> Result<()> {
        if let Parent::Dir(dir) = self.parent(p, false)? {
            let (_, last) = p.components();
            if let Ok(tmp) = cstr(&temp_name(last)) {
                let _ = dir.unlink(&tmp);
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
            let _ = dir.unlink(&tmp);
        }
        match dir.stat_nofollow(&name) {
            Ok(st) if st.kind == Kind::Dir => {
                return Err(Error::Conflict(format!(
                    "{} is a directory; refusing to delete it",
                    full.display()
                )))
            }
            Ok(_) => {}
            Err(Errno::NOENT) => return Ok(false),
            Err(e) => return Err(at(e.into())),
        }
        match dir.unlink(&name) {
            Ok(()) => {}
            Err(Errno::NOENT) => return Ok(false),
            Err(e) => return Err(at(e.into())),
        }
        if sync {
            dir.sync().map_err(|e| at(e.into()))?;
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
            match parent.remove_dir(&name) {
                Ok(()) => {
                    if sync {
                        let _ = parent.sync();
                    }
                    removed.push(d.clone());
                }
                Err(Errno::NOENT) => {}
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

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
