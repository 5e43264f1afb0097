//! Operations: what a host does with a session beyond appending — compaction,
//! fork, undo and rewind. Each builds on the store and session layer and is
//! reached through the public handles (`StoreCore`, `SessionCore`).

pub(crate) mod compaction;
pub(crate) mod fork;
pub(crate) mod undo;
