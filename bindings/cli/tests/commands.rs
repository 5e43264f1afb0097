//! Every command against a deterministic store made by the library: `--json`
//! shapes, exit codes, and what changed on disk.

mod common;

use common::{build, Env, FORK_TITLE, MAIN};
use serde_json::Value;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn list_json_has_both_sessions_with_lineage() {
    let env = Env::new();
    let (main, fork) = build(&env);
    let v = env.json(&["list"]);
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2);
    let f = list.iter().find(|e| e["id"] == fork.as_str()).unwrap();
    assert_eq!(f["title"], FORK_TITLE);
    assert_eq!(f["forkedFrom"]["sessionId"], main.as_str());
    assert_eq!(f["forkedFrom"]["messageId"], "a2");
    let m = list.iter().find(|e| e["id"] == main.as_str()).unwrap();
    assert_eq!(m["status"], "completed");
    assert_eq!(m["tokenUsage"]["input_tokens"], 400);
}

#[test]
fn list_limit_prints_a_page_and_says_how_to_get_the_next() {
    let env = Env::new();
    let (main, fork) = build(&env);
    let whole = ids(&env.json(&["list"]));
    assert_eq!(whole.len(), 2);
    assert_eq!(ids(&env.json(&["list", "--limit", "1"])), whole[..1]);
    assert_eq!(
        ids(&env.json(&["list", "--limit", "1", "--offset", "1"])),
        whole[1..]
    );
    assert!(ids(&env.json(&["list", "--offset", "2"])).is_empty());
    let text = env.text(&["list", "--limit", "1"]);
    assert!(
        text.contains("sessions 1–1 of 2 (--offset 1 for the next)"),
        "{text}"
    );
    // The ids on the page are still told apart from the one left off.
    let shown = if whole[0] == main { &main } else { &fork };
    let row = text.lines().nth(1).unwrap();
    let short = row.split_whitespace().next().unwrap();
    assert!(shown.starts_with(short) && short.len() >= 8, "{row}");
    let other = if whole[0] == main { &fork } else { &main };
    assert!(
        !other.starts_with(short),
        "{short} is a prefix of {other} too"
    );
    env.fails(&["list", "--all", "--limit", "1"], 2);
}

#[test]
fn show_json_is_the_active_path_with_flags() {
    let env = Env::new();
    build(&env);
    // A unique prefix is enough.
    let v = env.json(&["show", "0000main"]);
    let msgs = &v["messages"];
    let path = ids(msgs);
    assert_eq!(&path[..6], ["u1", "a1", "t1", "a2", "u3", "a4"]);
    assert_eq!(path.len(), 7, "the compaction summary ends the path");
    assert_eq!(msgs[0]["compacted"], true);
    assert_eq!(msgs[4]["compacted"], false);
    assert_eq!(v["session"]["id"], MAIN);
    // The rewound turn is a branch off a2.
    let other: Vec<&Value> = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["isActive"] == false)
        .collect();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0]["leafId"], "a3");
    assert_eq!(other[0]["forkPointId"], "a2");
}

#[test]
fn show_model_view_replaces_compacted_messages_by_the_summary() {
    let env = Env::new();
    build(&env);
    let v = env.json(&["show", MAIN, "--model-view"]);
    let msgs = v["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert_eq!(
        msgs[0]["content"],
        "The user had a.txt changed to say three."
    );
    assert_eq!(msgs[1]["id"], "u3");
}

#[test]
fn ids_not_found_and_ambiguous_exit_codes() {
    let env = Env::new();
    build(&env);
    let err = env.fails(&["show", "zzz"], 3);
    assert!(err.contains("zzz") && err.contains("not found"), "{err}");
    assert_eq!(err.lines().count(), 1);
    // Both sessions' ids start with "0" (the main id, and a UUIDv7 of 2026).
    let err = env.fails(&["show", "0"], 6);
    assert!(err.contains("ambiguous"), "{err}");
    env.fails(&["fork", MAIN, "--at", "nope"], 3);
    env.fails(&["rename", MAIN, "   "], 6);
    // clap's own usage errors stay 2.
    env.fails(&["show"], 2);
    env.fails(&["frobnicate"], 2);
}

/// Exit codes come from the core's table of error kinds: `--help` and the
/// README list each kind with its code and name.
#[test]
fn help_and_readme_list_every_error_kind_with_its_exit_code() {
    let out = Env::new().cmd().arg("--help").output().unwrap();
    assert!(out.status.success());
    // clap wraps the text to the terminal's width.
    let help = String::from_utf8(out.stdout).unwrap();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for &k in sessionkit::ErrorKind::ALL {
        let code = k.code() + 2;
        assert!(
            help.contains(&format!("{code} {}", k.name())),
            "{k:?} in:\n{help}"
        );
        let row = format!("| {code} | `{}` |", k.name());
        assert!(
            readme.lines().any(|l| l.starts_with(&row)),
            "README lacks {row}"
        );
    }
}

#[test]
fn tree_json_lists_nodes_and_branches() {
    let env = Env::new();
    build(&env);
    let v = env.json(&["tree", MAIN]);
    assert_eq!(
        v["head"],
        v["nodes"].as_array().unwrap().last().unwrap()["id"]
    );
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 9);
    let a2 = nodes.iter().find(|n| n["id"] == "a2").unwrap();
    assert_eq!(a2["children"], 2);
    assert_eq!(v["branches"].as_array().unwrap().len(), 2);
}

#[test]
fn new_and_append_write_a_session_a_script_can_read_back() {
    let env = Env::new();
    let entry = env.json(&["new", "--title", "scripted", "--id", "script-1"]);
    assert_eq!(entry["id"], "script-1");
    assert_eq!(entry["title"], "scripted");
    assert_eq!(entry["messageCount"], 0);

    let u = env.json(&[
        "append",
        "script",
        r#"{"role":"user","content":"héllo","x-tag":1}"#,
    ]);
    assert_eq!(u["content"], "héllo");
    assert_eq!(u["x-tag"], 1, "unknown fields are kept");
    let a = env.json(&[
        "append",
        "script-1",
        r#"{"role":"assistant","content":"hi"}"#,
    ]);
    assert_eq!(a["parentId"], u["id"]);
    let shown = env.json(&["show", "script-1"]);
    assert_eq!(
        ids(&shown["messages"]),
        [u["id"].as_str().unwrap(), a["id"].as_str().unwrap()]
    );
    assert_eq!(shown["session"]["messageCount"], 2);

    // Not JSON, not an object, an unknown session, a taken id.
    env.fails(&["append", "script-1", "{not json"], 6);
    env.fails(&["append", "script-1", "[1]"], 6);
    env.fails(&["append", "nope", r#"{"role":"user","content":"x"}"#], 3);
    env.fails(&["new", "--id", "script-1"], 5);
}

#[test]
fn fork_resume_at_rename_delete() {
    let env = Env::new();
    build(&env);
    let f = env.json(&[
        "--deterministic",
        "1767300000000",
        "fork",
        MAIN,
        "--at",
        "u3",
        "--title",
        "third",
    ]);
    let new_id = f["id"].as_str().unwrap().to_string();
    assert_eq!(f["title"], "third");
    assert_eq!(f["headId"], "u3");
    assert_eq!(f["forkedFrom"]["messageId"], "u3");

    let r = env.json(&["resume-at", MAIN, "a3"]);
    assert_eq!(r["headId"], "a3");
    let path = ids(&env.json(&["show", MAIN])["messages"]);
    assert_eq!(path, ["u1", "a1", "t1", "a2", "u2", "a3"]);

    let r = env.json(&["rename", &new_id, "renamed title"]);
    assert_eq!(r["title"], "renamed title");
    let list = env.json(&["list"]);
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["title"] == "renamed title"));

    let d = env.json(&["delete", &new_id]);
    assert_eq!(d["deleted"], new_id.as_str());
    assert_eq!(env.json(&["list"]).as_array().unwrap().len(), 2);
    env.fails(&["show", &new_id], 3);
}

#[test]
fn busy_session_exits_4() {
    let env = Env::new();
    build(&env);
    let held = env.store().open_session(MAIN).unwrap();
    let err = env.fails(&["rename", MAIN, "x"], 4);
    assert!(err.contains("busy"), "{err}");
    env.fails(&["rewind", MAIN, "--to", "u3", "--conversation"], 4);
    drop(held);
    env.json(&["rename", MAIN, "x"]);
}

#[test]
fn undo_lists_candidates_with_diff_stats() {
    let env = Env::new();
    build(&env);
    let v = env.json(&["undo", MAIN]);
    let c = v["candidates"].as_array().unwrap();
    // u1 is compacted; u3 is the only visible user message left.
    let ids: Vec<&str> = c.iter().map(|c| c["messageId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["u3"]);
    assert_eq!(c[0]["restorable"], true);
    // b.txt exists now but not at u3's snapshot? It was created in turn 2, which
    // was rewound in the conversation only, so it is still on disk.
    assert!(c[0]["stats"]["filesChanged"].as_u64().is_some());
}

#[test]
fn rewind_dry_run_changes_nothing_and_apply_restores() {
    let env = Env::new();
    build(&env);
    let a = env.root().join("a.txt");
    std::fs::write(&a, "edited by the agent later\n").unwrap();
    // The change above was outside the agent: a conflict.
    let v = env.json(&["rewind", MAIN, "--to", "u2", "--dry-run"]);
    assert_eq!(v["dryRun"], true);
    let files = v["plan"]["files"].as_array().unwrap();
    assert!(files
        .iter()
        .any(|f| f["path"] == "b.txt" && f["action"] == "delete"));
    assert!(v["plan"]["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "a.txt"));
    assert_eq!(v["head"]["to"], "a2");
    assert!(
        env.root().join("b.txt").exists(),
        "a dry run deletes nothing"
    );

    let err = env.fails(&["rewind", MAIN, "--to", "u2"], 5);
    assert!(err.contains("a.txt"), "{err}");
    assert!(
        env.root().join("b.txt").exists(),
        "a refused rewind changes nothing"
    );

    let v = env.json(&["rewind", MAIN, "--to", "u2", "--force"]);
    assert_eq!(v["result"]["head"], "a2");
    assert!(!env.root().join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\nthree\n");
}

#[test]
fn export_jsonl_and_markdown() {
    let env = Env::new();
    build(&env);
    let out = env.text(&["export", MAIN, "--format", "jsonl"]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[0]["id"], "u1");
    assert_eq!(lines[0]["compacted"], true);
    assert!(lines.iter().all(|m| m.get("type").is_none()));
    let md = env.text(&["export", MAIN, "--format", "markdown"]);
    assert!(md.starts_with("# Change a.txt to say three\n"), "{md}");
    assert!(md.contains("<details><summary>Tool call <code>edit_file</code>"));
    assert!(md.contains("## Compaction summary"));
}

#[test]
fn gc_reports_bytes() {
    let env = Env::new();
    let (_, fork) = build(&env);
    let v = env.json(&["gc"]);
    assert_eq!(
        v["bytesFreed"].as_u64().unwrap(),
        v["bytesBefore"].as_u64().unwrap() - v["bytesAfter"].as_u64().unwrap()
    );
    env.json(&["delete", MAIN]);
    env.json(&["delete", &fork]);
    let v = env.json(&["gc"]);
    assert_eq!(v["branches"], 0);
    assert!(v["objectsAfter"].as_u64().unwrap() < v["objectsBefore"].as_u64().unwrap());
}

#[test]
fn completions_and_colours() {
    let env = Env::new();
    let out = env.text(&["completions", "bash"]);
    assert!(out.contains("sessionkit") && out.contains("rewind"));
    build(&env);
    // Forced colour shows styles; NO_COLOR wins over it.
    let out = env
        .cmd()
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .args(["show", MAIN])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\u{1b}["));
    let out = env
        .cmd()
        .env("CLICOLOR_FORCE", "1")
        .args(["show", MAIN])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\u{1b}["));
}
