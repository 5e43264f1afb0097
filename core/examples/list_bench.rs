//! Listing at the scale of a heavy user (docs/BENCHMARKS.md, "Listing"): one
//! project of many sessions, and a home of many projects; the listing through
//! the Rust API, its first page, and the floors of the same work measured in
//! the same run.
//!
//! ```text
//! cargo run --release -p sessionkit --example list_bench -- DIR [SESSIONS] [PROJECTS PER_PROJECT]
//! list_bench gen DIR [SESSIONS] [PROJECTS PER_PROJECT]   # write the stores, keep them
//! list_bench time DIR                                    # time the stores gen wrote
//! ```
//!
//! The defaults are 10,000 sessions in one project and 100 projects × 100
//! sessions. Without `gen` or `time`, DIR is made, timed and removed. Each
//! session is a short coding exchange (a prompt, a tool call and its result, a
//! reply of 300 B–1.5 KB), so that its index entry has the size of a real one.
//! The stores are written through the API (`Durability::Never`), every handle
//! kept open until the project is written, so that the index is compacted once
//! rather than at every close.

#[path = "../benches/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{prose, Rng};
use serde_json::json;
use sessionkit::{CreateOptions, Durability, ListOptions, Store};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Rounds of each timing; the median is reported.
const ROUNDS: usize = 11;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, rest) = match args.first().map(String::as_str) {
        Some("gen") | Some("time") => (args[0].clone(), &args[1..]),
        _ => ("all".to_string(), &args[..]),
    };
    let dir = PathBuf::from(
        rest.first()
            .ok_or("usage: list_bench [gen|time] DIR [SESSIONS] [PROJECTS PER_PROJECT]")?,
    );
    let num = |i: usize, default: usize| -> Res<usize> {
        Ok(rest
            .get(i)
            .map(|s| s.parse())
            .transpose()?
            .unwrap_or(default))
    };
    let (sessions, projects, per_project) = (num(1, 10_000)?, num(2, 100)?, num(3, 100)?);
    if mode != "time" {
        std::fs::create_dir_all(&dir)?;
        let t = Instant::now();
        write_project(&dir.join("big"), &dir.join("big/project"), sessions, 1)?;
        for p in 0..projects {
            write_project(
                &dir.join("many"),
                &dir.join(format!("many/p{p:03}")),
                per_project,
                100 + p as u64,
            )?;
        }
        eprintln!(
            "wrote {sessions} sessions in one project and {projects} × {per_project} in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    if mode != "gen" {
        time(&dir)?;
    }
    if mode == "all" {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}

fn options(home: &Path, seed: u64) -> sessionkit::StoreOptions {
    common::options(home, Durability::Never, seed)
}

/// `n` sessions in the project at `root`, home `<base>/home`.
fn write_project(base: &Path, root: &Path, n: usize, seed: u64) -> Res<()> {
    std::fs::create_dir_all(root)?;
    let store = Store::open(root, options(&base.join("home"), seed))?;
    let mut rng = Rng::new(seed);
    let mut open = Vec::with_capacity(n);
    for i in 0..n {
        let s = store.create_session(CreateOptions::default())?;
        let call = format!("call_{i}");
        let len = rng.log_uniform(60.0, 400.0);
        let ask = prose(&mut rng, len);
        let len = rng.log_uniform(300.0, 1500.0);
        let reply = prose(&mut rng, len);
        let len = rng.log_uniform(200.0, 2000.0);
        let result = prose(&mut rng, len);
        s.append_batch(vec![
            json!({"role": "user", "content": ask}),
            json!({"role": "assistant", "content": "Reading the file.",
                "messageParams": {"tool_calls": [{"id": call, "type": "function",
                    "function": {"name": "read_file", "arguments": "{\"path\":\"src/lib.rs\"}"}}]},
                "meta": {"usage": {"input_tokens": 1200 + i, "output_tokens": 40}}}),
            json!({"role": "tool", "content": result, "messageParams": {"tool_call_id": call}}),
            json!({"role": "assistant", "content": reply,
                "meta": {"usage": {"input_tokens": 2400 + i, "output_tokens": 300}}}),
        ])?;
        open.push(s);
    }
    for s in open {
        s.close()?;
    }
    Ok(())
}

/// The median of `ROUNDS` runs of `f`.
fn median(mut f: impl FnMut() -> Res<()>) -> Res<Duration> {
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times[ROUNDS / 2])
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn time(dir: &Path) -> Res<()> {
    let big_home = dir.join("big/home");
    let store = Store::open(dir.join("big/project"), options(&big_home, 1))?;
    let n = store.list_sessions()?.len();
    let index = store.dir().join("sessions-index.json");
    let index_bytes = std::fs::metadata(&index)?.len();
    println!(
        "one project: {n} sessions, index {:.1} MiB",
        index_bytes as f64 / (1 << 20) as f64
    );
    let whole = median(|| {
        store.list_sessions()?;
        Ok(())
    })?;
    let page = median(|| {
        store.list_page(&ListOptions {
            limit: Some(50),
            ..ListOptions::default()
        })?;
        Ok(())
    })?;
    // Floors: what any listing that trusts nothing it has not checked pays.
    let stat_all = median(|| {
        let mut n = 0u64;
        for e in std::fs::read_dir(store.dir())? {
            let e = e?;
            if e.file_name().as_encoded_bytes().ends_with(b".jsonl") {
                n += e.metadata()?.len();
            }
        }
        std::hint::black_box(n);
        Ok(())
    })?;
    let parse_index = median(|| {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&index)?)?;
        std::hint::black_box(v);
        Ok(())
    })?;
    let read_index = median(|| {
        std::hint::black_box(std::fs::read(&index)?);
        Ok(())
    })?;
    let read = median(|| {
        std::hint::black_box(store.read_index()?);
        Ok(())
    })?;
    println!("  read_index (file + journal, parsed)  {}", ms(read));
    println!("  list_sessions (every entry)      {}", ms(whole));
    println!("  list_page (first 50)             {}", ms(page));
    println!("  floor: list the store, stat every log  {}", ms(stat_all));
    println!("  floor: read the index file       {}", ms(read_index));
    println!(
        "  floor: read + parse the index as JSON  {}",
        ms(parse_index)
    );

    let many_home = dir.join("many/home");
    let all_options = options(&many_home, 1);
    let projects = sessionkit::list_all_sessions(&all_options)?;
    let total: usize = projects.iter().map(|p| p.sessions.len()).sum();
    println!("home: {} projects, {total} sessions", projects.len());
    let all = median(|| {
        sessionkit::list_all_sessions(&all_options)?;
        Ok(())
    })?;
    println!("  list_all_sessions                {}", ms(all));
    Ok(())
}
