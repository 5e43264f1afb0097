//! The Rust side of `bindings/python/bench/bench.py`: the same work the Python
//! benchmark does through the binding, done through the Rust API, timed
//! in-process, so that the script can give the binding's overhead.
//!
//! ```text
//! same_work append --project DIR --home DIR --n 10000 --bytes 4000   # N appends, durability never
//! same_work resume --project DIR --home DIR --id ID                  # Store::model_view of a session
//! same_work active --project DIR --home DIR --id ID                  # read_session + active_path
//! ```
//!
//! Each prints one JSON object: `{"ms": <time of the work>}`; a resume is run
//! once to warm up (its time is `first`: its memory is fresh from the kernel),
//! then five times, and the median given (bench.py times the
//! Python side the same way, on a store it keeps open). The messages are
//! the ones bench.py makes: `{"role": user|assistant, "content": "<i> xxx…"}`
//! of `bytes` characters.

use std::time::Instant;

use serde_json::json;
use sessionkit::{CreateOptions, Durability, ModelViewOptions, Store, StoreOptions};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn arg(args: &[String], name: &str) -> Res<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .ok_or_else(|| format!("missing {name}").into())
}

/// The message bench.py's `message(i, size)` makes.
fn message(i: usize, size: usize) -> serde_json::Value {
    let head = format!("{i} ");
    let role = if i.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    };
    json!({"role": role, "content": format!("{head}{}", "x".repeat(size.saturating_sub(head.len())))})
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().cloned().unwrap_or_default();
    let options = StoreOptions {
        home: Some(arg(&args, "--home")?.into()),
        durability: Durability::Never,
        max_sessions: 0,
        ..StoreOptions::default()
    };
    let store = Store::open(arg(&args, "--project")?, options)?;
    let mut first = None;
    let ms = match mode.as_str() {
        "append" => {
            let n: usize = arg(&args, "--n")?.parse()?;
            let size: usize = arg(&args, "--bytes")?.parse()?;
            let messages: Vec<_> = (0..n).map(|i| message(i, size)).collect();
            let s = store.create_session(CreateOptions::default())?;
            let t = Instant::now();
            for m in messages {
                s.append(m)?;
            }
            let ms = t.elapsed().as_secs_f64() * 1e3;
            s.close()?;
            ms
        }
        "resume" | "active" => {
            let id = arg(&args, "--id")?;
            let once = || -> Res<f64> {
                let t = Instant::now();
                let messages = if mode == "resume" {
                    store.model_view(&id, &ModelViewOptions::default())?
                } else {
                    store.read_session(&id)?.active_path()?
                };
                let ms = t.elapsed().as_secs_f64() * 1e3;
                std::hint::black_box(messages);
                Ok(ms)
            };
            // The first run's memory is fresh from the kernel; the others
            // reuse what the one before freed.
            first = Some(once()?);
            let mut runs = (0..5).map(|_| once()).collect::<Res<Vec<f64>>>()?;
            runs.sort_by(f64::total_cmp);
            runs[runs.len() / 2]
        }
        other => return Err(format!("unknown mode {other:?}: append, resume or active").into()),
    };
    println!("{}", json!({ "ms": ms, "first": first }));
    Ok(())
}
