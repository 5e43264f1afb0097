//! The bounded-growth benchmark (docs/BENCHMARKS.md, "Bounded growth"): a long
//! coding session with large, partly repeated tool outputs, written through the
//! sessionkit API; the bytes on disk of the whole store per turn; the same
//! conversation exported to Codex and Claude Code (`Store::export_to`) and the
//! bytes of those files, as exported and with what the tools write beside it
//! (estimated, see `tool_estimate_*`); two forks and the bytes each adds.
//!
//! `cargo run --release -p sessionkit --example growth_bench -- DIR [TURNS]`
//! (DIR is made and removed; 1,000 turns by default).

#[path = "../benches/common/mod.rs"]
mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{code, prose, Rng};
use serde_json::{json, Value};
use sessionkit::{
    CreateOptions, Deterministic, Durability, ExportTarget, ExportToOptions, ForkOptions, Store,
    StoreOptions,
};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

// ---------------------------------------------------------------------------
// The conversation

/// A file of the simulated project: read whole by `read_file`, changed by
/// `edit_file`. Reading it again before an edit gives the same bytes, as it
/// does for a real agent.
struct File {
    path: String,
    text: String,
}

/// A deterministic coding session: each turn a user prompt, one to four rounds
/// of an assistant message with tool calls (OpenAI style) and their results,
/// then an assistant reply. Tool outputs: whole-file reads (a quarter of the
/// files 20–200 KB, the rest 1–16 KB) that repeat until the file is edited,
/// and test logs (20–120 KB) that repeat until the next edit; grep and
/// directory listings are small.
struct Conversation {
    rng: Rng,
    files: Vec<File>,
    /// Bumped by every edit: a test run after it prints another log.
    epoch: u64,
    test_logs: HashMap<u64, String>,
    calls: u64,
    turn: u64,
    seed: u64,
}

const DIRS: &[&str] = &["src", "src/log", "src/index", "app", "tests", "web/src/api"];
const EXTS: &[&str] = &["rs", "rs", "py", "ts"];

impl Conversation {
    fn new(seed: u64) -> Conversation {
        let mut rng = Rng::new(seed);
        let files = (0..48)
            .map(|i| {
                let bytes = if i % 4 == 0 {
                    rng.log_uniform(20_000.0, 200_000.0)
                } else {
                    rng.log_uniform(1_000.0, 16_000.0)
                };
                File {
                    path: format!("{}/file_{i:02}.{}", rng.pick(DIRS), rng.pick(EXTS)),
                    text: code(&mut rng, bytes),
                }
            })
            .collect();
        Conversation {
            rng,
            files,
            epoch: 0,
            test_logs: HashMap::new(),
            calls: 0,
            turn: 0,
            seed,
        }
    }

    /// The files the work is on: six at a time, two of them large, moving on
    /// every 50 turns.
    fn hot_file(&mut self) -> usize {
        let base = (self.turn / 50) as usize * 7;
        let k = self.rng.below(6) as usize;
        // Indices ≡ 0 (mod 4) are the large files.
        if k < 2 {
            (base * 4 + k * 4) % self.files.len()
        } else {
            (base + 1 + k * 5) % self.files.len()
        }
    }

    fn pick_file(&mut self) -> usize {
        if self.rng.chance(0.7) {
            self.hot_file()
        } else {
            self.rng.below(self.files.len() as u64) as usize
        }
    }

    fn test_log(&mut self) -> String {
        let (epoch, seed) = (self.epoch, self.seed);
        self.test_logs
            .entry(epoch)
            .or_insert_with(|| {
                let mut r = Rng::new(seed ^ epoch.wrapping_mul(0x9E37_79B9));
                let n = r.log_uniform(20_000.0, 120_000.0);
                code(&mut r, n)
            })
            .clone()
    }

    /// Replace a few lines of file `f` (somewhere in it) by new code.
    fn edit(&mut self, f: usize) -> (String, String) {
        let text = &self.files[f].text;
        let mut start = self.rng.below(text.len() as u64) as usize;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let old_len = self.rng.log_uniform(100.0, 1_200.0);
        let end = text[start..]
            .char_indices()
            .map(|(i, _)| start + i)
            .find(|&i| i >= start + old_len && text.as_bytes()[i - 1] == b'\n')
            .unwrap_or(text.len());
        let old = text[start..end].to_string();
        let new_len = self.rng.log_uniform(100.0, 1_500.0);
        let new = code(&mut self.rng, new_len);
        self.files[f].text.replace_range(start..end, &new);
        self.epoch += 1;
        (old, new)
    }

    fn call(&mut self) -> (Value, Value) {
        self.calls += 1;
        let id = format!("call_{:06}_{}", self.calls, self.rng.hex(8));
        let roll = self.rng.unit();
        let (name, args, output) = if roll < 0.35 {
            let f = self.pick_file();
            let file = &self.files[f];
            ("read_file", json!({"path": file.path}), file.text.clone())
        } else if roll < 0.55 {
            let f = self.hot_file();
            let (old, new) = self.edit(f);
            let path = self.files[f].path.clone();
            (
                "edit_file",
                json!({"path": path, "old_string": old, "new_string": new}),
                format!("Edited {path}: replaced {} bytes.", old.len()),
            )
        } else if roll < 0.70 {
            (
                "bash",
                json!({"command": "cargo test --workspace 2>&1", "timeout": 600000}),
                self.test_log(),
            )
        } else if roll < 0.90 {
            let n = self.rng.log_uniform(300.0, 3_000.0);
            (
                "grep",
                json!({"pattern": format!("fn {}\\(", self.rng.pick(&["open", "read", "append", "fold"])), "path": "src/"}),
                code(&mut self.rng, n),
            )
        } else {
            let mut listing = String::new();
            for f in self.files.iter().filter(|_| self.rng.chance(0.4)) {
                listing.push_str(&f.path);
                listing.push('\n');
            }
            ("list_dir", json!({"path": "."}), listing)
        };
        let call = json!({"id": id, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}});
        let result =
            json!({"role": "tool", "content": output, "messageParams": {"tool_call_id": id}});
        (call, result)
    }

    fn usage(&mut self) -> Value {
        json!({"input_tokens": self.rng.range(2_000, 120_000), "output_tokens": self.rng.range(20, 2_000)})
    }

    /// The messages of the next turn.
    fn turn(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        let ask_len = self.rng.log_uniform(200.0, 1_200.0);
        out.push(json!({"role": "user", "content": prose(&mut self.rng, ask_len)}));
        for _ in 0..self.rng.range(1, 4) {
            let n = if self.rng.chance(0.25) { 2 } else { 1 };
            let (calls, results): (Vec<Value>, Vec<Value>) = (0..n).map(|_| self.call()).unzip();
            let text_len = self.rng.log_uniform(80.0, 600.0);
            let mut m = json!({"role": "assistant", "content": prose(&mut self.rng, text_len),
                "messageParams": {"tool_calls": calls}, "meta": {"usage": self.usage()}});
            if self.rng.chance(0.3) {
                let r = self.rng.log_uniform(200.0, 1_500.0);
                m["messageParams"]["reasoning_content"] = prose(&mut self.rng, r).into();
            }
            out.push(m);
            out.extend(results);
        }
        let reply_len = self.rng.log_uniform(300.0, 1_500.0);
        let usage = self.usage();
        out.push(
            json!({"role": "assistant", "content": prose(&mut self.rng, reply_len),
            "meta": {"usage": usage}}),
        );
        self.turn += 1;
        out
    }
}

// ---------------------------------------------------------------------------
// Measuring

/// Every regular file under `root`: path relative to it, length, bytes allocated.
fn walk(root: &Path) -> Res<BTreeMap<PathBuf, (u64, u64)>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)? {
            let e = e?;
            let m = e.metadata()?;
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() {
                let rel = e.path().strip_prefix(root)?.to_path_buf();
                out.insert(rel, (m.len(), m.blocks() * 512));
            }
        }
    }
    Ok(out)
}

/// The part of a store a file belongs to (FORMAT.md §1.2), from its path
/// under the home.
fn part(rel: &Path) -> &'static str {
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    let name = parts.last().copied().unwrap_or("");
    match parts.as_slice() {
        ["projects", _, "blobs", ..] => "blobs",
        ["projects", _, _, "log.structure"] => "structure cache",
        ["projects", _, "file-history", ..] => "file history",
        ["projects", _, n] if n.ends_with(".jsonl") => "session logs",
        ["projects", _, n]
            if n.starts_with("sessions-index") || n.starts_with(".sessions-index") =>
        {
            "index"
        }
        _ if name == ".lock" => "locks",
        _ => "other",
    }
}

#[derive(Default, Clone)]
struct Parts {
    /// part → (files, bytes, allocated)
    by: BTreeMap<&'static str, (u64, u64, u64)>,
}

impl Parts {
    fn of(files: &BTreeMap<PathBuf, (u64, u64)>) -> Parts {
        let mut p = Parts::default();
        for (rel, (len, alloc)) in files {
            let e = p.by.entry(part(rel)).or_default();
            e.0 += 1;
            e.1 += len;
            e.2 += alloc;
        }
        p
    }
    fn total(&self) -> (u64, u64) {
        self.by
            .values()
            .fold((0, 0), |(a, b), (_, l, al)| (a + l, b + al))
    }
}

/// What `after` holds that `before` did not (new files whole, grown files by
/// their growth), by part.
fn added(before: &BTreeMap<PathBuf, (u64, u64)>, after: &BTreeMap<PathBuf, (u64, u64)>) -> Parts {
    let mut p = Parts::default();
    for (rel, &(len, alloc)) in after {
        let (l0, a0) = before.get(rel).copied().unwrap_or((0, 0));
        if len == l0 && alloc == a0 {
            continue;
        }
        let e = p.by.entry(part(rel)).or_default();
        e.0 += u64::from(l0 == 0);
        e.1 += len.saturating_sub(l0);
        e.2 += alloc.saturating_sub(a0);
    }
    p
}

/// Bytes in MB, or in KB or bytes when smaller.
fn mb(b: u64) -> String {
    match b {
        1_000_000.. => format!("{:.2} MB", b as f64 / 1e6),
        1_000.. => kb(b),
        _ => format!("{b} B"),
    }
}

fn kb(b: u64) -> String {
    format!("{:.1} KB", b as f64 / 1e3)
}

// ---------------------------------------------------------------------------
// What the tools write beside the lines the export writes

/// Claude Code as its transcripts hold it (the fields of the lines in
/// tests/fixtures/import/claude-code, which follow the public descriptions
/// listed in FORMAT.md §22.10), added to each exported line: `gitBranch` on
/// every message line; on assistant lines a `requestId` (28 characters, the
/// length of the API's request ids) and the usage fields the export lacks
/// (`cache_creation_input_tokens`, `cache_read_input_tokens`, `service_tier`);
/// on tool-result lines `toolUseResult`, the tool's output once more (a read:
/// `{type, file: {filePath, content, numLines, startLine, totalLines}}`; any
/// other tool: `{stdout, stderr, interrupted, isImage}`); before each typed
/// prompt a `file-history-snapshot` line with no backups. Returns the bytes
/// added to the file, by what adds them. Not counted: thinking blocks (their signatures cannot be
/// known), an Edit's extra fields, a line per content block.
fn tool_estimate_claude(path: &Path, root: &str) -> Res<Extra> {
    let text = std::fs::read_to_string(path)?;
    let mut tools: HashMap<String, (String, Value)> = HashMap::new();
    let mut extra = Extra::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line)?;
        let base = serde_json::to_string(&v)?.len() as i64;
        let kind = v["type"].as_str().unwrap_or("").to_string();
        if kind != "user" && kind != "assistant" {
            continue;
        }
        let mut what = "prompts: gitBranch";
        v["gitBranch"] = json!("main");
        if kind == "assistant" {
            what = "assistant lines: gitBranch, requestId, usage";
            v["requestId"] = json!(format!("req_011C{}", "V".repeat(22)));
            if let Some(u) = v["message"]["usage"].as_object_mut() {
                u.insert("cache_creation_input_tokens".into(), json!(1_234));
                u.insert("cache_read_input_tokens".into(), json!(45_678));
                u.insert("service_tier".into(), json!("standard"));
            }
            for b in v["message"]["content"].as_array().into_iter().flatten() {
                if b["type"] == "tool_use" {
                    let id = b["id"].as_str().unwrap_or("").to_string();
                    let name = b["name"].as_str().unwrap_or("").to_string();
                    tools.insert(id, (name, b["input"].clone()));
                }
            }
        } else if let Some(blocks) = v["message"]["content"].as_array() {
            let result = blocks.iter().find(|b| b["type"] == "tool_result").cloned();
            if let Some(r) = result {
                let out = r["content"].as_str().unwrap_or("").to_string();
                let id = r["tool_use_id"].as_str().unwrap_or("");
                let copy = match tools.get(id) {
                    Some((name, input)) if name == "read_file" => {
                        let n = out.lines().count();
                        json!({"type": "text", "file": {"filePath": format!("{root}/{}", input["path"].as_str().unwrap_or("")),
                            "content": out, "numLines": n, "startLine": 1, "totalLines": n}})
                    }
                    _ => {
                        json!({"stdout": out, "stderr": "", "interrupted": false, "isImage": false})
                    }
                };
                v["toolUseResult"] = copy;
                what = "tool results: gitBranch, toolUseResult";
            }
        } else if v["message"]["content"].is_string() {
            let uuid = v["uuid"].clone();
            let snap = json!({"type": "file-history-snapshot", "messageId": uuid,
                "snapshot": {"messageId": uuid, "trackedFileBackups": {}, "timestamp": v["timestamp"]},
                "isSnapshotUpdate": false});
            *extra.entry("file-history-snapshot lines").or_default() +=
                serde_json::to_string(&snap)?.len() as u64 + 1;
        }
        *extra.entry(what).or_default() += (serde_json::to_string(&v)?.len() as i64 - base) as u64;
    }
    Ok(extra)
}

/// Codex as its rollouts hold it (the lines of tests/fixtures/import/codex,
/// which follow the public descriptions listed in FORMAT.md §22.9), added to
/// the exported rollout: a `turn_context` line after each prompt's
/// `user_message` event; an `event_msg` `token_count` after each model
/// response; each `function_call_output`'s output as Codex's shell tool
/// records it, the JSON text `{"output": …, "metadata": {"exit_code",
/// "duration_seconds"}}` (the output escaped once more). Returns the bytes
/// added. Not counted: `reasoning` items (their `encrypted_content` cannot be
/// known), the session's first instructions and environment messages.
fn tool_estimate_codex(path: &Path, root: &str) -> Res<Extra> {
    let text = std::fs::read_to_string(path)?;
    let mut extra = Extra::new();
    let mut in_response = false;
    let mut totals = (0u64, 0u64);
    let line_len = |v: &Value| -> Res<u64> { Ok(serde_json::to_string(v)?.len() as u64 + 1) };
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line)?;
        let ts = v["timestamp"].clone();
        let (kind, ptype) = (
            v["type"].as_str().unwrap_or("").to_string(),
            v["payload"]["type"].as_str().unwrap_or("").to_string(),
        );
        let from_model = (kind == "response_item"
            && (ptype == "function_call"
                || (ptype == "message" && v["payload"]["role"] == "assistant")))
            || (kind == "event_msg" && ptype == "agent_message");
        if in_response && !from_model {
            totals.0 += 41_000;
            totals.1 += 600;
            let t = json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count",
                "info": {"total_token_usage": {"input_tokens": totals.0, "cached_input_tokens": totals.0 * 9 / 10,
                "output_tokens": totals.1, "reasoning_output_tokens": totals.1 / 3, "total_tokens": totals.0 + totals.1}}}});
            *extra.entry("token_count events").or_default() += line_len(&t)?;
        }
        in_response = from_model;
        if kind == "event_msg" && ptype == "user_message" {
            let t = json!({"timestamp": ts, "type": "turn_context", "payload": {"cwd": root,
                "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"},
                "model": "gpt-5-codex", "effort": "medium", "summary": "auto"}});
            *extra.entry("turn_context lines").or_default() += line_len(&t)?;
        }
        if ptype == "function_call_output" {
            let base = line_len(&v)?;
            let out = v["payload"]["output"].as_str().unwrap_or("").to_string();
            v["payload"]["output"] = json!(json!({"output": out,
                "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
            .to_string());
            *extra.entry("outputs wrapped with metadata").or_default() += line_len(&v)? - base;
        }
    }
    Ok(extra)
}

// ---------------------------------------------------------------------------
// The run

/// Bytes an estimate adds, by what adds them.
type Extra = BTreeMap<&'static str, u64>;

struct Export {
    bytes: u64,
    alloc: u64,
    lines: u64,
    estimate: Extra,
}

impl Export {
    fn estimate_extra(&self) -> u64 {
        self.estimate.values().sum()
    }
}

fn export(store: &Store, id: &str, to: ExportTarget, home: &Path) -> Res<Export> {
    std::fs::create_dir_all(home)?;
    let opts = ExportToOptions {
        to,
        home: Some(home.to_path_buf()),
        model_provider: None,
    };
    let r = store.export_to(id, &opts)?;
    let files = walk(home)?;
    let root = store.project_root().display().to_string();
    let estimate = match to {
        ExportTarget::ClaudeCode => tool_estimate_claude(&r.path, &root)?,
        ExportTarget::Codex => tool_estimate_codex(&r.path, &root)?,
    };
    let lines = std::fs::read(&r.path)?
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64;
    Ok(Export {
        bytes: files.values().map(|v| v.0).sum(),
        alloc: files.values().map(|v| v.1).sum(),
        lines,
        estimate,
    })
}

struct Fork {
    at: &'static str,
    messages: usize,
    added: Parts,
    time: Duration,
    log_bytes: u64,
    copy_time: Duration,
    id: String,
}

struct StoreRun {
    label: String,
    id: String,
    messages: usize,
    after_write: Parts,
    after_resume: Parts,
    forks: Vec<Fork>,
    store: Store,
}

/// Write the session into a fresh store under `root` with this blob
/// threshold, resume it once, fork it in the middle and at its last message.
fn run_store(root: &Path, turns: u64, blob_threshold: usize, label: &str) -> Res<StoreRun> {
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&project)?;
    let store = Store::open(
        &project,
        StoreOptions {
            home: Some(home.clone()),
            durability: Durability::Never,
            blob_threshold,
            deterministic: Some(Deterministic::new(1_767_225_600_000, 7, 42)),
            ..StoreOptions::default()
        },
    )?;
    let session = store.create_session(CreateOptions::default())?;
    let mut conv = Conversation::new(7);
    for _ in 0..turns {
        session.append_batch(conv.turn())?;
    }
    let id = session.id().to_string();
    session.close()?;
    let after_write = Parts::of(&walk(&home)?);
    let view = store.read_session(&id)?;
    let path = view.active_path()?;
    let after_resume = Parts::of(&walk(&home)?);

    // The middle fork point: the reply that ends the turn nearest the middle.
    let half = path.len() / 2;
    let mid = path[..=half]
        .iter()
        .rposition(|m| {
            let v = m.value();
            v["role"] == "assistant" && v["messageParams"]["tool_calls"].is_null()
        })
        .unwrap_or(half);
    let points = [
        ("middle", mid, path[mid].id().to_string()),
        (
            "last message",
            path.len() - 1,
            path[path.len() - 1].id().to_string(),
        ),
    ];
    drop(view);
    let mut forks = Vec::new();
    for (at, index, msg) in points {
        let before = walk(&home)?;
        let t = Instant::now();
        let fork = store.fork_session(
            &id,
            ForkOptions {
                at: Some(msg),
                title: None,
            },
        )?;
        let time = t.elapsed();
        let fork_id = fork.id().to_string();
        let log = fork.path().to_path_buf();
        fork.close()?;
        let after = walk(&home)?;
        let log_bytes = std::fs::metadata(&log)?.len();
        // The floor of any fork that copies: the same bytes through fs::copy.
        let copy = root.join("copy.jsonl");
        let t = Instant::now();
        std::fs::copy(&log, &copy)?;
        let copy_time = t.elapsed();
        std::fs::remove_file(&copy)?;
        forks.push(Fork {
            at,
            messages: index + 1,
            added: added(&before, &after),
            time,
            log_bytes,
            copy_time,
            id: fork_id,
        });
    }
    Ok(StoreRun {
        label: label.to_string(),
        id,
        messages: path.len(),
        after_write,
        after_resume,
        forks,
        store,
    })
}

/// Content bytes of the tool outputs, all of them and the distinct ones: what
/// storing each distinct output once would keep.
fn tool_output_bytes(turns: u64) -> (u64, u64, u64) {
    let mut conv = Conversation::new(7);
    let (mut all, mut distinct, mut n) = (0u64, 0u64, 0u64);
    let mut seen = HashSet::new();
    for _ in 0..turns {
        for m in conv.turn() {
            if m["role"] == "tool" {
                let s = m["content"].as_str().unwrap_or("");
                n += 1;
                all += s.len() as u64;
                let mut h = std::collections::hash_map::DefaultHasher::new();
                s.hash(&mut h);
                if seen.insert(h.finish()) {
                    distinct += s.len() as u64;
                }
            }
        }
    }
    (n, all, distinct)
}

fn print_parts(title: &str, p: &Parts, turns: u64) {
    let (len, alloc) = p.total();
    println!(
        "  {title}: {} ({} allocated), {} per turn",
        mb(len),
        mb(alloc),
        kb(len / turns)
    );
    for (name, (files, len, alloc)) in &p.by {
        println!(
            "    {name:<16} {files:>5} files {:>12} ({} allocated)",
            mb(*len),
            mb(*alloc)
        );
    }
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: growth_bench DIR [TURNS]")?);
    let turns: u64 = args.next().map_or(Ok(1000), |s| s.parse())?;
    if turns == 0 {
        return Err("TURNS must be at least 1".into());
    }
    if dir.exists() {
        return Err(format!("{} exists; give a new directory", dir.display()).into());
    }
    std::fs::create_dir_all(&dir)?;
    let result = run(&dir, turns);
    std::fs::remove_dir_all(&dir)?;
    result
}

fn run(dir: &Path, turns: u64) -> Res<()> {
    let t = Instant::now();
    let (n_out, out_all, out_distinct) = tool_output_bytes(turns);
    println!(
        "growth_bench: {turns} turns; {n_out} tool outputs, {} of content, {} of it distinct (generated in {:.1} s)",
        mb(out_all),
        mb(out_distinct),
        t.elapsed().as_secs_f64()
    );
    let runs = [
        run_store(
            &dir.join("default"),
            turns,
            StoreOptions::default().blob_threshold,
            "sessionkit, default options (blobThreshold 256 KiB)",
        )?,
        run_store(
            &dir.join("blobs16k"),
            turns,
            16 * 1024,
            "sessionkit, blobThreshold 16 KiB",
        )?,
    ];
    for r in &runs {
        println!("\n{} — {} messages", r.label, r.messages);
        print_parts("after the session", &r.after_write, turns);
        print_parts("after one resume", &r.after_resume, turns);
        for f in &r.forks {
            let (len, alloc) = f.added.total();
            println!(
                "  fork at the {} ({} messages): {} added ({} allocated) in {:.1} ms; its log {}; fs::copy of those bytes {:.1} ms",
                f.at,
                f.messages,
                mb(len),
                mb(alloc),
                f.time.as_secs_f64() * 1e3,
                mb(f.log_bytes),
                f.copy_time.as_secs_f64() * 1e3
            );
            for (name, (files, len, _)) in &f.added.by {
                println!("    {name:<16} {files:>5} new files {:>12}", mb(*len));
            }
        }
    }

    // The peers: the same conversation (the default store's session, its
    // active path) exported, and the forks' sessions exported: their files
    // are what a copy of the transcript up to the fork point writes.
    let r = &runs[0];
    let agents = dir.join("agents");
    println!("\nPeers (Store::export_to of the same session; + estimate: what the tool writes beside, see growth_bench.rs)");
    println!(
        "  {:<28} {:>12} {:>12} {:>10} {:>14} {:>12}",
        "", "exported", "per turn", "lines", "+ estimate", "per turn"
    );
    for (name, to) in [
        ("Codex rollout", ExportTarget::Codex),
        ("Claude Code transcript", ExportTarget::ClaudeCode),
    ] {
        let e = export(&r.store, &r.id, to, &agents.join(to.name()).join("session"))?;
        let est = e.bytes + e.estimate_extra();
        println!(
            "  {name:<28} {:>12} {:>12} {:>10} {:>14} {:>12}   ({} allocated)",
            mb(e.bytes),
            kb(e.bytes / turns),
            e.lines,
            mb(est),
            kb(est / turns),
            mb(e.alloc)
        );
        for (what, b) in &e.estimate {
            println!("    + {what:<48} {:>12}", mb(*b));
        }
        for f in &r.forks {
            let home = agents.join(to.name()).join(f.at.replace(' ', "-"));
            let e = export(&r.store, &f.id, to, &home)?;
            println!(
                "    fork at the {:<14} {:>12} added (its prefix copy); {:>12} with the estimate",
                f.at,
                mb(e.bytes),
                mb(e.bytes + e.estimate_extra())
            );
        }
    }

    println!("\nSummary (bytes, per turn = total / {turns})");
    println!(
        "  {:<52} {:>12} {:>11} {:>14} {:>14}",
        "", "store", "per turn", "fork middle", "fork last"
    );
    for r in &runs {
        let (len, _) = r.after_resume.total();
        println!(
            "  {:<52} {:>12} {:>11} {:>14} {:>14}",
            r.label,
            mb(len),
            kb(len / turns),
            mb(r.forks[0].added.total().0),
            mb(r.forks[1].added.total().0)
        );
    }
    Ok(())
}
