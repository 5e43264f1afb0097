//! `sessionkit trash` and `sessionkit restore`: pruned sessions are listed and
//! come back; `gc` purges them after the grace period and says which.

mod common;

use common::Env;
use serde_json::json;
use sessionkit::{CreateOptions, ErrorKind, Store, StoreOptions};

fn exit(kind: ErrorKind) -> i32 {
    kind.code() + 2
}

/// A store that keeps one session: creating the second trashes the first.
fn pruned_store(env: &Env) -> (Store, String, String) {
    let store = Store::open(
        env.root(),
        // The system clock: `gc` compares trashedAt with it.
        StoreOptions {
            home: Some(env.home.path().to_path_buf()),
            max_sessions: 1,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let old = store
        .create_session(CreateOptions {
            title: Some("the old one".into()),
            ..CreateOptions::default()
        })
        .unwrap();
    old.append(json!({"role": "user", "content": "keep me"}))
        .unwrap();
    let old_id = old.id().to_string();
    old.close().unwrap();
    let new = store.create_session(CreateOptions::default()).unwrap();
    assert_eq!(new.pruned(), std::slice::from_ref(&old_id));
    let new_id = new.id().to_string();
    new.close().unwrap();
    (store, old_id, new_id)
}

#[test]
fn trash_lists_and_restore_brings_back() {
    let env = Env::new();
    assert!(env.text(&["trash"]).contains("the trash is empty"));
    assert_eq!(env.json(&["trash"]), json!([]));
    let (_store, old, new) = pruned_store(&env);

    let listed = env.json(&["trash"]);
    assert_eq!(listed[0]["id"], json!(old), "{listed:#}");
    assert_eq!(listed[0]["reason"], json!("pruned"));
    assert_eq!(listed[0]["title"], json!("the old one"));
    assert_eq!(listed[0]["messageCount"], json!(1));
    assert!(listed[0]["purgeAfter"].is_string());
    let text = env.text(&["trash"]);
    assert!(
        text.contains(&old) && text.contains("the old one"),
        "{text}"
    );
    assert!(text.contains("pruned"), "{text}");

    let sessions = env.json(&["list"]);
    assert!(sessions.as_array().unwrap().iter().all(|e| e["id"] != old));

    let entry = env.json(&["restore", &old]);
    assert_eq!(entry["id"], json!(old));
    assert_eq!(entry["title"], json!("the old one"));
    assert_eq!(env.json(&["trash"]), json!([]));
    let ids: Vec<_> = env
        .json(&["list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].clone())
        .collect();
    assert!(
        ids.contains(&json!(old)) && ids.contains(&json!(new)),
        "{ids:?}"
    );
    let shown = env.text(&["show", &old]);
    assert!(shown.contains("keep me"), "{shown}");

    let err = env.fails(&["restore", &old], exit(ErrorKind::NotFound));
    assert!(err.contains(&old), "{err}");
    let err = env.fails(&["restore", "../x"], exit(ErrorKind::InvalidInput));
    assert!(err.contains("../x"), "{err}");
}

#[test]
fn restore_over_a_live_session_is_a_conflict() {
    let env = Env::new();
    let (store, old, _) = pruned_store(&env);
    let again = store
        .create_session(CreateOptions {
            id: Some(old.clone()),
            ..CreateOptions::default()
        })
        .unwrap();
    again.close().unwrap();
    let err = env.fails(&["restore", &old], exit(ErrorKind::Conflict));
    assert!(err.contains(&old), "{err}");
}

#[test]
fn gc_purges_after_the_grace_period() {
    let env = Env::new();
    let (_store, old, _) = pruned_store(&env);
    let report = env.json(&["gc"]);
    assert_eq!(report["trashPurged"], json!([]), "{report:#}");
    let report = env.json(&["--store-options", r#"{"trashGraceSecs": 0}"#, "gc"]);
    assert_eq!(report["trashPurged"], json!([old]), "{report:#}");
    assert_eq!(env.json(&["trash"]), json!([]));
}
