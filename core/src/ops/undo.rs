//! Undo: the session-facing side of the file history. Hosts tell the session
//! which files their tools read and edit; the session snapshots them before each
//! user input and around each edit, lists what can be undone and rewinds the
//! conversation, the files, or both. The git side is in `file_history`.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::history::project_fs::ProjectPath;
use crate::history::{
    snapshot_id, ExternalChange, GcReport, HistorySizeReport, Loaded, RewindMode, RewindPlan,
    RewindResult, UndoCandidate,
};
use crate::store::session::SessionCore;
use crate::store::StoreCore;
use crate::view::Message;

const PREVIEW_CHARS: usize = 100;

/// The text of a message's content, for previews: a string, or the `text` of
/// each part of an array.
fn preview(msg: &Value) -> String {
    let text = match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    text.chars().take(PREVIEW_CHARS).collect()
}

impl SessionCore {
    fn history<T>(
        &self,
        create: bool,
        f: impl FnOnce(&mut Loaded) -> Result<T>,
    ) -> Result<Option<T>> {
        // Loading the history clears stale ref locks and a cut restore's
        // temporary files: writes, which are the opening process's alone.
        self.check_writer()?;
        self.file_history()
            .with(self.store().history_scope(), self.id(), create, f)
    }

    fn paths(&self, paths: &[impl AsRef<Path>]) -> Result<Vec<ProjectPath>> {
        let store = self.store();
        paths
            .iter()
            .map(|p| ProjectPath::new(store.project_root(), store.dir(), p.as_ref()))
            .collect()
    }

    /// Append a user message, taking a snapshot of the tracked files first. The
    /// snapshot id is stored as the message's `checkpointHash`; `role` defaults to
    /// `user` and may not be anything else.
    pub(crate) fn user_input(&self, message: Value) -> Result<Message> {
        let Value::Object(mut m) = message else {
            return Err(Error::invalid("a user input must be a JSON object"));
        };
        match m.get("role") {
            None => {
                m.insert("role".into(), "user".into());
            }
            Some(Value::String(r)) if r == "user" => {}
            Some(r) => {
                return Err(Error::invalid(format!(
                    "a user input has role \"user\", got {r}"
                )))
            }
        }
        if m.get("checkpointHash").is_some_and(|v| !v.is_null()) {
            return Err(Error::invalid(
                "a user input may not set \"checkpointHash\": the snapshot sets it",
            ));
        }
        let snap = self
            .history(true, |h| h.snapshot("user-input", &[], false))?
            .ok_or_else(|| Error::Internal("file history was not created".into()))?;
        m.insert("checkpointHash".into(), snap.to_string().into());
        self.append(Value::Object(m))
    }

    /// Record that the agent's tools read these files (paths relative to the
    /// project root, or absolute inside it), so that
    /// [`SessionCore::external_changes`] can tell whether they changed since. The
    /// marks are kept with the session's next snapshot.
    pub(crate) fn track_read(&self, paths: &[impl AsRef<Path>]) -> Result<()> {
        let paths = self.paths(paths)?;
        self.history(true, |h| h.track_read(&paths)).map(drop)
    }

    /// Track these files and snapshot every tracked file, before a tool edits
    /// them. Returns the snapshot id.
    pub(crate) fn before_edit(&self, paths: &[impl AsRef<Path>]) -> Result<String> {
        let paths = self.paths(paths)?;
        let o = self.history(true, |h| h.snapshot("before-edit", &paths, false))?;
        Ok(o.map(|o| o.to_string()).unwrap_or_default())
    }

    /// Snapshot every tracked file after a tool edited `paths` (tracked from now
    /// on if they were not). What the tool wrote counts as read by the agent.
    pub(crate) fn after_edit(&self, paths: &[impl AsRef<Path>]) -> Result<String> {
        let paths = self.paths(paths)?;
        let o = self.history(true, |h| h.snapshot("after-edit", &paths, true))?;
        Ok(o.map(|o| o.to_string()).unwrap_or_default())
    }

    /// The files this session tracks (paths relative to the project root).
    pub(crate) fn tracked_files(&self) -> Result<Vec<String>> {
        Ok(self
            .history(false, |h| Ok(h.tracked()))?
            .unwrap_or_default())
    }

    /// The session's latest snapshot, if it has one.
    pub(crate) fn last_snapshot(&self) -> Result<Option<String>> {
        Ok(self
            .history(false, |h| Ok(h.tip()))?
            .flatten()
            .map(|o| o.to_string()))
    }

    /// For each path: whether the file changed on disk since the agent last read
    /// or edited it (compared by content hash).
    pub(crate) fn external_changes(
        &self,
        paths: &[impl AsRef<Path>],
    ) -> Result<Vec<ExternalChange>> {
        let paths = self.paths(paths)?;
        Ok(self
            .history(true, |h| h.external_changes(&paths))?
            .unwrap_or_default())
    }

    /// Fail with `Conflict`, naming the files, if any of `paths` changed on disk
    /// since the agent read it. Files never read pass.
    pub(crate) fn ensure_unchanged_since_read(&self, paths: &[impl AsRef<Path>]) -> Result<()> {
        use crate::history::ChangeStatus as S;
        let changed: Vec<String> = self
            .external_changes(paths)?
            .into_iter()
            .filter(|c| !matches!(c.status, S::Unchanged | S::NotRead))
            .map(|c| {
                let how = match c.status {
                    S::Deleted => "deleted",
                    S::Created => "created",
                    _ => "modified",
                };
                format!("{} ({how})", c.path)
            })
            .collect();
        if changed.is_empty() {
            Ok(())
        } else {
            Err(Error::Conflict(format!(
                "changed on disk since the agent read it: {}",
                changed.join(", ")
            )))
        }
    }

    /// The visible, uncompacted user messages of the active path, oldest first,
    /// each with whether its files can be restored and the changes since.
    pub(crate) fn undo_candidates(&self) -> Result<Vec<UndoCandidate>> {
        let view = self.read()?.ui_view()?;
        let mut msgs = Vec::new();
        for m in view {
            let v = m.value();
            let is_user = v.get("role").and_then(Value::as_str) == Some("user");
            let visible = v.get("visible").and_then(Value::as_bool).unwrap_or(true);
            let compacted = v.get("compacted").and_then(Value::as_bool).unwrap_or(false);
            if is_user && visible && !compacted {
                msgs.push((m.id().to_string(), v));
            }
        }
        let snaps: Vec<Option<git2::Oid>> = msgs
            .iter()
            .map(|(_, v)| {
                v.get("checkpointHash")
                    .and_then(Value::as_str)
                    .and_then(|s| snapshot_id("checkpointHash", s).ok())
            })
            .collect();
        let wanted: HashSet<git2::Oid> = snaps.iter().flatten().copied().collect();
        let stats = if wanted.is_empty() {
            Default::default()
        } else {
            self.history(false, |h| h.stats_since(&wanted))?
                .unwrap_or_default()
        };
        Ok(msgs
            .into_iter()
            .zip(snaps)
            .map(|((id, v), snap)| {
                let hash = v
                    .get("checkpointHash")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let st = snap.and_then(|s| stats.get(&s).copied());
                let reason = match (&hash, snap, st) {
                    (None, _, _) => Some("the message has no checkpointHash".to_string()),
                    (Some(h), None, _) => {
                        Some(format!("checkpointHash {h:?} is not a snapshot id"))
                    }
                    (Some(_), Some(_), None) => {
                        Some("the snapshot is not in this session's file history".to_string())
                    }
                    _ => None,
                };
                UndoCandidate {
                    message_id: id,
                    timestamp: v
                        .get("timestamp")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    preview: preview(&v),
                    checkpoint_hash: hash,
                    restorable: reason.is_none(),
                    reason,
                    stats: st.unwrap_or_default(),
                }
            })
            .collect())
    }

    /// A user message and the snapshot taken before it.
    pub(crate) fn rewind_target(
        &self,
        message_id: &str,
    ) -> Result<(Option<String>, Option<git2::Oid>)> {
        let v = self.read()?.message(message_id)?.value();
        if v.get("role").and_then(Value::as_str) != Some("user") {
            return Err(Error::invalid(format!(
                "message {message_id:?} is not a user message; rewinds go to user messages"
            )));
        }
        let parent = v.get("parentId").and_then(Value::as_str).map(str::to_owned);
        let snap = match v.get("checkpointHash").and_then(Value::as_str) {
            Some(s) => Some(snapshot_id(
                &format!("checkpointHash of {message_id:?}"),
                s,
            )?),
            None => None,
        };
        Ok((parent, snap))
    }

    fn require_snapshot(message_id: &str, snap: Option<git2::Oid>) -> Result<git2::Oid> {
        snap.ok_or_else(|| {
            Error::NotFound(format!(
                "message {message_id:?} has no checkpointHash (it was not appended with user_input), so its files cannot be restored"
            ))
        })
    }

    /// The dry run of rewinding the files to before a user message: for each file,
    /// restore, recreate or delete, and any conflict. Changes nothing.
    pub(crate) fn rewind_plan(&self, message_id: &str) -> Result<RewindPlan> {
        let (_, snap) = self.rewind_target(message_id)?;
        let snap = Self::require_snapshot(message_id, snap)?;
        self.plan_for(snap, Some(message_id))
    }

    fn plan_for(&self, snap: git2::Oid, message_id: Option<&str>) -> Result<RewindPlan> {
        self.history(false, |h| h.plan(snap, message_id))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "snapshot {snap}: session {} has no file history",
                    self.id()
                ))
            })
    }

    /// Rewind to before the `turns`-th latest of [`SessionCore::undo_candidates`]
    /// (1: the latest user input), as [`SessionCore::rewind`] does. `InvalidInput`
    /// when `turns` is 0 or more than there are candidates.
    pub(crate) fn rewind_turns(
        &self,
        turns: usize,
        mode: RewindMode,
        force: bool,
    ) -> Result<RewindResult> {
        let candidates = self.undo_candidates()?;
        let at = turns
            .checked_sub(1)
            .and_then(|back| candidates.len().checked_sub(back + 1));
        let Some(at) = at else {
            return Err(Error::invalid(format!(
                "cannot rewind {turns} turn(s): session {} has {} user input(s) to rewind to",
                self.id(),
                candidates.len()
            )));
        };
        self.rewind(&candidates[at].message_id, mode, force)
    }

    /// Rewind to before a user message. `Files` and `Both` restore the tracked
    /// files to the message's snapshot (refusing with `Conflict`, naming the
    /// files, if any changed outside the agent since the last snapshot, unless
    /// `force`); `Conversation` and `Both` then move the head to the message's
    /// parent. The result says how to undo it.
    pub(crate) fn rewind(
        &self,
        message_id: &str,
        mode: RewindMode,
        force: bool,
    ) -> Result<RewindResult> {
        let (parent, snap) = self.rewind_target(message_id)?;
        let previous_head = self.head();
        let mut out = RewindResult {
            mode,
            message_id: Some(message_id.to_string()),
            snapshot: None,
            undo_snapshot: None,
            snapshot_after: None,
            previous_head: previous_head.clone(),
            head: previous_head,
            restored: Vec::new(),
            recreated: Vec::new(),
            deleted: Vec::new(),
            skipped: Vec::new(),
        };
        if mode != RewindMode::Conversation {
            let snap = Self::require_snapshot(message_id, snap)?;
            self.restore_into(
                snap,
                force,
                &format!("rewind to message {message_id:?}"),
                &mut out,
            )?;
        }
        if mode != RewindMode::Files {
            self.set_head(parent.as_deref())?;
            out.head = parent;
        }
        Ok(out)
    }

    /// The dry run of restoring the tracked files to any snapshot of this
    /// session (e.g. a rewind's `undoSnapshot`).
    pub(crate) fn snapshot_plan(&self, snapshot: &str) -> Result<RewindPlan> {
        let snap = snapshot_id("snapshot", snapshot)?;
        self.plan_for(snap, None)
    }

    /// Restore the tracked files to a snapshot of this session, with the same
    /// checks as a rewind. Restoring a rewind's `undoSnapshot` undoes it.
    pub(crate) fn restore_snapshot(&self, snapshot: &str, force: bool) -> Result<RewindResult> {
        let snap = snapshot_id("snapshot", snapshot)?;
        let head = self.head();
        let mut out = RewindResult {
            mode: RewindMode::Files,
            message_id: None,
            snapshot: None,
            undo_snapshot: None,
            snapshot_after: None,
            previous_head: head.clone(),
            head,
            restored: Vec::new(),
            recreated: Vec::new(),
            deleted: Vec::new(),
            skipped: Vec::new(),
        };
        self.restore_into(
            snap,
            force,
            &format!("restore of snapshot {snapshot}"),
            &mut out,
        )?;
        Ok(out)
    }

    fn restore_into(
        &self,
        snap: git2::Oid,
        force: bool,
        what: &str,
        out: &mut RewindResult,
    ) -> Result<()> {
        let a = self
            .history(false, |h| h.apply(snap, force, what))?
            .ok_or_else(|| {
                Error::NotFound(format!("{what}: session {} has no file history", self.id()))
            })?;
        out.snapshot = Some(snap.to_string());
        out.undo_snapshot = Some(a.undo_snapshot.to_string());
        out.snapshot_after = Some(a.after.to_string());
        out.restored = a.restored;
        out.recreated = a.recreated;
        out.deleted = a.deleted;
        out.skipped = a.skipped;
        Ok(())
    }
}

impl StoreCore {
    /// Remove file-history objects that no session's branch reaches, and report
    /// the bytes freed.
    pub(crate) fn gc(&self) -> Result<GcReport> {
        self.gc_with_progress(&mut |_| {})
    }

    /// [`StoreCore::gc`], telling `progress` how far each phase got (for a progress
    /// bar). Called on this thread.
    pub(crate) fn gc_with_progress(
        &self,
        progress: &mut dyn FnMut(crate::history::GcProgress),
    ) -> Result<GcReport> {
        crate::history::gc(self.history_scope(), progress)
    }

    /// The size of each session's file history.
    pub(crate) fn file_history_sizes(&self) -> Result<HistorySizeReport> {
        crate::history::sizes(self.history_scope())
    }

    /// Start the file-history branch of `session_id` at `snapshot` (for a fork:
    /// the snapshot of the message forked at). Fails with `Conflict` if the
    /// session already has a branch.
    pub(crate) fn branch_file_history(&self, session_id: &str, snapshot: &str) -> Result<()> {
        crate::format::ids::validate_path_id("session id", session_id)?;
        crate::history::create_branch(self.history_scope(), session_id, snapshot)
    }
}
