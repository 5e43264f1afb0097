//! Graph checkpoints in sessions (FORMAT.md §24): what LangGraph's savers
//! rely on, held here for every interface, since the Python and Node savers
//! only convert types.

use std::path::Path;

use serde_json::{json, Map, Value};
use sessionkit::{
    conversation_session_id, next_channel_version, ChannelValue, CheckpointPut, CheckpointQuery,
    PruneStrategy, Store, StoreOptions, TypedValue,
};

fn store(home: &Path) -> Store {
    let options = StoreOptions {
        home: Some(home.to_path_buf()),
        ..StoreOptions::default()
    };
    Store::open(home.parent().unwrap(), options).unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn typed(bytes: &[u8]) -> TypedValue {
    TypedValue {
        kind: "json".into(),
        bytes: bytes.to_vec(),
    }
}

/// A checkpoint whose channels are at the given versions, with values for
/// the channels listed in `new`.
fn put(
    s: &Store,
    thread: &str,
    id: &str,
    parent: Option<&str>,
    versions: &[(&str, &str)],
    new: &[(&str, &str, &[u8])],
    metadata: Value,
) {
    let versions: Map<String, Value> = versions
        .iter()
        .map(|(c, v)| ((*c).to_owned(), json!(v)))
        .collect();
    s.checkpoint_put(
        thread,
        CheckpointPut {
            ns: String::new(),
            checkpoint: obj(json!({"v": 1, "id": id, "ts": "2026-12-02T00:00:00Z",
                "channel_versions": versions, "versions_seen": {}})),
            metadata: obj(metadata),
            parent_id: parent.map(str::to_owned),
            values: new
                .iter()
                .map(|(c, v, b)| ChannelValue {
                    channel: (*c).into(),
                    version: json!(v),
                    value: Some(typed(b)),
                })
                .collect(),
        },
    )
    .unwrap();
}

/// A chat-shaped value: `n` messages, as a list serialized whole.
fn chat(n: usize) -> Vec<u8> {
    let msgs: Vec<String> = (0..n)
        .map(|i| format!("message {i}: {}", "lorem ipsum dolor sit amet ".repeat(8)))
        .collect();
    serde_json::to_vec(&msgs).unwrap()
}

fn log_len(home: &Path, s: &Store, thread: &str) -> u64 {
    let _ = home;
    let path = s
        .log_path(&conversation_session_id(thread).unwrap())
        .unwrap();
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn a_checkpoint_comes_back_with_its_values_parent_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir.path().join("home"));
    put(
        &s,
        "user@example.com/1",
        "1",
        None,
        &[("a", "1"), ("b", "1")],
        &[("a", "1", b"A1"), ("b", "1", b"B1")],
        json!({"step": -1}),
    );
    put(
        &s,
        "user@example.com/1",
        "2",
        Some("1"),
        &[("a", "2"), ("b", "1")],
        &[("a", "2", b"A2")],
        json!({"step": 0, "run_id": "r"}),
    );
    s.checkpoint_put_writes(
        "user@example.com/1",
        "",
        "2",
        "t2",
        "~path",
        vec![
            ("a".into(), typed(b"w1")),
            ("__interrupt__".into(), typed(b"i1")),
        ],
    )
    .unwrap();
    s.checkpoint_put_writes(
        "user@example.com/1",
        "",
        "2",
        "t1",
        "",
        vec![("b".into(), typed(b"w0"))],
    )
    .unwrap();
    // A task's write at an index it wrote is kept; a special channel's is replaced.
    s.checkpoint_put_writes(
        "user@example.com/1",
        "",
        "2",
        "t2",
        "~path",
        vec![
            ("a".into(), typed(b"other")),
            ("__interrupt__".into(), typed(b"i2")),
        ],
    )
    .unwrap();

    let t = s
        .checkpoint_get("user@example.com/1", "", None)
        .unwrap()
        .unwrap();
    assert_eq!(t.thread_id, "user@example.com/1");
    assert_eq!((t.id.as_str(), t.parent_id.as_deref()), ("2", Some("1")));
    assert_eq!(t.metadata["run_id"], "r");
    assert_eq!(
        t.values,
        vec![("a".into(), typed(b"A2")), ("b".into(), typed(b"B1"))]
    );
    let w: Vec<_> = t
        .writes
        .iter()
        .map(|w| {
            (
                w.task_id.as_str(),
                w.channel.as_str(),
                w.value.bytes.as_slice(),
                w.idx,
            )
        })
        .collect();
    assert_eq!(
        w,
        vec![
            ("t1", "b", &b"w0"[..], 0),
            ("t2", "__interrupt__", &b"i2"[..], -3),
            ("t2", "a", &b"w1"[..], 0)
        ]
    );

    let first = s
        .checkpoint_get("user@example.com/1", "", Some("1"))
        .unwrap()
        .unwrap();
    assert_eq!(
        first.values,
        vec![("a".into(), typed(b"A1")), ("b".into(), typed(b"B1"))]
    );
    assert!(first.writes.is_empty());
    assert!(s
        .checkpoint_get("user@example.com/1", "", Some("9"))
        .unwrap()
        .is_none());
    assert!(s.checkpoint_get("another", "", None).unwrap().is_none());
    // A read of a thread that does not exist creates nothing.
    assert!(!s
        .session_ids()
        .unwrap()
        .contains(&conversation_session_id("another").unwrap()));
}

#[test]
fn list_filters_orders_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir.path().join("home"));
    for (i, src) in ["input", "loop", "loop", "update"].iter().enumerate() {
        let id = format!("{i}");
        let parent = (i > 0).then(|| format!("{}", i - 1));
        put(
            &s,
            "t",
            &id,
            parent.as_deref(),
            &[],
            &[],
            json!({"source": src, "step": i}),
        );
    }
    put(
        &s,
        "u",
        "5",
        None,
        &[],
        &[],
        json!({"source": "loop", "step": 1.0}),
    );
    let ids = |q: CheckpointQuery| -> Vec<String> {
        s.checkpoint_list(&q)
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect()
    };
    let thread = |t: &str| CheckpointQuery {
        thread_id: Some(t.into()),
        ..CheckpointQuery::default()
    };
    assert_eq!(ids(thread("t")), ["3", "2", "1", "0"]);
    assert_eq!(
        ids(CheckpointQuery {
            limit: Some(2),
            ..thread("t")
        }),
        ["3", "2"]
    );
    assert_eq!(
        ids(CheckpointQuery {
            before: Some("2".into()),
            ..thread("t")
        }),
        ["1", "0"]
    );
    let filter = |f: Value| Some(obj(f));
    assert_eq!(
        ids(CheckpointQuery {
            filter: filter(json!({"source": "loop"})),
            ..thread("t")
        }),
        ["2", "1"]
    );
    // Every thread; 1 and 1.0 are equal, as in the languages that wrote them.
    let mut all = ids(CheckpointQuery {
        filter: filter(json!({"step": 1})),
        ..CheckpointQuery::default()
    });
    all.sort();
    assert_eq!(all, ["1", "5"]);
    assert!(ids(CheckpointQuery {
        filter: filter(json!({"missing": "x"})),
        ..thread("t")
    })
    .is_empty());
    assert_eq!(
        ids(CheckpointQuery {
            filter: filter(json!({"missing": null})),
            ..thread("t")
        })
        .len(),
        4
    );
}

#[test]
fn an_unchanged_value_is_stored_once_and_a_changed_one_as_a_delta() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let s = store(&home);
    let mut parent: Option<String> = None;
    let mut sizes = Vec::new();
    for step in 1..=40usize {
        let id = format!("{step:04}");
        let v = format!("{step}");
        let value = chat(step);
        put(
            &s,
            "chat",
            &id,
            parent.as_deref(),
            &[("messages", &v)],
            &[("messages", &v, &value)],
            json!({"step": step}),
        );
        sizes.push(log_len(&home, &s, "chat"));
        parent = Some(id);
    }
    // The 40th value alone is ~10 KB; growth per step stays far below it.
    let whole = chat(40).len() as u64;
    let growth = sizes[39] - sizes[38];
    assert!(
        growth * 10 < whole,
        "a step grew the log by {growth} bytes for a {whole}-byte value"
    );
    // A checkpoint that changes only another channel adds no copy of the list.
    let before = log_len(&home, &s, "chat");
    put(
        &s,
        "chat",
        "0041",
        Some("0040"),
        &[("messages", "40"), ("other", "1")],
        &[("other", "1", b"x")],
        json!({}),
    );
    assert!(log_len(&home, &s, "chat") - before < 600);
    // Every checkpoint decodes to its own value, from this handle and a fresh one.
    for fresh in [false, true] {
        let s = if fresh { store(&home) } else { s.clone() };
        for step in [1usize, 17, 32, 33, 40] {
            let t = s
                .checkpoint_get("chat", "", Some(&format!("{step:04}")))
                .unwrap()
                .unwrap();
            assert_eq!(t.values[0].1.bytes, chat(step), "step {step}");
        }
    }
}

#[test]
fn two_handles_see_each_others_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (a, b) = (store(&home), store(&home));
    put(
        &a,
        "t",
        "1",
        None,
        &[("m", "1")],
        &[("m", "1", &chat(3))],
        json!({}),
    );
    assert_eq!(b.checkpoint_get("t", "", None).unwrap().unwrap().id, "1");
    put(
        &b,
        "t",
        "2",
        Some("1"),
        &[("m", "2")],
        &[("m", "2", &chat(4))],
        json!({}),
    );
    let t = a.checkpoint_get("t", "", None).unwrap().unwrap();
    assert_eq!((t.id.as_str(), t.values[0].1.bytes.clone()), ("2", chat(4)));
}

#[test]
fn prune_delete_for_runs_copy_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir.path().join("home"));
    for (t, run) in [("a", "r1"), ("b", "r2")] {
        put(
            &s,
            t,
            "1",
            None,
            &[("m", "1")],
            &[("m", "1", b"one")],
            json!({"run_id": run}),
        );
        put(
            &s,
            t,
            "2",
            Some("1"),
            &[("m", "2")],
            &[("m", "2", b"two")],
            json!({"run_id": "r3"}),
        );
        s.checkpoint_put_writes(t, "", "2", "task", "", vec![("m".into(), typed(b"w"))])
            .unwrap();
    }
    let ids = |t: &str| -> Vec<String> {
        s.checkpoint_list(&CheckpointQuery {
            thread_id: Some(t.into()),
            ..CheckpointQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect()
    };
    s.checkpoint_copy_thread("a", "c").unwrap();
    assert_eq!(ids("c"), ["2", "1"]);
    assert_eq!(
        s.checkpoint_get("c", "", None)
            .unwrap()
            .unwrap()
            .writes
            .len(),
        1
    );

    s.checkpoint_delete_for_runs(&["r1".into()]).unwrap();
    assert_eq!(ids("a"), ["2"]);
    assert_eq!(ids("b"), ["2", "1"]);
    s.checkpoint_prune(&["b".into()], PruneStrategy::KeepLatest)
        .unwrap();
    assert_eq!(ids("b"), ["2"]);
    assert_eq!(
        s.checkpoint_get("b", "", None)
            .unwrap()
            .unwrap()
            .writes
            .len(),
        1
    );

    // Deleting a thread moves it to the trash, from which it comes back whole.
    s.checkpoint_delete_thread("c").unwrap();
    assert!(ids("c").is_empty());
    let sid = conversation_session_id("c").unwrap();
    let trash = s.list_trash().unwrap();
    assert_eq!(
        (trash[0].id.as_str(), trash[0].reason.as_str()),
        (sid.as_str(), "deleted")
    );
    s.restore_session(&sid).unwrap();
    // As it was: checkpoint 1 of the copy was run r1's, deleted above.
    assert_eq!(ids("c"), ["2"]);
    assert!("keep".parse::<PruneStrategy>().is_err());
}

#[test]
fn delta_history_walks_the_parent_chain() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir.path().join("home"));
    put(
        &s,
        "t",
        "1",
        None,
        &[("d", "1")],
        &[("d", "1", b"seed")],
        json!({}),
    );
    s.checkpoint_put_writes("t", "", "1", "x", "", vec![("d".into(), typed(b"w1"))])
        .unwrap();
    // Later versions store no value (a delta channel's steps between snapshots).
    for (id, parent, w) in [("2", "1", &b"w2"[..]), ("3", "2", &b"pending"[..])] {
        s.checkpoint_put(
            "t",
            CheckpointPut {
                checkpoint: obj(json!({"id": id, "channel_versions": {"d": id}})),
                parent_id: Some(parent.into()),
                values: vec![ChannelValue {
                    channel: "d".into(),
                    version: json!(id),
                    value: None,
                }],
                ..CheckpointPut::default()
            },
        )
        .unwrap();
        s.checkpoint_put_writes(
            "t",
            "",
            id,
            "x",
            "",
            vec![("d".into(), typed(w)), ("e".into(), typed(b"no"))],
        )
        .unwrap();
    }
    assert!(s
        .checkpoint_get("t", "", Some("2"))
        .unwrap()
        .unwrap()
        .values
        .is_empty());
    let h = s
        .checkpoint_delta_history("t", "", None, &["d".into(), "z".into()])
        .unwrap();
    let d: Vec<_> = h[0].writes.iter().map(|w| w.value.bytes.clone()).collect();
    assert_eq!(d, [b"w1".to_vec(), b"w2".to_vec()]);
    assert_eq!(h[0].seed, Some(typed(b"seed")));
    assert!(h[1].writes.is_empty() && h[1].seed.is_none());
}

#[test]
fn bad_input_is_refused_with_what_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir.path().join("home"));
    let e = s.checkpoint_put("t", CheckpointPut::default()).unwrap_err();
    assert!(e.to_string().contains("\"id\""), "{e}");
    let e = s
        .checkpoint_put(
            "t",
            CheckpointPut {
                checkpoint: obj(json!({"id": "1", "channel_values": {}})),
                ..CheckpointPut::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("channel_values"), "{e}");
    assert!(s
        .checkpoint_put(
            "",
            CheckpointPut {
                checkpoint: obj(json!({"id": "1"})),
                ..CheckpointPut::default()
            }
        )
        .is_err());
    assert!(next_channel_version(Some(&json!({}))).is_err());
}

#[test]
fn next_versions_increase_and_differ() {
    let a = next_channel_version(None).unwrap();
    let b = next_channel_version(Some(&json!(a))).unwrap();
    assert!(a.starts_with("00000000000000000000000000000001."));
    assert!(b > a);
    assert!(next_channel_version(Some(&json!(7)))
        .unwrap()
        .starts_with(&format!("{:032}.", 8)));
    let (c, d) = (
        next_channel_version(Some(&json!(a))).unwrap(),
        next_channel_version(Some(&json!(a))).unwrap(),
    );
    assert_ne!(c, d, "versions made on two branches must differ");
}

#[test]
fn a_checkpoint_before_format_4_gets_its_parents_sends() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir.path().join("home"));
    let cp = |id: &str, v: u32, parent: Option<&str>| CheckpointPut {
        checkpoint: obj(json!({"id": id, "v": v, "channel_versions": {}})),
        parent_id: parent.map(str::to_owned),
        ..CheckpointPut::default()
    };
    s.checkpoint_put("t", cp("0", 1, None)).unwrap();
    s.checkpoint_put_writes(
        "t",
        "",
        "0",
        "task-2",
        "",
        vec![("__pregel_tasks".into(), typed(b"send-3"))],
    )
    .unwrap();
    s.checkpoint_put_writes(
        "t",
        "",
        "0",
        "task-1",
        "",
        vec![
            ("__pregel_tasks".into(), typed(b"send-1")),
            ("x".into(), typed(b"no")),
            ("__pregel_tasks".into(), typed(b"send-2")),
        ],
    )
    .unwrap();
    s.checkpoint_put("t", cp("1", 1, Some("0"))).unwrap();
    s.checkpoint_put("t", cp("2", 4, Some("0"))).unwrap();
    let sends = |id: &str| -> Vec<Vec<u8>> {
        s.checkpoint_get("t", "", Some(id))
            .unwrap()
            .unwrap()
            .pending_sends
            .into_iter()
            .map(|v| v.bytes)
            .collect()
    };
    assert_eq!(
        sends("1"),
        [b"send-1".to_vec(), b"send-2".to_vec(), b"send-3".to_vec()]
    );
    assert!(sends("0").is_empty(), "no parent");
    assert!(sends("2").is_empty(), "format 4 keeps sends as tasks");
}
