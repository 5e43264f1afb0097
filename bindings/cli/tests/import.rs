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

/// The binary with this home and no `--project`: each source goes where it says.
fn without_project(env: &Env) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("sessionkit").unwrap();
    c.env_remove("SESSIONKIT_HOME")
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1")
        .current_dir(env.root())
        .arg("--home")
        .arg(env.home.path());
    c
}

fn run_json(mut c: assert_cmd::Command) -> Value {
    let out = c.arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The sessions `list --all` shows for the project `code`, by id.
fn listed(env: &Env, code: &str) -> std::collections::BTreeMap<String, Value> {
    let mut c = without_project(env);
    c.args(["list", "--all"]);
    let all = run_json(c);
    let p = all
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["projectCode"] == code)
        .unwrap_or_else(|| panic!("no project {code}: {all:#}"))
        .clone();
    assert!(p["error"].is_null(), "{p:#}");
    p["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e.clone()))
        .collect()
}

fn assert_titles_and_times(sessions: &std::collections::BTreeMap<String, Value>) {
    let field = |id: &str, k: &str| sessions[id][k].as_str().unwrap().to_string();
    let orchestrator = "d4e5f6a7-1b2c-4d3e-8f40-5a6b7c8d9e01";
    let rollout = "0199b2c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";
    assert_eq!(
        field(orchestrator, "title"),
        "/orchestrator fix the flaky CI build"
    );
    assert_eq!(
        field(rollout, "title"),
        "Add a --json flag to the demo's list command"
    );
    assert_eq!(field(orchestrator, "createdAt"), "2025-09-14T08:01:02.345Z");
    assert_eq!(field(orchestrator, "updatedAt"), "2025-09-14T08:21:10.002Z");
    assert_eq!(field(rollout, "updatedAt"), "2025-09-20T14:05:48.250Z");
    for (id, e) in sessions {
        assert!(!e["title"].as_str().unwrap().contains('<'), "{id}: {e:#}");
        assert_eq!(e["status"], "completed", "{id}");
    }
}

#[test]
fn import_from_another_machine_keeps_its_project_titles_and_times() {
    let env = Env::new();
    let dir = fixtures().join("another-machine");
    let mut c = without_project(&env);
    c.arg("import").arg(&dir);
    let v = run_json(c);
    assert_eq!(v["failed"], 0, "{v:#}");
    for s in v["sources"].as_array().unwrap() {
        assert_eq!(s["outcome"], "imported");
        assert_eq!(s["project"], "/Users/dana/code/demo");
        let notice = s["notice"].as_str().unwrap();
        assert!(notice.contains("does not exist here"), "{notice}");
    }
    let sessions = listed(&env, "-Users-dana-code-demo");
    assert_eq!(sessions.len(), 4);
    assert_titles_and_times(&sessions);

    // The text report says so too; importing again changes no byte.
    let before = sessionkit::testing::tree_snapshot(&[env.home.path()]);
    let mut c = without_project(&env);
    let out = c.arg("import").arg(&dir).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("up to date"));
    assert_eq!(
        sessionkit::testing::tree_snapshot(&[env.home.path()]),
        before
    );
}

#[test]
fn sessions_of_an_absent_project_open_by_its_path_and_a_mistyped_path_creates_nothing() {
    let env = Env::new();
    let mut c = without_project(&env);
    c.arg("import").arg(fixtures().join("another-machine"));
    assert_eq!(run_json(c)["failed"], 0);

    // Its path opens the store the import wrote, though the directory is absent.
    let mut c = without_project(&env);
    c.args([
        "--project",
        "/Users/dana/code/demo",
        "show",
        "d4e5f6a7",
        "--active-path",
    ]);
    let v = run_json(c);
    let texts = v.to_string();
    assert!(texts.contains("fix the flaky CI build"), "{v:#}");

    // A path with neither a directory nor a store: NotFound, naming it, nothing created.
    let before = sessionkit::testing::tree_snapshot(&[env.home.path()]);
    let mut c = without_project(&env);
    let out = c
        .args(["--project", "/Users/dana/code/dmeo", "list"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/Users/dana/code/dmeo") && err.contains("list --all"),
        "{err}"
    );
    assert_eq!(
        sessionkit::testing::tree_snapshot(&[env.home.path()]),
        before
    );
}

#[test]
fn import_with_map_path_lands_under_the_mapped_project() {
    let env = Env::new();
    let demo = env.root().join("code/demo");
    std::fs::create_dir_all(&demo).unwrap();
    let map = format!("/Users/dana={}", env.root().display());
    let mut c = without_project(&env);
    c.args([
        "import",
        "--map-path",
        "/Users/dan=/nowhere",
        "--map-path",
        &map,
    ])
    .arg(fixtures().join("another-machine"));
    let v = run_json(c);
    assert_eq!(v["failed"], 0, "{v:#}");
    let root = std::fs::canonicalize(&demo).unwrap();
    for s in v["sources"].as_array().unwrap() {
        assert_eq!(s["project"], root.to_str().unwrap(), "{s:#}");
        assert!(s["notice"].as_str().unwrap().contains("mapped to"), "{s:#}");
    }
    let code = sessionkit::project_code(&root);
    assert_titles_and_times(&listed(&env, &code));
    assert!(!env
        .home
        .path()
        .join("projects/-Users-dana-code-demo")
        .exists());
}

#[test]
fn a_bad_map_path_is_refused_naming_it_before_anything_is_written() {
    let env = Env::new();
    for (bad, says) in [
        ("/Users/dana", "not OLD=NEW"),
        ("Users/dana=/x", "\"Users/dana\" is not an absolute path"),
        ("/Users/dana=x", "\"x\" is not an absolute path"),
        ("/Users/dana=", "is empty"),
        ("", "not OLD=NEW"),
    ] {
        let mut c = without_project(&env);
        let out = c
            .args(["import", "--map-path", bad])
            .arg(fixtures().join("another-machine"))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(sessionkit::ErrorKind::InvalidInput.code() + 2),
            "{bad:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("path mapping") && err.contains(says),
            "{bad:?}: {err}"
        );
    }
    assert!(
        !env.home.path().join("projects").exists(),
        "nothing written"
    );
}

#[test]
fn import_from_copilot_cli_keeps_its_title_and_is_idempotent() {
    let env = Env::new();
    let dir = fixtures().join("copilot-cli/session-state");
    let dir = dir.to_str().unwrap();
    let v = env.json(&["import", "--from", "copilot-cli", dir]);
    let s = &v["sources"][0];
    assert_eq!(s["format"], "copilot-cli", "{v:#}");
    assert_eq!(s["outcome"], "imported", "{v:#}");
    assert_eq!(s["sessionId"], "5c1e9a42-8b7d-4f3e-a2c1-0d9e8f7a6b5c");
    let list = env.json(&["list"]);
    assert_eq!(list[0]["title"], "Find the largest Rust file", "{list:#}");
    assert_eq!(list[0]["updatedAt"], "2026-11-30T09:16:40.020Z", "{list:#}");
    let again = env.json(&["import", dir]);
    assert_eq!(again["sources"][0]["format"], "copilot-cli", "detected");
    assert_eq!(again["sources"][0]["outcome"], "upToDate", "{again:#}");
}

#[test]
fn import_an_opencode_database_reports_each_session() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let db = src.path().join("opencode.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let sql = std::fs::read_to_string(fixtures().join("opencode/opencode.sql")).unwrap();
    conn.execute_batch(&sql).unwrap();
    drop(conn);
    let v = env.json(&["import", "--from", "opencode", db.to_str().unwrap()]);
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{v:#}");
    assert!(sources.iter().all(|s| s["format"] == "opencode"), "{v:#}");
    assert!(sources.iter().all(|s| s["outcome"] == "imported"), "{v:#}");
    let list = env.json(&["list"]);
    let titles: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Find the largest Rust file"), "{titles:?}");
    let again = env.json(&["import", src.path().to_str().unwrap()]);
    assert!(
        again["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["outcome"] == "upToDate"),
        "{again:#}"
    );
}
