//! The public [`SessionView`]: a session read from disk, and its views.

use serde_json::Value;

use crate::error::Result;
use crate::log::message::Message;
use crate::log::{LoadedLog, ReadReport};
use crate::store::ViewCore;
use crate::view::{Branch, ModelViewOptions, TreeNode};

/// A read-only view of a session loaded from disk. Takes no lock, never blocks a
/// writer, and reflects the log as it was when it was read.
#[derive(Debug)]
pub struct SessionView {
    pub(crate) core: ViewCore,
}

impl SessionView {
    pub(crate) fn from_core(core: ViewCore) -> SessionView {
        SessionView { core }
    }

    /// The messages from the root to the head, as stored (patches applied,
    /// blobs inlined). Empty when the session has no head. Fails with `Corrupt`
    /// if the parent chain loops.
    pub fn active_path(&self) -> Result<Vec<Message>> {
        self.core.active_path()
    }

    /// The active path for display: every message keeps its place, with
    /// `visible` and `compacted` always present as booleans (`compacted` is true
    /// for messages a compaction on the path replaced).
    pub fn ui_view(&self) -> Result<Vec<Message>> {
        self.core.ui_view()
    }

    /// One message by id, on the active path or not, with patches applied and
    /// blobs inlined. Fails with `NotFound` for an id the log does not hold.
    pub fn message(&self, id: &str) -> Result<Message> {
        self.core.message(id)
    }

    /// The head message id; `None` before the first message (or after a head
    /// move to before it).
    pub fn head(&self) -> Option<&str> {
        self.core.head()
    }

    /// The log's `session` header record (format version, id, project,
    /// lineage), if it has one: a plain transcript of messages has none.
    pub fn header(&self) -> Option<&serde_json::Map<String, Value>> {
        self.core.header()
    }

    /// What reading found: skipped lines, a torn tail, broken chains.
    pub fn report(&self) -> &ReadReport {
        self.core.report()
    }

    /// How many messages the log holds, on every branch.
    pub fn message_count(&self) -> usize {
        self.core.message_count()
    }

    /// State and subagent records in log order.
    pub fn records(&self) -> &[Value] {
        self.core.records()
    }

    /// The loaded log, for the test suites.
    #[doc(hidden)]
    pub fn log(&self) -> &LoadedLog {
        self.core.log()
    }

    /// What goes to the model, folded from the whole log: the active path with
    /// compacted messages replaced by their summary, and a synthetic
    /// "interrupted" result for any tool call left without one.
    /// [`Store::model_view`](crate::Store::model_view) gives the same for a resume,
    /// reading only the log after the latest compaction.
    ///
    /// ```
    /// # use sessionkit::{CreateOptions, ModelViewOptions, Store, StoreOptions};
    /// # use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// # let session = store.create_session(CreateOptions::default())?;
    /// session.append(json!({"role": "system", "content": "You are terse."}))?;
    /// for i in 0..5 {
    ///     session.append(json!({"role": "user", "content": format!("question {i}")}))?;
    /// }
    /// let view = store.read_session(session.id())?;
    /// // The leading system messages, then the last two.
    /// let last_two = ModelViewOptions { last_n: Some(2), ..ModelViewOptions::default() };
    /// let sent = view.model_view(&last_two)?;
    /// let roles: Vec<_> = sent.iter().map(|m| m.value()["role"].clone()).collect();
    /// assert_eq!(roles, ["system", "user", "user"]);
    /// assert_eq!(sent[2].value()["content"], "question 4");
    /// # Ok(())
    /// # }
    /// ```
    pub fn model_view(&self, opts: &ModelViewOptions) -> Result<Vec<Message>> {
        self.core.model_view(opts)
    }

    /// Every message with its place in the tree, in log order.
    pub fn tree(&self) -> Result<Vec<TreeNode>> {
        self.core.tree()
    }

    /// The branches of the session: one per leaf (and one ending at the head),
    /// the active one marked.
    pub fn branches(&self) -> Result<Vec<Branch>> {
        self.core.branches()
    }

    /// The message (on any branch) whose id is `prefix`, else the only one
    /// whose id starts with it; errors as [`crate::Store::resolve_session`].
    pub fn resolve_message(&self, prefix: &str) -> Result<String> {
        crate::ops::lookup::resolve_message(&self.core, prefix)
    }

    /// What loading found: head, header, message count, read report, records.
    pub fn info(&self) -> crate::ops::info::ViewInfo {
        crate::ops::info::view_info(&self.core)
    }
}
