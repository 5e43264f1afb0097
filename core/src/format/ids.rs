//! Ids, validation of anything that reaches a path, and the clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Longest id accepted anywhere (session, agent, message).
pub const MAX_ID_LEN: usize = 128;

/// Check an id that will become part of a file name (session ids, agent ids).
///
/// Allowed: 1 to 128 characters from `[A-Za-z0-9._-]`, not starting with `.`.
/// This rules out `..`, separators, NUL and hidden files by construction.
pub fn validate_path_id(what: &str, id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{what} {id:?} is not a valid id (1-{MAX_ID_LEN} characters of A-Z a-z 0-9 . _ -, not starting with '.')"
        )))
    }
}

/// Check a message id: any 1 to 128 characters without control characters.
pub fn validate_message_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_ID_LEN || id.chars().any(char::is_control) {
        return Err(Error::invalid(format!(
            "message id {id:?} is not valid (1-{MAX_ID_LEN} characters, no control characters)"
        )));
    }
    Ok(())
}

/// Reproducible clock and ids for tests and fixtures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Deterministic {
    /// First timestamp handed out, in milliseconds since the Unix epoch.
    pub start_ms: u64,
    /// How far the clock moves on each reading.
    #[serde(default = "default_step")]
    pub step_ms: u64,
    /// Seed for the random part of generated ids.
    #[serde(default)]
    pub seed: u64,
    /// Clock readings already handed out: a process that continues another's
    /// deterministic run starts here (`Store::deterministic_state`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ticks: u64,
    /// Ids already handed out, likewise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ids: u64,
}

impl Deterministic {
    /// A run from its start: clock at `start_ms`, moving `step_ms` per reading,
    /// ids from `seed`.
    pub fn new(start_ms: u64, step_ms: u64, seed: u64) -> Deterministic {
        Deterministic {
            start_ms,
            step_ms,
            seed,
            ticks: 0,
            ids: 0,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn default_step() -> u64 {
    1
}

/// Where time and fresh ids come from. The deterministic source makes tests and
/// fixtures reproducible byte for byte.
#[derive(Debug)]
pub enum IdSource {
    System,
    Deterministic {
        start_ms: u64,
        step_ms: u64,
        tick: AtomicU64,
        seed: u64,
        counter: AtomicU64,
    },
}

impl IdSource {
    pub fn deterministic(d: &Deterministic) -> IdSource {
        IdSource::Deterministic {
            start_ms: d.start_ms,
            step_ms: d.step_ms,
            tick: AtomicU64::new(d.ticks),
            seed: d.seed,
            counter: AtomicU64::new(d.ids),
        }
    }

    /// Where a deterministic run stands: its options with the readings and ids
    /// handed out so far, so that another process can continue it.
    pub fn deterministic_state(&self) -> Option<Deterministic> {
        match self {
            IdSource::System => None,
            IdSource::Deterministic {
                start_ms,
                step_ms,
                tick,
                seed,
                counter,
            } => Some(Deterministic {
                start_ms: *start_ms,
                step_ms: *step_ms,
                seed: *seed,
                ticks: tick.load(Ordering::Relaxed),
                ids: counter.load(Ordering::Relaxed),
            }),
        }
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        match self {
            IdSource::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            IdSource::Deterministic {
                start_ms,
                step_ms,
                tick,
                ..
            } => {
                // Saturating: a clock set near the end of time stops there
                // instead of overflowing (the start is checked at the door).
                let n = tick.fetch_add(1, Ordering::Relaxed);
                start_ms
                    .saturating_add(step_ms.saturating_mul(n))
                    .min(MAX_MS)
            }
        }
    }

    /// An RFC 3339 UTC timestamp with milliseconds, e.g. `2026-11-29T22:13:26.123Z`.
    pub fn timestamp(&self) -> String {
        format_ms(self.now_ms())
    }

    /// A fresh UUIDv7 (time-ordered) as a lowercase hyphenated string.
    pub fn new_id(&self) -> String {
        match self {
            IdSource::System => hyphenated(uuid::Uuid::now_v7()),
            IdSource::Deterministic { seed, counter, .. } => {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let ms = self.now_ms();
                let mut bytes = [0u8; 10];
                bytes[..8].copy_from_slice(&splitmix(seed ^ n).to_le_bytes());
                bytes[8..].copy_from_slice(&(n as u16).to_le_bytes());
                hyphenated(uuid::Builder::from_unix_timestamp_millis(ms, &bytes).into_uuid())
            }
        }
    }
}

/// The lowercase hyphenated form of `u` (its `Display`, without the formatter).
fn hyphenated(u: uuid::Uuid) -> String {
    u.hyphenated()
        .encode_lower(&mut uuid::Uuid::encode_buffer())
        .to_owned()
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The last millisecond an RFC 3339 timestamp can name (9999-12-31T23:59:59.999Z).
pub const MAX_MS: u64 = 253_402_300_799_999;

/// A fresh session id: a UUIDv7 (time-ordered), lowercase and hyphenated, as
/// a store without a fixed clock makes one. Touches no file, so a host may
/// name a session before it opens the store.
pub fn new_session_id() -> String {
    hyphenated(uuid::Uuid::now_v7())
}

/// Format milliseconds since the epoch as RFC 3339 UTC with milliseconds.
pub fn format_ms(ms: u64) -> String {
    use std::fmt::Write;
    let t = UNIX_EPOCH + Duration::from_millis(ms);
    // Sized at once: `to_string` grows its string as the formatter writes.
    let mut s = String::with_capacity("2026-11-29T22:13:26.123Z".len());
    let _ = write!(s, "{}", humantime::format_rfc3339_millis(t));
    s
}

/// Parse an RFC 3339 timestamp back to milliseconds since the epoch.
pub fn parse_ms(s: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(s).ok()?;
    t.duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_ids_reject_traversal_and_separators() {
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "a\\b",
            ".hidden",
            "a\0b",
            "ä",
            &"x".repeat(129),
        ] {
            assert!(validate_path_id("session id", bad).is_err(), "{bad:?}");
        }
        for good in ["0192f0c1-7b2a-7def-8000-000000000000", "agent_1", "a.b-c"] {
            validate_path_id("session id", good).unwrap();
        }
    }

    #[test]
    fn deterministic_source_repeats() {
        let a = IdSource::deterministic(&Deterministic::new(1_700_000_000_000, 1000, 7));
        let b = IdSource::deterministic(&Deterministic::new(1_700_000_000_000, 1000, 7));
        assert_eq!(a.new_id(), b.new_id());
        assert_eq!(a.timestamp(), b.timestamp());
        let id = a.new_id();
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 7);
    }

    #[test]
    fn ids_are_uuid_display_form() {
        let ids = IdSource::deterministic(&Deterministic::new(1_764_454_406_123, 7, 9));
        for id in [ids.new_id(), ids.new_id(), IdSource::System.new_id()] {
            let u = uuid::Uuid::parse_str(&id).unwrap();
            assert_eq!(id, u.to_string());
        }
    }

    #[test]
    fn timestamps_round_trip() {
        let ms = 1_764_454_406_123;
        let s = format_ms(ms);
        assert_eq!(s, "2025-11-29T22:13:26.123Z");
        assert_eq!(parse_ms(&s), Some(ms));
    }

    #[test]
    fn a_continued_run_hands_out_what_the_first_would_have() {
        let whole = IdSource::deterministic(&Deterministic::new(1_764_454_406_123, 1000, 3));
        let first = IdSource::deterministic(&Deterministic::new(1_764_454_406_123, 1000, 3));
        let expected: Vec<String> = (0..4).map(|_| whole.new_id()).collect();
        let mut got = vec![first.new_id(), first.new_id()];
        let rest = IdSource::deterministic(&first.deterministic_state().unwrap());
        got.extend([rest.new_id(), rest.new_id()]);
        assert_eq!(got, expected);
        assert_eq!(rest.timestamp(), whole.timestamp());
        assert_eq!(IdSource::System.deterministic_state(), None);
    }

    #[test]
    fn ids_are_as_the_format_spells_them() {
        // docs/FORMAT.md §21.5: a foreign writer computes the same.
        let ids = IdSource::deterministic(&Deterministic::new(1_767_225_600_000, 1000, 11));
        assert_eq!(ids.new_id(), "019b76da-a800-7d30-8023-7d64f5500000");
        assert_eq!(ids.new_id(), "019b76da-abe8-7a2f-988a-be1287080100");
    }

    #[test]
    fn a_clock_at_the_end_of_time_stops_there() {
        let ids = IdSource::deterministic(&Deterministic::new(MAX_MS - 1, u64::MAX, u64::MAX));
        assert_eq!(ids.now_ms(), MAX_MS - 1);
        assert_eq!(ids.now_ms(), MAX_MS);
        assert_eq!(ids.timestamp(), "9999-12-31T23:59:59.999Z");
        uuid::Uuid::parse_str(&ids.new_id()).unwrap();
    }
}
