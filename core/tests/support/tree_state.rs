//! A test helper shared by the core and CLI suites (included by `#[path]`).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Every file under `dir` with its size, modification time and inode: what a
/// write of any kind would change.
pub fn tree_state(dir: &Path) -> BTreeMap<PathBuf, (u64, i64, i64, u64)> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, (u64, i64, i64, u64)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            out.insert(e.path(), (m.len(), m.mtime(), m.mtime_nsec(), m.ino()));
            if m.is_dir() {
                walk(&e.path(), out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}
