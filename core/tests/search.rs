//! Full-text search: what a user looks for is found (code, paths, phrases,
//! prefixes, filters), the cache follows the logs (appends by offset, deleted
//! and rewritten sessions), and a damaged cache is set aside and rebuilt.

#[path = "support/env.rs"]
mod support_env;

use std::path::PathBuf;

use serde_json::json;
use sessionkit::{CreateOptions, SearchQuery, SearchResults, Store, StoreOptions};
use support_env::env_with;

fn q(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.into(),
        ..SearchQuery::default()
    }
}

fn find(store: &Store, query: SearchQuery) -> SearchResults {
    store.search(&query).expect("search")
}

fn message_ids(r: &SearchResults) -> Vec<&str> {
    r.hits.iter().map(|h| h.message_id.as_str()).collect()
}

/// The first file of the cache (FORMAT.md §23.1).
fn cache_file(store: &Store) -> PathBuf {
    cache_files(store)[0].clone()
}

/// Every file of the cache: each indexes the sessions whose id hashes to it.
fn cache_files(store: &Store) -> [PathBuf; 2] {
    let dir = store.dir().join("search");
    [dir.join("index.sqlite"), dir.join("index-1.sqlite")]
}

/// Replace the log of `id` by another file holding one message, `m-new`, with
/// `content`: a rewrite of the whole log, as a vacuum does.
fn rewrite_log(store: &Store, id: &str, content: &str) {
    let log = store.log_path(id).unwrap();
    let tmp = log.with_extension("tmp");
    let line = json!({"id": "m-new", "parentId": null, "role": "user", "content": content});
    std::fs::write(&tmp, format!("{line}\n")).unwrap();
    std::fs::rename(&tmp, &log).unwrap();
}

#[test]
fn code_paths_phrases_and_prefixes_are_found() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    let ask = s
        .append(json!({"role": "user", "content": "Why does parse_config fail in src/main.rs?"}))
        .unwrap();
    let call = s
        .append(json!({"role": "assistant", "content": "Let me look.", "messageParams": {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"core/src/lib.rs\"}"}}
        ]}}))
        .unwrap();
    let result = s
        .append(json!({"role": "tool", "content": "fn load_settings() -> Settings", "messageParams": {"tool_call_id": "c1"}}))
        .unwrap();
    let blocks = s
        .append(json!({"role": "assistant", "content": [{"type": "text", "text": "The unterminated quote is the culprit."}]}))
        .unwrap();

    let r = find(&env.store, q("parse_config"));
    assert_eq!(message_ids(&r), [ask.id()]);
    let hit = &r.hits[0];
    assert_eq!(hit.session_id, s.id());
    assert_eq!(hit.role.as_deref(), Some("user"));
    assert!(hit.snippet.contains("«parse_config»"), "{}", hit.snippet);
    assert!(hit.timestamp.is_some());

    assert_eq!(message_ids(&find(&env.store, q("src/main.rs"))), [ask.id()]);
    assert_eq!(message_ids(&find(&env.store, q("main.rs"))), [ask.id()]);
    // A tool call's name and input, and a tool result.
    assert_eq!(message_ids(&find(&env.store, q("read_file"))), [call.id()]);
    assert_eq!(
        message_ids(&find(&env.store, q("core/src/lib.rs"))),
        [call.id()]
    );
    assert_eq!(
        message_ids(&find(&env.store, q("load_settings"))),
        [result.id()]
    );
    // Text blocks, a phrase, a prefix, OR.
    assert_eq!(
        message_ids(&find(&env.store, q("\"unterminated quote\""))),
        [blocks.id()]
    );
    assert!(find(&env.store, q("\"quote unterminated\""))
        .hits
        .is_empty());
    assert_eq!(message_ids(&find(&env.store, q("unterm*"))), [blocks.id()]);
    let either = find(&env.store, q("culprit OR load_settings"));
    assert_eq!(either.hits.len(), 2);
    // Every word must match.
    assert!(find(&env.store, q("parse_config culprit")).hits.is_empty());
}

#[test]
fn filters_narrow_the_hits() {
    let env = env_with(StoreOptions::default());
    let a = env.store.create_session(CreateOptions::default()).unwrap();
    let b = env.store.create_session(CreateOptions::default()).unwrap();
    let ua = a.append(json!({"role": "user", "content": "deploy the widget", "timestamp": "2026-01-05T10:00:00Z"})).unwrap();
    let ra = a.append(json!({"role": "assistant", "content": "deploying widget", "timestamp": "2026-02-05T10:00:00Z", "messageParams": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "make deploy"}}
    ]}})).unwrap();
    let ub = b.append(json!({"role": "user", "content": "widget colours", "timestamp": "2026-03-05T10:00:00Z"})).unwrap();

    let with = |f: &dyn Fn(&mut SearchQuery)| {
        let mut query = q("widget");
        f(&mut query);
        let mut ids: Vec<String> = find(&env.store, query)
            .hits
            .into_iter()
            .map(|h| h.message_id)
            .collect();
        ids.sort();
        ids
    };
    let sorted = |mut v: Vec<&str>| {
        v.sort();
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(with(&|_| {}), sorted(vec![ua.id(), ra.id(), ub.id()]));
    assert_eq!(
        with(&|q| q.role = Some("user".into())),
        sorted(vec![ua.id(), ub.id()])
    );
    assert_eq!(
        with(&|q| q.session = Some(b.id().into())),
        sorted(vec![ub.id()])
    );
    // The start of an id: the shortest that is not also the start of a's.
    let start = (1..=b.id().len())
        .map(|n| &b.id()[..n])
        .find(|p| !a.id().starts_with(p))
        .unwrap()
        .to_string();
    assert_eq!(
        with(&|q| q.session = Some(start.clone())),
        sorted(vec![ub.id()])
    );
    // Ids made in the same millisecond share their first characters.
    let common = b.id()[..start.len() - 1].to_string();
    if !common.is_empty() {
        assert_eq!(
            with(&|q| q.session = Some(common.clone())),
            sorted(vec![ua.id(), ra.id(), ub.id()])
        );
    }
    assert_eq!(
        with(&|q| q.tool = Some("bash".into())),
        sorted(vec![ra.id()])
    );
    assert_eq!(
        with(&|q| q.since = Some("2026-02-05".into())),
        sorted(vec![ra.id(), ub.id()])
    );
    assert_eq!(
        with(&|q| q.until = Some("2026-02-05".into())),
        sorted(vec![ua.id(), ra.id()])
    );
    assert_eq!(
        with(&|q| {
            q.since = Some("2026-01-06T00:00:00Z".into());
            q.until = Some("2026-03-01T00:00:00Z".into());
        }),
        sorted(vec![ra.id()])
    );
    assert_eq!(with(&|q| q.limit = Some(1)).len(), 1);

    let bad = env
        .store
        .search(&SearchQuery {
            since: Some("last tuesday".into()),
            ..q("widget")
        })
        .unwrap_err();
    assert_eq!(bad.kind(), sessionkit::ErrorKind::InvalidInput);
    assert!(bad.to_string().contains("last tuesday"), "{bad}");
    let empty = env.store.search(&q(" \"\" ")).unwrap_err();
    assert_eq!(empty.kind(), sessionkit::ErrorKind::InvalidInput);
}

#[test]
fn appends_are_indexed_by_offset() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "first words"}))
        .unwrap();
    let log = env.store.log_path(s.id()).unwrap();
    let before = std::fs::metadata(&log).unwrap().len();
    let first = find(&env.store, q("first"));
    assert_eq!(first.indexed_bytes, before);
    assert_eq!(first.hits.len(), 1);

    let later = s
        .append(json!({"role": "assistant", "content": "second thoughts"}))
        .unwrap();
    let after = std::fs::metadata(&log).unwrap().len();
    let r = find(&env.store, q("second"));
    assert_eq!(message_ids(&r), [later.id()]);
    // Only the appended line was read.
    assert_eq!(r.indexed_bytes, after - before);
    // Nothing new: nothing read.
    assert_eq!(find(&env.store, q("first")).indexed_bytes, 0);
}

#[test]
fn deleted_erased_and_rewritten_sessions_leave_no_stale_hits() {
    let env = env_with(StoreOptions::default());
    let gone = env.store.create_session(CreateOptions::default()).unwrap();
    gone.append(json!({"role": "user", "content": "ephemeral pelican"}))
        .unwrap();
    let erased = env.store.create_session(CreateOptions::default()).unwrap();
    erased
        .append(json!({"role": "user", "content": "secret pelican"}))
        .unwrap();
    let rewritten = env.store.create_session(CreateOptions::default()).unwrap();
    rewritten
        .append(json!({"role": "user", "content": "pelican draft"}))
        .unwrap();
    let rewritten_id = rewritten.id().to_string();
    rewritten.close().unwrap();
    assert_eq!(find(&env.store, q("pelican")).hits.len(), 3);

    let gone_id = gone.id().to_string();
    gone.close().unwrap();
    env.store.delete_session(&gone_id).unwrap();
    let erased = erased.erase().unwrap();
    erased
        .append(json!({"role": "user", "content": "fresh start"}))
        .unwrap();
    rewrite_log(&env.store, &rewritten_id, "final heron");

    assert!(find(&env.store, q("pelican")).hits.is_empty());
    assert_eq!(message_ids(&find(&env.store, q("heron"))), ["m-new"]);
    assert_eq!(find(&env.store, q("fresh")).hits[0].session_id, erased.id());
}

#[test]
fn the_cache_keeps_no_copy_of_the_text_and_snippets_come_from_the_log() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "a quetzalcoatl in the parse_config docs"}))
        .unwrap();
    let r = find(&env.store, q("quetzalcoatl"));
    assert!(
        r.hits[0].snippet.contains("«quetzalcoatl»"),
        "{}",
        r.hits[0].snippet
    );
    let id = s.id().to_string();
    s.close().unwrap();

    // Every file of the cache, the WAL included, holds the words as index
    // terms, never the text.
    let text = b"a quetzalcoatl in the parse_config docs";
    let dir = cache_file(&env.store).parent().unwrap().to_path_buf();
    for f in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(f.unwrap().path()).unwrap();
        assert!(!bytes.windows(text.len()).any(|w| w == text));
    }

    // While another process holds the cache's write lock, the log is
    // rewritten: the cache still matches the old word, but its line no longer
    // holds that message, so the hit is dropped, never shown from a copy.
    let locks = cache_files(&env.store).map(|f| {
        let lock = rusqlite::Connection::open(f).unwrap();
        lock.execute_batch("BEGIN IMMEDIATE").unwrap();
        lock
    });
    rewrite_log(&env.store, &id, "rewritten without it");
    let r = find(&env.store, q("quetzalcoatl"));
    assert_eq!(
        r.stale.len(),
        1,
        "the update waited for the lock and gave up"
    );
    assert!(r.hits.is_empty(), "{:?}", r.hits);
    drop(locks);
    assert!(find(&env.store, q("quetzalcoatl")).hits.is_empty());
    assert_eq!(message_ids(&find(&env.store, q("rewritten"))), ["m-new"]);
}

#[test]
fn a_message_stored_in_a_blob_is_found_and_its_snippet_read_through_the_blob() {
    let env = env_with(StoreOptions {
        blob_threshold: 64,
        ..StoreOptions::default()
    });
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    let long = format!(
        "{} the archipelago_loader fails {}",
        "x ".repeat(100),
        "y ".repeat(100)
    );
    let m = s.append(json!({"role": "tool", "content": long})).unwrap();
    let log = std::fs::read_to_string(env.store.log_path(s.id()).unwrap()).unwrap();
    assert!(
        !log.contains("archipelago_loader"),
        "the content went to a blob"
    );

    let r = find(&env.store, q("archipelago_loader"));
    assert_eq!(message_ids(&r), [m.id()]);
    assert!(
        r.hits[0].snippet.contains("«archipelago_loader» fails"),
        "{}",
        r.hits[0].snippet
    );
}

#[test]
fn a_damaged_cache_is_set_aside_and_rebuilt() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    let m = s
        .append(json!({"role": "user", "content": "sturdy bridge"}))
        .unwrap();
    find(&env.store, q("bridge"));
    let cache = cache_file(&env.store);
    for ext in ["sqlite-wal", "sqlite-shm"] {
        let _ = std::fs::remove_file(cache.with_extension(ext));
    }
    std::fs::write(&cache, vec![0x5a; 8192]).unwrap();
    let r = find(&env.store, q("bridge"));
    assert_eq!(message_ids(&r), [m.id()]);
    assert_eq!(r.set_aside, [cache.with_extension("sqlite.damaged")]);
    assert!(cache.with_extension("sqlite.damaged").exists());
    // Rebuilt: the next query trusts it again.
    assert!(find(&env.store, q("bridge")).set_aside.is_empty());
}

#[test]
fn sessions_are_spread_over_the_caches_files_and_a_damaged_one_is_rebuilt_alone() {
    let env = env_with(StoreOptions::default());
    let mut ids = Vec::new();
    for i in 0..16 {
        let s = env.store.create_session(CreateOptions::default()).unwrap();
        s.append(json!({"role": "user", "content": format!("spread pangolin {i}")}))
            .unwrap();
        ids.push(s.id().to_string());
    }
    let sessions = |r: &SearchResults| {
        let mut s: Vec<String> = r.hits.iter().map(|h| h.session_id.clone()).collect();
        s.sort();
        s
    };
    ids.sort();
    let all = SearchQuery {
        limit: Some(100),
        ..q("pangolin")
    };
    assert_eq!(sessions(&find(&env.store, all.clone())), ids);
    // Each file holds some of the sessions (16 ids all hashing to one file
    // has a chance of 1 in 32,768), and none holds a session twice.
    let [first, second] = cache_files(&env.store);
    let count = |f: &PathBuf| -> i64 {
        let c = rusqlite::Connection::open(f).unwrap();
        c.query_row("SELECT count(*) FROM logs", [], |r| r.get(0))
            .unwrap()
    };
    assert!(count(&first) > 0 && count(&second) > 0);
    assert_eq!(count(&first) + count(&second), 16);

    for ext in ["sqlite-wal", "sqlite-shm"] {
        let _ = std::fs::remove_file(second.with_extension(ext));
    }
    std::fs::write(&second, vec![0x5a; 8192]).unwrap();
    let r = find(&env.store, all.clone());
    assert_eq!(r.set_aside, [second.with_extension("sqlite.damaged")]);
    assert_eq!(sessions(&r), ids);
    assert!(!first.with_extension("sqlite.damaged").exists());
    assert!(find(&env.store, all).set_aside.is_empty());
}

#[test]
fn a_cache_of_another_version_is_set_aside() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "versioned otter"}))
        .unwrap();
    find(&env.store, q("otter"));
    let cache = cache_file(&env.store);
    {
        let conn = rusqlite::Connection::open(&cache).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let r = find(&env.store, q("otter"));
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.set_aside.len(), 1);
}

#[test]
fn all_searches_every_project_of_the_home() {
    let env = env_with(StoreOptions::default());
    let other_project = tempfile::tempdir().unwrap();
    let other = Store::open(other_project.path(), env.store.options().clone()).unwrap();
    env.store
        .create_session(CreateOptions::default())
        .unwrap()
        .append(json!({"role": "user", "content": "shared lighthouse"}))
        .unwrap();
    other
        .create_session(CreateOptions::default())
        .unwrap()
        .append(json!({"role": "user", "content": "distant lighthouse"}))
        .unwrap();
    assert_eq!(find(&env.store, q("lighthouse")).hits.len(), 1);
    let all = find(
        &env.store,
        SearchQuery {
            all: true,
            ..q("lighthouse")
        },
    );
    let mut projects: Vec<&str> = all.hits.iter().map(|h| h.project.as_str()).collect();
    projects.sort();
    let mut expected = vec![env.store.project_code(), other.project_code()];
    expected.sort();
    assert_eq!(projects, expected);
}

#[test]
fn concurrent_queries_and_appends_do_not_corrupt_the_cache() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "start marker"}))
        .unwrap();
    let readers: Vec<_> = (0..3)
        .map(|_| {
            // A handle of its own: its own connection to the cache.
            let store = Store::open(env.project.path(), env.store.options().clone()).unwrap();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let r = store.search(&q("marker")).expect("search while appending");
                    // A healthy cache is never taken for a damaged one.
                    assert_eq!(r.set_aside, Vec::<PathBuf>::new());
                }
            })
        })
        .collect();
    for i in 0..100 {
        s.append(json!({"role": "assistant", "content": format!("marker number{i}")}))
            .unwrap();
    }
    for r in readers {
        r.join().unwrap();
    }
    let r = find(
        &env.store,
        SearchQuery {
            limit: Some(1000),
            ..q("marker")
        },
    );
    assert_eq!(r.hits.len(), 101);
    assert!(r.set_aside.is_empty());
    assert_eq!(find(&env.store, q("number99")).hits.len(), 1);
}

#[test]
fn a_tool_result_is_found_by_its_calls_tool_name() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    let call = s
        .append(json!({"role": "assistant", "content": "Reading the config.", "messageParams": {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"app.toml\"}"}}
        ]}}))
        .unwrap();
    let by_tool = |text: &str, tool: &str| {
        let mut ids: Vec<String> = find(
            &env.store,
            SearchQuery {
                tool: Some(tool.into()),
                ..q(text)
            },
        )
        .hits
        .into_iter()
        .map(|h| h.message_id)
        .collect();
        ids.sort();
        ids
    };
    // The call is indexed before its result is appended: the result must
    // still learn its tool's name from the cache.
    assert_eq!(by_tool("config", "read_file"), [call.id()]);
    let result = s
        .append(json!({"role": "tool", "content": "config: port = 8080", "messageParams": {"tool_call_id": "c1"}}))
        .unwrap();
    let blocks = s
        .append(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "grep", "input": {"pattern": "port"}}
        ]}))
        .unwrap();
    let block_result = s
        .append(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "app.toml:1: port = 8080"}
        ]}))
        .unwrap();
    let mut expected = vec![call.id().to_string(), result.id().to_string()];
    expected.sort();
    assert_eq!(by_tool("config", "read_file"), expected);
    let r = find(&env.store, q("8080"));
    let tools: Vec<(&str, Vec<String>)> = r
        .hits
        .iter()
        .map(|h| (h.message_id.as_str(), h.tools.clone()))
        .collect();
    assert!(
        tools.contains(&(result.id(), vec!["read_file".to_string()])),
        "{tools:?}"
    );
    let mut expected = vec![blocks.id().to_string(), block_result.id().to_string()];
    expected.sort();
    assert_eq!(by_tool("port", "grep"), expected);
    assert!(by_tool("8080", "bash").is_empty());
}

#[test]
fn subagent_logs_are_indexed_and_name_their_agent() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "find the flaky albatross test"}))
        .unwrap();
    let agent = s.spawn_subagent(Some("explorer"), json!({})).unwrap();
    let inner = agent
        .append(json!({"role": "assistant", "content": "The albatross test sleeps 3 s: flaky under load."}))
        .unwrap();
    let r = find(&env.store, q("sleeps"));
    assert_eq!(r.hits.len(), 1);
    let hit = &r.hits[0];
    assert_eq!(
        (
            hit.session_id.as_str(),
            hit.agent_id.as_deref(),
            hit.message_id.as_str()
        ),
        (s.id(), Some("explorer"), inner.id())
    );
    let both = find(&env.store, q("albatross"));
    let mut agents: Vec<Option<&str>> = both.hits.iter().map(|h| h.agent_id.as_deref()).collect();
    agents.sort();
    assert_eq!(agents, [None, Some("explorer")]);
    // The session filter covers its subagents; an append to a subagent is
    // read by offset like any log.
    let later = agent
        .append(json!({"role": "assistant", "content": "Replaced the sleep with a condvar."}))
        .unwrap();
    let r = find(
        &env.store,
        SearchQuery {
            session: Some(s.id().into()),
            ..q("condvar")
        },
    );
    assert_eq!(message_ids(&r), [later.id()]);
    let log = env
        .store
        .dir()
        .join(s.id())
        .join("subagents")
        .join("explorer.jsonl");
    let appended = std::fs::metadata(&log).unwrap().len();
    assert!(
        r.indexed_bytes > 0 && r.indexed_bytes < appended,
        "{}",
        r.indexed_bytes
    );
    // A deleted session takes its subagents' hits with it.
    let id = s.id().to_string();
    drop(agent);
    s.close().unwrap();
    env.store.delete_session(&id).unwrap();
    assert!(find(&env.store, q("albatross")).hits.is_empty());
}

#[test]
fn processes_building_the_same_cache_at_once_index_each_line_once() {
    let env = env_with(StoreOptions::default());
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    for i in 0..50 {
        s.append(json!({"role": "user", "content": format!("kestrel sighting {i}")}))
            .unwrap();
    }
    for round in 0..5 {
        // Every handle sees a log the cache has not indexed yet: each must
        // index it under the write lock from where the cache then is.
        s.append(json!({"role": "user", "content": format!("kestrel round {round}")}))
            .unwrap();
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let store = Store::open(env.project.path(), env.store.options().clone()).unwrap();
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    store.search(&q("kestrel")).expect("search");
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    let r = find(
        &env.store,
        SearchQuery {
            limit: Some(1000),
            ..q("kestrel")
        },
    );
    assert_eq!(r.hits.len(), 55);
}

#[test]
fn a_store_of_many_sessions_is_searched_whole_with_its_subagents() {
    // Enough sessions that the logs are listed on two threads, with subagents
    // in a session of each half and a sidecar directory without subagents.
    let env = env_with(StoreOptions::default());
    let mut ids = Vec::new();
    for n in 0..300 {
        let id = format!("0190a4b0-0000-7000-8000-{n:012}");
        let line = json!({"id": format!("m{n}"), "parentId": null, "role": "user", "content": format!("common marmot number{n}")});
        std::fs::write(env.store.log_path(&id).unwrap(), format!("{line}\n")).unwrap();
        ids.push(id);
    }
    std::fs::create_dir(env.store.dir().join(&ids[7])).unwrap();
    for i in [3, 250] {
        let s = env.store.open_session(&ids[i]).unwrap();
        let agent = s.spawn_subagent(Some("digger"), json!({})).unwrap();
        agent
            .append(json!({"role": "assistant", "content": format!("burrow of marmot {i}")}))
            .unwrap();
    }
    let all = find(
        &env.store,
        SearchQuery {
            limit: Some(1000),
            ..q("marmot")
        },
    );
    assert_eq!(all.hits.len(), 302);
    let burrows = find(&env.store, q("burrow"));
    let mut sessions: Vec<&str> = burrows.hits.iter().map(|h| h.session_id.as_str()).collect();
    sessions.sort();
    assert_eq!(sessions, [ids[3].as_str(), ids[250].as_str()]);
    assert!(burrows
        .hits
        .iter()
        .all(|h| h.agent_id.as_deref() == Some("digger")));
    assert_eq!(message_ids(&find(&env.store, q("number299"))), ["m299"]);
}

/// Sessions written as plain files, as an older library or another
/// implementation would: no line in the change feed names them.
fn raw_sessions(store: &Store, n: usize, word: &str) -> Vec<String> {
    (0..n)
        .map(|k| {
            let id = format!("0190a4b0-0000-7000-8000-{k:012}");
            let line = json!({"id": format!("raw{k}"), "parentId": null, "role": "user", "content": format!("{word} raw{k}")});
            std::fs::write(store.log_path(&id).unwrap(), format!("{line}\n")).unwrap();
            id
        })
        .collect()
}

/// Let the file times move past the tick of the last change to the store
/// directory: a check made in that tick is followed by another full one
/// (FORMAT.md §23.4).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(150));
}

/// The first query over a store: it makes the cache (its directory in the
/// store's), so the next full check is made again once file times have
/// moved on, and from then on a query is warm.
fn first_query(store: &Store, query: SearchQuery) -> SearchResults {
    let r = find(store, query.clone());
    settle();
    let again = find(store, query);
    assert_eq!(again.hits, r.hits);
    r
}

/// Append a line to a log with `std::fs`, as a writer that writes no feed
/// line would.
fn append_raw(store: &Store, id: &str, message: &str, content: &str) {
    use std::io::Write;
    let line = json!({"id": message, "parentId": null, "role": "user", "content": content});
    std::fs::OpenOptions::new()
        .append(true)
        .open(store.log_path(id).unwrap())
        .unwrap()
        .write_all(format!("{line}\n").as_bytes())
        .unwrap();
}

/// Move the last full check of every cache file `ms` into the past.
fn age_full_check(store: &Store, ms: i64) {
    for file in cache_files(store) {
        let c = rusqlite::Connection::open(&file).unwrap();
        let n = c
            .execute("UPDATE feed SET full_at_ms = full_at_ms - ?1", [ms])
            .unwrap();
        assert_eq!(n, 1, "{}", file.display());
    }
}

#[test]
fn an_append_by_a_live_writer_is_found_by_a_look_at_the_logs_the_feed_named_only() {
    let env = env_with(StoreOptions::default());
    raw_sessions(&env.store, 20, "osprey");
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "osprey live"}))
        .unwrap();
    let feed = std::fs::read_to_string(env.store.dir().join(".sessions-feed")).unwrap();
    assert_eq!(feed, format!("{}\n", s.id()), "the writer named its log");
    let full = first_query(
        &env.store,
        SearchQuery {
            limit: Some(50),
            ..q("osprey")
        },
    );
    assert_eq!(full.hits.len(), 21);
    assert_eq!(full.checked, 21, "the first query checks every log");

    let later = s
        .append(json!({"role": "assistant", "content": "a zebra appears"}))
        .unwrap();
    let r = find(&env.store, q("zebra"));
    assert_eq!(message_ids(&r), [later.id()]);
    assert_eq!(r.checked, 1, "only the log the feed named was looked at");
    let again = find(&env.store, q("zebra"));
    assert_eq!((again.checked, again.indexed_bytes), (1, 0));

    // A writer opened since: its line names the log before its first append.
    let raw = "0190a4b0-0000-7000-8000-000000000003";
    let reopened = env.store.open_session(raw).unwrap();
    let more = reopened
        .append(json!({"role": "user", "content": "a second zebra"}))
        .unwrap();
    let r = find(&env.store, q("zebra"));
    assert_eq!(message_ids(&r).len(), 2);
    assert!(message_ids(&r).contains(&more.id()));
    // A first open may create the session's sidecar directory: then the
    // store directory changed, and the query made a full check.
    assert!(r.checked == 2 || r.checked == 21, "{}", r.checked);
}

#[test]
fn new_and_deleted_sessions_are_seen_at_once() {
    let env = env_with(StoreOptions::default());
    raw_sessions(&env.store, 5, "heron");
    assert_eq!(first_query(&env.store, q("heron")).hits.len(), 5);
    assert!(find(&env.store, q("heron")).checked < 5, "warm");

    let s = env.store.create_session(CreateOptions::default()).unwrap();
    let m = s
        .append(json!({"role": "user", "content": "a grey heron"}))
        .unwrap();
    let r = find(&env.store, q("grey"));
    assert_eq!(message_ids(&r), [m.id()]);
    let id = s.id().to_string();
    s.close().unwrap();
    settle();
    find(&env.store, q("heron"));

    // A deletion writes no feed line: the store directory changed.
    env.store
        .delete_session("0190a4b0-0000-7000-8000-000000000001")
        .unwrap();
    env.store.delete_session(&id).unwrap();
    let r = find(&env.store, q("heron"));
    assert_eq!(r.hits.len(), 4);
    assert!(find(&env.store, q("grey")).hits.is_empty());
}

#[test]
fn an_append_no_feed_line_names_is_found_within_the_bound() {
    let env = env_with(StoreOptions::default());
    let ids = raw_sessions(&env.store, 5, "plover");
    assert_eq!(first_query(&env.store, q("plover")).hits.len(), 5);
    append_raw(&env.store, &ids[2], "late", "a silent plover");
    // Within the bound the append is not looked for...
    let r = find(&env.store, q("silent"));
    assert!(r.hits.is_empty());
    assert_eq!(r.checked, 0);
    // ...and once the last full check is older than it, it is found.
    age_full_check(&env.store, sessionkit::SEARCH_FULL_CHECK_MS);
    let r = find(&env.store, q("silent"));
    assert_eq!(message_ids(&r), ["late"]);
    assert_eq!(r.checked, 5);
    assert_eq!(find(&env.store, q("silent")).checked, 0, "recorded");
}

#[test]
fn a_truncated_or_replaced_feed_makes_a_full_check() {
    let env = env_with(StoreOptions::default());
    let ids = raw_sessions(&env.store, 4, "curlew");
    let s = env.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": "curlew live"}))
        .unwrap();
    let feed = env.store.dir().join(".sessions-feed");
    assert_eq!(first_query(&env.store, q("curlew")).hits.len(), 5);

    append_raw(&env.store, &ids[0], "cut", "curlew after truncation");
    assert!(find(&env.store, q("truncation")).hits.is_empty());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&feed)
        .unwrap()
        .set_len(0)
        .unwrap();
    let r = find(&env.store, q("truncation"));
    assert_eq!(message_ids(&r), ["cut"]);
    assert_eq!(r.checked, 5);

    append_raw(&env.store, &ids[1], "swap", "curlew after replacement");
    assert!(find(&env.store, q("replacement")).hits.is_empty());
    // Replaced by a rename in the store directory would change its time
    // too: make a new file in place of the old one, by another directory.
    let other = tempfile::tempdir().unwrap();
    let tmp = other.path().join("feed");
    std::fs::write(&tmp, b"").unwrap();
    let dir_time = std::fs::metadata(env.store.dir())
        .unwrap()
        .modified()
        .unwrap();
    // Linked, not copied: a copy made after the removal may be given the
    // removed feed's inode number, and an empty feed of the same inode is
    // the same feed to a reader that had read it to its end (offset 0).
    std::fs::remove_file(&feed).unwrap();
    std::fs::hard_link(&tmp, &feed).unwrap();
    let dir = std::fs::File::open(env.store.dir()).unwrap();
    dir.set_modified(dir_time).unwrap();
    let r = find(&env.store, q("replacement"));
    assert_eq!(message_ids(&r), ["swap"]);
    assert_eq!(r.checked, 5);
}
