//! Where each tool keeps its transcripts by default (FORMAT.md §22.1), so
//! that `sessionkit import` without a path, and its `--watch` form, can keep
//! a copy before the tool's own cleanup deletes them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{source, ImportFormat};

/// A tool's transcript directory, as [`default_sources`] finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DefaultSource {
    /// The format of the transcripts under it.
    pub format: ImportFormat,
    /// The directory.
    pub path: PathBuf,
}

impl ImportFormat {
    /// Where this format's tool keeps its transcripts, from the environment
    /// `env` gives (a variable's value, `None` when unset): Claude Code
    /// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`; Codex
    /// `$CODEX_HOME/sessions`, else `~/.codex/sessions`; pi
    /// `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`; Gemini
    /// CLI `$GEMINI_CLI_HOME/.gemini/tmp`, else `~/.gemini/tmp`; GitHub
    /// Copilot CLI `$COPILOT_HOME/session-state`, else
    /// `~/.copilot/session-state`; opencode its data directory,
    /// `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode` (its
    /// `opencode*.db` and the 1.1 `storage/` tree; a database `OPENCODE_DB`
    /// puts elsewhere is given by path). `~` is
    /// `$HOME`. A variable that is empty or not an absolute path counts as
    /// unset (a relative one would depend on where the import runs). `None`
    /// for a format without a home of its own (`deepcode`) or when no
    /// absolute `HOME` is set. Whether the directory exists is not checked.
    pub fn default_location(self, env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        let var = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let home = || var("HOME");
        // A new importer's tool gets its line here (and in FORMAT.md §22.1).
        match self {
            ImportFormat::ClaudeCode => Some(
                var("CLAUDE_CONFIG_DIR")
                    .or_else(|| Some(home()?.join(".claude")))?
                    .join("projects"),
            ),
            ImportFormat::Codex => Some(
                var("CODEX_HOME")
                    .or_else(|| Some(home()?.join(".codex")))?
                    .join("sessions"),
            ),
            ImportFormat::Pi => Some(
                var("PI_CODING_AGENT_DIR")
                    .or_else(|| Some(home()?.join(".pi").join("agent")))?
                    .join("sessions"),
            ),
            ImportFormat::GeminiCli => Some(
                var("GEMINI_CLI_HOME")
                    .or_else(home)?
                    .join(".gemini")
                    .join("tmp"),
            ),
            ImportFormat::CopilotCli => Some(
                var("COPILOT_HOME")
                    .or_else(|| Some(home()?.join(".copilot")))?
                    .join("session-state"),
            ),
            ImportFormat::Opencode => Some(
                var("XDG_DATA_HOME")
                    .or_else(|| Some(home()?.join(".local").join("share")))?
                    .join("opencode"),
            ),
            ImportFormat::Deepcode => None,
        }
    }
}

/// The default locations ([`ImportFormat::default_location`]) that exist as
/// directories, in the order of [`ImportFormat::ALL`]; `env` as there (for
/// the process's own environment, `&|k| std::env::var_os(k)`).
pub fn default_sources(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<DefaultSource> {
    ImportFormat::ALL
        .iter()
        .filter_map(|&format| {
            let path = format.default_location(env)?;
            path.is_dir().then_some(DefaultSource { format, path })
        })
        .collect()
}

/// The source an import reads for a change at `path`, `None` when it
/// concerns none: a file an import of its directory reads (`*.jsonl`, an
/// opencode database `opencode*.db` or an opencode 1.1 session file;
/// FORMAT.md §22.1) is its own source, and an opencode database's `-wal` or
/// `-shm` file (where a running opencode writes new rows first) names its
/// database. For a watcher deciding which changed files to import again;
/// whether the source is a regular file is checked when it is read.
pub fn import_source_of(path: &Path) -> Option<PathBuf> {
    if source::is_source_file(path) {
        return Some(path.to_path_buf());
    }
    let name = path.file_name()?.to_str()?;
    let db = name
        .strip_suffix("-wal")
        .or_else(|| name.strip_suffix("-shm"))?;
    let db = path.with_file_name(db);
    source::is_opencode_db_name(&db).then_some(db)
}

/// Put `files` in the order an import of their directory would take them:
/// sidechain files (`agent-*.jsonl`) after the others, so that their
/// sessions exist first.
pub fn sort_import_sources(files: &mut [PathBuf]) {
    files.sort_by_cached_key(|p| (source::is_sidechain_file(p), p.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn locations_under_home() {
        let env = env_of(&[("HOME", "/home/ann")]);
        let at = |f: ImportFormat| f.default_location(&env);
        assert_eq!(
            at(ImportFormat::ClaudeCode),
            Some(PathBuf::from("/home/ann/.claude/projects"))
        );
        assert_eq!(
            at(ImportFormat::Codex),
            Some(PathBuf::from("/home/ann/.codex/sessions"))
        );
        assert_eq!(
            at(ImportFormat::Pi),
            Some(PathBuf::from("/home/ann/.pi/agent/sessions"))
        );
        assert_eq!(
            at(ImportFormat::GeminiCli),
            Some(PathBuf::from("/home/ann/.gemini/tmp"))
        );
        assert_eq!(
            at(ImportFormat::CopilotCli),
            Some(PathBuf::from("/home/ann/.copilot/session-state"))
        );
        assert_eq!(
            at(ImportFormat::Opencode),
            Some(PathBuf::from("/home/ann/.local/share/opencode"))
        );
        assert_eq!(at(ImportFormat::Deepcode), None);
    }

    #[test]
    fn overrides_win_and_relative_ones_are_ignored() {
        let env = env_of(&[
            ("HOME", "/home/ann"),
            ("CLAUDE_CONFIG_DIR", "/etc/claude"),
            ("CODEX_HOME", "/srv/codex"),
            ("PI_CODING_AGENT_DIR", "relative/pi"),
            ("GEMINI_CLI_HOME", "/g"),
        ]);
        let at = |f: ImportFormat| f.default_location(&env);
        assert_eq!(
            at(ImportFormat::ClaudeCode),
            Some(PathBuf::from("/etc/claude/projects"))
        );
        assert_eq!(
            at(ImportFormat::Codex),
            Some(PathBuf::from("/srv/codex/sessions"))
        );
        assert_eq!(
            at(ImportFormat::Pi),
            Some(PathBuf::from("/home/ann/.pi/agent/sessions"))
        );
        assert_eq!(
            at(ImportFormat::GeminiCli),
            Some(PathBuf::from("/g/.gemini/tmp"))
        );
    }

    #[test]
    fn no_home_no_location() {
        let env = env_of(&[("HOME", "")]);
        assert_eq!(ImportFormat::ClaudeCode.default_location(&env), None);
        let env = env_of(&[("CODEX_HOME", "/c")]);
        assert_eq!(
            ImportFormat::Codex.default_location(&env),
            Some(PathBuf::from("/c/sessions"))
        );
        assert_eq!(ImportFormat::Pi.default_location(&env), None);
    }

    #[test]
    fn only_existing_directories() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let home = tmp.path().to_str().expect("utf-8 temp dir").to_string();
        std::fs::create_dir_all(tmp.path().join(".claude/projects")).expect("mkdir");
        std::fs::create_dir_all(tmp.path().join(".gemini")).expect("mkdir");
        // A file where a directory is expected is not a location.
        std::fs::create_dir_all(tmp.path().join(".codex")).expect("mkdir");
        std::fs::write(tmp.path().join(".codex/sessions"), "").expect("write");
        let found = default_sources(&env_of(&[("HOME", &home)]));
        assert_eq!(
            found,
            vec![DefaultSource {
                format: ImportFormat::ClaudeCode,
                path: tmp.path().join(".claude/projects"),
            }]
        );
    }

    #[test]
    fn sources_and_their_order() {
        let of = |p: &str| import_source_of(Path::new(p)).map(|s| s.display().to_string());
        assert_eq!(of("/a/b.jsonl").as_deref(), Some("/a/b.jsonl"));
        assert_eq!(of("/a/b.json"), None);
        assert_eq!(of("/a/jsonl"), None);
        // A running opencode writes its rows to the write-ahead log first.
        assert_eq!(of("/d/opencode.db").as_deref(), Some("/d/opencode.db"));
        assert_eq!(of("/d/opencode.db-wal").as_deref(), Some("/d/opencode.db"));
        assert_eq!(
            of("/d/opencode-beta.db-shm").as_deref(),
            Some("/d/opencode-beta.db")
        );
        assert_eq!(of("/d/other.db-wal"), None);
        assert_eq!(of("/a/b.jsonl-wal"), None);
        let mut files = vec![
            PathBuf::from("/p/agent-1.jsonl"),
            PathBuf::from("/p/b.jsonl"),
            PathBuf::from("/p/a.jsonl"),
        ];
        sort_import_sources(&mut files);
        assert_eq!(
            files,
            vec![
                PathBuf::from("/p/a.jsonl"),
                PathBuf::from("/p/b.jsonl"),
                PathBuf::from("/p/agent-1.jsonl"),
            ]
        );
    }
}
