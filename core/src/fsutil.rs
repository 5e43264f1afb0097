//! Small file-system helpers: private permissions, atomic replace, fsync.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{IoContext, Result};
use crate::platform::{self, Private};

/// Create a directory (and parents) with mode 0700.
pub fn create_private_dir(path: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .private()
        .create(path)
        .at(path)
}

/// Open a file for appending, creating it with mode 0600.
pub fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .append(true)
        .read(true)
        .create(true)
        .private()
        .open(path)
        .at(path)
}

/// Replace `path` with `bytes` atomically: temp file in the same directory, write,
/// optional fsync, rename; then fsync the directory when `sync_dir`.
pub fn atomic_write(path: &Path, bytes: &[u8], sync_file: bool, sync_dir: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(platform::private_file_permissions())
        .tempfile_in(dir)
        .at(dir)?;
    tmp.write_all(bytes).at(tmp.path())?;
    if sync_file {
        tmp.as_file().sync_all().at(tmp.path())?;
    }
    tmp.persist(path)
        .map_err(|e| crate::error::Error::io(path, e.error))?;
    if sync_dir {
        sync_dir_of(path)?;
    }
    Ok(())
}

/// fsync the directory that holds `path`, so a create or rename in it is durable.
pub fn sync_dir_of(path: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    File::open(dir).at(dir)?.sync_all().at(dir)
}

/// Take an exclusive advisory lock on `path` (created 0600 if missing), waiting
/// for other holders; the lock is released when the returned file is dropped.
pub fn lock_exclusive(path: &Path) -> Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .private()
        .open(path)
        .at(path)?;
    f.lock().at(path)?;
    Ok(f)
}

/// Take an exclusive advisory lock on the directory `dir` itself, so that a
/// read-modify-write of the files in it needs no lock file beside them.
pub fn lock_dir(dir: &Path) -> Result<File> {
    let f = File::open(dir).at(dir)?;
    f.lock().at(dir)?;
    Ok(f)
}

/// Remove a file, treating "already gone" as success.
pub fn remove_file_if_exists(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(crate::error::Error::io(path, e)),
    }
}

/// The entries of directory `dir`, or `None` when there is no such directory
/// (nothing there, or a file in its place): a directory made on first use.
pub fn read_dir_if_exists(dir: &Path) -> Result<Option<std::fs::ReadDir>> {
    match std::fs::read_dir(dir) {
        Ok(rd) => Ok(Some(rd)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(crate::error::Error::io(dir, e)),
    }
}
