//! Temporary files a crash leaves behind, for the tests that kill processes:
//! only a killed writer may leave one, and gc must then remove every one.
#![allow(dead_code)] // each test uses its own part

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sessionkit::{Store, BLOB_GC_GRACE};

/// Every regular file named `.tmp-*` under the project directory `dir`, at
/// any depth but in the trash and the file history (whose own files gc
/// handles otherwise), sorted.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            let top = d == dir;
            if t.is_dir() && !(top && (e.file_name() == "trash" || e.file_name() == "file-history"))
            {
                todo.push(e.path());
            } else if t.is_file() && e.file_name().to_string_lossy().starts_with(".tmp") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Age the temporary files a killed writer left (as if the gc's grace period
/// had passed), run the store's gc of temporary files, and fail if any is
/// left. Returns how many there were.
pub fn gc_removes_every_temp_file(store: &Store, what: &str) -> usize {
    let left = temp_files(store.dir());
    let old = SystemTime::now() - BLOB_GC_GRACE - Duration::from_secs(60);
    for p in &left {
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_modified(old).unwrap();
    }
    let report = store.gc_temp_files().unwrap();
    let still = temp_files(store.dir());
    assert!(
        still.is_empty(),
        "{what}: temporary files left after gc: {still:?} ({report:?})"
    );
    assert!(
        report.removed >= left.len(),
        "{what}: gc did not remove the leftovers {left:?}: {report:?}"
    );
    left.len()
}
