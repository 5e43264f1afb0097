//! Importing Claude Code, Codex and seed-style transcripts: the fixtures under
//! tests/fixtures/import, what each line becomes, re-import and growth.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sessionkit::{
    import, ImportOptions, ImportReport, ModelViewOptions, SourceOutcome, Store, StoreOptions,
};
use tempfile::TempDir;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/import")
}

struct Env {
    home: TempDir,
    project: TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    fn store_options(&self) -> StoreOptions {
        StoreOptions {
            home: Some(self.home.path().to_path_buf()),
            ..StoreOptions::default()
        }
    }

    fn options(&self) -> ImportOptions {
        ImportOptions {
            project: Some(self.project.path().to_path_buf()),
            store: self.store_options(),
            ..ImportOptions::default()
        }
    }

    fn import(&self, paths: &[PathBuf]) -> ImportReport {
        import(paths, &self.options(), &mut |_| {}).unwrap()
    }

    fn store(&self) -> Store {
        Store::open(self.project.path(), self.store_options()).unwrap()
    }
}

fn ids(messages: &[sessionkit::Message]) -> Vec<String> {
    messages.iter().map(|m| m.id().to_string()).collect()
}

fn source_line(path: &Path, n: usize) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .split('\n')
        .nth(n - 1)
        .unwrap()
        .to_string()
}

/// Every file under `dir` with its bytes, for "nothing changed" checks.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

const MAIN: &str = "7f3c1a52-0d4e-4b8e-9a21-5c6d7e8f9a01";
const NEWER: &str = "8a4d2b63-1e5f-4c9f-8b32-6d7e8f9a0b12";

#[test]
fn a_claude_code_project_keeps_tree_sidechains_compaction_and_every_line() {
    let env = Env::new();
    let dir = fixtures().join("claude-code/-home-ann-app");
    let before = snapshot(&dir);
    let report = env.import(std::slice::from_ref(&dir));
    assert_eq!(report.failed, 0, "{report:#?}");
    assert_eq!(report.sources.len(), 4);
    // Sessions before the sidechain files that hang from them.
    assert!(report.sources[..2].iter().all(|s| s.agent_id.is_none()));
    assert_eq!(snapshot(&dir), before, "sources are only read");

    let store = env.store();
    let entry = store.session_entry(MAIN).unwrap();
    assert_eq!(entry.title, "Fix the greeting test");
    assert_eq!(entry.created_at, "2025-06-02T10:00:00.000Z");
    // The source's last time (its sidechain's, whose spawn and result records
    // take the sidechain's times), never the import's.
    assert_eq!(entry.updated_at, "2025-06-02T10:06:09.000Z");
    assert_eq!(entry.status, sessionkit::Status::Completed);
    let newer = store.session_entry(NEWER).unwrap();
    assert_eq!(newer.updated_at, "2026-01-20T11:57:40.000Z");
    let view = store.read_session(MAIN).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());

    // The tree: two replies to one tool result, the second on the active path.
    let m6 = view
        .message("a0000000-0000-4000-8000-000000000006")
        .unwrap();
    let m7 = view
        .message("a0000000-0000-4000-8000-000000000007")
        .unwrap();
    assert_eq!(m6.parent_id(), m7.parent_id());
    assert_eq!(m6.parent_id(), Some("a0000000-0000-4000-8000-000000000005"));

    // Roles, content blocks and usage as the source has them; the line itself kept exactly.
    let a2 = view
        .message("a0000000-0000-4000-8000-000000000002")
        .unwrap()
        .value();
    assert_eq!(a2["role"], "assistant");
    assert_eq!(a2["timestamp"], "2025-06-02T10:00:03.512Z");
    assert_eq!(a2["content"][2]["type"], "tool_use");
    assert_eq!(a2["meta"]["usage"]["output_tokens"], 40);
    assert_eq!(a2["import"]["format"], "claude-code");
    assert_eq!(a2["import"]["line"], 3);
    let main_file = dir.join(format!("{MAIN}.jsonl"));
    assert_eq!(a2["import"]["raw"], source_line(&main_file, 3).as_str());

    // The compaction: the model resumes from the summary.
    let model = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(
        ids(&model),
        [
            "a0000000-0000-4000-8000-00000000000a",
            "a0000000-0000-4000-8000-00000000000b"
        ]
    );
    let ui = view.active_path().unwrap();
    assert_eq!(
        ui.first().unwrap().id(),
        "a0000000-0000-4000-8000-000000000001"
    );

    // Lines that are not messages survive as records, byte for byte.
    let log = std::fs::read_to_string(store.log_path(MAIN).unwrap()).unwrap();
    for n in [1, 5] {
        let raw = source_line(&main_file, n);
        let kept = log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|r| r["type"] == "import" && r["line"] == n && r["raw"] == raw.as_str());
        assert!(kept, "line {n} kept as an import record");
    }

    // Sidechains: inline ones and the file beside the session are subagents.
    let subagents: Vec<String> = store
        .list_subagents(MAIN)
        .unwrap()
        .iter()
        .map(|m| m["agentId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(subagents.len(), 2, "{subagents:?}");
    assert!(subagents.contains(&"a1b2c3d".to_string()));
    assert!(subagents.contains(&"sidechain-b0000000-0000-4000-8000-000000000001".to_string()));
    let side = store.read_subagent(MAIN, "a1b2c3d").unwrap();
    assert_eq!(side.active_path().unwrap().len(), 3);
    // The newer layout: the session's own folder.
    let newer = store.read_subagent(NEWER, "e4f5a6b").unwrap();
    assert_eq!(
        ids(&newer.active_path().unwrap()),
        [
            "e0000000-0000-4000-8000-000000000001",
            "e0000000-0000-4000-8000-000000000002"
        ]
    );

    // Again: nothing changes, not a byte.
    let home_before = snapshot(env.home.path());
    let again = env.import(&[dir]);
    assert!(
        again
            .sources
            .iter()
            .all(|s| s.outcome == SourceOutcome::UpToDate),
        "{again:#?}"
    );
    assert_eq!(again.messages_added, 0);
    assert_eq!(snapshot(env.home.path()), home_before);
}

#[test]
fn a_grown_source_adds_only_its_new_lines_and_a_rewritten_one_is_reported() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join(format!("{MAIN}.jsonl"));
    let full =
        std::fs::read_to_string(fixtures().join(format!("claude-code/-home-ann-app/{MAIN}.jsonl")))
            .unwrap();
    let lines: Vec<&str> = full.lines().collect();
    std::fs::write(&file, lines[..4].join("\n") + "\n").unwrap();
    let first = env.import(std::slice::from_ref(&file));
    assert_eq!(first.sources[0].outcome, SourceOutcome::Imported);
    assert_eq!(first.messages_added, 3);

    std::fs::write(&file, lines[..6].join("\n") + "\n").unwrap();
    let grown = env.import(std::slice::from_ref(&file));
    assert_eq!(grown.sources[0].outcome, SourceOutcome::Imported);
    assert_eq!(grown.sources[0].lines, 2);
    assert_eq!(grown.messages_added, 1, "{grown:#?}");
    assert_eq!(grown.sources[0].records_added, 1);
    let store = env.store();
    assert_eq!(store.session_entry(MAIN).unwrap().message_count, 4);

    // The part already imported changed: reported, nothing written.
    let log_before = std::fs::read(store.log_path(MAIN).unwrap()).unwrap();
    std::fs::write(&file, lines[1..7].join("\n") + "\n").unwrap();
    let changed = env.import(std::slice::from_ref(&file));
    assert_eq!(changed.sources[0].outcome, SourceOutcome::Changed);
    assert_eq!(changed.failed, 1);
    let why = changed.sources[0].error.as_deref().unwrap();
    assert!(
        why.contains(MAIN) && why.contains(&file.display().to_string()),
        "{why}"
    );
    assert_eq!(
        std::fs::read(store.log_path(MAIN).unwrap()).unwrap(),
        log_before
    );
}

#[test]
fn malformed_claude_code_lines_are_reported_by_number_and_never_panic() {
    let env = Env::new();
    let file = fixtures().join("claude-code/malformed/9b5e3c74-2f60-4da0-9c43-7e8f9a0b1c23.jsonl");
    let report = env.import(std::slice::from_ref(&file));
    let s = &report.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    let skipped: Vec<u64> = s.skipped.iter().map(|n| n.line).collect();
    assert_eq!(skipped, [2, 6, 8], "{:#?}", s.skipped);
    assert!(s.skipped[0].reason.contains("not JSON"));
    assert!(s.skipped[2].reason.contains("incomplete"));
    let unmapped: Vec<u64> = s.unmapped.iter().map(|n| n.line).collect();
    assert_eq!(unmapped, [3, 4, 5], "{:#?}", s.unmapped);
    assert!(s.unmapped[0].reason.contains("uuid"));
    assert!(s.unmapped[2]
        .reason
        .contains("f0000000-0000-4000-8000-00000000dead"));

    let view = env
        .store()
        .read_session("9b5e3c74-2f60-4da0-9c43-7e8f9a0b1c23")
        .unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    let orphan = view
        .message("f0000000-0000-4000-8000-000000000003")
        .unwrap();
    assert_eq!(orphan.parent_id(), None, "a missing parent makes a root");
    assert_eq!(
        ids(&view.active_path().unwrap()),
        [
            "f0000000-0000-4000-8000-000000000001",
            "f0000000-0000-4000-8000-000000000004"
        ]
    );

    // Once the torn line is complete, it alone is added.
    let src = tempfile::tempdir().unwrap();
    let copy = src.path().join(file.file_name().unwrap());
    std::fs::copy(&file, &copy).unwrap();
    let env = Env::new();
    env.import(std::slice::from_ref(&copy));
    let mut text = std::fs::read_to_string(&copy).unwrap();
    text.push_str("tant\",\"content\":\"done\"},\"uuid\":\"f0000000-0000-4000-8000-000000000005\",\"timestamp\":\"2025-07-01T09:00:05.000Z\"}\n");
    std::fs::write(&copy, text).unwrap();
    let r = env.import(&[copy]);
    assert_eq!(r.messages_added, 1, "{r:#?}");
    assert!(r.sources[0].skipped.is_empty());
}

#[test]
fn a_codex_rollout_becomes_one_chain_with_tool_calls_and_a_compaction() {
    let env = Env::new();
    let report = env.import(&[fixtures().join("codex")]);
    assert_eq!(report.sources.len(), 2);
    let main = report
        .sources
        .iter()
        .find(|s| s.session_id.as_deref() == Some("019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"))
        .unwrap();
    assert_eq!(main.outcome, SourceOutcome::Imported);
    let store = env.store();
    let entry = store
        .session_entry("019a2d7a-41c4-78b1-b7cc-a45d62a89cd5")
        .unwrap();
    assert_eq!(entry.title, "Why does the greeting test fail?");
    let view = store.read_session(&entry.id).unwrap();
    let path = view.active_path().unwrap();
    let call = path.iter().find(|m| m.id() == "line-7").unwrap().value();
    assert_eq!(call["messageParams"]["tool_calls"][0]["id"], "call_A1");
    assert_eq!(
        call["messageParams"]["tool_calls"][0]["function"]["name"],
        "shell"
    );
    let result = path.iter().find(|m| m.id() == "line-8").unwrap().value();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["messageParams"]["tool_call_id"], "call_A1");
    let reasoning = path.iter().find(|m| m.id() == "line-6").unwrap().value();
    assert_eq!(
        reasoning["messageParams"]["reasoning_content"],
        "**Reading the test**"
    );
    // After `compacted`, the model sees the summary and what followed.
    let model = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(
        ids(&model),
        ["line-12", "line-13", "line-14", "line-15", "line-16"]
    );

    let bad = report
        .sources
        .iter()
        .find(|s| s.session_id.as_deref() == Some("019a4411-0000-7000-8000-00000000c0de"))
        .unwrap();
    let skipped: Vec<u64> = bad.skipped.iter().map(|n| n.line).collect();
    assert_eq!(skipped, [3, 9], "{bad:#?}");
    let unmapped: Vec<u64> = bad.unmapped.iter().map(|n| n.line).collect();
    assert_eq!(unmapped, [4, 5, 6, 7], "{bad:#?}");
}

#[test]
fn a_seed_style_transcript_imports_as_its_messages() {
    let env = Env::new();
    let file = fixtures().join("deepcode/seed-flat-1.jsonl");
    let report = env.import(std::slice::from_ref(&file));
    assert_eq!(report.messages_added, 5, "{report:#?}");
    let view = env.store().read_session("seed-flat-1").unwrap();
    let path = view.active_path().unwrap();
    assert_eq!(ids(&path), ["1", "2", "3", "4", "5"]);
    assert_eq!(
        path[2].value()["messageParams"]["tool_calls"][0]["id"],
        "c1"
    );
    assert_eq!(
        path[1].value()["import"]["raw"],
        source_line(&file, 2).as_str()
    );
}

#[test]
fn a_source_without_a_project_or_format_is_reported_not_imported() {
    let env = Env::new();
    let file = fixtures().join("deepcode/seed-flat-1.jsonl");
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let r = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap();
    assert_eq!(r.sources[0].outcome, SourceOutcome::Failed);
    assert!(r.sources[0]
        .error
        .as_deref()
        .unwrap()
        .contains("names no working directory"));

    let junk = env.project.path().join("notes.jsonl");
    std::fs::write(&junk, "{\"hello\":1}\n").unwrap();
    let r = env.import(&[junk]);
    assert!(r.sources[0]
        .error
        .as_deref()
        .unwrap()
        .contains("not recognised"));

    let missing = import(
        &[env.project.path().join("nope")],
        &env.options(),
        &mut |_| {},
    );
    assert_eq!(missing.unwrap_err().kind(), sessionkit::ErrorKind::NotFound);
}

#[test]
fn list_all_sessions_spans_the_projects_of_a_home() {
    let env = Env::new();
    env.import(&[fixtures().join("deepcode/seed-flat-1.jsonl")]);
    let other = tempfile::tempdir().unwrap();
    let store = Store::open(other.path(), env.store_options()).unwrap();
    store
        .create_session(sessionkit::CreateOptions::default())
        .unwrap()
        .close()
        .unwrap();
    let all = sessionkit::list_all_sessions(&env.store_options()).unwrap();
    assert_eq!(all.len(), 2);
    let roots: Vec<PathBuf> = all.iter().filter_map(|p| p.project_root.clone()).collect();
    assert!(roots.contains(&std::fs::canonicalize(env.project.path()).unwrap()));
    assert!(all
        .iter()
        .all(|p| p.sessions.len() == 1 && p.error.is_none()));
}

/// A one-message Claude Code transcript whose working directory is `cwd`.
fn transcript_in(dir: &Path, cwd: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let id = format!("4c1d2e3f-0a1b-4c2d-8e3f-{n:012x}");
    let line = serde_json::json!({
        "parentUuid": null, "cwd": cwd, "sessionId": id, "type": "user",
        "message": {"role": "user", "content": "hello"},
        "uuid": "c0000000-0000-4000-8000-000000000001",
        "timestamp": "2025-07-01T09:00:00.000Z",
    });
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

/// Run `f` on another thread and fail if it takes over 20 seconds: an import
/// that blocks (on a FIFO) fails its test instead of hanging the suite.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("the import blocked for 20 seconds")
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

#[test]
fn options_that_cannot_work_are_refused_before_anything_is_written() {
    use sessionkit::ErrorKind;
    let env = Env::new();
    let sources = tempfile::tempdir().unwrap();
    let file = transcript_in(sources.path(), &env.project.path().to_string_lossy());
    let a_file = env.project.path().join("a-file");
    std::fs::write(&a_file, "x").unwrap();
    let cases: Vec<(&str, ImportOptions, ErrorKind, &str)> = vec![
        (
            "an empty project",
            ImportOptions {
                project: Some(PathBuf::new()),
                ..env.options()
            },
            ErrorKind::InvalidInput,
            "project is empty",
        ),
        (
            "a project that does not exist",
            ImportOptions {
                project: Some(env.project.path().join("nope")),
                ..env.options()
            },
            ErrorKind::NotFound,
            "nope",
        ),
        (
            "a project that is a file",
            ImportOptions {
                project: Some(a_file.clone()),
                ..env.options()
            },
            ErrorKind::InvalidInput,
            "not a directory",
        ),
        (
            "an empty home",
            ImportOptions {
                store: StoreOptions {
                    home: Some(PathBuf::new()),
                    ..StoreOptions::default()
                },
                ..env.options()
            },
            ErrorKind::InvalidInput,
            "home is empty",
        ),
        (
            "an empty home, the project from the source",
            ImportOptions {
                project: None,
                store: StoreOptions {
                    home: Some(PathBuf::new()),
                    ..StoreOptions::default()
                },
                ..ImportOptions::default()
            },
            ErrorKind::InvalidInput,
            "home is empty",
        ),
        (
            "invalid store options",
            ImportOptions {
                store: StoreOptions {
                    blob_threshold: 0,
                    ..env.store_options()
                },
                ..env.options()
            },
            ErrorKind::InvalidInput,
            "blobThreshold",
        ),
    ];
    let stray = std::env::current_dir().unwrap().join("projects");
    assert!(
        !stray.exists(),
        "{} exists before the test",
        stray.display()
    );
    for (what, options, kind, needle) in cases {
        let before = (snapshot(env.home.path()), snapshot(env.project.path()));
        let err = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap_err();
        assert_eq!(err.kind(), kind, "{what}: {err}");
        assert!(err.to_string().contains(needle), "{what}: {err}");
        let after = (snapshot(env.home.path()), snapshot(env.project.path()));
        assert!(before == after, "{what}: something was written");
    }
    // The JSON form the bindings pass is refused the same way.
    for (json, kind) in [
        (r#"{"project": ""}"#, ErrorKind::InvalidInput),
        (r#"{"store": {"home": ""}}"#, ErrorKind::InvalidInput),
        (
            r#"{"project": "/nonexistent/sessionkit-project"}"#,
            ErrorKind::NotFound,
        ),
    ] {
        let options = ImportOptions::from_json(json).unwrap();
        let err = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap_err();
        assert_eq!(err.kind(), kind, "{json}: {err}");
    }
    assert!(
        !stray.exists(),
        "an empty home must not put a store in the current directory"
    );
    // The same options, valid, import the source.
    assert_eq!(env.import(&[file]).failed, 0);
}

#[test]
fn only_regular_files_are_imported_and_special_files_never_block() {
    use sessionkit::ErrorKind;
    let env = Env::new();
    let sources = tempfile::tempdir().unwrap();
    let fifo = sources.path().join("pipe.jsonl");
    mkfifo(&fifo);
    let link_to_fifo = sources.path().join("to-pipe.jsonl");
    std::os::unix::fs::symlink(&fifo, &link_to_fifo).unwrap();
    let before = snapshot(env.home.path());
    for given in [
        fifo.clone(),
        link_to_fifo.clone(),
        PathBuf::from("/dev/zero"),
        PathBuf::from("/dev/urandom"),
        PathBuf::from("/dev/null"),
    ] {
        let options = env.options();
        let g = given.clone();
        let err = within_seconds(move || import(&[g], &options, &mut |_| {})).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InvalidInput,
            "{}: {err}",
            given.display()
        );
        let msg = err.to_string();
        assert!(msg.contains(&given.display().to_string()), "{msg}");
        assert!(msg.contains("only regular files"), "{msg}");
    }
    // A loop of links is named as one.
    let loop_a = sources.path().join("loop-a.jsonl");
    std::os::unix::fs::symlink(sources.path().join("loop-b.jsonl"), &loop_a).unwrap();
    std::os::unix::fs::symlink(&loop_a, sources.path().join("loop-b.jsonl")).unwrap();
    let err = import(std::slice::from_ref(&loop_a), &env.options(), &mut |_| {}).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("loop"), "{err}");
    assert_eq!(snapshot(env.home.path()), before, "nothing was written");

    // In a directory, a FIFO (and links, looping or not) are passed over,
    // and a link to a regular file given by name is followed.
    let real = transcript_in(sources.path(), &env.project.path().to_string_lossy());
    let options = env.options();
    let dir = sources.path().to_path_buf();
    let r = within_seconds(move || import(&[dir], &options, &mut |_| {})).unwrap();
    let paths: Vec<&Path> = r.sources.iter().map(|s| s.path.as_path()).collect();
    assert_eq!(paths, [real.as_path()], "{r:#?}");
    assert_eq!(r.failed, 0, "{r:#?}");
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = env.import(&[link]);
    assert_eq!(r.failed, 0, "{r:#?}");
}

#[test]
fn a_source_past_the_size_limit_fails_unread_and_writes_nothing() {
    let env = Env::new();
    let sources = tempfile::tempdir().unwrap();
    let big = sources.path().join("big.jsonl");
    // Sparse: the size is seen before any byte is read.
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(sessionkit::MAX_IMPORT_SOURCE_BYTES + 1).unwrap();
    drop(f);
    let small = transcript_in(sources.path(), &env.project.path().to_string_lossy());
    let before = snapshot(env.home.path());
    let r = env.import(std::slice::from_ref(&big));
    let s = &r.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Failed, "{s:#?}");
    let msg = s.error.as_deref().unwrap();
    assert!(msg.contains(&big.display().to_string()), "{msg}");
    assert!(
        msg.contains(&sessionkit::MAX_IMPORT_SOURCE_BYTES.to_string()),
        "{msg}"
    );
    assert_eq!(snapshot(env.home.path()), before, "nothing was written");
    // The other sources of the call still import.
    let r = env.import(&[big, small]);
    assert_eq!(r.failed, 1);
    assert_eq!(r.sources[1].outcome, SourceOutcome::Imported, "{r:#?}");
}

#[test]
fn a_source_naming_a_relative_project_is_refused_and_lands_nowhere() {
    let env = Env::new();
    let sources = tempfile::tempdir().unwrap();
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    for cwd in ["../../etc", "", ".", "sub/dir", "/tmp/a\u{0}b"] {
        let file = transcript_in(sources.path(), cwd);
        let before = snapshot(env.home.path());
        let r = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap();
        let s = &r.sources[0];
        assert_eq!(s.outcome, SourceOutcome::Failed, "{cwd:?}: {s:#?}");
        assert_eq!(r.failed, 1);
        let msg = s.error.as_deref().unwrap();
        assert!(
            msg.contains("give the project to import it into"),
            "{cwd:?}: {msg}"
        );
        assert!(s.project.is_none(), "{cwd:?}: {s:#?}");
        assert_eq!(snapshot(env.home.path()), before, "{cwd:?}: written");
        // Given a project, the caller chooses: it imports.
        let r = env.import(&[file]);
        assert_eq!(r.failed, 0, "{cwd:?}: {r:#?}");
    }
}

#[test]
fn an_empty_path_or_one_holding_a_nul_is_invalid_input() {
    let env = Env::new();
    let before = snapshot(env.home.path());
    for p in ["", "/tmp/a\u{0}b"] {
        let err = import(&[PathBuf::from(p)], &env.options(), &mut |_| {}).unwrap_err();
        assert_eq!(
            err.kind(),
            sessionkit::ErrorKind::InvalidInput,
            "{p:?}: {err}"
        );
        assert!(err.to_string().contains("NUL"), "{p:?}: {err}");
    }
    assert_eq!(snapshot(env.home.path()), before);
}

/// Transcripts recorded on another machine, under `/Users/dana/code/demo`.
fn another_machine() -> PathBuf {
    fixtures().join("another-machine")
}

const ORCHESTRATOR: &str = "d4e5f6a7-1b2c-4d3e-8f40-5a6b7c8d9e01";
const RENAME: &str = "e5f6a7b8-2c3d-4e4f-9051-6b7c8d9e0f12";
const CHANGELOG: &str = "f6a7b8c9-3d4e-4f50-8162-7c8d9e0f1a23";
const ROLLOUT: &str = "0199b2c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";

/// The sessions of the project `code` in the home, by id.
fn project_sessions(
    env: &Env,
    code: &str,
) -> std::collections::BTreeMap<String, sessionkit::IndexEntry> {
    let all = sessionkit::list_all_sessions(&env.store_options()).unwrap();
    let p = all
        .iter()
        .find(|p| p.project_code == code)
        .unwrap_or_else(|| panic!("no project {code} in {all:#?}"));
    assert!(p.error.is_none(), "{p:#?}");
    p.sessions
        .iter()
        .map(|e| (e.id.clone(), e.clone()))
        .collect()
}

/// Titles, times and status as the source tool shows them.
fn assert_as_the_source_shows_them(
    entries: &std::collections::BTreeMap<String, sessionkit::IndexEntry>,
) {
    let title = |id: &str| entries[id].title.as_str();
    assert_eq!(title(ORCHESTRATOR), "/orchestrator fix the flaky CI build");
    assert_eq!(title(RENAME), "Rename the demo CLI's --verbose flag");
    assert_eq!(title(CHANGELOG), "Add a changelog to the demo");
    assert_eq!(
        title(ROLLOUT),
        "Add a --json flag to the demo's list command"
    );
    for e in entries.values() {
        assert!(!e.title.contains('<'), "markup in the title {:?}", e.title);
        assert_eq!(e.status, sessionkit::Status::Completed, "{}", e.id);
    }
    let times = |id: &str| {
        (
            entries[id].created_at.as_str(),
            entries[id].updated_at.as_str(),
        )
    };
    assert_eq!(
        times(ORCHESTRATOR),
        ("2025-09-14T08:01:02.345Z", "2025-09-14T08:21:10.002Z")
    );
    assert_eq!(
        times(RENAME),
        ("2025-09-15T17:30:00.125Z", "2025-09-15T17:30:11.777Z")
    );
    assert_eq!(
        times(ROLLOUT),
        ("2025-09-20T14:02:11.500Z", "2025-09-20T14:05:48.250Z")
    );
}

#[test]
fn a_transcript_from_another_machine_lands_under_its_recorded_project() {
    assert!(!Path::new("/Users/dana/code/demo").exists());
    let env = Env::new();
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let report = import(&[another_machine()], &options, &mut |_| {}).unwrap();
    assert_eq!(report.failed, 0, "{report:#?}");
    assert_eq!(report.sources.len(), 4);
    for s in &report.sources {
        assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
        assert_eq!(
            s.project.as_deref(),
            Some(Path::new("/Users/dana/code/demo"))
        );
        let notice = s.notice.as_deref().unwrap_or_default();
        assert!(
            notice.contains("/Users/dana/code/demo does not exist here"),
            "{notice}"
        );
    }
    let code = sessionkit::project_code(Path::new("/Users/dana/code/demo"));
    assert_eq!(code, "-Users-dana-code-demo");
    let dir = env.home.path().join("projects").join(&code);
    assert!(dir.join(format!("{ROLLOUT}.jsonl")).is_file());
    let entries = project_sessions(&env, &code);
    assert_eq!(entries.len(), 4);
    assert_as_the_source_shows_them(&entries);

    // Importing the unchanged sources again writes nothing at all.
    let before = sessionkit::testing::tree_snapshot(&[env.home.path()]);
    let again = import(&[another_machine()], &options, &mut |_| {}).unwrap();
    assert!(again
        .sources
        .iter()
        .all(|s| s.outcome == SourceOutcome::UpToDate));
    assert_eq!(
        sessionkit::testing::tree_snapshot(&[env.home.path()]),
        before
    );
}

#[test]
fn a_path_mapping_puts_another_machines_sessions_under_the_mapped_project() {
    let env = Env::new();
    let demo = env.project.path().join("code/demo");
    std::fs::create_dir_all(&demo).unwrap();
    let options = ImportOptions::from_json(
        &serde_json::json!({
            "mapPaths": [
                // Whole components only: not a prefix of /Users/dana.
                {"from": "/Users/dan", "to": "/nowhere"},
                {"from": "/Users", "to": "/elsewhere"},
                // The longest prefix wins.
                {"from": "/Users/dana/", "to": env.project.path()},
            ],
            "store": {"home": env.home.path()},
        })
        .to_string(),
    )
    .unwrap();
    let report = import(&[another_machine()], &options, &mut |_| {}).unwrap();
    assert_eq!(report.failed, 0, "{report:#?}");
    let root = std::fs::canonicalize(&demo).unwrap();
    for s in &report.sources {
        assert_eq!(s.project.as_deref(), Some(root.as_path()), "{s:#?}");
        let notice = s.notice.as_deref().unwrap();
        assert!(
            notice.contains("working directory /Users/dana/code/demo mapped to"),
            "{notice}"
        );
        assert!(!notice.contains("does not exist"), "{notice}");
    }
    let store = Store::open(&demo, env.store_options()).unwrap();
    let entries: std::collections::BTreeMap<_, _> = store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|e| (e.id.clone(), e))
        .collect();
    assert_eq!(entries.len(), 4);
    assert_as_the_source_shows_them(&entries);

    // An explicit project still wins over the source and the mapping.
    let env2 = Env::new();
    let options = ImportOptions {
        map_paths: vec!["/Users/dana=/elsewhere".parse().unwrap()],
        ..env2.options()
    };
    let report = import(&[another_machine()], &options, &mut |_| {}).unwrap();
    let given = std::fs::canonicalize(env2.project.path()).unwrap();
    assert!(report
        .sources
        .iter()
        .all(|s| s.project.as_deref() == Some(given.as_path()) && s.notice.is_none()));
}

#[test]
fn a_bad_path_mapping_is_refused_before_anything_is_written() {
    let env = Env::new();
    for (bad, names) in [
        (
            serde_json::json!([{"from": "Users/dana", "to": "/x"}]),
            "\"Users/dana\" is not an absolute path",
        ),
        (
            serde_json::json!([{"from": "/Users/dana", "to": "x"}]),
            "\"x\" is not an absolute path",
        ),
        (serde_json::json!([{"from": "", "to": "/x"}]), "is empty"),
    ] {
        let options = ImportOptions::from_json(
            &serde_json::json!({"mapPaths": bad, "store": {"home": env.home.path()}}).to_string(),
        )
        .unwrap();
        let e = import(&[another_machine()], &options, &mut |_| {}).unwrap_err();
        assert_eq!(e.kind(), sessionkit::ErrorKind::InvalidInput, "{e}");
        let msg = e.to_string();
        assert!(msg.contains("mapPaths") && msg.contains(names), "{msg}");
    }
    // Neither a pair in another shape nor an unknown member is taken.
    for bad in [
        serde_json::json!([["/a", "/b"]]),
        serde_json::json!([{"from": "/a", "to": "/b", "too": 1}]),
        serde_json::json!("/a=/b"),
    ] {
        let e = ImportOptions::from_json(&serde_json::json!({ "mapPaths": bad }).to_string())
            .unwrap_err();
        assert_eq!(e.kind(), sessionkit::ErrorKind::InvalidInput, "{e}");
    }
    for bad in ["/Users/dana", "Users/dana=/x", "/Users/dana=", ""] {
        let e = bad.parse::<sessionkit::PathMapping>().unwrap_err();
        assert_eq!(e.kind(), sessionkit::ErrorKind::InvalidInput, "{e}");
    }
    assert!(
        !env.home.path().join("projects").exists(),
        "nothing written"
    );
}

#[test]
fn a_recorded_path_through_a_missing_directory_to_an_existing_one_is_canonical() {
    let env = Env::new();
    let real = std::fs::canonicalize(env.project.path()).unwrap();
    // The text names `real` through a directory that does not exist.
    let cwd = format!("/sessionkit-no-such-dir/..{}", real.display());
    let src = env.home.path().join("seed.jsonl");
    std::fs::write(
        &src,
        format!(
            "{}\n",
            serde_json::json!({"id": "m1", "sessionId": "s-through", "role": "user",
                "content": "hello", "cwd": cwd})
        ),
    )
    .unwrap();
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let report = import(&[src], &options, &mut |_| {}).unwrap();
    assert_eq!(report.failed, 0, "{report:#?}");
    assert_eq!(report.sources[0].project.as_deref(), Some(real.as_path()));
    assert!(report.sources[0].notice.is_none(), "{report:#?}");
    assert_eq!(
        env.store().session_entry("s-through").unwrap().title,
        "hello"
    );
}

const PI: &str = "019ad1e2-3c4d-7e5f-8a6b-7c8d9e0f1a2b";

fn pi_file() -> PathBuf {
    fixtures().join(format!(
        "pi/--home-ann-app--/2025-11-30T09-15-02-113Z_{PI}.jsonl"
    ))
}

#[test]
fn a_pi_session_keeps_its_tree_tool_pairs_title_times_and_every_line() {
    let env = Env::new();
    let file = pi_file();
    let report = env.import(std::slice::from_ref(&file));
    let s = &report.sources[0];
    assert_eq!(s.format, Some(sessionkit::ImportFormat::Pi));
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert!(s.skipped.is_empty(), "{s:#?}");
    // Eight messages; the header and eight other entries are records.
    assert_eq!(s.messages_added, 8, "{s:#?}");
    assert_eq!(s.records_added, 9, "{s:#?}");

    let store = env.store();
    let entry = store.session_entry(PI).unwrap();
    assert_eq!(
        entry.title, "Why greet is slow",
        "the latest session_info name"
    );
    assert_eq!(entry.created_at, "2025-11-30T09:15:02.113Z");
    assert_eq!(entry.updated_at, "2025-11-30T09:31:00.000Z");
    assert_eq!(entry.status, sessionkit::Status::Completed);

    let view = store.read_session(PI).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    // Messages hang from the nearest message above them in pi's tree: the
    // branch left (a1000008, a1000009) and the one taken (a100000b, below
    // the branch_summary) both hang from a1000006.
    assert_eq!(
        ids(&view.active_path().unwrap()),
        ["a1000003", "a1000004", "a1000005", "a1000006", "a100000b", "a1000010"]
    );
    assert_eq!(
        view.message("a1000008").unwrap().parent_id(),
        Some("a1000006")
    );
    assert_eq!(view.message("a1000003").unwrap().parent_id(), None);

    let user = view.message("a1000003").unwrap().value();
    assert_eq!(user["role"], "user");
    assert_eq!(user["content"], "Which   test in tests/ is\nthe slowest?");
    assert_eq!(user["timestamp"], "2025-11-30T09:15:10.500Z");
    assert_eq!(user["import"]["format"], "pi");
    assert_eq!(user["import"]["raw"], source_line(&file, 4).as_str());
    let call = view.message("a1000004").unwrap().value();
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["content"], "Let me time them.");
    let tc = &call["messageParams"]["tool_calls"][0];
    assert_eq!(tc["id"], "toolu_01Timing");
    assert_eq!(tc["function"]["name"], "bash");
    assert_eq!(
        serde_json::from_str::<Value>(tc["function"]["arguments"].as_str().unwrap()).unwrap()
            ["command"],
        "cargo test -- -Z unstable-options --report-time"
    );
    assert_eq!(
        call["messageParams"]["reasoning_content"],
        "Run the suite with timings."
    );
    assert_eq!(call["meta"]["usage"]["totalTokens"], 3439);
    let result = view.message("a1000005").unwrap().value();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["messageParams"]["tool_call_id"], "toolu_01Timing");
    let bash = view.message("a100000b").unwrap().value();
    assert_eq!(bash["role"], "user");
    assert!(bash["content"]
        .as_str()
        .unwrap()
        .starts_with("! grep -n sleep tests/greet.rs\n12:"));

    // Every other line is an import record holding it exactly.
    let log = std::fs::read_to_string(store.log_path(PI).unwrap()).unwrap();
    for n in [1, 2, 3, 8, 11, 13, 14, 15, 16] {
        let raw = source_line(&file, n);
        assert!(
            log.lines().any(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["type"] == "import" && v["line"] == n && v["raw"] == raw.as_str()
            }),
            "line {n}"
        );
    }

    // Importing it again changes nothing, byte for byte.
    let home = env.home.path().to_path_buf();
    let before = sessionkit::testing::tree_snapshot(&[&home]);
    let again = env.import(std::slice::from_ref(&file));
    assert_eq!(again.sources[0].outcome, SourceOutcome::UpToDate);
    assert_eq!(sessionkit::testing::tree_snapshot(&[&home]), before);
}

#[test]
fn a_pi_session_without_a_name_takes_its_first_prompt_and_grows() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("s.jsonl");
    let full = std::fs::read_to_string(pi_file()).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    std::fs::write(&file, lines[..7].join("\n") + "\n").unwrap();
    let first = env.import(std::slice::from_ref(&file));
    assert_eq!(first.messages_added, 4, "{first:#?}");
    let store = env.store();
    assert_eq!(
        store.session_entry(PI).unwrap().title,
        "Which test in tests/ is the slowest?"
    );
    // An appended line is imported on the next run, alone.
    std::fs::write(&file, lines[..9].join("\n") + "\n").unwrap();
    let grown = env.import(std::slice::from_ref(&file));
    assert_eq!(grown.sources[0].lines, 2);
    assert_eq!(grown.messages_added, 1, "{grown:#?}");
    let view = store.read_session(PI).unwrap();
    assert_eq!(
        view.message("a1000008").unwrap().parent_id(),
        Some("a1000006")
    );
}

#[test]
fn malformed_pi_lines_are_reported_by_number() {
    let env = Env::new();
    let file = fixtures()
        .join("pi/malformed/2025-12-01T08-00-00-000Z_019ad1e2-aaaa-7e5f-8a6b-7c8d9e0f1a2b.jsonl");
    let report = env.import(std::slice::from_ref(&file));
    let s = &report.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    let skipped: Vec<u64> = s.skipped.iter().map(|n| n.line).collect();
    assert_eq!(skipped, [3, 4, 10], "{:#?}", s.skipped);
    let unmapped: Vec<u64> = s.unmapped.iter().map(|n| n.line).collect();
    assert_eq!(unmapped, [5, 6, 7, 8, 9], "{:#?}", s.unmapped);
    assert!(s.unmapped[2].reason.contains("ffffffff"));
    let view = env
        .store()
        .read_session("019ad1e2-aaaa-7e5f-8a6b-7c8d9e0f1a2b")
        .unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    assert_eq!(view.message("b2000003").unwrap().parent_id(), None);
}

const GEMINI: &str = "4a7b9c1d-62e5-4f90-8b71-8d2e3f4a5b6c";

fn gemini_file() -> PathBuf {
    fixtures().join("gemini-cli/app/chats/session-2025-11-30T09-15-4a7b9c1d.jsonl")
}

#[test]
fn a_gemini_cli_chat_replays_onto_one_chain_and_keeps_every_line() {
    let env = Env::new();
    let file = gemini_file();
    let report = env.import(std::slice::from_ref(&file));
    let s = &report.sources[0];
    assert_eq!(s.format, Some(sessionkit::ImportFormat::GeminiCli));
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert!(s.skipped.is_empty(), "{s:#?}");
    assert_eq!(s.messages_added, 10, "{s:#?}");

    let store = env.store();
    let entry = store.session_entry(GEMINI).unwrap();
    assert_eq!(entry.title, "Find the slowest test", "the summary");
    assert_eq!(entry.created_at, "2025-11-30T09:15:02.113Z");
    assert_eq!(entry.updated_at, "2025-11-30T09:17:04.000Z");
    let view = store.read_session(GEMINI).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    let id = |n: &str| format!("c1000000-0000-4000-8000-0000000000{n}");
    // The replaced message's latest version (line 7) is on the path, the
    // earlier one its sibling; the rewound reply (08) is off it.
    assert_eq!(
        ids(&view.active_path().unwrap()),
        [
            id("01"),
            id("03"),
            "line-7".into(),
            id("05"),
            id("06"),
            id("09"),
            id("0a")
        ]
    );
    assert_eq!(
        view.message(&id("04")).unwrap().parent_id(),
        Some(id("03").as_str())
    );
    assert_eq!(
        view.message(&id("08")).unwrap().parent_id(),
        Some(id("07").as_str())
    );

    let call = view.message("line-7").unwrap().value();
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["content"], "Let me time them.");
    assert_eq!(
        call["messageParams"]["tool_calls"][0]["id"],
        "run_shell_command__run_shell_command_1764494123900_0"
    );
    assert_eq!(
        call["messageParams"]["reasoning_content"],
        "Timing: Run the suite with timings."
    );
    assert_eq!(call["meta"]["usage"]["total"], 5199);
    assert_eq!(call["import"]["raw"], source_line(&file, 7).as_str());
    let result = view.message(&id("05")).unwrap().value();
    assert_eq!(result["role"], "tool");
    assert_eq!(
        result["messageParams"]["tool_call_id"],
        "run_shell_command__run_shell_command_1764494123900_0"
    );
    assert_eq!(result["content"], "test greet ... ok <0.912s>");
    let prompt = view.message(&id("03")).unwrap().value();
    assert_eq!(prompt["content"], "Which test  is the\nslowest?");
    assert_eq!(prompt["timestamp"], "2025-11-30T09:15:20.000Z");

    // The project from `.project_root` (absent here: imported with a notice).
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let r = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap();
    let s = &r.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert_eq!(s.project.as_deref(), Some(Path::new("/home/ann/app")));

    // Again: nothing changes, byte for byte.
    let home = env.home.path().to_path_buf();
    let before = sessionkit::testing::tree_snapshot(&[&home]);
    let again = env.import(std::slice::from_ref(&file));
    assert_eq!(again.sources[0].outcome, SourceOutcome::UpToDate);
    assert_eq!(sessionkit::testing::tree_snapshot(&[&home]), before);
}

#[test]
fn a_gemini_cli_chat_without_a_summary_takes_its_first_prompt_and_grows() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("s.jsonl");
    let full = std::fs::read_to_string(gemini_file()).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    std::fs::write(&file, lines[..6].join("\n") + "\n").unwrap();
    let first = env.import(std::slice::from_ref(&file));
    assert_eq!(first.messages_added, 3, "{first:#?}");
    let store = env.store();
    assert_eq!(
        store.session_entry(GEMINI).unwrap().title,
        "Which test is the slowest?",
        "not the /help command"
    );
    // The rewrite of the last message arrives later: a sibling, on the path.
    std::fs::write(&file, lines[..7].join("\n") + "\n").unwrap();
    let grown = env.import(std::slice::from_ref(&file));
    assert_eq!(grown.sources[0].lines, 1);
    assert_eq!(grown.messages_added, 1, "{grown:#?}");
    let view = store.read_session(GEMINI).unwrap();
    assert_eq!(
        ids(&view.active_path().unwrap()).last().map(String::as_str),
        Some("line-7")
    );
}

#[test]
fn a_gemini_cli_chat_without_its_project_root_needs_a_project() {
    let env = Env::new();
    let file = fixtures().join("gemini-cli/no-root/chats/session-2025-12-01T08-00-5b8c0d2e.jsonl");
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let r = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap();
    assert_eq!(r.sources[0].outcome, SourceOutcome::Failed);
    let why = r.sources[0].error.as_deref().unwrap();
    assert!(
        why.contains(".project_root") && why.contains("give the project"),
        "{why}"
    );

    // With a project given, malformed lines are reported by number.
    let report = env.import(std::slice::from_ref(&file));
    let s = &report.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    let skipped: Vec<u64> = s.skipped.iter().map(|n| n.line).collect();
    assert_eq!(skipped, [3, 4, 9], "{:#?}", s.skipped);
    let unmapped: Vec<u64> = s.unmapped.iter().map(|n| n.line).collect();
    assert_eq!(unmapped, [5, 7, 8], "{:#?}", s.unmapped);
    assert_eq!(s.messages_added, 2);
}

#[test]
fn each_format_is_detected_from_its_content() {
    use sessionkit::ImportFormat as F;
    let env = Env::new();
    let cases = [
        (
            fixtures().join(format!("claude-code/-home-ann-app/{MAIN}.jsonl")),
            F::ClaudeCode,
        ),
        (
            fixtures().join("claude-code/malformed/9b5e3c74-2f60-4da0-9c43-7e8f9a0b1c23.jsonl"),
            F::ClaudeCode,
        ),
        (fixtures().join("codex/2025/10/29"), F::Codex),
        (fixtures().join("deepcode/seed-flat-1.jsonl"), F::Deepcode),
        (pi_file(), F::Pi),
        (fixtures().join("pi/malformed"), F::Pi),
        (gemini_file(), F::GeminiCli),
        (fixtures().join("gemini-cli/no-root"), F::GeminiCli),
        (copilot_file(), F::CopilotCli),
        (fixtures().join("copilot-cli/malformed"), F::CopilotCli),
    ];
    let src = tempfile::tempdir().unwrap();
    let (db, _writer) = opencode_db(src.path());
    let cases = cases.into_iter().chain([(db, F::Opencode)]);
    for (path, format) in cases {
        let r = env.import(std::slice::from_ref(&path));
        for s in &r.sources {
            assert_eq!(s.format, Some(format), "{}", s.path.display());
        }
    }
    // Each format's name round-trips.
    for f in F::ALL {
        assert_eq!(f.name().parse::<F>().unwrap(), f);
    }
    assert_eq!("gemini-cli".parse::<F>().unwrap(), F::GeminiCli);
    assert_eq!("pi".parse::<F>().unwrap(), F::Pi);
}

#[test]
fn a_gemini_cli_project_root_that_is_a_fifo_is_not_read_and_never_blocks() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let chats = src.path().join("proj/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let file = chats.join("session-2025-11-30T09-15-4a7b9c1d.jsonl");
    std::fs::copy(gemini_file(), &file).unwrap();
    mkfifo(&src.path().join("proj/.project_root"));
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let r = within_seconds(move || import(&[file], &options, &mut |_| {}).unwrap());
    assert_eq!(r.sources[0].outcome, SourceOutcome::Failed);
    let why = r.sources[0].error.as_deref().unwrap();
    assert!(why.contains(".project_root"), "{why}");
}

const COPILOT: &str = "5c1e9a42-8b7d-4f3e-a2c1-0d9e8f7a6b5c";

fn copilot_file() -> PathBuf {
    fixtures().join(format!("copilot-cli/session-state/{COPILOT}/events.jsonl"))
}

#[test]
fn a_copilot_cli_session_keeps_its_chain_tools_subagent_title_and_every_line() {
    let env = Env::new();
    let file = copilot_file();
    let report = env.import(std::slice::from_ref(&file));
    let s = &report.sources[0];
    assert_eq!(s.format, Some(sessionkit::ImportFormat::CopilotCli));
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert!(s.skipped.is_empty(), "{s:#?}");
    assert_eq!(s.session_id.as_deref(), Some(COPILOT));
    assert_eq!(s.messages_added, 6, "{s:#?}");

    let store = env.store();
    let entry = store.session_entry(COPILOT).unwrap();
    assert_eq!(
        entry.title, "Find the largest Rust file",
        "the title_changed event"
    );
    assert_eq!(entry.created_at, "2026-11-30T09:15:02.113Z", "startTime");
    assert_eq!(
        entry.updated_at, "2026-11-30T09:16:40.020Z",
        "the last event"
    );
    let view = store.read_session(COPILOT).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    let id = |n: &str| format!("0b6f1c2d-1111-4a2b-9c3d-0000000000{n}");
    assert_eq!(
        ids(&view.active_path().unwrap()),
        [id("03"), id("05"), id("08"), id("0e"), id("12")]
    );
    let call = view.message(&id("05")).unwrap().value();
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["parentId"], id("03").as_str());
    assert_eq!(
        call["messageParams"]["tool_calls"][0]["id"],
        "toolu_vrtx_01AbCdEfGh"
    );
    assert_eq!(
        call["messageParams"]["tool_calls"][0]["function"]["arguments"],
        r#"{"command":"ls -lS src/*.rs","description":"List Rust files by size"}"#
    );
    assert_eq!(
        call["messageParams"]["reasoning_content"],
        "I should list the files with sizes."
    );
    assert_eq!(call["import"]["format"], "copilot-cli");
    assert_eq!(call["import"]["raw"], source_line(&file, 5).as_str());
    let result = view.message(&id("08")).unwrap().value();
    assert_eq!(result["role"], "tool");
    assert_eq!(
        result["messageParams"]["tool_call_id"],
        "toolu_vrtx_01AbCdEfGh"
    );
    assert!(result["content"].as_str().unwrap().contains("src/lib.rs"));
    let prompt = view.message(&id("03")).unwrap().value();
    assert_eq!(
        prompt["content"],
        "List the Rust files in src and tell me which one is largest."
    );
    // The compaction summary replaces what came before in the model's view.
    let model = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(model.len(), 1, "{model:?}");
    // The sub-agent's message went to its subagent.
    let sub = store.read_subagent(COPILOT, "explore-1").unwrap();
    assert_eq!(ids(&sub.active_path().unwrap()), [id("0c")]);

    // The recorded project, absent here: imported with a notice.
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let r = import(std::slice::from_ref(&file), &options, &mut |_| {}).unwrap();
    let s = &r.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert_eq!(
        s.project.as_deref(),
        Some(Path::new("/home/alice/src/demo"))
    );
    assert!(s.notice.is_some(), "{s:#?}");

    // Again: nothing changes, byte for byte.
    let home = env.home.path().to_path_buf();
    let before = sessionkit::testing::tree_snapshot(&[&home]);
    let again = env.import(std::slice::from_ref(&file));
    assert_eq!(again.sources[0].outcome, SourceOutcome::UpToDate);
    assert_eq!(sessionkit::testing::tree_snapshot(&[&home]), before);
}

#[test]
fn a_copilot_cli_session_without_a_title_takes_its_first_prompt_and_grows() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("events.jsonl");
    let full = std::fs::read_to_string(copilot_file()).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    std::fs::write(&file, lines[..5].join("\n") + "\n").unwrap();
    let first = env.import(std::slice::from_ref(&file));
    assert_eq!(first.messages_added, 2, "{first:#?}");
    let store = env.store();
    assert_eq!(
        store.session_entry(COPILOT).unwrap().title,
        "List the Rust files in src and tell me which one is largest."
    );
    std::fs::write(&file, lines[..8].join("\n") + "\n").unwrap();
    let grown = env.import(std::slice::from_ref(&file));
    assert_eq!(grown.sources[0].lines, 3);
    assert_eq!(grown.messages_added, 1, "{grown:#?}");
}

#[test]
fn malformed_copilot_cli_events_are_reported_by_number_and_kept() {
    let env = Env::new();
    let dir = fixtures().join("copilot-cli/malformed");
    let report = env.import(std::slice::from_ref(&dir));
    let s = &report.sources[0];
    assert_eq!(s.format, Some(sessionkit::ImportFormat::CopilotCli));
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    let skipped: Vec<u64> = s.skipped.iter().map(|n| n.line).collect();
    assert_eq!(skipped, [3, 4, 8], "{:#?}", s.skipped);
    let unmapped: Vec<u64> = s.unmapped.iter().map(|n| n.line).collect();
    assert_eq!(unmapped, [5, 7], "{:#?}", s.unmapped);
    assert_eq!(s.messages_added, 2);
    assert_eq!(s.records_added, 3, "{s:#?}");
}

const OPENCODE: &str = "ses_52a1f0c3dffeQk7Zr2LmNp4TvW";
const OPENCODE_CHILD: &str = "ses_52a1f0aa0ffeSubAgEnT0001xx";

/// An opencode database made from the fixture's SQL, in WAL mode as opencode
/// keeps it, with the connection that wrote it (still open, so that the
/// rows are in the write-ahead log, as in a running opencode).
fn opencode_db(dir: &Path) -> (PathBuf, rusqlite::Connection) {
    let path = dir.join("opencode.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    let sql = std::fs::read_to_string(fixtures().join("opencode/opencode.sql")).unwrap();
    conn.execute_batch(&sql).unwrap();
    (path, conn)
}

/// The database's own files but its shared-memory index (which readers of a
/// live database use to agree with its writer).
fn db_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(dir)
        .into_iter()
        .filter(|(p, _)| !p.to_string_lossy().ends_with("-shm"))
        .collect()
}

#[test]
fn an_opencode_database_imports_each_session_read_only_and_again_changes_nothing() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let (db, _writer) = opencode_db(src.path());
    assert!(
        src.path().join("opencode.db-wal").exists(),
        "rows in the WAL"
    );
    let before_db = db_files(src.path());

    // Found in a directory, detected by content.
    let report = env.import(&[src.path().to_path_buf()]);
    assert_eq!(report.sources.len(), 2, "{report:#?}");
    assert_eq!(db_files(src.path()), before_db, "the database is only read");
    let s = report
        .sources
        .iter()
        .find(|s| s.session_id.as_deref() == Some(OPENCODE))
        .unwrap();
    assert_eq!(s.format, Some(sessionkit::ImportFormat::Opencode));
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert!(s.skipped.is_empty(), "{s:#?}");
    assert_eq!(s.messages_added, 5, "{s:#?}");
    let child = report
        .sources
        .iter()
        .find(|s| s.session_id.as_deref() == Some(OPENCODE_CHILD))
        .unwrap();
    assert_eq!(child.outcome, SourceOutcome::Imported, "{child:#?}");

    let store = env.store();
    let entry = store.session_entry(OPENCODE).unwrap();
    assert_eq!(entry.title, "Find the largest Rust file");
    assert_eq!(entry.created_at, "2025-11-30T09:15:02.113Z");
    assert_eq!(
        store.session_entry(OPENCODE_CHILD).unwrap().title,
        "Child session - 2026-11-30T09:15:20.000Z"
    );
    let view = store.read_session(OPENCODE).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    assert_eq!(
        ids(&view.active_path().unwrap()),
        [
            "msg_ad5e0f3c1001Aa1Bb2Cc3Dd4Ee",
            "msg_ad5e0f3d2002Ff5Gg6Hh7Ii8Jj",
            "prt_ad5e0f3d2005Zz1Aa2Bb3Cc4Dd",
            "msg_ad5e0f4a0001Cp1Cp2Cp3Cp4Cp",
            "msg_ad5e0f4a1003Sm1Sm2Sm3Sm4Sm",
        ]
    );
    let prompt = view
        .message("msg_ad5e0f3c1001Aa1Bb2Cc3Dd4Ee")
        .unwrap()
        .value();
    assert_eq!(
        prompt["content"],
        "List the Rust files in src and tell me which one is largest."
    );
    assert_eq!(prompt["timestamp"], "2025-11-30T09:15:10.500Z");
    let reply = view
        .message("msg_ad5e0f3d2002Ff5Gg6Hh7Ii8Jj")
        .unwrap()
        .value();
    assert_eq!(
        reply["content"],
        "`src/lib.rs` is the largest (9120 bytes)."
    );
    assert_eq!(
        reply["messageParams"]["tool_calls"][0]["id"],
        "toolu_01AbCdEfGh"
    );
    assert_eq!(
        reply["messageParams"]["reasoning_content"],
        "I should list the files with sizes."
    );
    assert_eq!(reply["meta"]["usage"]["input"], 7131);
    assert_eq!(reply["import"]["format"], "opencode");
    // The raw line holds the rows as stored: the message's and its parts'.
    let raw: Value = serde_json::from_str(reply["import"]["raw"].as_str().unwrap()).unwrap();
    assert_eq!(raw["message"]["id"], "msg_ad5e0f3d2002Ff5Gg6Hh7Ii8Jj");
    assert_eq!(raw["parts"].as_array().unwrap().len(), 7);
    let result = view
        .message("prt_ad5e0f3d2005Zz1Aa2Bb3Cc4Dd")
        .unwrap()
        .value();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["messageParams"]["tool_call_id"], "toolu_01AbCdEfGh");
    // The compaction summary replaces what came before in the model's view.
    let model = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(model.len(), 1, "{model:?}");

    // Without a project: the recorded one (absent here), with a notice.
    let options = ImportOptions {
        store: env.store_options(),
        ..ImportOptions::default()
    };
    let r = import(std::slice::from_ref(&db), &options, &mut |_| {}).unwrap();
    let s = &r.sources[0];
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert_eq!(
        s.project.as_deref(),
        Some(Path::new("/home/alice/src/demo"))
    );
    assert!(s.notice.is_some(), "{s:#?}");

    // Again: nothing changes, byte for byte.
    let home = env.home.path().to_path_buf();
    let before = sessionkit::testing::tree_snapshot(&[&home]);
    let again = env.import(std::slice::from_ref(&db));
    assert!(
        again
            .sources
            .iter()
            .all(|s| s.outcome == SourceOutcome::UpToDate),
        "{again:#?}"
    );
    assert_eq!(sessionkit::testing::tree_snapshot(&[&home]), before);
}

#[test]
fn an_opencode_session_that_grows_adds_only_finished_new_messages() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let (db, writer) = opencode_db(src.path());
    env.import(std::slice::from_ref(&db));
    // A new prompt, an answer still being written, and a row whose data is
    // not JSON; the session's title changes in place.
    writer
        .execute_batch(
            "INSERT INTO message VALUES ('msg_ad5e0f5a0001Nw1Nw2Nw3Nw4Nw','ses_52a1f0c3dffeQk7Zr2LmNp4TvW',1764494200000,1764494200000,
               '{\"role\":\"user\",\"time\":{\"created\":1764494200000}}');
             INSERT INTO part VALUES ('prt_ad5e0f5a0002Nw5Nw6Nw7Nw8Nw','msg_ad5e0f5a0001Nw1Nw2Nw3Nw4Nw','ses_52a1f0c3dffeQk7Zr2LmNp4TvW',1764494200000,1764494200000,
               '{\"type\":\"text\",\"text\":\"And the smallest?\"}');
             INSERT INTO message VALUES ('msg_ad5e0f5a1003Nw9Nw0NwaNwbNw','ses_52a1f0c3dffeQk7Zr2LmNp4TvW',1764494200100,1764494200100,
               '{\"role\":\"assistant\",\"time\":{\"created\":1764494200100}}');
             UPDATE session SET title = 'Largest and smallest' WHERE id = 'ses_52a1f0c3dffeQk7Zr2LmNp4TvW';",
        )
        .unwrap();
    let grown = env.import(std::slice::from_ref(&db));
    let s = grown
        .sources
        .iter()
        .find(|s| s.session_id.as_deref() == Some(OPENCODE))
        .unwrap();
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert_eq!(s.messages_added, 1, "only the prompt: {s:#?}");
    assert_eq!(s.skipped.len(), 1, "the answer being written: {s:#?}");
    writer
        .execute_batch(
            "UPDATE message SET data = '{\"role\":\"assistant\",\"time\":{\"created\":1764494200100,\"completed\":1764494201000}}'
               WHERE id = 'msg_ad5e0f5a1003Nw9Nw0NwaNwbNw';
             INSERT INTO message VALUES ('msg_ad5e0f5b0001Bd1Bd2Bd3Bd4Bd','ses_52a1f0c3dffeQk7Zr2LmNp4TvW',1764494202000,1764494202000,'not json');",
        )
        .unwrap();
    let done = env.import(std::slice::from_ref(&db));
    let s = done
        .sources
        .iter()
        .find(|s| s.session_id.as_deref() == Some(OPENCODE))
        .unwrap();
    assert_eq!(s.messages_added, 2, "{s:#?}");
    assert_eq!(s.unmapped.len(), 1, "the row that is not JSON: {s:#?}");
    let view = env.store().read_session(OPENCODE).unwrap();
    let bad = view
        .message("msg_ad5e0f5b0001Bd1Bd2Bd3Bd4Bd")
        .unwrap()
        .value();
    assert!(bad["import"]["raw"].as_str().unwrap().contains("not json"));
}

#[test]
fn an_opencode_json_tree_imports_its_sessions_and_again_changes_nothing() {
    let env = Env::new();
    let storage = fixtures().join("opencode/json/storage");
    let report = env.import(std::slice::from_ref(&storage));
    assert_eq!(report.sources.len(), 1, "{report:#?}");
    let s = &report.sources[0];
    assert_eq!(s.format, Some(sessionkit::ImportFormat::Opencode));
    assert_eq!(s.outcome, SourceOutcome::Imported, "{s:#?}");
    assert_eq!(s.session_id.as_deref(), Some(OPENCODE));
    assert!(s.skipped.is_empty(), "{s:#?}");
    assert_eq!(s.messages_added, 3, "{s:#?}");
    let store = env.store();
    let entry = store.session_entry(OPENCODE).unwrap();
    assert_eq!(entry.title, "Find the largest Rust file");
    assert_eq!(entry.created_at, "2025-11-30T09:15:02.113Z");
    let view = store.read_session(OPENCODE).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    assert_eq!(
        ids(&view.active_path().unwrap()),
        [
            "msg_ad5e0f3c1001Aa1Bb2Cc3Dd4Ee",
            "msg_ad5e0f3d2002Ff5Gg6Hh7Ii8Jj",
            "prt_ad5e0f3d2005Zz1Aa2Bb3Cc4Dd",
        ]
    );
    let reply = view
        .message("msg_ad5e0f3d2002Ff5Gg6Hh7Ii8Jj")
        .unwrap()
        .value();
    assert_eq!(
        reply["messageParams"]["tool_calls"][0]["function"]["name"],
        "bash"
    );
    // The raw line holds each file's exact text.
    let raw: Value = serde_json::from_str(reply["import"]["raw"].as_str().unwrap()).unwrap();
    let file = raw["message"]["file"].as_str().unwrap();
    assert_eq!(
        raw["message"]["data"].as_str().unwrap(),
        std::fs::read_to_string(file).unwrap()
    );

    let home = env.home.path().to_path_buf();
    let before = sessionkit::testing::tree_snapshot(&[&home]);
    let again = env.import(std::slice::from_ref(&storage));
    assert_eq!(
        again.sources[0].outcome,
        SourceOutcome::UpToDate,
        "{again:#?}"
    );
    assert_eq!(sessionkit::testing::tree_snapshot(&[&home]), before);
}

#[test]
fn an_opencode_database_at_rest_is_read_without_a_file_made_beside_it() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap();
    let (db, writer) = opencode_db(src.path());
    // opencode closed: its log is checkpointed into the file and removed.
    drop(writer);
    let before = snapshot(src.path());
    assert_eq!(before.len(), 1, "only opencode.db: {before:?}");
    let report = env.import(std::slice::from_ref(&db));
    assert!(
        report
            .sources
            .iter()
            .all(|s| s.outcome == SourceOutcome::Imported),
        "{report:#?}"
    );
    assert_eq!(
        snapshot(src.path()),
        before,
        "no -wal or -shm left beside it"
    );
}
