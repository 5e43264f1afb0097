//! Seed-style flat transcripts (FORMAT.md §22.4): one message object per line,
//! already in sessionkit's message shape. Each is stored as it is, given a
//! parent (the message before it) when it names none; what a writer would
//! refuse is dropped from the message (the original line keeps it).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::codex::line_id;
use super::source::SourceFile;
use super::{path_id, timestamp, Converted, Item};

const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

pub(super) fn convert(path: &Path, file: &SourceFile) -> Converted {
    let mut out = Converted::default();
    for (_, o) in file.objects() {
        if out.session_id.is_none() {
            out.session_id = path_id(o.get("sessionId"));
        }
        if out.project.is_none() {
            out.project = ["cwd", "projectPath"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))
                .map(PathBuf::from);
        }
        if out.created_at.is_none() {
            out.created_at = timestamp(o.get("timestamp"));
        }
    }
    if out.session_id.is_none() {
        out.session_id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| path_id(Some(&Value::from(s))));
    }
    let mut ids = std::collections::HashSet::new();
    let mut last: Option<String> = None;
    for (n, o) in file.objects() {
        let kind = o.get("type").and_then(Value::as_str);
        if !matches!(kind, None | Some("message"))
            || o.get("type")
                .is_some_and(|t| !t.is_string() && !t.is_null())
        {
            out.items.push(Item::record(
                n,
                format!(
                    "a {} record: not replayed, kept as a record",
                    kind.unwrap_or("non-string type")
                ),
            ));
            continue;
        }
        if !o
            .get("role")
            .and_then(Value::as_str)
            .is_some_and(|r| ROLES.contains(&r))
        {
            out.items.push(Item::record(
                n,
                "a message without a role sessionkit stores: kept as a record",
            ));
            continue;
        }
        let (m, notes) = clean(n, o, &ids, last.as_deref());
        let id = m
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        ids.insert(id.clone());
        last = Some(id);
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        out.items.push(Item::message(n, m).noted(note));
    }
    out.title = super::first_user_text(&out.items);
    out
}

/// The message of line `n` as a writer accepts it, and what was dropped.
fn clean(
    n: u64,
    o: &Map<String, Value>,
    ids: &std::collections::HashSet<String>,
    last: Option<&str>,
) -> (Map<String, Value>, Vec<String>) {
    let mut notes = Vec::new();
    let mut m = Map::new();
    let id = match o.get("id").and_then(Value::as_str) {
        Some(s) if crate::format::ids::validate_message_id(s).is_ok() && !ids.contains(s) => {
            s.to_string()
        }
        other => {
            notes.push(format!(
                "id {other:?} is missing, invalid or repeated: {}",
                line_id(n)
            ));
            line_id(n)
        }
    };
    m.insert("id".into(), id.into());
    let parent = match o.get("parentId") {
        Some(Value::String(p)) if ids.contains(p) => Value::String(p.clone()),
        Some(Value::Null) => Value::Null,
        Some(v) => {
            notes.push(format!(
                "parentId {v} names no earlier message: the message before it"
            ));
            last.map(Value::from).unwrap_or(Value::Null)
        }
        None => last.map(Value::from).unwrap_or(Value::Null),
    };
    m.insert("parentId".into(), parent);
    for (k, v) in o {
        let ok = match k.as_str() {
            "id" | "parentId" | "type" | "sessionId" => continue,
            "timestamp" => timestamp(Some(v)).is_some(),
            "visible" | "compacted" => v.is_boolean(),
            "checkpointHash" => v.is_string() || v.is_null(),
            "messageParams" | "meta" => v.is_object() || v.is_null(),
            "contentBlob" | "contentParamsBlob" => false,
            _ => true,
        };
        if ok {
            m.insert(k.clone(), v.clone());
        } else {
            notes.push(format!(
                "field {k:?} dropped: a writer refuses a {} there",
                crate::format::records::type_name(v)
            ));
        }
    }
    (m, notes)
}
