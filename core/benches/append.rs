//! Appends.
//!
//! - `append_never`: 10,000 messages of ≈4 KB appended one at a time with
//!   `Durability::Never` (target ≥ 125,000 appends/s), plus the same with the mixed
//!   transcript (mean ≈4 KB, a few 20–200 KB tool results), and the 4 KB appends
//!   through a shared writer (`Store::open_shared`: the lock taken and let go
//!   around each append; target within 1.5× of the exclusive handle).
//! - `append_always`: one append and one batch of 100 with `Durability::Always`.
//!   Before timing, `fsync_count()` is checked: exactly one fsync per append or
//!   batch, and concurrent appends never more than one each (group commit).
//!
//! `cargo bench -p sessionkit --bench append`

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use serde_json::Value;
use sessionkit::{CreateOptions, Durability, Session};

const N: usize = 10_000;

fn new_session(d: Durability) -> (common::BenchStore, Session) {
    let b = common::BenchStore::new(d);
    let s = b
        .store
        .create_session(CreateOptions::default())
        .expect("create");
    (b, s)
}

/// [`new_session`] reopened as a shared writer.
fn new_shared_session(d: Durability) -> (common::BenchStore, Session) {
    let (b, s) = new_session(d);
    let id = s.id().to_owned();
    s.close().expect("close");
    let s = b.store.open_shared(&id).expect("open shared");
    (b, s)
}

fn append_never(c: &mut Criterion) {
    let fixed = common::fixed_size_messages(N, 4096, 7);
    let mixed: Vec<Value> = common::Transcript::new(3).take(N).collect();
    let mut g = c.benchmark_group("append_never");
    // Each iteration is 10,000 appends (~0.2 s) plus an untimed setup: flat
    // sampling keeps the group to about half a minute.
    g.throughput(Throughput::Elements(N as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(6))
        .warm_up_time(Duration::from_secs(1));
    type Open = fn(Durability) -> (common::BenchStore, Session);
    let runs: [(&str, &Vec<Value>, Open); 3] = [
        ("10k_x_4KB", &fixed, new_session),
        ("10k_mixed", &mixed, new_session),
        ("10k_x_4KB_shared", &fixed, new_shared_session),
    ];
    for (name, msgs, open) in runs {
        g.bench_function(name, |b| {
            b.iter_batched(
                || (open(Durability::Never), msgs.clone()),
                |((dir, s), msgs)| {
                    for m in msgs {
                        black_box(s.append(m).expect("append"));
                    }
                    // Returned so that the drop (an index flush, the temp dir) is
                    // not timed.
                    (dir, s)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
    // The bytes per append, for the write-up.
    let (dir, s) = new_session(Durability::Never);
    let before = std::fs::metadata(s.path()).expect("len").len();
    for m in fixed.iter().take(1000) {
        s.append(m.clone()).expect("append");
    }
    let after = std::fs::metadata(s.path()).expect("len").len();
    println!(
        "append_never/10k_x_4KB: {} bytes per line on average",
        (after - before) / 1000
    );
    drop((s, dir));
}

/// fsync counts under `Durability::Always`; panics if any append or batch costs
/// more than one fsync.
fn verify_fsyncs(msgs: &[Value]) {
    let (dir, s) = new_session(Durability::Always);
    let base = s.fsync_count();
    for m in msgs.iter().take(50) {
        s.append(m.clone()).expect("append");
    }
    let singles = s.fsync_count() - base;
    assert_eq!(singles, 50, "50 single appends made {singles} fsyncs");
    let base = s.fsync_count();
    for _ in 0..5 {
        s.append_batch(msgs[..100].to_vec()).expect("batch");
    }
    let batches = s.fsync_count() - base;
    assert_eq!(batches, 5, "5 batches of 100 made {batches} fsyncs");
    // Four threads appending at once share fsyncs: never more than one each.
    let base = s.fsync_count();
    std::thread::scope(|sc| {
        for t in 0..4 {
            let s = &s;
            sc.spawn(move || {
                for m in msgs.iter().skip(t * 50).take(50) {
                    s.append(m.clone()).expect("append");
                }
            });
        }
    });
    let concurrent = s.fsync_count() - base;
    assert!(
        concurrent <= 200,
        "200 concurrent appends made {concurrent} fsyncs"
    );
    println!(
        "append_always fsyncs: 50 appends -> {singles}, 5 batches of 100 -> {batches}, \
         200 appends from 4 threads -> {concurrent}"
    );
    drop((s, dir));
}

fn append_always(c: &mut Criterion) {
    let msgs = common::fixed_size_messages(1000, 4096, 11);
    verify_fsyncs(&msgs);
    let mut g = c.benchmark_group("append_always");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    let (dir, s) = new_session(Durability::Always);
    g.bench_function("one_4KB", |b| {
        b.iter_custom(|iters| {
            let batch: Vec<Value> = (0..iters as usize)
                .map(|i| msgs[i % msgs.len()].clone())
                .collect();
            let before = s.fsync_count();
            let t = Instant::now();
            for m in batch {
                black_box(s.append(m).expect("append"));
            }
            let el = t.elapsed();
            assert_eq!(s.fsync_count() - before, iters, "one fsync per append");
            el
        })
    });
    g.throughput(Throughput::Elements(100));
    g.bench_function("batch_100x4KB", |b| {
        b.iter_custom(|iters| {
            let batches: Vec<Vec<Value>> = (0..iters as usize)
                .map(|i| msgs[(i % 9) * 100..(i % 9) * 100 + 100].to_vec())
                .collect();
            let before = s.fsync_count();
            let t = Instant::now();
            for b in batches {
                black_box(s.append_batch(b).expect("batch"));
            }
            let el = t.elapsed();
            assert_eq!(s.fsync_count() - before, iters, "one fsync per batch");
            el
        })
    });
    // For scale: the same bytes appended and fdatasync'ed without sessionkit.
    let line = {
        let mut l = serde_json::to_vec(&msgs[0]).expect("json");
        l.push(b'\n');
        l
    };
    let mut raw = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.dir.path().join("raw.jsonl"))
        .expect("raw log");
    g.throughput(Throughput::Elements(1));
    g.bench_function("raw_write_fdatasync_4KB", |b| {
        b.iter(|| {
            raw.write_all(&line).expect("write");
            raw.sync_data().expect("fdatasync");
        })
    });
    g.finish();

    // Interleaved, so that the disk's mood hits both alike: an append with
    // `Durability::Always` against the raw write + fdatasync of the same bytes.
    let rounds = 200;
    let (mut ta, mut tr) = (Vec::new(), Vec::new());
    for i in 0..rounds {
        let mut m = Some(msgs[i % msgs.len()].clone());
        // Alternate which goes first: an fsync right after another one is not the
        // same as one after a pause.
        for which in [i % 2, 1 - i % 2] {
            let t = Instant::now();
            if which == 0 {
                let m = m.take().expect("one append per round");
                black_box(s.append(m).expect("append"));
            } else {
                raw.write_all(&line).expect("write");
                raw.sync_data().expect("fdatasync");
            }
            let us = t.elapsed().as_secs_f64() * 1e6;
            if which == 0 {
                ta.push(us)
            } else {
                tr.push(us)
            }
        }
    }
    let (ma, mr) = (median(&mut ta), median(&mut tr));
    println!(
        "append_always interleaved x{rounds}: append {ma:.0} µs, raw write+fdatasync {mr:.0} µs, \
         ratio {:.2}",
        ma / mr
    );
    drop((s, dir));
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

criterion_group!(benches, append_never, append_always);
criterion_main!(benches);
