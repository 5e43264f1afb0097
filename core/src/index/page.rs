//! The index read for a page of the listing ([`crate::Store::list_page`]).
//!
//! A listing checks every entry against its log's length (FORMAT.md §10.5) and
//! sorts them all (§10.4), but a page hands back only a few. So each entry of
//! the file is read for its id, `updatedAt` and `logBytes` alone and kept as
//! its JSON text, which is parsed whole only if the entry is on the page. At
//! ten thousand sessions, parsing every entry whole was most of the listing.
//! The journal's lines (§10.7) are few and read whole, as for any reader.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::journal::{each_line, JournalLine, JournalReport, Journaled};
use super::{IndexEntry, INDEX_VERSION};
use crate::error::{Error, Result};

/// One entry of the index file, read as far as the listing needs.
pub(crate) struct RawEntry {
    pub id: String,
    /// `updatedAt` as the sort order compares it ([`super::sort_ms`]).
    pub updated_ms: u64,
    pub log_bytes: u64,
    raw: Box<RawValue>,
}

impl RawEntry {
    /// The whole entry; `Corrupt` when it is not a valid one (only the three
    /// members above were checked).
    pub fn entry(&self, path: &Path) -> Result<IndexEntry> {
        serde_json::from_str(self.raw.get())
            .map_err(|e| Error::Corrupt(format!("{}: entry {}: {e}", path.display(), self.id)))
    }
}

/// The index file with its entries read as [`RawEntry`], and what its journal
/// set on top.
pub(crate) struct RawIndex {
    journal: Option<u64>,
    pub entries: Vec<RawEntry>,
    /// Each session the journal names: its last entry there, or `None` when
    /// its last line removes it.
    pub journaled: HashMap<String, Option<IndexEntry>>,
}

#[derive(Deserialize)]
struct RawFile {
    version: u64,
    #[serde(default)]
    journal: Option<u64>,
    sessions: Vec<Box<RawValue>>,
}

/// The members of an entry a listing reads; the others are skipped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lite<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    updated_at: Cow<'a, str>,
    #[serde(default)]
    log_bytes: u64,
}

impl Journaled for RawIndex {
    fn parse(bytes: &[u8], path: &Path) -> Result<RawIndex> {
        let corrupt = |e: serde_json::Error| Error::Corrupt(format!("{}: {e}", path.display()));
        let file: RawFile = serde_json::from_slice(bytes).map_err(corrupt)?;
        if file.version > INDEX_VERSION {
            return Err(Error::Unsupported(format!(
                "{} is index version {}; this sessionkit reads up to {INDEX_VERSION}",
                path.display(),
                file.version
            )));
        }
        let mut entries = Vec::with_capacity(file.sessions.len());
        for raw in file.sessions {
            let lite: Lite<'_> = serde_json::from_str(raw.get()).map_err(corrupt)?;
            entries.push(RawEntry {
                id: lite.id.into_owned(),
                updated_ms: super::sort_ms(&lite.updated_at),
                log_bytes: lite.log_bytes,
                raw,
            });
        }
        Ok(RawIndex {
            journal: file.journal,
            entries,
            journaled: HashMap::new(),
        })
    }

    fn generation(&self) -> Option<u64> {
        self.journal
    }

    fn apply_journal(&mut self, bytes: &[u8], report: &mut JournalReport) -> u64 {
        each_line(bytes, 0, 0, report, |line| match line {
            JournalLine::Entry(e) => {
                self.journaled.insert(e.id.clone(), Some(*e));
            }
            JournalLine::Remove(id) => {
                self.journaled.insert(id, None);
            }
        })
    }
}
