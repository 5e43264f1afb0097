//! Appends of the bench's ≈4 KB messages one at a time, `Durability::Never`, in
//! one process: for profiling an append with instruction counts, which stay put
//! on a busy machine where times do not.
//!
//! ```text
//! cargo build --release -p sessionkit --example append_probe
//! valgrind --tool=callgrind --dump-instr=no --toggle-collect='append_probe::append_all' \
//!     target/release/examples/append_probe 2000
//! ```
//!
//! Only `append_all` (the appends themselves) is counted: divide the total by
//! the number of appends. Without valgrind it prints the appends per second.

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;
use sessionkit::{CreateOptions, Durability, Session};

#[inline(never)]
fn append_all(s: &Session, msgs: Vec<Value>) {
    for m in msgs {
        black_box(s.append(m).expect("append"));
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("number of appends"))
        .unwrap_or(10_000);
    let msgs = common::fixed_size_messages(n, 4096, 7);
    let b = common::BenchStore::new(Durability::Never);
    let s = b
        .store
        .create_session(CreateOptions::default())
        .expect("create");
    let t = Instant::now();
    append_all(&s, msgs);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{n} appends in {:.1} ms: {:.0}/s",
        secs * 1e3,
        n as f64 / secs
    );
}
