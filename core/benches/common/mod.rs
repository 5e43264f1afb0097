//! Deterministic agent transcripts for the benchmarks, and sessions written from
//! them through the sessionkit API (so the bytes on disk are real sessionkit logs).
//!
//! Shared by the criterion benches (`#[path = "common/mod.rs"] mod common;`) and by
//! `examples/resume_peak.rs`. Not every user needs every item.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sessionkit::{CreateOptions, Deterministic, Durability, Session, Store, StoreOptions};

/// SplitMix64: tiny, fast, and the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Log-uniform in `lo..hi`: as many messages near 300 B as near 3 KB per octave.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> usize {
        (lo * (hi / lo).powf(self.unit())) as usize
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    pub fn hex(&mut self, digits: usize) -> String {
        let mut s = String::with_capacity(digits);
        while s.len() < digits {
            s.push_str(&format!("{:016x}", self.next_u64()));
        }
        s.truncate(digits);
        s
    }
}

const WORDS: &[&str] = &[
    "the", "session", "store", "append", "index", "file", "test", "error", "value", "line",
    "function", "return", "check", "update", "path", "message", "tool", "result", "read", "write",
    "lock", "buffer", "parse", "format", "config", "user", "agent", "model", "token", "cache",
    "retry", "timeout", "handler", "request", "response", "struct", "field", "module", "build",
    "fix", "change", "add", "remove", "rename", "because", "when", "after", "before", "should",
    "would", "this", "that", "with", "from", "into", "each", "only", "also", "still", "first",
    "last", "next", "then", "now", "a", "an", "is", "are", "was", "not", "it", "we", "I", "to",
    "of", "in", "on", "for", "and", "or", "but", "so", "if",
];

const IDENTS: &[&str] = &[
    "session_id",
    "parent",
    "head",
    "entries",
    "by_id",
    "report",
    "offset",
    "buf",
    "line",
    "len",
    "count",
    "path",
    "store",
    "writer",
    "reader",
    "options",
    "config",
    "result",
    "value",
    "items",
    "index",
    "cursor",
    "state",
    "handle",
    "request",
    "response",
    "ctx",
    "cache",
    "token",
    "limit",
];

const FILES: &[&str] = &[
    "src/lib.rs",
    "src/store.rs",
    "src/log/reader.rs",
    "app/models.py",
    "app/views.py",
    "tests/test_api.py",
    "web/src/components/SessionList.tsx",
    "web/src/api/client.ts",
    "Makefile",
    "scripts/release.sh",
    "README.md",
    "config/settings.yaml",
];

const TOOLS: &[&str] = &[
    "read_file",
    "edit_file",
    "bash",
    "grep",
    "write_file",
    "list_dir",
];

/// A sentence of plain English with some markdown, ending in a space.
fn sentence(rng: &mut Rng, out: &mut String) {
    let n = rng.range(6, 18);
    for i in 0..n {
        let w = rng.pick(WORDS);
        if i == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                out.extend(f.to_uppercase());
                out.push_str(c.as_str());
            }
        } else if rng.chance(0.05) {
            out.push('`');
            out.push_str(rng.pick(IDENTS));
            out.push('`');
        } else {
            out.push_str(w);
        }
        out.push(if i + 1 == n { '.' } else { ' ' });
    }
    if rng.chance(0.03) {
        out.push_str(" (naïve café → ✓)");
    }
    out.push(' ');
}

/// Prose of about `bytes` bytes, in paragraphs.
pub fn prose(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 200);
    while s.len() < bytes {
        sentence(rng, &mut s);
        if rng.chance(0.2) {
            s.push_str("\n\n");
        }
    }
    s
}

/// One line of source code or tool output: quotes, backslashes, tabs, escape
/// sequences in string literals, the odd non-ASCII character and ANSI colour code.
fn code_line(rng: &mut Rng, lang: u64, depth: usize, out: &mut String) {
    let a = rng.pick(IDENTS);
    let b = rng.pick(IDENTS);
    let w = rng.pick(WORDS);
    let n = rng.range(0, 4096);
    // Tool output is not indented; the TypeScript is indented with tabs.
    let indent = match lang {
        3 => String::new(),
        2 => "\t".repeat(depth),
        _ => "    ".repeat(depth),
    };
    out.push_str(&indent);
    let line = match (lang, rng.below(6)) {
        (0, 0) => format!("let {a} = {b}.get(\"{w}\").unwrap_or(&Value::Null);"),
        (0, 1) => format!("println!(\"{w} {a}: {{:?}}\\n\", {b});"),
        (0, 2) => format!(
            "if {a}.len() > {n} {{ return Err(Error::invalid(format!(\"{w} \\\"{{}}\\\" is too long\", {b}))); }}"
        ),
        (0, 3) => format!("// {w} the {a} before {b} — see #{n}"),
        (0, 4) => format!("assert_eq!({a}, r#\"{{\"type\":\"{w}\",\"id\":\"{}\"}}\"#);", rng.hex(12)),
        (0, _) => format!("fn {a}_{w}(&mut self, {b}: &str) -> Result<usize> {{"),
        (1, 0) => format!("{a} = {b}.get('{w}', None)"),
        (1, 1) => format!("print(f\"{w}: {{{a}!r}}\\t{{{b}}}\")"),
        (1, 2) => format!("raise ValueError(\"{w} \\\"%s\\\" not found\" % {a})"),
        (1, 3) => format!("path = \"C:\\\\Users\\\\dev\\\\{w}\\\\{b}.txt\""),
        (1, 4) => format!("# {w}: {a} should match {b} (café)"),
        (1, _) => format!("def {a}_{w}(self, {b}, limit={n}):"),
        (2, 0) => format!("const {a} = await {b}.{w}({n}, \"{w}\");"),
        (2, 1) => format!("console.log(`${{{a}}} → ${{{b}}}`);"),
        (2, 2) => format!("throw new Error('{w} \"' + {a} + '\" failed');"),
        (2, 3) => format!("import {{ {a} }} from \"../{w}/{b}\";"),
        (2, 4) => format!("if ({a} === undefined) {{ return {{ {w}: {n} }}; }}"),
        (2, _) => format!("export function {a}({b}: string): number {{"),
        (3, 0) => format!("test {w}::{a}_{b} ... ok"),
        (3, 1) => format!("\u{1b}[31merror[E0{n:03}]\u{1b}[0m: mismatched types in `{a}`"),
        (3, 2) => format!("   --> src/{w}.rs:{n}:{}", rng.range(1, 80)),
        (3, 3) => format!("{}\t{w}/{a}.rs\t| {n} ++--", rng.hex(8)),
        (3, 4) => format!("{n}\t{a}\t{b}\t\"{w}\""),
        (_, _) => format!("warning: unused variable: `{a}` ({w}) 🚧"),
    };
    out.push_str(&line);
    out.push('\n');
}

/// Source code or command output of about `bytes` bytes.
pub fn code(rng: &mut Rng, bytes: usize) -> String {
    let lang = rng.below(4);
    let mut s = String::with_capacity(bytes + 200);
    let mut depth = 0usize;
    while s.len() < bytes {
        code_line(rng, lang, depth, &mut s);
        depth = match rng.below(4) {
            0 => depth.saturating_sub(1),
            1 => (depth + 1).min(5),
            _ => depth,
        };
        if rng.chance(0.05) {
            s.push('\n');
        }
    }
    s
}

/// Messages shaped like a coding agent's transcript: a user request, rounds of
/// assistant tool calls (`messageParams.tool_calls`) and `role: "tool"` results,
/// then an assistant reply. Most messages are 0.3–3 KB; a few tool results (file
/// reads, test logs) are 20–200 KB; the mean log line is about 4 KB.
pub struct Transcript {
    rng: Rng,
    queue: std::collections::VecDeque<Value>,
    calls: u64,
}

/// Share of tool results that are large: calibrated so that the mean line is ≈4 KB.
const BIG_TOOL_RESULT: f64 = 0.075;

impl Transcript {
    pub fn new(seed: u64) -> Transcript {
        Transcript {
            rng: Rng::new(seed),
            queue: Default::default(),
            calls: 0,
        }
    }

    fn usage(&mut self) -> Value {
        json!({"input_tokens": self.rng.range(2_000, 120_000), "output_tokens": self.rng.range(20, 2_000)})
    }

    fn tool_call(&mut self) -> (Value, String, &'static str) {
        self.calls += 1;
        let id = format!("call_{:06}_{}", self.calls, self.rng.hex(8));
        let tool = self.rng.pick(TOOLS);
        let file = self.rng.pick(FILES);
        let args = match tool {
            "edit_file" | "write_file" => {
                let old_len = self.rng.log_uniform(100.0, 1200.0);
                let new_len = self.rng.log_uniform(100.0, 1500.0);
                json!({"path": file, "old_string": code(&mut self.rng, old_len), "new_string": code(&mut self.rng, new_len)})
            }
            "bash" => {
                json!({"command": format!("cd /work && cargo test -p {} -- --nocapture 2>&1 | tail -n 80", self.rng.pick(IDENTS)), "timeout": 120000})
            }
            "grep" => {
                json!({"pattern": format!("fn {}\\(", self.rng.pick(IDENTS)), "path": "src/", "-n": true})
            }
            _ => json!({"path": file}),
        };
        // Arguments travel as a JSON string inside JSON, as in the OpenAI format:
        // every quote and newline of the code is escaped twice.
        let call = json!({"id": id, "type": "function",
            "function": {"name": tool, "arguments": args.to_string()}});
        (call, id, tool)
    }

    fn tool_result(&mut self, call_id: &str, tool: &str) -> Value {
        let size = if self.rng.chance(BIG_TOOL_RESULT) {
            self.rng.log_uniform(20_000.0, 200_000.0)
        } else {
            self.rng.log_uniform(300.0, 3_000.0)
        };
        let content = match tool {
            "edit_file" | "write_file" => {
                format!(
                    "Edited {} ({size} bytes):\n{}",
                    self.rng.pick(FILES),
                    code(&mut self.rng, size)
                )
            }
            _ => code(&mut self.rng, size),
        };
        json!({"role": "tool", "content": content, "messageParams": {"tool_call_id": call_id}})
    }

    fn turn(&mut self) {
        let ask_len = self.rng.log_uniform(200.0, 1200.0);
        let mut ask = prose(&mut self.rng, ask_len);
        if self.rng.chance(0.3) {
            let n = self.rng.log_uniform(200.0, 1500.0);
            ask.push_str("\n\n```\n");
            ask.push_str(&code(&mut self.rng, n));
            ask.push_str("```\n");
        }
        self.queue
            .push_back(json!({"role": "user", "content": ask}));
        for _ in 0..self.rng.range(1, 4) {
            let ncalls = if self.rng.chance(0.25) { 2 } else { 1 };
            let mut calls = Vec::new();
            let mut ids = Vec::new();
            for _ in 0..ncalls {
                let (c, id, tool) = self.tool_call();
                calls.push(c);
                ids.push((id, tool));
            }
            let text_len = self.rng.log_uniform(80.0, 600.0);
            let mut m = json!({"role": "assistant", "content": prose(&mut self.rng, text_len),
                "messageParams": {"tool_calls": calls}, "meta": {"usage": self.usage()}});
            if self.rng.chance(0.3) {
                let r = self.rng.log_uniform(200.0, 1500.0);
                m["messageParams"]["reasoning_content"] = prose(&mut self.rng, r).into();
            }
            self.queue.push_back(m);
            for (id, tool) in ids {
                let r = self.tool_result(&id, tool);
                self.queue.push_back(r);
            }
        }
        let reply_len = self.rng.log_uniform(300.0, 1500.0);
        let mut reply = prose(&mut self.rng, reply_len);
        if self.rng.chance(0.5) {
            let n = self.rng.log_uniform(200.0, 1200.0);
            reply.push_str("\n\n```rust\n");
            reply.push_str(&code(&mut self.rng, n));
            reply.push_str("```\n");
        }
        let usage = self.usage();
        self.queue
            .push_back(json!({"role": "assistant", "content": reply, "meta": {"usage": usage}}));
    }
}

impl Iterator for Transcript {
    type Item = Value;
    fn next(&mut self) -> Option<Value> {
        if self.queue.is_empty() {
            self.turn();
        }
        self.queue.pop_front()
    }
}

/// `n` messages of about `bytes` bytes each on disk (assistant tool calls and tool
/// results, alternating), for append benchmarks that want a fixed size.
pub fn fixed_size_messages(n: usize, bytes: usize, seed: u64) -> Vec<Value> {
    // Fields added by the store (type, ids, session id, timestamp) plus the JSON
    // escaping of code come to about this much per line.
    let overhead = 330;
    let mut rng = Rng::new(seed);
    let mut calls = 0u64;
    let mut out = Vec::with_capacity(n);
    // Generate a few distinct bodies and reuse them: the append path, not the
    // generator, is what is measured, and 10,000 distinct 4 KB bodies take a while.
    let bodies: Vec<String> = (0..64)
        .map(|_| code(&mut rng, bytes.saturating_sub(overhead) * 9 / 10))
        .collect();
    for i in 0..n {
        let body = &bodies[i % bodies.len()];
        if i % 2 == 0 {
            calls += 1;
            let args = json!({"path": rng.pick(FILES), "new_string": body}).to_string();
            out.push(json!({"role": "assistant", "content": "Applying the edit.",
                "messageParams": {"tool_calls": [{"id": format!("call_{calls}"), "type": "function",
                "function": {"name": "edit_file", "arguments": args}}]}}));
        } else {
            out.push(json!({"role": "tool", "content": body,
                "messageParams": {"tool_call_id": format!("call_{calls}")}}));
        }
    }
    out
}

/// Options for a benchmark store: reproducible ids and times (from `seed`), no
/// pruning.
pub fn options(home: &Path, durability: Durability, seed: u64) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        durability,
        max_sessions: 0,
        deterministic: Some(Deterministic::new(1_767_225_600_000, 7, seed)),
        ..StoreOptions::default()
    }
}

/// A store in a fresh temporary directory (removed on drop).
pub struct BenchStore {
    pub dir: tempfile::TempDir,
    pub store: Store,
}

impl BenchStore {
    pub fn new(durability: Durability) -> BenchStore {
        let dir = tempfile::Builder::new()
            .prefix("sessionkit-bench-")
            .tempdir()
            .expect("temp dir");
        let store = open_store(dir.path(), durability);
        BenchStore { dir, store }
    }
}

/// Open (creating) the store whose home is `<root>/home` and project `<root>/project`.
pub fn open_store(root: &Path, durability: Durability) -> Store {
    open_store_seeded(root, durability, 42)
}

/// [`open_store`] with another id seed, for a second handle on the same store that
/// must not hand out the same session ids.
pub fn open_store_seeded(root: &Path, durability: Durability, seed: u64) -> Store {
    let project = root.join("project");
    std::fs::create_dir_all(&project).expect("project dir");
    Store::open(&project, options(&root.join("home"), durability, seed)).expect("open store")
}

/// What [`write_session`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub id: String,
    pub path: PathBuf,
    pub bytes: u64,
    pub messages: u64,
}

/// Write a session of at least `target_bytes` from [`Transcript`] `seed`, through
/// `append_batch` (the store's durability applies).
pub fn write_session(store: &Store, target_bytes: u64, seed: u64) -> Written {
    let session = store
        .create_session(CreateOptions::default())
        .expect("create session");
    let messages = fill(&session, target_bytes, seed);
    let id = session.id().to_string();
    let path = session.path().to_path_buf();
    session.close().expect("close session");
    let bytes = std::fs::metadata(&path).expect("log metadata").len();
    Written {
        id,
        path,
        bytes,
        messages,
    }
}

/// Append transcript messages to `session` until its log holds `target_bytes`.
pub fn fill(session: &Session, target_bytes: u64, seed: u64) -> u64 {
    let mut t = Transcript::new(seed);
    let mut n = 0u64;
    loop {
        let len = std::fs::metadata(session.path())
            .expect("log metadata")
            .len();
        if len >= target_bytes {
            return n;
        }
        // Batches of 16 while far from the target, then one at a time so that a
        // "1 MiB" session is not 1.3 MiB because of a last large batch.
        let n_batch = if target_bytes - len > 256 << 10 {
            16
        } else {
            1
        };
        let batch: Vec<Value> = t.by_ref().take(n_batch).collect();
        n += batch.len() as u64;
        session.append_batch(batch).expect("append batch");
    }
}

pub const MIB: u64 = 1 << 20;

/// Read `path` `piece` bytes at a time into one buffer, making the passes any
/// reader that checks what it reads makes over each piece (UTF-8, XXH3-128),
/// and hand each piece to `each`: the floor the resume and fork benches compare
/// with. Returns the hash.
pub fn checked_pass(path: &Path, piece: usize, mut each: impl FnMut(&[u8])) -> u128 {
    use std::io::Read;
    let mut f = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; piece];
    let mut hash = twox_hash::XxHash3_128::new();
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        let b = &buf[..n];
        std::hint::black_box(simdutf8::basic::from_utf8(b).is_ok());
        hash.write(b);
        each(b);
    }
    hash.finish_128()
}
