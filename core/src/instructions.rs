//! The instruction files (`AGENTS.md`, `CLAUDE.md`, ...) that apply to a working
//! directory: the user's, then those from the repository root down to the
//! directory, each followed by the files it includes with `@path`
//! (docs/SETTINGS.md, "Instruction files"). Nothing outside the allowed roots
//! is read: every path is resolved (symlinks too) and checked first.

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The names recognised when neither the call nor the settings name any.
pub const DEFAULT_INSTRUCTION_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// How deep `@path` includes nest when neither the call nor the settings say.
pub const DEFAULT_MAX_INCLUDE_DEPTH: usize = 5;
/// The deepest include nesting a call or a setting may ask for: includes are
/// followed recursively, and no instruction tree needs more.
pub const MAX_INCLUDE_DEPTH_LIMIT: usize = 64;
/// An instruction file larger than this is reported, not read.
pub const MAX_INSTRUCTION_BYTES: u64 = 256 * 1024;

/// What to look for; unset fields come from the settings (`instructions.names`,
/// `instructions.maxIncludeDepth`), then the defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct InstructionOptions {
    /// The file names recognised in each directory, in the order they load.
    pub names: Option<Vec<String>>,
    /// How many levels of `@path` includes are followed.
    pub max_include_depth: Option<usize>,
}

impl InstructionOptions {
    /// Parse options from a JSON object (the form the C ABI and bindings use).
    pub fn from_json(json: &str) -> Result<InstructionOptions> {
        crate::format::json::options_from_json("instruction options", json)
    }
}

/// Where an instruction file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InstructionLevel {
    /// In the sessionkit home: the user's own, for every project.
    User,
    /// In a directory from the repository root down to the working directory.
    Project,
    /// Included by another file with `@path`.
    Include,
}

/// One instruction file, in load order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstructionFile {
    /// The file, as found (before resolving symlinks).
    pub path: PathBuf,
    /// User, project or include.
    pub level: InstructionLevel,
    /// For an include: the file that included it.
    pub included_from: Option<PathBuf>,
    /// 0 for a file found by name, 1 for its includes, and so on.
    pub depth: usize,
    /// Its text (invalid UTF-8 replaced).
    pub content: String,
}

/// Why a file was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProblemKind {
    /// An include that leads back to a file it is included from.
    Cycle,
    /// An include nested deeper than the limit.
    DepthLimit,
    /// A path that resolves outside the allowed roots.
    OutsideRoots,
    /// An include naming no file.
    NotFound,
    /// A file over 256 KiB (`MAX_INSTRUCTION_BYTES`).
    TooLarge,
    /// Anything else the operating system reported, or not a regular file.
    Unreadable,
}

/// A file that was not read, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstructionProblem {
    /// What went wrong.
    pub kind: ProblemKind,
    /// The file concerned.
    pub path: PathBuf,
    /// The file whose `@path` named it, for an include.
    pub included_from: Option<PathBuf>,
    /// What went wrong, with the paths.
    pub message: String,
}

/// The instruction files of a working directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Instructions {
    /// The directory asked about, resolved.
    pub dir: PathBuf,
    /// Where the project walk started: the nearest ancestor holding `.git`,
    /// else the project root when the directory is inside it, else the directory.
    pub root: PathBuf,
    /// The names recognised.
    pub names: Vec<String>,
    /// The include depth limit.
    pub max_include_depth: usize,
    /// The files, in the order they apply: later ones are more specific.
    pub files: Vec<InstructionFile>,
    /// Files named or included that were not read.
    pub problems: Vec<InstructionProblem>,
}

/// Collect the instruction files for `dir`. `user_dir` is the sessionkit home,
/// `project_root` the store's project; both, and the repository root, are the
/// only places files are read from.
pub(crate) fn collect(
    dir: &Path,
    user_dir: &Path,
    project_root: &Path,
    names: Vec<String>,
    max_include_depth: usize,
) -> Result<Instructions> {
    for n in &names {
        let plain = Path::new(n).file_name().is_some_and(|f| f == n.as_str());
        // A NUL cannot reach the operating system, and a control character
        // names no instruction file anyone writes: both are the caller's mistake.
        if !plain || n == ".." || n == "." || n.chars().any(char::is_control) {
            return Err(Error::invalid(format!(
                "instruction file name {n:?} must be a plain file name"
            )));
        }
    }
    if dir.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(Error::invalid(format!(
            "directory {:?} contains a NUL byte",
            dir.display()
        )));
    }
    let given = dir;
    let dir = match fs::canonicalize(given) {
        Ok(d) => d,
        // A path through a file, or a symbolic-link loop: no directory either.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP)) => {
            return Err(Error::NotFound(format!(
                "directory {}: {e}",
                given.display()
            )));
        }
        Err(e) => return Err(Error::io(given, e)),
    };
    if !dir.is_dir() {
        return Err(Error::NotFound(format!(
            "directory {}: not a directory",
            given.display()
        )));
    }
    let project_root = fs::canonicalize(project_root).unwrap_or_else(|_| project_root.into());
    let root = dir
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
        .or_else(|| dir.starts_with(&project_root).then(|| project_root.clone()))
        .unwrap_or_else(|| dir.clone());
    let mut roots = vec![root.clone()];
    if let Ok(u) = fs::canonicalize(user_dir) {
        roots.push(u);
    }
    let mut walk = Walk {
        roots,
        max_depth: max_include_depth,
        seen: HashSet::new(),
        files: Vec::new(),
        problems: Vec::new(),
    };
    for n in &names {
        walk.found(&user_dir.join(n), InstructionLevel::User);
    }
    let mut chain: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| a.starts_with(&root))
        .collect();
    chain.reverse();
    for d in chain {
        for n in &names {
            walk.found(&d.join(n), InstructionLevel::Project);
        }
    }
    Ok(Instructions {
        dir,
        root,
        names,
        max_include_depth,
        files: walk.files,
        problems: walk.problems,
    })
}

struct Walk {
    roots: Vec<PathBuf>,
    max_depth: usize,
    /// Resolved paths already listed: a file reached twice is listed once.
    seen: HashSet<PathBuf>,
    files: Vec<InstructionFile>,
    problems: Vec<InstructionProblem>,
}

impl Walk {
    fn within_roots(&self, real: &Path) -> bool {
        self.roots.iter().any(|r| real.starts_with(r))
    }

    /// A file found by name: listed if it exists.
    fn found(&mut self, path: &Path, level: InstructionLevel) {
        if fs::symlink_metadata(path).is_ok() {
            self.load(path, level, None, 0, &mut Vec::new());
        }
    }

    fn problem(&mut self, kind: ProblemKind, path: &Path, from: Option<&Path>, message: String) {
        self.problems.push(InstructionProblem {
            kind,
            path: path.to_path_buf(),
            included_from: from.map(Path::to_path_buf),
            message,
        });
    }

    /// List `path` and, depth first, what it includes. `stack` holds the
    /// resolved files including it, to spot cycles.
    fn load(
        &mut self,
        path: &Path,
        level: InstructionLevel,
        from: Option<&Path>,
        depth: usize,
        stack: &mut Vec<PathBuf>,
    ) {
        let real = match fs::canonicalize(path) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Whether a file outside the roots exists is not for us to say.
                let parent = path
                    .ancestors()
                    .skip(1)
                    .find_map(|d| fs::canonicalize(d).ok());
                if parent.is_some_and(|d| !self.within_roots(&d)) {
                    let m = format!(
                        "instruction file {} is outside the allowed roots; not read",
                        path.display()
                    );
                    return self.problem(ProblemKind::OutsideRoots, path, from, m);
                }
                let what = if fs::symlink_metadata(path).is_ok() {
                    "is a dangling symbolic link"
                } else {
                    "does not exist"
                };
                let m = format!("instruction file {} {what}", path.display());
                return self.problem(ProblemKind::NotFound, path, from, m);
            }
            Err(e) => {
                let m = format!("instruction file {}: {e}", path.display());
                return self.problem(ProblemKind::Unreadable, path, from, m);
            }
        };
        if !self.within_roots(&real) {
            let m = format!(
                "instruction file {} resolves to {}, outside the allowed roots ({}); not read",
                path.display(),
                real.display(),
                self.roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return self.problem(ProblemKind::OutsideRoots, path, from, m);
        }
        if stack.contains(&real) {
            let m = format!(
                "include cycle: {} includes {}, which is already being included",
                from.unwrap_or(path).display(),
                path.display()
            );
            return self.problem(ProblemKind::Cycle, path, from, m);
        }
        if !self.seen.insert(real.clone()) {
            return;
        }
        let content = match read_limited(&real) {
            Ok(c) => c,
            Err((kind, m)) => return self.problem(kind, path, from, m),
        };
        let includes = include_paths(&content);
        self.files.push(InstructionFile {
            path: path.to_path_buf(),
            level,
            included_from: from.map(Path::to_path_buf),
            depth,
            content,
        });
        let base = real.parent().unwrap_or(Path::new("/")).to_path_buf();
        stack.push(real);
        for inc in includes {
            let target = base.join(&inc);
            if depth + 1 > self.max_depth {
                let m = format!(
                    "{} includes {} deeper than the limit of {} levels; not read",
                    path.display(),
                    target.display(),
                    self.max_depth
                );
                self.problem(ProblemKind::DepthLimit, &target, Some(path), m);
                continue;
            }
            self.load(
                &target,
                InstructionLevel::Include,
                Some(path),
                depth + 1,
                stack,
            );
        }
        stack.pop();
    }
}

/// A regular file's text, up to the size limit.
fn read_limited(real: &Path) -> std::result::Result<String, (ProblemKind, String)> {
    let unreadable = |e: std::io::Error| {
        (
            ProblemKind::Unreadable,
            format!("instruction file {}: {e}", real.display()),
        )
    };
    let meta = fs::metadata(real).map_err(unreadable)?;
    if !meta.is_file() {
        return Err((
            ProblemKind::Unreadable,
            format!("instruction file {} is not a regular file", real.display()),
        ));
    }
    let mut bytes = Vec::new();
    fs::File::open(real)
        .and_then(|f| f.take(MAX_INSTRUCTION_BYTES + 1).read_to_end(&mut bytes))
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_INSTRUCTION_BYTES {
        return Err((
            ProblemKind::TooLarge,
            format!(
                "instruction file {} is larger than {MAX_INSTRUCTION_BYTES} bytes; not read",
                real.display()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The `@path` includes of a text, in order: a word that starts with `@`, at
/// the start of a line or after white space, outside fenced code blocks and
/// inline code.
pub(crate) fn include_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Words inside `inline code` are the odd-numbered pieces.
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            for word in piece.split_whitespace() {
                if let Some(p) = word.strip_prefix('@').filter(|p| !p.is_empty()) {
                    out.push(p.to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_skip_code_and_mail_addresses() {
        let text = "See @docs/a.md and me@example.com\n```\n@not/this\n```\n`@nor/this` @b.md\n";
        assert_eq!(include_paths(text), vec!["docs/a.md", "b.md"]);
    }
}
