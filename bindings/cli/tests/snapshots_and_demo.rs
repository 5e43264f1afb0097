//! The human output of list, show, tree and rewind --dry-run on a deterministic
//! store (insta snapshots under tests/snapshots), and the demo end to end.

mod common;

use common::{build, Env, MAIN};

#[test]
fn human_output() {
    let env = Env::new();
    build(&env);
    // Deterministic mode makes the fork's id the same every run.
    insta::assert_snapshot!("list", env.text(&["list"]));
    insta::assert_snapshot!("show", env.text(&["show", MAIN]));
    insta::assert_snapshot!("show_full", env.text(&["show", MAIN, "--full"]));
    insta::assert_snapshot!("tree", env.text(&["tree", MAIN]));
    std::fs::write(env.root().join("a.txt"), "changed outside\n").unwrap();
    insta::assert_snapshot!(
        "rewind_dry_run",
        env.text(&["rewind", MAIN, "--to", "u2", "--dry-run"])
    );
}

#[test]
fn demo_runs_and_leaves_a_session_and_its_fork() {
    let env = Env::new();
    let out = env.text(&["demo"]);
    for step in [
        "create", "user", "edit", "subagent", "rewind", "compact", "fork",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(step)),
            "no {step} step in:\n{out}"
        );
    }
    assert!(
        out.contains("NOTES.md gone: true; util.py returns 42 again: true"),
        "{out}"
    );
    // The listing shows two sessions, one a fork; the tree shows the undone branch.
    let list = out.split("$ sessionkit list").nth(1).unwrap();
    assert!(list.contains("fork of"), "{list}");
    let tree = out.split("$ sessionkit tree").nth(1).unwrap();
    assert!(tree.contains("├─") && tree.contains("└─"), "{tree}");
    assert!(tree.contains("← HEAD"));
    // The store has the two sessions (the demo's temporary project is gone).
    let projects: Vec<_> = std::fs::read_dir(env.home.path().join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("sessionkit-demo")
        })
        .collect();
    assert_eq!(projects.len(), 1);
    let logs = std::fs::read_dir(&projects[0])
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".jsonl")
        })
        .count();
    assert_eq!(logs, 2);
}
