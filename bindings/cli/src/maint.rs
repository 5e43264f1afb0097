//! Store maintenance: doctor (verify, repair) and gc.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use serde_json::Value;
use sessionkit::{
    CheckpointProblem, DanglingCheckpoint, ErrorKind, FileHistoryCheck, GcPhase, JournalReport,
    SkippedLine,
};

use crate::ctx::{paint, Ctx, Output, Result, BAD, BOLD, DIM, EXIT_PROBLEMS, GOOD, WARN};

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct IndexCheck {
    /// ok, missing, corrupt, unsupported (a newer version, left alone) or error.
    state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Logs without an index entry.
    missing_entries: Vec<String>,
    /// Index entries without a log.
    orphan_entries: Vec<String>,
    /// Entries folded from a log of another length.
    stale_entries: Vec<String>,
    /// What reading the index journal found (unreadable lines, a torn tail).
    #[serde(skip_serializing_if = "Option::is_none")]
    journal: Option<JournalReport>,
}

impl IndexCheck {
    fn journal_damaged(&self) -> bool {
        self.journal
            .as_ref()
            .is_some_and(|j| !j.skipped.is_empty() || j.torn_tail.is_some())
    }

    fn needs_rebuild(&self) -> bool {
        matches!(self.state.as_str(), "missing" | "corrupt")
            || !self.missing_entries.is_empty()
            || !self.orphan_entries.is_empty()
            || !self.stale_entries.is_empty()
            || self.journal_damaged()
    }
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct LogCheck {
    /// The session id, or `<session>/<agent>` for a subagent sidechain.
    id: String,
    path: String,
    messages: usize,
    /// The log could not be read at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    torn_tail: Option<SkippedLine>,
    skipped: Vec<SkippedLine>,
    /// Skipped lines not yet copied to the `.corrupt` file.
    unquarantined: usize,
    /// Records in the `.corrupt` file.
    quarantined: usize,
    broken_chains: Vec<sessionkit::BrokenChain>,
    duplicate_ids: Vec<String>,
    warnings: Vec<String>,
    /// Messages whose blob is missing or does not match its digest.
    bad_blobs: Vec<String>,
    /// Messages whose checkpointHash names no snapshot of the session (details,
    /// with the reason, in the report's `fileHistory.danglingCheckpoints`).
    dangling_checkpoints: Vec<String>,
    /// Why the file-history check did not run (unreadable log or repository).
    #[serde(skip_serializing_if = "Option::is_none")]
    file_history_unchecked: Option<String>,
    /// What --repair did.
    repaired: Vec<String>,
    /// File-history findings of this session that mean lost data, and those
    /// worth knowing only (in `fileHistory` of the JSON report).
    #[serde(skip)]
    history_problems: Vec<String>,
    #[serde(skip)]
    history_notices: Vec<String>,
}

impl LogCheck {
    fn repairable(&self) -> bool {
        self.torn_tail.is_some() || self.unquarantined > 0
    }
    /// Problems --repair cannot fix without losing or inventing data.
    fn unrepairable(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = &self.error {
            out.push(e.clone());
        }
        for b in &self.broken_chains {
            out.push(format!(
                "message {:?} has a missing parent {:?}",
                b.message_id, b.missing_parent_id
            ));
        }
        if !self.duplicate_ids.is_empty() {
            out.push(format!(
                "duplicate message ids {}",
                self.duplicate_ids.join(", ")
            ));
        }
        out.extend(self.warnings.iter().cloned());
        out.extend(self.bad_blobs.iter().cloned());
        out.extend(self.history_problems.iter().cloned());
        out
    }
}

/// The file history against the logs.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct HistoryCheck {
    /// ok, absent (the store never took a snapshot) or error (not readable).
    state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(flatten)]
    found: FileHistoryCheck,
}

impl HistoryCheck {
    fn healthy(&self) -> bool {
        self.state != "error" && self.found.is_healthy()
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DoctorReport {
    store: String,
    ok: bool,
    repair: bool,
    index: IndexCheck,
    logs: Vec<LogCheck>,
    file_history: HistoryCheck,
    /// What --repair did to the store as a whole.
    repaired: Vec<String>,
}

fn quarantine_offsets(log: &Path) -> HashSet<u64> {
    let q = format!("{}.corrupt", log.display());
    std::fs::read_to_string(q)
        .map(|s| {
            s.lines()
                .filter_map(|l| {
                    serde_json::from_str::<Value>(l)
                        .ok()?
                        .get("offset")?
                        .as_u64()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn check_index(ctx: &Ctx, ids: &[String]) -> IndexCheck {
    let mut c = IndexCheck::default();
    let idx = match ctx.store.read_index() {
        Ok(Some(stored)) => {
            c.journal = Some(stored.journal);
            stored.index
        }
        Ok(None) => {
            c.state = "missing".into();
            return c;
        }
        Err(e) => {
            c.state = match e.kind() {
                ErrorKind::Corrupt => "corrupt",
                ErrorKind::Unsupported => "unsupported",
                _ => "error",
            }
            .into();
            c.error = Some(e.to_string());
            return c;
        }
    };
    c.state = "ok".into();
    for id in ids {
        let len = std::fs::metadata(ctx.log_path(id))
            .map(|m| m.len())
            .unwrap_or(0);
        match idx.get(id) {
            None => c.missing_entries.push(id.clone()),
            Some(e) if e.log_bytes != len => c.stale_entries.push(id.clone()),
            Some(_) => {}
        }
    }
    for e in &idx.sessions {
        if !ids.contains(&e.id) {
            c.orphan_entries.push(e.id.clone());
        }
    }
    c
}

fn check_view(c: &mut LogCheck, view: &sessionkit::SessionView, log: &Path) {
    let r = view.report();
    c.messages = view.message_count();
    c.torn_tail = r.torn_tail.clone();
    c.skipped = r.skipped.clone();
    let q = quarantine_offsets(log);
    c.quarantined = q.len();
    c.unquarantined = r.skipped.iter().filter(|s| !q.contains(&s.offset)).count();
    c.broken_chains = r.broken_chains.clone();
    c.duplicate_ids = r.duplicate_ids.clone();
    c.warnings = r.warnings.clone();
    if let Ok(nodes) = view.tree() {
        for n in nodes {
            if let Err(e) = view.message(&n.id) {
                c.bad_blobs.push(format!("message {:?}: {e}", n.id));
            }
        }
    }
}

fn check_session(ctx: &Ctx, id: &str) -> Vec<LogCheck> {
    let log = ctx.log_path(id);
    let mut c = LogCheck {
        id: id.to_string(),
        path: log.display().to_string(),
        ..LogCheck::default()
    };
    let mut out = Vec::new();
    match ctx.store.read_session(id) {
        Ok(view) => check_view(&mut c, &view, &log),
        Err(e) => c.error = Some(e.to_string()),
    }
    // Subagent sidechains.
    for meta in ctx.store.list_subagents(id).unwrap_or_default() {
        let Some(agent) = meta["agentId"].as_str() else {
            continue;
        };
        let path = ctx
            .store
            .dir()
            .join(id)
            .join("subagents")
            .join(format!("{agent}.jsonl"));
        let mut a = LogCheck {
            id: format!("{id}/{agent}"),
            path: path.display().to_string(),
            ..LogCheck::default()
        };
        match ctx.store.read_subagent(id, agent) {
            Ok(view) => check_view(&mut a, &view, &path),
            Err(e) => a.error = Some(e.to_string()),
        }
        out.push(a);
    }
    out.insert(0, c);
    out
}

/// The file history against the logs, read-only: no writer lock is taken, so a
/// session in use is checked too.
fn check_history(ctx: &Ctx) -> HistoryCheck {
    match ctx.store.check_file_history() {
        Ok(found) => HistoryCheck {
            state: if found.exists { "ok" } else { "absent" }.into(),
            error: None,
            found,
        },
        Err(e) => HistoryCheck {
            state: "error".into(),
            error: Some(e.to_string()),
            found: FileHistoryCheck::default(),
        },
    }
}

fn describe_checkpoint(d: &DanglingCheckpoint) -> String {
    let why = match d.reason {
        CheckpointProblem::Missing => "is missing from the file history (the snapshot was lost)",
        CheckpointProblem::NotOnBranch => "is not on this session's file-history branch",
        CheckpointProblem::NoFileHistory => {
            "cannot be found: the store has no file history (the log was written elsewhere)"
        }
        CheckpointProblem::NotASnapshotId => "is not a snapshot id",
    };
    format!(
        "message {:?}: its checkpointHash {:?} {why}; its files cannot be restored",
        d.message_id, d.checkpoint_hash
    )
}

/// Give each session log its file-history findings.
fn attach_history(logs: &mut [LogCheck], h: &HistoryCheck) {
    for c in logs.iter_mut().filter(|c| !c.id.contains('/')) {
        if c.error.is_some() {
            c.file_history_unchecked = Some("the log could not be read".into());
            continue;
        }
        if let Some(e) = &h.error {
            c.file_history_unchecked = Some(e.clone());
            continue;
        }
        for d in h
            .found
            .dangling_checkpoints
            .iter()
            .filter(|d| d.session_id == c.id)
        {
            c.dangling_checkpoints.push(d.message_id.clone());
            if d.reason.is_damage() {
                c.history_problems.push(describe_checkpoint(d));
            } else {
                c.history_notices.push(describe_checkpoint(d));
            }
        }
        for b in h.found.broken_refs.iter().filter(|b| b.session_id == c.id) {
            c.history_problems.push(format!(
                "its file-history ref {} reaches the missing commit {} (the session's snapshots and undo fail)",
                b.ref_name, b.missing_commit
            ));
        }
    }
}

fn repair_log(ctx: &Ctx, c: &mut LogCheck) {
    let (session, agent) = match c.id.split_once('/') {
        Some((s, a)) => (s.to_string(), Some(a.to_string())),
        None => (c.id.clone(), None),
    };
    let before_q = c.quarantined;
    let result = ctx.store.open_session(&session).and_then(|s| {
        if let Some(a) = &agent {
            drop(s.open_subagent(a)?);
        }
        s.close()
    });
    if let Err(e) = result {
        c.repaired.push(format!("could not open for repair: {e}"));
        return;
    }
    if let Some(t) = &c.torn_tail {
        c.repaired.push(format!(
            "terminated the torn last line {} (offset {}, {} bytes) with a newline",
            t.line, t.offset, t.length
        ));
    }
    let after_q = quarantine_offsets(Path::new(&c.path)).len();
    if after_q > before_q {
        c.repaired.push(format!(
            "quarantined {} line(s) to {}.corrupt",
            after_q - before_q,
            c.path
        ));
    }
}

pub fn doctor(ctx: &Ctx, repair: bool) -> Result<(Output, u8)> {
    let ids = ctx.session_ids()?;
    let mut index = check_index(ctx, &ids);
    let mut logs: Vec<LogCheck> = ids.iter().flat_map(|id| check_session(ctx, id)).collect();
    let mut repaired = Vec::new();
    if repair {
        let mut touched = false;
        for c in logs
            .iter_mut()
            .filter(|c| c.repairable() && c.error.is_none())
        {
            repair_log(ctx, c);
            touched = true;
        }
        if touched {
            // Re-read what the repair left, keeping what it did.
            let mut fresh: Vec<LogCheck> =
                ids.iter().flat_map(|id| check_session(ctx, id)).collect();
            for (f, old) in fresh.iter_mut().zip(logs.iter_mut()) {
                f.repaired = std::mem::take(&mut old.repaired);
            }
            logs = fresh;
        }
        if index.state == "unsupported" {
            repaired.push("left the index alone: it is of a newer version".to_string());
        } else if index.needs_rebuild() || touched {
            let r = ctx.store.rebuild_index()?;
            repaired.push(format!(
                "rebuilt the index from {} session log(s)",
                r.sessions
            ));
            index = check_index(ctx, &ids);
        }
    }
    let mut history = check_history(ctx);
    if repair && !history.found.orphan_refs.is_empty() {
        for r in ctx.store.prune_orphan_file_history()? {
            repaired.push(format!(
                "deleted the file-history ref {} of the deleted session {} (its objects go with the next gc)",
                r.ref_name, r.session_id
            ));
        }
        history = check_history(ctx);
    }
    attach_history(&mut logs, &history);
    let ok = !index.needs_rebuild()
        && index.state != "unsupported"
        && index.state != "error"
        && history.healthy()
        && logs
            .iter()
            .all(|c| !c.repairable() && c.unrepairable().is_empty());
    let report = DoctorReport {
        store: ctx.store.dir().display().to_string(),
        ok,
        repair,
        index,
        logs,
        file_history: history,
        repaired,
    };
    let code = if ok { 0 } else { EXIT_PROBLEMS };
    if ctx.json {
        return Ok((Output::json(&report)?, code));
    }
    Ok((Output::Text(doctor_text(&report)), code))
}

/// A check's state word, with the error that made it fail when there is one.
fn failed_state(state: &str, error: Option<&str>) -> String {
    match error {
        Some(e) => format!("{state}: {e}"),
        None => state.to_string(),
    }
}

fn doctor_text(r: &DoctorReport) -> String {
    let mut s = format!("{} {}\n", paint(BOLD, "store"), r.store);
    let i = &r.index;
    let idx = match i.state.as_str() {
        "ok" if !i.needs_rebuild() => paint(GOOD, "ok"),
        "ok" if i.journal_damaged()
            && i.missing_entries.is_empty()
            && i.orphan_entries.is_empty()
            && i.stale_entries.is_empty() =>
        {
            let j = i
                .journal
                .as_ref()
                .map_or((0, false), |j| (j.skipped.len(), j.torn_tail.is_some()));
            paint(
                WARN,
                format!(
                    "journal damaged: {} unreadable line(s){} (a cache: --repair rebuilds it)",
                    j.0,
                    if j.1 { ", a torn last line" } else { "" }
                ),
            )
        }
        "ok" => paint(
            WARN,
            format!(
                "out of date: {} log(s) without an entry, {} entry(ies) without a log, {} stale",
                i.missing_entries.len(),
                i.orphan_entries.len(),
                i.stale_entries.len()
            ),
        ),
        st => paint(BAD, failed_state(st, i.error.as_deref())),
    };
    let _ = writeln!(s, "index  {idx}");
    let h = &r.file_history;
    let history = match h.state.as_str() {
        "ok" => paint(
            GOOD,
            format!("ok ({} session branch(es))", h.found.branches),
        ),
        "absent" => paint(DIM, "none (no snapshot taken yet)"),
        st => paint(BAD, failed_state(st, h.error.as_deref())),
    };
    let _ = writeln!(s, "files  {history}");
    for o in &h.found.orphan_refs {
        let _ = writeln!(
            s,
            "         {}",
            paint(
                WARN,
                format!(
                    "{} belongs to the deleted session {} (garbage; --repair deletes it)",
                    o.ref_name, o.session_id
                )
            )
        );
    }
    for c in &r.logs {
        let mut notes: Vec<String> = Vec::new();
        if let Some(t) = &c.torn_tail {
            notes.push(paint(
                WARN,
                format!("torn last line {} ({})", t.line, t.reason),
            ));
        }
        if c.unquarantined > 0 {
            notes.push(paint(
                WARN,
                format!("{} unreadable line(s) not yet quarantined", c.unquarantined),
            ));
        }
        if c.quarantined > 0 {
            notes.push(paint(
                DIM,
                format!("{} line(s) quarantined in .corrupt", c.quarantined),
            ));
        }
        for p in c.unrepairable() {
            notes.push(paint(BAD, p));
        }
        for p in &c.history_notices {
            notes.push(paint(WARN, p));
        }
        if let Some(u) = &c.file_history_unchecked {
            notes.push(paint(DIM, format!("file history not checked: {u}")));
        }
        let state = if c.repairable() || !c.unrepairable().is_empty() {
            paint(BAD, "problems")
        } else {
            paint(GOOD, "ok")
        };
        let _ = writeln!(
            s,
            "log    {} {state} {}",
            c.id,
            paint(DIM, format!("({} messages)", c.messages))
        );
        for n in notes {
            let _ = writeln!(s, "         {n}");
        }
        for d in &c.repaired {
            let _ = writeln!(s, "         {} {d}", paint(GOOD, "repaired:"));
        }
    }
    for d in &r.repaired {
        let _ = writeln!(s, "{} {d}", paint(GOOD, "repaired:"));
    }
    let verdict = if r.ok {
        paint(GOOD, "the store is healthy")
    } else if r.repair {
        paint(
            BAD,
            "problems remain that cannot be repaired without losing data (see above)",
        )
    } else {
        paint(
            BAD,
            "problems found; `sessionkit doctor --repair` fixes what can be fixed without loss",
        )
    };
    let _ = writeln!(s, "{verdict}");
    s
}

/// A bar for one gc phase (a spinner while no phase has begun), drawn on
/// stderr when it is a terminal. The spinner also moves while a phase reports
/// nothing (the pack write between libgit2's reports).
fn gc_bar(on_terminal: bool, message: &'static str, len: Option<u64>) -> ProgressBar {
    if !on_terminal {
        return ProgressBar::hidden();
    }
    let (bar, template) = match len {
        Some(n) => (
            ProgressBar::new(n),
            "{spinner} {msg:30} {wide_bar} {pos}/{len}",
        ),
        None => (ProgressBar::new_spinner(), "{spinner} {msg}"),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

pub fn gc(ctx: &Ctx) -> Result<Output> {
    let on_terminal = std::io::stderr().is_terminal();
    let mut bar = gc_bar(on_terminal, "opening the file history", None);
    let mut phase = None;
    let mut report = |p: sessionkit::GcProgress| {
        if phase != Some(p.phase) {
            phase = Some(p.phase);
            let message = match p.phase {
                GcPhase::Marking => "walking session branches",
                GcPhase::Packing => "packing reachable objects",
                GcPhase::Pruning => "removing unreachable objects",
                GcPhase::ScanningLogs => "reading logs for blob references",
                GcPhase::PruningBlobs => "removing unreferenced blobs",
            };
            bar.finish_and_clear();
            bar = gc_bar(on_terminal, message, Some(p.total));
        }
        bar.set_position(p.done);
    };
    let r = ctx.store.gc_all(&mut report);
    bar.finish_and_clear();
    let r = r?;
    if ctx.json {
        return Output::json(&r);
    }
    let (h, b, t) = (r.file_history, r.blobs, r.temp_files);
    let temp = if t.removed > 0 {
        format!(
            "{} {} bytes freed ({} temp file(s) left by a crash removed)\n",
            paint(GOOD, "temp"),
            t.bytes_freed,
            t.removed
        )
    } else {
        String::new()
    };
    Ok(Output::Text(format!(
        "{} {} bytes freed ({} → {} objects, {} → {} bytes, {} session branch(es) kept)\n\
         {} {} bytes freed ({} of {} blobs removed{})\n{}",
        paint(GOOD, "gc"),
        h.bytes_freed,
        h.objects_before,
        h.objects_after,
        h.bytes_before,
        h.bytes_after,
        h.branches,
        paint(GOOD, "blobs"),
        b.bytes_freed,
        b.blobs_removed,
        b.blobs_before,
        if b.kept_young > 0 {
            format!(
                "; {} unreferenced but younger than {} min, kept",
                b.kept_young,
                sessionkit::BLOB_GC_GRACE.as_secs() / 60
            )
        } else {
            String::new()
        },
        temp
    )))
}
