//! `sessionkit import`, `list --all` and `export --format json` on the shared
//! import fixtures (tests/fixtures/import).

mod common;

use std::path::PathBuf;

use common::Env;
use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import")
}

const CODEX: &str = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5";

#[test]
fn import_a_codex_directory_then_again_changes_nothing() {
    let env = Env::new();
    let dir = fixtures().join("codex");
    let dir = dir.to_str().unwrap();
    let v = env.json(&["import", dir]);
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    assert!(sources.iter().all(|s| s["outcome"] == "imported"), "{v:#}");
    assert_eq!(v["failed"], 0);
    let bad = sources
        .iter()
        .find(|s| s["sessionId"] == "019a4411-0000-7000-8000-00000000c0de")
        .unwrap();
    assert_eq!(bad["skipped"][0]["line"], 3);

    let list = env.json(&["list"]);
    let titles: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"Why does the greeting test fail?"),
        "{titles:?}"
    );

    let again = env.json(&["import", dir]);
    assert_eq!(again["messagesAdded"], 0);
    assert!(again["sources"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["outcome"] == "upToDate"));

    let text = env.text(&["import", dir]);
    assert!(text.contains("up to date"), "{text}");
    assert!(text.contains("0 message(s) added"), "{text}");
}

#[test]
fn import_names_skipped_lines_and_a_named_format() {
    let env = Env::new();
    let file = fixtures().join("claude-code/malformed/9b5e3c74-2f60-4da0-9c43-7e8f9a0b1c23.jsonl");
    let text = env.text(&["import", "--from", "claude-code", file.to_str().unwrap()]);
    assert!(text.contains("line 2: skipped: not JSON"), "{text}");
    assert!(
        text.contains("line 8: skipped: incomplete last line"),
        "{text}"
    );
    assert!(text.contains("3 line(s) not fully mapped"), "{text}");
}

#[test]
fn import_failures_exit_with_problems_and_a_missing_path_with_not_found() {
    let env = Env::new();
    let junk = env.root().join("notes.jsonl");
    std::fs::write(&junk, "{\"hello\":1}\n").unwrap();
    let out = env.cmd().args(["import"]).arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not recognised"));

    let out = env
        .cmd()
        .args(["import"])
        .arg(env.root().join("missing"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(sessionkit::ErrorKind::NotFound.code() + 2)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}

#[test]
fn export_folds_tool_calls_and_gives_json_and_list_all_spans_projects() {
    let env = Env::new();
    let file = fixtures().join("codex/2025/10/29");
    env.json(&["import", file.to_str().unwrap()]);
    let md = env.text(&["export", CODEX, "--format", "markdown"]);
    assert!(
        md.contains(
            "<details><summary>Tool call <code>shell</code> (<code>call_A1</code>)</summary>"
        ),
        "{md}"
    );
    let json: Value =
        serde_json::from_str(&env.text(&["export", CODEX, "--format", "json"])).unwrap();
    let path = json.as_array().unwrap();
    assert_eq!(path.last().unwrap()["id"], "line-16");
    assert_eq!(path[0]["import"]["format"], "codex");

    let all = env.json(&["list", "--all"]);
    let projects = all.as_array().unwrap();
    assert_eq!(projects.len(), 1);
    assert_eq!(projects[0]["sessions"][0]["id"], CODEX);
    let text = env.text(&["list", "--all"]);
    assert!(text.contains("Why does the greeting"), "{text}");
}
