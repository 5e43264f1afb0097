//! Doctor: verify a project's store (index, session and subagent logs, blobs,
//! file history) and, when asked, repair what can be repaired without losing or
//! inventing data: terminate torn last lines, quarantine unreadable lines,
//! rebuild the index, delete the file-history refs of deleted sessions.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, Result};
use crate::history::{CheckpointProblem, DanglingCheckpoint, FileHistoryCheck};
use crate::index::journal::JournalReport;
use crate::log::writer::Quarantined;
use crate::log::{BrokenChain, SkippedLine};
use crate::store::{StoreCore, ViewCore};

/// What [`crate::Store::doctor`] is asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DoctorOptions {
    /// Repair what can be repaired without loss; otherwise write nothing.
    #[serde(default)]
    pub repair: bool,
}

impl DoctorOptions {
    /// Parse options from JSON (`{"repair": true}`); empty text is the default.
    pub fn from_json(json: &str) -> Result<DoctorOptions> {
        crate::format::json::options_from_json("doctor options", json)
    }
}

/// The steps of a doctor run, in order; a step with nothing to do is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DoctorPhase {
    /// Reading each session log and its subagent logs; counts sessions.
    CheckingLogs,
    /// Opening each repairable log for writing, which repairs it; counts logs.
    RepairingLogs,
    /// Reading the logs again after a repair; counts sessions.
    RecheckingLogs,
    /// Rebuilding the index from the logs; one step.
    RebuildingIndex,
    /// Checking the file history against the logs; one step (and one more when
    /// a repair deletes orphan refs).
    CheckingFileHistory,
}

/// How far a doctor run got: `done` of `total` in `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorProgress {
    /// The step running.
    pub phase: DoctorPhase,
    /// Items of the step done so far; only grows within a step.
    pub done: u64,
    /// Items the step has in all.
    pub total: u64,
}

/// The state of the index file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexState {
    /// Present and parseable.
    Ok,
    /// There is no index file; it can be rebuilt from the logs.
    Missing,
    /// Not parseable: a repair rebuilds it.
    Corrupt,
    /// Written by a newer version: left alone.
    Unsupported,
    /// Not readable (`error` says why).
    Error,
}

/// The index against the logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexCheck {
    /// What reading the index file found.
    pub state: IndexState,
    /// Why the index could not be read, with the path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Logs without an index entry.
    pub missing_entries: Vec<String>,
    /// Index entries without a log.
    pub orphan_entries: Vec<String>,
    /// Entries folded from a log of another length.
    pub stale_entries: Vec<String>,
    /// What reading the index journal found (unreadable lines, a torn tail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalReport>,
    /// Whether a repair would rebuild the index (it is missing, corrupt, out
    /// of date or its journal is damaged).
    pub needs_rebuild: bool,
}

impl IndexCheck {
    fn new(state: IndexState) -> IndexCheck {
        IndexCheck {
            state,
            error: None,
            missing_entries: Vec::new(),
            orphan_entries: Vec::new(),
            stale_entries: Vec::new(),
            journal: None,
            needs_rebuild: false,
        }
    }

    /// The journal has unreadable lines or a torn tail.
    pub fn journal_damaged(&self) -> bool {
        self.journal
            .as_ref()
            .is_some_and(|j| !j.skipped.is_empty() || j.torn_tail.is_some())
    }

    /// Entries are missing, orphaned or stale.
    pub fn out_of_date(&self) -> bool {
        !self.missing_entries.is_empty()
            || !self.orphan_entries.is_empty()
            || !self.stale_entries.is_empty()
    }

    fn healthy(&self) -> bool {
        self.state == IndexState::Ok && !self.needs_rebuild
    }
}

/// One session log or subagent sidechain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogCheck {
    /// The session id, or `<session>/<agent>` for a subagent sidechain.
    pub id: String,
    /// The session the log belongs to.
    pub session_id: String,
    /// The subagent, for a sidechain log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The log file.
    pub path: String,
    /// Messages read from it, on every branch.
    pub messages: usize,
    /// Whether the log has no problem at all (nothing to repair, nothing lost).
    pub ok: bool,
    /// The log could not be read at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A last line cut short by a crash mid-write, if there is one.
    pub torn_tail: Option<SkippedLine>,
    /// Lines that could not be read, with their offsets and reasons.
    pub skipped: Vec<SkippedLine>,
    /// Skipped lines not yet copied to the `.corrupt` file.
    pub unquarantined: usize,
    /// Records in the `.corrupt` file.
    pub quarantined: usize,
    /// Messages whose parent is missing from the log.
    pub broken_chains: Vec<BrokenChain>,
    /// Message ids that appear on more than one line of the log.
    pub duplicate_ids: Vec<String>,
    /// Other findings that lose nothing but are worth a look.
    pub warnings: Vec<String>,
    /// Messages whose blob is missing or does not match its digest.
    pub bad_blobs: Vec<String>,
    /// Messages whose checkpointHash names no snapshot of the session (details,
    /// with the reason, in the report's `fileHistory.danglingCheckpoints`).
    pub dangling_checkpoints: Vec<String>,
    /// Why the file-history check did not run (unreadable log or repository).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_history_unchecked: Option<String>,
    /// Problems a repair cannot fix without losing or inventing data, described.
    pub problems: Vec<String>,
    /// Findings worth knowing that lose nothing in this store (a checkpoint of
    /// a log written elsewhere, an unreadable subagent list).
    pub notices: Vec<String>,
    /// What the repair did.
    pub repaired: Vec<String>,
}

impl LogCheck {
    fn new(session: &str, agent: Option<&str>, path: &Path) -> LogCheck {
        LogCheck {
            id: match agent {
                Some(a) => format!("{session}/{a}"),
                None => session.to_string(),
            },
            session_id: session.to_string(),
            agent_id: agent.map(str::to_owned),
            path: path.display().to_string(),
            ..LogCheck::default()
        }
    }

    /// A repair fixes it: a torn tail to terminate, lines to quarantine.
    pub fn repairable(&self) -> bool {
        self.torn_tail.is_some() || self.unquarantined > 0
    }

    /// Fill `problems` from the findings, and `ok`.
    fn settle(&mut self, history_problems: Vec<String>) {
        let mut out = Vec::new();
        out.extend(self.error.iter().cloned());
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
        out.extend(history_problems);
        self.problems = out;
        self.ok = !self.repairable() && self.problems.is_empty();
    }
}

/// The state of the file history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HistoryState {
    /// The repository is readable.
    Ok,
    /// The store never took a snapshot.
    Absent,
    /// Not readable (`error` says why).
    Error,
}

/// The file history against the logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryCheck {
    /// What opening the repository found.
    pub state: HistoryState,
    /// Why the repository could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The links between the logs and the repository.
    #[serde(flatten)]
    pub found: FileHistoryCheck,
}

impl HistoryCheck {
    fn healthy(&self) -> bool {
        self.state != HistoryState::Error && self.found.is_healthy()
    }
}

/// What [`crate::Store::doctor`] found and did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorReport {
    /// The project's store directory.
    pub store: String,
    /// Nothing is wrong (after the repair, when one ran).
    pub ok: bool,
    /// Whether a repair was asked for.
    pub repair: bool,
    /// The index against the logs.
    pub index: IndexCheck,
    /// Each session log, followed by its subagent logs.
    pub logs: Vec<LogCheck>,
    /// The file history against the logs.
    pub file_history: HistoryCheck,
    /// What the repair did to the store as a whole.
    pub repaired: Vec<String>,
}

/// What a log's quarantine file already holds.
fn quarantined(log: &Path, c: &mut LogCheck) -> Quarantined {
    match crate::log::writer::quarantined(log) {
        Ok(q) => q,
        Err(e) => {
            c.notices
                .push(format!("its quarantine file cannot be read: {e}"));
            Quarantined::default()
        }
    }
}

fn check_index(store: &StoreCore, ids: &[String]) -> IndexCheck {
    let idx = match store.read_index() {
        Ok(Some(stored)) => {
            let mut c = IndexCheck::new(IndexState::Ok);
            c.journal = Some(stored.journal);
            (c, stored.index)
        }
        Ok(None) => {
            let mut c = IndexCheck::new(IndexState::Missing);
            c.needs_rebuild = true;
            return c;
        }
        Err(e) => {
            let state = match e.kind() {
                ErrorKind::Corrupt => IndexState::Corrupt,
                ErrorKind::Unsupported => IndexState::Unsupported,
                _ => IndexState::Error,
            };
            let mut c = IndexCheck::new(state);
            c.needs_rebuild = state == IndexState::Corrupt;
            c.error = Some(e.to_string());
            return c;
        }
    };
    let (mut c, idx) = idx;
    for id in ids {
        let len = store
            .log_path(id)
            .ok()
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len());
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
    c.needs_rebuild = c.out_of_date() || c.journal_damaged();
    c
}

fn check_view(c: &mut LogCheck, view: &ViewCore, log: &Path) {
    let r = view.report();
    c.messages = view.message_count();
    c.torn_tail = r.torn_tail.clone();
    c.skipped = r.skipped.clone();
    let q = quarantined(log, c);
    c.quarantined = q.len();
    c.unquarantined = r.skipped.iter().filter(|s| !q.covers(s)).count();
    c.broken_chains = r.broken_chains.clone();
    c.duplicate_ids = r.duplicate_ids.clone();
    c.warnings = r.warnings.clone();
    // Materialising each message reads and checks its blobs: a reference that
    // is still there afterwards could not be resolved (FORMAT.md §7: missing,
    // malformed, not matching its digest, or not JSON).
    for id in view.log().message_ids() {
        match view.message(id) {
            Err(e) => c.bad_blobs.push(format!("message {id:?}: {e}")),
            Ok(m) => {
                let v = m.value();
                for (field, ref_field) in crate::blobs::BLOB_FIELDS {
                    if let Some(r) = v.get(ref_field) {
                        c.bad_blobs.push(format!(
                            "message {id:?}: its {field} is in a blob that cannot be read ({ref_field} {r}): missing, or not matching its digest"
                        ));
                    }
                }
            }
        }
    }
}

/// A session's log and its subagents' logs.
fn check_session(store: &StoreCore, id: &str) -> Vec<LogCheck> {
    let log = store.log_path(id).unwrap_or_default();
    let mut c = LogCheck::new(id, None, &log);
    match store.read_session(id) {
        Ok(view) => check_view(&mut c, &view, &log),
        Err(e) => c.error = Some(e.to_string()),
    }
    let metas = match store.list_subagents(id) {
        Ok(m) => m,
        Err(e) => {
            c.notices
                .push(format!("its subagents cannot be listed: {e}"));
            Vec::new()
        }
    };
    let mut out = vec![c];
    for meta in metas {
        let Some(agent) = meta["agentId"].as_str() else {
            continue;
        };
        let path = store.subagent_log_path(id, agent).unwrap_or_default();
        let mut a = LogCheck::new(id, Some(agent), &path);
        match store.read_subagent(id, agent) {
            Ok(view) => check_view(&mut a, &view, &path),
            Err(e) => a.error = Some(e.to_string()),
        }
        out.push(a);
    }
    out
}

/// The file history against the logs, read-only: no writer lock is taken, so a
/// session in use is checked too.
fn check_history(store: &StoreCore) -> HistoryCheck {
    match store.check_file_history() {
        Ok(found) => HistoryCheck {
            state: if found.exists {
                HistoryState::Ok
            } else {
                HistoryState::Absent
            },
            error: None,
            found,
        },
        Err(e) => HistoryCheck {
            state: HistoryState::Error,
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

/// Give each log its file-history findings, and settle its verdict.
fn attach_history(logs: &mut [LogCheck], h: &HistoryCheck) {
    for c in logs.iter_mut() {
        let mut problems = Vec::new();
        if c.agent_id.is_none() {
            if c.error.is_some() {
                c.file_history_unchecked = Some("the log could not be read".into());
            } else if let Some(e) = &h.error {
                c.file_history_unchecked = Some(e.clone());
            } else {
                for d in h
                    .found
                    .dangling_checkpoints
                    .iter()
                    .filter(|d| d.session_id == c.id)
                {
                    c.dangling_checkpoints.push(d.message_id.clone());
                    if d.reason.is_damage() {
                        problems.push(describe_checkpoint(d));
                    } else {
                        c.notices.push(describe_checkpoint(d));
                    }
                }
                for b in h.found.broken_refs.iter().filter(|b| b.session_id == c.id) {
                    problems.push(format!(
                        "its file-history ref {} reaches the missing commit {} (the session's snapshots and undo fail)",
                        b.ref_name, b.missing_commit
                    ));
                }
            }
        }
        c.settle(problems);
    }
}

/// Open the log for writing and close it: opening terminates a torn tail and
/// quarantines unreadable lines.
fn repair_log(store: &StoreCore, c: &mut LogCheck) {
    let before = c.quarantined;
    let result = store.open_session(&c.session_id).and_then(|s| {
        if let Some(a) = &c.agent_id {
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
    let after = crate::log::writer::quarantined(Path::new(&c.path)).map_or(0, |q| q.len());
    if after > before {
        c.repaired.push(format!(
            "quarantined {} line(s) to {}.corrupt",
            after - before,
            c.path
        ));
    }
}

fn check_logs(
    store: &StoreCore,
    ids: &[String],
    phase: DoctorPhase,
    progress: &mut dyn FnMut(DoctorProgress),
) -> Vec<LogCheck> {
    let total = ids.len() as u64;
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        progress(DoctorProgress {
            phase,
            done: i as u64,
            total,
        });
        out.extend(check_session(store, id));
    }
    if total > 0 {
        progress(DoctorProgress {
            phase,
            done: total,
            total,
        });
    }
    out
}

fn step(progress: &mut dyn FnMut(DoctorProgress), phase: DoctorPhase, done: u64) {
    progress(DoctorProgress {
        phase,
        done,
        total: 1,
    });
}

pub(crate) fn doctor(
    store: &StoreCore,
    options: &DoctorOptions,
    progress: &mut dyn FnMut(DoctorProgress),
) -> Result<DoctorReport> {
    let repair = options.repair;
    let ids = store.log_ids()?;
    let mut index = check_index(store, &ids);
    let mut logs = check_logs(store, &ids, DoctorPhase::CheckingLogs, progress);
    let mut repaired = Vec::new();
    if repair {
        let todo: Vec<usize> = (0..logs.len())
            .filter(|&i| logs[i].repairable() && logs[i].error.is_none())
            .collect();
        let total = todo.len() as u64;
        for (n, &i) in todo.iter().enumerate() {
            progress(DoctorProgress {
                phase: DoctorPhase::RepairingLogs,
                done: n as u64,
                total,
            });
            repair_log(store, &mut logs[i]);
        }
        if !todo.is_empty() {
            progress(DoctorProgress {
                phase: DoctorPhase::RepairingLogs,
                done: total,
                total,
            });
            // Read again what the repair left, keeping what it did.
            let mut fresh = check_logs(store, &ids, DoctorPhase::RecheckingLogs, progress);
            for (f, old) in fresh.iter_mut().zip(logs.iter_mut()) {
                f.repaired = std::mem::take(&mut old.repaired);
            }
            logs = fresh;
        }
        if index.state == IndexState::Unsupported {
            repaired.push("left the index alone: it is of a newer version".to_string());
        } else if index.needs_rebuild || !todo.is_empty() {
            step(progress, DoctorPhase::RebuildingIndex, 0);
            let r = store.rebuild_index()?;
            step(progress, DoctorPhase::RebuildingIndex, 1);
            repaired.push(format!(
                "rebuilt the index from {} session log(s)",
                r.sessions
            ));
            index = check_index(store, &ids);
        }
    }
    step(progress, DoctorPhase::CheckingFileHistory, 0);
    let mut history = check_history(store);
    if repair && !history.found.orphan_refs.is_empty() {
        for r in store.prune_orphan_file_history()? {
            repaired.push(format!(
                "deleted the file-history ref {} of the deleted session {} (its objects go with the next gc)",
                r.ref_name, r.session_id
            ));
        }
        history = check_history(store);
    }
    step(progress, DoctorPhase::CheckingFileHistory, 1);
    attach_history(&mut logs, &history);
    let ok = index.healthy() && history.healthy() && logs.iter().all(|c| c.ok);
    Ok(DoctorReport {
        store: store.dir().display().to_string(),
        ok,
        repair,
        index,
        logs,
        file_history: history,
        repaired,
    })
}
