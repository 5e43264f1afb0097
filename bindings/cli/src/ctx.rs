//! What every command shares: the error type and its exit codes, the store, id
//! prefixes, styles, time formatting and output.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anstyle::{AnsiColor, Style};
use serde_json::Value;
use sessionkit::{Deterministic, ErrorKind, Store, StoreOptions};

use crate::cli::Global;

/// A failure of a command: a core error kind and a one-line message.
#[derive(Debug)]
pub struct CliError {
    pub kind: ErrorKind,
    pub msg: String,
}

impl CliError {
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> CliError {
        CliError {
            kind,
            msg: msg.into(),
        }
    }
}

impl From<sessionkit::Error> for CliError {
    fn from(e: sessionkit::Error) -> CliError {
        CliError::new(e.kind(), e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        CliError::new(ErrorKind::of_io(&e), format!("I/O error: {e}"))
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// Exit status of `doctor` when it found problems it did not repair.
pub const EXIT_PROBLEMS: u8 = 1;

/// The one mapping from a core error kind to the process exit status: the
/// kind's number plus 2, since 1 is `doctor`'s "problems found" and 2 is clap's
/// usage error (so kinds start at 3).
pub fn exit_code(kind: ErrorKind) -> u8 {
    u8::try_from(kind.code() + 2).unwrap_or(u8::MAX)
}

/// The exit codes paragraph of `--help`, from the core's table of error kinds.
pub fn exit_codes_help() -> String {
    let kinds: Vec<String> = ErrorKind::ALL
        .iter()
        .map(|&k| format!("{} {}", exit_code(k), k.name()))
        .collect();
    format!(
        "Exit codes: 0 success, 1 doctor found problems, 2 usage, {}.\n\
         Colours only on a terminal, never with NO_COLOR set.",
        kinds.join(", ")
    )
}

/// What a command prints on success.
pub enum Output {
    /// Human text (may hold ANSI styles; stripped off a terminal or with NO_COLOR).
    Text(String),
    /// The `--json` form, printed pretty.
    Json(Value),
    /// Raw text printed as is (exports).
    Raw(String),
}

impl Output {
    pub fn json(v: impl serde::Serialize) -> Result<Output> {
        serde_json::to_value(v)
            .map(Output::Json)
            .map_err(|e| CliError::new(ErrorKind::Internal, format!("serialising output: {e}")))
    }

    /// Print to stdout; a closed pipe (`| head`) is not an error.
    pub fn print(self) -> std::io::Result<()> {
        let text = match self {
            Output::Text(s) => s,
            Output::Json(v) => {
                let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
                s.push('\n');
                s
            }
            Output::Raw(s) => {
                let mut out = std::io::stdout().lock();
                return ignore_pipe(out.write_all(s.as_bytes()).and_then(|_| out.flush()));
            }
        };
        let mut out = anstream::stdout().lock();
        ignore_pipe(out.write_all(text.as_bytes()).and_then(|_| out.flush()))
    }
}

fn ignore_pipe(r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

// ---------------------------------------------------------------------------
// Styles. Written as ANSI always; anstream strips them when stdout is not a
// terminal or NO_COLOR is set.

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const GOOD: Style = AnsiColor::Green.on_default();
pub const WARN: Style = AnsiColor::Yellow.on_default();
pub const BAD: Style = AnsiColor::Red.on_default().bold();

pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}

pub fn role_style(role: &str) -> Style {
    match role {
        "user" => AnsiColor::Green.on_default().bold(),
        "assistant" => AnsiColor::Cyan.on_default().bold(),
        "tool" => AnsiColor::Yellow.on_default().bold(),
        "system" => AnsiColor::Magenta.on_default().bold(),
        _ => BOLD,
    }
}

// ---------------------------------------------------------------------------
// Time.

/// "Now" for relative times: `SESSIONKIT_NOW` (an RFC 3339 time) when set, so that
/// tests print the same text every run.
pub fn now() -> Result<SystemTime> {
    match std::env::var("SESSIONKIT_NOW") {
        Ok(s) if !s.is_empty() => humantime::parse_rfc3339_weak(&s).map_err(|e| {
            CliError::new(
                ErrorKind::InvalidInput,
                format!("SESSIONKIT_NOW={s:?} is not an RFC 3339 time: {e}"),
            )
        }),
        _ => Ok(SystemTime::now()),
    }
}

pub fn parse_time(ts: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(ts).ok()
}

/// "5m ago", "3h ago", "2d ago"; older than 30 days: the date.
pub fn relative(ts: &str, now: SystemTime) -> String {
    let Some(t) = parse_time(ts) else {
        return if ts.is_empty() { "-".into() } else { ts.into() };
    };
    let secs = now.duration_since(t).unwrap_or(Duration::ZERO).as_secs();
    match secs {
        0..=9 => "just now".into(),
        10..=59 => format!("{secs}s ago"),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        86_400..=2_591_999 => format!("{}d ago", secs / 86_400),
        _ => ts.get(..10).unwrap_or(ts).to_string(),
    }
}

/// A timestamp without milliseconds and zone, for transcripts: "2026-01-01 00:00:01".
pub fn short_time(ts: &str) -> String {
    match parse_time(ts) {
        Some(t) => {
            let s = humantime::format_rfc3339_seconds(t).to_string();
            s.trim_end_matches('Z').replace('T', " ")
        }
        None => ts.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Text.

/// The first `n` characters of `s`, with "…" when cut.
pub fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// `s` on one line: runs of whitespace become one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The shortest prefixes, at least 8 characters, that tell ids apart: sorted
/// once, so that a table of ten thousand sessions (or a tree of as many
/// messages) looks each id up by a binary search instead of against every
/// other.
pub struct ShortIds<'a> {
    sorted: Vec<&'a str>,
}

impl<'a> ShortIds<'a> {
    pub fn new(all: impl IntoIterator<Item = &'a str>) -> ShortIds<'a> {
        let mut sorted: Vec<&str> = all.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        ShortIds { sorted }
    }

    /// The shortest prefix of `id`, at least 8 characters, that no other id
    /// of the set starts with (`id` itself when another id starts with all of
    /// it). `id` need not be in the set. The other id sharing the longest
    /// prefix with `id` is one of its neighbours in sorted order.
    pub fn of<'b>(&self, id: &'b str) -> &'b str {
        const MIN: usize = 8;
        let common = |o: &str| {
            o.bytes()
                .zip(id.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let at = self.sorted.partition_point(|o| *o < id);
        let need = [at.checked_sub(1), Some(at), Some(at + 1)]
            .into_iter()
            .flatten()
            .filter_map(|i| self.sorted.get(i))
            .filter(|o| **o != id)
            .map(|o| common(o) + 1)
            .max()
            .unwrap_or(0);
        let mut n = need.max(MIN).min(id.len());
        while !id.is_char_boundary(n) {
            n += 1;
        }
        &id[..n]
    }
}

// ---------------------------------------------------------------------------
// The store.

pub struct Ctx {
    pub store: Store,
    pub json: bool,
}

pub fn store_options(g: &Global) -> Result<StoreOptions> {
    let mut options = match &g.store_options {
        Some(json) => StoreOptions::from_json(json)?,
        None => StoreOptions::default(),
    };
    if g.home.is_some() {
        options.home = g.home.clone();
    }
    if let Some(start_ms) = g.deterministic {
        options.deterministic = Some(Deterministic::new(start_ms, 1000, start_ms));
    }
    if let Some(path) = &g.deterministic_state {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::new(
                ErrorKind::of_io(&e),
                format!("deterministic state {}: {e}", path.display()),
            )
        })?;
        let state = serde_json::from_str(&text).map_err(|e| {
            CliError::new(
                ErrorKind::InvalidInput,
                format!("deterministic state {}: {e}", path.display()),
            )
        })?;
        options.deterministic = Some(state);
    }
    Ok(options)
}

/// Write where the deterministic run stands back to `--deterministic-state`,
/// for the next command to continue it.
pub fn save_deterministic_state(g: &Global, store: &Store) -> Result<()> {
    let (Some(path), Some(state)) = (&g.deterministic_state, store.deterministic_state()) else {
        return Ok(());
    };
    let json = serde_json::to_vec(&state)
        .map_err(|e| CliError::new(ErrorKind::Internal, format!("deterministic state: {e}")))?;
    std::fs::write(path, json).map_err(|e| {
        CliError::new(
            ErrorKind::of_io(&e),
            format!("deterministic state {}: {e}", path.display()),
        )
    })
}

impl Ctx {
    pub fn open(g: &Global) -> Result<Ctx> {
        let project = match &g.project {
            Some(p) => p.clone(),
            None => std::env::current_dir().map_err(|e| {
                CliError::new(ErrorKind::of_io(&e), format!("the current directory: {e}"))
            })?,
        };
        Ok(Ctx {
            store: Store::open(&project, store_options(g)?)?,
            json: g.json,
        })
    }

    /// The session named by `id`: the id itself, or the one session whose id
    /// starts with it.
    pub fn resolve(&self, id: &str) -> Result<String> {
        Ok(self.store.resolve_session(id)?)
    }

    /// The message named by `msg` (an id or a unique prefix) in session `id`.
    pub fn resolve_message(&self, id: &str, msg: &str) -> Result<String> {
        Ok(self.store.read_session(id)?.resolve_message(msg)?)
    }

    pub fn log_path(&self, id: &str) -> PathBuf {
        self.store.log_path(id).unwrap_or_default()
    }
}

/// The plain text of a message's content (strings, and `text` blocks).
pub fn content_text(m: &Value) -> String {
    m.get("content")
        .and_then(sessionkit::content_text)
        .unwrap_or_default()
}

#[cfg(test)]
mod short_id_tests {
    use super::ShortIds;

    /// The definition: the shortest prefix, 8 characters at least, that no
    /// other id starts with.
    fn by_definition<'a>(id: &'a str, all: &[&str]) -> &'a str {
        (8.min(id.len())..=id.len())
            .filter(|&n| id.is_char_boundary(n))
            .map(|n| &id[..n])
            .find(|p| !all.iter().any(|o| *o != id && o.starts_with(p)))
            .unwrap_or(id)
    }

    #[test]
    fn each_id_gets_the_shortest_prefix_no_other_id_starts_with() {
        let all = [
            "019b76e5-512a",
            "019b76e5-512b",
            "019b76e5-50e0",
            "019b76e6",
            "abc",
            "019b76e5-512",
            "zzzzzzzzzzzzzzzz",
            "019b76e5-512a77",
            "éééééééé",
        ];
        let short = ShortIds::new(all);
        for id in all.iter().chain(&["019b76e5-5", "019b76e7-0000", "00"]) {
            assert_eq!(short.of(id), by_definition(id, &all), "{id}");
        }
    }
}
