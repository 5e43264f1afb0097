//! Operations a host runs on a store as a whole, each with a typed result:
//! doctor, look-up by id prefix, info objects, export, the rewind preview. The
//! bindings (CLI, C ABI, Python, Node) call them through the methods of
//! [`crate::Store`], [`crate::Session`] and [`crate::SessionView`] and only
//! convert types.

pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod info;
pub(crate) mod lookup;
pub(crate) mod rewind;
