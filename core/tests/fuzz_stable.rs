//! The stable, property-based form of the fuzz targets in `fuzz/`: the log
//! reader with every view, the index with its journal, and the structure
//! cache, fed the fixture corpus with random damage (bytes flipped, inserted
//! and cut, lines repeated) and arbitrary bytes. Any input gives a result or a
//! typed error, never a panic; a structure cache never changes what a log
//! reads as; no input gives an internal error, and reading writes nothing
//! (`sessionkit::testing::fuzz`). `PROPTEST_CASES` sets the number of inputs
//! per target (default 128 here); the long form is `cargo fuzz`
//! (fuzz/README.md). Each test prints its random seed (shown with a failure):
//! `PROPTEST_RNG_SEED=<seed> cargo test -p sessionkit --test fuzz_stable
//! <test>` reruns the same inputs.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use sessionkit::testing::fuzz::FuzzStore;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// Every log of the fixture corpus and of the golden store: the seeds.
fn seed_logs() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in [
        fixtures().join("logs"),
        fixtures().join("golden/home/projects/-"),
    ] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|d| d.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        paths.sort();
        out.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
    }
    assert!(out.len() >= 20, "the fixture logs are missing");
    out
}

/// A valid log past the size from which the library keeps a structure cache
/// (128 KiB), so that the cache seed is a real one.
fn big_log() -> Vec<u8> {
    let mut out = String::from(
        "{\"type\":\"session\",\"version\":1,\"id\":\"fuzzed-session\",\"createdAt\":\"2026-01-01T00:00:00.000Z\"}\n",
    );
    let mut parent = "null".to_string();
    for i in 0..1500 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        out.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"m{i}\",\"parentId\":{parent},\"role\":\"{role}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"content\":\"message {i} {}\"}}\n",
            "x".repeat(60)
        ));
        parent = format!("\"m{i}\"");
    }
    out.into_bytes()
}

fn golden_index() -> Vec<u8> {
    std::fs::read(fixtures().join("golden/home/projects/-/sessions-index.json")).unwrap()
}

#[derive(Debug, Clone)]
enum Damage {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Cut(usize, usize),
    RepeatLine(usize),
    Truncate(usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Damage::Flip(at, b)),
        (
            any::<usize>(),
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 1..8),
                Just(b"\n".to_vec()),
                Just(b"\0\0\0".to_vec()),
                Just(b"{\"type\":\"message\",\"id\":\"x\",\"parentId\":\"x\"}\n".to_vec()),
                Just(b"\"\\ud800\"".to_vec()),
                Just(b"[[[[[[[[[[".to_vec()),
            ]
        )
            .prop_map(|(at, bytes)| Damage::Insert(at, bytes)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Damage::Cut(at, n)),
        any::<usize>().prop_map(Damage::RepeatLine),
        any::<usize>().prop_map(Damage::Truncate),
    ]
}

fn apply(mut bytes: Vec<u8>, damages: &[Damage]) -> Vec<u8> {
    for d in damages {
        let n = bytes.len();
        match d {
            Damage::Flip(at, b) if n > 0 => bytes[at % n] ^= b | 1,
            Damage::Insert(at, ins) => {
                let at = at % (n + 1);
                bytes.splice(at..at, ins.iter().copied());
            }
            Damage::Cut(at, len) if n > 0 => {
                let at = at % n;
                bytes.drain(at..(at + len).min(n));
            }
            Damage::RepeatLine(k) => {
                let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
                if !lines.is_empty() {
                    let line = lines[k % lines.len()].to_vec();
                    bytes.extend_from_slice(&line);
                }
            }
            Damage::Truncate(at) if n > 0 => bytes.truncate(at % n),
            _ => {}
        }
    }
    bytes
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(128),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(sessionkit::testing::proptest_seed()),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn damaged_logs_read_without_panicking(
        seed in any::<prop::sample::Index>(),
        damages in proptest::collection::vec(damage(), 0..6),
    ) {
        let logs = seed_logs();
        let bytes = apply(seed.get(&logs).clone(), &damages);
        FuzzStore::new().log_bytes(&bytes);
    }

    #[test]
    fn arbitrary_bytes_read_as_a_log(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        FuzzStore::new().log_bytes(&bytes);
    }

    #[test]
    fn damaged_indexes_and_journals_list_without_panicking(
        index_damage in proptest::collection::vec(damage(), 0..4),
        journal in proptest::collection::vec(
            prop_oneof![
                Just(b"{\"entry\":{\"id\":\"fuzzed-session\",\"title\":\"t\"}}\n".to_vec()),
                Just(b"{\"remove\":\"fuzzed-session\"}\n".to_vec()),
                Just(b"{\"entry\":{}}\n".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..40),
            ],
            0..5,
        ),
    ) {
        let index = apply(golden_index(), &index_damage);
        FuzzStore::new().index_bytes(&index, &journal.concat());
    }

    #[test]
    fn a_damaged_structure_cache_never_changes_the_views(
        log_damages in proptest::collection::vec(damage(), 0..2),
        damages in proptest::collection::vec(damage(), 1..6),
    ) {
        let store = FuzzStore::new();
        let log = big_log();
        let cache = store.structure_cache_of(&log);
        prop_assert!(cache.len() > 16, "the library wrote no structure cache to damage");
        // The cache of one log against that log, or against a damaged copy of it.
        store.structure_cache_bytes(&apply(log, &log_damages), &apply(cache, &damages));
    }
}
