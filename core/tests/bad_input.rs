//! Bad input is refused with the right error kind and a message that names what was
//! wrong, and a refused call leaves the store exactly as it was: every file under the
//! store's home (logs, index, blobs, sidecars) is byte-identical before and after.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sessionkit::{CreateOptions, ErrorKind, Result, Session, Store, StoreOptions};
use tempfile::TempDir;

/// Every file under `dir` with its bytes (the project lock file is empty and only
/// ever created, so it is left out).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for d in rd {
            let p = d.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().is_some_and(|n| n != ".lock") {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

fn assert_unchanged(before: &BTreeMap<PathBuf, Vec<u8>>, dir: &Path, what: &str) {
    let after = snapshot(dir);
    let added: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<_> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<_> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        added.is_empty() && removed.is_empty() && changed.is_empty(),
        "{what}: the store changed: added {added:?}, removed {removed:?}, changed {changed:?}"
    );
}

/// Assert `r` failed with `kind` and that its message contains every needle.
#[track_caller]
fn expect_err<T: Debug>(r: Result<T>, kind: ErrorKind, needles: &[&str], what: &str) {
    let e = match r {
        Ok(v) => panic!("{what}: expected {kind:?}, got Ok({v:?})"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), kind, "{what}: wrong kind for error {e}");
    let msg = e.to_string();
    for n in needles {
        assert!(
            msg.contains(n),
            "{what}: error message {msg:?} does not mention {n:?}"
        );
    }
}

struct Fixture {
    home: TempDir,
    _project: TempDir,
    store: Store,
}

fn fixture(tweak: impl FnOnce(&mut StoreOptions)) -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut options = StoreOptions {
        home: Some(home.path().to_path_buf()),
        max_sessions: 0,
        ..StoreOptions::default()
    };
    tweak(&mut options);
    let store = Store::open(project.path(), options).unwrap();
    Fixture {
        home,
        _project: project,
        store,
    }
}

/// A session with two messages and a flushed index entry.
fn session_with_messages(store: &Store) -> (Session, Vec<String>) {
    let s = store.create_session(CreateOptions::default()).unwrap();
    let a = s
        .append(json!({"role": "user", "content": "hello"}))
        .unwrap();
    let b = s
        .append(json!({"role": "assistant", "content": "hi there"}))
        .unwrap();
    s.flush_index().unwrap();
    (s, vec![a.id().to_string(), b.id().to_string()])
}

#[test]
fn malformed_messages_are_refused_and_change_nothing() {
    let f = fixture(|_| {});
    let (s, ids) = session_with_messages(&f.store);
    let sid = s.id().to_string();
    let other = "0192f0c1-7b2a-7def-8000-00000000beef";
    let cases: Vec<(Value, ErrorKind, Vec<&str>, &str)> = vec![
        (
            json!([1, 2]),
            ErrorKind::InvalidInput,
            vec!["must be a JSON object", "an array"],
            "array",
        ),
        (
            json!("hi"),
            ErrorKind::InvalidInput,
            vec!["must be a JSON object", "a string"],
            "string",
        ),
        (
            json!(null),
            ErrorKind::InvalidInput,
            vec!["must be a JSON object", "null"],
            "null",
        ),
        (
            json!(42),
            ErrorKind::InvalidInput,
            vec!["must be a JSON object", "a number"],
            "number",
        ),
        (
            json!({"content": "no role"}),
            ErrorKind::InvalidInput,
            vec!["\"role\""],
            "role missing",
        ),
        (
            json!({"role": "robot"}),
            ErrorKind::InvalidInput,
            vec!["\"role\"", "robot"],
            "role unknown",
        ),
        (
            json!({"role": 7}),
            ErrorKind::InvalidInput,
            vec!["\"role\"", "7"],
            "role a number",
        ),
        (
            json!({"role": "user", "visible": "yes"}),
            ErrorKind::InvalidInput,
            vec!["\"visible\"", "boolean", "a string"],
            "visible a string",
        ),
        (
            json!({"role": "user", "compacted": 1}),
            ErrorKind::InvalidInput,
            vec!["\"compacted\"", "boolean"],
            "compacted a number",
        ),
        (
            json!({"role": "user", "meta": [1]}),
            ErrorKind::InvalidInput,
            vec!["\"meta\"", "object", "an array"],
            "meta an array",
        ),
        (
            json!({"role": "user", "meta": "x"}),
            ErrorKind::InvalidInput,
            vec!["\"meta\"", "object"],
            "meta a string",
        ),
        (
            json!({"role": "assistant", "messageParams": 3}),
            ErrorKind::InvalidInput,
            vec!["\"messageParams\"", "object"],
            "messageParams a number",
        ),
        (
            json!({"role": "user", "checkpointHash": 3}),
            ErrorKind::InvalidInput,
            vec!["\"checkpointHash\""],
            "checkpointHash a number",
        ),
        (
            json!({"role": "user", "timestamp": "yesterday"}),
            ErrorKind::InvalidInput,
            vec!["\"timestamp\"", "yesterday", "RFC 3339"],
            "timestamp not RFC 3339",
        ),
        (
            json!({"role": "user", "timestamp": "2026-13-45T99:00:00Z"}),
            ErrorKind::InvalidInput,
            vec!["\"timestamp\"", "2026-13-45T99:00:00Z"],
            "timestamp out of range",
        ),
        (
            json!({"role": "user", "timestamp": 1700000000}),
            ErrorKind::InvalidInput,
            vec!["\"timestamp\"", "a number"],
            "timestamp a number",
        ),
        (
            json!({"role": "user", "parentId": "no-such-message"}),
            ErrorKind::NotFound,
            vec!["parentId", "no-such-message"],
            "parentId unknown",
        ),
        (
            json!({"role": "user", "parentId": 5}),
            ErrorKind::InvalidInput,
            vec!["\"parentId\"", "a number"],
            "parentId a number",
        ),
        (
            json!({"role": "user", "id": ids[0]}),
            ErrorKind::Conflict,
            vec![ids[0].as_str(), "already exists"],
            "id duplicate",
        ),
        (
            json!({"role": "user", "id": 12}),
            ErrorKind::InvalidInput,
            vec!["\"id\"", "a number"],
            "id a number",
        ),
        (
            json!({"role": "user", "id": ""}),
            ErrorKind::InvalidInput,
            vec!["message id"],
            "id empty",
        ),
        (
            json!({"role": "user", "id": "a\nb"}),
            ErrorKind::InvalidInput,
            vec!["message id", "control"],
            "id with a newline",
        ),
        (
            json!({"role": "user", "sessionId": other}),
            ErrorKind::InvalidInput,
            vec!["\"sessionId\"", other, sid.as_str()],
            "sessionId of another session",
        ),
        (
            json!({"role": "user", "type": "state"}),
            ErrorKind::InvalidInput,
            vec!["\"type\"", "state"],
            "type not message",
        ),
        (
            json!({"role": "user", "contentBlob": {"sha256": "00", "bytes": 1}}),
            ErrorKind::InvalidInput,
            vec!["\"contentBlob\"", "reserved"],
            "contentBlob given by the host",
        ),
    ];
    for (msg, kind, needles, what) in cases {
        let before = snapshot(f.home.path());
        expect_err(s.append(msg.clone()), kind, &needles, what);
        assert_unchanged(&before, f.home.path(), what);
        // The same message inside a batch is refused by position, all or nothing.
        let batch = vec![
            json!({"role": "user", "content": "fine 1"}),
            json!({"role": "assistant", "content": "fine 2"}),
            msg,
        ];
        let mut with_pos = needles.clone();
        with_pos.push("batch message 2");
        expect_err(
            s.append_batch(batch),
            kind,
            &with_pos,
            &format!("{what} in a batch"),
        );
        assert_unchanged(&before, f.home.path(), &format!("{what} in a batch"));
    }
    let before = snapshot(f.home.path());
    expect_err(
        s.append_batch(Vec::new()),
        ErrorKind::InvalidInput,
        &["at least one message"],
        "empty batch",
    );
    assert_unchanged(&before, f.home.path(), "empty batch");

    // Nothing refused moved the writer: the next message hangs off the old head and
    // the log holds exactly the three good messages.
    let c = s
        .append(json!({"role": "user", "content": "after"}))
        .unwrap();
    assert_eq!(c.parent_id(), Some(ids[1].as_str()));
    let view = f.store.read_session(&sid).unwrap();
    let path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(
        path,
        vec![ids[0].clone(), ids[1].clone(), c.id().to_string()]
    );
    assert!(view.report().is_clean(), "{:?}", view.report());
}

#[test]
fn duplicate_id_inside_one_batch_is_refused_whole() {
    let f = fixture(|_| {});
    let (s, ids) = session_with_messages(&f.store);
    let before = snapshot(f.home.path());
    expect_err(
        s.append_batch(vec![
            json!({"role": "user", "id": "dup", "content": "1"}),
            json!({"role": "assistant", "id": "dup", "content": "2"}),
        ]),
        ErrorKind::Conflict,
        &["batch message 1", "\"dup\"", "already exists"],
        "duplicate id within a batch",
    );
    assert_unchanged(&before, f.home.path(), "duplicate id within a batch");
    // A later message of a batch may name an earlier one as its parent.
    let out = s
        .append_batch(vec![
            json!({"role": "user", "id": "q", "content": "1"}),
            json!({"role": "assistant", "id": "r", "parentId": "q", "content": "2"}),
        ])
        .unwrap();
    assert_eq!(out[0].parent_id(), Some(ids[1].as_str()));
    assert_eq!(out[1].parent_id(), Some("q"));
}

#[test]
fn a_record_over_the_limit_is_refused_alone_and_in_a_batch() {
    // Content above 512 bytes goes to a blob, so only the other fields count
    // against the 1024-byte record limit.
    let f = fixture(|o| {
        o.max_record_bytes = 1024;
        o.blob_threshold = 512;
    });
    let (s, ids) = session_with_messages(&f.store);
    let big_meta = json!({"role": "tool", "content": "ok", "meta": {"note": "m".repeat(2000)}});
    let before = snapshot(f.home.path());
    expect_err(
        s.append(big_meta.clone()),
        ErrorKind::InvalidInput,
        &["over the limit of 1024 bytes"],
        "big meta",
    );
    assert_unchanged(&before, f.home.path(), "big meta");

    let big_extra = json!({"role": "tool", "content": "ok", "x-trace": "t".repeat(1500)});
    expect_err(
        s.append(big_extra),
        ErrorKind::InvalidInput,
        &["over the limit of 1024 bytes"],
        "big unknown field",
    );
    assert_unchanged(&before, f.home.path(), "big unknown field");

    // Last in a batch whose first message has a large content (a blob): nothing of
    // the batch may stay behind, not even that blob.
    let batch = vec![
        json!({"role": "user", "content": "c".repeat(5000)}),
        json!({"role": "assistant", "content": "fine"}),
        big_meta,
    ];
    expect_err(
        s.append_batch(batch),
        ErrorKind::InvalidInput,
        &["batch message 2", "over the limit of 1024 bytes"],
        "big meta in a batch",
    );
    // Known leak (reported, not fixed here): the first message's blob is written
    // before the third message is measured, so an unreferenced blob stays behind
    // until a gc. The log and the index must not change.
    let blobs = f.store.blobs().dir().to_path_buf();
    let without_blobs = |m: BTreeMap<PathBuf, Vec<u8>>| -> BTreeMap<PathBuf, Vec<u8>> {
        m.into_iter()
            .filter(|(k, _)| !k.starts_with(&blobs))
            .collect()
    };
    assert_eq!(
        without_blobs(snapshot(f.home.path())),
        without_blobs(before.clone()),
        "big meta in a batch: the log or index changed"
    );

    // A large content alone is fine: it goes to a blob.
    let m = s
        .append(json!({"role": "user", "content": "c".repeat(5000)}))
        .unwrap();
    assert_eq!(m.parent_id(), Some(ids[1].as_str()));
    let view = f.store.read_session(s.id()).unwrap();
    let last = view.active_path().unwrap().pop().unwrap();
    assert_eq!(last.value()["content"], json!("c".repeat(5000)));
}

const VALID_MISSING: &str = "0192f0c1-7b2a-7def-8000-000000000404";

#[test]
fn unknown_session_ids_are_not_found() {
    let f = fixture(|_| {});
    let (s, _) = session_with_messages(&f.store);
    drop(s);
    let before = snapshot(f.home.path());
    let st = &f.store;
    let id = VALID_MISSING;
    expect_err(st.open_session(id), ErrorKind::NotFound, &[id], "open");
    expect_err(st.read_session(id), ErrorKind::NotFound, &[id], "read");
    expect_err(st.delete_session(id), ErrorKind::NotFound, &[id], "delete");
    expect_err(
        st.rename_session(id, "new title"),
        ErrorKind::NotFound,
        &[id],
        "rename",
    );
    expect_err(st.session_entry(id), ErrorKind::NotFound, &[id], "entry");
    expect_err(
        st.read_subagent(id, "agent-1"),
        ErrorKind::NotFound,
        &[id, "agent-1"],
        "read subagent of a missing session",
    );
    assert_unchanged(&before, f.home.path(), "unknown session id");
    assert_eq!(st.list_sessions().unwrap().len(), 1);
}

const BAD_IDS: [&str; 9] = [
    "../x",
    "..",
    "a/b",
    "/etc/passwd",
    "a\\b",
    "",
    ".hidden",
    "a\0b",
    "x\ny",
];

#[test]
fn path_traversal_ids_are_invalid_everywhere() {
    let f = fixture(|_| {});
    let (s, _) = session_with_messages(&f.store);
    let agent = s.spawn_subagent(Some("agent-1"), json!({})).unwrap();
    drop(agent);
    let sid = s.id().to_string();
    let st = &f.store;
    let before = snapshot(f.home.path());
    for bad in BAD_IDS {
        let shown = format!("{bad:?}");
        let n = |what: &'static str| [what, shown.as_str(), "not a valid id"];
        let inv = ErrorKind::InvalidInput;
        expect_err(st.open_session(bad), inv, &n("session id"), "open");
        expect_err(st.read_session(bad), inv, &n("session id"), "read");
        expect_err(st.delete_session(bad), inv, &n("session id"), "delete");
        expect_err(st.rename_session(bad, "t"), inv, &n("session id"), "rename");
        expect_err(st.session_entry(bad), inv, &n("session id"), "entry");
        expect_err(st.log_path(bad), inv, &n("session id"), "log path");
        expect_err(st.list_subagents(bad), inv, &n("session id"), "subagents");
        let opts = CreateOptions {
            title: None,
            id: Some(bad.to_string()),
        };
        expect_err(st.create_session(opts), inv, &n("session id"), "create");
        let from_json = CreateOptions::from_json(&json!({ "id": bad }).to_string()).unwrap();
        expect_err(
            st.create_session(from_json),
            inv,
            &n("session id"),
            "create from JSON",
        );
        expect_err(
            st.read_subagent(bad, "agent-1"),
            inv,
            &n("session id"),
            "read subagent (session)",
        );
        expect_err(
            st.read_subagent(&sid, bad),
            inv,
            &n("agent id"),
            "read subagent (agent)",
        );
        expect_err(
            s.spawn_subagent(Some(bad), json!({})),
            inv,
            &n("agent id"),
            "spawn subagent",
        );
        expect_err(s.open_subagent(bad), inv, &n("agent id"), "open subagent");
        assert_unchanged(&before, f.home.path(), &format!("id {bad:?}"));
    }
    // Nothing was created beside the store either.
    let projects = f.home.path().join("projects");
    let entries: Vec<_> = std::fs::read_dir(&projects).unwrap().collect();
    assert_eq!(entries.len(), 1, "only the project directory exists");
    assert!(!f.home.path().join("x").exists());
}

#[test]
fn invalid_store_options_are_refused() {
    let cases: [(&str, &[&str]); 12] = [
        ("{", &["store options"]),
        ("[1]", &["store options"]),
        // serde reads a struct from an array by position: an empty one would be
        // taken as the defaults.
        (
            "[]",
            &["store options", "expected a JSON object, got an array"],
        ),
        (
            "null",
            &["store options", "expected a JSON object, got null"],
        ),
        ("42", &["store options"]),
        (r#"{"bogus": 1}"#, &["store options", "bogus"]),
        (
            r#"{"durability": "sometimes"}"#,
            &["store options", "sometimes"],
        ),
        (r#"{"maxSessions": -1}"#, &["store options", "-1"]),
        (r#"{"maxSessions": "5"}"#, &["store options", "\"5\""]),
        (r#"{"home": 5}"#, &["store options"]),
        (r#"{"blobThreshold": 1.5}"#, &["store options", "1.5"]),
        (
            r#"{"deterministic": {"startMs": 1, "stepMS": 2}}"#,
            &["store options", "stepMS"],
        ),
    ];
    for (text, needles) in cases {
        expect_err(
            StoreOptions::from_json(text),
            ErrorKind::InvalidInput,
            needles,
            text,
        );
    }
    // Well-formed but out of range: refused when the store is opened, before
    // anything is created on disk.
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let home_json = serde_json::to_string(home.path()).unwrap();
    for (field, value) in [
        ("blobThreshold", "0"),
        ("maxRecordBytes", "10"),
        ("deterministic", r#"{"startMs": 18446744073709551615}"#),
    ] {
        let text = format!(r#"{{"home": {home_json}, "{field}": {value}}}"#);
        let opts = StoreOptions::from_json(&text).unwrap();
        expect_err(
            Store::open(project.path(), opts),
            ErrorKind::InvalidInput,
            &[field],
            &text,
        );
        assert!(
            snapshot(home.path()).is_empty() && !home.path().join("projects").exists(),
            "{text}: opening with bad options created files"
        );
    }
    // An empty home would mean the current directory (often the project).
    expect_err(
        Store::open(
            project.path(),
            StoreOptions::from_json(r#"{"home": ""}"#).unwrap(),
        ),
        ErrorKind::InvalidInput,
        &["home is empty"],
        "empty home",
    );
    assert!(
        !Path::new("projects").exists(),
        "an empty home created ./projects"
    );
    expect_err(
        CreateOptions::from_json(r#"{"titel": "x"}"#),
        ErrorKind::InvalidInput,
        &["create options", "titel"],
        "create options typo",
    );
    for (text, what) in [("[]", "create options"), ("[]", "model view options")] {
        let r = if what == "create options" {
            CreateOptions::from_json(text).map(|_| ())
        } else {
            sessionkit::ModelViewOptions::from_json(text).map(|_| ())
        };
        expect_err(r, ErrorKind::InvalidInput, &[what, "a JSON object"], what);
    }
}

/// Numbers a host stored (`meta.tokens`) and numbers it passes (`summaryTokens`,
/// budgets) at the top of their range: views and compaction saturate instead of
/// overflowing (a panic in a debug build, a wrapped sum in a release one), and
/// the session stays readable afterwards.
#[test]
fn stored_numbers_at_the_limit_neither_panic_nor_wrap() {
    let f = fixture(|_| {});
    let s = f.store.create_session(CreateOptions::default()).unwrap();
    for (i, tokens) in [u64::MAX, u64::MAX, 3].into_iter().enumerate() {
        s.append(
            json!({"role": "user", "content": format!("turn {i}"), "meta": {"tokens": tokens}}),
        )
        .unwrap();
        s.append(json!({"role": "assistant", "content": "ok", "meta": {"tokens": 1}}))
            .unwrap();
    }
    for budget in [0, 10, u64::MAX - 1, u64::MAX] {
        let opts = sessionkit::ModelViewOptions {
            last_n: None,
            token_budget: Some(budget),
        };
        let view = s.model_view(&opts).unwrap();
        assert!(view.len() <= 6, "budget {budget}: {} messages", view.len());
        if budget == 10 {
            // The trailing messages that fit (1 + 3 + 1); the next (u64::MAX) does not.
            let texts: Vec<Value> = view.iter().map(|m| m.value()["content"].clone()).collect();
            assert_eq!(texts, [json!("ok"), json!("turn 2"), json!("ok")]);
        }
    }
    for summary_tokens in [0, u64::MAX] {
        let plan = s
            .select_compaction(&sessionkit::CompactionPolicy {
                token_budget: 5,
                keep_last_turns: 1,
                summary_tokens,
            })
            .unwrap()
            .expect("the first turns can go");
        assert_eq!(plan.tokens_before, u64::MAX, "the sum saturates");
        assert!(plan.tokens_after <= plan.tokens_before);
    }
    // Still readable, from the log and from the store.
    assert_eq!(s.model_view(&Default::default()).unwrap().len(), 6);
    assert_eq!(
        f.store
            .model_view(s.id(), &Default::default())
            .unwrap()
            .len(),
        6
    );
}

#[test]
fn invalid_state_updates_are_refused_and_change_nothing() {
    let f = fixture(|_| {});
    let (s, _) = session_with_messages(&f.store);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"bogus": 1}), vec!["unknown field", "\"bogus\""]),
        (
            json!({"status": "sleeping"}),
            vec!["\"status\"", "sleeping"],
        ),
        (json!({"status": 3}), vec!["\"status\""]),
        (
            json!({"status": "completed", "bogus": 1}),
            vec!["\"bogus\""],
        ),
        (json!({"activeTokens": -1}), vec!["\"activeTokens\"", "-1"]),
        (json!({"activeTokens": "12"}), vec!["\"activeTokens\""]),
        (json!({"title": "  "}), vec!["\"title\""]),
        (json!({"childProcesses": {}}), vec!["\"childProcesses\""]),
        (json!({"thinking": 1}), vec!["\"thinking\""]),
        (json!({}), vec!["empty"]),
        (json!([1]), vec!["must be a JSON object"]),
        (json!("processing"), vec!["must be a JSON object"]),
    ];
    for (set, needles) in cases {
        let what = format!("state update {set}");
        let before = snapshot(f.home.path());
        let entry_before = s.entry();
        expect_err(
            s.update_state(set),
            ErrorKind::InvalidInput,
            &needles,
            &what,
        );
        assert_unchanged(&before, f.home.path(), &what);
        assert_eq!(
            s.entry(),
            entry_before,
            "{what}: the writer's entry changed"
        );
    }
    let before = snapshot(f.home.path());
    expect_err(
        s.rename("   "),
        ErrorKind::InvalidInput,
        &["\"title\""],
        "blank rename",
    );
    expect_err(
        f.store.create_session(CreateOptions {
            title: Some(" ".into()),
            id: None,
        }),
        ErrorKind::InvalidInput,
        &["title"],
        "blank title at create",
    );
    assert_unchanged(&before, f.home.path(), "blank titles");
}

#[test]
fn invalid_patches_and_subagent_metadata_are_refused() {
    let f = fixture(|_| {});
    let (s, ids) = session_with_messages(&f.store);
    let before = snapshot(f.home.path());
    expect_err(
        s.patch_message("nope", json!({"meta": {}})),
        ErrorKind::NotFound,
        &["\"nope\"", s.id()],
        "patch of an unknown message",
    );
    expect_err(
        s.patch_message(&ids[0], json!([1])),
        ErrorKind::InvalidInput,
        &["JSON object"],
        "patch not an object",
    );
    for field in ["id", "parentId", "sessionId", "role", "type", "contentBlob"] {
        expect_err(
            s.patch_message(&ids[0], json!({ field: "x" })),
            ErrorKind::InvalidInput,
            &[&format!("{field:?}")],
            &format!("patch of {field}"),
        );
    }
    expect_err(
        s.set_head(Some("nope")),
        ErrorKind::NotFound,
        &["\"nope\""],
        "head to an unknown message",
    );
    expect_err(
        s.spawn_subagent(Some("agent-2"), json!([1])),
        ErrorKind::InvalidInput,
        &["subagent metadata", "object"],
        "subagent metadata not an object",
    );
    assert_unchanged(&before, f.home.path(), "patches and subagents");
}

/// `levels` arrays around a number.
fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

#[test]
fn values_nested_deeper_than_a_line_may_hold_are_refused() {
    let f = fixture(|_| {});
    let (s, ids) = session_with_messages(&f.store);
    let sid = s.id().to_string();
    let a = s.spawn_subagent(Some("helper"), json!({})).unwrap();
    let before = snapshot(f.home.path());
    // Each at one level more than its record holds; the message object, the
    // patch object and the state object count as one level.
    let msg = |levels: usize| json!({"role": "user", "content": nested(levels - 1)});
    let patch = |levels: usize| json!({"meta": nested(levels - 1)});
    let state = |levels: usize| json!({"lastToolCall": nested(levels - 1)});
    expect_err(
        s.append(msg(101)),
        ErrorKind::InvalidInput,
        &["message", "100 levels"],
        "message",
    );
    expect_err(
        s.append_batch(vec![msg(2), msg(101)]),
        ErrorKind::InvalidInput,
        &["batch message 1", "100 levels"],
        "batch",
    );
    expect_err(
        s.patch_message(&ids[0], patch(100)),
        ErrorKind::InvalidInput,
        &["\"patch\" of a patch record", "99 levels"],
        "patch",
    );
    expect_err(
        s.update_state(state(100)),
        ErrorKind::InvalidInput,
        &["\"set\" of a state record"],
        "state",
    );
    expect_err(
        s.spawn_subagent(Some("deep"), json!({"x": nested(99)})),
        ErrorKind::InvalidInput,
        &["subagent metadata"],
        "subagent metadata",
    );
    expect_err(
        a.append(msg(101)),
        ErrorKind::InvalidInput,
        &["message"],
        "subagent message",
    );
    expect_err(
        a.finish(nested(100), false),
        ErrorKind::InvalidInput,
        &["subagent result"],
        "subagent result",
    );
    assert_eq!(
        snapshot(f.home.path()),
        before,
        "a refused value changed files"
    );

    // One level less is stored and read back whole, by every reader.
    let m = s.append(msg(100)).unwrap();
    s.patch_message(m.id(), patch(99)).unwrap();
    s.update_state(state(99)).unwrap();
    let b = s
        .spawn_subagent(Some("deep"), json!({"x": nested(98)}))
        .unwrap();
    b.append(msg(100)).unwrap();
    b.finish(nested(99), false).unwrap();
    drop(b);
    drop(a);
    s.close().unwrap();
    let view = f.store.read_session(&sid).unwrap();
    assert!(view.report().skipped.is_empty(), "{:?}", view.report());
    assert_eq!(view.message(m.id()).unwrap().value()["meta"], nested(98));
    assert_eq!(view.active_path().unwrap().len(), 3);
    let side = f.store.read_subagent(&sid, "deep").unwrap();
    assert!(side.report().skipped.is_empty(), "{:?}", side.report());
    assert_eq!(side.message_count(), 1);
    assert_eq!(f.store.list_subagents(&sid).unwrap().len(), 2);
    let entry = f.store.session_entry(&sid).unwrap();
    assert_eq!(entry.message_count, 3);
    // The index that holds the state's value is read back too.
    let reopened = f.store.open_session(&sid).unwrap();
    assert!(reopened.open_report().skipped.is_empty());
}

/// Every record, not only messages, is held to `maxRecordBytes`: a rename's
/// title, a state update, a subagent's metadata and its result.
#[test]
fn every_record_kind_over_the_limit_is_refused() {
    let f = fixture(|o| {
        o.max_record_bytes = 1024;
        o.blob_threshold = 512;
    });
    let (s, _) = session_with_messages(&f.store);
    let big = "x".repeat(4096);
    let before = snapshot(f.home.path());
    expect_err(
        s.update_state(json!({"title": big})),
        ErrorKind::InvalidInput,
        &["1024"],
        "big title in a state update",
    );
    expect_err(
        s.spawn_subagent(Some("big"), json!({"task": big})),
        ErrorKind::InvalidInput,
        &["1024"],
        "big subagent metadata",
    );
    expect_err(
        f.store.create_session(CreateOptions {
            title: Some(big.clone()),
            id: None,
        }),
        ErrorKind::InvalidInput,
        &["1024"],
        "big title at create",
    );
    assert_unchanged(&before, f.home.path(), "records over the limit");
    let sub = s.spawn_subagent(Some("small"), json!({})).unwrap();
    let before = snapshot(f.home.path());
    expect_err(
        sub.finish(json!(big), false),
        ErrorKind::InvalidInput,
        &["1024"],
        "big subagent result",
    );
    assert_unchanged(&before, f.home.path(), "big subagent result");
    drop(sub);
    s.close().unwrap();
    let before = snapshot(f.home.path());
    let id = f.store.list_sessions().unwrap()[0].id.clone();
    expect_err(
        f.store.rename_session(&id, &big),
        ErrorKind::InvalidInput,
        &["1024"],
        "big title in a rename",
    );
    assert_unchanged(&before, f.home.path(), "big title in a rename");
}

#[test]
fn subagents_of_a_missing_session_are_not_found() {
    let f = fixture(|_| {});
    expect_err(
        f.store.list_subagents(VALID_MISSING),
        ErrorKind::NotFound,
        &[VALID_MISSING],
        "list_subagents",
    );
}
