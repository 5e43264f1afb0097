//! The public [`Subagent`] handle: a subagent's sidechain open for writing.

use serde_json::Value;

use crate::api::SessionView;
use crate::error::Result;
use crate::log::message::Message;
use crate::store::session::SubagentCore;

/// A subagent's sidechain, open for writing: its own log beside the session's,
/// with a spawn and a result recorded in the session's log.
pub struct Subagent {
    core: SubagentCore,
}

impl std::fmt::Debug for Subagent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl Subagent {
    pub(crate) fn from_core(core: SubagentCore) -> Subagent {
        Subagent { core }
    }

    /// The subagent's id (its agent id).
    pub fn id(&self) -> &str {
        self.core.id()
    }

    /// The id of the session that spawned it.
    pub fn session_id(&self) -> &str {
        self.core.session_id()
    }

    /// Append one message to the sidechain log, as [`Session::append`] does for
    /// a session.
    ///
    /// [`Session::append`]: crate::Session::append
    pub fn append(&self, message: Value) -> Result<Message> {
        self.core.append(message)
    }

    /// Append messages to the sidechain in one write, as
    /// [`Session::append_batch`] does.
    ///
    /// [`Session::append_batch`]: crate::Session::append_batch
    pub fn append_batch(&self, messages: Vec<Value>) -> Result<Vec<Message>> {
        self.core.append_batch(messages)
    }

    /// Append several groups of messages in one write, with a result per group,
    /// as [`Session::append_groups`] does.
    ///
    /// [`Session::append_groups`]: crate::Session::append_groups
    pub fn append_groups(&self, groups: Vec<Vec<Value>>) -> Result<Vec<Result<Vec<Message>>>> {
        self.core.append_groups(groups)
    }

    /// Record the subagent's result: in its metadata (status `completed`, or
    /// `failed` when `failed`) and as a `result` record in the main log.
    pub fn finish(&self, result: Value, failed: bool) -> Result<()> {
        self.core.finish(result, failed)
    }

    /// Read the sidechain log back as a [`SessionView`].
    pub fn read(&self) -> Result<SessionView> {
        self.core.read().map(SessionView::from_core)
    }
}
