//! The public facade: the handles hosts hold. Each file holds one handle's
//! public methods, and each method delegates to the layers below; the logic
//! lives there. lib.rs re-exports these with the other public types.

mod checkpoints;
mod config;
mod import;
#[cfg(feature = "remote")]
mod remote;
mod session;
mod store;
mod subagent;
mod view;

pub use import::{import, list_all_sessions};
#[cfg(feature = "remote")]
pub use remote::{Remote, RemoteOptions};
pub use session::Session;
pub use store::Store;
pub use subagent::Subagent;
pub use view::SessionView;
