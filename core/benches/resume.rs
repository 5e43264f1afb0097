//! Resume (`read_session(id)` + `active_path()`) of 1, 50 and 200 MiB sessions,
//! against `std::fs::read` of the same file in the same group.
//! Target: resume ≤ 2.5× the raw read. The interleaved rounds also time the
//! model view (`Store::model_view`, the backward read), whose ratio to the read
//! should not grow with the session (`SESSIONKIT_BENCH_MIB=50,1024`). Both run with the file in the page cache.
//! After the first resume the session has a structure cache (FORMAT.md §5.1),
//! so these are resumes through it; the first, which parses, is timed alone.
//!
//! Also timed, interleaved: the floor of a resume that checks what it reads,
//! the passes alone over the file (read 256 KiB at a time into one buffer,
//! split lines, check UTF-8, XXH3-128), with nothing folded or kept.
//!
//! `cargo bench -p sessionkit --bench resume`; `SESSIONKIT_BENCH_MIB=1,50` picks sizes.

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use sessionkit::Durability;

fn sizes() -> Vec<u64> {
    std::env::var("SESSIONKIT_BENCH_MIB")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 50, 200])
}

fn resume(c: &mut Criterion) {
    for mib in sizes() {
        let bench = common::BenchStore::new(Durability::Never);
        let w = common::write_session(&bench.store, mib * common::MIB, 1);
        let t = Instant::now();
        let expected = bench
            .store
            .read_session(&w.id)
            .and_then(|v| v.active_path())
            .expect("resume")
            .len();
        let first = t.elapsed().as_secs_f64() * 1e3;
        assert!(expected > 0);

        let mut g = c.benchmark_group(format!("resume_{mib}MiB"));
        g.throughput(Throughput::Bytes(w.bytes));
        if mib >= 10 {
            // Each iteration is tens to hundreds of milliseconds: flat sampling and
            // ten samples keep the whole bench to a few minutes.
            g.sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(if mib >= 100 { 8 } else { 4 }));
        } else {
            g.sample_size(30)
                .measurement_time(Duration::from_secs(3))
                .warm_up_time(Duration::from_secs(1));
        }
        g.bench_function("fs_read", |b| {
            b.iter(|| black_box(std::fs::read(&w.path).expect("read")).len())
        });
        g.bench_function("sessionkit", |b| {
            b.iter(|| {
                let view = bench.store.read_session(&w.id).expect("read_session");
                let path = view.active_path().expect("active_path");
                assert_eq!(path.len(), expected);
                black_box(path)
            })
        });
        g.finish();

        // The same two, interleaved round by round so that a noisy neighbour hits
        // both alike: the ratio the target is about.
        let rounds = if mib >= 100 {
            7
        } else if mib >= 10 {
            11
        } else {
            51
        };
        let (mut raw, mut resume, mut floor, mut model) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let opts = sessionkit::ModelViewOptions::default();
        for _ in 0..rounds {
            let t = Instant::now();
            black_box(std::fs::read(&w.path).expect("read"));
            raw.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            black_box(checked_read(&w.path));
            floor.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let view = bench.store.read_session(&w.id).expect("read_session");
            black_box(view.active_path().expect("active_path"));
            drop(view);
            resume.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let view = bench.store.model_view(&w.id, &opts).expect("model_view");
            assert!(!view.is_empty());
            drop(black_box(view));
            model.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (raw, resume, floor) = (median(&mut raw), median(&mut resume), median(&mut floor));
        let model = median(&mut model);
        println!(
            "resume_{mib}MiB interleaved x{rounds} ({} bytes, {expected} messages): fs_read {raw:.3} ms, \
             sessionkit {resume:.3} ms, ratio {:.2} (target <= 2.5); checked-read floor {floor:.3} ms \
             ({:.2}x fs_read); first resume, which parses and writes the cache, {first:.3} ms ({:.2}x); \
             model view {model:.3} ms ({:.2}x fs_read)",
            w.bytes,
            resume / raw,
            floor / raw,
            first / raw,
            model / raw
        );
    }
}

/// The passes any resume that checks what it reads makes over the file: read
/// into a reused buffer, check UTF-8, hash, find the lines. Returns the line
/// count and hash, so nothing is optimised away.
fn checked_read(path: &std::path::Path) -> (usize, u128) {
    let mut lines = 0;
    let hash = common::checked_pass(path, 256 << 10, |b| {
        lines += memchr::memchr_iter(b'\n', b).count();
    });
    (lines, hash)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

criterion_group!(benches, resume);
criterion_main!(benches);
