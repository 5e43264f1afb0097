//! A store on a fresh temporary home and project, for the core's test files
//! (included by `#[path]`).

use sessionkit::{Store, StoreOptions};
use tempfile::TempDir;

/// The temporary directories live as long as the store's test does.
#[allow(dead_code)] // not every test file reads the project
pub struct Env {
    pub _home: TempDir,
    pub project: TempDir,
    pub store: Store,
}

/// A store opened with `options`, its home set to a fresh directory.
pub fn env_with(options: StoreOptions) -> Env {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = Store::open(
        project.path(),
        StoreOptions {
            home: Some(home.path().to_path_buf()),
            ..options
        },
    )
    .unwrap();
    Env {
        _home: home,
        project,
        store,
    }
}
