//! A store on a fresh temporary home and project, for the core's test files
//! (included by `#[path]`).

#[path = "child.rs"]
mod child;
use sessionkit::{Store, StoreOptions};
use tempfile::TempDir;

/// The temporary directories live as long as the store's test does.
#[allow(dead_code)] // not every test file reads the project
pub struct Env {
    pub home: TempDir,
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
        home,
        project,
        store,
    }
}

/// Re-run this test binary as a child that runs only `test` (an ignored test, so
/// that a plain run never counts a child as passing), with `env_var` set
/// to `role` and `SK_HOME`, `SK_ROOT` naming this store's home and project (for
/// tests of several processes at once).
#[allow(dead_code)] // not every test file spawns children
pub fn spawn_child(env: &Env, test: &str, env_var: &str, role: &str) -> std::process::Child {
    child::test_child(test)
        .env(env_var, role)
        .env("SK_HOME", env.home.path())
        .env("SK_ROOT", env.project.path())
        .spawn()
        .unwrap()
}

/// In a child started by [`spawn_child`]: the store it was given.
#[allow(dead_code)]
pub fn child_store() -> Store {
    let var = |n: &str| std::env::var(n).unwrap_or_else(|_| panic!("child needs {n}"));
    Store::open(
        var("SK_ROOT"),
        StoreOptions {
            home: Some(var("SK_HOME").into()),
            ..StoreOptions::default()
        },
    )
    .unwrap()
}

/// Make a FIFO at `path` (with the `mkfifo` command: the tests link no libc).
#[allow(dead_code)]
pub fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Run `f` on a store of this home and project opened on another thread, and
/// fail if it takes over 20 seconds: a call that blocks (on a FIFO, say)
/// fails its test instead of hanging the suite.
#[allow(dead_code)]
pub fn within_seconds<T: Send + 'static>(
    env: &Env,
    f: impl FnOnce(&Store) -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let (home, project) = (env.home.path().to_owned(), env.project.path().to_owned());
    std::thread::spawn(move || {
        let options = StoreOptions {
            home: Some(home),
            ..StoreOptions::default()
        };
        let store = Store::open(&project, options).unwrap();
        let _ = tx.send(f(&store));
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("the call did not return within 20 seconds")
}
