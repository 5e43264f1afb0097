//! Putting a converted source into the store: the items it does not hold yet,
//! each with its source line's exact text, then a progress record saying how
//! much of the source is in (FORMAT.md §22.1).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::source::{self, SourceFile};
use super::{
    claude_code, codex, copilot_cli, deepcode, gemini_cli, pi, Converted, ImportFormat,
    ImportOptions, Item, LineNote, SourceOutcome, SourceReport, What,
};
use crate::error::{Error, Result};
use crate::format::project::map_path;
use crate::format::records::BlobRef;
use crate::options::StoreOptions;
use crate::store::session::{CreateOptions, SessionCore, SubagentCore};
use crate::store::StoreCore;

/// The `type` of the records an import writes.
const IMPORT: &str = "import";

pub(super) fn import_file(
    path: &Path,
    options: &ImportOptions,
    store_options: &StoreOptions,
) -> SourceReport {
    let file = match SourceFile::read(path) {
        Ok(f) => f,
        Err(e) => return SourceReport::new(path, options.from).failed(e),
    };
    let format = options.from.or_else(|| source::detect(&file));
    let report = SourceReport::new(path, format);
    let Some(format) = format else {
        return report.failed(format!(
            "{}: not recognised as a Claude Code, Codex, pi, Gemini CLI, Copilot CLI or seed-style transcript \
             (name the format)",
            path.display()
        ));
    };
    let conv = match format {
        ImportFormat::ClaudeCode => claude_code::convert(path, &file),
        ImportFormat::Codex => codex::convert(&file),
        ImportFormat::Deepcode => deepcode::convert(path, &file),
        ImportFormat::Pi => pi::convert(&file),
        ImportFormat::GeminiCli => gemini_cli::convert(path, &file),
        ImportFormat::CopilotCli => copilot_cli::convert(path, &file),
        ImportFormat::Opencode => {
            return report.failed(format!(
                "{}: neither an opencode database (opencode.db) nor a session file of its \
                 JSON tree (storage/session/<project>/ses_*.json)",
                path.display()
            ))
        }
    };
    let mut report = report;
    let source_key = match std::fs::canonicalize(path) {
        Ok(k) => k.to_string_lossy().into_owned(),
        Err(e) => return report.failed(Error::io(path, e)),
    };
    let how = How {
        format,
        source_key,
        by_id: false,
    };
    match write(path, &file, &how, conv, options, store_options, &mut report) {
        Ok(()) => report,
        Err(e) => report.failed(e),
    }
}

/// Import one session of a database, its rows as the lines of `file`:
/// what is already in is what the log holds by message id (FORMAT.md §22.7).
pub(super) fn import_rows(
    path: &Path,
    source_key: &str,
    file: &SourceFile,
    conv: Converted,
    options: &ImportOptions,
    store_options: &StoreOptions,
) -> SourceReport {
    let mut report = SourceReport::new(path, Some(ImportFormat::Opencode));
    let how = How {
        format: ImportFormat::Opencode,
        source_key: source_key.to_string(),
        by_id: true,
    };
    match write(path, file, &how, conv, options, store_options, &mut report) {
        Ok(()) => report,
        Err(e) => report.failed(e),
    }
}

/// How a source is written.
struct How {
    format: ImportFormat,
    /// The `source` of its progress record.
    source_key: String,
    /// Whether what is already in is decided by message id alone (a
    /// database's rows, which change in place), not by the source's bytes
    /// and line numbers.
    by_id: bool,
}

/// The project a source names, if it can be taken as it is: a transcript is
/// not trusted to choose where it lands relative to whoever imports it, so a
/// relative working directory (`../../etc`, empty) is refused, as is one
/// holding a NUL.
fn source_project(path: &Path, named: &Path) -> Result<std::path::PathBuf> {
    let bytes = named.as_os_str().as_encoded_bytes();
    if bytes.contains(&0) {
        return Err(Error::invalid(format!(
            "{} names a working directory holding a NUL byte: give the project to import it into",
            path.display()
        )));
    }
    if !named.is_absolute() {
        return Err(Error::invalid(format!(
            "{} names the working directory {:?}, a relative path: give the project to import it into",
            path.display(),
            named
        )));
    }
    Ok(named.to_path_buf())
}

/// How much of a source an earlier import took in.
#[derive(Debug, Clone, Deserialize)]
struct Progress {
    bytes: u64,
    lines: u64,
    sha256: String,
}

/// What a target log already holds of imports.
#[derive(Default)]
struct Existing {
    ids: HashSet<String>,
    lines: HashSet<u64>,
    progress: HashMap<String, Progress>,
}

#[derive(Deserialize)]
struct LightLine {
    #[serde(rename = "type")]
    kind: Option<Value>,
    id: Option<Value>,
    line: Option<u64>,
    source: Option<String>,
    progress: Option<Progress>,
    import: Option<LightImport>,
}

#[derive(Deserialize)]
struct LightImport {
    line: Option<u64>,
}

/// Read what the log at `path` holds of imports (nothing if it does not exist).
fn existing(path: &Path) -> Result<Existing> {
    let mut out = Existing::default();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(path, e)),
    };
    for l in bytes.split(|&b| b == b'\n') {
        // Damaged lines are the reader's business; here they hold nothing.
        let Ok(l) = serde_json::from_slice::<LightLine>(l) else {
            continue;
        };
        match l.kind.as_ref().and_then(Value::as_str) {
            Some(IMPORT) => {
                if let Some(n) = l.line {
                    out.lines.insert(n);
                }
                if let (Some(s), Some(p)) = (l.source, l.progress) {
                    out.progress.insert(s, p);
                }
            }
            None | Some("message")
                if l.kind.as_ref().is_none_or(|k| k.is_string() || k.is_null()) =>
            {
                if let Some(id) = l.id.as_ref().and_then(Value::as_str) {
                    out.ids.insert(id.to_string());
                }
                if let Some(n) = l.import.and_then(|i| i.line) {
                    out.lines.insert(n);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

fn write(
    path: &Path,
    file: &SourceFile,
    how: &How,
    conv: Converted,
    options: &ImportOptions,
    store_options: &StoreOptions,
    report: &mut SourceReport,
) -> Result<()> {
    let store = match (&options.project, &conv.project) {
        (Some(given), _) => StoreCore::open(given, store_options.clone())?,
        (None, Some(named)) => {
            let named = source_project(path, named)?;
            let mapped = map_path(&options.map_paths, &named);
            let target = mapped.as_deref().unwrap_or(&named);
            let (store, exists) = StoreCore::open_recorded(target, store_options.clone())?;
            let mut notice = Vec::new();
            if mapped.is_some() {
                notice.push(format!(
                    "working directory {} mapped to {}",
                    named.display(),
                    target.display()
                ));
            }
            if !exists {
                notice.push(format!(
                    "the recorded project directory {} does not exist here: imported into its \
                     project all the same (give the project, or map the path, to put it elsewhere)",
                    target.display()
                ));
            }
            report.notice = (!notice.is_empty()).then(|| notice.join("; "));
            store
        }
        (None, None) => {
            return Err(Error::invalid(format!(
                "{} names no working directory{}: give the project to import it into",
                path.display(),
                conv.no_project
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default()
            )))
        }
    };
    report.project = Some(store.project_root().to_path_buf());
    let session_id = conv
        .session_id
        .clone()
        .ok_or_else(|| Error::invalid(format!("{} names no valid session id", path.display())))?;
    report.session_id = Some(session_id.clone());
    report.agent_id = conv.agent_id.clone();
    let format = how.format;
    let source_key = how.source_key.clone();

    // Where this source's progress is kept: the log its lines go to.
    let progress_log = match &conv.agent_id {
        None => store.log_path(&session_id)?,
        Some(a) => store.subagent_log_path(&session_id, a)?,
    };
    let mut start_line = 0;
    let mut have = existing(&progress_log)?;
    let prior = have.progress.remove(&source_key).filter(|_| !how.by_id);
    if how.by_id {
        report.skipped = file.skipped.clone();
    } else if let Some(p) = prior {
        let prefix_ok =
            p.bytes <= file.complete as u64 && file.prefix_sha256(p.bytes as usize) == p.sha256;
        if !prefix_ok {
            report.outcome = SourceOutcome::Changed;
            report.error = Some(format!(
                "{}: its first {} bytes are not what was imported into session {session_id}; \
                 not imported again (delete the session to import it anew)",
                path.display(),
                p.bytes
            ));
            return Ok(());
        }
        report.skipped = after(&file.skipped, p.lines);
        if p.bytes == file.complete as u64 {
            return Ok(());
        }
        start_line = p.lines;
    } else {
        report.skipped = file.skipped.clone();
    }
    report.lines = file.lines.iter().filter(|l| l.number > start_line).count() as u64;
    let mut conv = conv;
    if how.by_id {
        // Rows already in (by message id) are not written again; the
        // session's own row is recorded once, when its log is new.
        let new_log = have.ids.is_empty() && have.lines.is_empty();
        conv.items.retain(|i| match &i.what {
            What::Message(m) | What::Compaction(m) => m
                .get("id")
                .and_then(Value::as_str)
                .is_none_or(|id| !have.ids.contains(id)),
            What::Record => new_log,
        });
        let mut lines: Vec<u64> = conv.items.iter().map(|i| i.line).collect();
        lines.dedup();
        report.lines = lines.len() as u64;
        if conv.items.is_empty() && !new_log {
            return Ok(());
        }
    }

    let title = conv.title.clone();
    // The items not imported before, by target log (`None`: the session).
    let mut targets: Vec<(Option<String>, Vec<Item>)> = Vec::new();
    for item in conv.items.into_iter().filter(|i| i.line > start_line) {
        if let Some(note) = &item.note {
            report.unmapped.push(LineNote {
                line: item.line,
                reason: note.clone(),
            });
        }
        let target = item.agent.clone().or(conv.agent_id.clone());
        match targets.iter_mut().find(|(t, _)| *t == target) {
            Some((_, items)) => items.push(item),
            None => targets.push((target, vec![item])),
        }
    }
    if let Some(a) = &conv.agent_id {
        // A sidechain file's subagent exists even with no line to add: its log
        // holds the file's progress.
        if !targets.iter().any(|(t, _)| t.as_ref() == Some(a)) {
            targets.push((Some(a.clone()), Vec::new()));
        }
    }
    // The session first: subagents hang from it.
    targets.sort_by_key(|(t, _)| t.is_some());

    let text_of: HashMap<u64, &str> = file
        .lines
        .iter()
        .map(|l| (l.number, l.text.as_str()))
        .collect();
    let times = times_of(file);
    let last_line = bytecount_lines(&file.bytes[..file.complete]);
    let ctx = Ctx {
        store: &store,
        format,
        by_id: how.by_id,
        text_of: &text_of,
        times: &times,
        last_time: file
            .lines
            .iter()
            .rev()
            .find_map(|l| times.get(&l.number))
            .cloned(),
    };

    let session = match store.open_session(&session_id) {
        Ok(s) => s,
        Err(e) if e.kind() == crate::error::ErrorKind::NotFound => {
            report.created = true;
            if conv.agent_id.is_some() {
                report.unmapped.push(LineNote {
                    line: 0,
                    reason: format!(
                        "session {session_id} was not imported yet: created empty to hold the subagent"
                    ),
                });
            }
            let title = title.filter(|_| conv.agent_id.is_none());
            SessionCore::create_at(
                &store,
                CreateOptions {
                    title,
                    id: Some(session_id.clone()),
                },
                conv.created_at.clone().filter(|_| conv.agent_id.is_none()),
            )?
        }
        Err(e) => return Err(e),
    };
    let result = write_targets(&ctx, &session, targets, report);
    if let Err(e) = result {
        if report.created && report.messages_added == 0 {
            // Nothing of the source is in: no empty session is left behind.
            session.close()?;
            store.delete_session(&session_id)?;
            report.created = false;
        }
        return Err(e);
    }
    // How far the source is in, so that the next import takes only what follows.
    let mut rec = Map::new();
    rec.insert("type".into(), IMPORT.into());
    if let Some(t) = &ctx.last_time {
        rec.insert("timestamp".into(), t.clone().into());
    }
    rec.insert("format".into(), ctx.format.name().into());
    rec.insert("source".into(), source_key.into());
    rec.insert(
        "progress".into(),
        json!({"bytes": file.complete, "lines": last_line, "sha256": file.prefix_sha256(file.complete)}),
    );
    match &conv.agent_id {
        // What the source holds has ended as far as an import can tell: the
        // session says so, at the source's last time (FORMAT.md §22.1).
        None => session.append_records(vec![ended(&ctx), rec])?,
        Some(a) => {
            session.open_subagent(a)?.append_with(Vec::new(), &[rec])?;
        }
    }
    session.close()?;
    report.outcome = SourceOutcome::Imported;
    Ok(())
}

struct Ctx<'a> {
    store: &'a StoreCore,
    format: ImportFormat,
    /// Lines are not identities (a database's rows): filter by id only.
    by_id: bool,
    text_of: &'a HashMap<u64, &'a str>,
    times: &'a HashMap<u64, String>,
    /// The time of the source's last line (its own or the last before it).
    last_time: Option<String>,
}

fn write_targets(
    ctx: &Ctx<'_>,
    session: &SessionCore,
    targets: Vec<(Option<String>, Vec<Item>)>,
    report: &mut SourceReport,
) -> Result<()> {
    for (target, items) in targets {
        match target {
            None => {
                let have = existing(session.path())?;
                write_session(ctx, session, fresh(items, &have, ctx.by_id), report)?;
            }
            Some(agent) => {
                let path = ctx.store.subagent_log_path(session.id(), &agent)?;
                let have = existing(&path)?;
                let items = fresh(items, &have, ctx.by_id);
                // The spawn and result records take the source's times, so
                // that the session's updatedAt stays the source's.
                let time = |i: Option<&Item>| i.and_then(|i| ctx.times.get(&i.line)).cloned();
                let (first, last) = (time(items.first()), time(items.last()));
                let (sub, spawned) = if path.exists() {
                    (session.open_subagent(&agent)?, false)
                } else {
                    let meta = json!({"importedFrom": ctx.format.name()});
                    let at = first.or_else(|| ctx.last_time.clone());
                    (session.spawn_subagent_at(Some(&agent), meta, at)?, true)
                };
                write_subagent(ctx, &sub, items, report)?;
                if spawned {
                    let at = last.or_else(|| ctx.last_time.clone());
                    sub.finish_at(json!({"imported": true}), false, at)?;
                }
            }
        }
    }
    Ok(())
}

/// The items whose message or line the log does not hold yet.
fn fresh(items: Vec<Item>, have: &Existing, by_id: bool) -> Vec<Item> {
    items
        .into_iter()
        .filter(|i| by_id || !have.lines.contains(&i.line))
        .filter(|i| match &i.what {
            What::Message(m) | What::Compaction(m) => m
                .get("id")
                .and_then(Value::as_str)
                .is_none_or(|id| !have.ids.contains(id)),
            What::Record => true,
        })
        .collect()
}

/// Messages and records between compactions, each run in one write.
#[derive(Default)]
struct Run {
    messages: Vec<Value>,
    records: Vec<Map<String, Value>>,
}

impl Run {
    fn push(&mut self, ctx: &Ctx<'_>, item: Item) -> Result<()> {
        match item.what {
            What::Message(m) | What::Compaction(m) => self
                .messages
                .push(Value::Object(with_source(ctx, m, item.line)?)),
            What::Record => self.records.push(line_record(ctx, item.line)?),
        }
        Ok(())
    }
}

fn write_session(
    ctx: &Ctx<'_>,
    session: &SessionCore,
    items: Vec<Item>,
    report: &mut SourceReport,
) -> Result<()> {
    let mut run = Run::default();
    for item in items {
        if !matches!(item.what, What::Compaction(_)) {
            run.push(ctx, item)?;
            continue;
        }
        flush_session(session, std::mem::take(&mut run), report)?;
        let (line, What::Compaction(m)) = (item.line, item.what) else {
            continue;
        };
        let summary = Value::Object(with_source(ctx, m, line)?);
        let replaces: Vec<String> = session
            .read()?
            .log()
            .model_items()?
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
            .collect();
        let parent_is_head =
            summary.get("parentId").and_then(Value::as_str) == session.head().as_deref();
        let compacted = if parent_is_head && !replaces.is_empty() {
            session.apply_compaction_with(&replaces, summary.clone())
        } else {
            Err(Error::invalid(
                "its parent is not the end of the conversation",
            ))
        };
        match compacted {
            Ok(_) => report.messages_added += 1,
            // Only a summary that cannot be a compaction here is kept as a plain
            // message; an I/O error fails the source, never passes as mapped.
            Err(e) if e.kind() == crate::error::ErrorKind::InvalidInput => {
                report.unmapped.push(LineNote {
                    line,
                    reason: format!("compaction summary kept as a plain message: {e}"),
                });
                session.append_batch(vec![summary])?;
                report.messages_added += 1;
            }
            Err(e) => return Err(e),
        }
    }
    flush_session(session, run, report)
}

fn flush_session(session: &SessionCore, run: Run, report: &mut SourceReport) -> Result<()> {
    let records = run.records;
    let n = records.len() as u64;
    if run.messages.is_empty() {
        if !records.is_empty() {
            session.append_records(records)?;
        }
    } else {
        let m = run.messages.len() as u64;
        let extra = move |_: &[Map<String, Value>]| Ok(records.clone());
        session.append_with(run.messages, Some(&extra))?;
        report.messages_added += m;
    }
    report.records_added += n;
    Ok(())
}

fn write_subagent(
    ctx: &Ctx<'_>,
    sub: &SubagentCore,
    items: Vec<Item>,
    report: &mut SourceReport,
) -> Result<()> {
    let mut run = Run::default();
    for item in items {
        run.push(ctx, item)?;
    }
    if run.messages.is_empty() && run.records.is_empty() {
        return Ok(());
    }
    report.messages_added += run.messages.len() as u64;
    report.records_added += run.records.len() as u64;
    sub.append_with(run.messages, &run.records)?;
    Ok(())
}

/// `m` with its source line under `import` (FORMAT.md §22.1).
fn with_source(ctx: &Ctx<'_>, mut m: Map<String, Value>, line: u64) -> Result<Map<String, Value>> {
    let mut src = Map::new();
    src.insert("format".into(), ctx.format.name().into());
    src.insert("line".into(), line.into());
    raw_into(ctx, &mut src, line)?;
    m.insert(IMPORT.into(), Value::Object(src));
    Ok(m)
}

/// The `import` record of a source line kept without a message.
fn line_record(ctx: &Ctx<'_>, line: u64) -> Result<Map<String, Value>> {
    let mut rec = record(ctx, line);
    raw_into(ctx, &mut rec, line)?;
    Ok(rec)
}

fn record(ctx: &Ctx<'_>, line: u64) -> Map<String, Value> {
    let mut rec = Map::new();
    rec.insert("type".into(), IMPORT.into());
    if let Some(t) = ctx.times.get(&line) {
        rec.insert("timestamp".into(), t.clone().into());
    }
    rec.insert("format".into(), ctx.format.name().into());
    rec.insert("line".into(), line.into());
    rec
}

/// The `state` record an import ends a session's lines with: status
/// `completed`, at the time of the source's last line.
fn ended(ctx: &Ctx<'_>) -> Map<String, Value> {
    let mut rec = Map::new();
    rec.insert("type".into(), "state".into());
    if let Some(t) = &ctx.last_time {
        rec.insert("timestamp".into(), t.clone().into());
    }
    rec.insert("set".into(), json!({"status": "completed"}));
    rec
}

/// The line's exact text as `raw`, or, above the blob threshold, as a blob
/// (`rawBlob`) so that a long line never makes a huge log line.
fn raw_into(ctx: &Ctx<'_>, to: &mut Map<String, Value>, line: u64) -> Result<()> {
    let text = ctx.text_of.get(&line).copied().unwrap_or_default();
    if text.len() > ctx.store.options().blob_threshold {
        let BlobRef { sha256, bytes } = ctx
            .store
            .blobs()
            .put(text.as_bytes(), ctx.store.durable())?;
        to.insert("rawBlob".into(), json!({"sha256": sha256, "bytes": bytes}));
    } else {
        to.insert("raw".into(), text.into());
    }
    Ok(())
}

/// Each line's time: its own `timestamp`, else the last one before it.
fn times_of(file: &SourceFile) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    let mut last: Option<String> = None;
    for l in &file.lines {
        if let Ok(o) = &l.value {
            if let Some(t) = super::timestamp(o.get("timestamp")) {
                last = Some(t);
            }
        }
        if let Some(t) = &last {
            out.insert(l.number, t.clone());
        }
    }
    // The progress record takes the time of the last line.
    out
}

fn bytecount_lines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

fn after(notes: &[LineNote], line: u64) -> Vec<LineNote> {
    notes.iter().filter(|n| n.line > line).cloned().collect()
}
