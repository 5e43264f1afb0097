//! What the fuzz targets (`fuzz/`) and their stable property-based form
//! (`core/tests/fuzz_stable.rs`) feed arbitrary bytes to: the log reader with
//! every view, the index with its journal, and the structure cache. Each goes
//! through the public API on a store in a temporary directory, as a host's
//! damaged or hostile files would. The contract, checked on every input (a
//! breach panics, which is what the fuzzers and proptest report): any bytes
//! give a result or a typed error, never a panic and never
//! [`ErrorKind::Internal`] (a bug in sessionkit), and reading never writes
//! what was written: the logs, their quarantine files and the blobs stay byte
//! for byte as they were (a reader may refresh the caches: the index and the
//! structure cache), and a writer only appends to a log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::api::{SessionView, Store};
use crate::error::{ErrorKind, Result};
use crate::ops::doctor::DoctorOptions;
use crate::options::StoreOptions;
use crate::view::{Message, ModelViewOptions};

/// The result of a call on fuzzed bytes: whatever it is, unless it is an
/// internal error, which no input may cause.
fn typed<T>(what: &str, r: Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) if e.kind() == ErrorKind::Internal => {
            panic!("{what}: an internal error on fuzzed input: {e}")
        }
        Err(_) => None,
    }
}

/// The files under `dir` that hold what was written, with their bytes: the
/// session logs, their quarantine files and the blobs. Not the caches a reader
/// may refresh (the index and its journals, FORMAT.md §10; the structure
/// cache, §5.1) nor the temporary files of an atomic replace.
fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![(dir.to_path_buf(), false)];
    while let Some((d, in_blobs)) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            let truth = in_blobs || name.ends_with(".jsonl") || name.ends_with(".jsonl.corrupt");
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push((path, in_blobs || name == "blobs")),
                Ok(t) if t.is_file() && truth && !name.starts_with(".tmp-") => {
                    let bytes = std::fs::read(&path).expect("read a file of the store");
                    out.insert(path, bytes);
                }
                _ => {}
            }
        }
    }
    out
}

/// A store in a temporary directory with one session whose files the inputs
/// replace.
pub struct FuzzStore {
    dir: tempfile::TempDir,
    store: Store,
    id: String,
}

const SESSION: &str = "fuzzed-session";

impl FuzzStore {
    /// A fresh store (home and project under one temporary directory).
    pub fn new() -> FuzzStore {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let project = dir.path().join("project");
        std::fs::create_dir(&project).expect("the project directory");
        let store = Store::open(
            &project,
            StoreOptions {
                home: Some(dir.path().join("home")),
                ..StoreOptions::default()
            },
        )
        .expect("a store");
        FuzzStore {
            dir,
            store,
            id: SESSION.to_string(),
        }
    }

    /// Run `read`, and fail if it changed, added or removed a log, a
    /// quarantine file or a blob.
    fn reads_only(&self, what: &str, read: impl FnOnce()) {
        let before = files_under(self.dir.path());
        read();
        let after = files_under(self.dir.path());
        if before != after {
            let changed: Vec<&PathBuf> = before
                .keys()
                .chain(after.keys())
                .filter(|p| before.get(*p) != after.get(*p))
                .collect();
            panic!("{what} wrote: {changed:?}");
        }
    }

    fn log(&self) -> PathBuf {
        self.store.log_path(&self.id).expect("a valid id")
    }

    /// `bytes` as a session log: loaded, every view folded, resumed from its
    /// end (all of which write nothing), the index rebuilt from it, and opened
    /// for writing (which may repair a torn tail and quarantine lines, as it
    /// must, but keeps every byte: the log after it starts with `bytes`).
    pub fn log_bytes(&self, bytes: &[u8]) {
        let _ = std::fs::remove_file(self.store.core.structure_cache_path(&self.id));
        std::fs::write(self.log(), bytes).expect("write the log");
        self.reads_only("reading the log", || {
            if let Some(view) = typed("read_session", self.store.read_session(&self.id)) {
                typed("active_path", view.active_path());
                typed("ui_view", view.ui_view());
                typed("model_view", view.model_view(&ModelViewOptions::default()));
                typed(
                    "model_view (last 2, 100 tokens)",
                    view.model_view(&ModelViewOptions {
                        last_n: Some(2),
                        token_budget: Some(100),
                    }),
                );
                typed("tree", view.tree());
                typed("branches", view.branches());
                let _ = view.records();
            }
            typed(
                "resume",
                self.store
                    .model_view(&self.id, &ModelViewOptions::default()),
            );
        });
        typed("rebuild_index", self.store.rebuild_index());
        if let Some(s) = typed("open_session", self.store.open_session(&self.id)) {
            typed(
                "append",
                s.append(serde_json::json!({"role": "user", "content": "after"})),
            );
            typed("close", s.close());
            let after = std::fs::read(self.log()).expect("read the log");
            assert!(
                after.starts_with(bytes),
                "a writer changed bytes already in the log"
            );
        }
    }

    /// `bytes` as the sessions index, then as its journal: listed, an entry
    /// read, and checked by doctor, none of which writes a log.
    pub fn index_bytes(&self, index: &[u8], journal: &[u8]) {
        std::fs::write(self.log(), b"").expect("write the log");
        std::fs::write(self.store.index_path(), index).expect("write the index");
        let dir = self.store.dir().to_path_buf();
        for g in 0..3 {
            std::fs::write(dir.join(format!(".sessions-index.{g}.journal")), journal)
                .expect("write a journal");
        }
        self.reads_only("reading the index", || {
            typed("read_index", self.store.read_index());
            typed("list_sessions", self.store.list_sessions());
            typed("session_entry", self.store.session_entry(&self.id));
            typed(
                "doctor",
                self.store
                    .doctor(&DoctorOptions { repair: false }, &mut |_| {}),
            );
        });
    }

    /// The structure cache the library writes for `log` (empty when it writes
    /// none for a log this small): a seed to damage.
    pub fn structure_cache_of(&self, log: &[u8]) -> Vec<u8> {
        let path = self.store.core.structure_cache_path(&self.id);
        let _ = std::fs::remove_file(&path);
        std::fs::write(self.log(), log).expect("write the log");
        let _ = self.store.read_session(&self.id);
        std::fs::read(path).unwrap_or_default()
    }

    /// `cache` as the structure cache of the log `log`: read with it, and the
    /// views must equal those read without it.
    pub fn structure_cache_bytes(&self, log: &[u8], cache: &[u8]) {
        std::fs::write(self.log(), log).expect("write the log");
        let path = self.store.core.structure_cache_path(&self.id);
        std::fs::create_dir_all(path.parent().expect("a session directory"))
            .expect("the session directory");
        let _ = std::fs::remove_file(&path);
        let log_before = std::fs::read(self.log()).expect("read the log");
        let plain = self.store.read_session(&self.id).map(|v| ids(&v));
        std::fs::write(&path, cache).expect("write the cache");
        let mut cached = None;
        self.reads_only("reading with a structure cache", || {
            cached = Some(self.store.read_session(&self.id).map(|v| ids(&v)));
        });
        let cached = cached.expect("read");
        assert_eq!(
            std::fs::read(self.log()).expect("read the log"),
            log_before,
            "reading changed the log"
        );
        match (plain, cached) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "a structure cache changed the views"),
            (Err(a), Err(b)) => {
                assert_ne!(a.kind(), ErrorKind::Internal, "{a}");
                assert_eq!(a.kind(), b.kind())
            }
            (a, b) => panic!("with a cache: {:?}, without: {:?}", b.err(), a.err()),
        }
    }
}

impl Default for FuzzStore {
    fn default() -> FuzzStore {
        FuzzStore::new()
    }
}

fn ids(v: &SessionView) -> Vec<Vec<String>> {
    let id_list = |r: Result<Vec<Message>>| -> Vec<String> {
        r.map(|ms| ms.iter().map(|m| m.id().to_string()).collect())
            .unwrap_or_else(|e| {
                assert_ne!(e.kind(), ErrorKind::Internal, "{e}");
                vec![format!("error {:?}", e.kind())]
            })
    };
    vec![
        id_list(v.active_path()),
        id_list(v.ui_view()),
        id_list(v.model_view(&ModelViewOptions::default())),
    ]
}
