//! The format layer: what the bytes of a store mean, with no I/O of its own —
//! record types and their checks, ids, the project code, how a log line is
//! written as JSON. Everything above reads and writes through these definitions;
//! nothing here imports a module above it. The contract is docs/FORMAT.md.

pub(crate) mod decode;
pub(crate) mod facts;
pub(crate) mod ids;
pub(crate) mod json;
pub(crate) mod layout;
pub(crate) mod project;
pub(crate) mod records;
pub(crate) mod tool_calls;
