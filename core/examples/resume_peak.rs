//! Peak memory (and time) of resuming a session, measured in a fresh process.
//!
//! ```text
//! cargo run --release -p sessionkit --example resume_peak                 # 1, 50, 200 MiB
//! cargo run --release -p sessionkit --example resume_peak -- --mib 1,50
//! resume_peak gen --root DIR --mib N [--seed S]   # write a session, print its JSON
//! resume_peak resume --root DIR --id ID            # one resume in this process
//! resume_peak raw --path FILE                      # std::fs::read of the log, for scale
//! resume_peak fork --root DIR --id ID              # one fork at the head, timed
//! resume_peak copy --path FILE                     # std::fs::copy of the log, for scale
//! ```
//!
//! `resume` is `Store::read_session(id)?.active_path()?`, timed in-process, and
//! reports the process's peak RSS (VmHWM from /proc/self/status) against the file
//! size. Each line of output is one JSON object; `core/benches/peers/run.py` drives
//! these modes and compares them with a Node resume of the same files.

#[path = "../benches/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};
use sessionkit::Durability;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// A field of /proc/self/status in bytes (the file gives kB).
fn proc_status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn need(args: &[String], name: &str) -> Res<String> {
    arg(args, name).ok_or_else(|| format!("missing {name}").into())
}

/// Line-size distribution of a log, to check the generator's shape.
fn line_stats(path: &Path) -> Res<Value> {
    let data = std::fs::read(path)?;
    let mut sizes: Vec<usize> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.len() + 1)
        .collect();
    sizes.sort_unstable();
    let n = sizes.len().max(1);
    let q = |p: f64| sizes[((n - 1) as f64 * p) as usize];
    let small = sizes
        .iter()
        .filter(|&&s| (300..=3_000).contains(&s))
        .count();
    let big = sizes.iter().filter(|&&s| s >= 20_000).count();
    Ok(json!({
        "lines": sizes.len(),
        "mean": data.len() / n,
        "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": q(1.0),
        "share_0_3_to_3k": small as f64 / n as f64,
        "share_over_20k": big as f64 / n as f64,
    }))
}

fn generate(root: &Path, mib: u64, seed: u64) -> Res<Value> {
    let store = common::open_store(root, Durability::Never);
    let t = Instant::now();
    let w = common::write_session(&store, mib * common::MIB, seed);
    let gen_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok(json!({
        "mode": "gen", "root": root, "id": w.id, "path": w.path, "bytes": w.bytes,
        "messages": w.messages, "gen_ms": gen_ms, "lines": line_stats(&w.path)?,
    }))
}

fn resume(root: &Path, id: &str) -> Res<Value> {
    let store = common::open_store(root, Durability::Never);
    let path = store.log_path(id)?;
    let file_bytes = std::fs::metadata(&path)?.len();
    let rss_before = proc_status("VmRSS");
    let hwm_before = proc_status("VmHWM");
    let t = Instant::now();
    let view = store.read_session(id)?;
    let active = view.active_path()?;
    let resume_ms = t.elapsed().as_secs_f64() * 1e3;
    let hwm = proc_status("VmHWM");
    let json_bytes: usize = active.iter().map(|m| m.json().len()).sum();
    let out = json!({
        "mode": "resume", "file_bytes": file_bytes, "messages": active.len(),
        "path_json_bytes": json_bytes, "clean": view.report().is_clean(),
        "resume_ms": resume_ms, "rss_before": rss_before, "hwm_before": hwm_before,
        "hwm": hwm, "hwm_over_file": hwm as f64 / file_bytes as f64,
        "growth_over_file": (hwm - rss_before) as f64 / file_bytes as f64,
    });
    drop(active);
    drop(view);
    Ok(out)
}

fn raw(path: &Path) -> Res<Value> {
    let rss_before = proc_status("VmRSS");
    let t = Instant::now();
    let bytes = std::fs::read(path)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let hwm = proc_status("VmHWM");
    Ok(json!({
        "mode": "raw", "file_bytes": bytes.len(), "read_ms": ms, "rss_before": rss_before,
        "hwm": hwm, "hwm_over_file": hwm as f64 / bytes.len() as f64,
    }))
}

/// Fork the session at its head (`Store::fork_session`); the fork is deleted
/// again, untimed.
fn fork(root: &Path, id: &str) -> Res<Value> {
    // Ids of another seed than the generator's, so the fork's id is new.
    let store = common::open_store_seeded(root, Durability::Never, std::process::id().into());
    let t = Instant::now();
    let f = store.fork_session(id, sessionkit::ForkOptions::default())?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let (fork_id, messages) = (f.id().to_string(), f.entry().message_count);
    drop(f);
    store.delete_session(&fork_id)?;
    Ok(json!({"mode": "fork", "messages": messages, "fork_ms": ms}))
}

/// `std::fs::copy` of the log to a new file beside it, removed again untimed.
fn copy(path: &Path) -> Res<Value> {
    let to = path.with_extension("copy");
    let t = Instant::now();
    let bytes = std::fs::copy(path, &to)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    std::fs::remove_file(&to)?;
    Ok(json!({"mode": "copy", "file_bytes": bytes, "fork_ms": ms}))
}

/// Generate each size here, then resume each in a fresh child process.
fn all(sizes: &[u64]) -> Res<()> {
    let tmp = tempfile::Builder::new()
        .prefix("sessionkit-resume-peak-")
        .tempdir()?;
    let exe = std::env::current_exe()?;
    println!(
        "{:>8} {:>10} {:>9} {:>11} {:>11} {:>9} {:>12}",
        "size", "file MiB", "messages", "resume ms", "peak MiB", "peak/file", "growth/file"
    );
    for &mib in sizes {
        let root: PathBuf = tmp.path().join(format!("s{mib}"));
        let g = generate(&root, mib, 1)?;
        let id = g["id"].as_str().unwrap_or_default().to_string();
        let out = Command::new(&exe)
            .args(["resume", "--root"])
            .arg(&root)
            .args(["--id", &id])
            .output()?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
        }
        let r: Value = serde_json::from_slice(&out.stdout)?;
        let mb = |v: &Value| v.as_f64().unwrap_or(0.0) / common::MIB as f64;
        println!(
            "{:>6}Mi {:>10.1} {:>9} {:>11.1} {:>11.1} {:>9.2} {:>12.2}",
            mib,
            mb(&r["file_bytes"]),
            r["messages"],
            r["resume_ms"].as_f64().unwrap_or(0.0),
            mb(&r["hwm"]),
            r["hwm_over_file"].as_f64().unwrap_or(0.0),
            r["growth_over_file"].as_f64().unwrap_or(0.0),
        );
        std::fs::remove_dir_all(&root)?;
    }
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = match args.first().map(String::as_str) {
        Some("gen") => generate(
            Path::new(&need(&args, "--root")?),
            need(&args, "--mib")?.parse()?,
            arg(&args, "--seed").map_or(Ok(1), |s| s.parse())?,
        )?,
        Some("resume") => resume(Path::new(&need(&args, "--root")?), &need(&args, "--id")?)?,
        Some("raw") => raw(Path::new(&need(&args, "--path")?))?,
        Some("fork") => fork(Path::new(&need(&args, "--root")?), &need(&args, "--id")?)?,
        Some("copy") => copy(Path::new(&need(&args, "--path")?))?,
        _ => {
            let sizes = arg(&args, "--mib").unwrap_or_else(|| "1,50,200".into());
            let sizes = sizes
                .split(',')
                .map(|s| s.trim().parse::<u64>())
                .collect::<Result<Vec<_>, _>>()?;
            return all(&sizes);
        }
    };
    println!("{out}");
    Ok(())
}
