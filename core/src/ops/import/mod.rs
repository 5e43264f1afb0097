//! Import of other agents' transcripts — Claude Code, the Codex CLI, pi,
//! Gemini CLI, GitHub Copilot CLI, opencode and seed-style flat logs — into sessionkit sessions (FORMAT.md §22).
//!
//! A format module turns a source file's lines into items (messages, compaction
//! summaries, lines kept only as `import` records); `write` puts the items the
//! store does not hold yet into the session (and subagent) logs, with each
//! source line's exact text, and records how far the source was imported.

mod claude_code;
mod codex;
mod copilot_cli;
mod deepcode;
mod gemini_cli;
mod locations;
mod opencode;
mod pi;
mod source;
mod write;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::format::project::check_mappings;
pub use crate::format::project::PathMapping;
use crate::options::StoreOptions;
pub use locations::{default_sources, import_source_of, sort_import_sources, DefaultSource};
pub use source::MAX_IMPORT_SOURCE_BYTES;

/// The transcript formats an import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportFormat {
    /// Claude Code: `~/.claude/projects/<dir>/<uuid>.jsonl`, its
    /// `agent-<id>.jsonl` sidechains beside it or under `<uuid>/subagents/`.
    ClaudeCode,
    /// The Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// A seed-style flat transcript: one message object per line.
    Deepcode,
    /// The pi coding agent: `~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`.
    Pi,
    /// Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.jsonl`.
    GeminiCli,
    /// GitHub Copilot CLI: `~/.copilot/session-state/<uuid>/events.jsonl`.
    CopilotCli,
    /// opencode: the SQLite database `~/.local/share/opencode/opencode.db`
    /// (1.2 and later), one session per opencode session; or a session file
    /// of its earlier JSON tree, `storage/session/<project>/ses_*.json`.
    Opencode,
}

impl ImportFormat {
    /// Every format.
    pub const ALL: [ImportFormat; 7] = [
        ImportFormat::ClaudeCode,
        ImportFormat::Codex,
        ImportFormat::Deepcode,
        ImportFormat::Pi,
        ImportFormat::GeminiCli,
        ImportFormat::CopilotCli,
        ImportFormat::Opencode,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ImportFormat::ClaudeCode => "claude-code",
            ImportFormat::Codex => "codex",
            ImportFormat::Deepcode => "deepcode",
            ImportFormat::Pi => "pi",
            ImportFormat::GeminiCli => "gemini-cli",
            ImportFormat::CopilotCli => "copilot-cli",
            ImportFormat::Opencode => "opencode",
        }
    }
}

impl std::str::FromStr for ImportFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<ImportFormat> {
        match s {
            "claude-code" => Ok(ImportFormat::ClaudeCode),
            "codex" => Ok(ImportFormat::Codex),
            "deepcode" => Ok(ImportFormat::Deepcode),
            "pi" => Ok(ImportFormat::Pi),
            "gemini-cli" => Ok(ImportFormat::GeminiCli),
            "copilot-cli" => Ok(ImportFormat::CopilotCli),
            "opencode" => Ok(ImportFormat::Opencode),
            _ => Err(Error::invalid(format!(
                "import format {s:?} is not one of \"claude-code\", \"codex\", \"deepcode\", \"pi\", \"gemini-cli\", \"copilot-cli\", \"opencode\""
            ))),
        }
    }
}

/// What to import and where.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportOptions {
    /// The format of every source; detected per file when absent.
    pub from: Option<ImportFormat>,
    /// The project to import into; by default the one each source names (its
    /// working directory), whether or not that directory exists here.
    pub project: Option<PathBuf>,
    /// Path prefixes to remap in the working directory a source names (not in
    /// `project`): another machine's home, a moved checkout. Whole components
    /// only; the longest `from` that applies wins. As JSON a list of
    /// `{"from": "/home/a", "to": "/Users/b"}`.
    #[serde(default)]
    pub map_paths: Vec<PathMapping>,
    /// The store's options (its home, durability, limits). Whatever
    /// `maxSessions` says, an import prunes no session.
    #[serde(default)]
    pub store: StoreOptions,
}

impl ImportOptions {
    /// Parse options from a JSON object (`from`, `project`, `mapPaths`, `store`); empty
    /// text gives the defaults. Fails with `InvalidInput` on unknown fields.
    pub fn from_json(json: &str) -> Result<ImportOptions> {
        crate::format::json::options_from_json("import options", json)
    }

    /// Refuse options no source could be imported with: invalid store
    /// options or home (`InvalidInput`), a path mapping that is not two
    /// absolute paths (`InvalidInput`), an empty project (`InvalidInput`), a
    /// project that does not exist (`NotFound`) or is not a directory
    /// (`InvalidInput`). Reads only.
    fn check(&self) -> Result<()> {
        self.store.validate()?;
        self.store.resolve_home()?;
        check_mappings("import options: mapPaths", &self.map_paths)?;
        let Some(project) = &self.project else {
            return Ok(());
        };
        if project.as_os_str().is_empty() {
            return Err(Error::invalid(
                "import options: project is empty (leave it out to import each source \
                 into the project it names)",
            ));
        }
        let meta = std::fs::metadata(project).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound(format!(
                "import options: project directory {}",
                project.display()
            )),
            _ => Error::io(project, e),
        })?;
        if !meta.is_dir() {
            return Err(Error::invalid(format!(
                "import options: project {} is not a directory",
                project.display()
            )));
        }
        Ok(())
    }
}

/// What became of one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SourceOutcome {
    /// Lines were added (or the session was created).
    Imported,
    /// Every complete line was imported before: nothing changed.
    UpToDate,
    /// The part imported before is no longer what the file holds (it was
    /// rewritten or truncated): nothing was imported.
    Changed,
    /// Nothing could be imported; `error` says why.
    Failed,
}

/// A line of a source, by number (1-based), with what happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineNote {
    /// The line number in the source file, from 1.
    pub line: u64,
    /// Why it was skipped, or what of it could not be mapped.
    pub reason: String,
}

/// The import of one source file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceReport {
    /// The source file, as found.
    pub path: PathBuf,
    /// Its format, named or detected.
    pub format: Option<ImportFormat>,
    /// What became of it.
    pub outcome: SourceOutcome,
    /// Why it failed, or how it changed.
    pub error: Option<String>,
    /// The canonical project root it was imported into.
    pub project: Option<PathBuf>,
    /// Where the project came from when that needs saying: a working
    /// directory remapped, or one that does not exist on this machine.
    pub notice: Option<String>,
    /// The session its lines went to.
    pub session_id: Option<String>,
    /// The subagent its lines went to, for a sidechain file.
    pub agent_id: Option<String>,
    /// Whether this import created the session.
    pub created: bool,
    /// Complete lines read that were not imported before.
    pub lines: u64,
    /// Messages added (to the session and its subagents).
    pub messages_added: u64,
    /// `import` records added: source lines kept without a message.
    pub records_added: u64,
    /// Lines that could not be kept at all (not JSON, not an object, torn).
    pub skipped: Vec<LineNote>,
    /// Lines kept only as their original JSON, or mapped with a loss the
    /// reason names.
    pub unmapped: Vec<LineNote>,
}

impl SourceReport {
    fn new(path: &Path, format: Option<ImportFormat>) -> SourceReport {
        SourceReport {
            path: path.to_path_buf(),
            format,
            outcome: SourceOutcome::UpToDate,
            error: None,
            project: None,
            notice: None,
            session_id: None,
            agent_id: None,
            created: false,
            lines: 0,
            messages_added: 0,
            records_added: 0,
            skipped: Vec::new(),
            unmapped: Vec::new(),
        }
    }

    fn failed(mut self, e: impl std::fmt::Display) -> SourceReport {
        self.outcome = SourceOutcome::Failed;
        self.error = Some(e.to_string());
        self
    }
}

/// The import of every source given.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// One report per source file, in the order they were imported.
    pub sources: Vec<SourceReport>,
    /// Messages added in all.
    pub messages_added: u64,
    /// Sources that failed or had changed.
    pub failed: usize,
}

/// How far an import got, for a progress bar.
#[derive(Debug, Clone)]
pub struct ImportProgress {
    /// Source files done.
    pub done: usize,
    /// Source files in all.
    pub total: usize,
    /// The file being imported.
    pub path: PathBuf,
}

/// Import `paths` (files, or directories searched for `*.jsonl` files,
/// opencode databases and opencode's session files).
pub(crate) fn import(
    paths: &[PathBuf],
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport> {
    // Options that could never work are the call's error, before any source
    // is read or anything written; a source's own problems are in its report.
    options.check()?;
    let files = source::expand(paths)?;
    let mut store_options = options.store.clone();
    // An import must not delete anything: the oldest sessions it brings in
    // would be the first pruned.
    store_options.max_sessions = 0;
    let mut report = ImportReport::default();
    let total = files.len();
    for (done, path) in files.iter().enumerate() {
        progress(ImportProgress {
            done,
            total,
            path: path.clone(),
        });
        // A SQLite database is opencode's: one report per session it holds.
        let opencode = matches!(options.from, None | Some(ImportFormat::Opencode));
        let rs = if opencode && opencode::is_session_file(path) {
            vec![opencode::import_json_session(path, options, &store_options)]
        } else if opencode && opencode::is_database(path) {
            opencode::import_db(path, options, &store_options)
        } else {
            vec![write::import_file(path, options, &store_options)]
        };
        for r in rs {
            report.messages_added += r.messages_added;
            if matches!(r.outcome, SourceOutcome::Failed | SourceOutcome::Changed) {
                report.failed += 1;
            }
            report.sources.push(r);
        }
    }
    progress(ImportProgress {
        done: total,
        total,
        path: PathBuf::new(),
    });
    Ok(report)
}

/// What a format module makes of a source file.
#[derive(Debug, Default)]
pub(super) struct Converted {
    /// The session the source belongs to.
    session_id: Option<String>,
    /// For a sidechain file: the subagent every line goes to.
    agent_id: Option<String>,
    /// The working directory the source names.
    project: Option<PathBuf>,
    /// Why the source names no working directory, when that needs saying.
    no_project: Option<String>,
    created_at: Option<String>,
    title: Option<String>,
    items: Vec<Item>,
}

/// One source line made into something to store.
#[derive(Debug)]
pub(super) struct Item {
    line: u64,
    /// The subagent it goes to (an inline sidechain line), else the session or
    /// the file's subagent.
    agent: Option<String>,
    what: What,
    /// What of the line could not be mapped (listed in the report).
    note: Option<String>,
}

#[derive(Debug)]
pub(super) enum What {
    Message(Map<String, Value>),
    /// A summary that replaces everything before it in the model's view.
    Compaction(Map<String, Value>),
    /// Kept only as an `import` record.
    Record,
}

impl Item {
    fn message(line: u64, m: Map<String, Value>) -> Item {
        Item {
            line,
            agent: None,
            what: What::Message(m),
            note: None,
        }
    }

    /// Message `m` as the summary of a compaction ([`as_summary`]).
    fn compaction(line: u64, m: Map<String, Value>) -> Item {
        Item {
            line,
            agent: None,
            what: What::Compaction(as_summary(m)),
            note: None,
        }
    }

    fn record(line: u64, note: impl Into<String>) -> Item {
        Item {
            line,
            agent: None,
            what: What::Record,
            note: Some(note.into()),
        }
    }

    fn noted(mut self, note: Option<String>) -> Item {
        self.note = note;
        self
    }
}

/// A valid session or agent id, or `None`.
fn path_id(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    crate::format::ids::validate_path_id("id", s)
        .ok()
        .map(|_| s.to_string())
}

/// A timestamp the store accepts (FORMAT.md §4), or `None`.
fn timestamp(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    crate::format::ids::parse_ms(s).map(|_| s.to_string())
}

/// A message object from its fields, in the store's field order.
fn message(id: &str, parent: Option<&str>, role: &str, time: Option<String>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), id.into());
    m.insert(
        "parentId".into(),
        parent.map(Value::from).unwrap_or(Value::Null),
    );
    m.insert("role".into(), role.into());
    if let Some(t) = time {
        m.insert("timestamp".into(), t.into());
    }
    m
}

/// Mark `m` as a compaction summary (as `Session::apply_compaction` writes
/// them): hidden in the transcript, the summary of the messages before it.
fn as_summary(mut m: Map<String, Value>) -> Map<String, Value> {
    m.insert("visible".into(), false.into());
    m.insert(
        "meta".into(),
        serde_json::json!({"compaction": {"imported": true}}),
    );
    m
}

/// `text` as a title: white space collapsed, cut to the index's
/// [`TITLE_CHARS`](crate::index::TITLE_CHARS) (FORMAT.md §10.3).
fn title_of(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(crate::index::TITLE_CHARS)
        .collect()
}

/// The title of an imported session the source gives none: its first visible
/// user text (the index would take injected context, hidden, as the title).
fn first_user_text(items: &[Item]) -> Option<String> {
    items.iter().find_map(|i| match &i.what {
        What::Message(m)
            if i.agent.is_none()
                && m.get("role").and_then(Value::as_str) == Some("user")
                && m.get("visible") != Some(&Value::Bool(false)) =>
        {
            m.get("content")
                .and_then(crate::format::records::content_text)
                .map(|t| title_of(&t))
                .filter(|t| !t.is_empty())
        }
        _ => None,
    })
}
