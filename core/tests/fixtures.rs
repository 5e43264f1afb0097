//! Replays `tests/fixtures/manifest.json`: every golden store and hand-made log is
//! copied into a temporary store (the fixtures are never opened in place) and must
//! yield what the manifest says. The manifest's schema is in
//! `tests/fixtures/README.md`; what the values mean is in `docs/FORMAT.md`.
//!
//! A manifest entry may list `knownDeviations`: places where the library does not
//! yet do what the format says. Such a check passes only while the library still
//! gives the recorded `current` value, so a fix makes this test fail until the
//! deviation is removed from the manifest.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};
use sessionkit::{ModelViewOptions, ReadReport, SessionView, Store, StoreOptions};
use sha2::{Digest, Sha256};

#[path = "../../tests/replay.rs"]
mod replay;
use replay::Check;

#[path = "../examples/make_fixtures.rs"]
#[allow(dead_code)]
mod make_fixtures;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn manifest() -> Value {
    let path = fixtures_dir().join("manifest.json");
    let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir`, by path relative to it.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in tree(from) {
        let dst = to.join(rel);
        fs::create_dir_all(dst.parent().unwrap()).unwrap();
        fs::write(dst, bytes).unwrap();
    }
}

fn check_report(c: &mut Check, at: &str, r: &ReadReport, expected: &Value) {
    replay::check_report(c, at, &serde_json::to_value(r).unwrap(), expected);
}

fn kind_name(e: &sessionkit::Error) -> Value {
    Value::String(format!("{:?}", e.kind()))
}

fn ids_of(messages: &[sessionkit::Message]) -> Value {
    messages.iter().map(|m| m.id()).collect::<Vec<_>>().into()
}

/// Check a read view against a manifest `read` object. `resume` is the store and
/// session id when the model view should also be read from the log's end.
fn check_view(
    c: &mut Check,
    at: &str,
    view: &SessionView,
    want: &Value,
    resume: Option<(&Store, &str)>,
) {
    if let Some(h) = want.get("header") {
        match h {
            Value::Object(fields) => {
                let header = view.header();
                for (k, v) in fields {
                    let got = header
                        .and_then(|m| m.get(k))
                        .cloned()
                        .unwrap_or(Value::Null);
                    c.eq(&format!("{at}.header.{k}"), &got, v);
                }
            }
            _ => {
                let got = view.header().map(|m| Value::Object(m.clone()));
                c.eq(&format!("{at}.header"), &got.unwrap_or(Value::Null), h);
            }
        }
    }
    if let Some(h) = want.get("head") {
        c.eq(&format!("{at}.head"), &json!(view.head()), h);
    }
    if let Some(n) = want.get("messageCount") {
        c.eq(
            &format!("{at}.messageCount"),
            &json!(view.message_count()),
            n,
        );
    }
    if let Some(p) = want.get("activePath") {
        let got = match view.active_path() {
            Ok(path) => ids_of(&path),
            Err(e) => json!({ "error": kind_name(&e) }),
        };
        c.eq(&format!("{at}.activePath"), &got, p);
    }
    if let Some(u) = want.get("ui") {
        let got = match view.ui_view() {
            Ok(ui) => ui
                .iter()
                .map(|m| {
                    let v = m.value();
                    json!([m.id(), v["visible"], v["compacted"]])
                })
                .collect::<Vec<_>>()
                .into(),
            Err(e) => json!({ "error": kind_name(&e) }),
        };
        c.eq(&format!("{at}.ui"), &got, u);
    }
    if let Some(p) = want.get("modelView") {
        let opts = ModelViewOptions::default();
        let ids = |r: sessionkit::Result<Vec<sessionkit::Message>>| match r {
            Ok(v) => ids_of(&v),
            Err(e) => json!({ "error": kind_name(&e) }),
        };
        c.eq(&format!("{at}.modelView"), &ids(view.model_view(&opts)), p);
        if let Some((store, id)) = resume {
            let got = ids(store.model_view(id, &opts));
            c.eq(&format!("{at}.modelViewResume"), &got, p);
        }
    }
    for (i, w) in want["modelViewWith"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{at}.modelViewWith[{i}]");
        let opts = match ModelViewOptions::from_json(&w["options"].to_string()) {
            Ok(o) => o,
            Err(e) => {
                c.fail(format!("{at}.options: {e}"));
                continue;
            }
        };
        let got = match view.model_view(&opts) {
            Ok(v) => ids_of(&v),
            Err(e) => json!({ "error": kind_name(&e) }),
        };
        c.eq(&at, &got, &w["ids"]);
    }
    if let Some(Value::Object(msgs)) = want.get("modelViewMessages") {
        let view_msgs = view
            .model_view(&ModelViewOptions::default())
            .unwrap_or_default();
        for (id, fields) in msgs {
            let Some(m) = view_msgs.iter().find(|m| m.id() == id) else {
                c.fail(format!(
                    "{at}.modelViewMessages.{id}: not in the model view"
                ));
                continue;
            };
            let v = m.value();
            for (k, want) in fields.as_object().unwrap() {
                let got = v.get(k).cloned().unwrap_or(Value::Null);
                c.eq(&format!("{at}.modelViewMessages.{id}.{k}"), &got, want);
            }
        }
    }
    if let Some(Value::Object(msgs)) = want.get("messages") {
        for (id, fields) in msgs {
            match view.message(id) {
                Ok(m) => {
                    let v = m.value();
                    for (k, want) in fields.as_object().unwrap() {
                        let got = v.get(k).cloned().unwrap_or(Value::Null);
                        c.eq(&format!("{at}.messages.{id}.{k}"), &got, want);
                    }
                }
                Err(e) => c.fail(format!("{at}.messages.{id}: {e}")),
            }
        }
    }
    if let Some(r) = want.get("report") {
        check_report(c, &format!("{at}.report"), view.report(), r);
    }
    if let Some(r) = want.get("records") {
        let got: Vec<Value> = view.records().iter().map(|r| r["type"].clone()).collect();
        c.eq(&format!("{at}.records"), &Value::Array(got), r);
    }
}

fn check_index_entry(c: &mut Check, at: &str, entry: &sessionkit::IndexEntry, want: &Value) {
    let got = serde_json::to_value(entry).unwrap();
    for (k, v) in want.as_object().unwrap() {
        c.eq(&format!("{at}.{k}"), &got[k.as_str()], v);
    }
}

fn open_store(project: &Path, home: &Path) -> Store {
    let options = StoreOptions {
        home: Some(home.to_path_buf()),
        ..StoreOptions::default()
    };
    Store::open(project, options).unwrap()
}

/// Open a session for writing as the manifest's `open` object says: repair,
/// quarantine, append, a second writer, a reread and a second open.
fn check_open(c: &mut Check, store: &Store, id: &str, want: &Value) {
    let path = store.log_path(id).unwrap();
    let before = fs::read(&path).unwrap();
    let qpath = PathBuf::from(format!("{}.corrupt", path.display()));
    let session = match store.open_session(id) {
        Ok(s) => s,
        Err(e) => {
            c.eq("open.error", &kind_name(&e), &want["error"]);
            if fs::read(&path).unwrap() != before {
                c.fail("open failed but changed the log".into());
            }
            if qpath.exists() {
                c.fail("open failed but wrote a quarantine file".into());
            }
            return;
        }
    };
    if let Some(e) = want.get("error") {
        c.fail(format!("open succeeded, expected {e}"));
        return;
    }
    let after = fs::read(&path).unwrap();
    let repaired = if after == before {
        false
    } else {
        let mut expected = before.clone();
        expected.push(b'\n');
        if after != expected {
            c.fail("opening changed the log other than by appending one newline".into());
        }
        true
    };
    c.eq("open.repairedTail", &json!(repaired), &want["repairedTail"]);
    if let Some(r) = want.get("openReport") {
        check_report(c, "open.openReport", session.open_report(), r);
    }
    let quarantined = || -> Vec<Value> {
        match fs::read_to_string(&qpath) {
            Ok(s) => s
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    };
    let q = quarantined();
    let got: Vec<Value> = q
        .iter()
        .map(|r| {
            let (off, len) = (r["offset"].as_u64().unwrap(), r["length"].as_u64().unwrap());
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(r["bytesBase64"].as_str().unwrap())
                .unwrap();
            if bytes[..] != before[off as usize..(off + len) as usize] {
                c.fail(format!(
                    "quarantine record at offset {off} does not hold the log's bytes"
                ));
            }
            json!({"line": r["line"], "offset": off, "length": len,
                   "kind": replay::skipped_kind(r)})
        })
        .collect();
    c.eq("open.quarantine", &Value::Array(got), &want["quarantine"]);

    if let Some(kind) = want.get("secondOpen") {
        match store.open_session(id) {
            Ok(_) => c.fail("a second writer was let in".into()),
            Err(e) => c.eq("open.secondOpen", &kind_name(&e), kind),
        }
    }
    let appended = session
        .append(json!({"role": "user", "content": "appended by the fixture test"}))
        .unwrap();
    c.eq(
        "open.appendParentId",
        &json!(appended.parent_id()),
        &want["appendParentId"],
    );
    session.close().unwrap();
    let now = fs::read(&path).unwrap();
    if !now.starts_with(&after) {
        c.fail("the log lost bytes after an append".into());
    }
    if let Some(r) = want.get("reread") {
        let view = store.read_session(id).unwrap();
        c.eq(
            "open.reread.head",
            &json!(view.head()),
            &json!(appended.id()),
        );
        check_view(c, "open.reread", &view, r, None);
    }
    // A second open quarantines nothing again.
    store.open_session(id).unwrap().close().unwrap();
    if quarantined().len() != q.len() {
        c.fail("a second open quarantined the same lines again".into());
    }
}

fn replay_log(entry: &Value, all: &mut Vec<String>) {
    let name = entry["name"].as_str().unwrap();
    let mut c = Check::new(name, entry);
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    fs::create_dir(&project).unwrap();
    let store = open_store(&project, &tmp.path().join("home"));
    replay::install(entry, &fixtures_dir(), store.dir());
    let id = entry["session"].as_str().unwrap();

    let want = &entry["read"];
    match store.read_session(id) {
        Ok(view) => {
            if let Some(e) = want.get("error") {
                c.fail(format!("read succeeded, expected {e}"));
            }
            check_view(&mut c, "read", &view, want, Some((&store, id)));
        }
        Err(e) => c.eq("read.error", &kind_name(&e), &want["error"]),
    }
    if let Some(want) = entry.get("listSessions") {
        match store.list_sessions() {
            Ok(_) => c.fail(format!("list_sessions succeeded, expected {want}")),
            Err(e) => c.eq("listSessions.error", &kind_name(&e), &want["error"]),
        }
    }
    if let Some(want) = entry.get("index") {
        store.rebuild_index().unwrap();
        let e = store.session_entry(id).unwrap();
        check_index_entry(&mut c, "index", &e, want);
        if entry["timesFromFileMtime"] == json!(true) {
            let mtime = fs::metadata(store.log_path(id).unwrap())
                .unwrap()
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64;
            let t = json!(sessionkit::testing::format_ms(mtime));
            c.eq("index.createdAt", &json!(e.created_at), &t);
            c.eq("index.updatedAt", &json!(e.updated_at), &t);
        }
    }
    if let Some(want) = entry.get("open") {
        check_open(&mut c, &store, id, want);
    }
    c.finish(all, true);
}

fn fail_all(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn logs_replay_as_the_manifest_says() {
    let before = tree(&fixtures_dir());
    let m = manifest();
    let mut failures = Vec::new();
    let mut used = HashSet::new();
    for entry in m["logs"].as_array().unwrap() {
        for src in entry["files"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|f| f.1)
        {
            used.insert(src.as_str().unwrap().to_string());
        }
        replay_log(entry, &mut failures);
    }
    for rel in tree(&fixtures_dir().join("logs")).keys() {
        if !used.contains(&format!("logs/{rel}")) {
            failures.push(format!("logs/{rel} is in no manifest entry"));
        }
    }
    assert!(
        tree(&fixtures_dir()) == before,
        "replaying changed the fixtures"
    );
    fail_all(failures);
}

/// Every row of the decision table (FORMAT §6.9) is pinned by an entry's `rows`,
/// and every id an entry lists is a row of the table or a view or index case of
/// the README (`V<n>`, `I<n>`).
#[test]
fn every_row_of_the_decision_table_has_a_fixture() {
    let path = fixtures_dir().join("../../docs/FORMAT.md");
    let format = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows = replay::table_rows(&format);
    assert!(rows.len() >= 60, "FORMAT §6.9 rows found: {rows:?}");
    let readme = fs::read_to_string(fixtures_dir().join("README.md")).unwrap();
    let mut listed = BTreeSet::new();
    let mut unknown = Vec::new();
    for entry in manifest()["logs"].as_array().unwrap() {
        for r in entry["rows"].as_array().into_iter().flatten() {
            let r = r.as_str().unwrap().to_string();
            let extra =
                (r.starts_with('V') || r.starts_with('I')) && readme.contains(&format!("| {r} |"));
            if !rows.contains(&r) && !extra {
                unknown.push(format!("{}: {r}", entry["name"]));
            }
            listed.insert(r);
        }
    }
    let missing: Vec<&String> = rows.iter().filter(|r| !listed.contains(*r)).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "rows of FORMAT §6.9 no manifest entry lists: {missing:?}; \
         listed ids that are no row: {unknown:?}"
    );
}

#[test]
fn golden_store_replays_as_the_manifest_says() {
    let m = manifest();
    let mut failures = Vec::new();
    for g in m["stores"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let mut c = Check::new(name, g);
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        copy_tree(&fixtures_dir().join(g["home"].as_str().unwrap()), &home);
        let store = open_store(Path::new(g["projectRoot"].as_str().unwrap()), &home);
        c.eq(
            "projectCode",
            &json!(store.project_code()),
            &g["projectCode"],
        );

        // The shipped index is fresh: listing uses it as it is.
        let index_bytes = fs::read(store.index_path()).unwrap();
        let listed = store.list_sessions().unwrap();
        let order: Vec<&str> = listed.iter().map(|e| e.id.as_str()).collect();
        c.eq("indexOrder", &json!(order), &g["indexOrder"]);
        if fs::read(store.index_path()).unwrap() != index_bytes {
            c.fail("listing a fresh index rewrote it".into());
        }
        let cont = store.continue_session().unwrap().map(|e| e.id);
        c.eq("continueSession", &json!(cont), &g["continueSession"]);

        let mut blobs = store.blobs().list().unwrap();
        blobs.sort();
        let want_blobs = g["blobs"].as_object().unwrap();
        c.eq(
            "blobs",
            &json!(blobs),
            &json!(want_blobs.keys().collect::<Vec<_>>()),
        );
        for (sha, len) in want_blobs {
            let bytes = fs::read(store.blobs().path_of(sha).unwrap()).unwrap();
            let digest: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            c.eq(&format!("blobs.{sha}.sha256"), &json!(digest), &json!(sha));
            c.eq(&format!("blobs.{sha}.bytes"), &json!(bytes.len()), len);
        }

        // The stored entries were captured by the listing above.
        store.rebuild_index().unwrap();
        for s in g["sessions"].as_array().unwrap() {
            let id = s["session"].as_str().unwrap();
            let mut sc = Check::new(&format!("{name}/{id}"), s);
            let view = store.read_session(id).unwrap();
            check_view(&mut sc, "read", &view, &s["read"], Some((&store, id)));
            let stored = listed.iter().find(|e| e.id == id).unwrap();
            check_index_entry(&mut sc, "storedIndex", stored, &s["index"]);
            let rebuilt = store.session_entry(id).unwrap();
            check_index_entry(&mut sc, "index", &rebuilt, &s["index"]);
            for a in s["subagents"].as_array().into_iter().flatten() {
                let agent = a["agentId"].as_str().unwrap();
                let metas = store.list_subagents(id).unwrap();
                let meta = metas.iter().find(|m| m["agentId"] == json!(agent));
                sc.eq(
                    &format!("subagents.{agent}.meta"),
                    &meta.cloned().unwrap_or(Value::Null),
                    &a["meta"],
                );
                let v = store.read_subagent(id, agent).unwrap();
                let at = format!("subagents.{agent}.read");
                check_view(&mut sc, &at, &v, &a["read"], None);
            }
            if let Some(want) = s.get("open") {
                check_open(&mut sc, &store, id, want);
            }
            sc.finish(&mut failures, true);
        }
        c.finish(&mut failures, true);
    }
    fail_all(failures);
}

#[test]
fn golden_store_regenerates_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    make_fixtures::generate(&home).unwrap();
    let fresh = tree(&home);
    let golden = tree(&fixtures_dir().join("golden/home"));
    let names = |t: &BTreeMap<String, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&fresh),
        names(&golden),
        "the golden store's files changed; if the format changed on purpose, update \
         docs/FORMAT.md, run `cargo run -p sessionkit --example make_fixtures` and \
         update tests/fixtures/manifest.json"
    );
    for (rel, bytes) in &fresh {
        assert!(
            golden[rel] == *bytes,
            "{rel} differs from the golden store:\n--- golden\n{}\n--- now\n{}\n\
             if the format changed on purpose, update docs/FORMAT.md, run \
             `cargo run -p sessionkit --example make_fixtures` and update \
             tests/fixtures/manifest.json",
            String::from_utf8_lossy(&golden[rel]),
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn project_codes_and_ids_follow_the_manifest() {
    let m = manifest();
    for p in m["projectCodes"].as_array().unwrap() {
        let path = p["path"].as_str().unwrap();
        assert_eq!(
            sessionkit::project_code(Path::new(path)),
            p["code"].as_str().unwrap(),
            "project code of {path:?}"
        );
    }
    let ids = &m["ids"];
    let list = |k: &str| -> Vec<String> {
        ids[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    for id in list("validPathIds") {
        assert!(
            sessionkit::testing::validate_path_id("id", &id).is_ok(),
            "{id:?}"
        );
    }
    for id in list("invalidPathIds") {
        assert!(
            sessionkit::testing::validate_path_id("id", &id).is_err(),
            "{id:?}"
        );
    }
    for id in list("validMessageIds") {
        assert!(
            sessionkit::testing::validate_message_id(&id).is_ok(),
            "{id:?}"
        );
    }
    for id in list("invalidMessageIds") {
        assert!(
            sessionkit::testing::validate_message_id(&id).is_err(),
            "{id:?}"
        );
    }
}

/// What a reader must make of a checkpointer's thread, as the manifest spells
/// it: each checkpoint (newest first per namespace) with its parent, step,
/// values (type, SHA-256, size) and pending writes (task, channel, idx, SHA-256).
fn checkpoints_read(store: &Store, thread: &str) -> Value {
    let sha = |b: &[u8]| -> String {
        Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    };
    let q = sessionkit::CheckpointQuery {
        thread_id: Some(thread.into()),
        ..Default::default()
    };
    let list = store.checkpoint_list(&q).unwrap();
    let cps: Vec<Value> = list
        .iter()
        .map(|t| {
            let values: serde_json::Map<String, Value> = t
                .values
                .iter()
                .map(|(c, v)| {
                    (
                        c.clone(),
                        json!({"type": v.kind, "sha256": sha(&v.bytes), "size": v.bytes.len()}),
                    )
                })
                .collect();
            let writes: Vec<Value> = t
                .writes
                .iter()
                .map(|w| json!([w.task_id, w.channel, w.idx, sha(&w.value.bytes)]))
                .collect();
            json!({"ns": t.ns, "id": t.id, "parentId": t.parent_id, "step": t.metadata.get("step"),
                   "values": values, "writes": writes})
        })
        .collect();
    json!({"threadId": list.first().map(|t| t.thread_id.clone()), "checkpoints": cps})
}

#[test]
fn checkpoint_store_replays_as_the_manifest_says() {
    let m = manifest();
    let mut failures = Vec::new();
    for g in m["checkpointStores"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let mut c = Check::new(name, g);
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        copy_tree(&fixtures_dir().join(g["home"].as_str().unwrap()), &home);
        let store = open_store(Path::new(g["projectRoot"].as_str().unwrap()), &home);
        for t in g["threads"].as_array().unwrap() {
            let thread = t["threadId"].as_str().unwrap();
            let got = checkpoints_read(&store, thread);
            if std::env::var_os("SK_PRINT_CHECKPOINTS").is_some() {
                println!("{}", serde_json::to_string_pretty(&got).unwrap());
            }
            c.eq(&format!("{thread}.read"), &got, &t["read"]);
        }
        c.finish(&mut failures, true);
    }
    fail_all(failures);
}

#[test]
fn checkpoint_store_regenerates_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    make_fixtures::generate_checkpoints(&home).unwrap();
    let fixture = fixtures_dir().join("checkpoints/home");
    assert!(
        tree(&home) == tree(&fixture),
        "tests/fixtures/checkpoints/home differs from what the library writes; if the \
         format changed on purpose, update docs/FORMAT.md §24, run `cargo run -p \
         sessionkit --example make_fixtures` and update tests/fixtures/manifest.json"
    );
}
