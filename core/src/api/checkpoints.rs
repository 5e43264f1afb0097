//! The [`Store`] methods of a graph checkpointer (LangGraph's contract), each
//! delegating to `ops::checkpoints` (FORMAT.md §24).

use crate::api::Store;
use crate::error::Result;
use crate::ops::checkpoints::{
    CheckpointPut, CheckpointQuery, CheckpointSummary, CheckpointTuple, Checkpoints, DeltaHistory,
    PruneStrategy, TypedValue,
};

impl Store {
    fn checkpoints(&self) -> Checkpoints<'_> {
        Checkpoints {
            store: &self.core,
            threads: &self.threads,
        }
    }

    /// Store a checkpoint of thread `thread_id` (any string, mapped to a session
    /// like a conversation id) with the values of its new channel versions, in
    /// one write. A checkpoint id stored before is replaced. A value the thread
    /// holds already is not stored again.
    pub fn checkpoint_put(&self, thread_id: &str, put: CheckpointPut) -> Result<()> {
        self.checkpoints().put(thread_id, put)
    }

    /// Store the writes (channel, value) task `task_id` made, pending on a
    /// checkpoint. A write at an index the task wrote before is kept as first
    /// written, except to the special channels, which are replaced.
    pub fn checkpoint_put_writes(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        writes: Vec<(String, TypedValue)>,
    ) -> Result<()> {
        self.checkpoints()
            .put_writes(thread_id, ns, checkpoint_id, task_id, task_path, writes)
    }

    /// Checkpoint `checkpoint_id` of a thread's namespace `ns`, or its newest;
    /// `None` when there is none.
    pub fn checkpoint_get(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointTuple>> {
        self.checkpoints().get(thread_id, ns, checkpoint_id)
    }

    /// The checkpoints `query` selects, newest first within each thread and
    /// namespace.
    pub fn checkpoint_list(&self, query: &CheckpointQuery) -> Result<Vec<CheckpointTuple>> {
        self.checkpoints().list(query)
    }

    /// Move a thread's session to the trash: gone from every read, restorable
    /// with [`Store::restore_session`] until `gc` purges it.
    pub fn checkpoint_delete_thread(&self, thread_id: &str) -> Result<()> {
        self.checkpoints().delete_thread(thread_id)
    }

    /// Copy every checkpoint, write and value of `source` into `target`.
    pub fn checkpoint_copy_thread(&self, source: &str, target: &str) -> Result<()> {
        self.checkpoints().copy_thread(source, target)
    }

    /// Keep the newest checkpoint of each namespace of these threads, or move
    /// the threads to the trash.
    pub fn checkpoint_prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        self.checkpoints().prune(thread_ids, strategy)
    }

    /// Remove, in every thread, the checkpoints of these runs
    /// (`metadata.run_id`) with their writes.
    pub fn checkpoint_delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        self.checkpoints().delete_for_runs(run_ids)
    }

    /// For each channel, the writes on the path to a checkpoint back to the
    /// nearest ancestor holding a value for it (LangGraph's
    /// `get_delta_channel_history`).
    pub fn checkpoint_delta_history(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
        channels: &[String],
    ) -> Result<Vec<DeltaHistory>> {
        self.checkpoints()
            .delta_history(thread_id, ns, checkpoint_id, channels)
    }

    /// The checkpoints session `session_id` holds (a checkpointer's thread),
    /// without their values, oldest first in each namespace: what `sessionkit
    /// show` lists. Empty for a session of messages only.
    pub fn checkpoint_summaries(&self, session_id: &str) -> Result<Vec<CheckpointSummary>> {
        self.checkpoints().summaries(session_id)
    }
}
