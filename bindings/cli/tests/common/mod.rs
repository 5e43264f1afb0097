//! A deterministic store made by the library, and a runner for the binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};
use sessionkit::{CreateOptions, Deterministic, ForkOptions, RewindMode, Store, StoreOptions};

pub const START_MS: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
/// "Now" for relative times in snapshots: one hour after the store was written.
pub const NOW: &str = "2026-01-01T01:00:00Z";

pub struct Env {
    pub home: tempfile::TempDir,
    pub project: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    pub fn options(&self, start_ms: u64) -> StoreOptions {
        StoreOptions {
            home: Some(self.home.path().to_path_buf()),
            deterministic: Some(Deterministic::new(start_ms, 1000, 7)),
            ..StoreOptions::default()
        }
    }

    pub fn store(&self) -> Store {
        Store::open(self.project.path(), self.options(START_MS + 10_000_000)).unwrap()
    }

    pub fn root(&self) -> &Path {
        self.project.path()
    }

    /// The binary with this home and project, no colours, a fixed "now".
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("sessionkit").unwrap();
        c.env_remove("SESSIONKIT_HOME")
            .env_remove("CLICOLOR_FORCE")
            .env("NO_COLOR", "1")
            .env("SESSIONKIT_NOW", NOW)
            .arg("--home")
            .arg(self.home.path())
            .arg("--project")
            .arg(self.project.path());
        c
    }

    /// Run with `--json`, expect success, parse stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().arg("--json").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Run, expect success, return stdout.
    pub fn text(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Run, expect failure with `code`, return stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.cmd().args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    }
}

pub const MAIN: &str = "0000main-session";
pub const FORK_TITLE: &str = "Try it the other way";

/// A session with tool calls, file edits with snapshots, a rewound branch and a
/// compaction, plus a fork of it. Returns (main id, fork id).
pub fn build(env: &Env) -> (String, String) {
    let store = Store::open(env.root(), env.options(START_MS)).unwrap();
    let root = env.root();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    let s = store
        .create_session(CreateOptions {
            title: None,
            id: Some(MAIN.into()),
        })
        .unwrap();
    s.user_input(json!({"id": "u1", "content": "Change a.txt to say three"}))
        .unwrap();
    s.append(
        json!({"id": "a1", "role": "assistant", "content": "Editing a.txt.",
        "messageParams": {"tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "edit_file", "arguments": "{\"path\":\"a.txt\"}"}}]}}),
    )
    .unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    std::fs::write(root.join("a.txt"), "one\nthree\n").unwrap();
    s.after_edit(&["a.txt"]).unwrap();
    s.append(
        json!({"id": "t1", "role": "tool", "content": "edited a.txt\nok",
        "messageParams": {"tool_call_id": "call_1"}}),
    )
    .unwrap();
    s.append(json!({"id": "a2", "role": "assistant", "content": "Done.",
        "meta": {"usage": {"input_tokens": 100, "output_tokens": 20}}}))
        .unwrap();
    s.update_state(json!({"status": "completed"})).unwrap();
    s.user_input(json!({"id": "u2", "content": "Now create b.txt"}))
        .unwrap();
    s.before_edit(&["b.txt"]).unwrap();
    std::fs::write(root.join("b.txt"), "bee\n").unwrap();
    s.after_edit(&["b.txt"]).unwrap();
    s.append(json!({"id": "a3", "role": "assistant", "content": "Created b.txt."}))
        .unwrap();
    // Undo turn 2 in the conversation only, then take another direction.
    s.rewind("u2", RewindMode::Conversation, false).unwrap();
    s.user_input(json!({"id": "u3", "content": "Actually, add a line to a.txt"}))
        .unwrap();
    s.append(
        json!({"id": "a4", "role": "assistant", "content": "Added a line.",
        "meta": {"usage": {"input_tokens": 300, "output_tokens": 30}}}),
    )
    .unwrap();
    let plan = vec!["u1".to_string(), "a1".into(), "t1".into(), "a2".into()];
    s.apply_compaction(&plan, json!("The user had a.txt changed to say three."))
        .unwrap();
    s.close().unwrap();
    let f = store
        .fork_session(
            MAIN,
            ForkOptions {
                at: Some("a2".into()),
                title: Some(FORK_TITLE.into()),
            },
        )
        .unwrap();
    let fork = f.id().to_string();
    f.close().unwrap();
    (MAIN.to_string(), fork)
}

/// Copy a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}
