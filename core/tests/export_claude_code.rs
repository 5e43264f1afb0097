//! Export to Claude Code (FORMAT.md §22.10): the transcript's place and
//! lines, the round trip through sessionkit's own Claude Code import (of an
//! imported Claude Code transcript, and of a session written through the API),
//! an imported transcript given back line for line, idempotence, a different
//! file in the way, and bad input writing nothing.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sessionkit::{
    import, CreateOptions, Durability, ErrorKind, ExportTarget, ExportToOptions, IdSource,
    ImportFormat, ImportOptions, SourceOutcome, Store, StoreOptions,
};

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, Env};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/import");

fn env() -> Env {
    env_with(StoreOptions {
        durability: Durability::Never,
        ..StoreOptions::default()
    })
}

fn options(home: &Path) -> ExportToOptions {
    ExportToOptions {
        home: Some(home.to_path_buf()),
        ..ExportToOptions::new(ExportTarget::ClaudeCode)
    }
}

/// Claude Code's directory for `project` (FORMAT §22.10).
fn claude_dir(home: &Path, project: &Path) -> PathBuf {
    let name: String = project
        .canonicalize()
        .unwrap()
        .to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join("projects").join(name)
}

/// Import Claude Code transcript `text` (its recorded working directory
/// `cwd` replaced by `project`) into a store of `project` under `home`.
fn import_text(text: &str, cwd: &str, project: &Path, home: &Path) -> (Store, String, PathBuf) {
    let root = project.canonicalize().unwrap();
    let text = text.replace(cwd, root.to_str().unwrap());
    let dir = tempfile::tempdir().unwrap().keep();
    let src = dir.join("source.jsonl");
    std::fs::write(&src, &text).unwrap();
    let report = import_file(&src, project, home);
    let id = report;
    let store = Store::open(project, store_options(home)).unwrap();
    (store, id, src)
}

fn store_options(home: &Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        durability: Durability::Never,
        ..StoreOptions::default()
    }
}

/// Import one Claude Code file into `project`'s store under `home`; its session id.
fn import_file(src: &Path, project: &Path, home: &Path) -> String {
    let report = import(
        &[src.to_path_buf()],
        &ImportOptions {
            from: Some(ImportFormat::ClaudeCode),
            project: Some(project.to_path_buf()),
            store: store_options(home),
            ..ImportOptions::default()
        },
        &mut |_| {},
    )
    .unwrap();
    let s = &report.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{report:?}");
    s.session_id.clone().unwrap()
}

/// The model view as the model gets it (`model`), else the active path,
/// without where each line came from.
fn view(store: &Store, id: &str, model: bool) -> Vec<Value> {
    let messages = if model {
        store.model_view(id, &Default::default()).unwrap()
    } else {
        store.read_session(id).unwrap().active_path().unwrap()
    };
    messages
        .iter()
        .map(|m| {
            let mut v = m.value();
            v.as_object_mut().unwrap().shift_remove("import");
            v
        })
        .collect()
}

/// Each message of the model view as a user checks it: role (a tool result
/// is the user's turn in Claude Code), text, tool calls (id, name, arguments)
/// and results (call id, text), and whether it is a compaction summary.
fn turns(store: &Store, id: &str, model: bool) -> Vec<Value> {
    view(store, id, model)
        .into_iter()
        .map(|v| {
            let o = v.as_object().unwrap();
            let role = match o["role"].as_str().unwrap() {
                "tool" => "user",
                r => r,
            };
            let summary = v.pointer("/meta/compaction").is_some();
            let mut text = String::new();
            let mut calls = Vec::new();
            let mut results = Vec::new();
            match &v["content"] {
                Value::String(s) if o["role"] != "tool" => text.push_str(s),
                Value::Array(blocks) => {
                    for b in blocks {
                        match b["type"].as_str() {
                            Some("text") => text.push_str(b["text"].as_str().unwrap()),
                            Some("tool_use") => calls.push(json!([b["id"], b["name"], b["input"]])),
                            Some("tool_result") => {
                                results.push(json!([b["tool_use_id"], b["content"]]))
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if let Some(tc) = v
                .pointer("/messageParams/tool_calls")
                .and_then(Value::as_array)
            {
                for c in tc {
                    let args: Value =
                        serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
                    calls.push(json!([c["id"], c["function"]["name"], args]));
                }
            }
            if o["role"] == "tool" {
                results.push(json!([v["messageParams"]["tool_call_id"], v["content"]]));
            }
            json!({"role": if summary { "summary" } else { role }, "text": text,
                "calls": calls, "results": results})
        })
        .collect()
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

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
fn an_imported_transcript_comes_back_line_for_line() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(format!(
        "{FIXTURES}/another-machine/claude-code/-Users-dana-code-demo/d4e5f6a7-1b2c-4d3e-8f40-5a6b7c8d9e01.jsonl"
    ))
    .unwrap();
    let (store, id, src) = import_text(
        &source,
        "/Users/dana/code/demo",
        project.path(),
        home.path(),
    );
    let claude = tempfile::tempdir().unwrap();
    let out = store.export_to(&id, &options(claude.path())).unwrap();

    assert_eq!(out.to, ExportTarget::ClaudeCode);
    assert_eq!(out.native_id, id);
    assert_eq!(out.id_source, IdSource::Session);
    assert!(out.written);
    assert_eq!(out.dropped, 0);
    assert_eq!(
        out.path,
        claude_dir(claude.path(), project.path()).join(format!("{id}.jsonl"))
    );
    // Every message line of the source, as it was; the file-history
    // snapshot (not a message) is not part of the conversation exported.
    let source = std::fs::read_to_string(src).unwrap();
    let expected: String = source
        .lines()
        .filter(|l| !l.contains("\"type\":\"file-history-snapshot\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(std::fs::read_to_string(&out.path).unwrap(), expected);
    assert_eq!(out.items, 8);
    assert!(out
        .resume_command
        .ends_with(&format!("claude --resume {id}")));
    assert!(out.notice.is_none(), "{:?}", out.notice);
}

#[test]
fn a_claude_code_transcript_round_trips() {
    let project = tempfile::tempdir().unwrap();
    let home_a = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(format!(
        "{FIXTURES}/claude-code/-home-ann-app/7f3c1a52-0d4e-4b8e-9a21-5c6d7e8f9a01.jsonl"
    ))
    .unwrap();
    let (a, id, _) = import_text(&source, "/home/ann/app", project.path(), home_a.path());
    let claude = tempfile::tempdir().unwrap();
    let out = a.export_to(&id, &options(claude.path())).unwrap();

    // The file, as Claude Code reads it: one chain from the first line, each
    // line's parent the line before (a compact boundary starting a new root
    // with its logical parent), one session, no sidechain.
    let ls = lines(&out.path);
    assert!(ls[0]["parentUuid"].is_null());
    for w in ls.windows(2) {
        let parent = if w[1]["subtype"] == "compact_boundary" {
            assert!(w[1]["parentUuid"].is_null());
            &w[1]["logicalParentUuid"]
        } else {
            &w[1]["parentUuid"]
        };
        assert_eq!(parent, &w[0]["uuid"], "{}", w[1]);
    }
    for l in &ls {
        assert_eq!(l["sessionId"], id.as_str());
        assert_eq!(l["isSidechain"], false);
    }

    let home_b = tempfile::tempdir().unwrap();
    let id_b = import_file(&out.path, project.path(), home_b.path());
    assert_eq!(id_b, id);
    let b = Store::open(project.path(), store_options(home_b.path())).unwrap();
    for model in [true, false] {
        let va = view(&a, &id, model);
        assert!(va.len() >= if model { 2 } else { 9 }, "{va:?}");
        assert_eq!(view(&b, &id, model), va);
        assert_eq!(turns(&b, &id, model), turns(&a, &id, model));
    }
    assert_eq!(
        b.session_entry(&id).unwrap().title,
        "The greeting test fails. Can you fix it?"
    );
}

/// A conversation written through the API with a tool call and its result,
/// a compaction, and more after it.
fn conversation(store: &Store) -> String {
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "system", "content": "You are terse."}))
        .unwrap();
    s.append(json!({"role": "user", "content": "Fix the failing test"}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "Running the tests.",
        "messageParams": {"tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "shell", "arguments": "{\"cmd\":\"cargo test\"}"}}]}}))
        .unwrap();
    s.append(json!({"role": "tool", "content": "1 failed",
        "messageParams": {"tool_call_id": "call_1"}}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "Fixed: empty input returns []."}))
        .unwrap();
    let ids: Vec<String> = s
        .model_view(&Default::default())
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    s.apply_compaction(&ids, json!("The user asked to fix a test; it is fixed."))
        .unwrap();
    s.append(json!({"role": "user", "content": "Thanks. Now check the docs."}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "",
        "messageParams": {"tool_calls": [{"id": "call_2", "type": "function",
            "function": {"name": "read", "arguments": "{\"path\":\"README.md\"}"}}]}}))
        .unwrap();
    s.append(json!({"role": "tool", "content": "# Demo",
        "messageParams": {"tool_call_id": "call_2"}}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "The docs are fine."}))
        .unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    id
}

#[test]
fn a_session_written_through_the_api_round_trips() {
    let e = env();
    let id = conversation(&e.store);
    let claude = tempfile::tempdir().unwrap();
    let out = e.store.export_to(&id, &options(claude.path())).unwrap();
    // The system prompt: Claude Code makes its own.
    assert_eq!(out.dropped, 1);
    assert!(out.notice.is_none());
    let ls = lines(&out.path);
    assert_eq!(ls[0]["type"], "user");
    assert_eq!(ls[0]["message"]["content"], "Fix the failing test");
    assert_eq!(ls[0]["userType"], "external");
    assert_eq!(
        ls[0]["cwd"],
        e.project.path().canonicalize().unwrap().to_str().unwrap()
    );
    let call = &ls[1]["message"];
    assert_eq!(call["role"], "assistant");
    assert_eq!(
        call["content"][1],
        json!({"type": "tool_use", "id": "call_1", "name": "shell",
            "input": {"cmd": "cargo test"}})
    );
    assert_eq!(
        ls[2]["message"]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "call_1", "content": "1 failed"})
    );

    let home_b = tempfile::tempdir().unwrap();
    let id_b = import_file(&out.path, e.project.path(), home_b.path());
    assert_eq!(id_b, id);
    let b = Store::open(e.project.path(), store_options(home_b.path())).unwrap();
    // The model view, and the whole active path (before the compaction too);
    // system messages aside: the system prompt is not exported, and the
    // compaction's boundary line comes back as one.
    for (model, len) in [(true, 5), (false, 9)] {
        let without_system = |t: Vec<Value>| -> Vec<Value> {
            t.into_iter().filter(|t| t["role"] != "system").collect()
        };
        let original = without_system(turns(&e.store, &id, model));
        assert_eq!(original.len(), len, "{original:?}");
        assert_eq!(without_system(turns(&b, &id, model)), original);
    }
}

#[test]
fn exporting_again_changes_nothing_and_a_different_file_is_a_conflict() {
    let e = env();
    let id = conversation(&e.store);
    let claude = tempfile::tempdir().unwrap();
    let first = e.store.export_to(&id, &options(claude.path())).unwrap();
    let bytes = std::fs::read(&first.path).unwrap();
    let before = files(claude.path());

    let again = e.store.export_to(&id, &options(claude.path())).unwrap();
    assert!(!again.written);
    assert_eq!(
        again,
        sessionkit::NativeExport {
            written: false,
            ..first.clone()
        }
    );
    assert_eq!(files(claude.path()), before, "no temp file left");

    let s = e.store.open_session(&id).unwrap();
    s.append(json!({"role": "user", "content": "one more"}))
        .unwrap();
    s.close().unwrap();
    let err = e.store.export_to(&id, &options(claude.path())).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(
        err.to_string().contains(&first.path.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(&first.path).unwrap(), bytes);
    assert_eq!(files(claude.path()), before);
}

#[test]
fn an_id_that_is_no_uuid_gets_a_stable_uuid() {
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
    let claude = tempfile::tempdir().unwrap();
    let out = e
        .store
        .export_to("chat-42", &options(claude.path()))
        .unwrap();
    assert_eq!(out.id_source, IdSource::Derived);
    uuid::Uuid::parse_str(&out.native_id).unwrap();
    assert_eq!(
        out.path.file_name().unwrap().to_str().unwrap(),
        format!("{}.jsonl", out.native_id)
    );
    let ls = lines(&out.path);
    assert_eq!(ls[0]["sessionId"], out.native_id.as_str());
    uuid::Uuid::parse_str(ls[0]["uuid"].as_str().unwrap()).unwrap();
    // The same id as a Codex export of the session gets.
    let codex = tempfile::tempdir().unwrap();
    let c = e
        .store
        .export_to(
            "chat-42",
            &ExportToOptions {
                home: Some(codex.path().to_path_buf()),
                ..ExportToOptions::new(ExportTarget::Codex)
            },
        )
        .unwrap();
    assert_eq!(c.native_id, out.native_id);
}

#[test]
fn bad_input_writes_nothing() {
    let e = env();
    let id = conversation(&e.store);
    let claude = tempfile::tempdir().unwrap();

    let err = e
        .store
        .export_to("no-such-session", &options(claude.path()))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);

    let err = e
        .store
        .export_to(&id, &options(Path::new("relative/claude")))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("relative/claude"), "{err}");

    let err = e
        .store
        .export_to(
            &id,
            &ExportToOptions {
                model_provider: Some("openai".into()),
                ..options(claude.path())
            },
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("modelProvider"), "{err}");

    assert_eq!(files(claude.path()), Vec::<PathBuf>::new());
    assert!(!Path::new("relative").exists());
}
