//! The index journal (FORMAT.md §10.7): changed index entries appended as lines
//! beside the index instead of rewriting the whole index on every update.
//!
//! The index names its journal by generation (`"journal": 7` →
//! `.sessions-index.7.journal`). A reader takes the index, then applies the journal's
//! complete lines in order. A writer appends under the project lock; once the
//! journal outgrows the index, a writer compacts: it writes a full index naming
//! the next generation (temp file, rename) and removes the older journals.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::format::records::SkipKind;
use crate::index::{IndexEntry, IndexFile, INDEX_FILE};
use crate::log::SkippedLine;

/// A journal is compacted once it would grow past the index's size, or this
/// many bytes if the index is smaller: readers then parse at most about twice the
/// index, and each compaction's full write is paid for by at least as many bytes
/// of appends.
pub const JOURNAL_MIN_BYTES: u64 = 32 * 1024;

const PREFIX: &str = ".sessions-index.";
const SUFFIX: &str = ".journal";

/// The file name of journal generation `generation`. It starts with a dot, so no
/// session id (which may not) can name it, its log or its sidecar directory.
pub fn journal_name(generation: u64) -> String {
    format!("{PREFIX}{generation}{SUFFIX}")
}

pub fn journal_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(journal_name(generation))
}

/// The generation of a journal file name, or `None` when `name` is not one.
pub fn generation_of(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The generations of the journal files in `dir`.
pub(crate) fn journal_files(dir: &Path) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(dir).at(dir)? {
        let d = d.at(dir)?;
        if let Some(g) = d.file_name().to_str().and_then(generation_of) {
            out.push(g);
        }
    }
    Ok(out)
}

/// The line that sets a session's entry.
pub(crate) fn entry_line(e: &IndexEntry, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"entry\":");
    // An entry always serialises: its maps have string keys.
    out.extend(serde_json::to_vec(e).unwrap_or_default());
    out.extend_from_slice(b"}\n");
}

/// The line that removes a session's entry.
pub(crate) fn remove_line(id: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"remove\":");
    out.extend(serde_json::to_vec(id).unwrap_or_default());
    out.extend_from_slice(b"}\n");
}

/// What reading an index journal found. Its lines are a cache like the index: a
/// skipped line costs a refold of the entries it held, never data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalReport {
    /// The generation the index names; `None` for an index without a journal.
    pub generation: Option<u64>,
    /// Lines applied to the index.
    pub applied: u64,
    /// Complete lines that were not a journal line (not JSON, or no valid
    /// `entry` or `remove`).
    pub skipped: Vec<SkippedLine>,
    /// A last line without its newline: an append in progress, or cut by a crash.
    pub torn_tail: Option<SkippedLine>,
}

/// The index as stored: the index file with its journal applied.
#[derive(Debug, Clone, Default)]
pub struct StoredIndex {
    /// The index file with the journal's lines applied.
    pub index: IndexFile,
    /// What reading the journal found.
    pub journal: JournalReport,
}

/// Apply the complete lines of `bytes` (journal bytes from file offset `start`,
/// where a line starts; `line` lines come before it) to `idx`, in order. Returns
/// the offset just after the last complete line; what follows it is reported as
/// the torn tail.
pub(crate) fn apply(
    idx: &mut IndexFile,
    bytes: &[u8],
    start: u64,
    line: u64,
    report: &mut JournalReport,
) -> u64 {
    // Where each session's entry is, once the lines outnumber a few: a journal
    // may hold as many bytes as the index, an entry for most sessions.
    const FEW_LINES: u64 = 16;
    let mut positions: Option<HashMap<String, usize>> = None;
    let mut applied = 0u64;
    each_line(bytes, start, line, report, |l| {
        applied += 1;
        match l {
            JournalLine::Entry(e) if applied <= FEW_LINES => idx.upsert(*e),
            JournalLine::Entry(e) => {
                // The first of an id's entries, as `upsert` finds it.
                let positions = positions.get_or_insert_with(|| {
                    let mut at = HashMap::with_capacity(idx.sessions.len());
                    for (i, e) in idx.sessions.iter().enumerate() {
                        at.entry(e.id.clone()).or_insert(i);
                    }
                    at
                });
                match positions.get(&e.id) {
                    Some(&i) => idx.sessions[i] = *e,
                    None => {
                        positions.insert(e.id.clone(), idx.sessions.len());
                        idx.sessions.push(*e);
                    }
                }
            }
            JournalLine::Remove(id) => {
                // The entries after it move: their positions are made again.
                if idx.remove(&id).is_some() {
                    positions = None;
                }
            }
        }
    })
}

/// Hand each complete, valid line of `bytes` (journal bytes from file offset
/// `start`, where a line starts; `line` lines come before it) to `each`, in
/// order, counting it in `report`; report the lines skipped and the torn tail.
/// Returns the offset just after the last complete line.
pub(crate) fn each_line(
    bytes: &[u8],
    start: u64,
    mut line: u64,
    report: &mut JournalReport,
    mut each: impl FnMut(JournalLine),
) -> u64 {
    let mut at = 0usize;
    while at < bytes.len() {
        line += 1;
        let Some(n) = memchr::memchr(b'\n', &bytes[at..]) else {
            report.torn_tail = Some(SkippedLine {
                line,
                offset: start + at as u64,
                length: (bytes.len() - at) as u64,
                kind: SkipKind::Torn,
                reason: "no newline at the end of the journal".into(),
            });
            break;
        };
        match parse_line(&bytes[at..at + n]) {
            Ok(l) => {
                each(l);
                report.applied += 1;
            }
            Err(reason) => report.skipped.push(SkippedLine {
                line,
                offset: start + at as u64,
                length: n as u64,
                kind: SkipKind::Json,
                reason,
            }),
        }
        at += n + 1;
    }
    // `at` is where the torn tail starts, or the end.
    start + at as u64
}

/// A journal line: a session's entry set, or removed.
pub(crate) enum JournalLine {
    Entry(Box<IndexEntry>),
    Remove(String),
}

fn parse_line(text: &[u8]) -> std::result::Result<JournalLine, String> {
    let v: Value = serde_json::from_slice(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut m) = v else {
        return Err("not a JSON object".into());
    };
    if let Some(e) = m.remove("entry") {
        return serde_json::from_value(e)
            .map(|e| JournalLine::Entry(Box::new(e)))
            .map_err(|e| format!("entry is not a valid index entry: {e}"));
    }
    match m.remove("remove") {
        Some(Value::String(id)) => Ok(JournalLine::Remove(id)),
        _ => Err("neither an \"entry\" nor a string \"remove\"".into()),
    }
}

/// An index as a reader parses it: whole ([`IndexFile`]), or only as far as a
/// page of the listing needs ([`crate::index::page::RawIndex`]); its journal's
/// lines apply on top either way.
pub(crate) trait Journaled: Sized {
    /// Parse the bytes of the index file at `path` (named in errors).
    fn parse(bytes: &[u8], path: &Path) -> Result<Self>;
    /// The generation of the journal the index names.
    fn generation(&self) -> Option<u64>;
    /// Apply the journal's `bytes` (from offset 0), as [`apply`] does.
    fn apply_journal(&mut self, bytes: &[u8], report: &mut JournalReport) -> u64;
}

impl Journaled for IndexFile {
    fn parse(bytes: &[u8], path: &Path) -> Result<IndexFile> {
        IndexFile::parse(bytes, path)
    }
    fn generation(&self) -> Option<u64> {
        self.journal
    }
    fn apply_journal(&mut self, bytes: &[u8], report: &mut JournalReport) -> u64 {
        apply(self, bytes, 0, 0, report)
    }
}

/// The index file opened and parsed, with the descriptor kept open so that its
/// identity can be compared with the path's.
pub(crate) struct OpenedIndex<T = IndexFile> {
    pub file: File,
    pub idx: T,
}

/// Open and parse the index file: `Ok(None)` when there is none, `Corrupt` when
/// it does not parse, `Unsupported` for a newer version.
pub(crate) fn open_index<T: Journaled>(dir: &Path) -> Result<Option<OpenedIndex<T>>> {
    let path = dir.join(INDEX_FILE);
    let mut file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).at(&path)?;
    let idx = T::parse(&bytes, &path)?;
    Ok(Some(OpenedIndex { file, idx }))
}

/// Whether `path` still names the file open as `file`. While `file` is open its
/// inode cannot be reused, so the same device and inode mean the same file.
pub(crate) fn still_at(file: &File, path: &Path) -> bool {
    use crate::platform::file_id;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => file_id(&a) == file_id(&b),
        _ => false,
    }
}

/// What reading the journal of an opened index gave.
pub(crate) enum JournalRead {
    /// Applied: the journal file (if it exists yet), its length, and the offset
    /// after its last complete line.
    Applied {
        file: Option<File>,
        len: u64,
        complete: u64,
    },
    /// The journal is gone and the index path names another file: a compaction
    /// came between reading the index and opening its journal.
    Raced,
}

/// Apply the journal that `opened` names to its index.
pub(crate) fn read_journal<T: Journaled>(
    dir: &Path,
    opened: &mut OpenedIndex<T>,
    report: &mut JournalReport,
) -> Result<JournalRead> {
    report.generation = opened.idx.generation();
    let Some(generation) = opened.idx.generation() else {
        return Ok(JournalRead::Applied {
            file: None,
            len: 0,
            complete: 0,
        });
    };
    let path = journal_path(dir, generation);
    let mut file = match File::options().read(true).append(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Created by the first append after the compaction that named it: while
            // the index is still the file read, it has none yet.
            return Ok(if still_at(&opened.file, &dir.join(INDEX_FILE)) {
                JournalRead::Applied {
                    file: None,
                    len: 0,
                    complete: 0,
                }
            } else {
                JournalRead::Raced
            });
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).at(&path)?;
    let complete = opened.idx.apply_journal(&bytes, report);
    Ok(JournalRead::Applied {
        file: Some(file),
        len: bytes.len() as u64,
        complete,
    })
}

/// The index file and its journal as read: the index with the journal applied,
/// and the files, still open.
pub(crate) struct Loaded<T = IndexFile> {
    pub opened: OpenedIndex<T>,
    pub journal: Option<File>,
    /// The journal's length as read.
    pub journal_len: u64,
    /// The offset after its last complete line.
    pub complete: u64,
    pub report: JournalReport,
}

/// Read the index and its journal. A reader that loses the race with a
/// compaction (its journal removed before it was opened) starts again from the
/// new index; after `TRIES` such races it calls `locked` (which takes the project
/// lock, or does nothing for a caller that holds it) and reads once more, with no
/// compaction able to come between. `between` runs after each read of the index,
/// before its journal is opened (for tests of that race).
pub(crate) fn load<G>(
    dir: &Path,
    locked: impl FnOnce() -> Result<G>,
    between: impl FnMut(u32),
) -> Result<Option<Loaded>> {
    load_as(dir, locked, between)
}

/// [`load`], the index parsed as a `T`.
pub(crate) fn load_as<T: Journaled, G>(
    dir: &Path,
    locked: impl FnOnce() -> Result<G>,
    mut between: impl FnMut(u32),
) -> Result<Option<Loaded<T>>> {
    const TRIES: u32 = 3;
    let mut locked = Some(locked);
    let mut _guard = None;
    for attempt in 0..=TRIES {
        if let (true, Some(lock)) = (attempt == TRIES, locked.take()) {
            _guard = Some(lock()?);
        }
        let Some(mut opened) = open_index::<T>(dir)? else {
            return Ok(None);
        };
        between(attempt);
        let mut report = JournalReport::default();
        if let JournalRead::Applied {
            file,
            len,
            complete,
        } = read_journal(dir, &mut opened, &mut report)?
        {
            return Ok(Some(Loaded {
                opened,
                journal: file,
                journal_len: len,
                complete,
                report,
            }));
        }
    }
    Err(Error::Conflict(format!(
        "{}: the index was replaced without the project lock",
        dir.display()
    )))
}

/// [`load`], as readers want it: the index with its journal applied, sorted.
pub(crate) fn read_stored<G>(
    dir: &Path,
    locked: impl FnOnce() -> Result<G>,
    between: impl FnMut(u32),
) -> Result<Option<StoredIndex>> {
    Ok(load(dir, locked, between)?.map(|l| {
        let mut index = l.opened.idx;
        index.sort();
        StoredIndex {
            index,
            journal: l.report,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, bytes: u64) -> IndexEntry {
        let mut e = IndexEntry::new(id);
        e.created_at = "2026-01-01T00:00:00.000Z".into();
        e.updated_at = format!("2026-01-01T00:00:0{bytes}.000Z");
        e.log_bytes = bytes;
        e
    }

    /// Three sessions, one renamed and one deleted since the last compaction (so
    /// only the journal has those), and the store's handle; another handle
    /// compacts. The renamed session stays open: its close would compact.
    fn store_with_a_journal() -> (
        tempfile::TempDir,
        tempfile::TempDir,
        crate::store::StoreCore,
        crate::store::session::SessionCore,
    ) {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let o = crate::StoreOptions {
            home: Some(home.path().to_path_buf()),
            max_sessions: 0,
            ..crate::StoreOptions::default()
        };
        let store = crate::store::StoreCore::open(project.path(), o).unwrap();
        let mut ids = Vec::new();
        for i in 0..3 {
            let s = store
                .create_session(crate::CreateOptions::default())
                .unwrap();
            s.append(serde_json::json!({"role": "user", "content": format!("m{i}")}))
                .unwrap();
            ids.push(s.id().to_string());
            s.close().unwrap();
        }
        store.compact_index().unwrap();
        let renamed = store.open_session(&ids[0]).unwrap();
        renamed.rename("Renamed").unwrap();
        store.delete_session(&ids[1]).unwrap();
        (home, project, store, renamed)
    }

    #[test]
    fn a_reader_that_loses_the_race_with_a_compaction_gets_every_entry() {
        let (_home, project, store, _renamed) = store_with_a_journal();
        let dir = store.dir().to_path_buf();
        let other = crate::store::StoreCore::open(project.path(), store.options().clone()).unwrap();
        let read = |between: &mut dyn FnMut(u32)| {
            read_stored(&dir, || other.project_lock(), between)
                .unwrap()
                .unwrap()
        };
        let want = read(&mut |_| {});
        // The journal holds what the index file alone does not.
        let alone = IndexFile::read(&dir.join(INDEX_FILE)).unwrap().unwrap();
        assert_eq!(alone.sessions.len(), 3);
        assert_eq!(want.index.sessions.len(), 2);
        assert!(want.index.sessions.iter().any(|e| e.title == "Renamed"));
        assert!(!alone.sessions.iter().any(|e| e.title == "Renamed"));
        let generation = want.journal.generation.unwrap();

        // A compaction between reading the index and opening its journal: the
        // journal is gone, the index replaced, and the reader starts again.
        let mut attempts = Vec::new();
        let got = read(&mut |a| {
            attempts.push(a);
            if a == 0 {
                other.compact_index().unwrap();
            }
        });
        assert_eq!(attempts, [0, 1]);
        assert_eq!(got.index.sessions, want.index.sessions);
        assert_eq!(got.journal.generation, Some(generation + 1));

        // Losing every time: the last read is under the project lock.
        let mut attempts = Vec::new();
        let got = read(&mut |a| {
            attempts.push(a);
            if a < 3 {
                other.compact_index().unwrap();
            }
        });
        assert_eq!(attempts, [0, 1, 2, 3]);
        assert_eq!(got.index.sessions, want.index.sessions);
        assert_eq!(got.journal.generation, Some(generation + 4));

        // A journal not created yet (no update since the compaction): the index
        // alone, at once.
        assert!(!journal_path(&dir, generation + 4).exists());
        let mut attempts = Vec::new();
        let got = read(&mut |a| attempts.push(a));
        assert_eq!(attempts, [0]);
        assert_eq!(got.index.sessions, want.index.sessions);
    }

    #[test]
    fn names_round_trip_and_are_never_session_logs() {
        assert_eq!(journal_name(7), ".sessions-index.7.journal");
        assert_eq!(generation_of(".sessions-index.7.journal"), Some(7));
        for not in [
            "sessions-index.7.journal",
            ".sessions-index..journal",
            ".sessions-index.7a.journal",
            ".sessions-index.-1.journal",
            ".sessions-index.7.jsonl",
        ] {
            assert_eq!(generation_of(not), None, "{not}");
        }
        // Not a log (nor a transcript to a tool that lists `*.jsonl`), and no
        // session id can name it or its sidecar directory: ids never start with `.`.
        assert!(!journal_name(7).ends_with(".jsonl"));
        assert!(crate::format::ids::validate_path_id("session id", &journal_name(7)).is_err());
    }

    #[test]
    fn lines_apply_in_order_and_bad_ones_are_reported() {
        let mut bytes = Vec::new();
        entry_line(&entry("a", 1), &mut bytes);
        entry_line(&entry("b", 2), &mut bytes);
        bytes.extend_from_slice(b"{not json\n\0\0\0\n{\"entry\":{\"id\":\"x\"}}\n");
        entry_line(&entry("a", 3), &mut bytes);
        remove_line("b", &mut bytes);
        let whole = bytes.len() as u64;
        bytes.extend_from_slice(b"{\"entry\":{\"id\":\"c\"");
        let mut idx = IndexFile::default();
        idx.upsert(entry("b", 1));
        idx.upsert(entry("old", 1));
        let mut r = JournalReport::default();
        let end = apply(&mut idx, &bytes, 0, 0, &mut r);
        assert_eq!(end, whole);
        assert_eq!(r.applied, 4);
        assert_eq!(
            r.skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );
        let t = r.torn_tail.unwrap();
        assert_eq!((t.line, t.offset), (8, whole));
        let got: Vec<(&str, u64)> = idx
            .sessions
            .iter()
            .map(|e| (e.id.as_str(), e.log_bytes))
            .collect();
        assert_eq!(got, vec![("old", 1), ("a", 3)]);
    }

    #[test]
    fn a_long_journal_applies_as_its_lines_one_by_one() {
        // Past the first few lines entries are found through a map: the result
        // must be what applying each line to the index in turn gives, with
        // sessions added, replaced many times, removed and added again.
        let mut idx = IndexFile::default();
        for i in 0..40 {
            idx.upsert(entry(&format!("s{i}"), 1));
        }
        let mut bytes = Vec::new();
        let mut want = idx.clone();
        for n in 0..300u64 {
            let id = format!("s{}", (n * 7) % 55);
            if n % 13 == 5 {
                remove_line(&id, &mut bytes);
                want.remove(&id);
            } else {
                entry_line(&entry(&id, n), &mut bytes);
                want.upsert(entry(&id, n));
            }
        }
        let mut r = JournalReport::default();
        apply(&mut idx, &bytes, 0, 0, &mut r);
        assert_eq!(r.applied, 300);
        let key = |i: &IndexFile| {
            let mut v: Vec<(String, u64)> = i
                .sessions
                .iter()
                .map(|e| (e.id.clone(), e.log_bytes))
                .collect();
            v.sort();
            v
        };
        assert_eq!(key(&idx), key(&want));
    }
}
