//! Reading a session log: a tolerant line scanner and the loader that folds the
//! records needed for the views. Lines that cannot be parsed are skipped and
//! reported, never silently dropped.

pub(crate) mod cache;
pub(crate) mod feed;
pub(crate) mod message;
pub(crate) mod writer;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};
use crate::format::records::{classify, Class, Probe, Skip, SkipKind, FORMAT_VERSION};
use cache::{LineShape, MessageShape, ParentShape, PrefixHash, Span, Structure};

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
    /// How many bytes were skipped.
    pub length: u64,
    /// What kind of damage it is (FORMAT.md §9.1).
    pub kind: SkipKind,
    /// Why the bytes could not be used.
    pub reason: String,
}

/// A message whose parent is not in the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokenChain {
    /// The message whose parent is missing.
    pub message_id: String,
    /// The `parentId` it names.
    pub missing_parent_id: String,
}

/// A blob reference whose blob file does not exist, or that is malformed: the
/// message is handed out with the field as stored (`null`) and the reference in
/// place (FORMAT.md §7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingBlob {
    /// The message that names it.
    pub message_id: String,
    /// The field whose value is in the blob: `content` or `contentParams`.
    pub field: String,
    /// The digest named, or `None` when the reference is malformed.
    pub sha256: Option<String>,
}

/// What reading a log found besides the records themselves.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadReport {
    /// Lines skipped because they are not valid JSON records (including NUL runs).
    pub skipped: Vec<SkippedLine>,
    /// A last line with no newline: a write cut short by a crash.
    pub torn_tail: Option<SkippedLine>,
    /// Messages whose parent is missing; each is a root of the tree.
    pub broken_chains: Vec<BrokenChain>,
    /// Message ids seen more than once; the first occurrence is used.
    pub duplicate_ids: Vec<String>,
    /// Records of a type this version does not know; kept on disk and ignored.
    pub unknown_records: u64,
    /// Blob references that cannot be resolved (their messages are degraded).
    pub missing_blobs: Vec<MissingBlob>,
    /// Other problems: a head record naming an unknown message, a loop of
    /// parents cut.
    pub warnings: Vec<String>,
}

impl ReadReport {
    /// Whether reading found nothing wrong (unknown record types do not count).
    pub fn is_clean(&self) -> bool {
        self.skipped.is_empty()
            && self.torn_tail.is_none()
            && self.broken_chains.is_empty()
            && self.duplicate_ids.is_empty()
            && self.missing_blobs.is_empty()
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
    scan_chunks(
        file,
        path,
        start,
        CHUNK,
        false,
        report,
        |lines, _, _, report| lines.drain(..).try_for_each(|line| f(line, report)),
    )
}

/// [`scan`], reading `chunk` bytes at a time and handing `f` the lines of each
/// (in order; `f` may drain them) and the bytes they were cut from: every byte
/// from `start` to the end of the last line is in exactly one such piece. With
/// `share`, a piece that is valid UTF-8 is also handed over as a string of its
/// own (the lines are slices of it), which the folded lines may keep.
pub(crate) fn scan_chunks(
    file: &mut File,
    path: &Path,
    start: u64,
    chunk: usize,
    share: bool,
    report: &mut ReadReport,
    mut f: impl for<'a> FnMut(
        &mut Vec<Line<'a>>,
        &'a [u8],
        Option<&'a Arc<String>>,
        &mut ReadReport,
    ) -> Result<()>,
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
        let end = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
        let (mut shared, mut invalid) = (None, None);
        if share && end > 0 {
            // The complete lines become a buffer of their own; the rest starts
            // the next one.
            let mut next = Vec::with_capacity(cap + buf.len() - end);
            next.extend_from_slice(&buf[end..]);
            buf.truncate(end);
            let whole = std::mem::replace(&mut buf, next);
            if simdutf8::basic::from_utf8(&whole).is_ok() {
                // SAFETY: simdutf8 has just checked that `whole` is valid UTF-8.
                shared = Some(Arc::new(unsafe { String::from_utf8_unchecked(whole) }));
            } else {
                invalid = Some(whole);
            }
        }
        let piece: &[u8] = match (&shared, &invalid) {
            (Some(s), _) => s.as_bytes(),
            (None, Some(v)) => v,
            (None, None) => &buf[..end],
        };
        let mut pos = 0;
        let mut lines = Vec::new();
        while let Some(nl) = memchr::memchr(b'\n', &piece[pos..]) {
            let line = &piece[pos..pos + nl];
            number += 1;
            lines.extend(emit(line, number, base + pos as u64, report));
            pos += nl + 1;
        }
        f(&mut lines, piece, shared.as_ref(), report)?;
        drop(lines);
        if !(share && end > 0) {
            buf.drain(..end);
        }
        base += end as u64;
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
            kind: if nul { SkipKind::Nul } else { SkipKind::Torn },
            reason: if nul {
                format!("NUL run of {} bytes at end of file", buf.len())
            } else {
                "last line has no newline (a write cut short)".into()
            },
        });
    }
    Ok(base)
}

/// The text of `line`: a slice of `chunk`, the text it was cut from, if any;
/// else its bytes checked.
fn line_text<'a>(chunk: Option<&'a str>, line: &Line<'a>) -> std::result::Result<&'a str, Skip> {
    let in_chunk = chunk.and_then(|c| range_in(c.as_bytes(), line.bytes).and_then(|r| c.get(r)));
    in_chunk.map_or_else(|| utf8(line.bytes), Ok)
}

/// Where `inner`, a slice of `outer`, starts and ends in it; `None` when it is
/// not one.
fn range_in(outer: &[u8], inner: &[u8]) -> Option<std::ops::Range<usize>> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    let end = start + inner.len();
    (end <= outer.len()).then_some(start..end)
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
            kind: SkipKind::Nul,
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
    chunk: Option<&'a str>,
    parallel: bool,
) -> Vec<std::result::Result<(&'a str, Probe<'a>), Skip>> {
    const PARALLEL_BYTES: usize = 256 << 10;
    let total: usize = lines.iter().map(|l| l.bytes.len()).sum();
    let probe_one = |l: &Line<'a>| line_text(chunk, l).and_then(probe_text);
    let probe_each = |ls: &[Line<'a>]| ls.iter().map(probe_one).collect::<Vec<_>>();
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
pub(crate) fn probe(bytes: &[u8]) -> std::result::Result<(&str, Probe<'_>), Skip> {
    probe_text(utf8(bytes)?)
}

/// `bytes` as text, or why they are not.
fn utf8(bytes: &[u8]) -> std::result::Result<&str, Skip> {
    // simdutf8 for the common case; std says where a bad line goes wrong.
    match simdutf8::basic::from_utf8(bytes) {
        Ok(t) => Ok(t),
        Err(_) => {
            std::str::from_utf8(bytes).map_err(|e| (SkipKind::Utf8, format!("invalid UTF-8: {e}")))
        }
    }
}

/// [`probe`] of a line already known to be text: a decodable JSON object
/// (FORMAT.md §5) or a skip of kind `json`.
pub(crate) fn probe_text(text: &str) -> std::result::Result<(&str, Probe<'_>), Skip> {
    if text.trim_start().as_bytes().first() != Some(&b'{') {
        return Err((
            SkipKind::Json,
            "invalid JSON record: not a JSON object".into(),
        ));
    }
    let p: Probe = serde_json::from_str(text)
        .map_err(|e| (SkipKind::Json, format!("invalid JSON record: {e}")))?;
    Ok((text, p))
}

pub(crate) fn skip(report: &mut ReadReport, line: &Line<'_>, (kind, reason): Skip) {
    report.skipped.push(SkippedLine {
        line: line.number,
        offset: line.offset,
        length: line.bytes.len() as u64,
        kind,
        reason,
    });
}

/// A line's text, shared: with the chunk of the log it was read in (so a
/// resume copies no line), or a whole text of its own.
#[derive(Clone)]
pub(crate) struct LineText(Repr);

#[derive(Clone)]
enum Repr {
    /// Not kept (an outline).
    Empty,
    Whole(Arc<str>),
    /// `chunk[start..end]`.
    Within(Arc<String>, usize, usize),
}

impl LineText {
    /// `text` as a slice of `chunk` when it lies in it, else a copy.
    pub(crate) fn within(chunk: Option<&Arc<String>>, text: &str) -> LineText {
        match chunk.and_then(|c| Some((c, range_in(c.as_bytes(), text.as_bytes())?))) {
            Some((c, r)) => LineText(Repr::Within(c.clone(), r.start, r.end)),
            None => LineText::from(text),
        }
    }

    /// The buffer this text lies in and where, when it shares one.
    pub(crate) fn shared(&self) -> Option<(&Arc<String>, usize, usize)> {
        match &self.0 {
            Repr::Within(c, a, b) => Some((c, *a, *b)),
            _ => None,
        }
    }
}

impl std::ops::Deref for LineText {
    type Target = str;
    fn deref(&self) -> &str {
        match &self.0 {
            Repr::Empty => "",
            Repr::Whole(s) => s,
            Repr::Within(c, a, b) => &c[*a..*b],
        }
    }
}

impl From<&str> for LineText {
    fn from(s: &str) -> LineText {
        LineText(Repr::Whole(s.into()))
    }
}

impl From<String> for LineText {
    fn from(s: String) -> LineText {
        LineText(Repr::Whole(s.into()))
    }
}

impl From<Arc<str>> for LineText {
    fn from(s: Arc<str>) -> LineText {
        LineText(Repr::Whole(s))
    }
}

impl PartialEq for LineText {
    fn eq(&self, other: &LineText) -> bool {
        **self == **other
    }
}

impl Eq for LineText {}

impl std::fmt::Debug for LineText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// A message as stored: its ids and its line, unparsed until a view needs it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub id: String,
    /// Byte offset of the message's line in the log, and its length.
    pub offset: u64,
    pub len: usize,
    pub parent_id: Option<String>,
    /// Shared with the messages a view hands out, so a resume holds each line
    /// once. Empty in an outline ([`load_outline`]).
    pub raw: LineText,
    pub has_blob: bool,
    /// What an index entry folds from the message, kept from its probe so that a
    /// fork folds its entry without parsing the copied lines again.
    pub facts: EntryFacts,
}

/// Where a message's `role`, `timestamp` and `meta` sit in its line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct EntryFacts {
    pub role: Option<(u32, u32)>,
    pub timestamp: Option<(u32, u32)>,
    pub meta: Option<(u32, u32)>,
    /// False when a string field has escapes, so its text is not in the line as is.
    pub exact: bool,
}

impl EntryFacts {
    fn of(line: &str, p: &Probe<'_>) -> EntryFacts {
        let span = |inner: &str| span_in(line, inner);
        // `Some(None)` for an absent field, `None` for one not in the line as is.
        let string = |f: &crate::format::records::Json<'_>| match f {
            crate::format::records::Json::Str(Cow::Borrowed(t)) => span(t).map(Some),
            crate::format::records::Json::Str(Cow::Owned(_)) => None,
            _ => Some(None),
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
    /// The index-fold facts of this message, whose line is `text` (its `raw`, or
    /// read back for an outline): from its probe or, when they are not in the
    /// line as is, from the line parsed whole (into `parsed`).
    pub(crate) fn facts<'a>(
        &'a self,
        text: &'a str,
        parsed: &'a mut Option<Map<String, Value>>,
    ) -> crate::format::facts::Facts<'a> {
        let f = &self.facts;
        if !f.exact {
            *parsed = serde_json::from_str(text).ok();
            if let Some(facts) = parsed.as_ref().and_then(crate::format::facts::Facts::of) {
                return facts;
            }
        }
        let at = |s: Option<(u32, u32)>| s.and_then(|(a, b)| text.get(a as usize..b as usize));
        crate::format::facts::Facts {
            id: &self.id,
            role: at(f.role),
            timestamp: at(f.timestamp),
            usage: crate::format::facts::usage_in(at(f.meta)),
        }
    }
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
    /// How many of the first bytes were folded from the structure cache, unparsed.
    pub(crate) cached: u64,
}

impl LoadedLog {
    /// Report the blob references of its messages whose blob file is missing,
    /// or that are malformed (FORMAT.md §7): the views degrade those messages.
    pub(crate) fn check_blobs(&mut self, blobs: &crate::blobs::BlobStore) {
        for e in self.entries.iter().filter(|e| e.has_blob) {
            let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&e.raw) else {
                continue; // an outline keeps no text
            };
            for (field, ref_field) in crate::blobs::BLOB_FIELDS {
                let Some(r) = m.get(ref_field) else { continue };
                if let Some(sha256) = blobs.missing(r) {
                    self.report.missing_blobs.push(MissingBlob {
                        message_id: e.id.clone(),
                        field: field.to_owned(),
                        sha256,
                    });
                }
            }
        }
    }

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
    load_from(&mut open_log(path)?, path)
}

pub(crate) fn load_from(file: &mut File, path: &Path) -> Result<LoadedLog> {
    let size = file.metadata().at(path)?.len();
    fold_log(file, path, size, None, true)
}

/// [`load`], using the structure cache at `cache` for the part of the log it
/// covers (if it is whole and its hash matches), and writing a new one when
/// this read parsed at least [`cache::WRITE_AFTER_BYTES`] of the log. A
/// cache that cannot be written (a read-only directory) is only not written.
pub(crate) fn load_cached(path: &Path, cache: &Path) -> Result<LoadedLog> {
    load_caching(path, cache, cache::WRITE_AFTER_BYTES, true).map(|(log, _)| log)
}

/// [`load_cached`] without keeping the messages' lines (each [`Entry::raw`] is
/// empty; `offset` and `len` say where to read it back), and the open log: what a
/// fork needs to copy a log it does not hold in memory. A log's complete lines
/// never change (FORMAT.md §5), so reading them back from this file gives what
/// was folded.
pub(crate) fn load_outline(path: &Path, cache: &Path) -> Result<(LoadedLog, File)> {
    load_caching(path, cache, cache::WRITE_AFTER_BYTES, false)
}

/// [`load_outline`] of the log open as `file` (a writer's).
pub(crate) fn outline_from(file: &mut File, path: &Path, cache: &Path) -> Result<LoadedLog> {
    fold_caching(file, path, cache, cache::WRITE_AFTER_BYTES, false)
}

/// [`load_cached`], writing a new cache after parsing `write_after` bytes, and
/// keeping the messages' lines or not.
fn load_caching(
    path: &Path,
    cache: &Path,
    write_after: u64,
    keep_text: bool,
) -> Result<(LoadedLog, File)> {
    let mut file = open_log(path)?;
    let log = fold_caching(&mut file, path, cache, write_after, keep_text)?;
    Ok((log, file))
}

/// [`load_caching`] of the log open as `file`.
fn fold_caching(
    file: &mut File,
    path: &Path,
    cache: &Path,
    write_after: u64,
    keep_text: bool,
) -> Result<LoadedLog> {
    let size = file.metadata().at(path)?.len();
    let known = cache::read(cache, size);
    let covered = known.as_ref().map_or(0, |k| k.covered);
    let collect = size - covered >= write_after;
    let mut shapes = Shapes::new(known.as_ref(), collect);
    let mut log = fold_log(file, path, size, Some(&mut shapes), keep_text)?;
    let used = shapes.matched();
    if !used {
        // The cache does not describe this log (it was replaced, or the cache
        // is of another log): read it the ordinary way, and cache that.
        shapes = Shapes::new(None, true);
        log = fold_log(file, path, size, Some(&mut shapes), keep_text)?;
    }
    log.cached = if used { covered } else { 0 };
    if let Some(fresh) = shapes.fresh(log.bytes) {
        if fresh.covered - log.cached >= write_after {
            let _ = cache::write(cache, &fresh);
        }
    }
    Ok(log)
}

fn open_log(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound(format!("session log {}", path.display()))
        } else {
            Error::io(path, e)
        }
    })
}

/// A read's use of a structure cache: the cache it follows, if any, and the
/// structure of what it reads, to write as the next cache.
struct Shapes<'c> {
    known: Option<&'c Structure>,
    /// The next line of `known` to meet.
    next: usize,
    hash: PrefixHash,
    /// Hash (and collect the shapes of) the whole log, not only what `known` covers.
    collect: bool,
    lines: Vec<LineShape>,
    /// The log is not what `known` describes.
    mismatch: bool,
}

impl<'c> Shapes<'c> {
    fn new(known: Option<&'c Structure>, collect: bool) -> Shapes<'c> {
        Shapes {
            known,
            next: 0,
            hash: PrefixHash::new(known.map_or(0, |k| k.covered)),
            collect,
            lines: Vec::new(),
            mismatch: false,
        }
    }

    /// Feed the hash the next piece of the log (from offset 0 on, in order).
    fn hash(&mut self, piece: &[u8]) {
        let (seen, _) = self.hash.all();
        let want = if self.collect {
            piece.len()
        } else {
            let mark = self.known.map_or(0, |k| k.covered);
            (mark.saturating_sub(seen) as usize).min(piece.len())
        };
        if want > 0 {
            self.hash.update(&piece[..want]);
        }
    }

    /// Whether the read followed `known` to its end and the bytes it covers
    /// hash as they did when it was written.
    fn matched(&self) -> bool {
        match self.known {
            None => !self.mismatch,
            Some(k) => {
                !self.mismatch && self.next == k.lines.len() && self.hash.at_mark() == Some(k.hash)
            }
        }
    }

    /// The structure of the log up to `end`, when this read collected it.
    fn fresh(self, end: u64) -> Option<Structure> {
        let (seen, hash) = self.hash.all();
        (self.collect && seen == end).then_some(Structure {
            covered: end,
            hash,
            lines: self.lines,
        })
    }
}

/// Read the whole log into a [`LoadedLog`], with `shapes` following and
/// collecting its structure.
fn fold_log(
    file: &mut File,
    path: &Path,
    size: u64,
    mut shapes: Option<&mut Shapes<'_>>,
    keep_text: bool,
) -> Result<LoadedLog> {
    let mut folder = Folder::new(path);
    folder.keep_text = keep_text;
    let mut report = ReadReport::default();
    // A second thread pays for itself only on a large log: its first use costs
    // about a millisecond (stack, allocator arena), a whole 1 MiB resume.
    let parallel = size >= PARALLEL_LOG_BYTES;
    let chunk = if parallel { PARALLEL_CHUNK } else { CHUNK };
    let end = scan_chunks(
        file,
        path,
        0,
        chunk,
        keep_text,
        &mut report,
        |lines, piece, shared, report| {
            // Lines cut from a chunk of valid UTF-8 are slices of it, kept as they are.
            folder.chunk = shared.cloned();
            let chunk = shared.map(|c| c.as_str());
            let text = |line| line_text(chunk, line);
            let mut known = 0;
            if let Some(sh) = shapes.as_deref_mut() {
                if sh.mismatch {
                    return Ok(());
                }
                sh.hash(piece);
                if let Some(k) = sh.known {
                    known = lines.partition_point(|l| l.offset < k.covered);
                    for line in &lines[..known] {
                        let shape = k.lines.get(sh.next).filter(|s| {
                            s.offset == line.offset && s.len as usize == line.bytes.len()
                        });
                        let fits = match shape.map(|s| &s.message) {
                            None => false,
                            Some(Some(m)) => match text(line) {
                                Ok(t) => folder.shaped(line, t, m, report),
                                Err(_) => false,
                            },
                            Some(None) => {
                                folder.line(line, text(line).and_then(probe_text), report);
                                true
                            }
                        };
                        if !fits {
                            sh.mismatch = true;
                            return Ok(());
                        }
                        sh.next += 1;
                        if let Some(s) = shape.filter(|_| sh.collect) {
                            sh.lines.push(s.clone());
                        }
                    }
                }
            }
            let rest = &lines[known..];
            let probes = probe_all(rest, chunk, parallel);
            for (line, probed) in rest.iter().zip(probes) {
                let message = folder.line(line, probed, report);
                if let Some(sh) = shapes.as_deref_mut().filter(|s| s.collect) {
                    sh.lines.push(LineShape {
                        offset: line.offset,
                        len: u32::try_from(line.bytes.len()).unwrap_or(u32::MAX),
                        message: message.filter(|_| line.bytes.len() < u32::MAX as usize),
                    });
                }
            }
            Ok(())
        },
    )?;
    folder.finish(report, end)
}

/// The state of a read while it folds lines into a [`LoadedLog`].
struct Folder<'p> {
    path: &'p Path,
    log: LoadedLog,
    /// The head as an index into `log.entries`: a head is always a loaded message.
    head: Option<usize>,
    /// The first header of a newer format, if any.
    unsupported: Option<String>,
    /// The chunk of the log the lines being folded were cut from, when it is
    /// text: messages keep their lines as slices of it.
    chunk: Option<Arc<String>>,
    /// False for an outline: messages keep no text.
    keep_text: bool,
}

impl<'p> Folder<'p> {
    fn new(path: &'p Path) -> Folder<'p> {
        Folder {
            path,
            log: LoadedLog {
                path: path.to_path_buf(),
                ..LoadedLog::default()
            },
            head: None,
            unsupported: None,
            chunk: None,
            keep_text: true,
        }
    }

    fn finish(mut self, mut report: ReadReport, end: u64) -> Result<LoadedLog> {
        if let Some(msg) = self.unsupported {
            return Err(Error::Unsupported(msg));
        }
        let log = &mut self.log;
        log.head = self.head.map(|i| log.entries[i].id.clone());
        cut_loops(log, &mut report);
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
        Ok(self.log)
    }

    /// Fold one probed line. For a message whose id and parent are in the line
    /// as is, returns its shape, for the structure cache.
    fn line(
        &mut self,
        line: &Line<'_>,
        probed: std::result::Result<(&str, Probe<'_>), Skip>,
        report: &mut ReadReport,
    ) -> Option<MessageShape> {
        let (text, p) = match probed {
            Ok(x) => x,
            Err(why) => {
                skip(report, line, why);
                return None;
            }
        };
        let class = match classify(&p) {
            Ok(c) => c,
            Err(why) => {
                skip(report, line, why);
                return None;
            }
        };
        let log = &mut self.log;
        match class {
            Class::Message { id, parent } => {
                let facts = EntryFacts::of(text, &p);
                let has_blob = p.has_blob();
                let shape = MessageShape::of(text, id, parent, has_blob, &facts);
                self.message(line, text, id, parent, has_blob, facts, report);
                return shape;
            }
            Class::Session { version } => {
                if version > FORMAT_VERSION && self.unsupported.is_none() {
                    self.unsupported = Some(format!(
                        "{} is format version {version}; this sessionkit reads up to {FORMAT_VERSION}",
                        self.path.display()
                    ));
                }
                if log.header.is_none() {
                    if let Ok(Value::Object(h)) = serde_json::from_str(text) {
                        log.header = Some(h);
                    }
                }
            }
            Class::Head(None) => self.head = None,
            Class::Head(Some(t)) => match log.by_id.get(t) {
                Some(&i) => self.head = Some(i),
                None => report.warnings.push(format!(
                    "line {}: head record names unknown message {t:?}",
                    line.number
                )),
            },
            Class::Patch { message_id } => {
                if let Some(patch) = crate::format::records::patch_of(text) {
                    log.patches
                        .entry(message_id.to_owned())
                        .or_default()
                        .push((line.offset, patch));
                }
            }
            Class::Compaction { summary_id } => {
                if let Ok(v) = serde_json::from_str::<Value>(text) {
                    log.compactions
                        .entry(summary_id.to_owned())
                        .or_insert((line.offset, v));
                }
            }
            Class::State | Class::Subagent => {
                log.record_offsets.push(line.offset);
                log.records
                    .push(serde_json::from_str(text).unwrap_or(Value::Null));
            }
            Class::Unknown => report.unknown_records += 1,
        }
        None
    }

    /// Fold a message line as its cached `shape` describes it, without parsing
    /// it. False when the shape does not fit the line (the cache is not of this log).
    fn shaped(
        &mut self,
        line: &Line<'_>,
        text: &str,
        shape: &MessageShape,
        report: &mut ReadReport,
    ) -> bool {
        let at = |(a, b): Span| text.get(a as usize..b as usize);
        let fits = |s: Option<Span>| s.is_none_or(|s| at(s).is_some());
        let Some(id) = at(shape.id) else { return false };
        let parent = match shape.parent {
            ParentShape::Absent => None,
            ParentShape::Root => Some(None),
            ParentShape::At(s) => match at(s) {
                Some(p) => Some(Some(p)),
                None => return false,
            },
        };
        let f = &shape.facts;
        if !(fits(f.role) && fits(f.timestamp) && fits(f.meta)) {
            return false;
        }
        self.message(line, text, id, parent, shape.has_blob, *f, report);
        true
    }

    /// Fold a message: the first occurrence of an id wins; a seed-style line
    /// without `parentId` (`parent` is `None`) continues from the head.
    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        line: &Line<'_>,
        text: &str,
        id: &str,
        parent: Option<Option<&str>>,
        has_blob: bool,
        facts: EntryFacts,
        report: &mut ReadReport,
    ) {
        let log = &mut self.log;
        if log.by_id.contains_key(id) {
            report.duplicate_ids.push(id.to_owned());
            return;
        }
        let parent_id = match parent {
            Some(p) => p.map(str::to_owned),
            None => self.head.map(|i| log.entries[i].id.clone()),
        };
        self.head = Some(log.entries.len());
        log.by_id.insert(id.to_owned(), log.entries.len());
        log.entries.push(Entry {
            id: id.to_owned(),
            offset: line.offset,
            len: line.bytes.len(),
            parent_id,
            has_blob,
            facts,
            raw: if self.keep_text {
                LineText::within(self.chunk.as_ref(), text)
            } else {
                LineText(Repr::Empty)
            },
        });
    }
}

/// Cut every loop of parents (FORMAT.md §8.3): in each, the message that comes
/// first in the log becomes a root, so every walk ends wherever it starts.
fn cut_loops(log: &mut LoadedLog, report: &mut ReadReport) {
    const NEW: u8 = 0;
    const WALKING: u8 = 1;
    const DONE: u8 = 2;
    let parent_of = |log: &LoadedLog, i: usize| {
        log.entries[i]
            .parent_id
            .as_deref()
            .and_then(|p| log.by_id.get(p).copied())
    };
    let mut state = vec![NEW; log.entries.len()];
    let mut walk = Vec::new();
    for start in 0..log.entries.len() {
        let mut cur = Some(start);
        while let Some(i) = cur {
            match state[i] {
                NEW => {
                    state[i] = WALKING;
                    walk.push(i);
                    cur = parent_of(log, i);
                }
                WALKING => {
                    // The walk came back to `i`: the loop is `i` and what the
                    // walk visited after it.
                    let from = walk.iter().position(|&w| w == i).unwrap_or(0);
                    let first = walk[from..].iter().copied().min().unwrap_or(i);
                    let e = &mut log.entries[first];
                    report.warnings.push(format!(
                        "message {:?}: its chain of parents loops; read as a root",
                        e.id
                    ));
                    e.parent_id = None;
                    break;
                }
                _ => break,
            }
        }
        for w in walk.drain(..) {
            state[w] = DONE;
        }
    }
}

impl MessageShape {
    /// The shape of a probed message line; `None` when its id or parent is not
    /// in the line as is (escaped), so only parsing finds it. (Whether a `Cow`
    /// borrows from the line is what is asked, hence `&Cow`.)
    fn of(
        text: &str,
        id: &str,
        parent: Option<Option<&str>>,
        has_blob: bool,
        facts: &EntryFacts,
    ) -> Option<MessageShape> {
        // A string decoded from escapes is a copy, not a slice of the line.
        Some(MessageShape {
            id: span_in(text, id)?,
            parent: match parent {
                None => ParentShape::Absent,
                Some(None) => ParentShape::Root,
                Some(Some(p)) => ParentShape::At(span_in(text, p)?),
            },
            has_blob,
            facts: *facts,
        })
    }
}

/// Where `inner`, a slice of `line`, starts and ends in it.
fn span_in(line: &str, inner: &str) -> Option<Span> {
    let r = range_in(line.as_bytes(), inner.as_bytes())?;
    Some((u32::try_from(r.start).ok()?, u32::try_from(r.end).ok()?))
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

        let mut folder = Folder::new(&path);
        let mut report = ReadReport::default();
        let mut file = File::open(&path).unwrap();
        let end = scan(&mut file, &path, 0, &mut report, |line, report| {
            folder.line(&line, probe(line.bytes), report);
            Ok(())
        })
        .unwrap();
        let want = folder.finish(report, end).unwrap();
        let report = &want.report;

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

    /// The log folded line by line from a plain scan: no chunk sharing, no
    /// second thread, no cache. What every faster read must agree with.
    fn reference(path: &Path) -> LoadedLog {
        let mut folder = Folder::new(path);
        let mut report = ReadReport::default();
        let mut file = File::open(path).unwrap();
        let end = scan(&mut file, path, 0, &mut report, |line, report| {
            folder.line(&line, probe(line.bytes), report);
            Ok(())
        })
        .unwrap();
        folder.finish(report, end).unwrap()
    }

    /// Everything a view or fork reads of a loaded log, comparable.
    fn everything(l: &LoadedLog) -> String {
        let entries: Vec<_> = l
            .entries
            .iter()
            .map(|e| {
                let f = &e.facts;
                let facts = (f.role, f.timestamp, f.meta, f.exact);
                (&e.id, e.offset, &e.parent_id, &*e.raw, e.has_blob, facts)
            })
            .collect();
        let mut by_id: Vec<_> = l.by_id.iter().collect();
        by_id.sort();
        let mut patches: Vec<_> = l.patches.iter().collect();
        patches.sort_by_key(|p| p.0);
        let mut compactions: Vec<_> = l.compactions.iter().collect();
        compactions.sort_by_key(|c| c.0);
        format!(
            "{:?}\n{by_id:?}\n{:?}\n{:?}\n{patches:?}\n{compactions:?}\n{:?}\n{:?}\n{:?}\n{}",
            entries, l.head, l.header, l.records, l.record_offsets, l.report, l.bytes
        )
    }

    /// One line of a test log, picked by `pick`; `i` makes ids unique, `prev` is
    /// the id before it.
    fn test_line(pick: u8, i: usize, prev: &str) -> String {
        let pad = "p".repeat(i % 7 * 50);
        match pick % 16 {
            0 => format!(r#"{{"type":"session","version":1,"id":"s","title":"t{i}"}}"#),
            1 => format!(r#"{{"id":"seed{i}","role":"user","content":"{pad}"}}"#),
            2 => format!(
                r#"{{"type":"message","id":"e\u0073c{i}","parentId":"{prev}","role":"user"}}"#
            ),
            3 => format!(
                r#"{{"type":"message","id":"pe{i}","parentId":"{prev}\u0000","role":"tool"}}"#
            ),
            4 => format!(r#"{{"type":"message","id":"{prev}","parentId":null,"role":"user"}}"#),
            5 => format!(r#"{{"type":"head","messageId":"{prev}"}}"#),
            6 => format!(r#"{{"type":"patch","messageId":"{prev}","patch":{{"n":{i}}}}}"#),
            7 => format!(r#"{{"type":"state","set":{{"status":"processing"}},"n":{i}}}"#),
            8 => "\0\0\0".to_string(),
            9 => format!(r#"{{"type":"message","id":"bad{i}","#),
            10 => "   ".to_string(),
            11 => format!(
                r#"{{"type":"message","id":"b{i}","parentId":7,"role":"assistant","contentBlob":"x"}}"#
            ),
            12 => format!(r#"{{"type":"mystery","id":"u{i}"}}"#),
            13 => format!(
                r#"{{"role":"assist\u0061nt","type":"message","parentId":"{prev}","id":"r{i}","timestamp":"2026-01-01T00:00:0{}Z","meta":{{"usage":{{"inputTokens":{i}}}}}}}"#,
                i % 10
            ),
            _ => format!(
                r#"{{"type":"message","id":"m{i}","parentId":"{prev}","role":"user","timestamp":"2026-01-01T00:00:00Z","content":"{pad}"}}"#
            ),
        }
    }

    fn write_lines(path: &Path, picks: &[u8], from: usize) -> String {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        let mut prev = String::from("m0");
        for (i, &pick) in picks.iter().enumerate() {
            let i = i + from;
            if pick % 16 == 8 && i.is_multiple_of(3) {
                // Not UTF-8: the chunk it is in is not text.
                let mut line = format!(r#"{{"id":"bin{i}","role":"user","content":"#).into_bytes();
                line.extend_from_slice(b"\"\xff\xfe\"}\n");
                f.write_all(&line).unwrap();
                continue;
            }
            writeln!(f, "{}", test_line(pick, i, &prev)).unwrap();
            if pick % 16 >= 14 {
                prev = format!("m{i}");
            }
        }
        prev
    }

    /// A read through the cache folds exactly what a read without it does, for
    /// every kind of line; a cache of a prefix serves that prefix of a longer log.
    #[test]
    fn a_cached_read_folds_what_an_ordinary_read_does() {
        let dir = tempfile::tempdir().unwrap();
        let (path, cache) = (dir.path().join("s.jsonl"), dir.path().join("s/c"));
        let picks: Vec<u8> = (0..600u32).map(|i| (i * 7 % 23) as u8).collect();
        write_lines(&path, &picks, 0);

        let first = load_caching(&path, &cache, 0, true).unwrap().0;
        assert_eq!(first.cached, 0);
        assert!(cache.exists(), "the first read writes the cache");
        let plain = reference(&path);
        assert_eq!(everything(&first), everything(&plain));
        assert_eq!(everything(&load(&path).unwrap()), everything(&plain));
        assert!(plain.report.skipped.len() > 10 && !plain.report.duplicate_ids.is_empty());
        assert!(plain
            .report
            .skipped
            .iter()
            .any(|s| s.reason.contains("UTF-8")));

        let second = load_caching(&path, &cache, 0, true).unwrap().0;
        assert_eq!(
            second.cached, plain.bytes,
            "the second read is all from the cache"
        );
        assert_eq!(everything(&second), everything(&plain));

        // More lines, and a torn tail: the cache serves its prefix, the rest is parsed.
        write_lines(&path, &picks[..200], 600);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(br#"{"type":"message","id":"torn""#)
            .unwrap();
        let grown = load_caching(&path, &cache, u64::MAX, true).unwrap().0;
        assert_eq!(grown.cached, plain.bytes);
        let plain = reference(&path);
        assert!(plain.report.torn_tail.is_some());
        assert_eq!(everything(&grown), everything(&plain));
    }

    /// The cache is trusted only as far as the bytes it covers: a log changed
    /// in place (same length), replaced by a shorter one, or another log's cache
    /// is noticed, and the log is read the ordinary way.
    #[test]
    fn a_cache_that_does_not_describe_the_log_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let (path, cache) = (dir.path().join("s.jsonl"), dir.path().join("s/c"));
        let picks: Vec<u8> = (0..300u32).map(|i| (i * 5 % 17) as u8).collect();
        write_lines(&path, &picks, 0);
        let unknown = load_caching(&path, &cache, 0, true)
            .unwrap()
            .0
            .report
            .unknown_records;
        let good = std::fs::read(&path).unwrap();

        // A message turned into a record of another type in place: the same
        // length, every line where it was, but it is no longer a message.
        let at = memchr::memmem::find(&good, b"\"type\":\"message\",\"id\":\"m1").unwrap();
        let mut changed = good.clone();
        changed[at + 14] = b'f';
        std::fs::write(&path, &changed).unwrap();
        let got = load_caching(&path, &cache, u64::MAX, true).unwrap().0;
        assert_eq!(got.cached, 0);
        assert_eq!(everything(&got), everything(&reference(&path)));
        assert_eq!(got.report.unknown_records, unknown + 1);

        // Cut short, then another log's cache.
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        let got = load_caching(&path, &cache, u64::MAX, true).unwrap().0;
        assert_eq!(
            (got.cached, everything(&got)),
            (0, everything(&reference(&path)))
        );
        let other = dir.path().join("o.jsonl");
        write_lines(&other, &picks[..150], 1);
        load_caching(&other, &cache, 0, true).unwrap();
        std::fs::write(&path, &good).unwrap();
        let got = load_caching(&path, &cache, u64::MAX, true).unwrap().0;
        assert_eq!(
            (got.cached, everything(&got)),
            (0, everything(&reference(&path)))
        );
    }

    #[test]
    fn a_cache_that_cannot_be_written_does_not_fail_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_lines(&path, &[14; 50], 0);
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"").unwrap();
        // The cache's directory would have to be made inside a regular file.
        let got = load_caching(&path, &blocker.join("c"), 0, true).unwrap().0;
        assert_eq!(everything(&got), everything(&reference(&path)));
    }

    proptest::proptest! {
        // The seed is printed; PROPTEST_RNG_SEED=<seed> reruns a failure's inputs.
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(crate::testing::proptest_seed()),
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// Any log, cached at any point, then grown and perhaps changed in place:
        /// a read through the cache folds what an ordinary read does.
        #[test]
        fn cached_reads_fold_like_ordinary_ones(
            picks in proptest::collection::vec(0u8..16, 1..60),
            grow in proptest::collection::vec(0u8..16, 0..20),
            flip in proptest::option::of(0usize..10_000),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let (path, cache) = (dir.path().join("s.jsonl"), dir.path().join("s/c"));
            write_lines(&path, &picks, 0);
            load_caching(&path, &cache, 0, true).unwrap();
            write_lines(&path, &grow, picks.len());
            if let Some(flip) = flip {
                let mut bytes = std::fs::read(&path).unwrap();
                let at = flip % bytes.len();
                bytes[at] = if bytes[at] == b'a' { b'b' } else { b'a' };
                std::fs::write(&path, &bytes).unwrap();
            }
            let got = load_caching(&path, &cache, 0, true).unwrap().0;
            proptest::prop_assert_eq!(everything(&got), everything(&reference(&path)));
            let again = load_caching(&path, &cache, 0, true).unwrap().0;
            proptest::prop_assert_eq!(again.cached, again.bytes);
            proptest::prop_assert_eq!(everything(&again), everything(&got));
        }
    }
}
