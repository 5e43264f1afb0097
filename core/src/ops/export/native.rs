//! Export of a session into another agent's own store, where that agent lists
//! and resumes it (FORMAT.md §22.9, §22.10): one call, [`export_to`], for every
//! target; the shape of each target's file is in its module.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::store::StoreCore;

/// The agents a session exports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExportTarget {
    /// Claude Code: `<claude home>/projects/<project dir>/<uuid>.jsonl`.
    ClaudeCode,
    /// The Codex CLI: `<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
}

impl ExportTarget {
    /// Every target.
    pub const ALL: [ExportTarget; 2] = [ExportTarget::ClaudeCode, ExportTarget::Codex];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ExportTarget::ClaudeCode => "claude-code",
            ExportTarget::Codex => "codex",
        }
    }

    /// The agent's home when none is given: its own environment variable,
    /// else its directory in the user's home.
    fn default_home(self) -> Result<PathBuf> {
        let (var, dir) = match self {
            ExportTarget::ClaudeCode => ("CLAUDE_CONFIG_DIR", ".claude"),
            ExportTarget::Codex => ("CODEX_HOME", ".codex"),
        };
        if let Some(h) = std::env::var_os(var).filter(|h| !h.is_empty()) {
            return Ok(PathBuf::from(h));
        }
        match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(h) => Ok(PathBuf::from(h).join(dir)),
            None => Err(Error::invalid(format!(
                "{} export: no home to export to: give home, or set {var} or HOME",
                self.name()
            ))),
        }
    }
}

impl std::fmt::Display for ExportTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ExportTarget {
    type Err = Error;
    fn from_str(s: &str) -> Result<ExportTarget> {
        ExportTarget::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "export target {s:?} is not one of \"claude-code\", \"codex\""
                ))
            })
    }
}

/// Options of [`Store::export_to`](crate::Store::export_to), as JSON
/// `{"to": "claude-code", "home": "/abs/dir", "modelProvider": "openai"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportToOptions {
    /// The agent to export to.
    pub to: ExportTarget,
    /// The agent's home, absolute: Claude Code's config directory (default
    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`) or Codex's (default
    /// `$CODEX_HOME`, else `~/.codex`). `codexHome` is accepted as its
    /// earlier name.
    #[serde(default, alias = "codexHome")]
    pub home: Option<PathBuf>,
    /// Codex only: the `model_provider` recorded (Codex's picker lists only
    /// the sessions of the provider it is configured with). Default `openai`.
    #[serde(default)]
    pub model_provider: Option<String>,
}

impl ExportToOptions {
    /// Options to export to `to`, the agent's default home.
    pub fn new(to: ExportTarget) -> ExportToOptions {
        ExportToOptions {
            to,
            home: None,
            model_provider: None,
        }
    }

    /// Options from their JSON text (`InvalidInput` naming what is wrong).
    pub fn from_json(text: &str) -> Result<ExportToOptions> {
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("export options: {e}")))
    }

    /// The agent's home: the option, else its default; absolute.
    fn home(&self) -> Result<PathBuf> {
        let home = match &self.home {
            Some(h) => h.clone(),
            None => self.to.default_home()?,
        };
        if !home.is_absolute() {
            return Err(Error::invalid(format!(
                "{} export: the home {} is not an absolute path",
                self.to,
                home.display()
            )));
        }
        Ok(home)
    }
}

/// Where the exported session's id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IdSource {
    /// The session's own id, a UUID.
    Session,
    /// A UUIDv7 made for the export, the same on every export of the
    /// session: its time is the session's creation, its random bits a hash of
    /// the session id (both agents need a UUID; sessionkit ids need not be one).
    Derived,
}

/// What [`Store::export_to`](crate::Store::export_to) wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeExport {
    /// The agent exported to.
    pub to: ExportTarget,
    /// The file written (or found already holding these bytes).
    pub path: PathBuf,
    /// The agent's session id (in the file's name and its lines).
    pub native_id: String,
    /// Where `native_id` comes from.
    pub id_source: IdSource,
    /// The lines written (for Codex: after `session_meta`).
    pub items: usize,
    /// Messages of the active path written as nothing (reasoning alone, which
    /// neither agent can be given without the model's own signed form).
    pub dropped: usize,
    /// False when the file already held exactly these bytes: nothing written.
    pub written: bool,
    /// The command that resumes it.
    pub resume_command: String,
    /// Something the user should know, e.g. that the agent will not list it.
    pub notice: Option<String>,
}

/// Export session `id` of `store` to the agent `options.to` names.
pub(crate) fn export_to(
    store: &StoreCore,
    id: &str,
    options: &ExportToOptions,
) -> Result<NativeExport> {
    let home = options.home()?;
    match options.to {
        ExportTarget::Codex => {
            let provider = options.model_provider.as_deref().unwrap_or("openai");
            if provider.is_empty() {
                return Err(Error::invalid("codex export: modelProvider is empty"));
            }
            super::codex::export(store, id, &home, provider)
        }
        ExportTarget::ClaudeCode => {
            if options.model_provider.is_some() {
                return Err(Error::invalid(
                    "claude-code export: modelProvider is an option of the codex export only",
                ));
            }
            super::claude_code::export(store, id, &home)
        }
    }
}

/// The session's id when it is a UUID as both agents write them (lowercase,
/// hyphenated), else a UUIDv7 derived from it (stable, so that exporting
/// again is idempotent): its time `created_ms`, its random bits the first 10
/// bytes of the SHA-256 of the id.
pub(super) fn native_id(id: &str, created_ms: u64) -> (String, IdSource) {
    if let Ok(u) = uuid::Uuid::parse_str(id) {
        let text = u.hyphenated().to_string();
        if text == id {
            return (text, IdSource::Session);
        }
    }
    let digest = sha256(id.as_bytes());
    let mut random = [0u8; 10];
    random.copy_from_slice(&digest[..10]);
    let u = uuid::Builder::from_unix_timestamp_millis(created_ms, &random).into_uuid();
    (u.hyphenated().to_string(), IdSource::Derived)
}

pub(super) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// Write `bytes` to `path` through a temp file in `dir` and a rename that
/// replaces nothing. `Ok(false)`: the file already holds these bytes; a file
/// holding others is left as it is, a `Conflict` naming it.
pub(super) fn write_new(to: ExportTarget, dir: &Path, path: &Path, bytes: &[u8]) -> Result<bool> {
    if same_file(to, path, bytes)? {
        return Ok(false);
    }
    crate::fsutil::create_private_dir(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-export-")
        .permissions(crate::platform::private_file_permissions())
        .tempfile_in(dir)
        .at(dir)?;
    tmp.write_all(bytes).at(tmp.path())?;
    tmp.as_file().sync_all().at(tmp.path())?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            crate::fsutil::sync_dir_of(path)?;
            Ok(true)
        }
        // Another export of the same session got there first.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            if same_file(to, path, bytes)? {
                Ok(false)
            } else {
                Err(conflict(to, path))
            }
        }
        Err(e) => Err(Error::io(path, e.error)),
    }
}

/// Whether `path` holds exactly `bytes`: false when it does not exist, a
/// `Conflict` naming it when it holds something else.
fn same_file(to: ExportTarget, path: &Path, bytes: &[u8]) -> Result<bool> {
    match std::fs::read(path) {
        Ok(b) if b == bytes => Ok(true),
        Ok(_) => Err(conflict(to, path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
    }
}

fn conflict(to: ExportTarget, path: &Path) -> Error {
    Error::Conflict(format!(
        "{to} export: {} exists with other contents; it is left as it is",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        let id = "019ae4f0-1c2d-7e3f-8a4b-5c6d7e8f9a0b";
        assert_eq!(native_id(id, 0), (id.to_owned(), IdSource::Session));
        let (d, s) = native_id("my-chat", 1_764_000_000_000);
        assert_eq!(s, IdSource::Derived);
        assert_eq!(native_id("my-chat", 1_764_000_000_000).0, d);
        let u = uuid::Uuid::parse_str(&d).unwrap();
        assert_eq!(u.get_version_num(), 7);
        // Upper case is a UUID, but not as the agents name files: derived.
        assert_eq!(native_id(&id.to_uppercase(), 0).1, IdSource::Derived);
    }

    #[test]
    fn target_names() {
        for t in ExportTarget::ALL {
            assert_eq!(t.name().parse::<ExportTarget>().unwrap(), t);
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
        let e = "gemini-cli".parse::<ExportTarget>().unwrap_err();
        assert!(e.to_string().contains("\"gemini-cli\""), "{e}");
    }

    #[test]
    fn options_from_json() {
        let o = ExportToOptions::from_json(r#"{"to": "codex", "codexHome": "/x"}"#).unwrap();
        assert_eq!(o.home.as_deref(), Some(Path::new("/x")));
        let e = ExportToOptions::from_json(r#"{"to": "codex", "bogus": 1}"#).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = ExportToOptions::from_json(r#"{"home": "/x"}"#).unwrap_err();
        assert!(e.to_string().contains("to"), "{e}");
    }
}
