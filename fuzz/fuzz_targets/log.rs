//! Any bytes as a session log: read, every view, resumed, indexed, opened.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessionkit::testing::fuzz::FuzzStore;

thread_local! {
    static STORE: FuzzStore = FuzzStore::new();
}

fuzz_target!(|data: &[u8]| {
    STORE.with(|s| s.log_bytes(data));
});
