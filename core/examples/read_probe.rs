//! A full read of a session without its structure cache: every line decoded and
//! checked (FORMAT.md §5), folded, and the model view built. What a first
//! resume, a doctor or an index rebuild pays per log.
//!
//! ```sh
//! cargo run --release -p sessionkit --example read_probe -- [ROUNDS] [LOG]
//! valgrind --tool=callgrind target/release/examples/read_probe 3   # instructions
//! ```
//!
//! Without `LOG` it writes a 6 MiB log of 4,000 messages (escaped quotes and
//! newlines, non-ASCII text, tool-use blocks, usage metadata) and reads that.

use std::io::Write;
use std::time::Instant;

use sessionkit::{ModelViewOptions, Store, StoreOptions};

const ID: &str = "read-probe";

/// A deterministic log, as a host writing one message per line would.
fn write_log(path: &std::path::Path) {
    let words = [
        "fix",
        "the",
        "test",
        "\"quoted\"",
        "naïve",
        "line\nbreak",
        "{json}",
        "ok",
    ];
    let mut seed: u64 = 7;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let header = serde_json::json!({"type": "session", "version": 1, "id": ID,
        "createdAt": "2026-01-01T00:00:00.000Z", "projectPath": "/"});
    writeln!(f, "{header}").unwrap();
    let mut parent = serde_json::Value::Null;
    for i in 0..4000u64 {
        let role = ["user", "assistant", "tool"][next(3) as usize];
        let n = 5 + next(396);
        let text: Vec<&str> = (0..n).map(|_| words[next(8) as usize]).collect();
        let text = text.join(" ");
        let content = if role == "assistant" {
            serde_json::json!([{"type": "text", "text": text},
                {"type": "tool_use", "id": format!("c{i}"), "name": "read",
                 "input": {"path": "src/main.rs", "n": i, "f": 1.5}}])
        } else {
            serde_json::Value::String(text)
        };
        let id = format!("m{i}");
        let m = serde_json::json!({"type": "message", "id": id, "parentId": parent,
            "sessionId": ID, "role": role, "timestamp": "2026-01-01T00:00:05.000Z",
            "content": content, "meta": {"usage": {"input_tokens": i, "output_tokens": 3}}});
        writeln!(f, "{m}").unwrap();
        parent = serde_json::Value::String(id);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args
        .get(1)
        .map_or(15, |a| a.parse().expect("ROUNDS is a number"));
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(
        root.path(),
        StoreOptions {
            home: Some(home.path().into()),
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let log = store.dir().join(format!("{ID}.jsonl"));
    match args.get(2) {
        Some(p) => {
            std::fs::copy(p, &log).unwrap();
        }
        None => write_log(&log),
    }
    let bytes = std::fs::metadata(&log).unwrap().len();
    let mut ms = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        // No structure cache: the read decodes every line.
        let _ = std::fs::remove_dir_all(store.dir().join(ID));
        let t = Instant::now();
        let view = store.read_session(ID).unwrap();
        let model = view.model_view(&ModelViewOptions::default()).unwrap();
        std::hint::black_box(model.len());
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "{bytes} bytes, {rounds} rounds: median {:.2} ms, fastest {:.2} ms",
        ms[rounds / 2],
        ms[0]
    );
}
