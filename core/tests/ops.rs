//! The operations hosts call through the bindings: look-up by id prefix, info
//! objects, export, rewind preview, token totals and doctor.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};
use sessionkit::{
    CreateOptions, DoctorOptions, DoctorPhase, DoctorProgress, Durability, ErrorKind, ExportFormat,
    HistoryState, IndexState, RewindMode, Session, Store, StoreOptions,
};

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, Env};

fn env() -> Env {
    env_with(StoreOptions {
        durability: Durability::Never,
        ..StoreOptions::default()
    })
}

fn create(store: &Store, id: &str) -> Session {
    store
        .create_session(CreateOptions {
            title: None,
            id: Some(id.into()),
        })
        .unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn append_bytes(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn sessions_are_found_by_unique_prefix() {
    let e = env();
    for id in ["alpha-1", "alpha-2", "beta"] {
        create(&e.store, id).close().unwrap();
    }
    // Not a session: a store entry's name, and a file that only looks like one.
    std::fs::write(e.store.dir().join("blobs.jsonl"), b"").unwrap();
    assert_eq!(
        e.store.session_ids().unwrap(),
        ["alpha-1", "alpha-2", "beta"]
    );
    assert_eq!(e.store.resolve_session("b").unwrap(), "beta");
    assert_eq!(e.store.resolve_session("alpha-2").unwrap(), "alpha-2");

    let err = e.store.resolve_session("alpha").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let msg = err.to_string();
    assert!(
        msg.contains("ambiguous") && msg.contains("alpha-1") && msg.contains("alpha-2"),
        "{msg}"
    );
    let err = e.store.resolve_session("zzz").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("\"zzz\""), "{err}");
    assert_eq!(
        e.store.resolve_session("").unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        e.store.resolve_session("blobs").unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn messages_are_found_by_unique_prefix_on_any_branch() {
    let e = env();
    let s = create(&e.store, "s");
    s.append(json!({"id": "m-1", "role": "user", "content": "one"}))
        .unwrap();
    s.append(json!({"id": "m-2", "role": "assistant", "content": "two"}))
        .unwrap();
    // A second branch from m-1; m-2 is off the active path now.
    s.set_head(Some("m-1")).unwrap();
    s.append(json!({"id": "n", "role": "assistant", "content": "other"}))
        .unwrap();
    let view = s.read().unwrap();
    assert_eq!(view.resolve_message("m-2").unwrap(), "m-2");
    assert_eq!(view.resolve_message("n").unwrap(), "n");
    let err = view.resolve_message("m").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let log = e.store.log_path("s").unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid input: ambiguous: message id prefix \"m\" matches 2 messages in {}: m-1, m-2",
            log.display()
        )
    );
    let err = view.resolve_message("x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.to_string().contains(&log.display().to_string()),
        "{err}"
    );
    s.close().unwrap();
}

#[test]
fn info_objects_have_the_keys_hosts_read() {
    let e = env();
    let info = serde_json::to_value(e.store.info()).unwrap();
    assert_eq!(
        keys(&info),
        ["projectRoot", "dir", "projectCode", "indexPath"]
    );
    assert_eq!(info["dir"], e.store.dir().to_str().unwrap());
    assert_eq!(info["projectCode"], e.store.project_code());
    assert_eq!(
        info["projectRoot"],
        std::fs::canonicalize(e.project.path())
            .unwrap()
            .to_str()
            .unwrap()
    );

    let s = create(&e.store, "s");
    s.append(json!({"id": "u", "role": "user", "content": "hi"}))
        .unwrap();
    s.update_state(json!({"status": "completed"})).unwrap();
    let info = serde_json::to_value(s.info()).unwrap();
    assert_eq!(
        keys(&info),
        ["id", "path", "head", "entry", "openReport", "pruned"]
    );
    assert_eq!(info["id"], "s");
    assert_eq!(info["head"], "u");
    assert_eq!(info["entry"]["messageCount"], 1);
    assert_eq!(info["entry"]["status"], "completed");
    assert_eq!(info["pruned"], json!([]));
    assert_eq!(
        info["path"],
        e.store.log_path("s").unwrap().to_str().unwrap()
    );

    let v = serde_json::to_value(s.read().unwrap().info()).unwrap();
    assert_eq!(
        keys(&v),
        ["head", "header", "messageCount", "report", "records"]
    );
    assert_eq!(v["head"], "u");
    assert_eq!(v["messageCount"], 1);
    assert_eq!(v["header"]["id"], "s");
    assert_eq!(v["records"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(v["report"]["skipped"], json!([]));
    s.close().unwrap();
}

#[test]
fn token_totals_of_an_index_entry_sum_the_usage_reported() {
    let e = env();
    let s = create(&e.store, "s");
    s.append(json!({"role": "user", "content": "q"})).unwrap();
    s.append(json!({"role": "assistant", "content": "a",
        "meta": {"usage": {"input_tokens": 100, "output_tokens": 20}}}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "b",
        "meta": {"usage": {"input_tokens": 5, "output_tokens": 1}}}))
        .unwrap();
    let t = s.entry().token_totals();
    assert_eq!(
        (t.input, t.output, t.total),
        (Some(105), Some(21), Some(126))
    );
    s.close().unwrap();
    let t = e.store.session_entry("s").unwrap().token_totals();
    assert_eq!(t.total, Some(126));
}

/// A session with a tool call in each style, a hidden message and a large tool
/// result stored as a blob.
fn session_to_export(e: &Env) -> String {
    let s = create(&e.store, "exp");
    s.append(json!({"id": "u1", "role": "user", "content": "Fix  the\ntest"}))
        .unwrap();
    s.append(
        json!({"id": "a1", "role": "assistant", "content": "Reading.",
        "messageParams": {"tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "read", "arguments": "{\"path\":\"a.rs\"}"}}]}}),
    )
    .unwrap();
    s.append(
        json!({"id": "t1", "role": "tool", "content": "fn main() {}\n",
        "messageParams": {"tool_call_id": "c1"}}),
    )
    .unwrap();
    s.append(json!({"id": "a2", "role": "assistant", "content": [
            {"type": "text", "text": "Editing."},
            {"type": "tool_use", "id": "t-9", "name": "edit", "input": {"path": "a.rs"}}]}))
        .unwrap();
    s.append(
        json!({"id": "u2", "role": "user", "content": "", "visible": false,
        "contentParams": [{"type": "tool_result", "tool_use_id": "t-9", "content": "ok"}]}),
    )
    .unwrap();
    s.close().unwrap();
    let created = e.store.session_entry("exp").unwrap().created_at;
    format!(
        "# Fix the test\n\n\
         Session `exp`, created {created}, 5 messages on the active path.\n\n\
         ## User\n\nFix  the\ntest\n\n\
         ## Assistant\n\nReading.\n\n\
         <details><summary>Tool call <code>read</code> (<code>c1</code>)</summary>\n\n```json\n{{\"path\":\"a.rs\"}}\n```\n\n</details>\n\n\
         ## Tool\n\n\
         <details><summary>Tool result (<code>c1</code>)</summary>\n\n```\nfn main() {{}}\n```\n\n</details>\n\n\
         ## Assistant\n\nEditing.\n\n\
         <details><summary>Tool call <code>edit</code> (<code>t-9</code>)</summary>\n\n```json\n{{\"path\":\"a.rs\"}}\n```\n\n</details>\n\n\
         ## User (hidden)\n\n\
         <details><summary>Tool result (<code>t-9</code>)</summary>\n\n```\nok\n```\n\n</details>\n\n"
    )
}

#[test]
fn export_as_markdown_renders_messages_tool_calls_and_results() {
    let e = env();
    let want = session_to_export(&e);
    let md = e
        .store
        .export_session("exp", ExportFormat::Markdown)
        .unwrap();
    assert_eq!(md, want);
}

#[test]
fn export_as_jsonl_is_one_seed_style_message_per_line_with_blobs_inlined() {
    let e = env();
    let s = create(&e.store, "big");
    let huge = "x".repeat(300 << 10); // over the blob threshold
    s.append(json!({"id": "u", "role": "user", "content": "go"}))
        .unwrap();
    s.append(json!({"id": "t", "role": "tool", "content": huge}))
        .unwrap();
    s.close().unwrap();
    let raw = std::fs::read_to_string(e.store.log_path("big").unwrap()).unwrap();
    assert!(!raw.contains(&huge), "the test needs a blob");

    let out = e.store.export_session("big", ExportFormat::Jsonl).unwrap();
    assert!(out.ends_with('\n'));
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert!(l.get("type").is_none(), "{l}");
        assert_eq!(l["visible"], true);
        assert_eq!(l["compacted"], false);
        assert_eq!(l["sessionId"], "big");
    }
    assert_eq!(lines[0]["id"], "u");
    assert_eq!(lines[1]["content"], huge.as_str());

    assert_eq!(
        e.store
            .export_session("nope", ExportFormat::Jsonl)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

/// A session with two user turns, each with a snapshot before it; the second
/// turn edits a.txt and creates b.txt.
fn session_with_files(e: &Env) -> Session {
    let root = e.project.path();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let s = create(&e.store, "files");
    s.user_input(json!({"id": "u1", "content": "start"}))
        .unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    s.append(json!({"id": "a1", "role": "assistant", "content": "ok"}))
        .unwrap();
    s.user_input(json!({"id": "u2", "content": "edit"}))
        .unwrap();
    s.before_edit(&["a.txt", "b.txt"]).unwrap();
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    std::fs::write(root.join("b.txt"), "bee\n").unwrap();
    s.after_edit(&["a.txt", "b.txt"]).unwrap();
    s.append(json!({"id": "a2", "role": "assistant", "content": "edited"}))
        .unwrap();
    s
}

#[test]
fn rewind_preview_says_what_each_mode_would_do_and_changes_nothing() {
    let e = env();
    let s = session_with_files(&e);
    let log = std::fs::read(s.path()).unwrap();

    let both = s.rewind_preview("u2", RewindMode::Both).unwrap();
    assert_eq!(both.head.from.as_deref(), Some("a2"));
    assert_eq!(both.head.to.as_deref(), Some("a1"));
    let plan = both.plan.as_ref().unwrap();
    let files: Vec<(&str, Value)> = plan
        .files
        .iter()
        .map(|f| (f.path.as_str(), serde_json::to_value(f.action).unwrap()))
        .collect();
    assert_eq!(
        files,
        [("a.txt", json!("restore")), ("b.txt", json!("delete"))]
    );
    assert_eq!(both.forcible_conflicts(), 0);
    let v = serde_json::to_value(&both).unwrap();
    assert_eq!(keys(&v), ["messageId", "mode", "plan", "head"]);
    assert_eq!(v["mode"], "both");
    assert_eq!(v["head"], json!({"from": "a2", "to": "a1"}));

    let files = s.rewind_preview("u2", RewindMode::Files).unwrap();
    assert_eq!(
        files.head.to.as_deref(),
        Some("a2"),
        "files only: head stays"
    );
    assert!(files.plan.is_some());
    let conv = s.rewind_preview("u1", RewindMode::Conversation).unwrap();
    assert!(conv.plan.is_none());
    assert_eq!(conv.head.to, None, "before the first message");

    // A file changed outside the agent is a conflict that needs force.
    std::fs::write(e.project.path().join("a.txt"), "outside\n").unwrap();
    let p = s.rewind_preview("u2", RewindMode::Both).unwrap();
    assert_eq!(p.forcible_conflicts(), 1);

    let err = s
        .rewind_preview("a1", RewindMode::Conversation)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("a1"), "{err}");
    assert_eq!(
        s.rewind_preview("zz", RewindMode::Both).unwrap_err().kind(),
        ErrorKind::NotFound
    );

    // Nothing changed: the log, the files, the head.
    assert_eq!(std::fs::read(s.path()).unwrap(), log);
    assert_eq!(s.head().as_deref(), Some("a2"));
    assert!(e.project.path().join("b.txt").exists());
    // Applying goes where the preview said.
    let r = s.rewind("u2", RewindMode::Both, true).unwrap();
    assert_eq!(r.head, p.head.to);
    assert!(!e.project.path().join("b.txt").exists());
    s.close().unwrap();
}

#[test]
fn rewind_mode_parses_from_its_name() {
    assert_eq!("both".parse::<RewindMode>().unwrap(), RewindMode::Both);
    assert_eq!(
        "conversation".parse::<RewindMode>().unwrap(),
        RewindMode::Conversation
    );
    let err = "sideways".parse::<RewindMode>().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("sideways"), "{err}");
    assert_eq!(RewindMode::Files.to_string(), "files");
}

fn doctor(store: &Store, repair: bool) -> (sessionkit::DoctorReport, Vec<DoctorProgress>) {
    let mut seen = Vec::new();
    let r = store
        .doctor(&DoctorOptions { repair }, &mut |p| seen.push(p))
        .unwrap();
    (r, seen)
}

fn phases(seen: &[DoctorProgress]) -> Vec<DoctorPhase> {
    let mut out: Vec<DoctorPhase> = Vec::new();
    for p in seen {
        assert!(p.done <= p.total, "{p:?}");
        if out.last() != Some(&p.phase) {
            out.push(p.phase);
        }
    }
    out
}

#[test]
fn doctor_finds_a_healthy_store_healthy() {
    let e = env();
    let s = create(&e.store, "s");
    s.append(json!({"role": "user", "content": "hi"})).unwrap();
    let a = s.spawn_subagent(Some("helper"), json!({})).unwrap();
    a.append(json!({"role": "user", "content": "task"}))
        .unwrap();
    a.finish(json!("done"), false).unwrap();
    drop(a);
    s.close().unwrap();
    let (r, seen) = doctor(&e.store, false);
    assert!(r.ok, "{r:#?}");
    assert!(!r.repair);
    assert_eq!(r.store, e.store.dir().display().to_string());
    assert_eq!(r.index.state, IndexState::Ok);
    assert!(!r.index.needs_rebuild);
    assert_eq!(r.file_history.state, HistoryState::Absent);
    let ids: Vec<&str> = r.logs.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["s", "s/helper"]);
    assert_eq!(r.logs[1].agent_id.as_deref(), Some("helper"));
    assert!(r.logs.iter().all(|c| c.ok && c.problems.is_empty()));
    assert_eq!(r.logs[0].messages, 1);
    assert_eq!(
        phases(&seen),
        [DoctorPhase::CheckingLogs, DoctorPhase::CheckingFileHistory]
    );
    let last = seen
        .iter()
        .rfind(|p| p.phase == DoctorPhase::CheckingLogs)
        .unwrap();
    assert_eq!((last.done, last.total), (1, 1));
}

#[test]
fn doctor_reports_damage_writes_nothing_and_repair_fixes_it() {
    let e = env();
    let s = create(&e.store, "s");
    s.append(json!({"id": "m1", "role": "user", "content": "hi"}))
        .unwrap();
    s.close().unwrap();
    create(&e.store, "other").close().unwrap();
    let log = e.store.log_path("s").unwrap();
    // An unreadable line, then a last line cut by a crash.
    append_bytes(&log, b"not json\n{\"id\":\"m2\",\"role\":\"us");
    let before = std::fs::read(&log).unwrap();

    let (r, _) = doctor(&e.store, false);
    assert!(!r.ok);
    assert_eq!(std::fs::read(&log).unwrap(), before, "doctor wrote the log");
    let c = &r.logs[r.logs.iter().position(|c| c.id == "s").unwrap()];
    assert!(!c.ok && c.repairable());
    assert!(c.torn_tail.is_some());
    assert_eq!((c.skipped.len(), c.unquarantined, c.quarantined), (1, 1, 0));
    assert!(c.problems.is_empty(), "nothing is lost: {:?}", c.problems);
    assert!(r.logs.iter().find(|c| c.id == "other").unwrap().ok);
    // The index entry was folded from the shorter log.
    assert_eq!(r.index.stale_entries, ["s"]);
    assert!(r.index.needs_rebuild);

    let (r, seen) = doctor(&e.store, true);
    assert!(r.ok, "{r:#?}");
    assert!(r.repair);
    let c = r.logs.iter().find(|c| c.id == "s").unwrap();
    assert!(c.torn_tail.is_none() && c.unquarantined == 0, "{c:#?}");
    assert!(c.quarantined >= 1);
    assert!(
        c.repaired
            .iter()
            .any(|d| d.contains("terminated the torn last line")),
        "{:?}",
        c.repaired
    );
    assert!(c.repaired.iter().any(|d| d.contains("quarantined")));
    assert!(r.repaired.iter().any(|d| d.contains("rebuilt the index")));
    assert_eq!(r.index.state, IndexState::Ok);
    assert_eq!(
        phases(&seen),
        [
            DoctorPhase::CheckingLogs,
            DoctorPhase::RepairingLogs,
            DoctorPhase::RecheckingLogs,
            DoctorPhase::RebuildingIndex,
            DoctorPhase::CheckingFileHistory
        ]
    );
    // Nothing already written was cut.
    assert!(std::fs::read(&log).unwrap().starts_with(&before));
    assert!(doctor(&e.store, false).0.ok);
}

#[test]
fn doctor_reports_a_missing_index_and_what_it_cannot_repair() {
    let e = env();
    let s = create(&e.store, "s");
    s.append(json!({"id": "m1", "role": "user", "content": "hi"}))
        .unwrap();
    s.close().unwrap();
    // A message whose parent is not in the log: reported, never invented.
    append_bytes(
        &e.store.log_path("s").unwrap(),
        b"{\"id\":\"m3\",\"parentId\":\"gone\",\"role\":\"user\",\"content\":\"x\"}\n",
    );
    std::fs::remove_file(e.store.index_path()).unwrap();
    let (r, _) = doctor(&e.store, false);
    assert_eq!(r.index.state, IndexState::Missing);
    assert!(r.index.needs_rebuild);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["index"]["state"], "missing");
    assert_eq!(v["fileHistory"]["state"], "absent");

    let (r, _) = doctor(&e.store, true);
    assert_eq!(r.index.state, IndexState::Ok);
    assert!(!r.ok, "a broken chain remains");
    let c = &r.logs[0];
    assert_eq!(
        c.problems,
        ["message \"m3\" has a missing parent \"gone\""],
        "{c:#?}"
    );
}

#[test]
fn doctor_names_blobs_that_cannot_be_read_which_reads_degrade() {
    let e = env();
    let s = create(&e.store, "s");
    s.append(json!({"id": "big", "role": "user", "content": "x".repeat(300_000)}))
        .unwrap();
    s.append(json!({"id": "bad", "role": "user", "content": "y".repeat(300_000)}))
        .unwrap();
    s.close().unwrap();
    let blobs = e.store.blobs();
    let digests = blobs.list().unwrap();
    assert_eq!(digests.len(), 2);
    let read = e.store.read_session("s").unwrap();
    let sha_of = |id: &str| {
        read.message(id).unwrap();
        let raw = std::fs::read_to_string(e.store.log_path("s").unwrap()).unwrap();
        raw.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["id"] == id)
            .unwrap()["contentBlob"]["sha256"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (gone, bad) = (sha_of("big"), sha_of("bad"));
    std::fs::remove_file(blobs.path_of(&gone).unwrap()).unwrap();
    std::fs::write(blobs.path_of(&bad).unwrap(), "\"not the bytes named\"").unwrap();

    // Reading degrades both messages and reports the missing file only (a read
    // does not open blobs, FORMAT.md §7); nothing fails.
    let v = e.store.read_session("s").unwrap();
    let missing: Vec<&str> = v
        .report()
        .missing_blobs
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    assert_eq!(missing, ["big"]);
    for m in v.active_path().unwrap() {
        assert!(m.value()["content"].is_null(), "{}", m.json());
        assert!(m.value()["contentBlob"].is_object());
    }

    // The doctor opens them and names both.
    let (r, _) = doctor(&e.store, false);
    assert!(!r.ok);
    let problems = &r.logs[0].problems;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("\"big\"") && problems[1].contains("\"bad\""),
        "{problems:?}"
    );
}

#[test]
fn doctor_options_come_from_json() {
    assert!(
        DoctorOptions::from_json("{\"repair\": true}")
            .unwrap()
            .repair
    );
    assert!(!DoctorOptions::from_json("").unwrap().repair);
    assert!(!DoctorOptions::from_json("{}").unwrap().repair);
    let err = DoctorOptions::from_json("{\"fix\": true}").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("fix"), "{err}");
}

#[test]
fn rewind_turns_goes_back_before_the_nth_latest_user_input() {
    let e = env();
    let s = create(&e.store, "turns");
    let mut asks = Vec::new();
    for i in 0..3 {
        asks.push(
            s.append(json!({"role": "user", "content": format!("q{i}")}))
                .unwrap(),
        );
        s.append(json!({"role": "assistant", "content": format!("a{i}")}))
            .unwrap();
    }
    let contents = |s: &Session| -> Vec<String> {
        s.active_path()
            .unwrap()
            .iter()
            .map(|m| m.value()["content"].as_str().unwrap().to_string())
            .collect()
    };
    for bad in [0, 4] {
        let err = s
            .rewind_turns(bad, RewindMode::Conversation, false)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains("3 user input(s)"), "{err}");
    }
    assert_eq!(contents(&s).len(), 6, "a refused rewind moves nothing");

    let r = s.rewind_turns(2, RewindMode::Conversation, false).unwrap();
    assert_eq!(r.message_id.as_deref(), Some(asks[1].id()));
    assert_eq!(contents(&s), ["q0", "a0"]);
    s.rewind_turns(1, RewindMode::Conversation, false).unwrap();
    assert!(contents(&s).is_empty());
}

#[test]
fn erase_deletes_the_session_for_good_and_starts_it_again_under_its_id() {
    let e = env();
    let s = create(&e.store, "erased");
    s.append(json!({"role": "user", "content": "secret"}))
        .unwrap();
    let log = e.store.log_path("erased").unwrap();
    let s = s.erase().unwrap();
    assert_eq!(s.id(), "erased");
    assert!(s.active_path().unwrap().is_empty());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("secret"),
        "the old messages are gone from the log"
    );
    s.append(json!({"role": "user", "content": "again"}))
        .unwrap();
    s.close().unwrap();
    let entry = e.store.session_entry("erased").unwrap();
    assert_eq!(entry.message_count, 1);
}
