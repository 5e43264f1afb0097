//! Store maintenance: doctor (verify, repair) and gc.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use sessionkit::index::IndexFile;
use sessionkit::{ErrorKind, SkippedLine};

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
}

impl IndexCheck {
    fn needs_rebuild(&self) -> bool {
        matches!(self.state.as_str(), "missing" | "corrupt")
            || !self.missing_entries.is_empty()
            || !self.orphan_entries.is_empty()
            || !self.stale_entries.is_empty()
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
    /// User messages whose checkpointHash is not in the session's file history.
    dangling_checkpoints: Vec<String>,
    /// Why the file-history check did not run (busy, unreadable log).
    #[serde(skip_serializing_if = "Option::is_none")]
    file_history_unchecked: Option<String>,
    /// What --repair did.
    repaired: Vec<String>,
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
        out
    }

    /// Worth knowing, but the conversation is whole: only the files of these
    /// messages cannot be restored.
    fn notices(&self) -> Vec<String> {
        self.dangling_checkpoints
            .iter()
            .map(|m| format!("message {m:?}: its checkpointHash is not in the file history (its files cannot be restored)"))
            .collect()
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
    let idx = match IndexFile::read(&ctx.store.index_path()) {
        Ok(Some(idx)) => idx,
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

/// Checkpoint hashes of the active path against the file history. Needs the
/// session's writer lock, so it runs only on a log that opening leaves untouched
/// (or after a repair); a busy session is reported unchecked.
fn check_checkpoints(ctx: &Ctx, c: &mut LogCheck, index: &IndexCheck) {
    if c.error.is_some() || c.id.contains('/') {
        return;
    }
    if c.repairable() {
        c.file_history_unchecked = Some("the log needs a repair first (doctor --repair)".into());
        return;
    }
    // Opening a session whose index entry is missing or stale writes the index;
    // a check without --repair changes nothing.
    if index.state != "ok"
        || index.missing_entries.contains(&c.id)
        || index.stale_entries.contains(&c.id)
    {
        c.file_history_unchecked = Some("the index needs a repair first (doctor --repair)".into());
        return;
    }
    match ctx.store.open_session(&c.id).and_then(|s| {
        let cands = s.undo_candidates();
        s.close()?;
        cands
    }) {
        Ok(cands) => {
            c.dangling_checkpoints = cands
                .into_iter()
                .filter(|k| k.checkpoint_hash.is_some() && !k.restorable)
                .map(|k| k.message_id)
                .collect();
        }
        Err(e) => c.file_history_unchecked = Some(e.to_string()),
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
    for c in logs.iter_mut() {
        check_checkpoints(ctx, c, &index);
    }
    let ok = !index.needs_rebuild()
        && index.state != "unsupported"
        && index.state != "error"
        && logs
            .iter()
            .all(|c| !c.repairable() && c.unrepairable().is_empty());
    let report = DoctorReport {
        store: ctx.store.dir().display().to_string(),
        ok,
        repair,
        index,
        logs,
        repaired,
    };
    let code = if ok { 0 } else { EXIT_PROBLEMS };
    if ctx.json {
        return Ok((Output::json(&report)?, code));
    }
    Ok((Output::Text(doctor_text(&report)), code))
}

fn doctor_text(r: &DoctorReport) -> String {
    let mut s = format!("{} {}\n", paint(BOLD, "store"), r.store);
    let i = &r.index;
    let idx = match i.state.as_str() {
        "ok" if !i.needs_rebuild() => paint(GOOD, "ok"),
        "ok" => paint(
            WARN,
            format!(
                "out of date: {} log(s) without an entry, {} entry(ies) without a log, {} stale",
                i.missing_entries.len(),
                i.orphan_entries.len(),
                i.stale_entries.len()
            ),
        ),
        st => paint(
            BAD,
            format!(
                "{st}{}",
                i.error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
        ),
    };
    let _ = writeln!(s, "index  {idx}");
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
        for p in c.notices() {
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

pub fn gc(ctx: &Ctx) -> Result<Output> {
    // Store::gc reports no progress, so a spinner shows it is working; indicatif
    // draws nothing when stderr is not a terminal.
    let bar = indicatif::ProgressBar::new_spinner()
        .with_message("pruning unreachable file-history objects");
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    let r = ctx.store.gc();
    bar.finish_and_clear();
    let r = r?;
    if ctx.json {
        return Output::json(&r);
    }
    Ok(Output::Text(format!(
        "{} {} bytes freed ({} → {} objects, {} → {} bytes, {} session branch(es) kept)\n",
        paint(GOOD, "gc"),
        r.bytes_freed,
        r.objects_before,
        r.objects_after,
        r.bytes_before,
        r.bytes_after,
        r.branches
    )))
}
