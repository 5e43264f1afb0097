//! The sessions of every project in a home (`sessionkit list --all`).

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::index::IndexEntry;
use crate::options::StoreOptions;
use crate::store::StoreCore;

/// One project of a home and its sessions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSessions {
    /// The project's directory name under `<home>/projects/`.
    pub project_code: String,
    /// The project root its sessions' headers name, when one does.
    pub project_root: Option<PathBuf>,
    /// Its sessions, newest first.
    pub sessions: Vec<IndexEntry>,
    /// Why the sessions could not be listed (e.g. the project root is gone).
    pub error: Option<String>,
}

/// Every project under the home of `options`, sorted by code.
pub(crate) fn list_all(options: &StoreOptions) -> Result<Vec<ProjectSessions>> {
    let projects = options.resolve_home()?.join("projects");
    let mut dirs: Vec<PathBuf> = match fs::read_dir(&projects) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(&projects, e)),
    };
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let code = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let root = project_root_of(&dir);
        let listed = match &root {
            // A project whose directory is not on this machine (imported
            // from another, moved, deleted) still lists its sessions.
            Some(r) => StoreCore::open_recorded(r, options.clone())
                .and_then(|(s, _)| s.list_sessions())
                .map_err(|e| e.to_string()),
            None => Err(format!(
                "no session log in {} names its project",
                dir.display()
            )),
        };
        let (sessions, error) = match listed {
            Ok(s) => (s, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        out.push(ProjectSessions {
            project_code: code,
            project_root: root,
            sessions,
            error,
        });
    }
    Ok(out)
}

/// The `projectPath` of the first session header found in `dir` (FORMAT.md
/// §6.1): the project code is lossy, the header is not.
fn project_root_of(dir: &Path) -> Option<PathBuf> {
    let mut logs: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    logs.sort();
    logs.iter().find_map(|p| {
        let mut first = String::new();
        BufReader::new(fs::File::open(p).ok()?)
            .read_line(&mut first)
            .ok()?;
        let v: Value = serde_json::from_str(&first).ok()?;
        (v.get("type")? == "session")
            .then(|| v.get("projectPath")?.as_str().map(PathBuf::from))
            .flatten()
    })
}
