//! An index update, `session.update_state(json!({"status": "processing"}))` with
//! `Durability::Always` (one log append + fsync, then the changed entry appended to
//! the index journal, not fsynced: the log holds the change, see FORMAT.md §14 and
//! §10.7; now and then the journal is compacted into a whole index, temp file +
//! rename), against two fsyncs of a small file measured in the same run.
//! Target: the update within 1.2× of the two fsyncs.
//!
//! Also measured, to show where the time goes: the disk work of the first version
//! without sessionkit (append + fdatasync of a log, then temp file + fsync + rename
//! of an index of the same size). Because this machine is noisy, the three are also
//! run interleaved, round by round, and the medians printed; the updates that
//! compacted (the index file replaced) are told apart, to give what a compaction
//! costs and what it adds to an update on average.
//!
//! `cargo bench -p sessionkit --bench index_update`

#[path = "common/mod.rs"]
mod common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use sessionkit::{CreateOptions, Durability, Session};

const RECORD: &[u8] = b"{\"type\":\"state\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"set\":{\"status\":\"processing\"}}\n";

/// Two fsyncs of a small file: append a state-sized record and fsync, twice.
struct TwoFsyncs(File);

impl TwoFsyncs {
    fn new(dir: &Path) -> TwoFsyncs {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("small.jsonl"))
            .expect("small file");
        TwoFsyncs(f)
    }
    fn run(&mut self) {
        for _ in 0..2 {
            self.0.write_all(RECORD).expect("write");
            self.0.sync_all().expect("fsync");
        }
    }
}

/// The disk work of an update without sessionkit: log append + fdatasync, then
/// an index of `index_len` bytes written to a temp file, fsynced and renamed.
struct RawUpdate {
    log: File,
    dir: std::path::PathBuf,
    index: Vec<u8>,
}

impl RawUpdate {
    fn run(&mut self) {
        self.log.write_all(RECORD).expect("write");
        self.log.sync_data().expect("fdatasync");
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).expect("temp");
        tmp.write_all(&self.index).expect("write");
        tmp.as_file().sync_all().expect("fsync");
        tmp.persist(self.dir.join("index.json")).expect("rename");
    }
}

/// A store holding `sessions` sessions (a few turns each), and the last one open
/// for writing with `Durability::Always`.
fn setup(sessions: usize) -> (common::BenchStore, Session, u64) {
    let b = common::BenchStore::new(Durability::Never);
    for i in 0..sessions - 1 {
        let s = b
            .store
            .create_session(CreateOptions::default())
            .expect("create");
        common::fill(&s, 64 << 10, i as u64);
        s.close().expect("close");
    }
    let always = common::open_store_seeded(b.dir.path(), Durability::Always, 43);
    let s = always
        .create_session(CreateOptions::default())
        .expect("create");
    common::fill(&s, 64 << 10, 999);
    s.sync().expect("sync");
    // The index as a whole (the file with its journal applied), as a full
    // rewrite would write it.
    let index_len = always
        .read_index()
        .expect("index")
        .expect("index")
        .index
        .to_bytes()
        .len() as u64;
    (b, s, index_len)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn index_update(c: &mut Criterion) {
    for sessions in [1usize, 50] {
        let (b, s, index_len) = setup(sessions);
        let before = s.fsync_count();
        s.update_state(json!({"status": "processing"}))
            .expect("update");
        let log_fsyncs = s.fsync_count() - before;
        println!(
            "index_update/{sessions}_sessions: index is {index_len} bytes; an update made \
             {log_fsyncs} log fsync(s) (the index journal is written without one)"
        );
        let mut two = TwoFsyncs::new(b.dir.path());
        let mut raw = RawUpdate {
            log: OpenOptions::new()
                .create(true)
                .append(true)
                .open(b.dir.path().join("raw.jsonl"))
                .expect("raw log"),
            dir: b.dir.path().join("raw"),
            index: vec![b' '; index_len as usize],
        };
        std::fs::create_dir_all(&raw.dir).expect("raw dir");

        let mut g = c.benchmark_group(format!("index_update_{sessions}_sessions"));
        g.sample_size(30)
            .measurement_time(Duration::from_secs(6))
            .warm_up_time(Duration::from_secs(1));
        g.bench_function("update_state_always", |bch| {
            bch.iter(|| {
                s.update_state(json!({"status": "processing"}))
                    .expect("update")
            })
        });
        g.bench_function("two_fsyncs", |bch| bch.iter(|| two.run()));
        g.bench_function("raw_append_fsync_plus_atomic_replace", |bch| {
            bch.iter(|| raw.run())
        });
        g.finish();

        // Interleaved rounds: each round runs all three, so a noisy neighbour hits
        // them alike.
        let rounds = 300;
        let (mut tu, mut tt, mut tr) = (Vec::new(), Vec::new(), Vec::new());
        // Update times split by whether the update compacted the journal.
        let (mut appended, mut compacted) = (Vec::new(), Vec::new());
        let index_path = s.store().index_path();
        let index_id = || {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&index_path).map_or(0, |m| m.ino())
        };
        for round in 0..rounds {
            // Rotate which goes first: an fsync right after another one is not the
            // same as one after a pause.
            for k in 0..3 {
                let before = if (round + k) % 3 == 0 { index_id() } else { 0 };
                let t = Instant::now();
                match (round + k) % 3 {
                    0 => drop(
                        s.update_state(json!({"status": "processing"}))
                            .expect("update"),
                    ),
                    1 => two.run(),
                    _ => raw.run(),
                }
                let us = t.elapsed().as_secs_f64() * 1e6;
                [&mut tu, &mut tt, &mut tr][(round + k) % 3].push(us);
                if (round + k) % 3 == 0 {
                    if index_id() == before {
                        &mut appended
                    } else {
                        &mut compacted
                    }
                    .push(us);
                }
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let (au, aa, ac) = (mean(&tu), mean(&appended), mean(&compacted));
        let (mu, mt, mr) = (median(&mut tu), median(&mut tt), median(&mut tr));
        let mean_two = mean(&tt);
        println!(
            "index_update/{sessions}_sessions interleaved x{rounds}: update_state {mu:.0} µs, \
             two fsyncs {mt:.0} µs, raw append+fsync+atomic replace {mr:.0} µs; \
             update/two_fsyncs = {:.2} (target <= 1.2), update/raw = {:.2}",
            mu / mt,
            mu / mr
        );
        println!(
            "index_update/{sessions}_sessions compaction: {} of {} updates compacted (one in \
             {:.1}); mean update {au:.0} µs = {:.2}x the mean two fsyncs ({mean_two:.0} µs); \
             mean append-only update {aa:.0} µs, mean compacting update {ac:.0} µs \
             (median {:.0} µs); compaction adds {:.0} µs to the mean update",
            compacted.len(),
            tu.len(),
            tu.len() as f64 / compacted.len().max(1) as f64,
            au / mean_two,
            median(&mut compacted.clone()),
            au - aa
        );
        drop((s, b));
    }
}

criterion_group!(benches, index_update);
criterion_main!(benches);
