//! The settings files' schema versions and the ordered migrations between them
//! (docs/SETTINGS.md, "Versions and migrations"). Each migration is idempotent:
//! applied to a document already in its target shape it changes nothing.

use serde_json::{Map, Value};

/// The key holding a settings file's schema version. A file without it is
/// version 1, the original shape, which had no version.
pub const VERSION_KEY: &str = "schemaVersion";

/// The shape this build reads and writes.
pub const CURRENT_VERSION: u64 = 3;

/// One step from version `from` to `from + 1`.
struct Migration {
    from: u64,
    what: &'static str,
    apply: fn(&mut Map<String, Value>),
}

/// Every migration, in order; `MIGRATIONS[i].from == i + 1`.
const MIGRATIONS: &[Migration] = &[
    Migration {
        from: 1,
        what: "v1 to v2: `instructionFiles` renamed `instructionNames` (it holds file names)",
        apply: rename_instruction_files,
    },
    Migration {
        from: 2,
        what: "v2 to v3: `instructionNames` and `maxIncludeDepth` moved into the object \
               `instructions` as `names` and `maxIncludeDepth`",
        apply: nest_instruction_keys,
    },
];

/// Bring `doc`, of schema version `from`, to [`CURRENT_VERSION`]; returns what
/// each applied migration did. Sets the version key. A document of the current
/// version or newer is left as it is.
pub(crate) fn migrate(doc: &mut Map<String, Value>, from: u64) -> Vec<&'static str> {
    let mut done = Vec::new();
    for m in MIGRATIONS.iter().filter(|m| m.from >= from) {
        (m.apply)(doc);
        done.push(m.what);
    }
    if from < CURRENT_VERSION {
        doc.insert(VERSION_KEY.into(), Value::from(CURRENT_VERSION));
    }
    done
}

/// Move `doc[old]` to `obj[new]` unless `obj` already has `new` (then the old key
/// is only dropped: a value in the newer place was written later).
fn move_key(doc: &mut Map<String, Value>, old: &str, into: Option<&str>, new: &str) {
    let Some(v) = doc.shift_remove(old) else {
        return;
    };
    let target = match into {
        None => doc,
        Some(obj) => {
            let slot = doc
                .entry(obj.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                // A non-object here meant nothing before this version.
                *slot = Value::Object(Map::new());
            }
            match slot.as_object_mut() {
                Some(m) => m,
                None => return,
            }
        }
    };
    target.entry(new.to_string()).or_insert(v);
}

fn rename_instruction_files(doc: &mut Map<String, Value>) {
    move_key(doc, "instructionFiles", None, "instructionNames");
}

fn nest_instruction_keys(doc: &mut Map<String, Value>) {
    move_key(doc, "instructionNames", Some("instructions"), "names");
    move_key(
        doc,
        "maxIncludeDepth",
        Some("instructions"),
        "maxIncludeDepth",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.from, i as u64 + 1);
        }
        assert_eq!(MIGRATIONS.len() as u64 + 1, CURRENT_VERSION);
    }

    fn fixture(text: &str) -> Map<String, Value> {
        match serde_json::from_str(text) {
            Ok(Value::Object(m)) => m,
            other => panic!("a settings fixture is not an object: {other:?}"),
        }
    }

    /// Each migration, on the fixture of every past shape it meets on the way
    /// to the current one, changes nothing when applied a second time.
    #[test]
    fn each_migration_applied_twice_changes_nothing_more() {
        let fixtures = [
            (1, include_str!("../../../tests/fixtures/settings/v1.json")),
            (2, include_str!("../../../tests/fixtures/settings/v2.json")),
        ];
        let current = fixture(include_str!("../../../tests/fixtures/settings/v3.json"));
        for (version, text) in fixtures {
            let mut doc = fixture(text);
            for m in MIGRATIONS.iter().filter(|m| m.from >= version) {
                (m.apply)(&mut doc);
                let once = doc.clone();
                (m.apply)(&mut doc);
                assert_eq!(doc, once, "v{version}: {} applied twice", m.what);
            }
            doc.insert(VERSION_KEY.into(), Value::from(CURRENT_VERSION));
            assert_eq!(doc, current, "v{version} migrated");
        }
    }
}
