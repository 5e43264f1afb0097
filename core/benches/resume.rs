//! Resume (`read_session(id)` + `active_path()`) of 1, 50 and 200 MiB sessions,
//! against `std::fs::read` of the same file in the same group.
//! Target: resume ≤ 2.5× the raw read. Both run with the file in the page cache.
//!
//! `cargo bench -p sessionkit --bench resume`; `SESSIONKIT_BENCH_MIB=1,50` picks sizes.

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Duration;

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
        let expected = bench
            .store
            .read_session(&w.id)
            .and_then(|v| v.active_path())
            .expect("resume")
            .len();
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
    }
}

criterion_group!(benches, resume);
criterion_main!(benches);
