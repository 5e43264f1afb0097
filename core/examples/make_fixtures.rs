//! Regenerate the golden store of `tests/fixtures/golden/home`, and the
//! checkpointer's store of `tests/fixtures/checkpoints/home` (FORMAT.md §24).
//!
//! ```text
//! cargo run -p sessionkit --example make_fixtures            # in place
//! cargo run -p sessionkit --example make_fixtures -- OUT_DIR # elsewhere
//! ```
//!
//! The store is written in deterministic mode (fixed clock, seeded ids) for the
//! project root `/`, which exists everywhere and canonicalizes to itself, so the
//! bytes are the same on every machine. `core/tests/fixtures.rs` regenerates it and
//! compares byte for byte: a change to what the library writes must come with a
//! fixture update (and a `docs/FORMAT.md` update). What each session must yield is
//! written by hand in `tests/fixtures/manifest.json`.

use std::path::{Path, PathBuf};

use serde_json::json;
use sessionkit::{
    ChannelValue, CheckpointPut, CreateOptions, Deterministic, Durability, ForkOptions, Store,
    StoreOptions, TypedValue,
};

/// The project root of the golden store.
pub const PROJECT_ROOT: &str = "/";

/// The options the golden store is written with. 2026-01-01T00:00:00.000Z, one
/// second per clock reading; a small blob threshold so that blobs appear.
pub fn options(home: &Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        durability: Durability::Never,
        blob_threshold: 256,
        deterministic: Some(Deterministic::new(1_767_225_600_000, 1000, 1)),
        ..StoreOptions::default()
    }
}

/// A source file large enough to go to a blob (read by a tool twice, stored once).
fn main_rs() -> String {
    let mut s = String::from(
        "use std::env;\n\nfn main() {\n    let args: Vec<String> = env::args().collect();\n",
    );
    for (i, flag) in ["--quiet", "--color", "--jobs", "--help"]
        .iter()
        .enumerate()
    {
        s.push_str(&format!(
            "    if args.iter().any(|a| a == \"{flag}\") {{\n        println!(\"flag {i}: {flag}\");\n    }}\n"
        ));
    }
    s.push_str("}\n");
    s
}

/// Write the golden store under `home` (which should not exist yet).
pub fn generate(home: &Path) -> sessionkit::Result<()> {
    let store = Store::open(PROJECT_ROOT, options(home))?;

    // 1. The main session: a system prompt, a tool round trip whose result goes to
    //    a blob, an answer that is patched, then rewound (set_head) and answered
    //    again, a batch, state records and a subagent.
    let s = store.create_session(CreateOptions::default())?;
    s.append(json!({
        "id": "sys-0", "role": "system",
        "content": "You are a careful coding agent.", "visible": false
    }))?;
    s.append(json!({
        "id": "u1", "role": "user", "content": "Add a --verbose flag to the CLI.",
        "checkpointHash": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    }))?;
    s.append(json!({
        "id": "a1", "role": "assistant", "content": "I'll read src/main.rs first.",
        "messageParams": {
            "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"src/main.rs\"}"}
            }],
            "reasoning_content": "The flags are parsed in main.rs."
        },
        "meta": {"usage": {"input_tokens": 120, "output_tokens": 30}}
    }))?;
    s.append(json!({
        "id": "t1", "role": "tool", "content": main_rs(),
        "messageParams": {"tool_call_id": "call_1"}
    }))?;
    s.append(json!({"id": "a2", "role": "assistant", "content": "Added --verbose."}))?;
    s.patch_message(
        "a2",
        json!({"meta": {"usage": {"input_tokens": 900, "output_tokens": 12}}}),
    )?;
    s.set_head(Some("t1"))?;
    let a2b = s.append(json!({
        "role": "assistant", "content": "Added --verbose and its short form -v.",
        "meta": {"usage": {"input_tokens": 950, "output_tokens": 20}}
    }))?;
    let a2b = a2b.id().to_string();
    s.append_batch(vec![
        json!({"id": "u2", "role": "user", "content": "Thanks! Now run the tests."}),
        json!({
            "id": "a3", "role": "assistant",
            "content": [{"type": "text", "text": "Running cargo test."}],
            "compacted": false,
            "meta": {"usage": {"input_tokens": 1000, "output_tokens": 8}}
        }),
    ])?;
    s.update_state(json!({
        "status": "processing", "activeTokens": 1028,
        "childProcesses": [{"pid": 4242, "command": "cargo test"}]
    }))?;
    let agent = s.spawn_subagent(
        Some("explorer-1"),
        json!({"task": "Find every use of --quiet", "model": "small"}),
    )?;
    agent.append(json!({"role": "user", "content": "Find every use of --quiet."}))?;
    agent.append(json!({
        "role": "assistant", "content": "",
        "messageParams": {"tool_calls": [{
            "id": "call_9", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\":\"src/main.rs\"}"}
        }]}
    }))?;
    agent.append(json!({
        "role": "tool", "content": main_rs(), "messageParams": {"tool_call_id": "call_9"}
    }))?;
    agent.append(json!({"role": "assistant", "content": "One use: src/main.rs line 5."}))?;
    agent.finish(json!({"summary": "One use: src/main.rs line 5."}), false)?;
    s.update_state(json!({"status": "completed"}))?;
    let id1 = s.id().to_string();
    s.close()?;

    // 2. A titled session whose assistant turn carries a large tool_use block in
    //    `contentParams` (so `contentParams` goes to a blob), renamed afterwards.
    let s2 = store.create_session(CreateOptions {
        title: Some("Scratch session".into()),
        id: None,
    })?;
    s2.append(json!({
        "id": "q1", "role": "user",
        "content": [{"type": "text", "text": "Write hello.txt with a long greeting."}]
    }))?;
    s2.append(json!({
        "id": "r1", "role": "assistant",
        "content": [{"type": "text", "text": "Writing it."}],
        "contentParams": [{
            "type": "tool_use", "id": "toolu_01", "name": "write_file",
            "input": {"path": "hello.txt", "content": "Hello, world! ".repeat(24)}
        }],
        "meta": {"usage": {"input_tokens": 40, "output_tokens": 90}}
    }))?;
    let id2 = s2.id().to_string();
    s2.close()?;
    store.rename_session(&id2, "Scratch: hello.txt")?;

    // 3. A session with a header and nothing else.
    store.create_session(CreateOptions::default())?.close()?;

    // 4. A fork of session 1 at a3 (it inherits the subagent, not the dead branch
    //    or the state), compacted, then continued.
    let f = store.fork_session(
        &id1,
        ForkOptions {
            at: Some("a3".into()),
            title: Some("Fork: add --quiet".into()),
        },
    )?;
    let replaces: Vec<String> = ["u1", "a1", "t1", a2b.as_str()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    f.apply_compaction(
        &replaces,
        json!("The user asked for a --verbose flag; it was added to src/main.rs with -v."),
    )?;
    f.append(json!({"id": "u3", "role": "user", "content": "Now add --quiet."}))?;
    f.append(json!({"id": "a4", "role": "assistant", "content": "Added --quiet."}))?;
    f.close()?;
    Ok(())
}

/// The thread of the checkpoints fixture.
pub const THREAD: &str = "user@example.com/chat";

fn typed(bytes: &[u8]) -> TypedValue {
    TypedValue {
        kind: "json".into(),
        bytes: bytes.to_vec(),
    }
}

/// A chat's message list after `n` turns, as LangGraph JS's serde writes it.
fn chat(n: usize) -> Vec<u8> {
    let msgs: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "turn {i}: {}",
                "the quick brown fox jumps over the lazy dog ".repeat(3)
            )
        })
        .collect();
    serde_json::to_vec(&msgs).unwrap_or_default()
}

/// A checkpoint of the fixture thread; `values` are its new channel versions.
fn checkpoint(
    id: &str,
    parent: Option<&str>,
    versions: serde_json::Value,
    values: Vec<(&str, &str, Option<Vec<u8>>)>,
    metadata: serde_json::Value,
) -> CheckpointPut {
    CheckpointPut {
        ns: String::new(),
        checkpoint: json!({"v": 4, "id": id, "ts": "2026-01-01T00:00:00+00:00",
            "channel_versions": versions, "versions_seen": {}})
        .as_object()
        .cloned()
        .unwrap_or_default(),
        metadata: metadata.as_object().cloned().unwrap_or_default(),
        parent_id: parent.map(str::to_owned),
        values: values
            .into_iter()
            .map(|(c, v, b)| ChannelValue {
                channel: c.into(),
                version: json!(v),
                value: b.map(|b| typed(&b)),
            })
            .collect(),
    }
}

/// Write the checkpoints fixture under `home`: a LangGraph thread of five
/// turns (deltas, a value over the blob threshold, an unchanged value, a
/// channel stored empty), pending writes (a special channel replaced, a
/// normal write kept as first written), a branch from an old checkpoint, a
/// subgraph namespace, a prune's drop record; then lines another writer left:
/// a value whose base the thread lacks, a writes record without its task, a
/// checkpoint record with a numeric id, and a torn last line.
pub fn generate_checkpoints(home: &Path) -> sessionkit::Result<()> {
    let store = Store::open(PROJECT_ROOT, options(home))?;
    let meta = |step: i64, source: &str| json!({"source": source, "step": step, "run_id": "run-1"});
    let mut parent: Option<String> = None;
    for turn in 1..=5usize {
        let id = format!("cp-{turn}");
        let v = format!("{turn:02}");
        let mut values = vec![("messages", v.as_str(), Some(chat(turn)))];
        if turn == 1 {
            values.push(("topic", "01", Some(b"\"foxes\"".to_vec())));
            values.push(("branch:to:agent", "01", None));
        }
        store.checkpoint_put(
            THREAD,
            checkpoint(
                &id,
                parent.as_deref(),
                json!({"messages": v, "topic": "01", "branch:to:agent": "01"}),
                values,
                meta(turn as i64, "loop"),
            ),
        )?;
        parent = Some(id);
    }
    store.checkpoint_put_writes(
        THREAD,
        "",
        "cp-5",
        "task-a",
        "~__pregel_pull, agent",
        vec![
            ("messages".into(), typed(b"[\"pending reply\"]")),
            ("__interrupt__".into(), typed(b"{\"value\": \"first\"}")),
        ],
    )?;
    store.checkpoint_put_writes(
        THREAD,
        "",
        "cp-5",
        "task-a",
        "~__pregel_pull, agent",
        vec![
            ("messages".into(), typed(b"[\"a retry, ignored\"]")),
            ("__interrupt__".into(), typed(b"{\"value\": \"second\"}")),
        ],
    )?;
    // A large tool result: over the store's blob threshold, in blobs/.
    // A large tool result (digits a generator made, which compress little):
    // over the store's blob threshold, in blobs/.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let digits: String = (0..1500)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'0' + (x % 10) as u8)
        })
        .collect();
    let big = serde_json::to_vec(&digits).unwrap_or_default();
    store.checkpoint_put(
        THREAD,
        checkpoint(
            "cp-6",
            Some("cp-5"),
            json!({"messages": "06", "topic": "01", "tool": "01"}),
            vec![("messages", "06", Some(chat(6))), ("tool", "01", Some(big))],
            meta(6, "loop"),
        ),
    )?;
    // Time travel: an update on cp-2 is a branch beside cp-3.
    store.checkpoint_put(
        THREAD,
        checkpoint(
            "cp-7",
            Some("cp-2"),
            json!({"messages": "03.5", "topic": "02"}),
            vec![
                ("messages", "03.5", Some(chat(2))),
                ("topic", "02", Some(b"\"dogs\"".to_vec())),
            ],
            meta(3, "update"),
        ),
    )?;
    // A subgraph's checkpoints, in their own namespace; the first one's run is
    // deleted (a drop record).
    for (id, parent, run) in [
        ("sub-1", None, "run-sub"),
        ("sub-2", Some("sub-1"), "run-1"),
    ] {
        let x = vec![("x", id, Some(id.as_bytes().to_vec()))];
        let mut put = checkpoint(id, parent, json!({"x": id}), x, meta(0, "loop"));
        put.metadata.insert("run_id".into(), run.into());
        put.ns = "agent:task-a".into();
        store.checkpoint_put(THREAD, put)?;
    }
    store.checkpoint_delete_for_runs(&["run-sub".to_string()])?;
    drop(store);
    // Lines another writer left, which readers skip.
    let store = Store::open(PROJECT_ROOT, options(home))?;
    let log = store.log_path(&sessionkit::conversation_session_id(THREAD)?)?;
    let io = |e| sessionkit::Error::Io {
        path: log.clone(),
        source: e,
    };
    let mut bytes = std::fs::read(&log).map_err(io)?;
    bytes.extend_from_slice(concat!(
        r#"{"type":"value","id":"0000000000000000000000000000000000000000000000000000000000000000","size":3,"encoding":"zstd","base":"1111111111111111111111111111111111111111111111111111111111111111","data":"AAAA"}"#, "\n",
        r#"{"type":"writes","ns":"","checkpointId":"cp-6","writes":[]}"#, "\n",
        r#"{"type":"checkpoint","ns":"","checkpointId":8,"checkpoint":{"id":8}}"#, "\n",
        r#"{"type":"checkpoint","ns":"","checkpointId":"cp-9","checkpoint":{"id":"cp-"#,
    ).as_bytes());
    std::fs::write(&log, bytes).map_err(io)?;
    Ok(())
}

fn main() {
    let out = match std::env::args_os().nth(1) {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/golden/home"),
    };
    if out.exists() {
        if let Err(e) = std::fs::remove_dir_all(&out) {
            eprintln!("cannot remove {}: {e}", out.display());
            std::process::exit(1);
        }
    }
    if let Err(e) = generate(&out) {
        eprintln!("make_fixtures: {e}");
        std::process::exit(1);
    }
    println!("wrote {}", out.display());
    // Beside `home`: `golden/home` → `checkpoints/home`, `OUT_DIR` → `OUT_DIR-checkpoints`.
    let cps = match std::env::args_os().nth(1) {
        Some(_) => PathBuf::from(format!("{}-checkpoints", out.display())),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/checkpoints/home"),
    };
    if cps.exists() {
        if let Err(e) = std::fs::remove_dir_all(&cps) {
            eprintln!("cannot remove {}: {e}", cps.display());
            std::process::exit(1);
        }
    }
    if let Err(e) = generate_checkpoints(&cps) {
        eprintln!("make_fixtures: {e}");
        std::process::exit(1);
    }
    println!("wrote {}", cps.display());
}
