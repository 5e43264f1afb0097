//! `sessionkit export ID --to claude-code|codex [--agent-home DIR]`: the file
//! written, its result, idempotence, a conflict, bad input; `--format`
//! unchanged; `--codex-home` still accepted (`--home` is the store's own).

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
    assert_eq!(v["to"], "codex");
    let id = v["nativeId"].as_str().unwrap();
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

#[test]
fn export_to_claude_code_writes_a_transcript_and_says_how_to_resume_it() {
    let env = Env::new();
    build(&env);
    let claude = tempfile::tempdir().unwrap();
    let home = claude.path().to_str().unwrap();
    let v = env.json(&["export", MAIN, "--to", "claude-code", "--agent-home", home]);
    assert_eq!(v["to"], "claude-code");
    assert_eq!(v["idSource"], "derived");
    assert_eq!(v["written"], true);
    let id = v["nativeId"].as_str().unwrap();
    let root = env.root().canonicalize().unwrap();
    let dir: String = root
        .to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let path = Path::new(v["path"].as_str().unwrap());
    assert_eq!(
        path,
        claude
            .path()
            .join("projects")
            .join(dir)
            .join(format!("{id}.jsonl"))
    );
    assert!(
        v["resumeCommand"]
            .as_str()
            .unwrap()
            .ends_with(&format!("claude --resume {id}")),
        "{v}"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, v["items"].as_u64().unwrap());
    assert!(lines[0]["parentUuid"].is_null());
    for w in lines.windows(2) {
        // A compaction starts a new root, its logical parent the line before.
        let parent = match w[1]["subtype"] == "compact_boundary" {
            true => &w[1]["logicalParentUuid"],
            false => &w[1]["parentUuid"],
        };
        assert_eq!(parent, &w[0]["uuid"], "{}", w[1]);
    }
    assert!(lines.iter().all(|l| l["sessionId"] == id));
    // A tool call of the session, answered on the next line.
    let i = lines
        .iter()
        .position(|l| l["message"]["content"].to_string().contains("\"tool_use\""))
        .expect("a tool_use line");
    let call = lines[i]["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(lines[i + 1]["type"], "user");
    assert_eq!(
        lines[i + 1]["message"]["content"][0]["tool_use_id"],
        call["id"]
    );

    let out = env.text(&["export", MAIN, "--to", "claude-code", "--agent-home", home]);
    assert!(out.starts_with("unchanged "), "{out}");
    assert!(out.contains(&format!("claude --resume {id}")), "{out}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    // --agent-home is for --to only.
    env.fails(&["export", MAIN, "--agent-home", home], 2);
    let err = env.fails(
        &["export", MAIN, "--to", "claude-code", "--agent-home", "rel"],
        6,
    );
    assert!(err.contains("rel"), "{err}");
    assert_eq!(files(claude.path()), 1);
}
