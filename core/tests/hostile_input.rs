//! Hostile input at instructions, search, compaction policies and the remote:
//! each refusal has the documented kind and comes before anything is written
//! (every file under the home and the project is byte-identical before and
//! after). The remote tests need a PostgreSQL server (`SESSIONKIT_TEST_PG`);
//! with `SESSIONKIT_REQUIRE_PG=1` (set by tests/run-all.sh) they fail without
//! one.

use std::fmt::Debug;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use sessionkit::{
    CompactionPolicy, CreateOptions, ErrorKind, InstructionOptions, Result, SearchQuery,
    StoreOptions, MAX_SEARCH_QUERY_BYTES, MAX_SEARCH_QUERY_TERMS,
};

#[path = "support/env.rs"]
mod support_env;
use sessionkit::testing::tree_snapshot;
use support_env::{env_with, mkfifo, within_seconds, Env};

/// Run `f`, expect `kind` with every needle in its message, and expect the
/// home and the project unchanged.
#[track_caller]
fn refused<T: Debug>(e: &Env, kind: ErrorKind, needles: &[&str], f: impl FnOnce() -> Result<T>) {
    let dirs = [e.home.path(), e.project.path()];
    let before = tree_snapshot(&dirs);
    let err = match f() {
        Ok(v) => panic!("expected {kind:?} mentioning {needles:?}, got Ok({v:?})"),
        Err(err) => err,
    };
    assert_eq!(err.kind(), kind, "wrong kind for {err}");
    let msg = err.to_string();
    for n in needles {
        assert!(msg.contains(n), "{msg:?} does not mention {n:?}");
    }
    let after = tree_snapshot(&dirs);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "files appeared or vanished after the refused call ({msg})"
    );
    assert!(
        before == after,
        "a file changed after the refused call ({msg})"
    );
}

fn env() -> Env {
    env_with(StoreOptions::default())
}

fn names(list: &[&str]) -> InstructionOptions {
    InstructionOptions {
        names: Some(list.iter().map(|s| s.to_string()).collect()),
        ..InstructionOptions::default()
    }
}

// ---- instructions -----------------------------------------------------------

#[test]
fn instructions_of_something_that_is_not_a_directory_are_not_found() {
    let e = env();
    let p = e.project.path();
    fs::write(p.join("AGENTS.md"), "project rules").unwrap();
    fs::write(p.join("a-file"), "x").unwrap();
    mkfifo(&p.join("fifo"));
    symlink(p.join("loop-b"), p.join("loop-a")).unwrap();
    symlink(p.join("loop-a"), p.join("loop-b")).unwrap();
    symlink(p.join("a-file"), p.join("link-to-file")).unwrap();
    let o = InstructionOptions::default();
    for dir in [
        p.join("a-file"),
        p.join("a-file/below"),
        p.join("fifo"),
        p.join("loop-a"),
        p.join("link-to-file"),
        PathBuf::from("/dev/zero"),
        p.join("missing"),
    ] {
        let shown = dir.display().to_string();
        refused(&e, ErrorKind::NotFound, &[&shown], || {
            e.store.instructions(&dir, &o)
        });
    }
    // A directory still answers.
    let ok = e.store.instructions(p, &o).unwrap();
    assert_eq!(ok.files.len(), 1, "{ok:?}");
}

#[test]
fn instruction_names_and_directories_with_a_nul_or_control_character_are_refused() {
    let e = env();
    let p = e.project.path();
    fs::write(p.join("AGENTS.md"), "project rules").unwrap();
    for bad in [
        "AGENTS.md\0x",
        "\0",
        "AGENTS\n.md",
        "A\u{1b}[31m.md",
        "a\u{7f}",
    ] {
        let shown = format!("{bad:?}");
        refused(
            &e,
            ErrorKind::InvalidInput,
            &[&shown, "plain file name"],
            || e.store.instructions(p, &names(&["AGENTS.md", bad])),
        );
    }
    // Through JSON, as the C ABI and the bindings pass them.
    let o =
        InstructionOptions::from_json(r#"{"names": ["AGENTS.md\u0000../../etc/passwd"]}"#).unwrap();
    refused(&e, ErrorKind::InvalidInput, &["plain file name"], || {
        e.store.instructions(p, &o)
    });
    let dir = PathBuf::from(format!("{}\0/etc", p.display()));
    refused(&e, ErrorKind::InvalidInput, &["NUL"], || {
        e.store.instructions(&dir, &InstructionOptions::default())
    });
}

#[test]
fn instruction_files_that_are_special_or_escape_are_reported_not_read() {
    let e = env();
    let p = e.project.path();
    // A directory, a FIFO and a device where a file is expected; an include
    // loop through symbolic links; an include out of the tree by `..` and by
    // a symbolic link; one name repeated a thousand times.
    fs::create_dir(p.join("CLAUDE.md")).unwrap();
    mkfifo(&p.join("GEMINI.md"));
    symlink("/dev/zero", p.join("ZERO.md")).unwrap();
    fs::write(
        p.join("AGENTS.md"),
        "@../../../../etc/passwd @out.md @self.md @/dev/zero",
    )
    .unwrap();
    symlink("/etc/hostname", p.join("out.md")).unwrap();
    symlink(p.join("AGENTS.md"), p.join("self.md")).unwrap();
    let mut list = vec!["AGENTS.md", "CLAUDE.md", "GEMINI.md", "ZERO.md"];
    list.extend(std::iter::repeat_n("AGENTS.md", 1000));
    let o = names(&list);
    let dirs = [e.home.path(), e.project.path()];
    let before = tree_snapshot(&dirs);
    let r = within_seconds(&e, move |s| s.instructions(s.project_root(), &o)).unwrap();
    assert_eq!(tree_snapshot(&dirs), before, "reading instructions wrote");
    assert_eq!(r.files.len(), 1, "only AGENTS.md is read: {r:#?}");
    let kinds: Vec<_> = r.problems.iter().map(|p| format!("{:?}", p.kind)).collect();
    for want in ["Unreadable", "OutsideRoots", "Cycle"] {
        assert!(kinds.iter().any(|k| k == want), "no {want} in {kinds:?}");
    }
    // The directory, the FIFO and /dev/zero are each reported, none read.
    for name in ["CLAUDE.md", "GEMINI.md", "ZERO.md"] {
        assert!(
            r.problems.iter().any(|q| q.path.ends_with(name)),
            "{name} not reported: {:#?}",
            r.problems
        );
    }
}

// ---- search -----------------------------------------------------------------

fn searchable() -> Env {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "where is parse_config defined"}))
        .unwrap();
    // The cache exists, so a refusal must leave it as it is too.
    e.store.search(&q("parse_config")).unwrap();
    e
}

fn q(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.into(),
        ..SearchQuery::default()
    }
}

#[test]
fn a_nul_in_a_search_query_is_invalid_input_before_the_cache_is_touched() {
    let e = searchable();
    for text in ["parse\0config", "\0", "parse_config \0"] {
        refused(&e, ErrorKind::InvalidInput, &["NUL"], || {
            e.store.search(&q(text))
        });
    }
    let with = |f: fn(&mut SearchQuery)| {
        let mut query = q("parse_config");
        f(&mut query);
        query
    };
    for (query, what) in [
        (with(|x| x.role = Some("user\0".into())), "role"),
        (with(|x| x.session = Some("01\0".into())), "session"),
        (with(|x| x.tool = Some("\0".into())), "tool"),
        (with(|x| x.since = Some("2026\0".into())), "since"),
        (with(|x| x.until = Some("\0".into())), "until"),
    ] {
        refused(&e, ErrorKind::InvalidInput, &[what, "NUL"], || {
            e.store.search(&query)
        });
    }
    // From JSON, as every binding passes it.
    let query = SearchQuery::from_json(r#"{"text": "parse\u0000config"}"#).unwrap();
    refused(&e, ErrorKind::InvalidInput, &["NUL"], || {
        e.store.search(&query)
    });
    // With no cache yet, none is created by a refused query.
    let fresh = env();
    fresh
        .store
        .create_session(CreateOptions::default())
        .unwrap()
        .append(json!({"role": "user", "content": "hello"}))
        .unwrap();
    refused(&fresh, ErrorKind::InvalidInput, &["NUL"], || {
        fresh.store.search(&q("hello\0"))
    });
    assert!(!fresh.store.dir().join("search").exists());
}

#[test]
fn search_queries_past_the_limits_are_refused_naming_them() {
    let e = searchable();
    let words = |n: usize| {
        (0..n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let at_limit = words(MAX_SEARCH_QUERY_TERMS);
    assert!(at_limit.len() <= MAX_SEARCH_QUERY_BYTES);
    let started = Instant::now();
    assert!(e.store.search(&q(&at_limit)).unwrap().hits.is_empty());
    let over_terms = words(MAX_SEARCH_QUERY_TERMS + 1);
    let limit = MAX_SEARCH_QUERY_TERMS.to_string();
    refused(&e, ErrorKind::InvalidInput, &[&limit, "terms"], || {
        e.store.search(&q(&over_terms))
    });
    let or_terms = words(MAX_SEARCH_QUERY_TERMS + 1).replace(' ', " OR ");
    refused(&e, ErrorKind::InvalidInput, &[&limit, "terms"], || {
        e.store.search(&q(&or_terms))
    });
    // Bytes: one long word, and the 100,000 words of the report.
    let limit = MAX_SEARCH_QUERY_BYTES.to_string();
    let long = "x".repeat(MAX_SEARCH_QUERY_BYTES + 1);
    refused(&e, ErrorKind::InvalidInput, &[&limit, "bytes"], || {
        e.store.search(&q(&long))
    });
    let many = words(100_000);
    refused(&e, ErrorKind::InvalidInput, &[&limit, "bytes"], || {
        e.store.search(&q(&many))
    });
    // Terms are counted, not separators: punctuation and `OR` alone pass.
    let padded = format!("{} parse_config", " -- OR ".repeat(1000));
    assert!(padded.len() <= MAX_SEARCH_QUERY_BYTES);
    assert_eq!(e.store.search(&q(&padded)).unwrap().hits.len(), 1);
    // Generous: the whole test, every query at the limit included, is quick
    // on a loaded machine (100,000 words used to take 31 s).
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

// ---- compaction policies ----------------------------------------------------

#[test]
fn a_compaction_policy_must_be_a_json_object() {
    for bad in [
        "[1000]",
        "[1000, 2, 10]",
        "1000",
        "\"x\"",
        "null",
        "true",
        "",
    ] {
        let err = CompactionPolicy::from_json(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad}: {err}");
        assert!(err.to_string().contains("compaction policy"), "{err}");
    }
    assert!(CompactionPolicy::from_json(r#"{"tokenBudget": 1000, "x": 1}"#).is_err());
    let ok = CompactionPolicy::from_json(r#" {"tokenBudget": 1000} "#).unwrap();
    assert_eq!(ok, CompactionPolicy::new(1000));
    // And the session behind it is untouched by a refused policy.
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "hi"})).unwrap();
    refused(&e, ErrorKind::InvalidInput, &["an array"], || {
        CompactionPolicy::from_json("[10, 0, 0]").and_then(|p| s.select_compaction(&p))
    });
}

// ---- remote -----------------------------------------------------------------

#[cfg(feature = "remote")]
mod remote {
    use super::*;
    use sessionkit::{Remote, RemoteOptions, Store};

    fn server() -> Option<String> {
        match std::env::var("SESSIONKIT_TEST_PG") {
            Ok(url) if !url.is_empty() => Some(url),
            _ if std::env::var("SESSIONKIT_REQUIRE_PG").is_ok_and(|v| v == "1") => {
                panic!("SESSIONKIT_REQUIRE_PG=1 but SESSIONKIT_TEST_PG is not set")
            }
            _ => {
                eprintln!("skipped: SESSIONKIT_TEST_PG is not set");
                None
            }
        }
    }

    fn connect(url: &str, store: &Store, project: &str, holder: &str) -> Remote {
        Remote::connect(
            store,
            RemoteOptions {
                url: Some(url.into()),
                project: Some(project.into()),
                holder: Some(holder.into()),
                lease_ttl: Some(Duration::from_secs(600)),
                map_paths: Vec::new(),
            },
        )
        .expect("connect to the test server")
    }

    #[test]
    fn hostile_project_and_holder_names_are_refused_before_connecting() {
        let e = env();
        let long = "h".repeat(201);
        let cases = [
            (Some("p\0q"), None, "remote project name"),
            (Some("\u{1b}[2J"), None, "remote project name"),
            (None, Some("laptop\0"), "lease holder name"),
            (None, Some("ci\n(forged line)"), "lease holder name"),
            (None, Some(""), "lease holder name"),
            (None, Some(long.as_str()), "lease holder name"),
        ];
        for (project, holder, what) in cases {
            let options = RemoteOptions {
                // Never reached: the names are checked first.
                url: Some("host=/nonexistent/sk-socket-dir port=1 dbname=x".into()),
                project: project.map(String::from),
                holder: holder.map(String::from),
                lease_ttl: None,
                map_paths: Vec::new(),
            };
            refused(&e, ErrorKind::InvalidInput, &[what], || {
                Remote::connect(&e.store, options)
            });
        }
    }

    #[test]
    fn a_lease_on_a_session_never_pushed_leaves_no_local_session() {
        let Some(url) = server() else { return };
        let e = env();
        let project = format!("test-{}", uuid::Uuid::now_v7());
        let r = connect(&url, &e.store, &project, "a");
        let id = uuid::Uuid::now_v7().to_string();
        let lease = r.acquire(&id).unwrap();
        // Leased for a first push: listed, with nothing pushed.
        let listed = r.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].pushed_bytes, listed[0].entry.is_none()),
            (0, true)
        );
        refused(&e, ErrorKind::NotFound, &[&id, "never pushed"], || {
            r.pull(&e.store, &id)
        });
        assert!(e.store.list_sessions().unwrap().is_empty());
        assert!(!e.store.log_path(&id).unwrap().exists());
        // Another machine that pulls sees the same.
        let other = env();
        let r2 = connect(&url, &other.store, &project, "b");
        refused(&other, ErrorKind::NotFound, &[&id], || {
            r2.pull(&other.store, &id)
        });
        assert!(other.store.list_sessions().unwrap().is_empty());
        // Given back before any push, the row is no session of the remote.
        r.release(&lease).unwrap();
        assert!(r.list().unwrap().is_empty());
        // A pushed session still pulls.
        let s = e.store.create_session(CreateOptions::default()).unwrap();
        s.append(json!({"role": "user", "content": "hi"})).unwrap();
        r.push(&e.store, s.id()).unwrap();
        let pulled = r2.pull(&other.store, s.id()).unwrap();
        assert!(pulled.to > 0);
        assert_eq!(other.store.list_sessions().unwrap().len(), 1);
    }

    #[test]
    fn hostile_session_ids_reach_neither_the_disk_nor_the_server() {
        let Some(url) = server() else { return };
        let e = env();
        let project = format!("test-{}", uuid::Uuid::now_v7());
        let r = connect(&url, &e.store, &project, "a");
        let long = "a".repeat(10_000);
        for id in [
            "../x",
            "..",
            "",
            "a/b",
            "blobs",
            "a\0b",
            "\u{1b}[2J",
            "a\nb",
            long.as_str(),
        ] {
            refused(&e, ErrorKind::InvalidInput, &[], || r.pull(&e.store, id));
            refused(&e, ErrorKind::InvalidInput, &[], || r.acquire(id));
            refused(&e, ErrorKind::InvalidInput, &[], || r.push(&e.store, id));
            assert!(r
                .follow(id, Some(0))
                .is_err_and(|err| err.kind() == ErrorKind::InvalidInput));
        }
        assert!(r.list().unwrap().is_empty());
    }
}
