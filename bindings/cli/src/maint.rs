//! Store maintenance: doctor (verify, repair) and gc, rendered from the core's
//! reports.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use sessionkit::{
    DoctorOptions, DoctorPhase, DoctorReport, GcPhase, HistoryState, IndexCheck, IndexState,
};

use crate::ctx::{paint, Ctx, Output, Result, BAD, BOLD, DIM, EXIT_PROBLEMS, GOOD, WARN};

pub fn doctor(ctx: &Ctx, repair: bool) -> Result<(Output, u8)> {
    let on_terminal = std::io::stderr().is_terminal();
    let mut bar = progress_bar(on_terminal, "reading the store", None);
    let mut phase = None;
    let mut report = |p: sessionkit::DoctorProgress| {
        if phase != Some(p.phase) {
            phase = Some(p.phase);
            let message = match p.phase {
                DoctorPhase::CheckingLogs => "checking session logs",
                DoctorPhase::RepairingLogs => "repairing logs",
                DoctorPhase::RecheckingLogs => "checking the repaired logs",
                DoctorPhase::RebuildingIndex => "rebuilding the index",
                DoctorPhase::CheckingFileHistory => "checking the file history",
            };
            bar.finish_and_clear();
            bar = progress_bar(on_terminal, message, Some(p.total));
        }
        bar.set_position(p.done);
    };
    let r = ctx.store.doctor(&DoctorOptions { repair }, &mut report);
    bar.finish_and_clear();
    let r = r?;
    let code = if r.ok { 0 } else { EXIT_PROBLEMS };
    if ctx.json {
        return Ok((Output::json(&r)?, code));
    }
    Ok((Output::Text(doctor_text(&r)), code))
}

/// A check's state word, with the error that made it fail when there is one.
fn failed_state(state: impl serde::Serialize, error: Option<&str>) -> String {
    let state = serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    match error {
        Some(e) => format!("{state}: {e}"),
        None => state,
    }
}

fn index_text(i: &IndexCheck) -> String {
    match i.state {
        IndexState::Ok if !i.needs_rebuild => paint(GOOD, "ok"),
        IndexState::Ok if !i.out_of_date() => {
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
        IndexState::Ok => paint(
            WARN,
            format!(
                "out of date: {} log(s) without an entry, {} entry(ies) without a log, {} stale",
                i.missing_entries.len(),
                i.orphan_entries.len(),
                i.stale_entries.len()
            ),
        ),
        st => paint(BAD, failed_state(st, i.error.as_deref())),
    }
}

fn doctor_text(r: &DoctorReport) -> String {
    let mut s = format!("{} {}\n", paint(BOLD, "store"), r.store);
    let _ = writeln!(s, "index  {}", index_text(&r.index));
    let h = &r.file_history;
    let history = match h.state {
        HistoryState::Ok => paint(
            GOOD,
            format!("ok ({} session branch(es))", h.found.branches),
        ),
        HistoryState::Absent => paint(DIM, "none (no snapshot taken yet)"),
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
        for p in &c.problems {
            notes.push(paint(BAD, p));
        }
        for p in &c.notices {
            notes.push(paint(WARN, p));
        }
        if let Some(u) = &c.file_history_unchecked {
            notes.push(paint(DIM, format!("file history not checked: {u}")));
        }
        let state = if c.ok {
            paint(GOOD, "ok")
        } else {
            paint(BAD, "problems")
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

/// A bar for one phase of a gc or doctor run (a spinner while no phase has
/// begun), drawn on stderr when it is a terminal. The spinner also moves while
/// a phase reports nothing (the pack write between libgit2's reports).
fn progress_bar(on_terminal: bool, message: &'static str, len: Option<u64>) -> ProgressBar {
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

/// The trashed sessions, most recently trashed first.
pub fn trash(ctx: &Ctx) -> Result<Output> {
    let trashed = ctx.store.list_trash()?;
    if ctx.json {
        return Output::json(&trashed);
    }
    if trashed.is_empty() {
        return Ok(Output::Text(format!(
            "the trash is empty (store {})\n",
            ctx.store.dir().display()
        )));
    }
    let now = crate::ctx::now()?;
    let mut t = crate::sessions::new_table(&[
        "ID",
        "TITLE",
        "UPDATED",
        "MESSAGES",
        "TRASHED",
        "REASON",
        "PURGE AFTER",
    ]);
    for s in &trashed {
        t.add_row(vec![
            s.id.clone(),
            crate::ctx::clip(&crate::ctx::one_line(&s.title), 40),
            crate::ctx::relative(&s.updated_at, now),
            s.message_count.to_string(),
            crate::ctx::relative(&s.trashed_at, now),
            s.reason.clone(),
            s.purge_after.clone(),
        ]);
    }
    Ok(Output::Text(format!(
        "{}{} `sessionkit restore ID` brings one back; `sessionkit gc` purges those past PURGE AFTER\n",
        crate::sessions::table_text(&t),
        paint(DIM, "hint:")
    )))
}

pub fn gc(ctx: &Ctx) -> Result<Output> {
    let on_terminal = std::io::stderr().is_terminal();
    let mut bar = progress_bar(on_terminal, "opening the file history", None);
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
            bar = progress_bar(on_terminal, message, Some(p.total));
        }
        bar.set_position(p.done);
    };
    let r = ctx.store.gc_all(&mut report);
    bar.finish_and_clear();
    let r = r?;
    if ctx.json {
        return Output::json(&r);
    }
    let purged = if r.trash_purged.is_empty() {
        String::new()
    } else {
        format!(
            "{} {} session(s) purged from the trash: {}\n",
            paint(GOOD, "trash"),
            r.trash_purged.len(),
            r.trash_purged.join(", ")
        )
    };
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
         {} {} bytes freed ({} of {} blobs removed{})\n{}{}",
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
        temp,
        purged
    )))
}
