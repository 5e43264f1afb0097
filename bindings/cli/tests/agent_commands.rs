//! The commands that let a shell script be an agent (user-input, snapshot,
//! state, compact, subagent, batch append), and `--deterministic-state`, which
//! carries one reproducible run across many commands: a session written one
//! command at a time is byte for byte the one the library writes in one process.

mod common;

use std::path::Path;

use common::{Env, START_MS};
use serde_json::{json, Value};
use sessionkit::{CompactionPolicy, CreateOptions, Deterministic, Store, StoreOptions};

const SEED: u64 = 11;

/// The same agent's work, done through the library in one process.
fn by_library(home: &Path, project: &Path) -> Vec<u8> {
    std::fs::write(project.join("notes.txt"), "draft\n").unwrap();
    let options = StoreOptions {
        home: Some(home.to_path_buf()),
        deterministic: Some(Deterministic::new(START_MS, 1000, SEED)),
        ..StoreOptions::default()
    };
    let store = Store::open(project, options).unwrap();
    let s = store
        .create_session(CreateOptions {
            title: Some("script agent".into()),
            id: None,
        })
        .unwrap();
    s.user_input(json!({"content": "Finish the notes"}))
        .unwrap();
    s.before_edit(&["notes.txt"]).unwrap();
    std::fs::write(project.join("notes.txt"), "final\n").unwrap();
    s.after_edit(&["notes.txt"]).unwrap();
    s.append_batch(vec![
        json!({"role": "assistant", "content": "Edited notes.txt. ✓"}),
        json!({"role": "assistant", "content": "Anything else?"}),
    ])
    .unwrap();
    s.update_state(json!({"status": "waiting_for_user"}))
        .unwrap();
    let sub = s
        .spawn_subagent(Some("checker"), json!({"task": "check"}))
        .unwrap();
    sub.append(json!({"role": "user", "content": "check notes.txt"}))
        .unwrap();
    sub.finish(json!("looks fine"), false).unwrap();
    drop(sub);
    let plan = s
        .select_compaction(&CompactionPolicy {
            token_budget: 10,
            keep_last_turns: 0,
            summary_tokens: 1,
        })
        .unwrap()
        .expect("something to compact");
    s.apply_compaction(&plan.replaces, json!("The notes were finished."))
        .unwrap();
    let path = s.path().to_path_buf();
    s.close().unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn a_script_agent_writes_what_the_library_writes() {
    let reference = Env::new();
    let expected = by_library(reference.home.path(), reference.root());

    let env = Env::new();
    std::fs::write(env.root().join("notes.txt"), "draft\n").unwrap();
    let state = env.home.path().join("deterministic.json");
    std::fs::write(
        &state,
        json!({"startMs": START_MS, "stepMs": 1000, "seed": SEED}).to_string(),
    )
    .unwrap();
    let run = |args: &[&str]| -> Value {
        let mut all = vec!["--deterministic-state", state.to_str().unwrap()];
        all.extend_from_slice(args);
        env.json(&all)
    };
    let id = run(&["new", "--title", "script agent"])["id"]
        .as_str()
        .unwrap()
        .to_string();
    let u = run(&["user-input", &id, r#"{"content":"Finish the notes"}"#]);
    assert_eq!(u["role"], "user");
    assert!(u["checkpointHash"].is_string(), "{u}");
    let before = run(&["snapshot", &id, "--before", "notes.txt"]);
    std::fs::write(env.root().join("notes.txt"), "final\n").unwrap();
    let after = run(&["snapshot", &id, "--after", "notes.txt"]);
    assert_ne!(before, after, "the edit is a new snapshot");
    let batch = run(&[
        "append",
        &id,
        r#"[{"role":"assistant","content":"Edited notes.txt. ✓"},{"role":"assistant","content":"Anything else?"}]"#,
    ]);
    assert_eq!(batch.as_array().map(Vec::len), Some(2), "{batch}");
    assert_eq!(batch[1]["parentId"], batch[0]["id"]);
    let model = run(&["show", &id, "--model-view"]);
    let last = run(&["show", &id, "--model-view", "--last", "1"]);
    let (all, tail) = (
        model["messages"].as_array().unwrap(),
        last["messages"].as_array().unwrap(),
    );
    assert!(
        tail.len() < all.len(),
        "--last 1 kept {} of {}",
        tail.len(),
        all.len()
    );
    assert_eq!(tail.last(), all.last());

    let entry = run(&["state", &id, r#"{"status":"waiting_for_user"}"#]);
    assert_eq!(entry["status"], "waiting_for_user");
    let agent = run(&[
        "subagent",
        "spawn",
        &id,
        "--agent",
        "checker",
        "--meta",
        r#"{"task":"check"}"#,
    ]);
    assert_eq!(agent["id"], "checker");
    run(&[
        "subagent",
        "append",
        &id,
        "checker",
        r#"{"role":"user","content":"check notes.txt"}"#,
    ]);
    run(&["subagent", "finish", &id, "checker", r#""looks fine""#]);
    let side = run(&["subagent", "show", &id, "checker"]);
    assert_eq!(side["messages"][0]["content"], "check notes.txt");
    let plan = run(&[
        "compact",
        "select",
        &id,
        "--token-budget",
        "10",
        "--keep-last-turns",
        "0",
        "--summary-tokens",
        "1",
    ]);
    let replaces: Vec<&str> = plan["replaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!replaces.is_empty(), "{plan}");
    let mut apply = vec!["compact", "apply", &id, r#""The notes were finished.""#];
    apply.extend(replaces.iter().copied());
    let summary = run(&apply);
    assert_eq!(summary["content"], "The notes were finished.");
    let model = run(&["show", &id, "--model-view"]);
    assert_eq!(model["messages"][0]["content"], "The notes were finished.");
    // The same bytes but for the project's path in the session header.
    let log = std::fs::read_to_string(env.store().log_path(&id).unwrap()).unwrap();
    let expected = String::from_utf8(expected).unwrap().replace(
        reference.root().to_str().unwrap(),
        env.root().to_str().unwrap(),
    );
    assert_eq!(
        log, expected,
        "a session written one command at a time differs from the library's"
    );
}

#[test]
fn agent_commands_refuse_bad_input_and_change_nothing() {
    let env = Env::new();
    let id = env.json(&["new"])["id"].as_str().unwrap().to_string();
    env.json(&["append", &id, r#"{"role":"user","content":"one"}"#]);
    let log = env.store().log_path(&id).unwrap();
    let before = std::fs::read(&log).unwrap();

    // Exit 6 is INVALID_INPUT, 3 NOT_FOUND (bindings/cli/README.md).
    let err = env.fails(&["append", &id, r#"[{"role":"user","content":"ok"},7]"#], 6);
    assert!(err.contains("sessionkit append: error:"), "{err}");
    env.fails(
        &["user-input", &id, r#"{"role":"assistant","content":"x"}"#],
        6,
    );
    env.fails(&["state", &id, "[]"], 6);
    env.fails(&["snapshot", &id, "--before", "../outside.txt"], 6);
    env.fails(
        &[
            "subagent",
            "append",
            &id,
            "nobody",
            r#"{"role":"user","content":"x"}"#,
        ],
        3,
    );
    env.fails(&["compact", "apply", &id, r#""s""#, "no-such-message"], 6);
    // clap's usage errors: a snapshot needs --before or --after.
    env.fails(&["snapshot", &id, "notes.txt"], 2);
    assert_eq!(
        std::fs::read(&log).unwrap(),
        before,
        "a refused command wrote"
    );
}

#[test]
fn store_options_and_a_missing_state_file_are_named_in_errors() {
    let env = Env::new();
    let err = env.fails(&["--store-options", "[1]", "list"], 6);
    assert!(
        err.contains("expected a JSON object, got an array"),
        "{err}"
    );
    let err = env.fails(&["--store-options", r#"{"blobThreshold":0}"#, "list"], 6);
    assert!(err.contains("blobThreshold"), "{err}");
    let missing = env.home.path().join("no-state.json");
    let err = env.fails(
        &["--deterministic-state", missing.to_str().unwrap(), "list"],
        3,
    );
    assert!(err.contains("no-state.json"), "{err}");
    let bad = env.home.path().join("bad-state.json");
    std::fs::write(&bad, r#"{"startMs":1,"bogus":2}"#).unwrap();
    let err = env.fails(&["--deterministic-state", bad.to_str().unwrap(), "list"], 6);
    assert!(err.contains("bogus"), "{err}");
    let err = env.fails(
        &[
            "--store-options",
            r#"{"deterministic":{"startMs":18446744073709551615}}"#,
            "list",
        ],
        6,
    );
    assert!(err.contains("startMs"), "{err}");
}

/// A conversation a framework writes under its own id: the CLI lists it by
/// that id, shows it when given that id, and appends beside the framework's
/// own handle, which is still open.
#[test]
fn conversations_are_listed_shown_and_appended_to_by_their_own_id() {
    let env = Env::new();
    let store = env.store();
    let server = store.open_conversation("user@example.com").unwrap();
    server
        .append(json!({"role": "user", "content": "from the server"}))
        .unwrap();
    let list = env.cmd().arg("list").output().unwrap();
    let text = String::from_utf8(list.stdout).unwrap();
    assert!(text.contains("(user@example.com)"), "{text}");
    let show = env.json(&["show", "user@example.com"]);
    assert_eq!(show["session"]["conversationId"], "user@example.com");
    let appended = env.json(&[
        "append",
        "user@example.com",
        r#"{"role":"assistant","content":"from the CLI"}"#,
    ]);
    assert_eq!(appended["content"], "from the CLI");
    server
        .append(json!({"role": "user", "content": "again"}))
        .unwrap();
    let path = store
        .read_session(server.id())
        .unwrap()
        .active_path()
        .unwrap();
    let contents: Vec<Value> = path.iter().map(|m| m.value()["content"].clone()).collect();
    assert_eq!(contents, ["from the server", "from the CLI", "again"]);
}

#[test]
fn a_checkpointer_thread_is_listed_and_shown_with_its_checkpoints() {
    use sessionkit::{ChannelValue, CheckpointPut, TypedValue};
    let env = Env::new();
    let store = env.store();
    let put = |id: &str, parent: Option<&str>, step: i64| CheckpointPut {
        checkpoint:
            json!({"id": id, "ts": "2026-12-02T10:00:00Z", "channel_versions": {"messages": id}})
                .as_object()
                .unwrap()
                .clone(),
        metadata: json!({"source": "loop", "step": step})
            .as_object()
            .unwrap()
            .clone(),
        parent_id: parent.map(str::to_owned),
        values: vec![ChannelValue {
            channel: "messages".into(),
            version: json!(id),
            value: Some(TypedValue {
                kind: "json".into(),
                bytes: b"[\"hi\"]".to_vec(),
            }),
        }],
        ..CheckpointPut::default()
    };
    store
        .checkpoint_put("thread/7", put("cp-1", None, 0))
        .unwrap();
    store
        .checkpoint_put("thread/7", put("cp-2", Some("cp-1"), 1))
        .unwrap();
    let list = env.cmd().arg("list").output().unwrap();
    assert!(String::from_utf8(list.stdout)
        .unwrap()
        .contains("(thread/7)"));
    let shown = env.json(&["show", "thread/7"]);
    let cps = shown["checkpoints"].as_array().unwrap();
    assert_eq!(cps.len(), 2);
    assert_eq!(cps[1]["id"], "cp-2");
    assert_eq!(cps[1]["parentId"], "cp-1");
    assert_eq!(cps[1]["channels"], json!(["messages"]));
    let text = env.cmd().args(["show", "thread/7"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("2 checkpoints"), "{text}");
    assert!(
        text.contains("cp-2") && text.contains("step 1 · loop · messages"),
        "{text}"
    );
}
