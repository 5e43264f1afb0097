//! The project code: the directory name a project's sessions live under.
//!
//! Algorithm (also in docs/FORMAT.md, so a foreign implementation can compute it):
//! take the canonical absolute path of the project root as bytes; replace every byte
//! outside `[A-Za-z0-9]` with `-`. If the result is longer than 200 bytes, use instead
//! the first 64 bytes of the sanitized final path component, `-`, and the first 16
//! lowercase hex digits of SHA-256 of the canonical path bytes.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::platform::{os_str_bytes, path_bytes};

pub const MAX_CODE_LEN: usize = 200;
const NAME_PREFIX_LEN: usize = 64;

fn sanitize(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '-'
            }
        })
        .collect()
}

/// Compute the project code of an already canonical path.
pub fn project_code(canonical: &Path) -> String {
    let bytes = path_bytes(canonical);
    let code = sanitize(bytes);
    if code.len() <= MAX_CODE_LEN {
        return code;
    }
    let name = canonical
        .file_name()
        .map(|n| sanitize(os_str_bytes(n)))
        .unwrap_or_default();
    let prefix: String = name.chars().take(NAME_PREFIX_LEN).collect();
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

/// `path` absolute and normalised by its text alone: `.` components and
/// repeated or trailing separators dropped, `..` removing the component before
/// it (never above the root). For a recorded project directory that does not
/// exist here, where the file system cannot canonicalise it (FORMAT.md §2).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// One remapping of a path prefix: a recorded path under `from` (another
/// machine's home, a moved checkout) is taken as the same path under `to`.
/// As JSON: `{"from": "/home/a", "to": "/Users/b"}`; on a command line
/// `OLD=NEW` (its [`FromStr`](std::str::FromStr), `str::parse`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub struct PathMapping {
    /// The prefix as recorded (an absolute path).
    pub from: PathBuf,
    /// What it becomes here (an absolute path).
    pub to: PathBuf,
}

impl std::str::FromStr for PathMapping {
    type Err = Error;
    /// `OLD=NEW`, split at the first `=`; both sides must be non-empty
    /// absolute paths without a NUL byte (`InvalidInput` otherwise).
    fn from_str(s: &str) -> Result<PathMapping> {
        let Some((from, to)) = s.split_once('=') else {
            return Err(Error::invalid(format!(
                "path mapping {s:?} is not OLD=NEW (two absolute paths joined by '=')"
            )));
        };
        let m = PathMapping {
            from: from.into(),
            to: to.into(),
        };
        m.check("")?;
        Ok(m)
    }
}

/// Only the object form: serde would take a struct from a JSON array too, and
/// `["/a", "/b"]` is not a documented form.
impl TryFrom<serde_json::Map<String, serde_json::Value>> for PathMapping {
    type Error = String;
    fn try_from(
        mut m: serde_json::Map<String, serde_json::Value>,
    ) -> std::result::Result<PathMapping, String> {
        let mut side = |k: &str| match m.remove(k) {
            Some(serde_json::Value::String(s)) => Ok(PathBuf::from(s)),
            Some(v) => Err(format!("a path mapping's {k:?} must be a string, not {v}")),
            None => Err(format!("a path mapping needs {k:?}")),
        };
        let (from, to) = (side("from")?, side("to")?);
        match m.keys().next() {
            Some(k) => Err(format!(
                "a path mapping has only \"from\" and \"to\", not {k:?}"
            )),
            None => Ok(PathMapping { from, to }),
        }
    }
}

impl PathMapping {
    /// Both sides non-empty absolute paths without a NUL byte; `what` (the
    /// option holding it) opens the error.
    fn check(&self, what: &str) -> Result<()> {
        for (side, p) in [("OLD", &self.from), ("NEW", &self.to)] {
            let bytes = p.as_os_str().as_encoded_bytes();
            let why = if bytes.is_empty() {
                "is empty"
            } else if bytes.contains(&0) {
                "holds a NUL byte"
            } else if !p.is_absolute() {
                "is not an absolute path"
            } else {
                continue;
            };
            return Err(Error::invalid(format!(
                "{what}path mapping {}={}: {side} {:?} {why}",
                self.from.display(),
                self.to.display(),
                p
            )));
        }
        Ok(())
    }
}

/// Refuse mappings that are not two absolute paths each (`InvalidInput`
/// naming the mapping and `what` holds them).
pub fn check_mappings(what: &str, mappings: &[PathMapping]) -> Result<()> {
    for m in mappings {
        m.check(&format!("{what}: "))?;
    }
    Ok(())
}

/// `path` with the longest `from` that is a prefix of it in whole components
/// (`/home/a` is a prefix of `/home/a/x`, not of `/home/ab`) replaced by its
/// `to`; `None` when no mapping applies. Both are compared normalised
/// ([`normalize_lexically`]).
pub fn map_path(mappings: &[PathMapping], path: &Path) -> Option<PathBuf> {
    let path = normalize_lexically(path);
    mappings
        .iter()
        .filter_map(|m| {
            let from = normalize_lexically(&m.from);
            let rest = path.strip_prefix(&from).ok()?;
            Some((from.components().count(), m, rest.to_path_buf()))
        })
        .max_by_key(|(depth, _, _)| *depth)
        .map(|(_, m, rest)| {
            let to = normalize_lexically(&m.to);
            if rest.as_os_str().is_empty() {
                to
            } else {
                to.join(rest)
            }
        })
}

#[cfg_attr(not(feature = "remote"), allow(dead_code))]
/// `path` mapped the other way: the longest `to` prefix replaced by its
/// `from` (where a path of this machine was recorded on the other).
pub fn unmap_path(mappings: &[PathMapping], path: &Path) -> Option<PathBuf> {
    let reversed: Vec<PathMapping> = mappings
        .iter()
        .map(|m| PathMapping {
            from: m.to.clone(),
            to: m.from.clone(),
        })
        .collect();
    map_path(&reversed, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_paths_map_byte_for_byte() {
        assert_eq!(
            project_code(Path::new("/home/ann/my_app.v2")),
            "-home-ann-my-app-v2"
        );
    }

    #[test]
    fn long_paths_keep_name_and_hash() {
        let long = format!("/{}/project-x", "d".repeat(300));
        let code = project_code(Path::new(&long));
        assert!(code.starts_with("project-x-"), "{code}");
        assert_eq!(code.len(), "project-x-".len() + 16);
        let other = project_code(Path::new(&format!("/{}/project-x", "e".repeat(300))));
        assert_ne!(code, other);
    }
    #[test]
    fn lexical_normalisation_drops_dots_and_never_climbs_above_the_root() {
        for (given, want) in [
            ("/Users/dana/code/demo/", "/Users/dana/code/demo"),
            ("/a//b/./c/../d", "/a/b/d"),
            ("/../../etc", "/etc"),
            ("/", "/"),
        ] {
            assert_eq!(
                normalize_lexically(Path::new(given)),
                Path::new(want),
                "{given}"
            );
        }
    }

    #[test]
    fn mappings_take_whole_components_and_the_longest_prefix() {
        let maps: Vec<PathMapping> = ["/home/a=/Users/b", "/home/a/src=/Users/b/code"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let map = |p: &str| map_path(&maps, Path::new(p));
        assert_eq!(map("/home/a/x"), Some("/Users/b/x".into()));
        assert_eq!(map("/home/a/src/x"), Some("/Users/b/code/x".into()));
        assert_eq!(map("/home/a"), Some("/Users/b".into()));
        assert_eq!(map("/home/ab/x"), None);
        assert_eq!(map("/srv/x"), None);
        assert_eq!(
            unmap_path(&maps, Path::new("/Users/b/code/x")),
            Some("/home/a/src/x".into())
        );
    }

    #[test]
    fn a_mapping_must_be_two_absolute_paths() {
        for bad in ["/a", "a=/b", "/a=b", "=/b", "/a=", ""] {
            let e = bad.parse::<PathMapping>().unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::InvalidInput, "{bad}");
            assert!(e.to_string().contains("path mapping"), "{e}");
        }
        // Split at the first '=': a NEW side may hold one.
        let m: PathMapping = "/a=/b=c".parse().unwrap();
        assert_eq!(m.to, Path::new("/b=c"));
    }
}
