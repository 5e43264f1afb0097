//! Hostile input from the command line at `config`, `memory`, `import`,
//! `instructions`, `search` and `pull`:
//! refused with the exit code of the documented kind, nothing written (every
//! file under the home and the project unchanged). `pull` needs a PostgreSQL
//! server (`SESSIONKIT_TEST_PG`); with `SESSIONKIT_REQUIRE_PG=1` (set by
//! tests/run-all.sh) it fails without one.

mod common;

use common::Env;
use serde_json::json;
use sessionkit::testing::tree_snapshot;
use sessionkit::{CreateOptions, ErrorKind, Remote, RemoteOptions};

/// The exit code of an error kind (`sessionkit --help`: the kind's number + 2).
fn code(kind: ErrorKind) -> i32 {
    kind.code() + 2
}

/// Run `args`, expect the exit code of `kind` and every needle on stderr, and
/// no file changed.
#[track_caller]
fn refused(env: &Env, args: &[&str], kind: ErrorKind, needles: &[&str]) {
    let dirs = [env.home.path(), env.project.path()];
    let before = tree_snapshot(&dirs);
    let stderr = env.fails(args, code(kind));
    for n in needles {
        assert!(
            stderr.contains(n),
            "{args:?}: {stderr:?} does not mention {n:?}"
        );
    }
    assert!(tree_snapshot(&dirs) == before, "{args:?} changed a file");
}

#[test]
fn instructions_of_a_file_a_fifo_or_a_loop_are_not_found() {
    let env = Env::new();
    env.store();
    let root = env.root();
    std::fs::write(root.join("a-file"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("loop-b"), root.join("loop-a")).unwrap();
    std::os::unix::fs::symlink(root.join("loop-a"), root.join("loop-b")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    for dir in ["a-file", "fifo", "loop-a", "a-file/below"] {
        let path = root.join(dir).display().to_string();
        refused(
            &env,
            &["instructions", &path],
            ErrorKind::NotFound,
            &[&path],
        );
    }
    refused(
        &env,
        &["instructions", "/dev/zero"],
        ErrorKind::NotFound,
        &["/dev/zero"],
    );
    let root = root.display().to_string();
    for names in ["AGENTS.md,\u{1b}[2J.md", "AGENTS.md,a\tb", "../x", "a/b"] {
        refused(
            &env,
            &["instructions", &root, "--names", names],
            ErrorKind::InvalidInput,
            &["plain file name"],
        );
    }
    refused(
        &env,
        &["instructions", &root, "--max-include-depth", "1000000"],
        ErrorKind::InvalidInput,
        &["at most 64"],
    );
}

#[test]
fn search_queries_past_the_limits_are_refused() {
    let env = Env::new();
    let store = env.store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "parse_config"}))
        .unwrap();
    env.json(&["search", "parse_config"]);
    let words: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
    let mut args = vec!["search"];
    args.extend(words.iter().map(String::as_str));
    refused(&env, &args, ErrorKind::InvalidInput, &["256"]);
    let long = "x".repeat(20_000);
    refused(
        &env,
        &["search", &long],
        ErrorKind::InvalidInput,
        &["16384"],
    );
}

#[test]
fn pull_of_a_session_leased_but_never_pushed_makes_no_local_session() {
    let url = match std::env::var("SESSIONKIT_TEST_PG") {
        Ok(url) if !url.is_empty() => url,
        _ if std::env::var("SESSIONKIT_REQUIRE_PG").is_ok_and(|v| v == "1") => {
            panic!("SESSIONKIT_REQUIRE_PG=1 but SESSIONKIT_TEST_PG is not set")
        }
        _ => return eprintln!("skipped: SESSIONKIT_TEST_PG is not set"),
    };
    let env = Env::new();
    let store = env.store();
    let remote = Remote::connect(
        &store,
        RemoteOptions {
            url: Some(url.clone()),
            holder: Some("elsewhere".into()),
            ..RemoteOptions::default()
        },
    )
    .unwrap();
    // A project of its own on the server: this test's store is new.
    let id = format!("np-{}", std::process::id());
    let lease = remote.acquire(&id).unwrap();
    refused(
        &env,
        &["pull", &id, "--remote", &url],
        ErrorKind::NotFound,
        &[&id, "never pushed"],
    );
    assert_eq!(env.json(&["list"]), json!([]));
    refused(
        &env,
        &["pull", "../x", "--remote", &url],
        ErrorKind::InvalidInput,
        &["../x"],
    );
    remote.release(&lease).unwrap();
}

#[test]
fn settings_writes_past_the_size_or_nesting_limit_are_refused_and_unset_still_works() {
    let env = Env::new();
    env.store();
    // One argument holds at most 128 KiB (the kernel's limit), so the file is
    // filled a value at a time until the write that would pass 1 MiB.
    let value = "v".repeat(120 * 1024);
    let settings = env.root().join(".sessionkit/settings.local.json");
    let mut written = 0;
    loop {
        let key = format!("k{written}");
        let out = env
            .cmd()
            .args(["config", "set", &key, &value])
            .output()
            .unwrap();
        if out.status.success() {
            written += 1;
            assert!(written < 20, "20 values of 120 KiB were all accepted");
            continue;
        }
        assert_eq!(out.status.code(), Some(code(ErrorKind::InvalidInput)));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("1048576"), "{stderr}");
        break;
    }
    assert!(written >= 8, "refused after {written} values of 120 KiB");
    let len = std::fs::metadata(&settings).unwrap().len();
    assert!(len <= 1 << 20, "the file grew to {len} bytes");
    // The same refusal, with nothing changed, as a test of its own.
    refused(
        &env,
        &["config", "set", "one-more", &value],
        ErrorKind::InvalidInput,
        &["1048576"],
    );
    // Every other change of the full file still works.
    env.text(&["config", "unset", "k0"]);
    assert!(std::fs::metadata(&settings).unwrap().len() < len);
    let deep = format!("{}{}", "[".repeat(110), "]".repeat(110));
    refused(
        &env,
        &["config", "set", "deep", &deep],
        ErrorKind::InvalidInput,
        &["100 levels"],
    );
    for key in ["../../x", "a..b", ".a", "a."] {
        refused(
            &env,
            &["config", "set", key, "1"],
            ErrorKind::InvalidInput,
            &[key],
        );
    }
    refused(
        &env,
        &["config", "set", "--source", "../x", "k", "1"],
        ErrorKind::InvalidInput,
        &["../x"],
    );
}

#[test]
fn memory_names_that_escape_and_texts_past_the_limit_are_refused() {
    let env = Env::new();
    env.store();
    for name in ["../evil", "a/b", "/etc/passwd", "MEMORY", ".hidden", "a\nb"] {
        refused(
            &env,
            &["memory", "add", name, "text"],
            ErrorKind::InvalidInput,
            &["memory name"],
        );
    }
    let long = "n".repeat(101);
    refused(
        &env,
        &["memory", "add", &long, "text"],
        ErrorKind::InvalidInput,
        &["memory name"],
    );
    // A text on stdin one byte past the limit (stdin may be endless: the CLI
    // reads no further than that).
    let dirs = [env.home.path(), env.project.path()];
    let before = tree_snapshot(&dirs);
    let out = env
        .cmd()
        .args(["memory", "add", "big", "-"])
        .write_stdin(vec![b'a'; (1 << 20) + 1])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(code(ErrorKind::InvalidInput)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("over the limit of 1048576 bytes"),
        "{stderr}"
    );
    assert!(
        tree_snapshot(&dirs) == before,
        "a refused memory changed a file"
    );
    // Exactly at the limit it is taken.
    let out = env
        .cmd()
        .args(["memory", "add", "big", "-"])
        .write_stdin(vec![b'a'; 1 << 20])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn import_of_a_fifo_a_device_or_nothing_is_refused_before_reading() {
    let env = Env::new();
    env.store();
    let root = env.root();
    let fifo = root.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.display().to_string();
    // A FIFO nobody writes would block a reader forever; it is never opened.
    refused(
        &env,
        &["import", &fifo],
        ErrorKind::InvalidInput,
        &[&fifo, "FIFO"],
    );
    refused(
        &env,
        &["import", "/dev/zero"],
        ErrorKind::InvalidInput,
        &["/dev/zero", "device"],
    );
    let missing = root.join("missing.jsonl").display().to_string();
    refused(
        &env,
        &["import", &missing],
        ErrorKind::NotFound,
        &[&missing],
    );
    // An empty path is a usage error (exit 2), caught by the parser.
    let stderr = env.fails(&["import", ""], 2);
    assert!(stderr.contains("a value is required"), "{stderr}");
}
