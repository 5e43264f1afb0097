//! Record types of the session log and the checks a message goes through before it
//! is written. See docs/FORMAT.md, "Records".

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::format::ids::validate_message_id;
use crate::format::json;

/// The format version this library writes.
pub const FORMAT_VERSION: u64 = 1;

pub const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

/// Record `type` values.
pub mod kind {
    pub const SESSION: &str = "session";
    pub const MESSAGE: &str = "message";
    pub const HEAD: &str = "head";
    pub const PATCH: &str = "patch";
    pub const STATE: &str = "state";
    pub const SUBAGENT: &str = "subagent";
    pub const COMPACTION: &str = "compaction";
    /// A checkpointer's records (FORMAT.md §24).
    pub const CHECKPOINT: &str = "checkpoint";
    pub const WRITES: &str = "writes";
    pub const VALUE: &str = "value";
    pub const DROP: &str = "drop";
}

/// Where a large value was moved: `{"sha256": "...", "bytes": N}`.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq, Eq)]
pub struct BlobRef {
    pub sha256: String,
    pub bytes: u64,
}

pub(crate) use crate::format::decode::{Json, Probe};

/// Why a line (or part of one) was skipped: the kinds of FORMAT.md §9.1, one
/// per cause, so that every implementation reports the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SkipKind {
    /// A run of NUL bytes (what a crash leaves where data was never written).
    Nul,
    /// A line that is not valid UTF-8.
    Utf8,
    /// A line that is not a decodable JSON object, or one whose structural
    /// field has the wrong JSON type.
    Json,
    /// A message whose `id` is missing, `null` or not a valid message id.
    NoId,
    /// A `patch` record whose `messageId` or `patch` is missing or `null`.
    BadPatch,
    /// A `compaction` record whose `summaryId`, `replaces` or `prefix` is
    /// missing or `null`.
    BadCompaction,
    /// Bytes after the last newline that are not all NUL: a write cut short.
    Torn,
}

/// What a decodable line is, by the decision table (FORMAT.md §6.9).
#[derive(Debug)]
pub(crate) enum Class<'p> {
    /// A message: its id and parent (`None`: no `parentId` member, the parent
    /// is the head; `Some(None)`: a root).
    Message {
        id: &'p str,
        parent: Option<Option<&'p str>>,
    },
    /// A `session` record; `version` is its format version.
    Session {
        version: u64,
    },
    /// A head move: `None` empties the head.
    Head(Option<&'p str>),
    Patch {
        message_id: &'p str,
    },
    Compaction {
        summary_id: &'p str,
    },
    State,
    Subagent,
    /// A record of a type this version does not know.
    Unknown,
}

/// A skipped line's kind and reason.
pub(crate) type Skip = (SkipKind, String);

/// Apply the decision table (FORMAT.md §6.9) to a probed line: what it is, or
/// why it is skipped. Every reader (the views, the index fold, the resume from
/// the end) decides here, so they agree line for line.
pub(crate) fn classify<'p>(p: &'p Probe<'_>) -> std::result::Result<Class<'p>, Skip> {
    fn wrong(what: &str, v: &Json<'_>) -> Skip {
        (
            SkipKind::Json,
            format!("{what} has the wrong JSON type ({})", v.type_name()),
        )
    }
    let kind = match &p.kind {
        Json::Absent | Json::Null => kind::MESSAGE,
        Json::Str(s) => s,
        other => return Err(wrong("\"type\"", other)),
    };
    match kind {
        kind::MESSAGE => {
            let id = match &p.id {
                Json::Str(s) => s,
                Json::Absent | Json::Null => {
                    return Err((SkipKind::NoId, "message has no \"id\"".into()))
                }
                other => return Err(wrong("message \"id\"", other)),
            };
            if let Err(e) = validate_message_id(id) {
                return Err((SkipKind::NoId, format!("message id is not valid: {e}")));
            }
            let parent = match &p.parent_id {
                Json::Absent => None,
                Json::Null => Some(None),
                Json::Str(s) => Some(Some(&**s)),
                other => return Err(wrong("message \"parentId\"", other)),
            };
            Ok(Class::Message { id, parent })
        }
        kind::SESSION => match &p.version {
            Json::Absent | Json::Null => Ok(Class::Session { version: 1 }),
            Json::Number(v) if *v >= 0.0 && v.fract() == 0.0 => Ok(Class::Session {
                version: if *v >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    *v as u64
                },
            }),
            Json::Number(v) => Err((
                SkipKind::Json,
                format!("session \"version\" must be a non-negative integer, got {v}"),
            )),
            other => Err(wrong("session \"version\"", other)),
        },
        kind::HEAD => match &p.message_id {
            Json::Absent | Json::Null => Ok(Class::Head(None)),
            Json::Str(s) => Ok(Class::Head(Some(s))),
            other => Err(wrong("head \"messageId\"", other)),
        },
        kind::PATCH => {
            let message_id = match &p.message_id {
                Json::Str(s) => s,
                Json::Absent | Json::Null => {
                    return Err((
                        SkipKind::BadPatch,
                        "patch record has no \"messageId\"".into(),
                    ))
                }
                other => return Err(wrong("patch \"messageId\"", other)),
            };
            match &p.patch {
                Json::Object => Ok(Class::Patch { message_id }),
                Json::Absent | Json::Null => {
                    Err((SkipKind::BadPatch, "patch record has no \"patch\"".into()))
                }
                other => Err(wrong("patch \"patch\"", other)),
            }
        }
        kind::COMPACTION => {
            let fields = [
                (
                    "summaryId",
                    &p.summary_id,
                    matches!(p.summary_id, Json::Str(_)),
                ),
                ("replaces", &p.replaces, matches!(p.replaces, Json::Array)),
                ("prefix", &p.prefix, matches!(p.prefix, Json::Array)),
            ];
            for (name, v, ok) in fields {
                if v.is_missing() {
                    return Err((
                        SkipKind::BadCompaction,
                        format!("{COMPACTION_SHAPE}; \"{name}\" is missing"),
                    ));
                }
                if !ok {
                    return Err(wrong(&format!("compaction \"{name}\""), v));
                }
            }
            Ok(Class::Compaction {
                summary_id: p.summary_id.str().unwrap_or_default(),
            })
        }
        kind::STATE => Ok(Class::State),
        kind::SUBAGENT => Ok(Class::Subagent),
        _ => Ok(Class::Unknown),
    }
}

/// The members of a patch a reader does not apply: the ones a writer refuses
/// (FORMAT.md §6.4), which would change what the message table was built from.
pub(crate) const PATCH_RESERVED: [&str; 7] = [
    "type",
    "id",
    "parentId",
    "sessionId",
    "role",
    "contentBlob",
    "contentParamsBlob",
];

/// The patch a `patch` record's line applies: its `patch` object without the
/// members a reader ignores ([`PATCH_RESERVED`]).
pub(crate) fn patch_of(text: &str) -> Option<Value> {
    let Ok(Value::Object(mut rec)) = serde_json::from_str(text) else {
        return None;
    };
    let Some(Value::Object(mut patch)) = rec.remove("patch") else {
        return None;
    };
    for k in PATCH_RESERVED {
        patch.shift_remove(k);
    }
    Some(Value::Object(patch))
}

/// What a `compaction` record must hold to be folded (FORMAT.md §7).
pub(crate) const COMPACTION_SHAPE: &str =
    "compaction record needs a string \"summaryId\", an array \"replaces\" and an array \"prefix\"";

/// How a JSON value's type reads in an error message ("an array", "null").
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expect(field: &str, v: &Value, ok: bool, want: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "message field {field:?} must be {want}, got {}",
            type_name(v)
        )))
    }
}

/// A message checked, ready to be written: the fields the store sets, and the
/// host's own in the host's order. Kept apart rather than in one `Map` (whose
/// every insert hashes its key) because the line is written straight from them.
#[derive(Debug)]
pub(crate) struct PreparedMessage {
    pub id: String,
    pub parent_id: Option<String>,
    /// One of [`ROLES`].
    pub role: &'static str,
    pub timestamp: String,
    /// The host's other fields, in its order (`type` and the store's fields
    /// taken out).
    pub rest: Vec<(String, Value)>,
}

impl PreparedMessage {
    /// Set `agentId` (a sidechain's messages): in place if the host gave one,
    /// else after the host's fields.
    pub fn set_agent_id(&mut self, agent_id: &str) {
        match self.rest.iter_mut().find(|(k, _)| k == "agentId") {
            Some((_, v)) => *v = Value::String(agent_id.into()),
            None => self
                .rest
                .push(("agentId".into(), Value::String(agent_id.into()))),
        }
    }

    /// Append the record as one JSON object (no newline), in canonical field
    /// order ([§6.2](docs/FORMAT.md)): the same bytes as [`PreparedMessage::to_map`]
    /// serialised. Returns what it appended.
    pub fn write_json<'o>(&self, session_id: &str, out: &'o mut Vec<u8>) -> &'o str {
        let start = out.len();
        out.extend_from_slice(br#"{"type":"message","id":"#);
        json::write_str(&self.id, out);
        out.extend_from_slice(br#","parentId":"#);
        match &self.parent_id {
            Some(p) => json::write_str(p, out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(br#","sessionId":"#);
        json::write_str(session_id, out);
        // Roles are plain ASCII words: nothing to escape.
        out.extend_from_slice(br#","role":""#);
        out.extend_from_slice(self.role.as_bytes());
        out.extend_from_slice(br#"","timestamp":"#);
        json::write_str(&self.timestamp, out);
        for (k, v) in &self.rest {
            out.push(b',');
            json::write_member(k, v, out);
        }
        out.push(b'}');
        let written = &out[start..];
        debug_assert!(std::str::from_utf8(written).is_ok());
        // SAFETY: all that was appended above is ASCII (punctuation, literals,
        // digits, escapes) and the bytes of `&str`s, which the escaper copies
        // whole between the ASCII characters it escapes: UTF-8 by construction.
        // (Checking it again cost 5% of an append.)
        unsafe { std::str::from_utf8_unchecked(written) }
    }

    /// The record as a map, in canonical field order.
    pub fn to_map(&self, session_id: &str) -> Map<String, Value> {
        let mut fields = Map::with_capacity(self.rest.len() + 6);
        fields.insert("type".into(), Value::String(kind::MESSAGE.into()));
        fields.insert("id".into(), Value::String(self.id.clone()));
        fields.insert(
            "parentId".into(),
            self.parent_id
                .clone()
                .map(Value::String)
                .unwrap_or(Value::Null),
        );
        fields.insert("sessionId".into(), Value::String(session_id.into()));
        fields.insert("role".into(), Value::String(self.role.into()));
        fields.insert("timestamp".into(), Value::String(self.timestamp.clone()));
        fields.extend(self.rest.iter().map(|(k, v)| (k.clone(), v.clone())));
        fields
    }
}

/// What a message's parent should be when the input names none.
pub(crate) enum ParentChoice<'a> {
    Given(Option<String>),
    Default(Option<&'a str>),
}

/// Check a message given by a host and build its record.
///
/// `known` answers whether a message id already exists in the log.
pub(crate) fn prepare_message(
    input: Value,
    session_id: &str,
    head: Option<&str>,
    new_id: impl FnOnce() -> String,
    timestamp: impl FnOnce() -> String,
    known: impl Fn(&str) -> bool,
) -> Result<PreparedMessage> {
    let Value::Object(obj) = input else {
        return Err(Error::invalid(format!(
            "a message must be a JSON object, got {}",
            type_name(&input)
        )));
    };
    // The fields the store sets, taken out in one pass (removing them one by one
    // shifted the rest of the map each time), and the host's own, in order.
    let (mut kind_in, mut role_in, mut id_in, mut parent_in, mut session_in, mut ts_in) =
        (None, None, None, None, None, None);
    let mut rest = Vec::with_capacity(obj.len());
    for (k, v) in obj {
        match k.as_str() {
            "type" => kind_in = Some(v),
            "role" => role_in = Some(v),
            "id" => id_in = Some(v),
            "parentId" => parent_in = Some(v),
            "sessionId" => session_in = Some(v),
            "timestamp" => ts_in = Some(v),
            _ => rest.push((k, v)),
        }
    }
    if let Some(t) = kind_in {
        if t.as_str() != Some(kind::MESSAGE) {
            return Err(Error::invalid(format!(
                "message field \"type\" must be \"message\" or absent, got {t}"
            )));
        }
    }
    let role = match &role_in {
        None => return Err(Error::invalid("message has no \"role\"")),
        Some(v) => match ROLES.into_iter().find(|r| v.as_str() == Some(*r)) {
            Some(r) => r,
            None => {
                return Err(Error::invalid(format!(
                    "message field \"role\" must be one of system, user, assistant, tool; got {v}"
                )))
            }
        },
    };
    let id = match id_in {
        Some(Value::String(s)) => {
            validate_message_id(&s)?;
            if known(&s) {
                return Err(Error::Conflict(format!(
                    "message id {s:?} already exists in session {session_id}"
                )));
            }
            s
        }
        Some(Value::Null) | None => new_id(),
        Some(v) => {
            return Err(Error::invalid(format!(
                "message field \"id\" must be a string, got {}",
                type_name(&v)
            )))
        }
    };
    let parent = match parent_in {
        Some(Value::String(p)) => ParentChoice::Given(Some(p)),
        Some(Value::Null) => ParentChoice::Given(None),
        None => ParentChoice::Default(head),
        Some(v) => {
            return Err(Error::invalid(format!(
                "message field \"parentId\" must be a string or null, got {}",
                type_name(&v)
            )))
        }
    };
    let parent_id = match parent {
        ParentChoice::Given(Some(p)) => {
            if !known(&p) {
                return Err(Error::NotFound(format!(
                    "parentId {p:?} is not a message of session {session_id}"
                )));
            }
            Some(p)
        }
        ParentChoice::Given(None) => None,
        ParentChoice::Default(h) => h.map(str::to_owned),
    };
    match session_in {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == session_id => {}
        Some(v) => {
            return Err(Error::invalid(format!(
                "message field \"sessionId\" is {v} but the message is appended to session {session_id}"
            )))
        }
    }
    let ts = match ts_in {
        Some(Value::String(s)) => {
            if crate::format::ids::parse_ms(&s).is_none() {
                return Err(Error::invalid(format!(
                    "message field \"timestamp\" {s:?} is not an RFC 3339 time"
                )));
            }
            s
        }
        None | Some(Value::Null) => timestamp(),
        Some(v) => {
            return Err(Error::invalid(format!(
                "message field \"timestamp\" must be a string, got {}",
                type_name(&v)
            )))
        }
    };
    for (field, v) in &rest {
        match field.as_str() {
            "visible" | "compacted" => expect(field, v, v.is_boolean(), "a boolean")?,
            "checkpointHash" => expect(field, v, v.is_string() || v.is_null(), "a string or null")?,
            "messageParams" | "meta" => {
                expect(field, v, v.is_object() || v.is_null(), "an object or null")?
            }
            "contentBlob" | "contentParamsBlob" => {
                return Err(Error::invalid(format!(
                    "message field {field:?} is reserved for the store"
                )))
            }
            _ => {}
        }
    }
    Ok(PreparedMessage {
        id,
        parent_id,
        role,
        timestamp: ts,
        rest,
    })
}

/// The plain text of a message's `content`: a string as is, or the `text` of each
/// block of an array, joined by newlines.
pub fn content_text(content: &Value) -> Option<String> {
    content_text_ref(content).map(std::borrow::Cow::into_owned)
}

/// [`content_text`], borrowed when `content` is a string.
pub(crate) fn content_text_ref(content: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match content {
        Value::String(s) => Some(s.as_str().into()),
        Value::Array(blocks) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("text") => {
                        o.get("text").and_then(Value::as_str)
                    }
                    _ => None,
                })
                .collect();
            if parts.is_empty() {
                None
            } else {
                Some(parts.join("\n").into())
            }
        }
        _ => None,
    }
}

/// Apply an RFC 7396 JSON merge patch.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    if let Value::Object(p) = patch {
        if !target.is_object() {
            *target = Value::Object(Map::new());
        }
        if let Value::Object(t) = target {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
    } else {
        *target = patch.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prep(v: Value) -> Result<PreparedMessage> {
        prepare_message(
            v,
            "s1",
            Some("h"),
            || "new".into(),
            || "2026-01-01T00:00:00.000Z".into(),
            |id| id == "h",
        )
    }

    #[test]
    fn canonical_order_and_defaults() {
        let p = prep(json!({"role": "user", "content": "hi", "x-extra": 1})).unwrap();
        let line = serde_json::to_string(&p.to_map("s1")).unwrap();
        assert_eq!(
            line,
            r#"{"type":"message","id":"new","parentId":"h","sessionId":"s1","role":"user","timestamp":"2026-01-01T00:00:00.000Z","content":"hi","x-extra":1}"#
        );
    }

    #[test]
    fn written_line_is_the_record_serialised() {
        let host = json!({"role": "assistant", "meta": {"usage": {"in": 3, "x": -1.5e-7}},
            "content": "quote \" backslash \\ tab \t nl \n nul \u{0} é 🚧",
            "agentId": "host's", "x\"key\u{1}": [null, true, 1e300], "parentId": null});
        for agent in [None, Some("ag\"1")] {
            // Given by the host (kept in its place) and not (added at the end).
            let without = {
                let mut h = host.clone();
                h.as_object_mut().unwrap().shift_remove("agentId");
                h
            };
            for (input, given) in [(host.clone(), true), (without, false)] {
                let mut p = prep(input).unwrap();
                if let Some(a) = agent {
                    p.set_agent_id(a);
                }
                let mut line = b"before".to_vec();
                let text = p.write_json("s\u{7f}1", &mut line).to_owned();
                assert_eq!(line.drain(..6).as_slice(), b"before");
                assert_eq!(text.as_bytes(), line);
                let map = p.to_map("s\u{7f}1");
                assert_eq!(line, serde_json::to_vec(&map).unwrap());
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                assert_eq!(
                    keys[..6],
                    ["type", "id", "parentId", "sessionId", "role", "timestamp"]
                );
                assert_eq!(map["parentId"], Value::Null);
                let host_keys = match (given, agent) {
                    (true, _) => vec!["meta", "content", "agentId", "x\"key\u{1}"],
                    (false, None) => vec!["meta", "content", "x\"key\u{1}"],
                    (false, Some(_)) => vec!["meta", "content", "x\"key\u{1}", "agentId"],
                };
                assert_eq!(keys[6..], host_keys);
                match agent {
                    Some(a) => assert_eq!(map["agentId"], a),
                    None if given => assert_eq!(map["agentId"], "host's"),
                    None => {}
                }
            }
        }
    }

    #[test]
    fn wrong_types_are_named() {
        let e = prep(json!({"role": "user", "visible": "yes"})).unwrap_err();
        assert!(e.to_string().contains("\"visible\""), "{e}");
        let e = prep(json!({"role": "robot"})).unwrap_err();
        assert!(e.to_string().contains("role"), "{e}");
        let e = prep(json!([1])).unwrap_err();
        assert!(e.to_string().contains("an array"), "{e}");
        let e = prep(json!({"role": "user", "parentId": "nope"})).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotFound);
        let e = prep(json!({"role": "user", "id": "h"})).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Conflict);
    }

    #[test]
    fn merge_patch_follows_rfc7396() {
        let mut t = json!({"a": 1, "meta": {"x": 1, "y": 2}});
        merge_patch(
            &mut t,
            &json!({"meta": {"y": null, "usage": {"in": 3}}, "b": [1]}),
        );
        assert_eq!(
            t,
            json!({"a": 1, "b": [1], "meta": {"x": 1, "usage": {"in": 3}}})
        );
    }

    #[test]
    fn content_text_of_blocks() {
        let c = json!([{"type": "text", "text": "a"}, {"type": "tool_use"}, {"type": "text", "text": "b"}]);
        assert_eq!(content_text(&c).as_deref(), Some("a\nb"));
    }
}
