//! Source files: finding them under directories, reading their complete
//! lines, telling their format. Sources are only ever read.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{ImportFormat, LineNote};
use crate::error::{Error, Result};

/// The largest source file imported (1 GiB): a source is read whole, so a
/// larger one fails (in its report) instead of exhausting memory.
pub const MAX_IMPORT_SOURCE_BYTES: u64 = 1 << 30;

/// The source files under `paths`: a file as given, a directory searched
/// (without following links) for `*.jsonl`. Sidechain files (`agent-*.jsonl`)
/// come after the others, so that their sessions exist first. A path given
/// that is neither a regular file nor a directory (after its links are
/// followed) is refused: a FIFO would block, a device never end.
pub(super) fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str().is_empty() || p.as_os_str().as_encoded_bytes().contains(&0) {
            return Err(Error::invalid(format!(
                "import source {p:?}: a path must be non-empty and hold no NUL byte"
            )));
        }
        let meta = fs::metadata(p).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::NotFound(format!("import source {}", p.display()))
            }
            _ if e.raw_os_error() == Some(libc::ELOOP) => Error::invalid(format!(
                "import source {}: a loop of symbolic links",
                p.display()
            )),
            _ => Error::io(p, e),
        })?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort_by_cached_key(|p| (is_sidechain_file(p), p.clone()));
            out.extend(found);
        } else if meta.is_file() {
            out.push(p.clone());
        } else {
            return Err(not_regular(p, meta.file_type()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let path = e.path();
        let kind = e.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if kind.is_file() && is_source_file(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether a search of a directory reads `path`: a `*.jsonl` file, an
/// opencode database or an opencode 1.1 session file (FORMAT.md §22.1).
pub(super) fn is_source_file(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "jsonl")
        || is_opencode_db_name(path)
        || super::opencode::is_session_file(path)
}

/// Whether `path` is named as opencode names its databases: `opencode.db`,
/// `opencode-<channel>.db` (not their `-wal` and `-shm` files).
pub(super) fn is_opencode_db_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("opencode") && n.ends_with(".db"))
}

fn not_regular(path: &Path, kind: fs::FileType) -> Error {
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Error::invalid(format!(
        "import source {} is {what}: only regular files (and directories of them) are imported",
        path.display()
    ))
}

/// Whether `path` is a Claude Code subagent transcript (`agent-<id>.jsonl`).
pub(super) fn is_sidechain_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-"))
}

/// A complete line of a source: its number, exact text and parsed object.
pub(super) struct SourceLine {
    pub number: u64,
    pub text: String,
    pub value: std::result::Result<Map<String, Value>, String>,
}

/// A source file read once: its complete lines and what the rest was.
pub(super) struct SourceFile {
    pub bytes: Vec<u8>,
    /// The bytes up to and including the last `\n`.
    pub complete: usize,
    pub lines: Vec<SourceLine>,
    /// Lines that cannot be kept at all.
    pub skipped: Vec<LineNote>,
}

impl SourceFile {
    pub(super) fn read(path: &Path) -> Result<SourceFile> {
        // Non-blocking, so that a file replaced by a FIFO since it was listed
        // is opened without waiting for a writer, and then refused by type.
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    Error::NotFound(format!("import source {}", path.display()))
                }
                _ => Error::io(path, e),
            })?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            return Err(not_regular(path, meta.file_type()));
        }
        if meta.len() > MAX_IMPORT_SOURCE_BYTES {
            return Err(too_large(path, meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        // A file that grows while it is read is still cut at the limit.
        file.take(MAX_IMPORT_SOURCE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        if bytes.len() as u64 > MAX_IMPORT_SOURCE_BYTES {
            return Err(too_large(path, bytes.len() as u64));
        }
        Ok(SourceFile::from_bytes(bytes))
    }

    /// A source made of `text` (the rows of a database, as lines).
    pub(super) fn from_text(text: String) -> SourceFile {
        SourceFile::from_bytes(text.into_bytes())
    }

    fn from_bytes(bytes: Vec<u8>) -> SourceFile {
        let complete = memchr::memrchr(b'\n', &bytes).map_or(0, |i| i + 1);
        let mut lines = Vec::new();
        let mut skipped = Vec::new();
        let mut number = 0u64;
        for chunk in bytes[..complete].split_inclusive(|&b| b == b'\n') {
            number += 1;
            let raw = &chunk[..chunk.len() - 1];
            let Ok(text) = std::str::from_utf8(raw) else {
                skipped.push(LineNote {
                    line: number,
                    reason: "not valid UTF-8".into(),
                });
                continue;
            };
            if text.trim().is_empty() {
                continue;
            }
            let value = match crate::format::decode::parse_strict(text) {
                Ok(Value::Object(m)) => Ok(m),
                Ok(v) => Err(format!(
                    "{}, not a JSON object",
                    crate::format::records::type_name(&v)
                )),
                Err(e) => Err(format!("not JSON: {e}")),
            };
            if let Err(reason) = &value {
                skipped.push(LineNote {
                    line: number,
                    reason: reason.clone(),
                });
            }
            lines.push(SourceLine {
                number,
                text: text.to_string(),
                value,
            });
        }
        if complete < bytes.len() {
            skipped.push(LineNote {
                line: number + 1,
                reason: "incomplete last line (no newline yet): imported once it is complete"
                    .into(),
            });
        }
        SourceFile {
            bytes,
            complete,
            lines,
            skipped,
        }
    }

    /// Lowercase hex SHA-256 of the first `len` bytes.
    pub(super) fn prefix_sha256(&self, len: usize) -> String {
        format!(
            "{:x}",
            Sha256::digest(&self.bytes[..len.min(self.bytes.len())])
        )
    }

    /// The objects of the complete lines, in order.
    pub(super) fn objects(&self) -> impl Iterator<Item = (u64, &Map<String, Value>)> {
        self.lines
            .iter()
            .filter_map(|l| l.value.as_ref().ok().map(|m| (l.number, m)))
    }
}

fn too_large(path: &Path, len: u64) -> Error {
    Error::invalid(format!(
        "import source {} is {len} bytes, larger than the {MAX_IMPORT_SOURCE_BYTES} bytes \
         an import reads",
        path.display()
    ))
}

/// The format of a source, from its first objects.
pub(super) fn detect(file: &SourceFile) -> Option<ImportFormat> {
    for (_, o) in file.objects().take(20) {
        let kind = o.get("type").and_then(Value::as_str);
        // Copilot CLI: events with a dotted type (`session.start`,
        // `user.message`) and a `data` object; no other format dots its types.
        if kind.is_some_and(|k| k.contains('.')) && o.get("data").is_some_and(Value::is_object) {
            return Some(ImportFormat::CopilotCli);
        }
        if o.contains_key("payload")
            && matches!(
                kind,
                Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
            )
        {
            return Some(ImportFormat::Codex);
        }
        if o.contains_key("parentUuid") || o.contains_key("leafUuid") || o.contains_key("uuid") {
            return Some(ImportFormat::ClaudeCode);
        }
        // pi: a `session` header naming the working directory, or an entry
        // whose `message` is nested (Claude Code's lines have a `uuid`).
        if kind == Some("session") && o.contains_key("cwd") {
            return Some(ImportFormat::Pi);
        }
        if kind == Some("message") && o.get("message").is_some_and(Value::is_object) {
            return Some(ImportFormat::Pi);
        }
        // Gemini CLI: its metadata line (no `type`), its replay records, or a
        // message record whose `type` is one of its own.
        if kind.is_none() && o.contains_key("sessionId") && o.contains_key("projectHash") {
            return Some(ImportFormat::GeminiCli);
        }
        if o.len() == 1 && (o.contains_key("$set") || o.contains_key("$rewindTo")) {
            return Some(ImportFormat::GeminiCli);
        }
        if matches!(kind, Some("gemini" | "info" | "error" | "warning" | "user"))
            && o.contains_key("id")
            && o.contains_key("content")
            && !o.contains_key("role")
        {
            return Some(ImportFormat::GeminiCli);
        }
        // The first line of an older Codex rollout: the session's own metadata.
        if kind.is_none() && o.contains_key("instructions") && o.contains_key("id") {
            return Some(ImportFormat::Codex);
        }
        if o.contains_key("role") && matches!(kind, None | Some("message")) {
            return Some(ImportFormat::Deepcode);
        }
    }
    None
}
