//! Long-term memory: a directory of Markdown files, one per memory, with a
//! human-readable index `MEMORY.md` rewritten after every change (a derived
//! file: listing reads the directory). One directory per project and one for
//! the user (docs/SETTINGS.md, "Memory"). Changes are atomic and made under a
//! lock on the directory; a name can never reach outside it.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::fsutil;

/// The index file in a memory directory.
pub const MEMORY_INDEX: &str = "MEMORY.md";
/// The longest memory name.
pub const MAX_NAME_LEN: usize = 100;
/// The largest memory.
pub const MAX_MEMORY_BYTES: u64 = 1 << 20;

/// Whose memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryScope {
    /// The project's (the default): `<home>/memory/projects/<project code>/`.
    #[default]
    Project,
    /// The user's, for every project: `<home>/memory/user/`.
    User,
}

impl MemoryScope {
    /// Both scopes.
    pub const ALL: [MemoryScope; 2] = [MemoryScope::Project, MemoryScope::User];

    /// Parse `project` or `user`.
    pub fn parse(name: &str) -> Result<MemoryScope> {
        match name {
            "project" => Ok(MemoryScope::Project),
            "user" => Ok(MemoryScope::User),
            _ => Err(Error::invalid(format!(
                "unknown memory scope {name:?} (expected project or user)"
            ))),
        }
    }
}

/// One memory as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryEntry {
    /// Its name (the file is `<name>.md`).
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its first non-empty line, without a heading's `#`, at most 100 characters.
    pub summary: String,
}

/// A memory directory: `home` (trusted, may be a symlink) and the path below it.
pub(crate) struct MemoryDir {
    home: PathBuf,
    below: Vec<String>,
}

impl MemoryDir {
    pub fn new(home: &Path, scope: MemoryScope, project_code: &str) -> MemoryDir {
        let below = match scope {
            MemoryScope::Project => vec!["memory".into(), "projects".into(), project_code.into()],
            MemoryScope::User => vec!["memory".into(), "user".into()],
        };
        MemoryDir {
            home: home.to_path_buf(),
            below,
        }
    }

    pub fn path(&self) -> PathBuf {
        self.below.iter().fold(self.home.clone(), |p, c| p.join(c))
    }

    /// The directory, created 0700 if missing; refused if any part below the
    /// home is a symbolic link (it could lead anywhere).
    fn ensure(&self) -> Result<PathBuf> {
        self.walk(true).map(|p| p.unwrap_or_else(|| self.path()))
    }

    /// The directory if it exists (`None` if not), refused as [`Self::ensure`]
    /// refuses it; creates nothing.
    fn existing(&self) -> Result<Option<PathBuf>> {
        self.walk(false)
    }

    fn walk(&self, create: bool) -> Result<Option<PathBuf>> {
        let mut p = self.home.clone();
        for c in &self.below {
            p.push(c);
            match fs::symlink_metadata(&p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    fsutil::create_private_dir(&p)?;
                }
                Err(e) => return Err(Error::io(&p, e)),
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(Error::invalid(format!(
                        "memory directory {} is a symbolic link; refusing to follow it",
                        p.display()
                    )))
                }
                Ok(m) if !m.is_dir() => {
                    return Err(Error::invalid(format!(
                        "memory directory {} is not a directory",
                        p.display()
                    )))
                }
                Ok(_) => {}
            }
        }
        Ok(Some(p))
    }

    /// Create a memory; `Conflict` if the name is taken.
    pub fn add(&self, name: &str, content: &str) -> Result<MemoryEntry> {
        self.write(name, content, false)
    }

    /// Replace a memory's text; `NotFound` if there is none by that name.
    pub fn update(&self, name: &str, content: &str) -> Result<MemoryEntry> {
        self.write(name, content, true)
    }

    fn write(&self, name: &str, content: &str, replace: bool) -> Result<MemoryEntry> {
        let name = validate_name(name)?;
        if content.len() as u64 > MAX_MEMORY_BYTES {
            return Err(Error::invalid(format!(
                "memory {name:?} is {} bytes, over the limit of {MAX_MEMORY_BYTES}",
                content.len()
            )));
        }
        if replace {
            self.must_exist(name)?;
        }
        let dir = self.ensure()?;
        let _lock = fsutil::lock_dir(&dir)?;
        let path = dir.join(format!("{name}.md"));
        let exists = regular_file(&path)?;
        match (exists, replace) {
            (true, false) => {
                return Err(Error::Conflict(format!(
                    "memory {name:?} already exists ({})",
                    path.display()
                )))
            }
            (false, true) => return Err(not_found(name, &path)),
            _ => {}
        }
        fsutil::atomic_write(&path, content.as_bytes(), true, true)?;
        write_index(&dir)?;
        Ok(entry(name, path, content))
    }

    /// Delete a memory; `NotFound` if there is none by that name.
    pub fn delete(&self, name: &str) -> Result<()> {
        let name = validate_name(name)?;
        self.must_exist(name)?;
        let dir = self.ensure()?;
        let _lock = fsutil::lock_dir(&dir)?;
        let path = dir.join(format!("{name}.md"));
        if !regular_file(&path)? || !fsutil::remove_file_if_exists(&path)? {
            return Err(not_found(name, &path));
        }
        write_index(&dir)
    }

    /// A memory's text; `NotFound` if there is none by that name.
    pub fn read(&self, name: &str) -> Result<String> {
        let name = validate_name(name)?;
        self.must_exist(name)?;
        let Some(dir) = self.existing()? else {
            return Err(not_found(name, &self.path().join(format!("{name}.md"))));
        };
        let path = dir.join(format!("{name}.md"));
        if !regular_file(&path)? {
            return Err(not_found(name, &path));
        }
        read_text(&path)
    }

    /// `NotFound` for a memory that is not there, before anything is created:
    /// a refused call leaves the home as it was, directories included.
    fn must_exist(&self, name: &str) -> Result<()> {
        let path = self.path().join(format!("{name}.md"));
        if regular_file(&path)? {
            Ok(())
        } else {
            Err(not_found(name, &path))
        }
    }

    /// Every memory, by name. Reading: a missing directory is no memories,
    /// and is not created.
    pub fn list(&self) -> Result<Vec<MemoryEntry>> {
        match self.existing()? {
            Some(dir) => list_in(&dir),
            None => Ok(Vec::new()),
        }
    }
}

fn not_found(name: &str, path: &Path) -> Error {
    Error::NotFound(format!("memory {name:?} ({})", path.display()))
}

/// Whether `path` is a memory file: `false` if missing; an error if it is a
/// symbolic link or not a regular file (never followed).
fn regular_file(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(_) => Err(Error::invalid(format!(
            "memory file {} is a symbolic link or not a regular file; refusing it",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// At most `MAX_MEMORY_BYTES + 1` bytes of a memory file: one more than a
/// memory may hold, to tell a file too large.
fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    fs::File::open(path)
        .at(path)?
        .take(MAX_MEMORY_BYTES + 1)
        .read_to_end(&mut bytes)
        .at(path)?;
    Ok(bytes)
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = read_bounded(path)?;
    if bytes.len() as u64 > MAX_MEMORY_BYTES {
        return Err(Error::invalid(format!(
            "memory file {} is larger than {MAX_MEMORY_BYTES} bytes",
            path.display()
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A memory's name, without a trailing `.md`: letters, digits, `-`, `_` and
/// `.`, starting with a letter or digit, no `..`, at most 100 (`MAX_NAME_LEN`)
/// characters, and not the index's name. Anything else (`../x`, `/etc/x`, a
/// NUL, a separator) is `InvalidInput`.
pub fn validate_name(name: &str) -> Result<&str> {
    let bare = name.strip_suffix(".md").unwrap_or(name);
    let ok_chars = bare
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let ok = !bare.is_empty()
        && bare.len() <= MAX_NAME_LEN
        && ok_chars
        && bare.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !bare.contains("..")
        && !bare.ends_with(".md")
        && !bare.eq_ignore_ascii_case("MEMORY");
    if ok {
        Ok(bare)
    } else {
        Err(Error::invalid(format!(
            "memory name {name:?}: use 1 to {MAX_NAME_LEN} letters, digits, '-', '_' or '.', \
             starting with a letter or digit, without '..' (and not MEMORY, the index)"
        )))
    }
}

fn entry(name: &str, path: PathBuf, content: &str) -> MemoryEntry {
    let summary = content
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(100)
        .collect();
    MemoryEntry {
        name: name.to_string(),
        path,
        bytes: content.len() as u64,
        summary,
    }
}

fn list_in(dir: &Path) -> Result<Vec<MemoryEntry>> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).at(dir)? {
        let e = e.at(dir)?;
        let file_name = e.file_name();
        let Some(name) = file_name.to_str().and_then(|n| n.strip_suffix(".md")) else {
            continue;
        };
        // Only what the library could have written: symlinks and odd names are not memories.
        let is_file = e.file_type().at(&e.path())?.is_file();
        if !is_file || validate_name(name).is_err() {
            continue;
        }
        let path = e.path();
        // A file put there larger than a memory may be is listed all the same
        // (its summary from its start, its true size): refusing it would stop
        // every listing, and the index rewrite after every change.
        let content = read_bounded(&path)?;
        let size = e.metadata().at(&path)?.len();
        let mut m = entry(name, path, &String::from_utf8_lossy(&content));
        m.bytes = size;
        out.push(m);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Rewrite `MEMORY.md` from the directory (under the caller's lock).
fn write_index(dir: &Path) -> Result<()> {
    let mut text = String::from("# Memory\n\n");
    for m in list_in(dir)? {
        text.push_str(&format!("- [{}]({}.md): {}\n", m.name, m.name, m.summary));
    }
    fsutil::atomic_write(&dir.join(MEMORY_INDEX), text.as_bytes(), true, true)
}
