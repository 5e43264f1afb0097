//! The project code: the directory name a project's sessions live under.
//!
//! Algorithm (also in docs/FORMAT.md, so a foreign implementation can compute it):
//! take the canonical absolute path of the project root as bytes; replace every byte
//! outside `[A-Za-z0-9]` with `-`. If the result is longer than 200 bytes, use instead
//! the first 64 bytes of the sanitized final path component, `-`, and the first 16
//! lowercase hex digits of SHA-256 of the canonical path bytes.

use std::path::Path;

use sha2::{Digest, Sha256};

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
}
