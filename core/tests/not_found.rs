//! A missing thing is `NotFound`, whichever path finds it missing: a session whose
//! log was removed by hand, a missing subagent, blob, snapshot or message, and a
//! store directory removed under an open store. The message names the id or the
//! path.

use std::fmt::Debug;
use std::path::Path;

use serde_json::json;
use sessionkit::{
    CreateOptions, Durability, ErrorKind, ForkOptions, ModelViewOptions, Result, Store,
    StoreOptions,
};

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, Env};

#[track_caller]
fn expect_not_found<T: Debug>(r: Result<T>, needles: &[&str], what: &str) {
    let e = match r {
        Ok(v) => panic!("{what}: expected NotFound, got Ok({v:?})"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::NotFound, "{what}: wrong kind for {e}");
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "{what}: {msg:?} does not mention {n:?}");
    }
}

fn env() -> Env {
    env_with(StoreOptions {
        durability: Durability::Never,
        blob_threshold: 64,
        ..StoreOptions::default()
    })
}

/// A closed session with a message, a subagent and a snapshot; returns its id.
fn session(store: &Store, root: &Path) -> String {
    let s = store.create_session(CreateOptions::default()).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    s.user_input(json!({"role": "user", "content": "hello"}))
        .unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    s.spawn_subagent(Some("agent-1"), json!({})).unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    id
}

#[test]
fn a_session_whose_log_was_removed_is_not_found_everywhere() {
    let e = env();
    let st = &e.store;
    let id = session(st, e.project.path());
    assert!(st.list_sessions().unwrap().iter().any(|x| x.id == id));
    // The index still lists it and its directory (subagents) is still there.
    std::fs::remove_file(st.log_path(&id).unwrap()).unwrap();
    let ids = [id.as_str()];
    expect_not_found(st.open_session(&id), &ids, "open");
    expect_not_found(st.read_session(&id), &ids, "read");
    expect_not_found(
        st.model_view(&id, &ModelViewOptions::default()),
        &ids,
        "model view",
    );
    expect_not_found(st.rename_session(&id, "t"), &ids, "rename");
    expect_not_found(st.delete_session(&id), &ids, "delete");
    expect_not_found(st.session_entry(&id), &ids, "entry");
    expect_not_found(st.fork_session(&id, ForkOptions::default()), &ids, "fork");
}

#[test]
fn a_missing_subagent_is_not_found() {
    let e = env();
    let st = &e.store;
    let id = session(st, e.project.path());
    expect_not_found(
        st.read_subagent(&id, "agent-9"),
        &["agent-9", &id],
        "read subagent",
    );
    let s = st.open_session(&id).unwrap();
    expect_not_found(s.open_subagent("agent-9"), &["agent-9"], "open subagent");
}

#[test]
fn a_missing_snapshot_or_message_is_not_found_and_a_missing_blob_degrades() {
    let e = env();
    let st = &e.store;
    let s = st.create_session(CreateOptions::default()).unwrap();
    let m = s
        .append(json!({"role": "user", "content": "x".repeat(1000)}))
        .unwrap();
    let blob = st.blobs().list().unwrap().remove(0);
    std::fs::remove_file(st.blobs().path_of(&blob).unwrap()).unwrap();
    // FORMAT.md §7: the message is still read, its content `null` with the
    // reference in place, and the read report names the blob.
    let v = s.read().unwrap();
    let path = v.active_path().unwrap();
    assert_eq!(path.len(), 1);
    let got = path[0].value();
    assert_eq!(got["id"], m.id());
    assert!(got["content"].is_null());
    assert_eq!(got["contentBlob"]["sha256"], blob.as_str());
    let missing = &v.report().missing_blobs;
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(
        (missing[0].message_id.as_str(), missing[0].field.as_str()),
        (m.id(), "content")
    );
    assert_eq!(missing[0].sha256.as_deref(), Some(blob.as_str()));
    assert_eq!(v.model_view(&Default::default()).unwrap().len(), 1);
    let missing = "0123456789012345678901234567890123456789";
    expect_not_found(s.snapshot_plan(missing), &[missing], "snapshot plan");
    expect_not_found(s.rewind_plan("m-nope"), &["m-nope"], "rewind plan");
    let at = ForkOptions {
        at: Some("m-nope".into()),
        ..ForkOptions::default()
    };
    expect_not_found(st.fork_session(s.id(), at), &["m-nope"], "fork at");
}

/// The project's directory in the store removed while the store is open: every
/// call that needs it says `NotFound` with the path, none says `Io`.
#[test]
fn a_store_directory_removed_under_an_open_store_is_not_found() {
    let e = env();
    let st = &e.store;
    let id = session(st, e.project.path());
    std::fs::remove_dir_all(st.dir()).unwrap();
    let dir = st.dir().to_str().unwrap();
    expect_not_found(st.list_sessions(), &[dir], "list");
    expect_not_found(st.continue_session(), &[dir], "continue");
    expect_not_found(st.rebuild_index(), &[dir], "rebuild index");
    expect_not_found(st.check_file_history(), &[dir], "check file history");
    expect_not_found(st.open_session(&id), &[&id], "open");
    expect_not_found(st.read_session(&id), &[&id], "read");
    expect_not_found(st.session_entry(&id), &[&id], "entry");
}

#[test]
fn only_a_missing_file_makes_an_io_error_not_found() {
    use std::io;
    let e = sessionkit::Error::Io {
        path: "/x/y".into(),
        source: io::Error::from(io::ErrorKind::NotFound),
    };
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.to_string().contains("/x/y"), "{e}");
    let e = sessionkit::Error::Io {
        path: "/x/y".into(),
        source: io::Error::from(io::ErrorKind::PermissionDenied),
    };
    assert_eq!(e.kind(), ErrorKind::Io);
}
