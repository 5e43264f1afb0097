//! Any bytes as the sessions index and its journal (split at the first NUL).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessionkit::testing::fuzz::FuzzStore;

thread_local! {
    static STORE: FuzzStore = FuzzStore::new();
}

fuzz_target!(|data: &[u8]| {
    let (index, journal) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    STORE.with(|s| s.index_bytes(index, journal));
});
