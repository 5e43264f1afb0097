//! What the fuzz targets (`fuzz/`) and their stable property-based form
//! (`core/tests/fuzz_stable.rs`) feed arbitrary bytes to: the log reader with
//! every view, the index with its journal, and the structure cache. Each goes
//! through the public API on a store in a temporary directory, as a host's
//! damaged or hostile files would. The contract: any bytes give a result or a
//! typed error, never a panic, and reading never writes.

use std::path::PathBuf;

use crate::api::{SessionView, Store};
use crate::error::Result;
use crate::ops::doctor::DoctorOptions;
use crate::options::StoreOptions;
use crate::view::{Message, ModelViewOptions};

/// A store in a temporary directory with one session whose files the inputs
/// replace.
pub struct FuzzStore {
    _dir: tempfile::TempDir,
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
            _dir: dir,
            store,
            id: SESSION.to_string(),
        }
    }

    fn log(&self) -> PathBuf {
        self.store.log_path(&self.id).expect("a valid id")
    }

    /// `bytes` as a session log: loaded, every view folded, resumed from its
    /// end, the index rebuilt from it, and opened for writing (which may repair
    /// a torn tail and quarantine lines, as it must).
    pub fn log_bytes(&self, bytes: &[u8]) {
        let _ = std::fs::remove_file(self.store.core.structure_cache_path(&self.id));
        std::fs::write(self.log(), bytes).expect("write the log");
        if let Ok(view) = self.store.read_session(&self.id) {
            let _ = view.active_path();
            let _ = view.ui_view();
            let _ = view.model_view(&ModelViewOptions::default());
            let _ = view.model_view(&ModelViewOptions {
                last_n: Some(2),
                token_budget: Some(100),
            });
            let _ = view.tree();
            let _ = view.branches();
            let _ = view.records();
        }
        let _ = self
            .store
            .model_view(&self.id, &ModelViewOptions::default());
        let _ = self.store.rebuild_index();
        if let Ok(s) = self.store.open_session(&self.id) {
            let _ = s.append(serde_json::json!({"role": "user", "content": "after"}));
            let _ = s.close();
        }
    }

    /// `bytes` as the sessions index, then as its journal: listed, an entry
    /// read, and checked by doctor.
    pub fn index_bytes(&self, index: &[u8], journal: &[u8]) {
        std::fs::write(self.log(), b"").expect("write the log");
        std::fs::write(self.store.index_path(), index).expect("write the index");
        let dir = self.store.dir().to_path_buf();
        for g in 0..3 {
            std::fs::write(dir.join(format!(".sessions-index.{g}.journal")), journal)
                .expect("write a journal");
        }
        let _ = self.store.read_index();
        let _ = self.store.list_sessions();
        let _ = self.store.session_entry(&self.id);
        let _ = self
            .store
            .doctor(&DoctorOptions { repair: false }, &mut |_| {});
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
        let plain = self.store.read_session(&self.id).map(|v| ids(&v));
        std::fs::write(&path, cache).expect("write the cache");
        let cached = self.store.read_session(&self.id).map(|v| ids(&v));
        match (plain, cached) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "a structure cache changed the views"),
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind()),
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
            .unwrap_or_else(|e| vec![format!("error {:?}", e.kind())])
    };
    vec![
        id_list(v.active_path()),
        id_list(v.ui_view()),
        id_list(v.model_view(&ModelViewOptions::default())),
    ]
}
