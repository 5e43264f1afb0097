//! `sessionkit export ID --to codex [--codex-home DIR]`: the rollout written,
//! its result, idempotence, a conflict, bad input; `--format` unchanged.

mod common;

use std::path::Path;

use common::{build, Env, MAIN};
use serde_json::Value;

fn files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn export_to_codex_writes_a_rollout_and_says_how_to_resume_it() {
    let env = Env::new();
    build(&env);
    let codex = tempfile::tempdir().unwrap();
    let home = codex.path().to_str().unwrap();
    let v = env.json(&["export", MAIN, "--to", "codex", "--codex-home", home]);
    // MAIN is no UUID: Codex gets a UUIDv7 made from it.
    assert_eq!(v["idSource"], "derived");
    let id = v["codexId"].as_str().unwrap();
    assert_eq!(v["resumeCommand"], format!("codex resume {id}"));
    assert_eq!(v["written"], true);
    let path = Path::new(v["path"].as_str().unwrap());
    assert!(path.starts_with(codex.path().join("sessions")));
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("rollout-") && name.ends_with(&format!("-{id}.jsonl")),
        "{name}"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, v["items"].as_u64().unwrap() + 1);
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(lines[0]["payload"]["id"], id);
    assert_eq!(lines[0]["payload"]["source"], "cli");
    assert!(lines[..10]
        .iter()
        .any(|l| l["payload"]["type"] == "user_message"));

    // Again: the same file, untouched; in text, what to run.
    let out = env.text(&["export", MAIN, "--to", "codex", "--codex-home", home]);
    assert!(out.starts_with("unchanged "), "{out}");
    assert!(
        out.contains(&format!("resume with: codex resume {id}")),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(path).unwrap(), text);

    // A different file in its place is left alone.
    std::fs::write(path, "{}\n").unwrap();
    let err = env.fails(&["export", MAIN, "--to", "codex", "--codex-home", home], 5);
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), "{}\n");

    // --format is as it was.
    let out = env.text(&["export", MAIN, "--format", "jsonl"]);
    assert_eq!(out.lines().count(), 7);
}

#[test]
fn export_to_codex_refuses_bad_input_and_writes_nothing() {
    let env = Env::new();
    build(&env);
    let codex = tempfile::tempdir().unwrap();
    let home = codex.path().to_str().unwrap();
    env.fails(&["export", "zzz", "--to", "codex", "--codex-home", home], 3);
    let err = env.fails(
        &["export", MAIN, "--to", "codex", "--codex-home", "rel/codex"],
        6,
    );
    assert!(err.contains("rel/codex"), "{err}");
    // --codex-home needs --to; --to and --format exclude each other.
    env.fails(&["export", MAIN, "--codex-home", home], 2);
    env.fails(&["export", MAIN, "--to", "codex", "--format", "json"], 2);
    assert_eq!(files(codex.path()), 0);
}
