//! The values every interface takes from the core rather than typing them
//! again: the enums' accepted names and the defaults of optional arguments.
//! [`defaults_json`] is the table the C ABI, Python and Node hand their users
//! (and check themselves against), so an interface that defaults a parameter
//! defaults it to the same value.

use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use crate::error::ErrorKind;
use crate::history::RewindMode;
use crate::index::Status;
use crate::memory::MemoryScope;
use crate::ops::compaction::{DEFAULT_KEEP_LAST_TURNS, DEFAULT_SUMMARY_TOKENS};
use crate::ops::export::native::ExportTarget;
use crate::ops::export::ExportFormat;
use crate::ops::import::ImportFormat;
use crate::ops::search::DEFAULT_SEARCH_LIMIT;
use crate::options::{Durability, StoreOptions, DEFAULT_LEASE_TTL};
use crate::settings::SettingSource;

/// The project a store opens when none is named: the current directory.
pub const DEFAULT_PROJECT: &str = ".";

/// How often a background push sends what the log gained.
pub const DEFAULT_PUSH_INTERVAL: Duration = Duration::from_millis(200);

/// How many turns an undo goes back when not told.
pub const DEFAULT_REWIND_TURNS: usize = 1;

/// What an undo of turns rewinds when not told: the conversation only, so
/// that undoing a turn never touches the files unasked.
pub const DEFAULT_REWIND_TURNS_MODE: RewindMode = RewindMode::Conversation;

/// The names of `values` as they are written in JSON.
fn names<T: Serialize>(values: &[T]) -> Vec<Value> {
    values
        .iter()
        .map(|v| serde_json::to_value(v).expect("an enum serialises as its name"))
        .collect()
}

fn name<T: Serialize>(value: T) -> Value {
    names(&[value]).remove(0)
}

/// The table as JSON: `{"enums": {name: [values]}, "defaults": {name:
/// value}}`. Stable keys; new entries may be added.
pub fn defaults_json() -> String {
    defaults().to_string()
}

/// [`defaults_json`] as a value.
pub fn defaults() -> Value {
    let mut store = serde_json::to_value(StoreOptions::default()).expect("options serialise");
    if let Some(o) = store.as_object_mut() {
        // Where the store lives depends on the environment, not a constant.
        o.remove("home");
    }
    json!({
        "enums": {
            "durability": names(&Durability::ALL),
            "status": Status::ALL,
            "rewindMode": names(&RewindMode::ALL),
            "exportFormat": names(&ExportFormat::ALL),
            "importFormat": ImportFormat::ALL.map(ImportFormat::name),
            "exportTarget": ExportTarget::ALL.map(ExportTarget::name),
            "memoryScope": names(&MemoryScope::ALL),
            "settingSource": SettingSource::ALL.map(SettingSource::name),
            "writableSettingSource": SettingSource::WRITABLE.map(SettingSource::name),
            "errorKind": ErrorKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
        },
        "defaults": {
            "project": DEFAULT_PROJECT,
            "storeOptions": store,
            "memoryScope": name(MemoryScope::default()),
            "exportFormat": name(ExportFormat::default()),
            "rewindMode": name(RewindMode::default()),
            "rewindTurns": DEFAULT_REWIND_TURNS,
            "rewindTurnsMode": name(DEFAULT_REWIND_TURNS_MODE),
            "keepLastTurns": DEFAULT_KEEP_LAST_TURNS,
            "summaryTokens": DEFAULT_SUMMARY_TOKENS,
            "pushIntervalMs": DEFAULT_PUSH_INTERVAL.as_millis() as u64,
            "searchLimit": DEFAULT_SEARCH_LIMIT,
            "leaseTtlMs": DEFAULT_LEASE_TTL.as_millis() as u64,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in the table is one the core's own parsers accept, and each
    /// default is one of its enum's values.
    #[test]
    fn every_name_parses_and_defaults_are_members() {
        let t = defaults();
        let e = &t["enums"];
        let each = |k: &str| -> Vec<String> {
            e[k].as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        for n in each("rewindMode") {
            n.parse::<RewindMode>().unwrap();
        }
        for n in each("exportFormat") {
            n.parse::<ExportFormat>().unwrap();
        }
        for n in each("importFormat") {
            n.parse::<ImportFormat>().unwrap();
        }
        for n in each("exportTarget") {
            n.parse::<ExportTarget>().unwrap();
        }
        for n in each("memoryScope") {
            MemoryScope::parse(&n).unwrap();
        }
        for n in each("settingSource") {
            SettingSource::parse(&n).unwrap();
        }
        for n in each("durability") {
            StoreOptions::from_json(&format!(r#"{{"durability":"{n}"}}"#)).unwrap();
        }
        assert_eq!(each("status").len(), 7);
        assert_eq!(each("errorKind").len(), ErrorKind::ALL.len());
        let d = &t["defaults"];
        for (enum_, default) in [
            ("memoryScope", "memoryScope"),
            ("exportFormat", "exportFormat"),
            ("rewindMode", "rewindMode"),
            ("rewindMode", "rewindTurnsMode"),
        ] {
            assert!(
                e[enum_].as_array().unwrap().contains(&d[default]),
                "{default}"
            );
        }
        assert_eq!(d["storeOptions"]["durability"], "onSync");
        assert!(d["storeOptions"].get("home").is_none());
        assert_eq!(d["keepLastTurns"], 2);
    }
}
