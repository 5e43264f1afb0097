//! Reading a session log: a tolerant line scanner and the loader that folds the
//! records needed for the views. Lines that cannot be parsed are skipped and
//! reported, never silently dropped.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};
use crate::records::{kind, Probe, FORMAT_VERSION};

const CHUNK: usize = 4 << 20;

/// A line (or part of one) that the reader could not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedLine {
    /// 1-based line number in the log.
    pub line: u64,
    /// Byte offset of the skipped bytes in the file.
    pub offset: u64,
    pub length: u64,
    pub reason: String,
}

/// A message whose parent is not in the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokenChain {
    pub message_id: String,
    pub missing_parent_id: String,
}

/// What reading a log found besides the records themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadReport {
    /// Lines skipped because they are not valid JSON records (including NUL runs).
    pub skipped: Vec<SkippedLine>,
    /// A last line with no newline: a write cut short by a crash.
    pub torn_tail: Option<SkippedLine>,
    pub broken_chains: Vec<BrokenChain>,
    /// Message ids seen more than once; the first occurrence is used.
    pub duplicate_ids: Vec<String>,
    /// Records of a type this version does not know; kept on disk and ignored.
    pub unknown_records: u64,
    /// Other problems, such as a head record naming an unknown message.
    pub warnings: Vec<String>,
}

impl ReadReport {
    pub fn is_clean(&self) -> bool {
        self.skipped.is_empty()
            && self.torn_tail.is_none()
            && self.broken_chains.is_empty()
            && self.duplicate_ids.is_empty()
            && self.warnings.is_empty()
    }
}

/// One line handed out by [`scan`]; NUL runs at its start are already removed and
/// reported.
pub(crate) struct Line<'a> {
    pub number: u64,
    pub offset: u64,
    pub bytes: &'a [u8],
}

/// Read `file` from `start` to its end, calling `f` for each complete line that is
/// not blank. Returns the offset just past the last newline; a trailing piece with
/// no newline is reported as the torn tail.
pub(crate) fn scan(
    file: &mut File,
    path: &Path,
    start: u64,
    report: &mut ReadReport,
    mut f: impl FnMut(Line<'_>, &mut ReadReport) -> Result<()>,
) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(start)).at(path)?;
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut base = start; // file offset of buf[0]
    let mut number = 0u64;
    let mut eof = false;
    loop {
        let len = buf.len();
        if !eof {
            // Read into spare capacity: zero-filling a whole chunk first cost more
            // than reading a small log.
            let n = (&mut *file)
                .take(CHUNK as u64)
                .read_to_end(&mut buf)
                .at(path)?;
            debug_assert_eq!(buf.len(), len + n);
            eof = n == 0;
        }
        let mut pos = 0;
        while let Some(nl) = memchr::memchr(b'\n', &buf[pos..]) {
            let line = &buf[pos..pos + nl];
            number += 1;
            emit(line, number, base + pos as u64, report, &mut f)?;
            pos += nl + 1;
        }
        buf.drain(..pos);
        base += pos as u64;
        if eof {
            break;
        }
    }
    if !buf.is_empty() {
        let nul = buf.iter().all(|&b| b == 0);
        report.torn_tail = Some(SkippedLine {
            line: number + 1,
            offset: base,
            length: buf.len() as u64,
            reason: if nul {
                format!("NUL run of {} bytes at end of file", buf.len())
            } else {
                "last line has no newline (a write cut short)".into()
            },
        });
    }
    Ok(base)
}

fn emit(
    line: &[u8],
    number: u64,
    offset: u64,
    report: &mut ReadReport,
    f: &mut impl FnMut(Line<'_>, &mut ReadReport) -> Result<()>,
) -> Result<()> {
    let nuls = line.iter().take_while(|&&b| b == 0).count();
    if nuls > 0 {
        report.skipped.push(SkippedLine {
            line: number,
            offset,
            length: nuls as u64,
            reason: format!("NUL run of {nuls} bytes"),
        });
    }
    let rest = &line[nuls..];
    if rest.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(());
    }
    f(
        Line {
            number,
            offset: offset + nuls as u64,
            bytes: rest,
        },
        report,
    )
}

/// Parse the probe of a line, or say why the line is unusable.
pub(crate) fn probe(bytes: &[u8]) -> std::result::Result<(&str, Probe<'_>), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("invalid UTF-8: {e}"))?;
    if text.trim_start().as_bytes().first() != Some(&b'{') {
        return Err("invalid JSON record: not a JSON object".into());
    }
    let p: Probe = serde_json::from_str(text).map_err(|e| format!("invalid JSON record: {e}"))?;
    Ok((text, p))
}

pub(crate) fn skip(report: &mut ReadReport, line: &Line<'_>, reason: String) {
    report.skipped.push(SkippedLine {
        line: line.number,
        offset: line.offset,
        length: line.bytes.len() as u64,
        reason,
    });
}

/// A message as stored: its ids and its line, unparsed until a view needs it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub id: String,
    /// Byte offset of the message's line in the log.
    pub offset: u64,
    pub parent_id: Option<String>,
    /// Shared with the messages a view hands out, so a resume holds each line once.
    pub raw: std::sync::Arc<str>,
    pub has_blob: bool,
}

/// A subagent spawn or result recorded in the main log.
#[derive(Debug, Clone, Serialize)]
pub struct SubagentEvent {
    pub record: Value,
}

/// Everything a view of a session needs, loaded from its log.
#[derive(Debug, Default)]
pub struct LoadedLog {
    pub path: PathBuf,
    pub header: Option<Map<String, Value>>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) by_id: HashMap<String, usize>,
    pub head: Option<String>,
    /// Patches by message id, with the offset of the patch record.
    pub(crate) patches: HashMap<String, Vec<(u64, Value)>>,
    /// Compaction records by summary message id, with their offsets.
    pub(crate) compactions: HashMap<String, (u64, Value)>,
    pub(crate) records: Vec<Value>,
    pub(crate) record_offsets: Vec<u64>,
    pub report: ReadReport,
    /// Offset just past the last complete line.
    pub bytes: u64,
}

impl LoadedLog {
    pub fn message_count(&self) -> usize {
        self.entries.len()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Records other than messages, headers and patches (state, subagent, unknown
    /// kinds are counted only), in log order.
    pub fn other_records(&self) -> &[Value] {
        &self.records
    }
}

/// Load a log for views. Reads the whole file once; only message ids, parents and
/// small records are parsed, message bodies stay as text.
pub fn load(path: &Path) -> Result<LoadedLog> {
    let mut file = File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound(format!("session log {}", path.display()))
        } else {
            Error::io(path, e)
        }
    })?;
    load_from(&mut file, path)
}

pub(crate) fn load_from(file: &mut File, path: &Path) -> Result<LoadedLog> {
    let mut log = LoadedLog {
        path: path.to_path_buf(),
        ..LoadedLog::default()
    };
    let mut report = ReadReport::default();
    let mut unsupported: Option<String> = None;
    let end = scan(file, path, 0, &mut report, |line, report| {
        let (text, p) = match probe(line.bytes) {
            Ok(x) => x,
            Err(reason) => {
                skip(report, &line, reason);
                return Ok(());
            }
        };
        match p.kind.0.as_deref() {
            None | Some(kind::MESSAGE) => {
                let Some(id) = p.id.0 else {
                    skip(report, &line, "message has no \"id\"".into());
                    return Ok(());
                };
                let id = id.into_owned();
                if log.by_id.contains_key(&id) {
                    report.duplicate_ids.push(id);
                    return Ok(());
                }
                // A seed-style line without `parentId` continues from the head.
                let parent_id = match p.parent_id {
                    Some(l) => l.0.map(|c| c.into_owned()),
                    None => log.head.clone(),
                };
                log.by_id.insert(id.clone(), log.entries.len());
                log.head = Some(id.clone());
                log.entries.push(Entry {
                    id,
                    offset: line.offset,
                    parent_id,
                    raw: text.into(),
                    has_blob: p.content_blob.is_some() || p.content_params_blob.is_some(),
                });
            }
            Some(kind::SESSION) => {
                if let Some(v) = p.version.as_ref().and_then(Value::as_u64) {
                    if v > FORMAT_VERSION && unsupported.is_none() {
                        unsupported = Some(format!(
                            "{} is format version {v}; this sessionkit reads up to {FORMAT_VERSION}",
                            path.display()
                        ));
                    }
                }
                if log.header.is_none() {
                    if let Ok(Value::Object(h)) = serde_json::from_str(text) {
                        log.header = Some(h);
                    }
                }
            }
            Some(kind::HEAD) => {
                let target = p.message_id.0.map(|c| c.into_owned());
                match target {
                    Some(t) if !log.by_id.contains_key(&t) => report.warnings.push(format!(
                        "line {}: head record names unknown message {t:?}",
                        line.number
                    )),
                    t => log.head = t,
                }
            }
            Some(kind::PATCH) => {
                let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                match (p.message_id.0, v.get("patch")) {
                    (Some(m), Some(patch)) if patch.is_object() => log
                        .patches
                        .entry(m.into_owned())
                        .or_default()
                        .push((line.offset, patch.clone())),
                    _ => skip(
                        report,
                        &line,
                        "patch record needs \"messageId\" and an object \"patch\"".into(),
                    ),
                }
            }
            Some(kind::COMPACTION) => match serde_json::from_str::<Value>(text) {
                Ok(v) if crate::compaction::is_valid_record(&v) => {
                    let sid = v["summaryId"].as_str().unwrap_or_default().to_string();
                    log.compactions.entry(sid).or_insert((line.offset, v));
                }
                _ => skip(report, &line, crate::compaction::RECORD_SHAPE.into()),
            },
            Some(kind::STATE) | Some(kind::SUBAGENT) => {
                log.record_offsets.push(line.offset);
                log.records
                    .push(serde_json::from_str(text).unwrap_or(Value::Null));
            }
            Some(_) => report.unknown_records += 1,
        }
        Ok(())
    })?;
    if let Some(msg) = unsupported {
        return Err(Error::Unsupported(msg));
    }
    for e in &log.entries {
        if let Some(p) = &e.parent_id {
            if !log.by_id.contains_key(p) {
                report.broken_chains.push(BrokenChain {
                    message_id: e.id.clone(),
                    missing_parent_id: p.clone(),
                });
            }
        }
    }
    log.report = report;
    log.bytes = end;
    Ok(log)
}
