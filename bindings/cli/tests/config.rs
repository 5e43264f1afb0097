//! `config`, `instructions` and `memory`: what each prints and changes on disk,
//! and the exit codes of bad input.

mod common;

use std::fs;

use common::Env;
use serde_json::{json, Value};

/// Exit statuses: the core's error kind number plus 2.
const NOT_FOUND: i32 = 3;
const CONFLICT: i32 = 5;
const INVALID_INPUT: i32 = 6;
const CORRUPT: i32 = 7;

#[test]
fn config_set_get_list_with_origins() {
    let env = Env::new();
    env.text(&["config", "set", "model", "small", "--source", "user"]);
    env.text(&["config", "set", "model", "large", "--source", "project"]);
    env.text(&["config", "set", "permissions.allow", r#"["ls"]"#]);
    // The project file is where the project's settings are committed.
    let project_file = env.root().join(".sessionkit/settings.json");
    let written: Value = serde_json::from_slice(&fs::read(&project_file).unwrap()).unwrap();
    assert_eq!(written, json!({"schemaVersion": 3, "model": "large"}));

    assert_eq!(env.text(&["config", "get", "model"]), "\"large\"\n");
    assert_eq!(
        env.text(&["config", "get", "model", "--show-origin"]),
        "project\tmodel=\"large\"\n"
    );
    assert_eq!(
        env.text(&["config", "get", "model", "--setting-sources", "user"]),
        "\"small\"\n"
    );
    let got = env.json(&["config", "get", "permissions.allow"]);
    assert_eq!(
        got,
        json!({"key": "permissions.allow", "value": ["ls"], "origin": "local"})
    );

    let list = env.text(&["config", "list", "--show-origin"]);
    assert!(
        list.starts_with("project\tmodel=\"large\"\nlocal\tpermissions.allow=[\"ls\"]\n"),
        "{list}"
    );
    assert!(list.contains("# host skipped"), "{list}");

    // null removes the key from the sources below; unset brings them back.
    env.text(&["config", "set", "model", "null", "--source", "local"]);
    env.fails(&["config", "get", "model"], NOT_FOUND);
    env.text(&["config", "unset", "model"]);
    assert_eq!(env.text(&["config", "get", "model"]), "\"large\"\n");

    let err = env.fails(
        &["config", "set", "a", "1", "--source", "team"],
        INVALID_INPUT,
    );
    assert!(err.contains("unknown settings source \"team\""), "{err}");
    env.fails(
        &["config", "list", "--setting-sources", "user,nope"],
        INVALID_INPUT,
    );
}

#[test]
fn a_malformed_file_warns_with_line_and_column_and_the_rest_still_lists() {
    let env = Env::new();
    env.text(&["config", "set", "theme", "dark", "--source", "project"]);
    fs::write(
        env.root().join(".sessionkit/settings.local.json"),
        "{\n  \"x\": ,\n}",
    )
    .unwrap();
    let out = env.cmd().args(["config", "list"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "theme=\"dark\"\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("settings.local.json: line 2, column 8"),
        "{err}"
    );
    let err = env.fails(&["config", "set", "x", "1"], CORRUPT);
    assert!(err.contains("line 2, column 8"), "{err}");
}

#[test]
fn config_migrate_keeps_the_older_file() {
    let env = Env::new();
    let user = env.home.path().join("settings.json");
    fs::create_dir_all(env.home.path()).unwrap();
    fs::write(&user, r#"{"instructionFiles": ["TEAM.md"]}"#).unwrap();
    assert_eq!(
        env.text(&["config", "get", "instructions.names"]),
        "[\"TEAM.md\"]\n"
    );
    let out = env.text(&["config", "migrate", "--source", "user"]);
    assert!(out.contains("settings.json.v1.bak"), "{out}");
    let backup = fs::read_to_string(env.home.path().join("settings.json.v1.bak")).unwrap();
    assert_eq!(backup, r#"{"instructionFiles": ["TEAM.md"]}"#);
    let now: Value = serde_json::from_slice(&fs::read(&user).unwrap()).unwrap();
    assert_eq!(
        now,
        json!({"schemaVersion": 3, "instructions": {"names": ["TEAM.md"]}})
    );
}

#[test]
fn instructions_lists_the_files_in_order_with_problems() {
    let env = Env::new();
    let root = fs::canonicalize(env.root()).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("AGENTS.md"), "Be brief. @docs/style.md @loop.md").unwrap();
    fs::create_dir_all(root.join("docs")).unwrap();
    fs::write(root.join("docs/style.md"), "Use tabs.").unwrap();
    fs::write(root.join("loop.md"), "@AGENTS.md").unwrap();
    fs::write(root.join("src/CLAUDE.md"), "In src.").unwrap();
    let src = root.join("src");
    let out = env.text(&["instructions", src.to_str().unwrap()]);
    let expected = format!(
        "project {r}/AGENTS.md\n  include {r}/docs/style.md\n  include {r}/loop.md\nproject {r}/src/CLAUDE.md\n\
         not read: include cycle: {r}/loop.md includes {r}/AGENTS.md, which is already being included\n",
        r = root.display()
    );
    assert_eq!(out, expected);
    let v = env.json(&[
        "instructions",
        src.to_str().unwrap(),
        "--names",
        "CLAUDE.md",
    ]);
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(v["files"][0]["content"], "In src.");
    env.fails(&["instructions", "--names", "../x.md"], INVALID_INPUT);
    env.fails(
        &["instructions", root.join("nope").to_str().unwrap()],
        NOT_FOUND,
    );
}

#[test]
fn memory_add_list_show_update_rm() {
    let env = Env::new();
    env.text(&["memory", "add", "build", "# Build\nRun make."]);
    env.cmd()
        .args(["memory", "add", "style", "-"])
        .write_stdin("Tabs, not spaces.\n")
        .assert()
        .success();
    env.text(&["memory", "add", "me", "Prefers short answers.", "--user"]);
    assert_eq!(
        env.text(&["memory", "list"]),
        "build  Build\nstyle  Tabs, not spaces.\n"
    );
    assert_eq!(
        env.text(&["memory", "list", "--user"]),
        "me  Prefers short answers.\n"
    );
    assert_eq!(
        env.text(&["memory", "show", "style"]),
        "Tabs, not spaces.\n"
    );
    env.fails(&["memory", "add", "build", "again"], CONFLICT);
    env.text(&["memory", "update", "build", "Run cargo build."]);
    assert_eq!(env.text(&["memory", "show", "build"]), "Run cargo build.");
    env.text(&["memory", "rm", "build"]);
    env.fails(&["memory", "show", "build"], NOT_FOUND);
    let v = env.json(&["memory", "list"]);
    assert_eq!(v.as_array().unwrap().len(), 1);
    for bad in ["../escape", "/etc/passwd", "a/b", ".."] {
        let err = env.fails(&["memory", "add", bad, "x"], INVALID_INPUT);
        assert!(err.contains("memory name"), "{err}");
    }
    assert!(!env.home.path().join("memory/escape.md").exists());
}
