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

/// How much `scan` reads at a time: small enough to stay in cache while its lines
/// are parsed and copied, and not to add much to the footprint of resuming a
/// small log.
const CHUNK: usize = 256 << 10;

/// The chunk of a log validated on two threads: enough for each to have a
/// share worth starting for.
const PARALLEL_CHUNK: usize = 2 << 20;

/// Logs at least this long are validated on two threads (see `probe_all`).
const PARALLEL_LOG_BYTES: u64 = 8 << 20;

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
    scan_chunks(file, path, start, CHUNK, report, |lines, report| {
        lines.drain(..).try_for_each(|line| f(line, report))
    })
}

/// [`scan`], reading `chunk` bytes at a time and handing `f` the lines of each
/// (in order; `f` may drain them).
pub(crate) fn scan_chunks(
    file: &mut File,
    path: &Path,
    start: u64,
    chunk: usize,
    report: &mut ReadReport,
    mut f: impl FnMut(&mut Vec<Line<'_>>, &mut ReadReport) -> Result<()>,
) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let size = file.metadata().at(path)?.len();
    file.seek(SeekFrom::Start(start)).at(path)?;
    // A small log gets a buffer its size, not a whole chunk.
    let cap = chunk.min(size.saturating_sub(start) as usize + 1);
    let mut buf: Vec<u8> = Vec::with_capacity(cap);
    let mut base = start; // file offset of buf[0]
    let mut number = 0u64;
    let mut eof = false;
    let first_skip = report.skipped.len();
    loop {
        let len = buf.len();
        if !eof {
            // Read into spare capacity: zero-filling a whole chunk first cost more
            // than reading a small log.
            let n = (&mut *file)
                .take(chunk as u64)
                .read_to_end(&mut buf)
                .at(path)?;
            debug_assert_eq!(buf.len(), len + n);
            eof = n == 0;
        }
        let mut pos = 0;
        let mut lines = Vec::new();
        while let Some(nl) = memchr::memchr(b'\n', &buf[pos..]) {
            let line = &buf[pos..pos + nl];
            number += 1;
            lines.extend(emit(line, number, base + pos as u64, report));
            pos += nl + 1;
        }
        f(&mut lines, report)?;
        drop(lines);
        buf.drain(..pos);
        base += pos as u64;
        if eof {
            break;
        }
    }
    // NUL runs were reported as each chunk was split, before `f` reported the
    // lines of that chunk it skipped: put them all in file order.
    report.skipped[first_skip..].sort_by_key(|s| (s.line, s.offset));
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

/// The usable part of a line: NUL runs at its start are reported and cut off, a
/// blank line is nothing.
fn emit<'a>(line: &'a [u8], number: u64, offset: u64, report: &mut ReadReport) -> Option<Line<'a>> {
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
        return None;
    }
    Some(Line {
        number,
        offset: offset + nuls as u64,
        bytes: rest,
    })
}

/// [`probe`] of each line, in order; with `parallel` and many bytes, half of
/// them on a second thread (validating JSON is most of what a resume costs).
fn probe_all<'a>(
    lines: &[Line<'a>],
    parallel: bool,
) -> Vec<std::result::Result<(&'a str, Probe<'a>), String>> {
    const PARALLEL_BYTES: usize = 256 << 10;
    let total: usize = lines.iter().map(|l| l.bytes.len()).sum();
    let probe_each = |ls: &[Line<'a>]| ls.iter().map(|l| probe(l.bytes)).collect::<Vec<_>>();
    if !parallel || total < PARALLEL_BYTES || lines.len() < 2 {
        return probe_each(lines);
    }
    // Split where half of the bytes are behind.
    let mut seen = 0;
    let mid = lines
        .iter()
        .position(|l| {
            seen += l.bytes.len();
            seen >= total / 2
        })
        .map_or(lines.len() / 2, |i| (i + 1).min(lines.len() - 1));
    let (first, second) = lines.split_at(mid);
    std::thread::scope(|sc| {
        let other = sc.spawn(|| probe_each(second));
        let mut out = probe_each(first);
        match other.join() {
            Ok(rest) => out.extend(rest),
            Err(_) => out.extend(probe_each(second)),
        }
        out
    })
}

/// Parse the probe of a line, or say why the line is unusable.
pub(crate) fn probe(bytes: &[u8]) -> std::result::Result<(&str, Probe<'_>), String> {
    // simdutf8 for the common case; std says where a bad line goes wrong.
    let text = match simdutf8::basic::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => std::str::from_utf8(bytes).map_err(|e| format!("invalid UTF-8: {e}"))?,
    };
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
    /// What an index entry folds from the message, kept from its probe so that a
    /// fork folds its entry without parsing the copied lines again.
    pub facts: EntryFacts,
}

/// Where a message's `role`, `timestamp` and `meta` sit in its line.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryFacts {
    pub role: Option<(u32, u32)>,
    pub timestamp: Option<(u32, u32)>,
    pub meta: Option<(u32, u32)>,
    /// False when a string field has escapes, so its text is not in the line as is.
    pub exact: bool,
}

impl EntryFacts {
    fn of(line: &str, p: &Probe<'_>) -> EntryFacts {
        use std::borrow::Cow;
        // Where `inner`, a slice of `line`, starts and ends in it.
        let span = |inner: &str| {
            let start = (inner.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
            let end = start + inner.len();
            (end <= line.len()).then_some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
        };
        // `Some(None)` for an absent field, `None` for one not in the line as is.
        let string = |f: &crate::records::Loose<'_>| match &f.0 {
            Some(Cow::Borrowed(t)) => span(t).map(Some),
            Some(Cow::Owned(_)) => None,
            None => Some(None),
        };
        let (role, timestamp) = (string(&p.role), string(&p.timestamp));
        let meta = p.meta.map_or(Some(None), |m| span(m.get()).map(Some));
        EntryFacts {
            exact: role.is_some() && timestamp.is_some() && meta.is_some(),
            role: role.flatten(),
            timestamp: timestamp.flatten(),
            meta: meta.flatten(),
        }
    }
}

impl Entry {
    /// The index-fold facts of this message, from its probe or, when they are
    /// not in the line as is, from the line parsed whole (into `parsed`).
    pub(crate) fn facts<'a>(
        &'a self,
        parsed: &'a mut Option<Map<String, Value>>,
    ) -> crate::index::Facts<'a> {
        let f = &self.facts;
        if !f.exact {
            *parsed = serde_json::from_str(&self.raw).ok();
            if let Some(facts) = parsed.as_ref().and_then(crate::index::Facts::of) {
                return facts;
            }
        }
        let at = |s: Option<(u32, u32)>| s.map(|(a, b)| &self.raw[a as usize..b as usize]);
        crate::index::Facts {
            id: &self.id,
            role: at(f.role),
            timestamp: at(f.timestamp),
            usage: crate::index::usage_in(at(f.meta)),
        }
    }

    /// The message parsed whole, with content moved to a blob put back.
    pub(crate) fn parsed(&self, blobs: &crate::blobs::BlobStore) -> Option<Map<String, Value>> {
        crate::index::parse_whole(&self.raw, self.has_blob, blobs)
    }
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
    pub(crate) by_id: HashMap<String, usize, foldhash::fast::RandomState>,
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
    // The head as an index into `entries`: a head is always a loaded message.
    let mut head: Option<usize> = None;
    // A second thread pays for itself only on a large log: its first use costs
    // about a millisecond (stack, allocator arena), a whole 1 MiB resume.
    let parallel = file.metadata().at(path)?.len() >= PARALLEL_LOG_BYTES;
    let chunk = if parallel { PARALLEL_CHUNK } else { CHUNK };
    let end = scan_chunks(file, path, 0, chunk, &mut report, |lines, report| {
        let probes = probe_all(lines, parallel);
        for (line, probed) in lines.iter().zip(probes) {
            fold_line(
                &mut log,
                &mut head,
                &mut unsupported,
                path,
                line,
                probed,
                report,
            );
        }
        Ok(())
    })?;
    if let Some(msg) = unsupported {
        return Err(Error::Unsupported(msg));
    }
    log.head = head.map(|i| log.entries[i].id.clone());
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

/// Fold one probed line into `log`. `head` is the head as an index into
/// `log.entries` (a head is always a loaded message); `unsupported` gets the
/// first header of a newer format.
fn fold_line(
    log: &mut LoadedLog,
    head: &mut Option<usize>,
    unsupported: &mut Option<String>,
    path: &Path,
    line: &Line<'_>,
    probed: std::result::Result<(&str, Probe<'_>), String>,
    report: &mut ReadReport,
) {
    let (text, p) = match probed {
        Ok(x) => x,
        Err(reason) => return skip(report, line, reason),
    };
    match p.kind.0.as_deref() {
        None | Some(kind::MESSAGE) => {
            let facts = EntryFacts::of(text, &p);
            let Some(id) = p.id.0 else {
                skip(report, line, "message has no \"id\"".into());
                return;
            };
            let id = id.into_owned();
            if log.by_id.contains_key(&id) {
                report.duplicate_ids.push(id);
                return;
            }
            // A seed-style line without `parentId` continues from the head.
            let parent_id = match p.parent_id {
                Some(l) => l.0.map(|c| c.into_owned()),
                None => head.map(|i| log.entries[i].id.clone()),
            };
            *head = Some(log.entries.len());
            log.by_id.insert(id.clone(), log.entries.len());
            log.entries.push(Entry {
                id,
                offset: line.offset,
                parent_id,
                has_blob: p.content_blob.is_some() || p.content_params_blob.is_some(),
                facts,
                raw: text.into(),
            });
        }
        Some(kind::SESSION) => {
            if let Some(v) = p.version.as_ref().and_then(Value::as_u64) {
                if v > FORMAT_VERSION && unsupported.is_none() {
                    *unsupported = Some(format!(
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
        Some(kind::HEAD) => match p.message_id.0 {
            None => *head = None,
            Some(t) => match log.by_id.get(t.as_ref()) {
                Some(&i) => *head = Some(i),
                None => report.warnings.push(format!(
                    "line {}: head record names unknown message {t:?}",
                    line.number
                )),
            },
        },
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
                    line,
                    "patch record needs \"messageId\" and an object \"patch\"".into(),
                ),
            }
        }
        Some(kind::COMPACTION) => match serde_json::from_str::<Value>(text) {
            Ok(v) if crate::compaction::is_valid_record(&v) => {
                let sid = v["summaryId"].as_str().unwrap_or_default().to_string();
                log.compactions.entry(sid).or_insert((line.offset, v));
            }
            _ => skip(report, line, crate::compaction::RECORD_SHAPE.into()),
        },
        Some(kind::STATE) | Some(kind::SUBAGENT) => {
            log.record_offsets.push(line.offset);
            log.records
                .push(serde_json::from_str(text).unwrap_or(Value::Null));
        }
        Some(_) => report.unknown_records += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// `load_from` probes a large log's chunks on two threads; folding them one by one
    /// through `scan` must give the same log, report included, in the same order.
    #[test]
    fn parallel_probing_folds_like_one_line_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut f = File::create(&path).unwrap();
        writeln!(f, r#"{{"type":"session","version":1,"sessionId":"s"}}"#).unwrap();
        let pad = "x\\\"y".repeat(300);
        let mut parent = String::from("null");
        for i in 0..8000u32 {
            match i % 97 {
                13 => writeln!(f, "{{\"type\":\"message\",\"id\":\"bad{i}\",").unwrap(),
                29 => f.write_all(b"\0\0\0\n").unwrap(),
                41 => {
                    f.write_all(b"\0\0").unwrap();
                    writeln!(f, r#"{{"id":"n{i}","role":"user","content":"{pad}"}}"#).unwrap()
                }
                53 => writeln!(f, "   ").unwrap(),
                61 => writeln!(
                    f,
                    r#"{{"type":"patch","messageId":"m1","patch":{{"a":{i}}}}}"#
                )
                .unwrap(),
                71 => writeln!(f, r#"{{"type":"head","messageId":"m{}"}}"#, i - 5).unwrap(),
                83 => writeln!(f, r#"{{"type":"head","messageId":"nope{i}"}}"#).unwrap(),
                _ => {
                    writeln!(
                        f,
                        r#"{{"type":"message","id":"m{i}","parentId":{parent},"role":"tool","content":"{pad}"}}"#
                    )
                    .unwrap();
                    parent = format!("\"m{i}\"");
                }
            }
        }
        f.write_all(b"{\"torn\":").unwrap();
        drop(f);
        assert!(std::fs::metadata(&path).unwrap().len() > PARALLEL_LOG_BYTES);

        let got = load(&path).unwrap();

        let mut want = LoadedLog::default();
        let (mut head, mut unsupported, mut report) = (None, None, ReadReport::default());
        let mut file = File::open(&path).unwrap();
        scan(&mut file, &path, 0, &mut report, |line, report| {
            let probed = probe(line.bytes);
            fold_line(
                &mut want,
                &mut head,
                &mut unsupported,
                &path,
                &line,
                probed,
                report,
            );
            Ok(())
        })
        .unwrap();
        want.head = head.map(|i| want.entries[i].id.clone());

        let ids = |l: &LoadedLog| -> Vec<(String, Option<String>, u64)> {
            l.entries
                .iter()
                .map(|e| (e.id.clone(), e.parent_id.clone(), e.offset))
                .collect()
        };
        assert_eq!(ids(&got), ids(&want));
        assert_eq!(got.head, want.head);
        assert_eq!(got.report.skipped, report.skipped);
        assert_eq!(got.report.warnings, report.warnings);
        assert_eq!(got.report.torn_tail, report.torn_tail);
        assert_eq!(got.patches.len(), want.patches.len());
        assert!(
            got.report.skipped.len() > 100,
            "{:?}",
            got.report.skipped.len()
        );
        let lines: Vec<u64> = got.report.skipped.iter().map(|s| s.line).collect();
        assert!(
            lines.windows(2).all(|w| w[0] <= w[1]),
            "skipped lines in file order"
        );
    }
}
