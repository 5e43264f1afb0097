//! Layered settings (docs/SETTINGS.md): JSON files at the user level, in the
//! project (committed) and local to one checkout (git-ignored), plus overrides
//! from the host, merged by documented rules; each effective key is reported
//! with the source that set it. Reading never writes; writes are atomic and
//! locked, and bring an older file to the current shape (backup first).

pub(crate) mod migrate;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, IoContext, Result};
use crate::fsutil;
use migrate::{CURRENT_VERSION, VERSION_KEY};

/// A settings file larger than this is refused (reported, not read), and no
/// write leaves a file larger than this.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// A write reads a file up to this size, so that a file made too large by hand
/// can be brought back under [`MAX_SETTINGS_BYTES`] by the `unset` (or `set`)
/// of what made it so; larger files are refused without being read whole.
pub const MAX_SETTINGS_REPAIR_BYTES: u64 = 16 * MAX_SETTINGS_BYTES;

/// The deepest a settings file may nest objects and arrays (a container
/// counts one level, the top object too). The reader (serde_json) refuses a
/// 128th level; a write that would pass this is refused, key parts included.
pub const MAX_SETTINGS_NESTING: usize = 100;

/// Where a setting comes from, lowest precedence first: a nearer source wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SettingSource {
    /// `<home>/settings.json`: one person's settings for every project.
    User,
    /// `<project>/.sessionkit/settings.json`: shared, committed with the project.
    Project,
    /// `<project>/.sessionkit/settings.local.json`: one checkout's own choices,
    /// meant to be git-ignored.
    Local,
    /// Overrides the host passes for this call only; never written.
    Host,
}

impl SettingSource {
    /// Every source, lowest precedence first.
    pub const ALL: [SettingSource; 4] = [Self::User, Self::Project, Self::Local, Self::Host];

    /// The sources a setting can be written to: every one but `host`.
    pub const WRITABLE: [SettingSource; 3] = [Self::User, Self::Project, Self::Local];

    /// The source's name as it is written (`user`, `project`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
            Self::Host => "host",
        }
    }

    /// Parse a source name; `InvalidInput` naming it otherwise.
    pub fn parse(name: &str) -> Result<SettingSource> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name.trim())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown settings source {name:?} (expected user, project, local or host)"
                ))
            })
    }

    /// Parse a comma-separated list such as `user,project,local`.
    pub fn parse_list(list: &str) -> Result<Vec<SettingSource>> {
        list.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(SettingSource::parse)
            .collect()
    }
}

/// Which sources to load, and the host's overrides.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SettingsOptions {
    /// The sources to load (in any order: precedence is fixed). Default: all.
    pub sources: Option<Vec<SettingSource>>,
    /// Settings of the `host` source, nearest of all.
    pub overrides: Option<Map<String, Value>>,
}

impl SettingsOptions {
    /// Parse options from a JSON object (the form the C ABI and bindings use).
    pub fn from_json(json: &str) -> Result<SettingsOptions> {
        crate::format::json::options_from_json("settings options", json)
    }
}

/// How one source fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SourceStatus {
    /// Read and merged.
    Loaded,
    /// No such file: the source contributes nothing.
    Missing,
    /// Not in the selected sources.
    Skipped,
    /// Unreadable or malformed: `error` says why; the other sources still load.
    Error,
}

/// One source's file and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsSourceReport {
    /// The source.
    pub source: SettingSource,
    /// Its file (`None` for the host's overrides).
    pub path: Option<PathBuf>,
    /// Loaded, missing, skipped or in error.
    pub status: SourceStatus,
    /// The file's schema version as found.
    pub version: Option<u64>,
    /// The migrations applied in memory to read it (the file is rewritten in
    /// the current shape by the next write).
    pub migrations: Vec<String>,
    /// A file of a newer schema version: read as it is, never rewritten.
    pub read_only: bool,
    /// Why the file could not be used: names the file, line and column.
    pub error: Option<String>,
    /// Something the user should know, such as a newer version.
    pub warning: Option<String>,
}

/// The effective settings and where each came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The merged settings (without the version key).
    pub values: Map<String, Value>,
    /// For every leaf (a scalar, an array or an empty object), by dotted key,
    /// the source that set it.
    pub origins: BTreeMap<String, SettingSource>,
    /// Each source, lowest precedence first.
    pub sources: Vec<SettingsSourceReport>,
}

/// One effective setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingValue {
    /// The dotted key.
    pub key: String,
    /// Its effective value.
    pub value: Value,
    /// The source that set it; for an object, the one source that set all its
    /// leaves, or `None` when several did.
    pub origin: Option<SettingSource>,
}

impl Settings {
    /// The effective value of a dotted key (`instructions.names`), if set.
    pub fn get(&self, key: &str) -> Option<SettingValue> {
        let mut at = self.values.get(*key_parts(key).ok()?.first()?)?;
        for part in key.split('.').skip(1) {
            at = at.as_object()?.get(part)?;
        }
        let mut under = self
            .origins
            .iter()
            .filter(|(k, _)| *k == key || is_under(k, key))
            .map(|(_, s)| *s);
        let first = under.next();
        let origin = first.filter(|f| under.all(|s| s == *f));
        Some(SettingValue {
            key: key.to_string(),
            value: at.clone(),
            origin,
        })
    }

    /// Every leaf setting with its value and source, in key order.
    pub fn list(&self) -> Vec<SettingValue> {
        self.origins.keys().filter_map(|k| self.get(k)).collect()
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsWrite {
    /// The file written.
    pub path: PathBuf,
    /// Whether the key was there before (for a removal: whether anything was removed).
    pub existed: bool,
    /// The copy of the file in its older shape, made before its first rewrite.
    pub backup: Option<PathBuf>,
    /// The migrations applied before writing.
    pub migrations: Vec<String>,
}

/// The settings files of one user and one project.
#[derive(Debug, Clone)]
pub(crate) struct SettingsFiles {
    pub home: PathBuf,
    pub project: PathBuf,
}

impl SettingsFiles {
    /// The file of a source; `None` for the host's overrides.
    pub fn path(&self, source: SettingSource) -> Option<PathBuf> {
        match source {
            SettingSource::User => Some(self.home.join("settings.json")),
            SettingSource::Project => Some(self.project.join(".sessionkit/settings.json")),
            SettingSource::Local => Some(self.project.join(".sessionkit/settings.local.json")),
            SettingSource::Host => None,
        }
    }

    /// The file of a source that can be written: not the host's.
    fn writable_path(&self, source: SettingSource) -> Result<PathBuf> {
        self.path(source).ok_or_else(|| {
            Error::invalid(
                "the host source lives in memory: pass it as overrides, it is never written",
            )
        })
    }

    /// Load and merge the selected sources.
    pub fn load(&self, options: &SettingsOptions) -> Settings {
        let mut merged = Merged::default();
        let mut sources = Vec::new();
        for source in SettingSource::ALL {
            let path = self.path(source);
            let mut report = SettingsSourceReport {
                source,
                path: path.clone(),
                status: SourceStatus::Skipped,
                version: None,
                migrations: Vec::new(),
                read_only: false,
                error: None,
                warning: None,
            };
            let selected = options.sources.as_ref().is_none_or(|s| s.contains(&source));
            if selected {
                match path {
                    None => {
                        if let Some(o) = &options.overrides {
                            merged.apply(o, source);
                            report.status = SourceStatus::Loaded;
                        }
                    }
                    Some(p) => match self
                        .confine(source, &p)
                        .and_then(|()| read_file(&p, MAX_SETTINGS_BYTES))
                    {
                        Ok(None) => report.status = SourceStatus::Missing,
                        Err(e) => {
                            report.status = SourceStatus::Error;
                            report.error = Some(e.to_string());
                        }
                        Ok(Some(f)) => {
                            report.status = SourceStatus::Loaded;
                            report.version = Some(f.version);
                            report.migrations =
                                f.migrations.iter().map(|m| m.to_string()).collect();
                            if f.version > CURRENT_VERSION {
                                report.read_only = true;
                                report.warning = Some(newer_message(&p, f.version));
                            }
                            merged.apply(&f.doc, source);
                        }
                    },
                }
            }
            sources.push(report);
        }
        Settings {
            values: merged.values,
            origins: merged.origins,
            sources,
        }
    }

    /// Set `key` to `value` in the file of `source` (a `null` value is written:
    /// it removes the key from the sources below). Locked, atomic; an older file
    /// is backed up once and rewritten in the current shape.
    pub fn set(&self, source: SettingSource, key: &str, value: Value) -> Result<SettingsWrite> {
        let parts = key_parts(key)?;
        // Levels above the value: the file's object and one per parent part.
        let above = parts.len();
        if above >= MAX_SETTINGS_NESTING || deeper(&value, MAX_SETTINGS_NESTING - above) {
            return Err(Error::invalid(format!(
                "settings key {} with its value would nest objects and arrays more than \
                 {MAX_SETTINGS_NESTING} levels deep, more than a settings file may",
                shorten(key)
            )));
        }
        // Said when the file would grow past the limit: what was too big.
        let value_len = serde_json::to_vec(&value).map_or(0, |v| v.len());
        let what = format!("setting {} to a value of {value_len} bytes", shorten(key));
        // Too large whatever the file holds: refused before its directory is made.
        if (key.len() + value_len) as u64 > MAX_SETTINGS_BYTES {
            return Err(Error::invalid(format!(
                "settings file {}: {what} would make it larger than the limit of \
                 {MAX_SETTINGS_BYTES} bytes; nothing was written",
                self.writable_path(source)?.display()
            )));
        }
        self.edit(source, &what, |doc| {
            let (last, parents) = parts
                .split_last()
                .ok_or_else(|| Error::invalid("empty key"))?;
            let mut at = doc;
            for (i, p) in parents.iter().enumerate() {
                let slot = at
                    .entry(p.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                at = slot.as_object_mut().ok_or_else(|| {
                    Error::invalid(format!(
                        "settings key {key:?}: {:?} holds a value that is not an object",
                        parts[..=i].join(".")
                    ))
                })?;
            }
            Ok(at.insert(last.to_string(), value).is_some())
        })
    }

    /// Remove `key` from the file of `source` (lower sources then show through).
    pub fn unset(&self, source: SettingSource, key: &str) -> Result<SettingsWrite> {
        let parts = key_parts(key)?;
        let what = format!("removing key {}", shorten(key));
        self.edit(source, &what, |doc| {
            let (last, parents) = parts
                .split_last()
                .ok_or_else(|| Error::invalid("empty key"))?;
            let mut at = doc;
            for p in parents {
                match at.get_mut(*p).and_then(Value::as_object_mut) {
                    Some(m) => at = m,
                    None => return Ok(false),
                }
            }
            Ok(at.remove(*last).is_some())
        })
    }

    /// Rewrite the file of `source` in the current shape (nothing else changes).
    pub fn migrate(&self, source: SettingSource) -> Result<SettingsWrite> {
        self.edit(source, "rewriting it in the current shape", |_| Ok(false))
    }

    /// Read-modify-write one file under the lock of its directory. `what`
    /// names the change for the error when its result would be too large.
    /// Nothing is written (neither backup nor file) unless the result fits.
    fn edit(
        &self,
        source: SettingSource,
        what: &str,
        change: impl FnOnce(&mut Map<String, Value>) -> Result<bool>,
    ) -> Result<SettingsWrite> {
        let path = self.writable_path(source)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        self.confine(source, &path)?;
        fsutil::create_private_dir(dir)?;
        let _lock = fsutil::lock_dir(dir)?;
        let (mut doc, version, original, migrations) =
            match read_file(&path, MAX_SETTINGS_REPAIR_BYTES)? {
                None => (Map::new(), CURRENT_VERSION, None, Vec::new()),
                Some(f) if f.version > CURRENT_VERSION => {
                    return Err(Error::Unsupported(newer_message(&path, f.version)))
                }
                Some(f) => (f.doc, f.version, Some(f.bytes), f.migrations),
            };
        let before = original.as_ref().map_or(0, Vec::len);
        let existed = change(&mut doc)?;
        let mut out = Map::new();
        out.insert(VERSION_KEY.into(), Value::from(CURRENT_VERSION));
        out.extend(doc.into_iter().filter(|(k, _)| k != VERSION_KEY));
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(out))
            .map_err(|e| Error::Internal(format!("settings to JSON: {e}")))?;
        bytes.push(b'\n');
        // The reader refuses a file past the limit: never write one.
        if bytes.len() as u64 > MAX_SETTINGS_BYTES {
            let was = if before as u64 > MAX_SETTINGS_BYTES {
                format!(" (it is {before} bytes now: unset or shorten what made it so)")
            } else {
                String::new()
            };
            return Err(Error::invalid(format!(
                "settings file {}: {what} would make it {} bytes, over the limit of \
                 {MAX_SETTINGS_BYTES} bytes{was}; nothing was written",
                path.display(),
                bytes.len()
            )));
        }
        // Never write what the reader would refuse (a hand-written part may
        // already nest near the parser's limit).
        if let Err(e) = serde_json::from_slice::<Value>(&bytes) {
            return Err(Error::invalid(format!(
                "settings file {}: {what} would make it unreadable ({e}); nothing was written",
                path.display()
            )));
        }
        let mut backup = None;
        if let Some(bytes) = original.filter(|_| version < CURRENT_VERSION) {
            let b = backup_path(&path, version);
            // The first rewrite keeps the original; later ones must not replace it.
            if !b.exists() {
                fsutil::atomic_write(&b, &bytes, true, true)?;
            }
            backup = Some(b);
        }
        fsutil::atomic_write(&path, &bytes, true, true)?;
        Ok(SettingsWrite {
            path,
            existed,
            backup,
            migrations: migrations.iter().map(|m| m.to_string()).collect(),
        })
    }
}

impl SettingsFiles {
    /// Refuse a project or local settings file that resolves outside the
    /// project: a checkout may carry a symbolic link (of the file or of
    /// `.sessionkit`) meant to make an agent read or write elsewhere. The
    /// home, and so the user's file, is the user's own and may be a link.
    fn confine(&self, source: SettingSource, path: &Path) -> Result<()> {
        if source == SettingSource::User {
            return Ok(());
        }
        let project = fs::canonicalize(&self.project).at(&self.project)?;
        // The file, else the nearest ancestor that exists, resolved.
        let mut at = path;
        let real = loop {
            match fs::canonicalize(at) {
                Ok(real) => break real,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => match at.parent() {
                    Some(parent) if at != self.project => at = parent,
                    _ => return Ok(()),
                },
                Err(e) => return Err(Error::io(at, e)),
            }
        };
        if real.starts_with(&project) {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "settings file {} resolves to {}, outside the project {}; refusing it",
            path.display(),
            real.display(),
            project.display()
        )))
    }
}

/// Where the original of a file of schema `version` is kept.
pub(crate) fn backup_path(path: &Path, version: u64) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".v{version}.bak"));
    path.with_file_name(name)
}

fn newer_message(path: &Path, version: u64) -> String {
    format!(
        "settings file {} has schema version {version}, newer than this sessionkit's \
         {CURRENT_VERSION}: it is read as it is and never rewritten (upgrade sessionkit to change it)",
        path.display()
    )
}

/// A settings file as read: in the current shape, with what it took.
struct SettingsFile {
    doc: Map<String, Value>,
    version: u64,
    migrations: Vec<&'static str>,
    bytes: Vec<u8>,
}

/// Read, parse and migrate one file of at most `limit` bytes; `None` if it
/// does not exist.
fn read_file(path: &Path, limit: u64) -> Result<Option<SettingsFile>> {
    // Opening a FIFO (or a device) would block or never end: only a regular
    // file is read.
    match fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => {
            return Err(Error::invalid(format!(
                "settings file {} is not a regular file",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    }
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).at(path)?;
    if bytes.len() as u64 > limit {
        return Err(Error::invalid(format!(
            "settings file {} is larger than {limit} bytes",
            path.display()
        )));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::Corrupt(format!(
            "settings file {}: line {}, column {}: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    let Value::Object(mut doc) = value else {
        return Err(Error::Corrupt(format!(
            "settings file {}: line 1, column 1: the top level must be a JSON object",
            path.display()
        )));
    };
    let version = match doc.get(VERSION_KEY) {
        None => 1,
        Some(v) => v.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
            Error::Corrupt(format!(
                "settings file {}: {VERSION_KEY} is {v}, not a whole number >= 1",
                path.display()
            ))
        })?,
    };
    let migrations = migrate::migrate(&mut doc, version);
    Ok(Some(SettingsFile {
        doc,
        version,
        migrations,
        bytes,
    }))
}

/// The parts of a dotted key; `InvalidInput` for an empty part or the version key.
fn key_parts(key: &str) -> Result<Vec<&str>> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Error::invalid(format!(
            "settings key {key:?}: expected dot-separated names, none empty"
        )));
    }
    if parts[0] == VERSION_KEY {
        return Err(Error::invalid(format!(
            "settings key {VERSION_KEY} is managed by sessionkit"
        )));
    }
    Ok(parts)
}

/// Whether `v` nests arrays and objects more than `levels` deep (bounded:
/// never recurses past `levels`).
fn deeper(v: &Value, levels: usize) -> bool {
    match v {
        Value::Array(a) => levels == 0 || a.iter().any(|c| deeper(c, levels - 1)),
        Value::Object(m) => levels == 0 || m.values().any(|c| deeper(c, levels - 1)),
        _ => false,
    }
}

/// A key as it goes into a message: a huge one cut to its start.
fn shorten(key: &str) -> String {
    if key.len() <= 100 {
        return format!("{key:?}");
    }
    let cut = (0..=100)
        .rev()
        .find(|&i| key.is_char_boundary(i))
        .unwrap_or(0);
    format!("{:?}... ({} bytes)", &key[..cut], key.len())
}

fn is_under(key: &str, prefix: &str) -> bool {
    key.len() > prefix.len() && key.starts_with(prefix) && key.as_bytes()[prefix.len()] == b'.'
}

/// The merge of the sources so far, with the origin of every leaf.
#[derive(Default)]
struct Merged {
    values: Map<String, Value>,
    origins: BTreeMap<String, SettingSource>,
}

impl Merged {
    /// Merge one source over what is there (docs/SETTINGS.md, "Merge rules").
    fn apply(&mut self, layer: &Map<String, Value>, source: SettingSource) {
        merge_into(&mut self.values, layer, "", source, &mut self.origins);
    }
}

fn merge_into(
    acc: &mut Map<String, Value>,
    layer: &Map<String, Value>,
    prefix: &str,
    source: SettingSource,
    origins: &mut BTreeMap<String, SettingSource>,
) {
    for (k, v) in layer {
        if prefix.is_empty() && k == VERSION_KEY {
            continue;
        }
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match (v, acc.get_mut(k)) {
            (Value::Null, _) => {
                acc.remove(k);
                origins.retain(|o, _| *o != key && !is_under(o, &key));
            }
            (Value::Object(child), Some(Value::Object(into))) => {
                if !child.is_empty() {
                    // An empty object set below was a leaf; now its members are.
                    origins.remove(&key);
                }
                merge_into(into, child, &key, source, origins);
            }
            _ => {
                origins.retain(|o, _| *o != key && !is_under(o, &key));
                let v = without_nulls(v);
                record_leaves(&v, &key, source, origins);
                acc.insert(k.clone(), v);
            }
        }
    }
}

/// `v` with the `null` members of its objects dropped: in a new object there is
/// nothing below for them to remove.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn record_leaves(
    v: &Value,
    key: &str,
    source: SettingSource,
    origins: &mut BTreeMap<String, SettingSource>,
) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                record_leaves(x, &format!("{key}.{k}"), source, origins);
            }
        }
        _ => {
            origins.insert(key.to_string(), source);
        }
    }
}
