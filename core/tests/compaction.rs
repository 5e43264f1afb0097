//! Compaction, the model view, resume-at and fork, as scenarios.

use serde_json::{json, Value};
use sessionkit::{
    CompactionPolicy, CreateOptions, Durability, ErrorKind, ForkOptions, ModelViewOptions, Session,
    Store, StoreOptions,
};

fn store() -> (tempfile::TempDir, Store) {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let store = Store::open(
        &project,
        StoreOptions {
            home: Some(home.path().to_path_buf()),
            durability: Durability::Never,
            ..Default::default()
        },
    )
    .unwrap();
    (home, store)
}

fn ids(msgs: &[sessionkit::Message]) -> Vec<String> {
    msgs.iter().map(|m| m.id().to_string()).collect()
}

fn contents(msgs: &[sessionkit::Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| match &m.value()["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn mv(s: &Session) -> Vec<sessionkit::Message> {
    let tail = s.model_view(&ModelViewOptions::default()).unwrap();
    let full = s
        .read()
        .unwrap()
        .model_view(&ModelViewOptions::default())
        .unwrap();
    assert_eq!(ids(&tail), ids(&full), "tail read and full fold agree");
    assert_eq!(contents(&tail), contents(&full));
    tail
}

/// system, then `turns` user/assistant pairs with ~400 bytes each.
fn conversation(s: &Session, turns: usize) -> Vec<sessionkit::Message> {
    let mut out = vec![s
        .append(json!({"role": "system", "content": "You are a coding agent."}))
        .unwrap()];
    for t in 0..turns {
        out.push(
            s.append(
                json!({"role": "user", "content": format!("question {t} {}", "q".repeat(400))}),
            )
            .unwrap(),
        );
        out.push(
            s.append(
                json!({"role": "assistant", "content": format!("answer {t} {}", "a".repeat(400))}),
            )
            .unwrap(),
        );
    }
    out
}

#[test]
fn compaction_replaces_in_model_view_and_flags_in_ui() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 6);
    let plan = s
        .select_compaction(&CompactionPolicy {
            token_budget: 700,
            keep_last_turns: 2,
            summary_tokens: 50,
        })
        .unwrap()
        .unwrap();
    // Earliest non-system run, never the last two turns.
    assert_eq!(plan.replaces.first().unwrap(), msgs[1].id());
    let kept_from = msgs.len() - 4;
    assert!(plan.replaces.len() < kept_from);
    assert!(!plan.replaces.contains(&msgs[kept_from].id().to_string()));
    assert_eq!(plan.messages.len(), plan.replaces.len());
    assert!(plan.tokens_after < plan.tokens_before);

    let summary = s
        .apply_compaction(&plan.replaces, json!("Summary of the early questions."))
        .unwrap();
    let view = mv(&s);
    assert_eq!(view[0].id(), msgs[0].id(), "the system prompt stays first");
    assert_eq!(
        view[1].id(),
        summary.id(),
        "the summary takes the place of what it replaces"
    );
    assert!(ids(&view).iter().all(|i| !plan.replaces.contains(i)));
    assert_eq!(view.len(), msgs.len() - plan.replaces.len() + 1);
    // The originals stay in the log, flagged in the UI view.
    let ui = s.read().unwrap().ui_view().unwrap();
    assert_eq!(ui.len(), msgs.len() + 1);
    for m in &ui {
        let v = m.value();
        let expected = plan.replaces.contains(&m.id().to_string());
        assert_eq!(v["compacted"], expected, "{}", m.id());
    }
    assert_eq!(
        ui.last().unwrap().value()["visible"],
        false,
        "the summary is invisible in the UI"
    );
    // A later append follows the summary.
    let next = s
        .append(json!({"role": "user", "content": "after"}))
        .unwrap();
    assert_eq!(next.parent_id(), Some(summary.id()));
    assert_eq!(mv(&s).last().unwrap().id(), next.id());
}

#[test]
fn rewinding_before_a_compaction_brings_the_originals_back() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 4);
    let full_before = ids(&mv(&s));
    let replaces: Vec<String> = msgs[1..5].iter().map(|m| m.id().to_string()).collect();
    s.apply_compaction(&replaces, json!("sum")).unwrap();
    assert_eq!(mv(&s).len(), msgs.len() - 4 + 1);
    // Resume at the last message before the summary: the compaction is off the path.
    s.resume_at(msgs.last().unwrap().id()).unwrap();
    assert_eq!(ids(&mv(&s)), full_before);
    let ui = s.read().unwrap().ui_view().unwrap();
    assert!(ui.iter().all(|m| m.value()["compacted"] == false));
    // Branch from an early message: again no compaction, and the tree keeps both.
    s.resume_at(msgs[2].id()).unwrap();
    s.append(json!({"role": "assistant", "content": "another answer"}))
        .unwrap();
    let view = s.read().unwrap();
    let branches = view.branches().unwrap();
    assert_eq!(branches.len(), 2, "{branches:?}");
    assert_eq!(branches.iter().filter(|b| b.is_active).count(), 1);
    assert_eq!(mv(&s).len(), 4);
}

#[test]
fn a_summary_can_cover_a_summary() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 6);
    let first: Vec<String> = msgs[1..5].iter().map(|m| m.id().to_string()).collect();
    let s1 = s.apply_compaction(&first, json!("first summary")).unwrap();
    let view = mv(&s);
    // Compact the first summary together with the next turn.
    let second: Vec<String> = view[1..4].iter().map(|m| m.id().to_string()).collect();
    assert_eq!(second[0], s1.id());
    let s2 = s
        .apply_compaction(&second, json!("second summary"))
        .unwrap();
    let view = mv(&s);
    assert_eq!(view[1].id(), s2.id());
    assert!(ids(&view).iter().all(|i| i != s1.id()));
    assert_eq!(contents(&view)[1], "second summary");
    assert_eq!(view.len(), msgs.len() - 6 + 1);
    // Resume at the head before s2: back to s1's view.
    s.resume_at(s1.id()).unwrap();
    let v = mv(&s);
    assert_eq!(v[1].id(), s1.id());
}

#[test]
fn compaction_input_is_checked() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 3);
    let log_before = std::fs::read(s.path()).unwrap();
    let gap = vec![msgs[1].id().to_string(), msgs[3].id().to_string()];
    let e = s.apply_compaction(&gap, json!("x")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("contiguous"), "{e}");
    assert_eq!(
        s.apply_compaction(&["nope".into()], json!("x"))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        s.apply_compaction(&[], json!("x")).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        s.apply_compaction(&[msgs[1].id().into()], json!(5))
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        std::fs::read(s.path()).unwrap(),
        log_before,
        "nothing written"
    );
    // Nothing to compact when the view fits.
    assert!(s
        .select_compaction(&CompactionPolicy::new(1_000_000))
        .unwrap()
        .is_none());
}

#[test]
fn tool_calls_stay_with_their_results() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "u".repeat(400)}))
        .unwrap();
    let call = s
        .append(
            json!({"role": "assistant", "content": "", "messageParams": {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}),
        )
        .unwrap();
    let r1 = s.append(json!({"role": "tool", "content": "r".repeat(2000), "messageParams": {"tool_call_id": "c1"}})).unwrap();
    s.append(json!({"role": "tool", "content": "r".repeat(2000), "messageParams": {"tool_call_id": "c2"}})).unwrap();
    for t in 0..2 {
        s.append(json!({"role": "user", "content": format!("later {t}")}))
            .unwrap();
        s.append(json!({"role": "assistant", "content": "ok"}))
            .unwrap();
    }
    // A budget the first three messages would satisfy: the cut moves past both results.
    let plan = s
        .select_compaction(&CompactionPolicy {
            token_budget: 700,
            keep_last_turns: 2,
            summary_tokens: 10,
        })
        .unwrap()
        .unwrap();
    assert_eq!(plan.replaces.len(), 4, "{:?}", plan.replaces);
    let split = vec![
        plan.replaces[0].clone(),
        call.id().to_string(),
        r1.id().to_string(),
    ];
    let e = s.apply_compaction(&split, json!("x")).unwrap_err();
    assert!(e.to_string().contains("c2"), "{e}");
}

#[test]
fn dangling_tool_calls_get_interrupted_results_in_both_styles() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "go"})).unwrap();
    let a = s
        .append(json!({"role": "assistant", "content": "", "messageParams": {"tool_calls": [
            {"id": "call_ok", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "call_lost", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}))
        .unwrap();
    s.append(
        json!({"role": "tool", "content": "fine", "messageParams": {"tool_call_id": "call_ok"}}),
    )
    .unwrap();
    let b = s
        .append(json!({"role": "assistant", "content": "", "contentParams": [
            {"type": "text", "text": "running"}, {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}]}))
        .unwrap();
    let view: Vec<Value> = mv(&s).iter().map(|m| m.value()).collect();
    assert_eq!(view.len(), 6);
    assert_eq!(view[1]["id"], a.id());
    assert_eq!(view[2]["messageParams"]["tool_call_id"], "call_ok");
    assert_eq!(view[3]["role"], "tool");
    assert_eq!(
        view[3]["messageParams"]["tool_call_id"], "call_lost",
        "after the real result"
    );
    assert_eq!(view[3]["meta"]["synthetic"], "interrupted");
    assert_eq!(view[4]["id"], b.id());
    assert_eq!(view[5]["role"], "user");
    assert_eq!(view[5]["contentParams"][0]["type"], "tool_result");
    assert_eq!(view[5]["contentParams"][0]["tool_use_id"], "toolu_1");
    // Nothing synthetic is written to the log.
    assert_eq!(s.read().unwrap().message_count(), 4);
}

#[test]
fn model_view_limits() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 5);
    let last3 = s
        .model_view(&ModelViewOptions {
            last_n: Some(3),
            token_budget: None,
        })
        .unwrap();
    assert_eq!(ids(&last3)[0], msgs[0].id(), "system prompt kept");
    assert_eq!(ids(&last3)[1..], ids(&msgs[msgs.len() - 3..]));
    let budget = s
        .model_view(&ModelViewOptions {
            last_n: None,
            token_budget: Some(250),
        })
        .unwrap();
    assert_eq!(
        budget.len(),
        1 + 2,
        "system + two ~105-token messages: {:?}",
        ids(&budget)
    );
    // Excluded messages never reach the model.
    s.append(
        json!({"role": "user", "content": "ui only notice", "meta": {"excludeFromModel": true}}),
    )
    .unwrap();
    assert!(contents(&mv(&s)).iter().all(|c| c != "ui only notice"));
}

#[test]
fn patches_after_a_compaction_reach_its_prefix() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 4);
    let replaces: Vec<String> = msgs[1..5].iter().map(|m| m.id().to_string()).collect();
    s.apply_compaction(&replaces, json!("sum")).unwrap();
    s.patch_message(
        msgs[0].id(),
        json!({"content": "You are a careful coding agent."}),
    )
    .unwrap();
    assert_eq!(contents(&mv(&s))[0], "You are a careful coding agent.");
}

#[test]
fn fork_at_a_message_copies_the_path_and_sidechains() {
    let (_h, store) = store();
    let s = store
        .create_session(CreateOptions {
            title: Some("Original".into()),
            id: None,
        })
        .unwrap();
    let msgs = conversation(&s, 3);
    s.patch_message(
        msgs[2].id(),
        json!({"meta": {"usage": {"output_tokens": 7}}}),
    )
    .unwrap();
    let ag = s
        .spawn_subagent(Some("helper"), json!({"description": "d"}))
        .unwrap();
    ag.append(json!({"role": "user", "content": "sub"}))
        .unwrap();
    ag.finish(json!("done"), false).unwrap();
    let late = s
        .append(json!({"role": "user", "content": "late"}))
        .unwrap();

    let at = msgs.last().unwrap().id().to_string();
    let f = store
        .fork_session(
            s.id(),
            ForkOptions {
                at: Some(at.clone()),
                title: None,
            },
        )
        .unwrap();
    assert_ne!(f.id(), s.id());
    assert_eq!(f.id().len(), s.id().len(), "fork ids do not grow");
    let fv = f.read().unwrap();
    let path = fv.active_path().unwrap();
    assert_eq!(ids(&path), ids(&msgs));
    assert!(path.iter().all(|m| m.value()["sessionId"] == f.id()));
    assert_eq!(
        path[2].value()["meta"]["usage"]["output_tokens"],
        7,
        "patches come along"
    );
    assert!(
        fv.message(late.id()).is_err(),
        "messages after the fork point stay behind"
    );
    let header = fv.header().unwrap();
    assert_eq!(
        header["forkedFrom"],
        json!({"sessionId": s.id(), "messageId": at})
    );
    let entry = store.session_entry(f.id()).unwrap();
    assert_eq!(entry.forked_from.as_ref().unwrap().session_id, s.id());
    assert_eq!(entry.title, "Original");
    assert_eq!(entry.message_count, 7);
    // The subagent spawned before the fork point came along, with its sidechain.
    let side = store.read_subagent(f.id(), "helper").unwrap();
    assert_eq!(side.active_path().unwrap()[0].value()["sessionId"], f.id());
    // The fork is a session like any other; its appends follow the fork point.
    let n = f
        .append(json!({"role": "user", "content": "in the fork"}))
        .unwrap();
    assert_eq!(n.parent_id(), Some(at.as_str()));
    // The source is untouched.
    assert_eq!(
        s.read()
            .unwrap()
            .active_path()
            .unwrap()
            .last()
            .unwrap()
            .id(),
        late.id()
    );
    // A fork of a fork.
    let ff = store.fork_session(f.id(), ForkOptions::default()).unwrap();
    assert_eq!(ff.read().unwrap().active_path().unwrap().len(), 8);
    // A fork before the spawn leaves the subagent behind.
    let early = store
        .fork_session(
            s.id(),
            ForkOptions {
                at: Some(msgs[2].id().to_string()),
                title: None,
            },
        )
        .unwrap();
    assert!(store.list_subagents(early.id()).unwrap().is_empty());
    assert_eq!(
        store
            .session_entry(ff.id())
            .unwrap()
            .forked_from
            .unwrap()
            .session_id,
        f.id()
    );
}

#[test]
fn fork_at_a_compacted_message_and_while_the_source_is_written() {
    let (_h, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let msgs = conversation(&s, 4);
    let replaces: Vec<String> = msgs[1..5].iter().map(|m| m.id().to_string()).collect();
    let sum = s.apply_compaction(&replaces, json!("sum")).unwrap();
    // At a compacted message: the compaction is not on the fork's path.
    let f = store
        .fork_session(
            s.id(),
            ForkOptions {
                at: Some(msgs[3].id().to_string()),
                title: None,
            },
        )
        .unwrap();
    assert_eq!(
        ids(&f.model_view(&ModelViewOptions::default()).unwrap()),
        ids(&msgs[..4])
    );
    // At the head (s is still open for writing): the compaction comes along.
    let g = store.fork_session(s.id(), ForkOptions::default()).unwrap();
    let gv = g.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(gv[1].id(), sum.id());
    assert_eq!(gv.len(), msgs.len() - 4 + 1);
    assert!(gv.iter().all(|m| m.value()["sessionId"] == g.id()));
    assert_eq!(
        store
            .fork_session(
                s.id(),
                ForkOptions {
                    at: Some("nope".into()),
                    title: None
                }
            )
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn large_blobs_are_shared_by_forks() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("p");
    std::fs::create_dir(&project).unwrap();
    let store = Store::open(
        &project,
        StoreOptions {
            home: Some(home.path().into()),
            durability: Durability::Never,
            blob_threshold: 1000,
            ..Default::default()
        },
    )
    .unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "tool", "content": "z".repeat(100_000)}))
        .unwrap();
    let f = store.fork_session(s.id(), ForkOptions::default()).unwrap();
    assert!(std::fs::metadata(f.path()).unwrap().len() < 2000);
    assert_eq!(store.blobs().list().unwrap().len(), 1);
    assert_eq!(
        f.model_view(&ModelViewOptions::default()).unwrap()[0].value()["content"]
            .as_str()
            .unwrap()
            .len(),
        100_000
    );
}

#[test]
fn fork_starts_its_file_history_at_the_fork_point() {
    let (home, store) = store();
    let file = home.path().join("project").join("a.txt");
    std::fs::write(&file, "v1").unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.user_input(json!({"content": "change a.txt"})).unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    std::fs::write(&file, "v2").unwrap();
    s.after_edit(&["a.txt"]).unwrap();
    let a1 = s
        .append(json!({"role": "assistant", "content": "v2 written"}))
        .unwrap();
    let u2 = s.user_input(json!({"content": "again"})).unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    std::fs::write(&file, "v3").unwrap();
    s.after_edit(&["a.txt"]).unwrap();

    // At a1: the files as they were then, i.e. the snapshot taken before u2.
    let f = store
        .fork_session(
            s.id(),
            ForkOptions {
                at: Some(a1.id().to_string()),
                title: None,
            },
        )
        .unwrap();
    let before_u2 = u2.value()["checkpointHash"].as_str().unwrap().to_string();
    assert_eq!(f.last_snapshot().unwrap(), Some(before_u2));
    // At the head: the source's latest snapshot.
    let g = store.fork_session(s.id(), ForkOptions::default()).unwrap();
    assert_eq!(g.last_snapshot().unwrap(), s.last_snapshot().unwrap());
    assert!(s.last_snapshot().unwrap().is_some());
}

/// A fork folds its index entry while it copies; rebuilding the index from the
/// fork's log must give the same entry (title from a blob, usage from messages
/// and patches, the last reply and tool call, a timestamp written with escapes).
#[test]
fn a_forks_index_entry_is_what_its_log_folds_to() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let options = StoreOptions {
        home: Some(home.path().join("store")),
        durability: Durability::Never,
        blob_threshold: 64,
        ..StoreOptions::default()
    };
    let store = Store::open(&project, options).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let s_id = &s.id().to_string();
    let long = "please refactor ".repeat(10);
    s.append(json!({"role": "user", "content": long})).unwrap();
    let a = s
        .append(json!({"role": "assistant", "content": "calling a tool",
            "meta": {"usage": {"input_tokens": 10, "output_tokens": 3}},
            "messageParams": {"tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "edit", "arguments": "{}"}}]}}))
        .unwrap();
    s.patch_message(
        a.id(),
        json!({"meta": {"usage": {"input_tokens": 10, "output_tokens": 5}}}),
    )
    .unwrap();
    s.update_state(json!({"status": "processing", "lastToolCall": {"name": "from state"}}))
        .unwrap();
    s.append(json!({"role": "tool", "content": "done", "messageParams": {"tool_call_id": "c1"}}))
        .unwrap();
    let last = s
        .append(json!({"role": "assistant", "content": ""}))
        .unwrap();
    // A line another writer spelled with escapes, which the fork parses whole.
    let line = format!(
        r#"{{"type":"message","id":"m-esc","parentId":"{}","sessionId":"{}","role":"assistant","content":"all done","timestamp":"2099-01-02\u005400:00:00.000Z","meta":{{"usage":{{"output_tokens":7}}}}}}"#,
        last.id(),
        s.id()
    );
    let path = s.path().to_path_buf();
    s.close().unwrap();
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut log, format!("{line}\n").as_bytes()).unwrap();

    let f = store.fork_session(s_id, ForkOptions::default()).unwrap();
    let forked = store.session_entry(f.id()).unwrap();
    assert_eq!(forked.title, long.trim()[..100]);
    assert_eq!(forked.updated_at, "2099-01-02T00:00:00.000Z");
    assert_eq!(forked.last_assistant_reply.as_deref(), Some("all done"));
    assert_eq!(forked.last_tool_call.as_ref().unwrap()["id"], "c1");
    assert_eq!(forked.token_usage["output_tokens"], 15);
    assert_eq!(forked.message_count, 5);
    drop(f);
    store.rebuild_index().unwrap();
    assert_eq!(store.session_entry(&forked.id).unwrap(), forked);
}
