//! How a query finds which logs changed since the cache last looked
//! (FORMAT.md §23.4): a full check (a listing of the store and a `stat` of
//! every log) when the store directory changed, the change feed (§10.8) was
//! replaced, or the last full check is older than [`FULL_CHECK_EVERY_MS`];
//! otherwise a `stat` of only the logs the feed has named.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::log::feed;

use super::cache::{self, nanos, FeedState};

/// A query makes a full check when the last one is older than this (in
/// milliseconds): the bound within which an append by a writer that wrote no
/// line to the change feed (an older library, another implementation, a
/// crash between its open and its line) is found.
pub const SEARCH_FULL_CHECK_MS: i64 = 60_000;

/// A log named by the feed stays watched until a full check finds it
/// unchanged for this long (milliseconds), or gone.
pub(crate) const WATCH_FOR_MS: i64 = 3_600_000;

/// A directory modification time this close (nanoseconds) to the time a
/// full check started may be shared by a change made just after it (file
/// times move by the kernel's clock tick, up to 10 ms): the next query makes
/// a full check again, as git does with a racily clean file.
const RACY_NS: i64 = 100_000_000;

/// What a query saw of the store directory and its feed before it looked at
/// any log: a change after this is seen by the next query.
pub(crate) struct Look {
    /// Wall-clock time at the start, in milliseconds since the epoch.
    pub now_ms: i64,
    pub dir_mtime_ns: i64,
    /// The feed as opened, with its device, inode and length; `None` when
    /// there is none yet.
    pub feed: Option<(File, i64, i64, i64)>,
}

impl Look {
    /// Read the clock, then stat the store directory `dir`, then open and
    /// stat its feed: in this order, so a change made after any of them is
    /// later than what is recorded.
    pub(crate) fn take(dir: &Path) -> Result<Look> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let m = std::fs::metadata(dir).at(dir)?;
        let dir_mtime_ns = nanos((m.mtime(), m.mtime_nsec()));
        let path = feed::feed_path(dir);
        let feed = match File::open(&path) {
            Ok(f) => {
                let m = f.metadata().at(&path)?;
                Some((f, m.dev() as i64, m.ino() as i64, m.len() as i64))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(&path, e)),
        };
        Ok(Look {
            now_ms,
            dir_mtime_ns,
            feed,
        })
    }

    /// The feed's device, inode and length as seen (zeros when there is none).
    pub(crate) fn feed_id(&self) -> (i64, i64, i64) {
        self.feed
            .as_ref()
            .map_or((0, 0, 0), |(_, dev, ino, len)| (*dev, *ino, *len))
    }

    /// Whether a cache file last checked as `state` says must make a full
    /// check now.
    pub(crate) fn needs_full(&self, state: Option<&FeedState>) -> bool {
        let Some(s) = state else {
            return true;
        };
        let (dev, ino, len) = self.feed_id();
        (s.feed_dev, s.feed_ino) != (dev, ino)
            || len < s.feed_offset
            || s.dir_mtime_ns != self.dir_mtime_ns
            || s.dir_mtime_ns.saturating_add(RACY_NS) > s.full_at_ms.saturating_mul(1_000_000)
            || self.now_ms.saturating_sub(s.full_at_ms) >= SEARCH_FULL_CHECK_MS
            // A clock set back: the age of the last check is unknown.
            || self.now_ms < s.full_at_ms
    }

    /// The logs of shard `shard` that the whole lines of the feed from
    /// `from` name, and the offset past those lines. `from` beyond the feed
    /// (a feed replaced by a shorter one) reads it from its start.
    pub(crate) fn names_since(
        &self,
        dir: &Path,
        from: i64,
        shard: usize,
    ) -> Result<(Vec<(String, String)>, i64)> {
        let Some((file, _, _, len)) = &self.feed else {
            return Ok((Vec::new(), 0));
        };
        let from = if (0..=*len).contains(&from) { from } else { 0 };
        let mut bytes = vec![0; (len - from) as usize];
        let path = feed::feed_path(dir);
        // What was there when it was looked at: an append since is for later.
        let mut got = 0;
        while got < bytes.len() {
            match file.read_at(&mut bytes[got..], (from as u64) + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        bytes.truncate(got);
        let (mut names, end) = feed::parse(&bytes);
        names.retain(|(s, _)| cache::shard_of(s) == shard);
        names.sort();
        names.dedup();
        Ok((names, from + end as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(now_ms: i64, dir_mtime_ns: i64) -> Look {
        Look {
            now_ms,
            dir_mtime_ns,
            feed: None,
        }
    }

    fn state(full_at_ms: i64, dir_mtime_ns: i64) -> FeedState {
        FeedState {
            dir_mtime_ns,
            feed_dev: 0,
            feed_ino: 0,
            feed_offset: 0,
            full_at_ms,
        }
    }

    #[test]
    fn a_full_check_runs_when_the_directory_changed_the_feed_was_replaced_or_time_passed() {
        let t = 1_000_000;
        let old_dir = (t - 5_000) * 1_000_000;
        let l = look(t + 10, old_dir);
        assert!(l.needs_full(None));
        assert!(!l.needs_full(Some(&state(t, old_dir))));
        assert!(l.needs_full(Some(&state(t, old_dir + 1))), "the directory");
        let replaced = FeedState {
            feed_ino: 9,
            ..state(t, old_dir)
        };
        assert!(l.needs_full(Some(&replaced)), "the feed replaced");
        let shorter = FeedState {
            feed_offset: 1,
            ..state(t, old_dir)
        };
        assert!(l.needs_full(Some(&shorter)), "the feed shorter");
        let later = look(t + SEARCH_FULL_CHECK_MS, old_dir);
        assert!(later.needs_full(Some(&state(t, old_dir))), "the bound");
        let earlier = look(t - 1, old_dir);
        assert!(
            earlier.needs_full(Some(&state(t, old_dir))),
            "the clock back"
        );
        // A directory changed in the tick the check started in.
        let racy = t * 1_000_000 - RACY_NS / 2;
        assert!(look(t + 10, racy).needs_full(Some(&state(t, racy))));
    }
}
