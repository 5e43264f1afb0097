//! Any bytes as the structure cache of a log (the input split at the first
//! NUL: log, then cache); the views must be those read without a cache.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessionkit::testing::fuzz::FuzzStore;

thread_local! {
    static STORE: FuzzStore = FuzzStore::new();
}

fuzz_target!(|data: &[u8]| {
    let Some(at) = data.iter().position(|&b| b == 0) else {
        return;
    };
    STORE.with(|s| s.structure_cache_bytes(&data[..at], &data[at + 1..]));
});
