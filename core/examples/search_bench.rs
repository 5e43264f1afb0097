//! The search benchmark (docs/BENCHMARKS.md, "Search"): generated transcripts
//! across many sessions; the cache's build throughput, a warm query's median
//! latency (after the first query, the freshness check looks only at the
//! logs the change feed names), the update after one append, the cache's size
//! against the logs'; and `rg` over the same logs in the same run, when `rg`
//! is on PATH.
//!
//! `cargo run --release -p sessionkit --example search_bench -- DIR MIB SESSIONS`
//! (DIR is made and removed; the defaults are 256 MiB over 2,000 sessions).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::json;
use sessionkit::{SearchQuery, Store, StoreOptions};

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const COMMON: &[&str] = &[
    "the", "function", "error", "returns", "value", "session", "index", "query", "build", "test",
    "cargo", "struct", "impl", "fn", "let", "match", "Result", "Option", "path", "file", "line",
    "read", "write", "append", "lock", "cache", "token", "message", "tool", "call", "output",
    "compile", "warning", "module", "crate", "trait", "async", "await", "string", "number",
    "config", "server", "client", "request", "response", "and", "to", "of", "in", "is",
];

/// Text of `words` words: half from a small common set, half from a long tail
/// of 50,000 identifiers, and now and then a path or a rare needle.
fn text(r: &mut Rng, words: usize) -> String {
    let mut s = String::with_capacity(words * 8);
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        let x = r.next();
        match x % 1000 {
            0 => s.push_str("src/main.rs"),
            1 => s.push_str("parse_config"),
            _ if x.is_multiple_of(2) => {
                s.push_str(&format!("ident_{}", (x >> 8) % ((x >> 40) % 50_000 + 1)))
            }
            _ => s.push_str(COMMON[((x >> 16) % COMMON.len() as u64) as usize]),
        }
    }
    s
}

/// Seconds the engine alone takes to index the logs' text: each message's
/// content and tool-call arguments, extracted before the clock starts, inserted
/// into FTS5 tables of the cache's tokenizer with the cache's bulk settings,
/// one table in its own database per thread (the sessions dealt out among
/// them), each in one transaction, then merged once. What no build through
/// FTS5 on that many threads can beat.
fn fts5_alone(dir: &Path, store: &Store, ids: &[String], threads: usize) -> f64 {
    let mut texts = vec![Vec::new(); threads];
    for (i, id) in ids.iter().enumerate() {
        let bytes = std::fs::read(store.log_path(id).expect("log path")).expect("read log");
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).expect("a JSON line");
            let mut text = v["content"].as_str().unwrap_or_default().to_string();
            for call in v["messageParams"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                text.push('\n');
                text.push_str(call["function"]["name"].as_str().unwrap_or_default());
                text.push('\n');
                text.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
            }
            texts[i % threads].push(text);
        }
    }
    let index = |k: usize, texts: &[String]| {
        let path = dir.join(format!("engine-alone-{k}.sqlite"));
        let db = rusqlite::Connection::open(&path).expect("probe database");
        db.execute_batch(
            "PRAGMA journal_mode = wal; PRAGMA synchronous = normal;
             CREATE VIRTUAL TABLE t USING fts5(text, content = '', contentless_delete = 1,
               tokenize = \"unicode61 remove_diacritics 2 tokenchars '_'\");
             INSERT INTO t(t, rank) VALUES ('automerge', 0);
             INSERT INTO t(t, rank) VALUES ('hashsize', 16777216);",
        )
        .expect("probe table");
        db.execute_batch("BEGIN").expect("begin");
        {
            let mut insert = db
                .prepare("INSERT INTO t(text) VALUES (?1)")
                .expect("insert");
            for text in texts {
                insert.execute([text]).expect("insert");
            }
        }
        db.execute_batch("COMMIT; INSERT INTO t(t) VALUES ('optimize');")
            .expect("commit");
        drop(db);
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
    };
    let t = Instant::now();
    std::thread::scope(|sc| {
        for (k, part) in texts.iter().enumerate() {
            sc.spawn(move || index(k, part));
        }
    });
    t.elapsed().as_secs_f64()
}

/// The engine's own cost of a warm query for `query`, in milliseconds: in each
/// file of the cache, on a thread of its own and through a connection opened
/// beforehand, FTS5 finding the newest 1,000 matches of the query as one
/// phrase, and (`score`) scoring them with FTS5's own BM25; nothing else (no
/// freshness check, no hit's row or line read, no snippet). The median of 7.
fn engine_query_floor(store_dir: &Path, query: &str, score: bool) -> f64 {
    let files: Vec<std::sync::Mutex<rusqlite::Connection>> =
        std::fs::read_dir(store_dir.join("search"))
            .expect("cache dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "sqlite"))
            .map(|p| {
                let db = rusqlite::Connection::open_with_flags(
                    &p,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )
                .expect("open a cache file");
                std::sync::Mutex::new(db)
            })
            .collect();
    let phrase = format!("\"{}\"", query.replace('"', "\"\""));
    let once = || {
        let t = Instant::now();
        std::thread::scope(|sc| {
            for db in &files {
                let phrase = &phrase;
                sc.spawn(move || {
                    let db = db.lock().expect("a connection");
                    let rank = if score { "bm25(messages)" } else { "0" };
                    let mut st = db
                        .prepare_cached(&format!(
                            "SELECT rowid, {rank} FROM messages WHERE messages MATCH ?1
                             ORDER BY rowid DESC LIMIT 1000"
                        ))
                        .expect("query");
                    let n = st
                        .query_map([phrase], |r| r.get::<_, f64>(1))
                        .expect("query")
                        .count();
                    std::hint::black_box(n)
                });
            }
        });
        t.elapsed().as_secs_f64() * 1e3
    };
    once();
    median((0..7).map(|_| once()).collect())
}

/// Milliseconds of the check that no query seeing every append can skip, at
/// the kernel's own cost: the store directory listed (`getdents`, nothing kept
/// but the names), each log stat'ed and each session directory looked into
/// for `subagents/`, relative to the open store directory, on two threads.
/// The median of 21 rounds.
fn freshness_floor(store_dir: &Path) -> f64 {
    use rustix::fs::{openat, statat, AtFlags, Mode, OFlags, CWD};
    let fd = openat(
        CWD,
        store_dir,
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .expect("store dir");
    let round = || {
        let t = Instant::now();
        let (mut logs, mut dirs) = (Vec::new(), std::collections::HashSet::new());
        for e in rustix::fs::Dir::read_from(&fd).expect("list") {
            let e = e.expect("entry");
            let name = e.file_name().to_bytes();
            match name.strip_suffix(b".jsonl") {
                Some(id) => logs.push((name.to_vec(), id.to_vec())),
                None if e.file_type() == rustix::fs::FileType::Directory => {
                    dirs.insert(name.to_vec());
                }
                None => {}
            }
        }
        let names: Vec<_> = logs
            .into_iter()
            .map(|(log, id)| {
                let dir = dirs.contains(&id);
                (log, id, dir)
            })
            .collect();
        let look = |part: &[(Vec<u8>, Vec<u8>, bool)]| {
            for (log, id, dir) in part {
                let _ = statat(&fd, log.as_slice(), AtFlags::empty());
                if *dir {
                    let mut sub = id.clone();
                    sub.extend_from_slice(b"/subagents");
                    let _ = statat(&fd, sub.as_slice(), AtFlags::empty());
                }
            }
        };
        let (a, b) = names.split_at(names.len() / 2);
        std::thread::scope(|sc| {
            sc.spawn(|| look(b));
            look(a);
        });
        t.elapsed().as_secs_f64() * 1e3
    };
    median((0..21).map(|_| round()).collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(args.get(1).map_or("search-bench", String::as_str)).to_path_buf();
    let mib: u64 = args.get(2).map_or(256, |a| a.parse().expect("MIB"));
    let sessions: u64 = args.get(3).map_or(2000, |a| a.parse().expect("SESSIONS"));
    let (home, project) = (dir.join("home"), dir.join("project"));
    std::fs::create_dir_all(&project).expect("project dir");
    let options = StoreOptions {
        home: Some(home),
        ..StoreOptions::default()
    };
    let store = Store::open(&project, options).expect("store");

    // Logs written directly, one message a line (FORMAT.md §6: a line without
    // `type` is a message): the store's own append would only be slower.
    let per_session = (mib << 20) / sessions;
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0u64;
    let mut ids = Vec::new();
    for s in 0..sessions {
        let id = format!("{:08x}-0000-7000-8000-{:012x}", s, s);
        let path = store.log_path(&id).expect("log path");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("log"));
        let (mut written, mut n, mut parent) = (0u64, 0u64, serde_json::Value::Null);
        while written < per_session {
            let mid = format!("m{n}");
            let ts = format!("2026-01-{:02}T10:00:00.000Z", 1 + (n % 28));
            let line = match n % 3 {
                0 => {
                    json!({"id": mid, "parentId": parent, "role": "user", "timestamp": ts, "content": text(&mut r, 40)})
                }
                1 => {
                    json!({"id": mid, "parentId": parent, "role": "assistant", "timestamp": ts, "content": text(&mut r, 80),
                    "messageParams": {"tool_calls": [{"id": format!("c{n}"), "type": "function",
                        "function": {"name": "read_file", "arguments": json!({"path": "src/lib.rs"}).to_string()}}]}})
                }
                _ => {
                    json!({"id": mid, "parentId": parent, "role": "tool", "timestamp": ts, "content": text(&mut r, 200),
                    "messageParams": {"tool_call_id": format!("c{}", n - 1)}})
                }
            };
            let bytes = format!("{line}\n");
            out.write_all(bytes.as_bytes()).expect("write");
            written += bytes.len() as u64;
            parent = json!(mid);
            n += 1;
        }
        out.flush().expect("flush");
        total += written;
        ids.push(id);
    }
    // One rare needle, in one message of one session.
    let needle_session = store
        .open_session(&ids[sessions as usize / 2])
        .expect("open");
    needle_session
        .append(json!({"role": "assistant", "content": "the bug is in frobnicate_widget_cache"}))
        .expect("append");
    let q = |text: &str| SearchQuery {
        text: text.into(),
        ..SearchQuery::default()
    };
    let logs = store.dir().to_path_buf();
    println!(
        "logs: {:.1} MiB in {} sessions",
        total as f64 / (1 << 20) as f64,
        sessions
    );

    // The floors: what reading the logs costs before any indexing. First every
    // line parsed as JSON (what the cache's reader must at least do), then
    // the core's own reader folding each session into its views.
    let t = Instant::now();
    let mut parsed = 0u64;
    for id in &ids {
        let bytes = std::fs::read(store.log_path(id).expect("log path")).expect("read log");
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).expect("a JSON line");
            parsed += u64::from(v.is_object());
        }
    }
    let parse_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for id in &ids {
        store.read_session(id).expect("read session");
    }
    let read_s = t.elapsed().as_secs_f64();
    println!(
        "floor: JSON parse of every line {:.1} MB/s ({parsed} lines); read_session of every log {:.1} MB/s",
        total as f64 / 1e6 / parse_s,
        total as f64 / 1e6 / read_s
    );
    for threads in [1, 2] {
        let engine = fts5_alone(&dir, &store, &ids, threads);
        println!(
            "engine alone on {threads} thread(s): FTS5 indexing the same text, no reading or parsing: {:.1} MB/s of log",
            total as f64 / 1e6 / engine
        );
    }

    let t = Instant::now();
    let built = store.search(&q("frobnicate_widget_cache")).expect("build");
    let build_s = t.elapsed().as_secs_f64();
    assert_eq!(built.hits.len(), 1);
    println!(
        "build: {:.1} MiB of log in {:.2} s = {:.1} MB/s",
        built.indexed_bytes as f64 / (1 << 20) as f64,
        build_s,
        built.indexed_bytes as f64 / 1e6 / build_s
    );

    // The build made the cache's files in the store directory's tick: the
    // next query checks every log once more, then queries are warm.
    std::thread::sleep(std::time::Duration::from_millis(150));
    let t = Instant::now();
    let full = store
        .search(&q("frobnicate_widget_cache"))
        .expect("full check");
    println!(
        "query after a full check (list the store, stat every log): {:.2} ms, {} logs looked at",
        t.elapsed().as_secs_f64() * 1e3,
        full.checked
    );
    let has_rg = Command::new("rg").arg("--version").output().is_ok();
    if !has_rg {
        println!("rg: not on PATH, its figures are skipped");
    }
    let floor = freshness_floor(store.dir());
    println!(
        "freshness check at the kernel's cost (list the store, stat every log, look for subagents; two threads): {floor:.2} ms"
    );
    for (name, query, rg_pattern) in [
        (
            "rare word",
            "frobnicate_widget_cache",
            "frobnicate_widget_cache",
        ),
        ("path (~1 in 1000 words)", "src/main.rs", "src/main\\.rs"),
        (
            "identifier (~1 in 1000 words)",
            "parse_config",
            "parse_config",
        ),
    ] {
        let mut checked = 0;
        let ours = median(
            (0..7)
                .map(|_| {
                    let t = Instant::now();
                    checked = store.search(&q(query)).expect("query").checked;
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect(),
        );
        let (matching, scored) = (
            engine_query_floor(store.dir(), query, false),
            engine_query_floor(store.dir(), query, true),
        );
        println!(
            "  the engine alone for {name}: {matching:.2} ms finding the newest 1,000 matches in each file, \
             {scored:.2} ms with FTS5's bm25 scoring them"
        );
        if !has_rg {
            println!("warm query, {name}: {ours:.2} ms, {checked} logs looked at");
            continue;
        }
        // `rg -l` (the files that match: it stops reading a file at its
        // first match) and `rg` (every matching line, as a user reads them).
        let rg_with = |list: bool| {
            median(
                (0..5)
                    .map(|_| {
                        let t = Instant::now();
                        let out = Command::new("rg")
                            .args(list.then_some("-l"))
                            .args(["--no-messages", rg_pattern])
                            .arg(&logs)
                            .output()
                            .expect("run rg");
                        assert!(out.status.success(), "rg found nothing");
                        t.elapsed().as_secs_f64() * 1e3
                    })
                    .collect(),
            )
        };
        let (rg, rg_lines) = (rg_with(true), rg_with(false));
        println!(
            "warm query, {name}: {ours:.2} ms, {checked} logs looked at; rg -l: {rg:.1} ms, {:.1}x; rg: {rg_lines:.1} ms, {:.1}x \
             (the freshness check alone: {:.1}x rg)",
            rg / ours,
            rg_lines / ours,
            rg_lines / floor
        );
    }

    let log = store.log_path(needle_session.id()).expect("log path");
    let size = |p: &Path| std::fs::metadata(p).expect("log").len();
    let before = size(&log);
    needle_session
        .append(json!({"role": "user", "content": "now check quux_after_append too"}))
        .expect("append");
    let line = size(&log) - before;
    let t = Instant::now();
    let after = store.search(&q("quux_after_append")).expect("incremental");
    println!(
        "update after one append: {:.2} ms, {} bytes read (the appended line: {line}), {} logs looked at, {} hit",
        t.elapsed().as_secs_f64() * 1e3,
        after.indexed_bytes,
        after.checked,
        after.hits.len()
    );
    // Every file of the cache, with what SQLite keeps beside each.
    let cache: u64 = std::fs::read_dir(store.dir().join("search"))
        .expect("cache dir")
        .map(|e| e.expect("entry").metadata().expect("cache file").len())
        .sum();
    println!(
        "cache size: {:.1} MiB, {:.2}x the logs",
        cache as f64 / (1 << 20) as f64,
        cache as f64 / total as f64
    );
    drop(needle_session);
    std::fs::remove_dir_all(&dir).expect("remove the generated data");
}
