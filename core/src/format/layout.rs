//! Where everything of one project's store lives (docs/FORMAT.md §1): every path
//! of the layout is built here, from the store directory, and nowhere else.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::ids::validate_path_id;

/// The index file in the store directory.
pub(crate) const INDEX_FILE: &str = "sessions-index.json";
/// The structure cache's file name in a session's sidecar directory `<id>/`.
pub(crate) const STRUCTURE_CACHE_FILE: &str = "log.structure";
/// Subdirectory of a session's sidecar directory that holds its subagents.
pub(crate) const SUBAGENTS_DIR: &str = "subagents";
/// The trash directory in the store directory (FORMAT.md §1.2, §10.6).
pub(crate) const TRASH_DIR: &str = "trash";
/// What a trashed session's directory `trash/<id>/` says about it.
pub(crate) const TRASHED_FILE: &str = "trashed.json";
/// Names in the store directory that belong to the store, never to a session.
pub const RESERVED_NAMES: [&str; 3] = ["blobs", "file-history", TRASH_DIR];

/// The paths of one project's store directory.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub dir: PathBuf,
}

impl Layout {
    pub fn new(dir: PathBuf) -> Layout {
        Layout { dir }
    }

    /// A session's log, after checking that `id` may name files.
    pub fn log_path(&self, id: &str) -> Result<PathBuf> {
        check_session_id(id)?;
        Ok(self.dir.join(format!("{id}.jsonl")))
    }

    /// A session's sidecar directory `<id>/` (subagents, structure cache).
    pub fn session_dir(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Where a session's structure cache lives (FORMAT.md §5.1).
    pub fn structure_cache_path(&self, id: &str) -> PathBuf {
        self.session_dir(id).join(STRUCTURE_CACHE_FILE)
    }

    /// The directory of a session's subagent logs.
    pub fn subagents_dir(&self, session_id: &str) -> PathBuf {
        subagents_dir_in(&self.session_dir(session_id))
    }

    /// A subagent's log, after checking both ids.
    pub fn subagent_log_path(&self, session_id: &str, agent_id: &str) -> Result<PathBuf> {
        validate_path_id("session id", session_id)?;
        validate_path_id("agent id", agent_id)?;
        Ok(self
            .subagents_dir(session_id)
            .join(format!("{agent_id}.jsonl")))
    }

    /// The trash: where pruned sessions wait to be restored or purged.
    pub fn trash_dir(&self) -> PathBuf {
        self.dir.join(TRASH_DIR)
    }

    /// A trashed session's directory `trash/<id>/`, after checking `id`.
    pub fn trash_entry_dir(&self, id: &str) -> Result<PathBuf> {
        check_session_id(id)?;
        Ok(self.trash_dir().join(id))
    }

    pub fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }

    /// The advisory lock for the index's read-modify-write.
    pub fn project_lock_path(&self) -> PathBuf {
        self.dir.join(".lock")
    }
}

/// The files of session `id` in `dir`: the store directory when the session is
/// live, its trash directory `trash/<id>/` when it is trashed (the same names
/// in both, so a move is one rename per file). `id` must be checked.
#[derive(Debug, Clone)]
pub(crate) struct SessionFiles {
    /// `<id>.jsonl`
    pub log: PathBuf,
    /// `<id>.jsonl.corrupt`
    pub corrupt: PathBuf,
    /// The sidecar directory `<id>/`.
    pub sidecar: PathBuf,
}

pub(crate) fn session_files_in(dir: &Path, id: &str) -> SessionFiles {
    SessionFiles {
        log: dir.join(format!("{id}.jsonl")),
        corrupt: dir.join(format!("{id}.jsonl.corrupt")),
        sidecar: dir.join(id),
    }
}

/// The subagents directory of a sidecar directory found by listing the store.
pub(crate) fn subagents_dir_in(session_dir: &Path) -> PathBuf {
    session_dir.join(SUBAGENTS_DIR)
}

/// Check that `id` may name a session's files: a path id (no separator, not
/// `.` or `..`), not one of the store's own entries, and not like another
/// session's files.
pub(crate) fn check_session_id(id: &str) -> Result<()> {
    validate_path_id("session id", id)?;
    // A session's sidecar directory is named by its id: it must not be one of
    // the store's own entries, nor look like another session's files.
    if RESERVED_NAMES.contains(&id)
        || [".jsonl", ".json", ".corrupt"]
            .iter()
            .any(|x| id.ends_with(x))
    {
        return Err(Error::invalid(format!(
            "session id {id:?} is reserved (it names store files: {})",
            RESERVED_NAMES.join(", ")
        )));
    }
    Ok(())
}

/// The longest conversation id an adapter accepts, in UTF-8 bytes.
pub const MAX_CONVERSATION_ID_BYTES: usize = 1024;
/// How much of a mapped conversation id stays readable in its session id.
const CONVERSATION_PREFIX_BYTES: usize = 48;

/// The session id that holds the conversation `conversation_id` (FORMAT.md
/// §3.3): the id itself when it is a valid, unreserved session id; otherwise
/// `c-`, the first 48 bytes of the id with every byte outside `[A-Za-z0-9]`
/// made `-`, `-`, and the first 16 lowercase hex digits of SHA-256 of the id's
/// bytes. Deterministic, and never a path outside the store: the result is a
/// valid session id by construction.
pub fn conversation_session_id(conversation_id: &str) -> Result<String> {
    if conversation_id.is_empty() {
        return Err(Error::invalid("conversation id is empty"));
    }
    if conversation_id.len() > MAX_CONVERSATION_ID_BYTES {
        return Err(Error::invalid(format!(
            "conversation id is {} bytes, over the limit of {MAX_CONVERSATION_ID_BYTES} (UTF-8)",
            conversation_id.len()
        )));
    }
    if check_session_id(conversation_id).is_ok() {
        return Ok(conversation_id.to_owned());
    }
    use sha2::{Digest, Sha256};
    let prefix: String = conversation_id
        .bytes()
        .take(CONVERSATION_PREFIX_BYTES)
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '-'
            }
        })
        .collect();
    let digest = Sha256::digest(conversation_id.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("c-{prefix}-{hex}"))
}

#[cfg(test)]
mod conversation_tests {
    use super::*;

    #[test]
    fn valid_session_ids_are_their_own_session_ids() {
        for id in ["abc", "user_1", "019b76da-0000-7000-8000-000000000000"] {
            assert_eq!(conversation_session_id(id).unwrap(), id);
        }
    }

    #[test]
    fn other_ids_map_to_a_readable_prefix_and_a_hash() {
        let id = conversation_session_id("user@example.com").unwrap();
        assert!(id.starts_with("c-user-example-com-"), "{id}");
        assert_eq!(id.len(), "c-user-example-com-".len() + 16);
        check_session_id(&id).unwrap();
        // The examples of FORMAT.md §3.3.
        assert_eq!(id, "c-user-example-com-b4c9a289323b21a0");
        assert_eq!(
            conversation_session_id("../x").unwrap(),
            "c----x-d6b96a97d147daaa"
        );
        for hostile in [
            "../x",
            "..",
            ".",
            "a/b",
            "tenant/123",
            "blobs",
            "x.jsonl",
            "日本語",
            " ",
            "a\0b",
        ] {
            let id = conversation_session_id(hostile).unwrap();
            check_session_id(&id).unwrap();
            assert!(
                !id.contains('/') && !id.starts_with('.'),
                "{hostile:?} -> {id}"
            );
        }
        assert_ne!(
            conversation_session_id("a/b").unwrap(),
            conversation_session_id("a:b").unwrap()
        );
        let long = "x".repeat(MAX_CONVERSATION_ID_BYTES);
        assert!(conversation_session_id(&format!("{long}/")).is_err());
        assert!(conversation_session_id(&format!("{}/", &long[1..])).is_ok());
        assert!(conversation_session_id("").is_err());
    }
}
