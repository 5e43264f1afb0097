//! The change feed (FORMAT.md §10.8): `.sessions-feed` in the store
//! directory, to which a writer appends the name of a log as it opens the log
//! for writing, before its first write to it. A search then stats the logs
//! the feed names since it last looked, not every log of the store. The feed
//! is a hint, never truth: a line that is missing (an older writer, a crash)
//! is made up for by the search's full check, which runs at least every
//! minute.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::format::ids::validate_path_id;
use crate::platform::Private;

/// The feed's name in the store directory.
pub(crate) const FEED_FILE: &str = ".sessions-feed";

/// A writer that finds the feed longer than this (bytes) empties it before
/// it writes its line (FORMAT.md §10.8): about 28,000 lines, so a server that
/// opens a shared handle per request does not grow it without bound.
pub(crate) const FEED_BOUND: u64 = 1 << 20;

/// The feed of the store in `dir`.
pub(crate) fn feed_path(dir: &Path) -> PathBuf {
    dir.join(FEED_FILE)
}

/// The feed line naming the log of `session` (or of its subagent `agent`).
pub(crate) fn line(session: &str, agent: Option<&str>) -> String {
    match agent {
        Some(a) => format!("{session}/{a}\n"),
        None => format!("{session}\n"),
    }
}

/// Append `line` ([`line`]) to the feed of the store in `dir`: one `write(2)`
/// on an `O_APPEND` file, which is created 0600 when missing, and no fsync. A
/// feed longer than [`FEED_BOUND`] is first truncated to nothing, in place: a
/// search that had read further takes the shorter feed as a reason for a full
/// check. A failure is ignored: the line only makes a search see an append
/// sooner, and a search that misses it sees the append at its next full check.
pub(crate) fn append(dir: &Path, line: &str) {
    let _ = OpenOptions::new()
        .append(true)
        .create(true)
        .private()
        .open(feed_path(dir))
        .and_then(|mut f| {
            if f.metadata()?.len() > FEED_BOUND {
                f.set_len(0)?;
            }
            f.write_all(line.as_bytes())
        });
}

/// The logs the whole lines of `bytes` name, as (session, agent; empty for
/// the session's own log), and the length of those lines: a last line
/// without its newline (a write under way) is left for the next read. A line
/// that does not name a log (not two valid ids at most) is skipped.
pub(crate) fn parse(bytes: &[u8]) -> (Vec<(String, String)>, usize) {
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut logs = Vec::new();
    for line in bytes[..end].split(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let (session, agent) = line.split_once('/').unwrap_or((line, ""));
        if validate_path_id("session id", session).is_err()
            || (!agent.is_empty() && validate_path_id("agent id", agent).is_err())
        {
            continue;
        }
        logs.push((session.to_string(), agent.to_string()));
    }
    (logs, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn lines_are_appended_and_read_back_whole_lines_only() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), &line("s1", None));
        append(dir.path(), &line("s1", Some("a1")));
        let path = feed_path(dir.path());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mut bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, b"s1\ns1/a1\n");
        bytes.extend_from_slice(b"../x\n\xff\na/b/c\ns2");
        let (logs, end) = parse(&bytes);
        assert_eq!(logs, [("s1".into(), "".into()), ("s1".into(), "a1".into())]);
        assert_eq!(end, bytes.len() - 2, "the torn line is left");
    }

    #[test]
    fn a_feed_over_its_bound_is_emptied_before_the_next_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = feed_path(dir.path());
        let one = b"00000000-0000-7000-8000-000000000000\n";
        let at_bound: Vec<u8> = one
            .iter()
            .copied()
            .cycle()
            .take(FEED_BOUND as usize)
            .collect();
        std::fs::write(&path, &at_bound).unwrap();
        let ino = std::fs::metadata(&path).unwrap().ino();
        // At the bound: appended to.
        append(dir.path(), &line("s1", None));
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            FEED_BOUND + 3,
            "a feed at its bound is kept"
        );
        // Over it: emptied in place, then the line written.
        append(dir.path(), &line("s2", Some("a2")));
        assert_eq!(std::fs::read(&path).unwrap(), b"s2/a2\n");
        assert_eq!(
            std::fs::metadata(&path).unwrap().ino(),
            ino,
            "the same file"
        );
        append(dir.path(), &line("s3", None));
        assert_eq!(std::fs::read(&path).unwrap(), b"s2/a2\ns3\n");
    }
}
