//! Issue "Compaction, model view, resume-at-message and fork":
//! - the model view of a 200 MiB session whose first 95% is compacted, against the
//!   model view of a 10 MiB session with no compaction (target ≤ 1.5×);
//! - fork of a 50 MiB session at its last message, against copying its bytes
//!   with `std::fs::copy` (target ≤ 1.5×). Also timed: the floor of a fork that
//!   checks what it copies, the passes alone (read 1 MiB at a time, check UTF-8,
//!   XXH3-128, find the session ids, write to a new file), nothing folded.
//!
//! `cargo bench -p sessionkit --bench compacted_resume`;
//! `SESSIONKIT_BENCH_SCALE=0.1` shrinks every size (for a quick look).

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use serde_json::json;
use sessionkit::{CreateOptions, Durability, ForkOptions, ModelViewOptions};

fn scale() -> f64 {
    std::env::var("SESSIONKIT_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

fn mib(n: f64) -> u64 {
    (n * scale() * common::MIB as f64) as u64
}

fn flat(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
}

fn resume_compacted(c: &mut Criterion) {
    let bench = common::BenchStore::new(Durability::Never);
    let store = &bench.store;

    // 190 MiB of history, compacted down to its last turn, then 10 MiB more.
    let big = store
        .create_session(CreateOptions::default())
        .expect("create");
    common::fill(&big, mib(190.0), 1);
    let path: Vec<serde_json::Value> = big
        .active_path()
        .expect("path")
        .iter()
        .map(|m| m.value())
        .collect();
    // Cut before the last user message, so no tool call is split from its result.
    let cut = path
        .iter()
        .rposition(|m| m["role"] == "user")
        .expect("a user message");
    let replaces: Vec<String> = path[..cut]
        .iter()
        .map(|m| m["id"].as_str().unwrap_or_default().to_string())
        .collect();
    drop(path);
    big.apply_compaction(&replaces, json!("Summary of the first 95% of the session."))
        .expect("compact");
    let target = std::fs::metadata(big.path()).expect("len").len() + mib(10.0);
    common::fill(&big, target, 2);
    let big_id = big.id().to_string();
    big.close().expect("close");

    let small = common::write_session(store, mib(10.0), 3);

    let opts = ModelViewOptions::default();
    let big_len = store.model_view(&big_id, &opts).expect("model view").len();
    assert!(big_len > 2);
    let mut g = c.benchmark_group("model_view");
    flat(&mut g);
    g.bench_function("10MiB_uncompacted", |b| {
        b.iter(|| black_box(store.model_view(&small.id, &opts).expect("mv")).len())
    });
    g.bench_function("200MiB_95pct_compacted", |b| {
        b.iter(|| black_box(store.model_view(&big_id, &opts).expect("mv")).len())
    });
    g.finish();
}

fn fork(c: &mut Criterion) {
    let bench = common::BenchStore::new(Durability::Never);
    let store = &bench.store;
    let src = common::write_session(store, mib(50.0), 4);
    let copy_to = bench.dir.path().join("copy.jsonl");
    let mut g = c.benchmark_group("fork_50MiB");
    flat(&mut g);
    // Each copy and fork makes a new file, as a fork does; removing it again
    // is not timed.
    let remove_copy = || std::fs::remove_file(&copy_to).expect("remove copy");
    g.bench_function("fs_copy", |b| {
        b.iter_custom(|iters| {
            timed_undone(
                iters,
                || std::fs::copy(&src.path, &copy_to).expect("copy"),
                |_| remove_copy(),
            )
        })
    });
    g.bench_function("checked_copy_floor", |b| {
        b.iter_custom(|iters| {
            timed_undone(
                iters,
                || checked_copy(&src.path, &copy_to, &src.id),
                |_| remove_copy(),
            )
        })
    });
    g.bench_function("fork_session", |b| {
        b.iter_custom(|iters| {
            timed_undone(
                iters,
                || {
                    store
                        .fork_session(&src.id, ForkOptions::default())
                        .expect("fork")
                },
                |f| {
                    let id = f.id().to_string();
                    drop(f);
                    store.delete_session(&id).expect("delete fork");
                },
            )
        })
    });
    g.finish();
}

/// The time of `iters` runs of `run`, each followed, untimed, by `undo` of what
/// it made.
fn timed_undone<T>(iters: u64, mut run: impl FnMut() -> T, mut undo: impl FnMut(T)) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let t = std::time::Instant::now();
        let made = black_box(run());
        total += t.elapsed();
        undo(made);
    }
    total
}

/// Copy `from` to a new file `to` making the passes a fork that checks its
/// source cannot avoid; returns how many session ids it found, and the hash.
fn checked_copy(from: &std::path::Path, to: &std::path::Path, id: &str) -> (usize, u128) {
    use std::io::Write;
    let needle = format!("\"sessionId\":\"{id}\"");
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut out = std::fs::File::create(to).expect("create");
    let mut ids = 0;
    let hash = common::checked_pass(from, 1 << 20, |b| {
        ids += finder.find_iter(b).count();
        out.write_all(b).expect("write");
    });
    (ids, hash)
}

criterion_group!(benches, resume_compacted, fork);
criterion_main!(benches);
