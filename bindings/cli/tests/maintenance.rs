//! `doctor`'s file-history checks and `gc` on stores with garbage, through the
//! binary.

mod common;
#[path = "../../../core/tests/support/tree_state.rs"]
mod support;

use common::{build, Env, MAIN};
use serde_json::{json, Value};
use sessionkit::{CreateOptions, Store};
use support::tree_state;

/// Run `doctor` with `args`, expect exit `code`, parse the JSON report.
fn doctor(env: &Env, args: &[&str], code: i32) -> Value {
    let out = env
        .cmd()
        .args(["--json", "doctor"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(code), "doctor {args:?}: {v:#}");
    assert_eq!(v["ok"], code == 0, "{v:#}");
    v
}

fn log_check<'v>(v: &'v Value, id: &str) -> &'v Value {
    v["logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no log check for {id}: {v:#}"))
}

#[test]
fn doctor_checks_the_file_history_of_a_healthy_store() {
    let env = Env::new();
    let (_, fork) = build(&env);
    let v = doctor(&env, &[], 0);
    let h = &v["fileHistory"];
    assert_eq!(h["state"], "ok", "{h:#}");
    assert_eq!(h["exists"], true);
    assert_eq!(h["branches"], 2);
    for list in ["orphanRefs", "brokenRefs", "danglingCheckpoints"] {
        assert_eq!(h[list], json!([]), "{list}: {h:#}");
    }
    for id in [MAIN, fork.as_str()] {
        let c = log_check(&v, id);
        assert_eq!(c["danglingCheckpoints"], json!([]));
        assert!(c.get("fileHistoryUnchecked").is_none(), "{c:#}");
    }
    let text = env.text(&["doctor"]);
    assert!(text.contains("files  ok (2 session branch(es))"), "{text}");
}

#[test]
fn doctor_reports_a_checkpoint_hash_whose_commit_is_missing_and_repair_keeps_the_log() {
    let env = Env::new();
    build(&env);
    let lost = "0123456789abcdef0123456789abcdef01234567";
    let store = env.store();
    let s = store.open_session(MAIN).unwrap();
    s.append(json!({"id": "u9", "role": "user", "content": "again", "checkpointHash": lost}))
        .unwrap();
    s.close().unwrap();
    let log = store.log_path(MAIN).unwrap();
    let log_before = std::fs::read(&log).unwrap();

    let v = doctor(&env, &[], 1);
    let h = &v["fileHistory"];
    assert_eq!(
        h["danglingCheckpoints"],
        json!([{"sessionId": MAIN, "messageId": "u9", "checkpointHash": lost, "reason": "missing"}]),
        "{h:#}"
    );
    assert_eq!(h["orphanRefs"], json!([]));
    assert_eq!(h["brokenRefs"], json!([]));
    assert_eq!(log_check(&v, MAIN)["danglingCheckpoints"], json!(["u9"]));

    let text = env.fails(&["doctor"], 1);
    assert!(text.is_empty(), "{text}");
    let out = env.cmd().arg("doctor").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "message \"u9\": its checkpointHash \"{lost}\" is missing from the file history"
        )),
        "{text}"
    );

    // Nothing to repair without rewriting the log: still a problem, log untouched.
    let v = doctor(&env, &["--repair"], 1);
    assert_eq!(
        v["fileHistory"]["danglingCheckpoints"][0]["reason"],
        "missing"
    );
    assert_eq!(
        std::fs::read(&log).unwrap(),
        log_before,
        "the log was rewritten"
    );
}

#[test]
fn doctor_reports_branches_whose_commits_are_gone() {
    let env = Env::new();
    let (_, fork) = build(&env);
    let store = env.store();
    // Lose every object of the repository.
    let objects = store.dir().join("file-history/.git/objects");
    std::fs::remove_dir_all(&objects).unwrap();
    std::fs::create_dir_all(objects.join("pack")).unwrap();
    let v = doctor(&env, &[], 1);
    let h = &v["fileHistory"];
    let broken: Vec<&str> = h["brokenRefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(b["target"], b["missingCommit"], "{b:#}");
            b["sessionId"].as_str().unwrap()
        })
        .collect();
    let mut want = vec![MAIN, fork.as_str()];
    want.sort();
    assert_eq!(broken, want, "{h:#}");
    assert!(h["danglingCheckpoints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["reason"] == "missing"));
    // The repair cannot bring commits back and deletes no branch of a live session.
    let v = doctor(&env, &["--repair"], 1);
    assert_eq!(v["fileHistory"]["brokenRefs"].as_array().unwrap().len(), 2);
}

#[test]
fn doctor_repair_deletes_the_branch_of_a_session_whose_log_is_gone() {
    let env = Env::new();
    let (_, fork) = build(&env);
    let store = env.store();
    let git_dir = store.dir().join("file-history/.git");
    let branch = git_dir.join("refs/heads").join(MAIN);
    assert!(branch.exists());
    // The log removed by hand, not through `delete`.
    std::fs::remove_file(store.log_path(MAIN).unwrap()).unwrap();

    let v = doctor(&env, &[], 1);
    let h = &v["fileHistory"];
    assert_eq!(h["orphanRefs"].as_array().unwrap().len(), 1, "{h:#}");
    assert_eq!(h["orphanRefs"][0]["sessionId"], MAIN);
    assert_eq!(h["orphanRefs"][0]["ref"], format!("refs/heads/{MAIN}"));
    assert!(
        branch.exists(),
        "doctor without --repair deleted the branch"
    );

    let v = doctor(&env, &["--repair"], 0);
    assert_eq!(v["fileHistory"]["orphanRefs"], json!([]));
    assert_eq!(v["fileHistory"]["branches"], 1);
    let repaired: Vec<&str> = v["repaired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        repaired.iter().any(|r| r.contains(&format!(
            "deleted the file-history ref refs/heads/{MAIN} of the deleted session {MAIN}"
        ))),
        "{repaired:?}"
    );
    assert!(!branch.exists());
    // The fork's history is whole: it still lists its candidates.
    let u = env.json(&["undo", &fork]);
    assert!(u["candidates"].is_array());
}

#[test]
fn doctor_writes_nothing_and_checks_a_session_held_by_a_writer() {
    let env = Env::new();
    let (_, fork) = build(&env);
    let store = env.store();
    let held = store.open_session(MAIN).unwrap();
    let before = tree_state(store.dir());
    let v = doctor(&env, &[], 0);
    assert_eq!(tree_state(store.dir()), before, "doctor wrote to the store");
    let c = log_check(&v, MAIN);
    assert!(c.get("fileHistoryUnchecked").is_none(), "{c:#}");
    assert_eq!(v["fileHistory"]["branches"], 2);
    assert_eq!(log_check(&v, &fork)["danglingCheckpoints"], json!([]));
    held.close().unwrap();
}

#[test]
fn gc_frees_unreachable_objects_and_sessions_still_load_and_undo() {
    let env = Env::new();
    let (_, fork) = build(&env);
    // A session with a large edit of its own, then deleted: its snapshots are
    // reachable from no branch.
    let store = env.store();
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    let s = store
        .create_session(CreateOptions {
            title: None,
            id: Some("doomed".into()),
        })
        .unwrap();
    s.user_input(json!({"content": "write big.txt"})).unwrap();
    s.before_edit(&["big.txt"]).unwrap();
    std::fs::write(env.root().join("big.txt"), &big).unwrap();
    s.after_edit(&["big.txt"]).unwrap();
    s.close().unwrap();
    std::fs::remove_file(env.root().join("big.txt")).unwrap();
    env.json(&["delete", "doomed"]);

    // Not a terminal: no progress bar, nothing on stderr.
    let out = env.cmd().args(["--json", "gc"]).output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["bytesFreed"].as_u64().unwrap() > 0, "{v:#}");
    assert!(v["objectsAfter"].as_u64().unwrap() < v["objectsBefore"].as_u64().unwrap());
    assert_eq!(v["branches"], 2);
    // The shape is unchanged by the progress reporting.
    let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "blobs",
            "branches",
            "bytesAfter",
            "bytesBefore",
            "bytesFreed",
            "objectsAfter",
            "objectsBefore",
            "tempFiles",
            "trashPurged"
        ]
    );

    // Every session loads; the store is healthy; undo still restores files.
    for id in [MAIN, fork.as_str()] {
        env.json(&["show", id]);
        assert!(Store::read_session(&store, id).is_ok());
    }
    doctor(&env, &[], 0);
    let u = env.json(&["undo", MAIN]);
    assert!(
        u["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["restorable"] == true),
        "{u:#}"
    );
    let v = env.json(&["rewind", MAIN, "--to", "u2", "--files"]);
    assert_eq!(v["result"]["deleted"], json!(["b.txt"]), "{v:#}");
    assert!(!env.root().join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(env.root().join("a.txt")).unwrap(),
        "one\nthree\n"
    );
    // A second gc has nothing more to free.
    let v = env.json(&["gc"]);
    assert!(v["bytesFreed"].as_u64().unwrap() < 4096, "{v:#}");
}

#[test]
fn gc_removes_blobs_of_deleted_sessions_once_they_are_old() {
    let env = Env::new();
    let store = env.store();
    let huge: String = "a large tool result\n".repeat(20_000); // over the 256 KiB threshold
    for (id, text) in [
        ("kept", format!("kept {huge}")),
        ("gone", format!("gone {huge}")),
    ] {
        let s = store
            .create_session(CreateOptions {
                title: None,
                id: Some(id.into()),
            })
            .unwrap();
        s.append(json!({"role": "tool", "content": text})).unwrap();
        s.close().unwrap();
    }
    env.json(&["delete", "gone"]);
    let blobs_dir = store.index_path().parent().unwrap().join("blobs");
    let files = || -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(&blobs_dir)
            .unwrap()
            .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
            .map(|f| f.unwrap().path())
            .collect();
        v.sort();
        v
    };
    assert_eq!(files().len(), 2);

    // Young blobs are kept even when no log names them.
    let v = env.json(&["gc"]);
    assert_eq!(v["blobs"]["blobsRemoved"], 0, "{v:#}");
    assert_eq!(v["blobs"]["keptYoung"], 1, "{v:#}");

    let old = std::time::SystemTime::now() - sessionkit::BLOB_GC_GRACE * 2;
    for f in files() {
        std::fs::File::open(&f).unwrap().set_modified(old).unwrap();
    }
    // A crash's leftover temp file of an index replace goes too.
    let leftover = store.index_path().with_file_name(".tmp-crashed");
    std::fs::write(&leftover, b"{}").unwrap();
    std::fs::File::open(&leftover)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let v = env.json(&["gc"]);
    assert_eq!(v["tempFiles"]["removed"], 1, "{v:#}");
    assert!(!leftover.exists());
    assert_eq!(v["blobs"]["blobsBefore"], 2, "{v:#}");
    assert_eq!(v["blobs"]["blobsRemoved"], 1, "{v:#}");
    assert!(
        v["blobs"]["bytesFreed"].as_u64().unwrap() > 256 << 10,
        "{v:#}"
    );
    assert_eq!(files().len(), 1);
    let view = store.read_session("kept").unwrap().active_path().unwrap();
    assert_eq!(view[0].value()["content"], format!("kept {huge}"));
    doctor(&env, &[], 0);
}

#[test]
fn doctor_reports_a_damaged_index_journal_and_repair_rebuilds_it() {
    let env = Env::new();
    build(&env);
    let store = env.store();
    let v = doctor(&env, &[], 0);
    let generation = v["index"]["journal"]["generation"]
        .as_u64()
        .unwrap_or_else(|| panic!("no journal in the report: {v:#}"));
    // A line that is not one, and a torn last line: what a crash can leave.
    let journal = store
        .dir()
        .join(format!(".sessions-index.{generation}.journal"));
    let mut bytes = std::fs::read(&journal).unwrap_or_default();
    bytes.extend_from_slice(b"\0\0\0\n{\"entry\":{\"id\":");
    std::fs::write(&journal, bytes).unwrap();

    let v = doctor(&env, &[], 1);
    let j = &v["index"]["journal"];
    assert_eq!(j["skipped"].as_array().unwrap().len(), 1, "{j:#}");
    assert!(j["tornTail"].is_object(), "{j:#}");
    let out = env.cmd().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("journal damaged: 1 unreadable line(s), a torn last line"),
        "{text}"
    );

    let v = doctor(&env, &["--repair"], 0);
    assert!(
        v["repaired"].to_string().contains("rebuilt the index"),
        "{v:#}"
    );
    let j = &v["index"]["journal"];
    assert_eq!(j["skipped"], json!([]), "{j:#}");
    assert!(j["generation"].as_u64().unwrap() > generation, "{j:#}");
    assert!(!journal.exists(), "the damaged journal was left");
}
