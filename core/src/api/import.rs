//! The calls that span the projects of a home, so are functions, not methods
//! of one project's [`crate::Store`]: importing other agents' transcripts
//! (each source names its own project) and listing every project's sessions.

use std::path::PathBuf;

use crate::error::Result;
use crate::ops::import::{ImportOptions, ImportProgress, ImportReport};

/// Import transcripts of Claude Code, the Codex CLI or seed-style flat logs:
/// each path is a file or a directory searched for `*.jsonl` files (the format
/// detected per file unless `options.from` names it). Each source goes into
/// the project it names (its working directory) or `options.project`, as the
/// session it names; every source line's exact text is kept (FORMAT.md §22).
/// Importing a file again adds only the lines it gained; a file whose
/// imported part changed is reported, not imported. Sources are only read.
/// `progress` is called before each file. A source that cannot be imported is
/// reported in its [`crate::SourceReport`]; the call fails only when a path
/// does not exist or cannot be read as a directory.
///
/// ```
/// # use sessionkit::{import, ImportOptions, StoreOptions};
/// # fn main() -> sessionkit::Result<()> {
/// # let tmp = tempfile::tempdir().expect("temp dir");
/// let transcript = tmp.path().join("chat.jsonl");
/// std::fs::write(&transcript, "{\"id\":\"1\",\"role\":\"user\",\"content\":\"hi\"}\n").expect("write");
/// let options = ImportOptions {
///     project: Some(tmp.path().to_path_buf()),
///     store: StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() },
///     ..ImportOptions::default()
/// };
/// let report = import(&[transcript.clone()], &options, &mut |_| {})?;
/// assert_eq!(report.messages_added, 1);
/// // Again: nothing new.
/// assert_eq!(import(&[transcript], &options, &mut |_| {})?.messages_added, 0);
/// # Ok(())
/// # }
/// ```
pub fn import(
    paths: &[PathBuf],
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport> {
    crate::ops::import::import(paths, options, progress)
}

/// The sessions of every project in the home of `options` (`sessionkit list
/// --all`), by project code. A project whose root no longer exists is listed
/// with the reason and no sessions.
pub fn list_all_sessions(
    options: &crate::options::StoreOptions,
) -> Result<Vec<crate::ops::home::ProjectSessions>> {
    crate::ops::home::list_all(options)
}
