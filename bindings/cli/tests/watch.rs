//! `sessionkit import --watch` and `import` without a path (issue 32): a line
//! appended to a watched transcript is in the store within a second, a new
//! file is imported, SIGINT and SIGTERM end the watch with status 0, and the
//! one-shot form reads the tools' own directories under HOME.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use serde_json::Value;

const SESSION: &str = "7f3c1a52-0d4e-4b8e-9a21-5c6d7e8f9a01";
/// The variables that would send the tools' default locations elsewhere.
const TOOL_VARS: [&str; 5] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "PI_CODING_AGENT_DIR",
    "GEMINI_CLI_HOME",
    "SESSIONKIT_WATCH_POLL",
];

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A Claude Code line of session `session`, a user message saying `text`.
fn claude_line(session: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    let v = serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": "/home/ann/app", "sessionId": session, "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid, "timestamp": "2025-06-02T10:07:00.000Z",
    });
    format!("{v}\n")
}

/// A running `import --watch`, killed if a test fails before stopping it.
struct Watch {
    child: Child,
    /// The status line it printed on stderr (file events or polling).
    status: String,
}

impl Watch {
    fn start(env: &Env, home: &Path, args: &[&str], extra_env: &[(&str, &str)]) -> Watch {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("sessionkit"));
        c.env_remove("SESSIONKIT_HOME")
            .env("NO_COLOR", "1")
            .env("HOME", home)
            .arg("--home")
            .arg(env.home.path())
            .arg("--project")
            .arg(env.project.path())
            .args(["import", "--watch"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for v in TOOL_VARS {
            c.env_remove(v);
        }
        for (k, v) in extra_env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        // The status line comes once the watch is set up, before the first import.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut status = String::new();
        stderr.read_line(&mut status).unwrap();
        // The rest (warnings) into the test's output, and never a full pipe.
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(|l| l.ok()) {
                eprintln!("watch: {line}");
            }
        });
        Watch { child, status }
    }

    /// Send `signal` and wait (at most 10 s) for the exit status.
    fn stop(mut self, signal: &str) -> std::process::ExitStatus {
        let killed = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the watch did not stop on {signal}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The session's `show --json`, or `None` while it does not exist.
fn show(env: &Env, id: &str) -> Option<String> {
    let out = env.cmd().args(["--json", "show", id]).output().unwrap();
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap())
}

/// Poll until `id`'s transcript holds `text`; how long it took, or `None`
/// after `limit`.
fn wait_for(env: &Env, id: &str, text: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if show(env, id).is_some_and(|s| s.contains(text)) {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.flush().unwrap();
}

/// The watch on a copy of the Claude Code fixture; the first import done.
fn watching(env: &Env, fake_home: &Path, extra_env: &[(&str, &str)]) -> (Watch, PathBuf) {
    let src = fake_home.join("src");
    copy_dir(
        &fixtures().join("claude-code/-home-ann-app"),
        &src.join("-home-ann-app"),
    );
    let w = Watch::start(env, fake_home, &[src.to_str().unwrap()], extra_env);
    let first = wait_for(
        env,
        SESSION,
        "Thanks, run the tests again.",
        Duration::from_secs(10),
    );
    assert!(first.is_some(), "the first import did not happen");
    (w, src)
}

fn picks_up_an_appended_line(extra_env: &[(&str, &str)], expect: &str) {
    let env = Env::new();
    let fake_home = tempfile::tempdir().unwrap();
    let (w, src) = watching(&env, fake_home.path(), extra_env);
    assert!(w.status.contains(expect), "{}", w.status);
    let transcript = src.join(format!("-home-ann-app/{SESSION}.jsonl"));
    let line = claude_line(
        SESSION,
        "a0000000-0000-4000-8000-0000000000f1",
        Some("a0000000-0000-4000-8000-00000000000b"),
        "Appended while watched",
    );
    // Half a line first: not imported until it is complete (FORMAT §22.1).
    let (head, tail) = line.split_at(line.len() / 2);
    append(&transcript, head);
    assert_eq!(
        wait_for(
            &env,
            SESSION,
            "Appended while watched",
            Duration::from_millis(400)
        ),
        None,
        "an incomplete line was imported"
    );
    append(&transcript, tail);
    let took = wait_for(
        &env,
        SESSION,
        "Appended while watched",
        Duration::from_secs(1),
    );
    eprintln!("pick-up latency ({expect}): {took:?}");
    assert!(
        took.is_some(),
        "the appended line was not in the store within a second"
    );
    assert!(w.stop("TERM").success());
}

#[test]
fn an_appended_line_is_in_the_store_within_a_second() {
    picks_up_an_appended_line(&[], "file events");
}

#[test]
fn polling_when_file_events_are_unavailable_also_within_a_second() {
    picks_up_an_appended_line(&[("SESSIONKIT_WATCH_POLL", "1")], "polling every 250 ms");
}

#[test]
fn a_new_file_in_a_new_directory_is_imported_and_sigint_stops_with_0() {
    let env = Env::new();
    let fake_home = tempfile::tempdir().unwrap();
    let (w, src) = watching(&env, fake_home.path(), &[]);
    // A directory created after the watch began, a transcript written in it
    // at once (before any watch on it can exist).
    let new_session = "0b0b0b0b-0000-4000-8000-000000000001";
    let dir = src.join("-home-ann-other");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{new_session}.jsonl")),
        claude_line(
            new_session,
            "b0000000-0000-4000-8000-000000000001",
            None,
            "A new transcript",
        ),
    )
    .unwrap();
    let took = wait_for(
        &env,
        new_session,
        "A new transcript",
        Duration::from_secs(1),
    );
    assert!(
        took.is_some(),
        "the new file was not imported within a second"
    );
    // And a second file in that directory, now watched.
    let third = "0b0b0b0b-0000-4000-8000-000000000002";
    std::fs::write(
        dir.join(format!("{third}.jsonl")),
        claude_line(
            third,
            "b0000000-0000-4000-8000-000000000002",
            None,
            "Another one",
        ),
    )
    .unwrap();
    assert!(wait_for(&env, third, "Another one", Duration::from_secs(1)).is_some());
    assert!(w.stop("INT").success());
}

fn one_shot(env: &Env, home: &Path, args: &[&str]) -> std::process::Output {
    let mut c = env.cmd();
    c.env("HOME", home);
    for v in TOOL_VARS {
        c.env_remove(v);
    }
    c.arg("import").args(args).output().unwrap()
}

#[test]
fn import_without_a_path_reads_the_tools_directories_under_home() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    copy_dir(
        &fixtures().join("claude-code/-home-ann-app"),
        &home.path().join(".claude/projects/-home-ann-app"),
    );
    copy_dir(
        &fixtures().join("codex"),
        &home.path().join(".codex/sessions"),
    );

    let out = one_shot(&env, home.path(), &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources = v["sources"].as_array().unwrap();
    let formats: Vec<&str> = sources
        .iter()
        .map(|s| s["format"].as_str().unwrap())
        .collect();
    assert!(
        formats.contains(&"claude-code") && formats.contains(&"codex"),
        "{formats:?}"
    );
    assert!(sources.iter().all(|s| s["outcome"] == "imported"), "{v:#}");

    // Again: nothing changes, and --quiet prints nothing.
    let again = one_shot(&env, home.path(), &["--json"]);
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["messagesAdded"], 0);
    assert!(again["sources"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["outcome"] == "upToDate"));
    let quiet = one_shot(&env, home.path(), &["--quiet"]);
    assert!(quiet.status.success());
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty());

    // A source whose imported part was rewritten is reported as changed, a
    // failure: status 1, and --quiet names only it.
    let transcript = home
        .path()
        .join(format!(".claude/projects/-home-ann-app/{SESSION}.jsonl"));
    let text = std::fs::read_to_string(&transcript).unwrap();
    std::fs::write(&transcript, text.replace("greeting", "farewell")).unwrap();
    let failed = one_shot(&env, home.path(), &["--quiet"]);
    assert_eq!(failed.status.code(), Some(1));
    let text = String::from_utf8(failed.stdout).unwrap();
    assert!(text.starts_with("changed "), "{text}");
    // The changed source and the summary; no line for the others.
    let unindented: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(unindented.len(), 2, "{text}");
}

#[test]
fn import_without_a_path_and_nothing_there() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    let out = one_shot(&env, home.path(), &[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("no tool's session directory exists here"),
        "{text}"
    );
    assert!(text.contains(".claude/projects"), "{text}");
    // A watch of nothing is an error, not a silent wait.
    let out = one_shot(&env, home.path(), &["--watch"]);
    // NotFound: its code 1 plus 2.
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

#[test]
fn a_row_a_running_opencode_writes_to_its_write_ahead_log_is_imported_within_a_second() {
    let env = Env::new();
    let fake_home = tempfile::tempdir().unwrap();
    let src = fake_home.path().join("opencode");
    std::fs::create_dir_all(&src).unwrap();
    // opencode keeps its database in WAL mode with its connection open: new
    // rows land in `opencode.db-wal`, and the database file does not change.
    let conn = rusqlite::Connection::open(src.join("opencode.db")).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    let sql = std::fs::read_to_string(fixtures().join("opencode/opencode.sql")).unwrap();
    conn.execute_batch(&sql).unwrap();
    let session = "ses_52a1f0c3dffeQk7Zr2LmNp4TvW";
    let w = Watch::start(&env, fake_home.path(), &[src.to_str().unwrap()], &[]);
    assert!(
        wait_for(&env, session, "largest", Duration::from_secs(10)).is_some(),
        "the first import did not happen"
    );
    let db_bytes = std::fs::read(src.join("opencode.db")).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO message VALUES ('msg_ad5e0f5a0001Nw1Nw2Nw3Nw4Nw','{session}',1764494200000,1764494200000,
          '{{\"role\":\"user\",\"time\":{{\"created\":1764494200000}},\"agent\":\"build\"}}');
         INSERT INTO part VALUES ('prt_ad5e0f5a0002Nw5Nw6Nw7Nw8Nw','msg_ad5e0f5a0001Nw1Nw2Nw3Nw4Nw','{session}',1764494200000,1764494200000,
          '{{\"type\":\"text\",\"text\":\"Written while watched\"}}');"
    ))
    .unwrap();
    assert_eq!(
        std::fs::read(src.join("opencode.db")).unwrap(),
        db_bytes,
        "the row is only in the write-ahead log"
    );
    let took = wait_for(
        &env,
        session,
        "Written while watched",
        Duration::from_secs(1),
    );
    eprintln!("pick-up latency (opencode WAL): {took:?}");
    assert!(
        took.is_some(),
        "the new row was not in the store within a second"
    );
    assert!(w.stop("TERM").success());
}
