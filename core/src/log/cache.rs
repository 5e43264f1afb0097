//! The structure cache of a session log (FORMAT.md §5.1): for each line of a
//! prefix of the log, where its message's id and parent sit and what the index
//! folds from it, so that a resume or fork of the prefix parses no JSON.
//!
//! The cache is trusted only as far as an XXH3-128 hash of the bytes it covers,
//! checked on every use against the log itself; any difference, a cache from
//! another version or a damaged file, and the log is read the ordinary way. It
//! is written after a read that had to parse enough of the log to be worth
//! saving, by whoever read it, with an atomic replace: it holds nothing the log
//! does not, so losing it costs one slower read.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::log::EntryFacts;
use twox_hash::{XxHash3_128, XxHash3_64};

/// Its first bytes; the last digit is the layout's version.
const MAGIC: &[u8; 8] = b"SKLOGST2";

/// A read that parsed at least this much of its log writes a new cache.
pub(crate) const WRITE_AFTER_BYTES: u64 = 128 << 10;

/// A byte range `[start, end)` within a line.
pub(crate) type Span = (u32, u32);

/// The structure of the first `covered` bytes of a log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Structure {
    /// The length of the prefix described: it ends just after a `\n`.
    pub covered: u64,
    /// XXH3-128 of the log's bytes `[0, covered)`.
    pub hash: u128,
    /// Every line of the prefix the reader folds (not blank, NUL runs removed), in order.
    pub lines: Vec<LineShape>,
}

/// One line of the prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LineShape {
    /// File offset of the line's first byte after any NUL run.
    pub offset: u64,
    pub len: u32,
    /// `None`: not a message, or one whose id or parent is not in the line as
    /// is (escaped); such a line is parsed as usual.
    pub message: Option<MessageShape>,
}

/// Where a message line's fields sit in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MessageShape {
    pub id: Span,
    pub parent: ParentShape,
    pub has_blob: bool,
    /// Where its `role`, `timestamp` and `meta` sit (encoded as those four
    /// fields in order, FORMAT.md §5.1).
    pub facts: EntryFacts,
}

/// A message's `parentId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ParentShape {
    /// No `parentId` field (a seed-style line: the parent is the head before it).
    Absent,
    /// `null`: a root.
    Root,
    At(Span),
}

/// A streaming XXH3-128 of a log's bytes from offset 0 that remembers the hash
/// of its first `mark` bytes.
pub(crate) struct PrefixHash {
    hasher: XxHash3_128,
    seen: u64,
    mark: u64,
    at_mark: Option<u128>,
}

impl PrefixHash {
    pub fn new(mark: u64) -> PrefixHash {
        PrefixHash {
            hasher: XxHash3_128::new(),
            seen: 0,
            mark,
            at_mark: (mark == 0).then(|| XxHash3_128::oneshot(&[])),
        }
    }

    /// The next bytes of the log.
    pub fn update(&mut self, bytes: &[u8]) {
        let end = self.seen + bytes.len() as u64;
        if self.at_mark.is_none() && end >= self.mark {
            let head = (self.mark - self.seen) as usize;
            self.hasher.write(&bytes[..head]);
            self.at_mark = Some(self.hasher.finish_128());
            self.hasher.write(&bytes[head..]);
        } else {
            self.hasher.write(bytes);
        }
        self.seen = end;
    }

    /// The hash of the first `mark` bytes, once that many were seen.
    pub fn at_mark(&self) -> Option<u128> {
        self.at_mark
    }

    /// The hash of everything seen, and its length.
    pub fn all(&self) -> (u64, u128) {
        (self.seen, self.hasher.finish_128())
    }
}

/// The cache at `path` when it is whole, of this layout, and covers no more
/// than `log_len` bytes; `None` otherwise (including when there is none).
pub(crate) fn read(path: &Path, log_len: u64) -> Option<Structure> {
    let bytes = std::fs::read(path).ok()?;
    let body = bytes.len().checked_sub(8)?;
    let (body, sum) = bytes.split_at(body);
    if !body.starts_with(MAGIC) || XxHash3_64::oneshot(body).to_le_bytes() != sum {
        return None;
    }
    let s: Structure = postcard::from_bytes(&body[MAGIC.len()..]).ok()?;
    (s.covered <= log_len).then_some(s)
}

/// Replace the cache at `path` (creating the sidecar directory), without fsync:
/// a cache lost or torn by a crash is detected and ignored.
pub(crate) fn write(path: &Path, s: &Structure) -> crate::error::Result<()> {
    let mut bytes = MAGIC.to_vec();
    bytes = postcard::to_extend(s, bytes)
        .map_err(|e| crate::error::Error::invalid(format!("structure cache: {e}")))?;
    let sum = XxHash3_64::oneshot(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    if let Some(dir) = path.parent() {
        crate::fsutil::create_private_dir(dir)?;
    }
    crate::fsutil::atomic_write(path, &bytes, false, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sample()` encoded: `covered` 120; the hash as a 17-byte varint; 2 lines;
    /// offset 0, length 40, no message; offset 41, length 78, a message (1): id
    /// 7..13, parent variant 2 (`At`) 27..33, no blob (0), role present (1) 43..47,
    /// no timestamp (0), meta present (1) 60..70, exact (1).
    const PINNED: &[u8] = &[
        120, 247, 204, 213, 162, 180, 198, 200, 136, 128, 222, 183, 222, 154, 241, 217, 162, 163,
        2, 2, 0, 40, 0, 41, 78, 1, 7, 13, 2, 27, 33, 0, 1, 43, 47, 0, 1, 60, 70, 1,
    ];

    fn sample() -> Structure {
        Structure {
            covered: 120,
            hash: 0x0123_4567_89ab_cdef_0011_2233_4455_6677,
            lines: vec![
                LineShape {
                    offset: 0,
                    len: 40,
                    message: None,
                },
                LineShape {
                    offset: 41,
                    len: 78,
                    message: Some(MessageShape {
                        id: (7, 13),
                        parent: ParentShape::At((27, 33)),
                        has_blob: false,
                        facts: EntryFacts {
                            role: Some((43, 47)),
                            timestamp: None,
                            meta: Some((60, 70)),
                            exact: true,
                        },
                    }),
                },
            ],
        }
    }

    /// The body's bytes as FORMAT.md §5.1 lays them out, pinned.
    #[test]
    fn the_body_is_encoded_as_the_format_says() {
        assert_eq!(postcard::to_stdvec(&sample()).unwrap(), PINNED);
    }

    #[test]
    fn a_written_cache_reads_back_and_a_damaged_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir
            .path()
            .join("s")
            .join(crate::format::layout::STRUCTURE_CACHE_FILE);
        write(&path, &sample()).unwrap();
        assert_eq!(read(&path, 120), Some(sample()));
        // It claims more bytes than the log has: the log was cut or replaced.
        assert_eq!(read(&path, 119), None);

        let good = std::fs::read(&path).unwrap();
        for i in [0, 9, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(read(&path, 120), None, "byte {i} flipped");
        }
        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        assert_eq!(read(&path, 120), None, "cut short");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(read(&path, 120), None, "empty");
    }

    #[test]
    fn the_prefix_hash_is_the_hash_of_the_prefix_however_the_bytes_arrive() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        for mark in [0u64, 1, 999, 4096, 10_000] {
            for piece in [1usize, 7, 1000, 10_000] {
                let mut h = PrefixHash::new(mark);
                data.chunks(piece).for_each(|c| h.update(c));
                let want = XxHash3_128::oneshot(&data[..mark as usize]);
                assert_eq!(h.at_mark(), Some(want), "mark {mark}, pieces of {piece}");
                assert_eq!(h.all(), (10_000, XxHash3_128::oneshot(&data)));
            }
        }
        // The published XXH3 values for empty input (FORMAT.md §5.1 names the
        // standard functions, so other implementations can check the cache).
        assert_eq!(
            XxHash3_128::oneshot(b""),
            0x99aa_06d3_0147_98d8_6001_c324_468d_497f
        );
        assert_eq!(XxHash3_64::oneshot(b""), 0x2d06_8005_38d3_94c2);
        let mut h = PrefixHash::new(20_000);
        h.update(&data);
        assert_eq!(h.at_mark(), None);
    }
}
