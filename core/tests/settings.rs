//! Layered settings: the merge rules (table-driven), the source selection,
//! malformed and oversized files, every migration on the fixtures of each past
//! schema version (applied twice), a newer version left read-only, hostile
//! files in a checkout (a FIFO, symbolic links out of the project), and two
//! processes writing one file at once, of the current shape or an older one.
//!
//! The two-process test re-executes this test binary with `SESSIONKIT_SETTINGS_CHILD`
//! set; the child test returns at once when it is not.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use sessionkit::{
    ErrorKind, SettingSource, Settings, SettingsOptions, SourceStatus, StoreOptions,
    SETTINGS_VERSION,
};

const CHILD_ENV: &str = "SESSIONKIT_SETTINGS_CHILD";

#[path = "support/env.rs"]
mod support_env;
use support_env::{child_store, env_with, mkfifo, spawn_child, within_seconds, Env};

fn env() -> Env {
    env_with(StoreOptions::default())
}

/// The settings file of each source, and reading them.
trait Files {
    fn path(&self, source: SettingSource) -> PathBuf;
    fn put(&self, source: SettingSource, bytes: &[u8]);
    fn load(&self) -> Settings;
}

impl Files for Env {
    fn path(&self, source: SettingSource) -> PathBuf {
        match source {
            SettingSource::User => self.home.path().join("settings.json"),
            SettingSource::Project => self.project.path().join(".sessionkit/settings.json"),
            SettingSource::Local => self.project.path().join(".sessionkit/settings.local.json"),
            SettingSource::Host => unreachable!("the host source has no file"),
        }
    }

    fn put(&self, source: SettingSource, bytes: &[u8]) {
        let p = self.path(source);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    fn load(&self) -> Settings {
        self.store.settings(&SettingsOptions::default())
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

struct Row {
    what: &'static str,
    user: Value,
    project: Value,
    local: Value,
    host: Value,
    values: Value,
    origins: &'static [(&'static str, SettingSource)],
}

#[test]
fn merge_rules() {
    use SettingSource::*;
    let rows = [
        Row {
            what: "a scalar comes from the nearest source that sets it",
            user: json!({"model": "small", "theme": "dark"}),
            project: json!({"model": "large"}),
            local: json!({}),
            host: json!({}),
            values: json!({"model": "large", "theme": "dark"}),
            origins: &[("model", Project), ("theme", User)],
        },
        Row {
            what: "objects merge by key, at every depth",
            user: json!({"o": {"x": 1, "in": {"a": 1, "b": 1}}}),
            project: json!({}),
            local: json!({"o": {"in": {"b": 2}}}),
            host: json!({}),
            values: json!({"o": {"x": 1, "in": {"a": 1, "b": 2}}}),
            origins: &[("o.in.a", User), ("o.in.b", Local), ("o.x", User)],
        },
        Row {
            what: "an array is replaced whole, never concatenated",
            user: json!({"allow": ["a", "b"]}),
            project: json!({"allow": ["c"]}),
            local: json!({}),
            host: json!({}),
            values: json!({"allow": ["c"]}),
            origins: &[("allow", Project)],
        },
        Row {
            what: "null removes a key set below",
            user: json!({"model": "small", "theme": "dark"}),
            project: json!({"model": null}),
            local: json!({}),
            host: json!({}),
            values: json!({"theme": "dark"}),
            origins: &[("theme", User)],
        },
        Row {
            what: "null removes a whole object, and a later source may set it again",
            user: json!({"o": {"x": 1}}),
            project: json!({"o": null}),
            local: json!({"o": {"y": 2}}),
            host: json!({}),
            values: json!({"o": {"y": 2}}),
            origins: &[("o.y", Local)],
        },
        Row {
            what: "an object replaces a scalar, a scalar replaces an object",
            user: json!({"a": 1, "b": {"x": 1}}),
            project: json!({"a": {"x": 1}, "b": true}),
            local: json!({}),
            host: json!({}),
            values: json!({"a": {"x": 1}, "b": true}),
            origins: &[("a.x", Project), ("b", Project)],
        },
        Row {
            what: "null inside an object new at that key is dropped",
            user: json!({}),
            project: json!({"o": {"x": null, "y": 1}}),
            local: json!({}),
            host: json!({}),
            values: json!({"o": {"y": 1}}),
            origins: &[("o.y", Project)],
        },
        Row {
            what: "an empty object over an object changes nothing; alone it is a leaf",
            user: json!({"o": {"x": 1}}),
            project: json!({"o": {}, "e": {}}),
            local: json!({}),
            host: json!({}),
            values: json!({"o": {"x": 1}, "e": {}}),
            origins: &[("e", Project), ("o.x", User)],
        },
        Row {
            what: "host overrides beat every file",
            user: json!({"m": 1}),
            project: json!({"m": 2}),
            local: json!({"m": 3}),
            host: json!({"m": 4}),
            values: json!({"m": 4}),
            origins: &[("m", Host)],
        },
    ];
    for row in rows {
        let e = env();
        e.put(User, row.user.to_string().as_bytes());
        e.put(Project, row.project.to_string().as_bytes());
        e.put(Local, row.local.to_string().as_bytes());
        let options = SettingsOptions {
            sources: None,
            overrides: Some(object(row.host)),
        };
        let s = e.store.settings(&options);
        assert_eq!(Value::Object(s.values.clone()), row.values, "{}", row.what);
        let origins: Vec<(String, SettingSource)> = row
            .origins
            .iter()
            .map(|(k, s)| (k.to_string(), *s))
            .collect();
        let got: Vec<(String, SettingSource)> = s.origins.clone().into_iter().collect();
        assert_eq!(got, origins, "{}", row.what);
        assert!(
            s.sources.iter().all(|r| r.status == SourceStatus::Loaded),
            "{}",
            row.what
        );
    }
}

#[test]
fn only_the_selected_sources_load_whatever_their_order() {
    let e = env();
    e.put(SettingSource::User, br#"{"a": "user", "u": 1}"#);
    e.put(SettingSource::Project, br#"{"a": "project"}"#);
    e.put(SettingSource::Local, br#"{"a": "local"}"#);
    let sources = SettingSource::parse_list("local,user").unwrap();
    let s = e.store.settings(&SettingsOptions {
        sources: Some(sources),
        overrides: Some(object(json!({"a": "host"}))),
    });
    assert_eq!(Value::Object(s.values), json!({"a": "local", "u": 1}));
    let status: Vec<SourceStatus> = s.sources.iter().map(|r| r.status).collect();
    use SourceStatus::*;
    assert_eq!(status, [Loaded, Skipped, Loaded, Skipped]);
    assert_eq!(
        SettingSource::parse_list("user,team").unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn get_and_list_report_the_source_of_each_value() {
    let e = env();
    e.store
        .set_setting(SettingSource::User, "permissions.allow", json!(["ls"]))
        .unwrap();
    e.store
        .set_setting(SettingSource::Local, "permissions.deny", json!(["rm"]))
        .unwrap();
    let s = e.load();
    let allow = s.get("permissions.allow").unwrap();
    assert_eq!(
        (allow.value, allow.origin),
        (json!(["ls"]), Some(SettingSource::User))
    );
    // Two sources set the object's members: no single origin.
    assert_eq!(s.get("permissions").unwrap().origin, None);
    assert!(s.get("permissions.ask").is_none());
    let keys: Vec<String> = s.list().into_iter().map(|v| v.key).collect();
    assert_eq!(keys, ["permissions.allow", "permissions.deny"]);
}

#[test]
fn set_and_unset_edit_one_file_and_keep_the_rest() {
    let e = env();
    e.put(
        SettingSource::Project,
        br#"{"schemaVersion": 3, "keep": [1, 2], "o": {"x": 1}}"#,
    );
    let w = e
        .store
        .set_setting(SettingSource::Project, "o.y.z", json!(true))
        .unwrap();
    assert!(!w.existed);
    assert_eq!(w.path, e.path(SettingSource::Project));
    let written: Value = serde_json::from_slice(&fs::read(&w.path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"schemaVersion": SETTINGS_VERSION, "keep": [1, 2], "o": {"x": 1, "y": {"z": true}}})
    );
    assert!(
        e.store
            .unset_setting(SettingSource::Project, "o.x")
            .unwrap()
            .existed
    );
    assert!(
        !e.store
            .unset_setting(SettingSource::Project, "o.x")
            .unwrap()
            .existed
    );
    assert!(e.load().get("o.x").is_none());

    // A value in the way, the host source and the version key are refused.
    let err = e
        .store
        .set_setting(SettingSource::Project, "keep.deeper", json!(1))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("\"keep\""), "{err}");
    for (source, key) in [
        (SettingSource::Host, "a"),
        (SettingSource::User, "schemaVersion"),
        (SettingSource::User, "a..b"),
        (SettingSource::User, ""),
    ] {
        let err = e.store.set_setting(source, key, json!(1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{source:?} {key:?}");
    }
}

#[test]
fn a_malformed_file_names_file_line_and_column_and_the_others_still_load() {
    let e = env();
    e.put(SettingSource::User, b"{\n  \"a\": 1,\n  \"b\": oops\n}\n");
    e.put(SettingSource::Project, br#"{"c": 3}"#);
    e.put(SettingSource::Local, b"[1, 2]");
    let s = e.load();
    assert_eq!(Value::Object(s.values), json!({"c": 3}));
    let user = &s.sources[0];
    assert_eq!(user.status, SourceStatus::Error);
    let msg = user.error.as_deref().unwrap();
    let path = e.path(SettingSource::User);
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("line 3, column 8"), "{msg}");
    let local = s.sources[2].error.as_deref().unwrap();
    assert!(local.contains("must be a JSON object"), "{local}");

    // A write refuses to replace what it cannot read.
    let before = fs::read(&path).unwrap();
    let err = e
        .store
        .set_setting(SettingSource::User, "a", json!(2))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt);
    assert!(err.to_string().contains("line 3, column 8"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn a_huge_file_is_refused_and_the_others_still_load() {
    let e = env();
    let mut huge = b"{\"a\": \"".to_vec();
    huge.resize(sessionkit::SETTINGS_MAX_BYTES as usize + 10, b'x');
    huge.extend_from_slice(b"\"}");
    e.put(SettingSource::Project, &huge);
    e.put(SettingSource::Local, br#"{"b": 1}"#);
    let s = e.load();
    assert_eq!(Value::Object(s.values), json!({"b": 1}));
    assert_eq!(s.sources[1].status, SourceStatus::Error);
    assert!(s.sources[1]
        .error
        .as_deref()
        .unwrap()
        .contains("larger than"));
}

/// Every file under `dir` with its bytes, for "nothing was written" checks.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_write_that_would_pass_the_size_limit_is_refused_and_writes_nothing() {
    let limit = sessionkit::SETTINGS_MAX_BYTES as usize;
    let e = env();
    let big = "x".repeat(2 * limit);
    let check = |e: &Env, source: SettingSource, key: &str, value: Value, what: &str| {
        let before_home = files_under(e.home.path());
        let before_project = files_under(e.project.path());
        let err = e.store.set_setting(source, key, value).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{what}: {err}");
        let msg = err.to_string();
        for needle in [&limit.to_string(), "nothing was written", "bytes"] {
            assert!(msg.contains(needle), "{what}: {msg:?} lacks {needle:?}");
        }
        assert!(
            msg.len() < 1000,
            "{what}: the message quotes the input whole"
        );
        assert_eq!(files_under(e.home.path()), before_home, "{what}");
        assert_eq!(files_under(e.project.path()), before_project, "{what}");
    };
    // No file yet: none is created.
    check(
        &e,
        SettingSource::User,
        "a",
        json!(big),
        "a huge value, no file",
    );
    assert!(!e.path(SettingSource::User).exists());
    check(
        &e,
        SettingSource::Local,
        &big,
        json!(1),
        "a huge key, no directory",
    );
    assert!(!e.project.path().join(".sessionkit").exists());
    // An existing file keeps its bytes, whether the value or the key is huge.
    e.put(SettingSource::Project, br#"{"schemaVersion": 3, "a": 1}"#);
    check(&e, SettingSource::Project, "b", json!(big), "a huge value");
    check(&e, SettingSource::Project, &big, json!(1), "a huge key");
    check(
        &e,
        SettingSource::Project,
        &format!("n.{big}"),
        json!(1),
        "a huge nested key",
    );
    // Many writes that each fit, until the next would not.
    let chunk = "y".repeat(limit / 4);
    for i in 0..3 {
        e.store
            .set_setting(SettingSource::Local, &format!("k{i}"), json!(chunk))
            .unwrap();
    }
    check(
        &e,
        SettingSource::Local,
        "k3",
        json!(chunk),
        "the write past the limit",
    );
    // An older file is not backed up for a write that is refused.
    e.put(SettingSource::User, &fixture("v1.json"));
    // (a value that fits alone, not beside what the file holds)
    let almost = "z".repeat(limit - 50);
    check(&e, SettingSource::User, "a", json!(almost), "an older file");
    assert!(!e.home.path().join("settings.json.v1.bak").exists());
    // What was written reads back: every file still loads.
    let s = e.load();
    assert!(
        s.sources[..3]
            .iter()
            .all(|r| r.status == SourceStatus::Loaded),
        "{:?}",
        s.sources
    );
    assert_eq!(s.get("k2").unwrap().value, json!(chunk));
}

fn nested_array(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = json!([v]);
    }
    v
}

#[test]
fn a_write_nested_deeper_than_a_reader_accepts_is_refused_and_writes_nothing() {
    let max = sessionkit::SETTINGS_MAX_NESTING;
    let e = env();
    e.put(SettingSource::User, br#"{"schemaVersion": 3, "a": 1}"#);
    let before = fs::read(e.path(SettingSource::User)).unwrap();
    let deep_key = vec!["k"; max + 20].join(".");
    let huge_key = "k.".repeat(500_000) + "k";
    let cases: [(&str, &str, Value); 4] = [
        ("a key of many parts", &deep_key, json!(1)),
        ("a key of a million parts", &huge_key, json!(1)),
        ("a deep value", "v", nested_array(max + 20)),
        (
            "a value just too deep under a key",
            "x.y",
            nested_array(max - 1),
        ),
    ];
    for (what, key, value) in cases {
        let err = e
            .store
            .set_setting(SettingSource::User, key, value)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{what}: {err}");
        assert!(err.to_string().contains(&max.to_string()), "{what}: {err}");
        assert!(
            err.to_string().len() < 1000,
            "{what}: the message quotes the key whole"
        );
        assert_eq!(
            fs::read(e.path(SettingSource::User)).unwrap(),
            before,
            "{what}"
        );
    }
    // At the limit: written, and read back.
    e.store
        .set_setting(SettingSource::User, "x.y", nested_array(max - 2))
        .unwrap();
    let s = e.load();
    assert_eq!(
        s.sources[0].status,
        SourceStatus::Loaded,
        "{:?}",
        s.sources[0]
    );
    assert_eq!(s.get("x.y").unwrap().value, nested_array(max - 2));
}

#[test]
fn a_file_made_too_large_by_hand_is_repaired_by_unsetting_what_made_it_so() {
    let limit = sessionkit::SETTINGS_MAX_BYTES as usize;
    let e = env();
    let huge = format!(
        r#"{{"schemaVersion": 3, "keep": 1, "big": "{}"}}"#,
        "x".repeat(limit + 10)
    );
    e.put(SettingSource::Project, huge.as_bytes());
    let path = e.path(SettingSource::Project);
    assert_eq!(e.load().sources[1].status, SourceStatus::Error);

    // A change that leaves it too large is refused, naming its size, and
    // writes nothing.
    for (what, r) in [
        (
            "set",
            e.store
                .set_setting(SettingSource::Project, "other", json!(2)),
        ),
        (
            "unset of another key",
            e.store.unset_setting(SettingSource::Project, "keep"),
        ),
        ("migrate", e.store.migrate_settings(SettingSource::Project)),
    ] {
        let err = r.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{what}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("it is {} bytes now", huge.len())),
            "{what}: {msg}"
        );
        assert_eq!(fs::read(&path).unwrap(), huge.as_bytes(), "{what}");
    }

    // Unsetting the key that made it too large brings it back.
    let w = e
        .store
        .unset_setting(SettingSource::Project, "big")
        .unwrap();
    assert!(w.existed);
    let s = e.load();
    assert_eq!(s.sources[1].status, SourceStatus::Loaded);
    assert_eq!(s.get("keep").unwrap().value, json!(1));
    assert!(s.get("big").is_none());

    // A file past the repair limit is not read whole, even by a write.
    let mut monster = b"{\"big\": \"".to_vec();
    monster.resize(sessionkit::SETTINGS_MAX_REPAIR_BYTES as usize + 10, b'x');
    monster.extend_from_slice(b"\"}");
    e.put(SettingSource::Local, &monster);
    let err = e
        .store
        .unset_setting(SettingSource::Local, "big")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(
        err.to_string()
            .contains(&sessionkit::SETTINGS_MAX_REPAIR_BYTES.to_string()),
        "{err}"
    );
    assert_eq!(fs::read(e.path(SettingSource::Local)).unwrap(), monster);
}

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/settings")
        .join(name);
    fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The settings of the current fixture, as `values` reports them.
fn current_values() -> Value {
    let mut v: Value = serde_json::from_slice(&fixture("v3.json")).unwrap();
    v.as_object_mut().unwrap().remove("schemaVersion");
    v
}

#[test]
fn every_past_version_reads_as_the_current_shape_and_rewrites_to_it_twice() {
    for (name, version, steps) in [("v1.json", 1, 2), ("v2.json", 2, 1), ("v3.json", 3, 0)] {
        let e = env();
        let original = fixture(name);
        e.put(SettingSource::User, &original);
        let path = e.path(SettingSource::User);

        // Reading migrates in memory only.
        let s = e.load();
        assert_eq!(Value::Object(s.values.clone()), current_values(), "{name}");
        assert_eq!(s.sources[0].version, Some(version), "{name}");
        assert_eq!(s.sources[0].migrations.len(), steps, "{name}");
        assert_eq!(fs::read(&path).unwrap(), original, "{name}: reading wrote");
        // The migrated names are the ones instruction files are looked for by.
        let names = s.get("instructions.names").unwrap().value;
        assert_eq!(names, json!(["AGENTS.md", "TEAM.md"]), "{name}");

        // The first rewrite keeps the original; the second changes nothing.
        for round in 0..2 {
            let w = e.store.migrate_settings(SettingSource::User).unwrap();
            assert_eq!(
                fs::read(&path).unwrap(),
                fixture("v3.json"),
                "{name} round {round}"
            );
            let backup = path.with_file_name(format!("settings.json.v{version}.bak"));
            if version < SETTINGS_VERSION {
                // Named by the first rewrite only; kept untouched after it.
                assert_eq!(
                    w.backup,
                    (round == 0).then(|| backup.clone()),
                    "{name} round {round}"
                );
                assert_eq!(fs::read(&backup).unwrap(), original, "{name} round {round}");
            } else {
                assert_eq!(w.backup, None);
                assert!(!backup.exists());
            }
            assert_eq!(Value::Object(e.load().values), current_values());
        }
    }
}

#[test]
fn migrations_are_idempotent_on_files_already_partly_in_the_new_shape() {
    let e = env();
    // Labelled v1 (no version) but already in the current shape: nothing moves.
    let mut shaped = current_values();
    e.put(SettingSource::User, shaped.to_string().as_bytes());
    assert_eq!(Value::Object(e.load().values), shaped);
    // Both the old and the new place set: the new place was written later and wins.
    shaped["instructionFiles"] = json!(["OLD.md"]);
    shaped["maxIncludeDepth"] = json!(9);
    e.put(SettingSource::User, shaped.to_string().as_bytes());
    assert_eq!(Value::Object(e.load().values), current_values());
}

#[test]
fn a_newer_version_is_read_only_with_a_warning_and_never_downgraded() {
    let e = env();
    let original = fixture("v99.json");
    e.put(SettingSource::Local, &original);
    let s = e.load();
    assert_eq!(s.get("model").unwrap().value, json!("from-the-future"));
    let local = &s.sources[2];
    assert!(local.read_only);
    let warning = local.warning.as_deref().unwrap();
    assert!(
        warning.contains("schema version 99") && warning.contains("never rewritten"),
        "{warning}"
    );
    for result in [
        e.store
            .set_setting(SettingSource::Local, "model", json!("x")),
        e.store.migrate_settings(SettingSource::Local),
    ] {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::Unsupported);
    }
    assert_eq!(fs::read(e.path(SettingSource::Local)).unwrap(), original);
}

#[test]
fn a_fifo_is_reported_without_blocking_and_the_others_still_load() {
    let e = env();
    e.put(SettingSource::Project, br#"{"a": 1}"#);
    mkfifo(&e.path(SettingSource::Local));
    let s = within_seconds(&e, |store| store.settings(&SettingsOptions::default()));
    assert_eq!(Value::Object(s.values), json!({"a": 1}));
    assert_eq!(s.sources[2].status, SourceStatus::Error);
    let msg = s.sources[2].error.as_deref().unwrap();
    assert!(
        msg.contains("not a regular file") && msg.contains("settings.local.json"),
        "{msg}"
    );
    let err = e
        .store
        .set_setting(SettingSource::Local, "b", json!(2))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
}

#[test]
fn symbolic_links_out_of_the_project_are_neither_read_nor_written() {
    let e = env();
    let outside = tempfile::tempdir().unwrap();
    let theirs = outside.path().join("theirs.json");
    fs::write(&theirs, br#"{"secret": "outside"}"#).unwrap();
    e.put(SettingSource::User, br#"{"u": 1}"#);
    let dir = e.project.path().join(".sessionkit");
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&theirs, dir.join("settings.json")).unwrap();

    // The linked file is reported, not merged; a write refuses it.
    let s = e.load();
    assert_eq!(Value::Object(s.values), json!({"u": 1}));
    assert_eq!(s.sources[1].status, SourceStatus::Error);
    let msg = s.sources[1].error.as_deref().unwrap();
    assert!(msg.contains("outside the project"), "{msg}");
    let err = e
        .store
        .set_setting(SettingSource::Project, "secret", json!("mine"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert_eq!(fs::read(&theirs).unwrap(), br#"{"secret": "outside"}"#);

    // `.sessionkit` itself a link to a directory elsewhere: nothing is written there.
    fs::remove_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(outside.path(), &dir).unwrap();
    let err = e
        .store
        .set_setting(SettingSource::Local, "x", json!(1))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    let names: Vec<_> = fs::read_dir(outside.path())
        .unwrap()
        .map(|d| d.unwrap().file_name())
        .collect();
    assert_eq!(names, ["theirs.json"]);
    // A link inside the project is followed as any path is.
    fs::remove_file(&dir).unwrap();
    fs::create_dir_all(e.project.path().join("conf")).unwrap();
    std::os::unix::fs::symlink(e.project.path().join("conf"), &dir).unwrap();
    e.store
        .set_setting(SettingSource::Local, "x", json!(1))
        .unwrap();
    assert_eq!(
        e.load().get("x").unwrap().origin,
        Some(SettingSource::Local)
    );
}

const PER_PROCESS: usize = 40;

/// Two processes set keys of the user file at once; every key must be there.
fn write_from_two_processes(e: &Env) -> Settings {
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|role| spawn_child(e, "settings_writer_child", CHILD_ENV, role))
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let s = e.load();
    for role in ["a", "b"] {
        for i in 0..PER_PROCESS {
            let key = format!("{role}.k{i}");
            assert_eq!(s.get(&key).map(|v| v.value), Some(json!(i)), "{key} lost");
        }
    }
    s
}

#[test]
fn two_processes_writing_one_file_lose_nothing() {
    write_from_two_processes(&env());
}

#[test]
fn two_processes_migrating_one_older_file_keep_its_backup_and_lose_nothing() {
    let e = env();
    let original = fixture("v1.json");
    e.put(SettingSource::User, &original);
    let s = write_from_two_processes(&e);
    let backup = e.home.path().join("settings.json.v1.bak");
    assert_eq!(fs::read(backup).unwrap(), original);
    assert_eq!(s.sources[0].version, Some(SETTINGS_VERSION));
    assert_eq!(
        s.get("instructions.names").unwrap().value,
        json!(["AGENTS.md", "TEAM.md"])
    );
}

#[test]
#[ignore = "entry point of a child process of write_from_two_processes"]
fn settings_writer_child() {
    let role =
        std::env::var(CHILD_ENV).unwrap_or_else(|_| panic!("a child of write_from_two_processes"));
    let store = child_store();
    for i in 0..PER_PROCESS {
        store
            .set_setting(SettingSource::User, &format!("{role}.k{i}"), json!(i))
            .unwrap();
    }
}
