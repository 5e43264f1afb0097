//! The core API, operation by operation, as a host uses it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};
use sessionkit::{
    CreateOptions, Deterministic, Durability, ErrorKind, Status, Store, StoreOptions,
};

struct Env {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
    store: Store,
}

fn options(home: &Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        durability: Durability::Never,
        ..StoreOptions::default()
    }
}

fn env_with(f: impl FnOnce(&mut StoreOptions)) -> Env {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut o = options(home.path());
    f(&mut o);
    let store = Store::open(project.path(), o).unwrap();
    Env {
        home,
        project,
        store,
    }
}

fn env() -> Env {
    env_with(|_| {})
}

fn roles(msgs: &[sessionkit::Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| m.value()["role"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn create_append_and_resume() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    assert_eq!(uuid::Uuid::parse_str(s.id()).unwrap().get_version_num(), 7);
    let u = s
        .append(json!({"role": "user", "content": "hello", "x-host": {"keep": true}}))
        .unwrap();
    let a = s
        .append(json!({"role": "assistant", "content": "hi"}))
        .unwrap();
    assert_eq!(a.parent_id(), Some(u.id()));
    let stored = u.value();
    assert_eq!(stored["sessionId"], s.id());
    assert_eq!(
        stored["x-host"],
        json!({"keep": true}),
        "unknown fields are preserved"
    );
    assert!(stored["timestamp"].as_str().unwrap().ends_with('Z'));
    let id = s.id().to_string();
    drop(s);

    let view = e.store.read_session(&id).unwrap();
    let path = view.active_path().unwrap();
    assert_eq!(
        path.iter().map(|m| m.id()).collect::<Vec<_>>(),
        vec![u.id(), a.id()]
    );
    assert_eq!(path[0].value(), stored);
    assert!(view.report().is_clean());
    assert_eq!(view.header().unwrap()["version"], 1);
}

#[test]
fn batch_is_one_write_and_chains() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let before = std::fs::metadata(s.path()).unwrap().len();
    let msgs = s
        .append_batch(vec![
            json!({"role": "user", "content": "a"}),
            json!({"role": "assistant", "content": "b"}),
            json!({"role": "user", "content": "c"}),
        ])
        .unwrap();
    assert_eq!(msgs[1].parent_id(), Some(msgs[0].id()));
    assert_eq!(msgs[2].parent_id(), Some(msgs[1].id()));
    let bytes = std::fs::read(s.path()).unwrap();
    assert_eq!(
        bytes[before as usize..]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        3
    );
    assert_eq!(s.head().as_deref(), Some(msgs[2].id()));
}

#[test]
fn title_comes_from_first_user_input_unless_given() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let long = "x".repeat(150);
    s.append(json!({"role": "system", "content": "you are helpful"}))
        .unwrap();
    s.append(json!({"role": "user", "content": [{"type": "text", "text": long}]}))
        .unwrap();
    s.append(json!({"role": "user", "content": "second"}))
        .unwrap();
    s.close().unwrap();
    let list = e.store.list_sessions().unwrap();
    assert_eq!(list[0].title, "x".repeat(100));

    let t = e
        .store
        .create_session(CreateOptions {
            title: Some("Given title".into()),
            id: None,
        })
        .unwrap();
    t.append(json!({"role": "user", "content": "ignored for the title"}))
        .unwrap();
    let tid = t.id().to_string();
    t.close().unwrap();
    assert_eq!(e.store.session_entry(&tid).unwrap().title, "Given title");
}

#[test]
fn patch_adds_usage_without_rewriting() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let a = s
        .append(json!({"role": "assistant", "content": "done", "meta": {"model": "m1"}}))
        .unwrap();
    let first_line = std::fs::read(s.path()).unwrap();
    s.patch_message(
        a.id(),
        json!({"meta": {"usage": {"input_tokens": 10, "output_tokens": 5}}}),
    )
    .unwrap();
    let after = std::fs::read(s.path()).unwrap();
    assert_eq!(
        &after[..first_line.len()],
        &first_line[..],
        "earlier bytes unchanged"
    );
    let m = s.read().unwrap().active_path().unwrap().remove(0).value();
    assert_eq!(
        m["meta"],
        json!({"model": "m1", "usage": {"input_tokens": 10, "output_tokens": 5}})
    );
    assert_eq!(s.entry().token_usage["input_tokens"], 10);
    assert_eq!(
        s.patch_message("nope", json!({})).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        s.patch_message(a.id(), json!({"role": "user"}))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn state_updates_reach_the_index() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "go"})).unwrap();
    s.append(
        json!({"role": "assistant", "content": "calling", "contentParams": [
        {"type": "tool_use", "id": "tu1", "name": "bash", "input": {"cmd": "ls"}}]}),
    )
    .unwrap();
    s.update_state(
        json!({"status": "ask_permission", "thinking": "need bash", "activeTokens": 1234,
        "childProcesses": [{"pid": 42, "command": "npm test"}]}),
    )
    .unwrap();
    let entry = e.store.list_sessions().unwrap().remove(0);
    assert_eq!(entry.status, Status::AskPermission);
    assert_eq!(entry.thinking.as_deref(), Some("need bash"));
    assert_eq!(entry.active_tokens, Some(1234));
    assert_eq!(
        entry.child_processes,
        vec![json!({"pid": 42, "command": "npm test"})]
    );
    assert_eq!(entry.last_tool_call.as_ref().unwrap()["name"], "bash");
    assert_eq!(entry.last_assistant_reply.as_deref(), Some("calling"));
    s.update_state(json!({"status": "failed", "failureReason": "tests failed", "thinking": null}))
        .unwrap();
    let entry = e.store.list_sessions().unwrap().remove(0);
    assert_eq!(entry.status, Status::Failed);
    assert_eq!(entry.failure_reason.as_deref(), Some("tests failed"));
    assert_eq!(entry.thinking, None);
    // The index is a cache: rebuilt from the logs it says the same.
    let id = s.id().to_string();
    s.close().unwrap();
    let before = e.store.session_entry(&id).unwrap();
    std::fs::remove_file(e.store.index_path()).unwrap();
    e.store.rebuild_index().unwrap();
    assert_eq!(e.store.session_entry(&id).unwrap(), before);
}

#[test]
fn second_writer_is_busy_reader_is_not() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "a"})).unwrap();
    let err = e.store.open_session(s.id()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(err.to_string().contains(s.id()), "{err}");
    assert_eq!(e.store.read_session(s.id()).unwrap().message_count(), 1);
    let id = s.id().to_string();
    s.close().unwrap();
    let again = e.store.open_session(&id).unwrap();
    again
        .append(json!({"role": "assistant", "content": "b"}))
        .unwrap();
    assert_eq!(again.read().unwrap().active_path().unwrap().len(), 2);
}

#[test]
fn set_head_branches_and_keeps_old_branch() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let m = s
        .append_batch(vec![
            json!({"role": "user", "content": "1"}),
            json!({"role": "assistant", "content": "2"}),
            json!({"role": "user", "content": "3"}),
        ])
        .unwrap();
    s.set_head(Some(m[0].id())).unwrap();
    let b = s
        .append(json!({"role": "assistant", "content": "2b"}))
        .unwrap();
    assert_eq!(b.parent_id(), Some(m[0].id()));
    let view = s.read().unwrap();
    let path: Vec<_> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(path, vec![m[0].id().to_string(), b.id().to_string()]);
    assert_eq!(view.message_count(), 4, "the old branch stays in the log");
    assert_eq!(view.message(m[2].id()).unwrap().value()["content"], "3");
    s.set_head(None).unwrap();
    assert!(s.read().unwrap().active_path().unwrap().is_empty());
    let root2 = s
        .append(json!({"role": "user", "content": "fresh"}))
        .unwrap();
    assert_eq!(root2.parent_id(), None);
    assert_eq!(
        s.set_head(Some("missing")).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn explicit_parent_and_ui_view_flags() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let root = s
        .append(json!({"role": "system", "content": "sys", "visible": false}))
        .unwrap();
    let u = s.append(json!({"role": "user", "content": "q"})).unwrap();
    let alt = s
        .append(json!({"role": "user", "content": "q2", "parentId": root.id()}))
        .unwrap();
    assert_eq!(alt.parent_id(), Some(root.id()));
    let view = s.read().unwrap();
    let ui: Vec<Value> = view.ui_view().unwrap().iter().map(|m| m.value()).collect();
    assert_eq!(ui.len(), 2);
    assert_eq!(ui[0]["visible"], false);
    assert_eq!(ui[1]["visible"], true);
    assert_eq!(ui[1]["compacted"], false);
    assert_eq!(ui[1]["id"], alt.id());
    assert!(view.message(u.id()).is_ok());
}

#[test]
fn list_continue_rename_delete() {
    let e = env_with(|o| o.deterministic = Some(Deterministic::new(1_800_000_000_000, 1000, 1)));
    let empty = e.store.create_session(CreateOptions::default()).unwrap();
    let a = e.store.create_session(CreateOptions::default()).unwrap();
    a.append(json!({"role": "user", "content": "first"}))
        .unwrap();
    let b = e.store.create_session(CreateOptions::default()).unwrap();
    b.append(json!({"role": "user", "content": "second"}))
        .unwrap();
    let (ida, idb, ide) = (
        a.id().to_string(),
        b.id().to_string(),
        empty.id().to_string(),
    );
    drop((a, b, empty));
    let ids: Vec<String> = e
        .store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(
        ids,
        vec![idb.clone(), ida.clone(), ide.clone()],
        "newest first"
    );
    assert_eq!(e.store.continue_session().unwrap().unwrap().id, idb);

    e.store.rename_session(&ida, "Renamed").unwrap();
    assert_eq!(e.store.session_entry(&ida).unwrap().title, "Renamed");
    e.store.rebuild_index().unwrap();
    assert_eq!(
        e.store.session_entry(&ida).unwrap().title,
        "Renamed",
        "rename survives a rebuild"
    );

    let held = e.store.open_session(&idb).unwrap();
    assert_eq!(
        e.store.delete_session(&idb).unwrap_err().kind(),
        ErrorKind::Busy
    );
    assert_eq!(
        e.store.rename_session(&idb, "x").unwrap_err().kind(),
        ErrorKind::Busy
    );
    drop(held);
    e.store.delete_session(&idb).unwrap();
    assert!(!e.store.dir().join(format!("{idb}.jsonl")).exists());
    assert!(e.store.list_sessions().unwrap().iter().all(|x| x.id != idb));
    assert_eq!(e.store.continue_session().unwrap().unwrap().id, ida);
    assert_eq!(
        e.store.delete_session(&idb).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn pruning_keeps_max_sessions_and_says_which() {
    let e = env_with(|o| {
        o.max_sessions = 2;
        o.deterministic = Some(Deterministic::new(1_800_000_000_000, 10, 3));
    });
    let s1 = e.store.create_session(CreateOptions::default()).unwrap();
    let id1 = s1.id().to_string();
    s1.close().unwrap();
    let s2 = e.store.create_session(CreateOptions::default()).unwrap();
    assert!(s2.pruned().is_empty());
    let s3 = e.store.create_session(CreateOptions::default()).unwrap();
    assert_eq!(s3.pruned(), std::slice::from_ref(&id1));
    assert!(!e.store.dir().join(format!("{id1}.jsonl")).exists());
    // A session held by a writer is never pruned.
    let s4 = e.store.create_session(CreateOptions::default()).unwrap();
    assert!(
        s4.pruned().is_empty(),
        "s2 and s3 are open: {:?}",
        s4.pruned()
    );
    assert_eq!(e.store.list_sessions().unwrap().len(), 3);
}

#[test]
fn a_relative_home_is_resolved_once_at_open() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // `home` relative to the current directory, without changing it (the
    // tests of this binary share one).
    let cwd = std::env::current_dir().unwrap();
    let mut relative = std::path::PathBuf::new();
    for _ in cwd.ancestors().skip(1) {
        relative.push("..");
    }
    relative.push(home.path().strip_prefix("/").unwrap());
    let store = Store::open(project.path(), options(&relative)).unwrap();
    assert!(store.dir().is_absolute(), "{}", store.dir().display());
    assert_eq!(
        store.dir().canonicalize().unwrap(),
        home.path()
            .canonicalize()
            .unwrap()
            .join("projects")
            .join(store.project_code())
    );
}

#[test]
fn subagents_spawned_at_the_same_time_list_by_id() {
    // A clock that stands still: every subagent has the same createdAt.
    let e = env_with(|o| o.deterministic = Some(Deterministic::new(1_800_000_000_000, 0, 1)));
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    for a in ["b-2", "c-3", "a-1", "B-0"] {
        s.spawn_subagent(Some(a), json!({})).unwrap();
    }
    let metas = e.store.list_subagents(s.id()).unwrap();
    let ids: Vec<&str> = metas
        .iter()
        .map(|m| m["agentId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["B-0", "a-1", "b-2", "c-3"]);
    assert!(metas
        .iter()
        .all(|m| m["createdAt"] == metas[0]["createdAt"]));
}

#[test]
fn subagents_have_their_own_log() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "do it"}))
        .unwrap();
    let ag = s
        .spawn_subagent(Some("explore-1"), json!({"description": "explore"}))
        .unwrap();
    ag.append(json!({"role": "user", "content": "look around"}))
        .unwrap();
    ag.append(json!({"role": "assistant", "content": "found 3 files"}))
        .unwrap();
    ag.finish(json!({"files": 3}), false).unwrap();
    assert_eq!(
        s.spawn_subagent(Some("explore-1"), json!({}))
            .unwrap_err()
            .kind(),
        ErrorKind::Conflict
    );

    let side = e.store.read_subagent(s.id(), "explore-1").unwrap();
    let msgs = side.active_path().unwrap();
    assert_eq!(roles(&msgs), ["user", "assistant"]);
    assert_eq!(msgs[0].value()["agentId"], "explore-1");
    let metas = e.store.list_subagents(s.id()).unwrap();
    assert_eq!(metas.len(), 1);
    assert_eq!(metas[0]["status"], "completed");
    assert_eq!(metas[0]["result"], json!({"files": 3}));
    // The main log has only the spawn and the result, not the sidechain.
    let main = s.read().unwrap();
    assert_eq!(main.message_count(), 1);
    let events: Vec<&str> = main
        .records()
        .iter()
        .filter_map(|r| r["event"].as_str())
        .collect();
    assert_eq!(events, ["spawn", "result"]);
    drop(ag);
    let again = s.open_subagent("explore-1").unwrap();
    let m = again
        .append(json!({"role": "user", "content": "more"}))
        .unwrap();
    assert_eq!(m.parent_id(), Some(msgs[1].id()));
    assert_eq!(
        e.store.read_subagent(s.id(), "nope").unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn large_content_goes_to_a_blob_and_comes_back() {
    let e = env_with(|o| o.blob_threshold = 1024);
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let big = "y".repeat(50_000);
    let m = s.append(json!({"role": "tool", "content": big})).unwrap();
    assert_eq!(
        m.value()["content"].as_str().unwrap().len(),
        50_000,
        "returned in full"
    );
    let log = std::fs::read_to_string(s.path()).unwrap();
    assert!(
        log.len() < 2_000,
        "the log line holds a reference, not the payload"
    );
    assert!(log.contains("contentBlob"));
    let view = s.read().unwrap();
    assert_eq!(
        view.active_path().unwrap()[0].value()["content"]
            .as_str()
            .unwrap(),
        big
    );
    let blobs = e.store.blobs().list().unwrap();
    assert_eq!(blobs.len(), 1);
    // The same payload again is stored once.
    s.append(json!({"role": "tool", "content": big})).unwrap();
    assert_eq!(e.store.blobs().list().unwrap().len(), 1);
}

#[test]
fn files_are_private() {
    let e = env_with(|o| o.blob_threshold = 16);
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "a secret that is long enough"}))
        .unwrap();
    s.spawn_subagent(Some("a1"), json!({})).unwrap();
    s.update_state(json!({"status": "processing"})).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(e.store.dir()), 0o700);
    assert_eq!(mode(s.path()), 0o600);
    assert_eq!(mode(&e.store.index_path()), 0o600);
    for entry in walk(e.store.dir()) {
        let m = mode(&entry);
        if entry.is_dir() {
            assert_eq!(m, 0o700, "{}", entry.display());
        } else {
            assert_eq!(m, 0o600, "{}", entry.display());
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(dir).unwrap() {
        let p = d.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn seed_style_transcript_opens_as_is() {
    let e = env();
    let id = "seed-session";
    let lines = [
        json!({"id": "m1", "sessionId": id, "role": "user", "content": "hello"}),
        json!({"id": "m2", "sessionId": id, "role": "assistant", "content": "hi", "parentId": "m1"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(e.store.dir().join(format!("{id}.jsonl")), text).unwrap();
    let view = e.store.read_session(id).unwrap();
    assert_eq!(
        view.active_path()
            .unwrap()
            .iter()
            .map(|m| m.id())
            .collect::<Vec<_>>(),
        ["m1", "m2"]
    );
    let list = e.store.list_sessions().unwrap();
    assert_eq!(list[0].id, id);
    assert_eq!(list[0].title, "hello");
    assert_eq!(list[0].message_count, 2);
    let s = e.store.open_session(id).unwrap();
    let m = s
        .append(json!({"role": "user", "content": "more"}))
        .unwrap();
    assert_eq!(m.parent_id(), Some("m2"));
}

#[test]
fn corrupt_index_is_rebuilt_not_fatal() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "keep me"}))
        .unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    std::fs::write(e.store.index_path(), b"{ not json").unwrap();
    let list = e.store.list_sessions().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, id);
    assert_eq!(list[0].title, "keep me");
    let parsed: Value =
        serde_json::from_slice(&std::fs::read(e.store.index_path()).unwrap()).unwrap();
    assert_eq!(parsed["sessions"][0]["id"], id);
}

#[test]
fn stale_index_entry_is_refolded() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "a"})).unwrap();
    s.flush_index().unwrap();
    s.append(json!({"role": "assistant", "content": "b"}))
        .unwrap();
    // Not flushed: another process listing sees the log moved on.
    let list = e.store.list_sessions().unwrap();
    assert_eq!(list[0].message_count, 2);
    assert_eq!(list[0].last_assistant_reply.as_deref(), Some("b"));
}

#[test]
fn durable_appends_fsync_once_per_append_or_batch() {
    let e = env_with(|o| o.durability = Durability::Always);
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let base = s.fsync_count();
    for i in 0..5 {
        s.append(json!({"role": "user", "content": i.to_string()}))
            .unwrap();
    }
    assert_eq!(s.fsync_count() - base, 5);
    s.append_batch(
        (0..50)
            .map(|i| json!({"role": "user", "content": i.to_string()}))
            .collect(),
    )
    .unwrap();
    assert_eq!(s.fsync_count() - base, 6);
}

#[test]
fn deterministic_mode_reproduces_bytes() {
    let run = || {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("proj");
        std::fs::create_dir(&project).unwrap();
        let mut o = options(home.path());
        o.deterministic = Some(Deterministic::new(1_800_000_000_000, 7, 9));
        let store = Store::open(&project, o).unwrap();
        let s = store.create_session(CreateOptions::default()).unwrap();
        s.append(json!({"role": "user", "content": "same"}))
            .unwrap();
        s.update_state(json!({"status": "completed"})).unwrap();
        let bytes = std::fs::read(s.path()).unwrap();
        // The temp dir differs per run, and the header names the project path.
        String::from_utf8(bytes).unwrap().replace(
            &*project.canonicalize().unwrap().to_string_lossy(),
            "<root>",
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn project_root_must_exist() {
    let home = tempfile::tempdir().unwrap();
    let err = Store::open(home.path().join("missing"), options(home.path())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("missing"));
}

#[test]
fn same_project_same_store_from_any_spelling() {
    let e = env();
    let spelled = e.project.path().join(".");
    let other = Store::open(&spelled, options(e.home.path())).unwrap();
    assert_eq!(other.dir(), e.store.dir());
}

#[test]
fn explicit_null_parent_starts_a_new_root() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "a"})).unwrap();
    let b = s
        .append(json!({"role": "user", "content": "b", "parentId": null}))
        .unwrap();
    assert_eq!(b.parent_id(), None);
    let view = s.read().unwrap();
    assert_eq!(
        view.message(b.id()).unwrap().parent_id(),
        None,
        "read back as a root"
    );
    let path = view.active_path().unwrap();
    assert_eq!(path.iter().map(|m| m.id()).collect::<Vec<_>>(), [b.id()]);
    let id = s.id().to_string();
    drop(s);
    let tail = e.store.model_view(&id, &Default::default()).unwrap();
    assert_eq!(tail.len(), 1);
}

#[test]
fn append_groups_reports_per_group_and_writes_only_the_accepted() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let results = s
        .append_groups(vec![
            vec![
                json!({"role": "user", "content": "q"}),
                json!({"role": "assistant", "content": "a"}),
            ],
            // Refused whole: its first message is fine, its second has no role.
            vec![
                json!({"role": "user", "content": "kept?"}),
                json!({"content": "x"}),
            ],
            vec![],
            vec![json!({"role": "user", "content": "next"})],
        ])
        .unwrap();
    assert_eq!(results.len(), 4);
    let first = results[0].as_ref().unwrap();
    assert_eq!(first.len(), 2);
    let err = results[1].as_ref().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("message 1"), "{err}");
    assert_eq!(
        results[2].as_ref().unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let last = &results[3].as_ref().unwrap()[0];
    assert_eq!(
        last.parent_id(),
        Some(first[1].id()),
        "chained past the refused group"
    );
    let json = sessionkit::group_results_json(&results);
    let parsed: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed[0]["ok"][1]["id"], first[1].id());
    assert_eq!(parsed[1]["error"]["code"], "INVALID_INPUT");
    assert_eq!(parsed[3]["ok"][0]["content"], "next");
    let id = s.id().to_string();
    drop(s);
    // What a reader finds on disk: the accepted groups only, in order.
    let again = e.store.open_session(&id).unwrap();
    let contents: Vec<Value> = again
        .read()
        .unwrap()
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.value()["content"].clone())
        .collect();
    assert_eq!(contents, vec![json!("q"), json!("a"), json!("next")]);
}

#[test]
fn subagent_append_groups_chains_in_its_sidechain() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let sub = s.spawn_subagent(Some("worker"), json!({})).unwrap();
    let results = sub
        .append_groups(vec![
            vec![json!({"role": "user", "content": "task"})],
            vec![json!({"role": 7})],
            vec![json!({"role": "assistant", "content": "done"})],
        ])
        .unwrap();
    let task = &results[0].as_ref().unwrap()[0];
    assert!(results[1].is_err());
    let done = &results[2].as_ref().unwrap()[0];
    assert_eq!(done.parent_id(), Some(task.id()));
    assert_eq!(sub.read().unwrap().active_path().unwrap().len(), 2);
    assert!(
        s.read().unwrap().message(task.id()).is_err(),
        "not in the main log"
    );
}

#[test]
fn a_page_of_the_listing_is_that_slice_of_the_whole_and_counts_every_session() {
    let e = env();
    let mut ids = Vec::new();
    for i in 0..7 {
        let s = e.store.create_session(CreateOptions::default()).unwrap();
        s.append(json!({"role": "user", "content": format!("task {i}")}))
            .unwrap();
        ids.push(s.id().to_string());
        s.close().unwrap();
    }
    // A log appended behind the index's back: its entry is stale, refolded
    // for the page as for the whole listing, and moves to the top.
    let stale = ids[1].clone();
    let w = e.store.open_session(&stale).unwrap();
    w.append(json!({"role": "user", "content": "latest"}))
        .unwrap();
    drop(w);
    let log = e.store.dir().join(format!("{stale}.jsonl"));
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"state\",\"set\":{\"status\":\"completed\"},\"timestamp\":\"2099-01-01T00:00:00.000Z\"}\n").unwrap();
    drop(f);
    // A writer left open: its changes are in the index's journal, not the file.
    let open = e.store.create_session(CreateOptions::default()).unwrap();
    open.append(json!({"role": "user", "content": "still going"}))
        .unwrap();
    open.update_state(json!({"status": "processing"})).unwrap();
    e.store.delete_session(&ids[3]).unwrap();
    let whole = e.store.list_sessions().unwrap();
    assert_eq!(whole.len(), 7);
    assert!(whole.iter().any(|x| x.id == open.id()));
    assert!(!whole.iter().any(|x| x.id == ids[3]));
    assert_eq!(whole[0].id, stale);
    assert_eq!(whole[0].status, Status::Completed);
    for (offset, limit) in [
        (0, Some(3)),
        (3, Some(3)),
        (6, Some(3)),
        (2, None),
        (9, Some(2)),
        (0, Some(0)),
    ] {
        let page = e
            .store
            .list_page(&sessionkit::ListOptions { offset, limit })
            .unwrap();
        assert_eq!(page.total, 7, "offset {offset} limit {limit:?}");
        let want: Vec<&str> = whole
            .iter()
            .skip(offset)
            .take(limit.unwrap_or(usize::MAX))
            .map(|x| x.id.as_str())
            .collect();
        let got: Vec<&str> = page.sessions.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(got, want, "offset {offset} limit {limit:?}");
        // The entries themselves, not only their order.
        for g in &page.sessions {
            assert_eq!(Some(g), whole.iter().find(|w| w.id == g.id));
        }
    }
    let bad = sessionkit::ListOptions::from_json(r#"{"limit": 2, "page": 1}"#).unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidInput);
    assert!(bad.to_string().contains("page"), "{bad}");
}

#[test]
fn a_page_whose_entry_is_damaged_in_the_index_is_listed_from_the_logs() {
    let e = env();
    for i in 0..3 {
        let s = e.store.create_session(CreateOptions::default()).unwrap();
        s.append(json!({"role": "user", "content": format!("task {i}")}))
            .unwrap();
        s.close().unwrap();
    }
    let whole = e.store.list_sessions().unwrap();
    // Only the page's entries are parsed whole: one with a member of the wrong
    // type makes the index unparseable, and it is rebuilt from the logs.
    let index = e.store.dir().join("sessions-index.json");
    let text = std::fs::read_to_string(&index).unwrap();
    let damaged = text.replacen("\"titleSet\":false", "\"titleSet\":\"no\"", 1);
    assert_ne!(text, damaged);
    std::fs::write(&index, damaged).unwrap();
    let page = e
        .store
        .list_page(&sessionkit::ListOptions {
            offset: 0,
            limit: Some(2),
        })
        .unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(page.sessions, whole[..2]);
    assert_eq!(e.store.list_sessions().unwrap(), whole);
}
