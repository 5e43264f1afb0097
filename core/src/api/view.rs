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

    pub fn active_path(&self) -> Result<Vec<Message>> {
        self.core.active_path()
    }

    pub fn ui_view(&self) -> Result<Vec<Message>> {
        self.core.ui_view()
    }

    pub fn message(&self, id: &str) -> Result<Message> {
        self.core.message(id)
    }

    pub fn head(&self) -> Option<&str> {
        self.core.head()
    }

    pub fn header(&self) -> Option<&serde_json::Map<String, Value>> {
        self.core.header()
    }

    pub fn report(&self) -> &ReadReport {
        self.core.report()
    }

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

    /// What goes to the model (folded from the whole log).
    pub fn model_view(&self, opts: &ModelViewOptions) -> Result<Vec<Message>> {
        self.core.model_view(opts)
    }

    pub fn tree(&self) -> Result<Vec<TreeNode>> {
        self.core.tree()
    }

    pub fn branches(&self) -> Result<Vec<Branch>> {
        self.core.branches()
    }

    /// The message (on any branch) whose id is `prefix`, else the only one
    /// whose id starts with it; errors as [`Store::resolve_session`].
    pub fn resolve_message(&self, prefix: &str) -> Result<String> {
        crate::ops::lookup::resolve_message(&self.core, prefix)
    }

    /// What loading found: head, header, message count, read report, records.
    pub fn info(&self) -> crate::ops::info::ViewInfo {
        crate::ops::info::view_info(&self.core)
    }
}
