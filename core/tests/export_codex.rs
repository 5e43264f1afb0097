//! Export to Codex (FORMAT.md §22.9): the rollout's name and place, its first
//! line, that each line parses and a prompt is near the top (Codex lists only
//! such files), the round trip through sessionkit's own Codex import,
//! idempotence, a different file in the way, and bad input writing nothing.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sessionkit::{
    import, CreateOptions, Durability, ErrorKind, ExportTarget, ExportToOptions, IdSource,
    ImportFormat, ImportOptions, NativeExport, Session, SourceOutcome, Store, StoreOptions,
};
use tempfile::TempDir;

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, Env};

fn env() -> Env {
    env_with(StoreOptions {
        durability: Durability::Never,
        ..StoreOptions::default()
    })
}

fn options(codex: &Path) -> ExportToOptions {
    ExportToOptions {
        home: Some(codex.to_path_buf()),
        ..ExportToOptions::new(ExportTarget::Codex)
    }
}

/// A conversation with a tool call and its result, a compaction, and more
/// after it; the session's id is a UUIDv7 from the store.
fn conversation(store: &Store) -> String {
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "system", "content": "You are terse."}))
        .unwrap();
    s.append(json!({"role": "user", "content": "Fix the failing test"}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "",
        "messageParams": {"tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "shell", "arguments": "{\"cmd\":\"cargo test\"}"}}]}}))
        .unwrap();
    s.append(json!({"role": "tool", "content": "1 failed",
        "messageParams": {"tool_call_id": "call_1"}}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "Fixed: empty input returns []."}))
        .unwrap();
    compact_all(&s, "The user asked to fix a test; it is fixed.");
    s.append(json!({"role": "user", "content": "Thanks. Now add a changelog entry."}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "Done."}))
        .unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    id
}

fn compact_all(s: &Session, summary: &str) {
    let ids: Vec<String> = s
        .model_view(&Default::default())
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    s.apply_compaction(&ids, json!(summary)).unwrap();
}

/// Role and text of each message on the active path.
fn path_of(store: &Store, id: &str) -> Vec<(String, String)> {
    store
        .read_session(id)
        .unwrap()
        .active_path()
        .unwrap()
        .iter()
        .map(|m| {
            let v = m.value();
            let text = match &v["content"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => panic!("not text: {other}"),
            };
            (v["role"].as_str().unwrap().to_string(), text)
        })
        .collect()
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'));
    text.lines()
        .enumerate()
        .map(|(n, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}: {l}", n + 1))
        })
        .collect()
}

/// Every file under `dir`, for "nothing written" checks.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn the_rollout_is_where_and_as_codex_writes_them() {
    let e = env();
    let id = conversation(&e.store);
    let codex = tempfile::tempdir().unwrap();
    let out: NativeExport = e.store.export_to(&id, &options(codex.path())).unwrap();

    assert_eq!(out.native_id, id);
    assert_eq!(out.id_source, IdSource::Session);
    assert_eq!(out.resume_command, format!("codex resume {id}"));
    assert!(out.written);
    assert_eq!(out.dropped, 0);
    assert_eq!(out.notice, None);

    // sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl, from the
    // session's creation time.
    let created = e.store.session_entry(&id).unwrap().created_at;
    let rel = out.path.strip_prefix(codex.path()).unwrap();
    let want = format!(
        "sessions/{}/{}/{}/rollout-{}-{id}.jsonl",
        &created[0..4],
        &created[5..7],
        &created[8..10],
        created[..19].replace(':', "-")
    );
    assert_eq!(rel, Path::new(&want));

    let ls = lines(&out.path);
    assert_eq!(ls.len(), out.items + 1);
    // Line 1: session_meta with the fields Codex's SessionMeta requires.
    assert_eq!(ls[0]["type"], "session_meta");
    let meta = &ls[0]["payload"];
    assert_eq!(meta["id"], id.as_str());
    assert_eq!(meta["timestamp"], created.as_str());
    assert_eq!(
        meta["cwd"],
        e.store.project_root().to_string_lossy().as_ref()
    );
    assert_eq!(meta["originator"], "sessionkit");
    assert!(meta["cli_version"].is_string());
    assert_eq!(meta["source"], "cli");
    assert_eq!(meta["model_provider"], "openai");
    assert_eq!(meta["instructions"], Value::Null);

    // Every line: {timestamp, type, payload}, times strictly increasing.
    let mut last = String::new();
    for l in &ls {
        let o = l.as_object().unwrap();
        assert_eq!(o.len(), 3, "{l}");
        let t = l["timestamp"].as_str().unwrap().to_string();
        assert!(t.ends_with('Z') && t.len() == 24, "{t}");
        assert!(t > last, "{t} after {last}");
        last = t;
        assert!(l["payload"].is_object());
    }
    // Listed: a user_message event within the first lines.
    let first_prompt = ls
        .iter()
        .position(|l| l["type"] == "event_msg" && l["payload"]["type"] == "user_message")
        .unwrap();
    assert!(first_prompt < 10);
    assert_eq!(
        ls[first_prompt]["payload"]["message"],
        "Fix the failing test"
    );

    let kinds: Vec<String> = ls
        .iter()
        .map(|l| match l["payload"]["type"].as_str() {
            Some(t) => format!("{}/{t}", l["type"].as_str().unwrap()),
            None => l["type"].as_str().unwrap().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session_meta",
            "response_item/message",
            "response_item/message",
            "event_msg/user_message",
            "response_item/function_call",
            "response_item/function_call_output",
            "response_item/message",
            "event_msg/agent_message",
            "compacted",
            "response_item/message",
            "event_msg/user_message",
            "response_item/message",
            "event_msg/agent_message",
        ]
    );
    assert_eq!(ls[1]["payload"]["role"], "developer");
    assert_eq!(ls[4]["payload"]["call_id"], "call_1");
    assert_eq!(ls[4]["payload"]["arguments"], "{\"cmd\":\"cargo test\"}");
    assert_eq!(ls[5]["payload"]["call_id"], "call_1");
    assert_eq!(ls[5]["payload"]["output"], "1 failed");
    assert_eq!(
        ls[8]["payload"],
        json!({"message": "The user asked to fix a test; it is fixed."})
    );
    assert_eq!(
        ls[11]["payload"]["content"],
        json!([{"type": "output_text", "text": "Done."}])
    );
}

#[test]
fn importing_the_rollout_gives_the_same_active_path() {
    let e = env();
    let id = conversation(&e.store);
    let codex = tempfile::tempdir().unwrap();
    let out = e.store.export_to(&id, &options(codex.path())).unwrap();

    let home = TempDir::new().unwrap();
    let store_options = StoreOptions {
        home: Some(home.path().to_path_buf()),
        ..StoreOptions::default()
    };
    let report = import(
        std::slice::from_ref(&out.path),
        &ImportOptions {
            from: Some(ImportFormat::Codex),
            project: Some(e.project.path().to_path_buf()),
            store: store_options.clone(),
            ..ImportOptions::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(report.sources.len(), 1);
    assert_eq!(
        report.sources[0].outcome,
        SourceOutcome::Imported,
        "{report:?}"
    );
    let back = Store::open(e.project.path(), store_options).unwrap();
    let original = path_of(&e.store, &id);
    assert_eq!(original.len(), 8);
    assert_eq!(path_of(&back, &id), original);
    // The title Codex lists is the first prompt.
    assert_eq!(
        back.session_entry(&id).unwrap().title,
        "Fix the failing test"
    );
}

#[test]
fn exporting_again_changes_nothing_and_a_different_file_is_a_conflict() {
    let e = env();
    let id = conversation(&e.store);
    let codex = tempfile::tempdir().unwrap();
    let first = e.store.export_to(&id, &options(codex.path())).unwrap();
    let bytes = std::fs::read(&first.path).unwrap();
    let before = files(codex.path());

    let again = e.store.export_to(&id, &options(codex.path())).unwrap();
    assert!(!again.written);
    assert_eq!(again.path, first.path);
    assert_eq!(std::fs::read(&first.path).unwrap(), bytes);
    assert_eq!(files(codex.path()), before, "no temp file left");

    // The session grew: its rollout would differ, and the old one stays.
    let s = e.store.open_session(&id).unwrap();
    s.append(json!({"role": "user", "content": "one more"}))
        .unwrap();
    s.close().unwrap();
    let err = e.store.export_to(&id, &options(codex.path())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(
        err.to_string().contains(&first.path.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(&first.path).unwrap(), bytes);
    assert_eq!(files(codex.path()), before);
}

#[test]
fn an_id_that_is_no_uuid_gets_a_stable_uuidv7() {
    let e = env();
    let s = e
        .store
        .create_session(CreateOptions {
            title: None,
            id: Some("chat-42".into()),
        })
        .unwrap();
    s.append(json!({"role": "user", "content": "hello"}))
        .unwrap();
    s.close().unwrap();
    let codex = tempfile::tempdir().unwrap();
    let out = e
        .store
        .export_to("chat-42", &options(codex.path()))
        .unwrap();
    assert_eq!(out.id_source, IdSource::Derived);
    let u = uuid::Uuid::parse_str(&out.native_id).unwrap();
    assert_eq!(u.get_version_num(), 7);
    assert!(out
        .path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .ends_with(&format!("-{}.jsonl", out.native_id)));
    assert_eq!(lines(&out.path)[0]["payload"]["id"], out.native_id.as_str());
    let again = e
        .store
        .export_to("chat-42", &options(codex.path()))
        .unwrap();
    assert_eq!(again.native_id, out.native_id);
    assert!(!again.written);
}

#[test]
fn a_session_without_a_prompt_is_exported_with_a_notice() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "assistant", "content": "I start."}))
        .unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    let codex = tempfile::tempdir().unwrap();
    let out = e.store.export_to(&id, &options(codex.path())).unwrap();
    let notice = out.notice.unwrap();
    assert!(notice.contains("will not list it"), "{notice}");
}

#[test]
fn bad_input_writes_nothing() {
    let e = env();
    let id = conversation(&e.store);
    let codex = tempfile::tempdir().unwrap();

    let err = e
        .store
        .export_to("no-such-session", &options(codex.path()))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);

    let err = e
        .store
        .export_to(&id, &options(Path::new("relative/codex")))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("relative/codex"), "{err}");

    let err = ExportToOptions::from_json(r#"{"to": "codex", "codexHome": "/x", "bogus": 1}"#)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        ExportToOptions::from_json(r#"{"to": "codex", "codexHome": "/x"}"#)
            .unwrap()
            .home,
        Some(PathBuf::from("/x"))
    );

    assert_eq!(files(codex.path()), Vec::<PathBuf>::new());
    assert!(!Path::new("relative").exists());
}

#[test]
fn the_thread_is_named_by_the_title_once_and_a_name_given_in_codex_is_kept() {
    let e = env();
    let id = conversation(&e.store);
    let codex = tempfile::tempdir().unwrap();
    let index = codex.path().join("session_index.jsonl");
    // Codex's own names of other threads, the last line torn.
    std::fs::write(
        &index,
        "{\"id\":\"00000000-0000-4000-8000-000000000001\",\"thread_name\":\"other\",\"updated_at\":\"2025-01-01T00:00:00Z\"}\n{\"id\":\"00000",
    )
    .unwrap();
    let out = e.store.export_to(&id, &options(codex.path())).unwrap();
    let entry = e.store.session_entry(&id).unwrap();
    let text = std::fs::read_to_string(&index).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"id": out.native_id, "thread_name": entry.title, "updated_at": entry.updated_at})
    );
    assert_eq!(entry.title, "Fix the failing test");
    assert!(
        text.contains("{\"id\":\"00000\n{"),
        "the torn line stays apart: {text}"
    );

    // Again: nothing appended.
    e.store.export_to(&id, &options(codex.path())).unwrap();
    assert_eq!(std::fs::read_to_string(&index).unwrap(), text);

    // A name the user gave in Codex is kept on a later export elsewhere.
    let renamed = format!(
        "{{\"id\":\"{}\",\"thread_name\":\"mine\",\"updated_at\":\"2026-01-01T00:00:00Z\"}}\n",
        out.native_id
    );
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("session_index.jsonl"), &renamed).unwrap();
    e.store.export_to(&id, &options(other.path())).unwrap();
    assert_eq!(
        std::fs::read_to_string(other.path().join("session_index.jsonl")).unwrap(),
        renamed
    );
}
