//! Content-addressed storage for large message values, beside the logs:
//! `blobs/<first 2 hex digits>/<remaining 62 hex digits>` holding the value's JSON.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, IoContext, Result};
use crate::format::records::BlobRef;
use crate::fsutil;

/// The message fields that may be moved to a blob, with the field that refers to it.
pub const BLOB_FIELDS: [(&str, &str); 2] = [
    ("content", "contentBlob"),
    ("contentParams", "contentParamsBlob"),
];

#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

/// Whether `s` is a blob's name: 64 lowercase hex digits of a SHA-256.
pub(crate) fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The digest a blob reference names, if it is one: an object whose `sha256`
/// is 64 lowercase hex digits (its other members are ignored).
pub(crate) fn reference_digest(r: &Value) -> Option<&str> {
    r.get("sha256")
        .and_then(Value::as_str)
        .filter(|s| is_digest(s))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl BlobStore {
    pub fn new(project_dir: &Path) -> BlobStore {
        BlobStore {
            dir: project_dir.join("blobs"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_of(&self, sha256: &str) -> Result<PathBuf> {
        if !is_digest(sha256) {
            return Err(Error::Corrupt(format!(
                "blob reference {sha256:?} is not a SHA-256 hex digest"
            )));
        }
        Ok(self.dir.join(&sha256[..2]).join(&sha256[2..]))
    }

    /// StoreCore `bytes` once; durable before this returns when `sync` is set.
    pub fn put(&self, bytes: &[u8], sync: bool) -> Result<BlobRef> {
        let sha = hex(&Sha256::digest(bytes));
        let path = self.path_of(&sha)?;
        if path.exists() {
            // A blob in use again is young again, so a gc running now, which
            // deletes only unreferenced blobs older than its grace period, cannot
            // take it away before the log line that refers to it is written.
            fs::File::open(&path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()))
                .at(&path)?;
        } else {
            let parent = path.parent().unwrap_or(&self.dir);
            let fresh_dir = !parent.exists();
            fsutil::create_private_dir(parent)?;
            if fresh_dir && sync {
                // The new directories must survive too, or the blob goes with them.
                fsutil::sync_dir_of(parent)?;
                fsutil::sync_dir_of(&self.dir)?;
            }
            fsutil::atomic_write(&path, bytes, sync, sync)?;
        }
        Ok(BlobRef {
            sha256: sha,
            bytes: bytes.len() as u64,
        })
    }

    /// Read a blob back, checking its digest.
    /// Every blob file: its digest, path, length and modification time.
    pub(crate) fn files(&self) -> Result<Vec<(String, PathBuf, u64, SystemTime)>> {
        let mut out = Vec::new();
        let top = match fs::read_dir(&self.dir) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(Error::io(&self.dir, e)),
        };
        for d in top {
            let d = d.at(&self.dir)?;
            let Some(hh) = d.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if hh.len() != 2 || !d.file_type().at(&d.path())?.is_dir() {
                continue;
            }
            for f in fs::read_dir(d.path()).at(&d.path())? {
                let f = f.at(&d.path())?;
                let Some(rest) = f.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let digest = format!("{hh}{rest}");
                let Ok(path) = self.path_of(&digest) else {
                    continue;
                }; // .tmp-* and others
                let m = f.metadata().at(&path)?;
                if m.is_file() {
                    out.push((digest, path, m.len(), m.modified().at(&f.path())?));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    pub fn get(&self, r: &BlobRef) -> Result<Vec<u8>> {
        self.get_bytes(&r.sha256)
    }

    /// The bytes of the blob named `sha256`, checked against the name:
    /// `NotFound` when its file is missing, `Corrupt` when it does not match.
    pub(crate) fn get_bytes(&self, sha256: &str) -> Result<Vec<u8>> {
        let path = self.path_of(sha256)?;
        let bytes = fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::NotFound(format!("blob {sha256} (file {})", path.display()))
            } else {
                Error::io(&path, e)
            }
        })?;
        if hex(&Sha256::digest(&bytes)) != sha256 {
            return Err(Error::Corrupt(format!(
                "blob {} does not match its digest",
                path.display()
            )));
        }
        Ok(bytes)
    }

    /// Move every blob-able field of `fields` whose JSON exceeds `threshold` bytes
    /// into the store, leaving a reference in its place.
    pub fn extract(
        &self,
        fields: &mut Map<String, Value>,
        threshold: usize,
        sync: bool,
    ) -> Result<()> {
        for (field, ref_field) in BLOB_FIELDS {
            let Some(v) = fields.get(field) else { continue };
            let json = serde_json::to_vec(v).map_err(|e| Error::Internal(e.to_string()))?;
            if json.len() <= threshold {
                continue;
            }
            let r = self.put(&json, sync)?;
            fields.insert(field.into(), Value::Null);
            fields.insert(
                ref_field.into(),
                serde_json::to_value(r).map_err(|e| Error::Internal(e.to_string()))?,
            );
        }
        Ok(())
    }

    /// Put the values of blob references back into a message (FORMAT.md §7). A
    /// reference that cannot be resolved — malformed, its blob missing, or a
    /// blob that does not match its name or is not a decodable JSON value —
    /// degrades the message instead of failing: the field keeps its stored
    /// value and the reference stays, so the host can tell. Only an I/O error
    /// other than a missing file (the disk failing) is an error.
    pub fn inline(&self, msg: &mut Map<String, Value>) -> Result<()> {
        for (field, ref_field) in BLOB_FIELDS {
            let Some(r) = msg.get(ref_field) else {
                continue;
            };
            // A later patch that set the field wins over the stored value.
            if !msg.get(field).is_none_or(Value::is_null) {
                msg.shift_remove(ref_field);
                continue;
            }
            let Some(sha) = reference_digest(r) else {
                continue;
            };
            let bytes = match self.get_bytes(sha) {
                Ok(b) => b,
                Err(Error::NotFound(_) | Error::Corrupt(_)) => continue,
                Err(e) => return Err(e),
            };
            let Some(v) = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| crate::format::decode::parse_strict(t).ok())
            else {
                continue;
            };
            msg.shift_remove(ref_field);
            msg.insert(field.into(), v);
        }
        Ok(())
    }

    /// Whether the blob a reference names exists: `None` when it does;
    /// `Some(None)` when the reference is malformed; `Some(Some(digest))` when
    /// its file is missing (FORMAT.md §7, `missingBlobs`).
    pub(crate) fn missing(&self, r: &Value) -> Option<Option<String>> {
        let Some(sha) = reference_digest(r) else {
            return Some(None);
        };
        match self.path_of(sha) {
            Ok(p) if p.exists() => None,
            _ => Some(Some(sha.to_owned())),
        }
    }

    /// Every blob digest present on disk.
    pub fn list(&self) -> Result<Vec<String>> {
        Ok(self.files()?.into_iter().map(|(d, ..)| d).collect())
    }
}
