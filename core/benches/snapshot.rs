//! File history in a synthetic project of 100,000 small files (generated under a
//! temp dir), against the shadow-git way other agents use.
//!
//! sessionkit (criterion group `file_history`, `Durability::Never`):
//! - `snapshot_after_editing_10_files`: 10 tracked files rewritten, then
//!   `after_edit` (target ≤ 2 ms);
//! - `first_snapshot_10_files`: a new session's first snapshot, tracking 10 files
//!   (`before_edit`; includes loading the session's file history) (≤ 5 ms);
//! - `dry_run_10_files`: `rewind_plan` with 10 files to restore, and
//!   `restore_10_files`: `rewind(.., Files)` of them (≤ 3 ms).
//!
//! Shadow git (group `shadow_git`, the system `git` with a separate `GIT_DIR` over
//! the project): `git add -A . && git commit` per checkpoint, `git diff --numstat
//! <commit>` as the dry run, `git checkout <commit> -- <10 paths>` to restore.
//! After criterion, medians of both are printed side by side with the ratios.
//!
//! `cargo bench -p sessionkit --bench snapshot`
//! (`SESSIONKIT_BENCH_FILES=10000` for a smaller project, `SESSIONKIT_BENCH_NO_GIT=1`
//! to skip the shadow-git side; without `--bench`, as under `cargo test --benches`,
//! a 1,000-file smoke run.)

use std::fs;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::json;
use sessionkit::{Durability, RewindMode, Session, Store, StoreOptions};

const EDITED: usize = 10;

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    shadow: PathBuf,
    files: usize,
    edited: Vec<String>,
}

fn rel(i: usize) -> String {
    format!("d{:03}/s{}/f{:03}.txt", i / 1000, (i / 100) % 10, i % 100)
}

fn original(i: usize) -> String {
    format!(
        "// file {i}\nfn f{i}() -> u64 {{\n    {i}\n}}\n// padding {}\n",
        "x".repeat(40 + i % 80)
    )
}

impl Project {
    fn generate(files: usize) -> Project {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("project");
        for i in 0..files {
            let p = root.join(rel(i));
            if i % 100 == 0 {
                fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            }
            fs::write(&p, original(i)).expect("write");
        }
        let root = fs::canonicalize(&root).expect("canonical");
        let edited = (0..EDITED)
            .map(|k| rel((k * 10_007 + 13) % files))
            .collect();
        Project {
            home: tmp.path().join("home"),
            shadow: tmp.path().join("shadow.git"),
            _tmp: tmp,
            root,
            files,
            edited,
        }
    }

    /// Rewrite the edited files with content unique to `round`.
    fn edit(&self, round: u64) {
        for (k, p) in self.edited.iter().enumerate() {
            fs::write(
                self.root.join(p),
                format!("// round {round}, file {k}\nfn edited() {{}}\n"),
            )
            .expect("edit");
        }
    }

    fn store(&self) -> Store {
        let o = StoreOptions {
            home: Some(self.home.clone()),
            durability: Durability::Never,
            max_sessions: 0,
            ..StoreOptions::default()
        };
        Store::open(&self.root, o).expect("store")
    }

    fn git(&self, args: &[&str]) -> Duration {
        let t = Instant::now();
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@example.com",
            ])
            .args(["-c", "gc.auto=0", "-c", "core.autocrlf=false"])
            .args(args)
            .env("GIT_DIR", &self.shadow)
            .env("GIT_WORK_TREE", &self.root)
            .current_dir(&self.root)
            .output()
            .expect("git");
        let d = t.elapsed();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        d
    }

    fn git_out(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .env("GIT_DIR", &self.shadow)
            .env("GIT_WORK_TREE", &self.root)
            .current_dir(&self.root)
            .output()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn git_checkpoint(&self) -> Duration {
        self.git(&["add", "-A", "."]) + self.git(&["commit", "-q", "--allow-empty", "-m", "cp"])
    }
}

fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A session with two user messages: before them, the edited files at state A
/// (round `a`) and B (round `b`).
fn two_checkpoints(p: &Project, store: &Store) -> (Session, String, String) {
    let s = store.create_session(Default::default()).expect("session");
    p.edit(1);
    s.before_edit(&p.edited).expect("track");
    let m1 = s.user_input(json!({"content": "a"})).expect("m1");
    s.before_edit(&p.edited).expect("before");
    p.edit(2);
    s.after_edit(&p.edited).expect("after");
    let m2 = s.user_input(json!({"content": "b"})).expect("m2");
    (s, m1.id().to_string(), m2.id().to_string())
}

fn bench_sessionkit(c: &mut Criterion, p: &Project) {
    let store = p.store();
    let mut g = c.benchmark_group("file_history");
    g.sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    let s = store.create_session(Default::default()).expect("session");
    s.before_edit(&p.edited).expect("track");
    let mut round = 100;
    g.bench_function("snapshot_after_editing_10_files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                p.edit(round);
                let t = Instant::now();
                black_box(s.after_edit(&p.edited).expect("snapshot"));
                total += t.elapsed();
            }
            total
        })
    });
    drop(s);

    g.bench_function("first_snapshot_10_files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                p.edit(round);
                let s = store.create_session(Default::default()).expect("session");
                let t = Instant::now();
                black_box(s.before_edit(&p.edited).expect("snapshot"));
                total += t.elapsed();
                let id = s.id().to_string();
                drop(s);
                store.delete_session(&id).expect("delete");
            }
            total
        })
    });

    let (s, m1, m2) = two_checkpoints(p, &store);
    g.bench_function("dry_run_10_files", |b| {
        b.iter(|| {
            let plan = s.rewind_plan(&m1).expect("plan");
            assert_eq!(plan.files.len(), EDITED);
            black_box(plan)
        })
    });
    let mut flip = false;
    g.bench_function("restore_10_files", |b| {
        b.iter(|| {
            flip = !flip;
            let target = if flip { &m1 } else { &m2 };
            let r = s.rewind(target, RewindMode::Files, false).expect("restore");
            assert_eq!(r.restored.len(), EDITED);
            black_box(r)
        })
    });
    g.finish();
}

fn bench_shadow_git(c: &mut Criterion, p: &Project) {
    let mut g = c.benchmark_group("shadow_git");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    let mut round = 1_000_000;
    g.bench_function("checkpoint_after_editing_10_files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                p.edit(round);
                total += p.git_checkpoint();
            }
            total
        })
    });
    let (c1, _) = shadow_two_checkpoints(p);
    let mut paths = vec!["checkout", c1.as_str(), "--"];
    paths.extend(p.edited.iter().map(String::as_str));
    g.bench_function("diff_10_files", |b| {
        b.iter(|| black_box(p.git(&["diff", "--numstat", &c1])))
    });
    g.bench_function("restore_10_files", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                p.edit(round);
                total += p.git(&paths);
            }
            total
        })
    });
    g.finish();
}

/// Two shadow commits: the edited files at state A, then at state B.
fn shadow_two_checkpoints(p: &Project) -> (String, String) {
    p.edit(1);
    p.git_checkpoint();
    let c1 = p.git_out(&["rev-parse", "HEAD"]);
    p.edit(2);
    p.git_checkpoint();
    let c2 = p.git_out(&["rev-parse", "HEAD"]);
    (c1, c2)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// Medians of the same operations done by hand, printed side by side.
fn ratios(p: &Project, git: bool, first_git: Option<Duration>) {
    let store = p.store();
    let n = 101;
    let mut rows: Vec<(&str, Duration, Option<Duration>)> = Vec::new();

    let s = store.create_session(Default::default()).expect("session");
    s.before_edit(&p.edited).expect("track");
    let mut round = 5_000_000;
    let snap = median(
        (0..n)
            .map(|_| {
                round += 1;
                p.edit(round);
                let t = Instant::now();
                s.after_edit(&p.edited).expect("snapshot");
                t.elapsed()
            })
            .collect(),
    );
    drop(s);
    let first = median(
        (0..n)
            .map(|_| {
                round += 1;
                p.edit(round);
                let s = store.create_session(Default::default()).expect("session");
                let t = Instant::now();
                s.before_edit(&p.edited).expect("snapshot");
                let d = t.elapsed();
                let id = s.id().to_string();
                drop(s);
                store.delete_session(&id).expect("delete");
                d
            })
            .collect(),
    );
    let (s, m1, m2) = two_checkpoints(p, &store);
    let plan = median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                s.rewind_plan(&m1).expect("plan");
                t.elapsed()
            })
            .collect(),
    );
    let restore = median(
        (0..n)
            .map(|i| {
                let target = if i % 2 == 0 { &m1 } else { &m2 };
                let t = Instant::now();
                s.rewind(target, RewindMode::Files, false).expect("restore");
                t.elapsed()
            })
            .collect(),
    );

    let (mut g_cp, mut g_diff, mut g_restore) = (None, None, None);
    if git {
        let k = 9;
        g_cp = Some(median(
            (0..k)
                .map(|_| {
                    round += 1;
                    p.edit(round);
                    p.git_checkpoint()
                })
                .collect(),
        ));
        let (c1, _) = shadow_two_checkpoints(p);
        g_diff = Some(median(
            (0..k).map(|_| p.git(&["diff", "--numstat", &c1])).collect(),
        ));
        let mut args = vec!["checkout", c1.as_str(), "--"];
        args.extend(p.edited.iter().map(String::as_str));
        g_restore = Some(median(
            (0..k)
                .map(|_| {
                    round += 1;
                    p.edit(round);
                    p.git(&args)
                })
                .collect(),
        ));
    }
    rows.push(("snapshot after editing 10 files", snap, g_cp));
    rows.push(("first snapshot of a session (10 files)", first, first_git));
    rows.push(("dry run, 10 files to restore", plan, g_diff));
    rows.push(("restore 10 files", restore, g_restore));

    println!();
    println!(
        "file history vs shadow git: {} files, {EDITED} edited (medians)",
        p.files
    );
    println!(
        "{:<42} {:>12} {:>14} {:>9}",
        "operation", "sessionkit", "shadow git", "ratio"
    );
    for (name, ours, theirs) in rows {
        match theirs {
            Some(t) => println!(
                "{name:<42} {:>12} {:>14} {:>8.0}x",
                ms(ours),
                ms(t),
                t.as_secs_f64() / ours.as_secs_f64()
            ),
            None => println!("{name:<42} {:>12} {:>14} {:>9}", ms(ours), "-", "-"),
        }
    }
    let sizes = store.file_history_sizes().expect("sizes");
    println!(
        "file-history objects on disk after the run: {:.1} MB",
        sizes.disk_bytes as f64 / 1e6
    );
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let files: usize = std::env::var("SESSIONKIT_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 100_000 } else { 1_000 });
    let t = Instant::now();
    let p = Project::generate(files);
    println!(
        "generated {files} files in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let git = full && git_available() && std::env::var_os("SESSIONKIT_BENCH_NO_GIT").is_none();
    // The shadow repository's first checkpoint: `git add` of the whole project.
    let first_git = if git {
        p.git(&["init", "-q"]);
        let d = p.git_checkpoint();
        println!("shadow git: first checkpoint of the project: {}", ms(d));
        Some(d)
    } else {
        None
    };
    let mut c = Criterion::default().configure_from_args();
    bench_sessionkit(&mut c, &p);
    if git {
        bench_shadow_git(&mut c, &p);
    }
    c.final_summary();
    if full {
        ratios(&p, git, first_git);
    }
}
