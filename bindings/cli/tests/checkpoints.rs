//! `sessionkit checkpoint`: a graph checkpointer's threads from the command
//! line, with the C ABI's JSON in and out. Written one command at a time, a
//! thread is byte for byte the one the library writes in one process.

mod common;

use std::path::Path;

use common::{Env, START_MS};
use serde_json::{json, Value};
use sessionkit::{
    CheckpointPut, CheckpointQuery, CheckpointWrites, Deterministic, PruneStrategy, Store,
    StoreOptions,
};

const SEED: u64 = 30;

/// Standard base64 with padding, as the JSON forms take bytes.
fn b64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn value(text: &str) -> Value {
    json!({"type": "json", "bytes": b64(text.as_bytes())})
}

const FIRST: &str = r#"[{"type":"human","content":"Summarise the design document in three bullet points, please."}]"#;
const SECOND: &str = r#"[{"type":"human","content":"Summarise the design document in three bullet points, please."},{"type":"ai","content":"One log per session; values stored once; every binding writes the same bytes."}]"#;

/// A thread's checkpoints, writes and removals, as JSON texts in the order given.
fn puts() -> Vec<(&'static str, String)> {
    let cp = |id: &str, parent: Option<&str>, run: &str, version: u32, text: &str| {
        json!({
            "ns": "",
            "parentId": parent,
            "checkpoint": {"v": 4, "id": id, "ts": "2026-01-01T00:00:00+00:00",
                           "channel_versions": {"messages": version}},
            "metadata": {"source": "loop", "step": version, "run_id": run},
            "values": [{"channel": "messages", "version": version, "value": value(text)}],
        })
        .to_string()
    };
    vec![
        ("put", cp("cp-1", None, "run-a", 1, FIRST)),
        (
            "writes",
            json!({"ns": "", "checkpointId": "cp-1", "taskId": "agent-1", "taskPath": "~agent",
                   "writes": [{"channel": "messages", "value": value("\"hi\"")},
                              {"channel": "__error__", "value": value("\"boom\"")}]})
            .to_string(),
        ),
        ("put", cp("cp-2", Some("cp-1"), "run-b", 2, SECOND)),
    ]
}

/// The thread `t` and its copy `t-copy`, written by the library in one process.
fn by_library(home: &Path, project: &Path) -> (Vec<u8>, Vec<u8>) {
    let store = Store::open(
        project,
        StoreOptions {
            home: Some(home.to_path_buf()),
            deterministic: Some(Deterministic::new(START_MS, 1000, SEED)),
            ..StoreOptions::default()
        },
    )
    .unwrap();
    for (what, text) in puts() {
        match what {
            "put" => store
                .checkpoint_put("t", CheckpointPut::from_json(&text).unwrap())
                .unwrap(),
            _ => store
                .checkpoint_put_task_writes("t", CheckpointWrites::from_json(&text).unwrap())
                .unwrap(),
        }
    }
    store.checkpoint_copy_thread("t", "t-copy").unwrap();
    store
        .checkpoint_prune(&["t-copy".into()], PruneStrategy::KeepLatest)
        .unwrap();
    store.checkpoint_delete_for_runs(&["run-a".into()]).unwrap();
    let read = |t: &str| {
        let id = sessionkit::conversation_session_id(t).unwrap();
        std::fs::read(store.log_path(&id).unwrap()).unwrap()
    };
    (read("t"), read("t-copy"))
}

#[test]
fn checkpoint_commands_write_what_the_library_writes() {
    let reference = Env::new();
    let (thread, copy) = by_library(reference.home.path(), reference.root());

    let env = Env::new();
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
    for (what, text) in puts() {
        let out = run(&["checkpoint", what, "t", &text]);
        assert_eq!(out["threadId"], "t", "{out}");
    }
    assert_eq!(
        run(&["checkpoint", "copy", "t", "t-copy"]),
        json!({"source": "t", "target": "t-copy"})
    );
    run(&["checkpoint", "prune", "--strategy", "keep_latest", "t-copy"]);
    run(&["checkpoint", "delete-runs", "run-a"]);

    let store = env.store();
    let read = |t: &str| {
        let id = sessionkit::conversation_session_id(t).unwrap();
        std::fs::read_to_string(store.log_path(&id).unwrap()).unwrap()
    };
    // The same bytes but for the project's path in the session header.
    let same = |bytes: Vec<u8>| {
        String::from_utf8(bytes).unwrap().replace(
            reference.root().to_str().unwrap(),
            env.root().to_str().unwrap(),
        )
    };
    assert_eq!(read("t"), same(thread), "thread t");
    assert_eq!(read("t-copy"), same(copy), "thread t-copy");
}

#[test]
fn get_and_list_print_the_core_json() {
    let env = Env::new();
    for (what, text) in puts() {
        env.json(&["checkpoint", what, "t", &text]);
    }
    let store = env.store();

    let newest = env.json(&["checkpoint", "get", "t"]);
    assert_eq!(
        newest,
        serde_json::to_value(store.checkpoint_get("t", "", None).unwrap()).unwrap(),
        "{newest:#}"
    );
    assert_eq!(newest["id"], "cp-2");
    assert_eq!(newest["values"]["messages"], value(SECOND));
    let first = env.json(&["checkpoint", "get", "t", "--ns", "", "--id", "cp-1"]);
    assert_eq!(first["values"]["messages"], value(FIRST));
    // The special channel's fixed index sorts first.
    assert_eq!(first["writes"][0]["channel"], "__error__");
    assert_eq!(first["writes"][0]["idx"], -1);
    assert_eq!(first["writes"][1]["idx"], 0);
    assert_eq!(
        env.json(&["checkpoint", "get", "t", "--id", "cp-9"]),
        Value::Null
    );
    assert_eq!(
        env.json(&["checkpoint", "get", "nobody"]),
        Value::Null,
        "a thread without a log"
    );

    let all = env.json(&["checkpoint", "list"]);
    assert_eq!(
        all,
        serde_json::to_value(store.checkpoint_list(&CheckpointQuery::default()).unwrap()).unwrap()
    );
    let ids: Vec<&Value> = all.as_array().unwrap().iter().map(|t| &t["id"]).collect();
    assert_eq!(ids, [&json!("cp-2"), &json!("cp-1")], "newest first");
    let filtered = env.json(&[
        "checkpoint",
        "list",
        r#"{"threadId":"t","filter":{"run_id":"run-a"}}"#,
    ]);
    assert_eq!(filtered.as_array().map(Vec::len), Some(1), "{filtered}");
    assert_eq!(filtered[0]["id"], "cp-1");

    let text = env.text(&["checkpoint", "get", "t", "--id", "cp-1"]);
    assert!(
        text.contains("cp-1") && text.contains("step 1 · loop"),
        "{text}"
    );
    assert!(text.contains("messages = (json, "), "{text}");
    assert!(text.contains("write __error__"), "{text}");
    let listed = env.text(&["checkpoint", "list", r#"{"threadId":"t"}"#]);
    assert!(listed.find("cp-2") < listed.find("cp-1"), "{listed}");
    assert!(env
        .text(&["checkpoint", "list", r#"{"threadId":"nobody"}"#])
        .contains("no checkpoints"));
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let env = Env::new();
    let (_, first) = &puts()[0];
    env.json(&["checkpoint", "put", "t", first]);
    let log = env
        .store()
        .log_path(&sessionkit::conversation_session_id("t").unwrap())
        .unwrap();
    let before = std::fs::read(&log).unwrap();

    // Exit 6 is INVALID_INPUT (bindings/cli/README.md).
    let err = env.fails(
        &[
            "checkpoint",
            "put",
            "t",
            r#"{"checkpoint":{"id":"x","channel_values":{}}}"#,
        ],
        6,
    );
    assert!(err.contains("sessionkit checkpoint: error:"), "{err}");
    env.fails(&["checkpoint", "put", "t", r#"{"checkpoint":{}}"#], 6);
    env.fails(
        &[
            "checkpoint",
            "put",
            "t",
            r#"{"checkpoint":{"id":"x"},"colour":1}"#,
        ],
        6,
    );
    let err = env.fails(
        &[
            "checkpoint",
            "writes",
            "t",
            r#"{"checkpointId":"cp-1","taskId":"a","writes":[{"channel":"c","value":{"type":"json","bytes":"not base64!"}}]}"#,
        ],
        6,
    );
    assert!(err.contains("base64"), "{err}");
    env.fails(&["checkpoint", "writes", "t", r#"{"checkpointId":""}"#], 6);
    let err = env.fails(&["checkpoint", "prune", "--strategy", "sometimes", "t"], 6);
    assert!(err.contains("keep_latest"), "{err}");
    env.fails(&["checkpoint", "list", "[]"], 6);
    // Usage errors: clap's exit 2.
    env.fails(&["checkpoint", "prune", "--strategy", "delete"], 2);
    env.fails(&["checkpoint", "delete-runs"], 2);
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn delete_moves_the_thread_to_the_trash_and_restore_brings_it_back() {
    let env = Env::new();
    for (what, text) in puts() {
        env.json(&["checkpoint", what, "t", &text]);
    }
    let session = sessionkit::conversation_session_id("t").unwrap();
    let text = env.text(&["checkpoint", "delete", "t"]);
    assert!(
        text.contains(&format!("sessionkit restore {session}")),
        "{text}"
    );
    assert_eq!(env.json(&["checkpoint", "get", "t"]), Value::Null);
    assert_eq!(env.json(&["trash"])[0]["id"], json!(session));
    assert_eq!(
        env.json(&["checkpoint", "delete", "t"]),
        json!({"threadId": "t", "sessionId": session, "trashed": false})
    );
    assert!(env
        .text(&["checkpoint", "delete", "t"])
        .contains("nothing to delete"));
    env.json(&["restore", &session]);
    assert_eq!(env.json(&["checkpoint", "get", "t"])["id"], "cp-2");

    // Prune with delete is a delete too.
    env.json(&["checkpoint", "prune", "--strategy", "delete", "t"]);
    assert_eq!(env.json(&["checkpoint", "list"]), json!([]));
}
