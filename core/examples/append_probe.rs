//! Appends of the bench's ≈4 KB messages one at a time, `Durability::Never`, in
//! one process: for profiling an append with instruction counts, which stay put
//! on a busy machine where times do not.
//!
//! ```text
//! cargo build --release -p sessionkit --example append_probe
//! valgrind --tool=callgrind --dump-instr=no --toggle-collect='append_probe::append_all' \
//!     target/release/examples/append_probe 2000 [mixed]
//! ```
//!
//! `mixed` appends the bench's mixed transcript instead of the ≈4 KB messages;
//! `system` as a third argument takes ids and times from the system clock and
//! random source, as hosts do, instead of the bench's reproducible ones.
//!
//! Only `append_all` (the appends themselves) is counted: divide the total by
//! the number of appends. Without valgrind it prints the appends per second and
//! the CPU time an append took in user space and in the kernel (`getrusage`),
//! which a busy machine disturbs less than the elapsed time.

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;
use sessionkit::{CreateOptions, Durability, Session, Store};

#[inline(never)]
fn append_all(s: &Session, msgs: Vec<Value>) {
    for m in msgs {
        black_box(s.append(m).expect("append"));
    }
}

/// CPU time of this process so far, user and system, in microseconds.
fn cpu_us() -> (f64, f64) {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is valid.
    let u = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr());
        u.assume_init()
    };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    (us(u.ru_utime), us(u.ru_stime))
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("number of appends"))
        .unwrap_or(10_000);
    let msgs: Vec<Value> = match std::env::args().nth(2).as_deref() {
        Some("mixed") => common::Transcript::new(3).take(n).collect(),
        _ => common::fixed_size_messages(n, 4096, 7),
    };
    let b = common::BenchStore::new(Durability::Never);
    let store = match std::env::args().nth(3).as_deref() {
        Some("system") => {
            let mut o = common::options(&b.dir.path().join("home"), Durability::Never, 0);
            o.deterministic = None;
            Store::open(b.dir.path().join("project"), o).expect("open store")
        }
        _ => b.store.clone(),
    };
    let s = store
        .create_session(CreateOptions::default())
        .expect("create");
    let (u0, s0) = cpu_us();
    let t = Instant::now();
    append_all(&s, msgs);
    let secs = t.elapsed().as_secs_f64();
    let (u1, s1) = cpu_us();
    println!(
        "{n} appends in {:.1} ms: {:.0}/s; CPU per append: user {:.2} µs, system {:.2} µs",
        secs * 1e3,
        n as f64 / secs,
        (u1 - u0) / n as f64,
        (s1 - s0) / n as f64
    );
}
