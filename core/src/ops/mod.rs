//! Operations: what a host does with a store or a session beyond appending —
//! compaction, fork, undo and rewind, doctor, look-up by id prefix, info objects,
//! export, import of other agents' transcripts, OpenAI Responses items as messages. Each builds on the store and session layer, has a typed result, and
//! is reached through the public handles (`Store`, `Session`, `SessionView`);
//! the bindings (CLI, C ABI, Python, Node) only convert types.

pub(crate) mod checkpoints;
pub(crate) mod compaction;
pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod fork;
pub(crate) mod home;
pub(crate) mod import;
pub(crate) mod info;
pub(crate) mod lookup;
pub(crate) mod responses;
pub(crate) mod rewind;
pub(crate) mod search;
pub(crate) mod undo;
