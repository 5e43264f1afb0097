//! Reading an index entry (FORMAT.md §10.2) field by field.
//!
//! The derived reader of a struct with a `#[serde(flatten)]` map first buffers
//! every member of the object in a generic form and then reads the fields
//! from that copy: at ten thousand sessions that was most of a listing. This
//! one reads each member straight into its field and only an unknown member
//! (a newer writer's) into [`IndexEntry::extra`], with the same outcome as the
//! derive: the same required fields, the same types, a repeated known member
//! refused.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::IndexEntry;

/// The members of an entry, in the order of §10.2.
#[derive(Clone, Copy)]
enum Field {
    Id,
    ConversationId,
    Title,
    TitleSet,
    CreatedAt,
    UpdatedAt,
    Status,
    LastAssistantReply,
    Thinking,
    RefusalReason,
    FailureReason,
    LastToolCall,
    TokenUsage,
    ActiveTokens,
    ChildProcesses,
    HeadId,
    MessageCount,
    ForkedFrom,
    LogBytes,
}

const FIELDS: &[(&str, Field)] = &[
    ("id", Field::Id),
    ("conversationId", Field::ConversationId),
    ("title", Field::Title),
    ("titleSet", Field::TitleSet),
    ("createdAt", Field::CreatedAt),
    ("updatedAt", Field::UpdatedAt),
    ("status", Field::Status),
    ("lastAssistantReply", Field::LastAssistantReply),
    ("thinking", Field::Thinking),
    ("refusalReason", Field::RefusalReason),
    ("failureReason", Field::FailureReason),
    ("lastToolCall", Field::LastToolCall),
    ("tokenUsage", Field::TokenUsage),
    ("activeTokens", Field::ActiveTokens),
    ("childProcesses", Field::ChildProcesses),
    ("headId", Field::HeadId),
    ("messageCount", Field::MessageCount),
    ("forkedFrom", Field::ForkedFrom),
    ("logBytes", Field::LogBytes),
];

/// A member's name: one of [`FIELDS`], or another kept by its name.
enum Key {
    Known(Field),
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match FIELDS.iter().find(|(name, _)| *name == v) {
                    Some((_, field)) => Key::Known(*field),
                    None => Key::Other(v.to_string()),
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for IndexEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IndexEntry, D::Error> {
        d.deserialize_map(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = IndexEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an index entry (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IndexEntry, A::Error> {
        let mut e = IndexEntry::default();
        // Which members were read: the four required ones must be, and none twice.
        let mut seen = [false; FIELDS.len()];
        let mut extra = Map::new();
        while let Some(key) = map.next_key::<Key>()? {
            let field = match key {
                Key::Known(f) => f,
                Key::Other(name) => {
                    let value: Value = map.next_value()?;
                    extra.insert(name, value);
                    continue;
                }
            };
            let at = field as usize;
            if std::mem::replace(&mut seen[at], true) {
                return Err(de::Error::duplicate_field(FIELDS[at].0));
            }
            match field {
                Field::Id => e.id = map.next_value()?,
                Field::ConversationId => e.conversation_id = map.next_value()?,
                Field::Title => e.title = map.next_value()?,
                Field::TitleSet => e.title_set = map.next_value()?,
                Field::CreatedAt => e.created_at = map.next_value()?,
                Field::UpdatedAt => e.updated_at = map.next_value()?,
                Field::Status => e.status = map.next_value()?,
                Field::LastAssistantReply => e.last_assistant_reply = map.next_value()?,
                Field::Thinking => e.thinking = map.next_value()?,
                Field::RefusalReason => e.refusal_reason = map.next_value()?,
                Field::FailureReason => e.failure_reason = map.next_value()?,
                Field::LastToolCall => e.last_tool_call = map.next_value()?,
                Field::TokenUsage => e.token_usage = map.next_value()?,
                Field::ActiveTokens => e.active_tokens = map.next_value()?,
                Field::ChildProcesses => e.child_processes = map.next_value()?,
                Field::HeadId => e.head_id = map.next_value()?,
                Field::MessageCount => e.message_count = map.next_value()?,
                Field::ForkedFrom => e.forked_from = map.next_value()?,
                Field::LogBytes => e.log_bytes = map.next_value()?,
            }
        }
        for required in [Field::Id, Field::Title, Field::CreatedAt, Field::UpdatedAt] {
            if !seen[required as usize] {
                return Err(de::Error::missing_field(FIELDS[required as usize].0));
            }
        }
        e.extra = extra;
        Ok(e)
    }

    /// Not an object: refused like the derive refuses it, naming the type.
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<IndexEntry, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(de::Error::invalid_type(de::Unexpected::Seq, &self))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The reader before this one: the derive, with the unknown members
    /// flattened into `extra`.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Derived {
        id: String,
        #[serde(default)]
        conversation_id: Option<String>,
        title: String,
        #[serde(default)]
        title_set: bool,
        created_at: String,
        updated_at: String,
        #[serde(default)]
        status: super::super::Status,
        #[serde(default)]
        last_assistant_reply: Option<String>,
        #[serde(default)]
        thinking: Option<String>,
        #[serde(default)]
        refusal_reason: Option<String>,
        #[serde(default)]
        failure_reason: Option<String>,
        #[serde(default)]
        last_tool_call: Option<Value>,
        #[serde(default)]
        token_usage: Map<String, Value>,
        #[serde(default)]
        active_tokens: Option<u64>,
        #[serde(default)]
        child_processes: Vec<Value>,
        #[serde(default)]
        head_id: Option<String>,
        #[serde(default)]
        message_count: u64,
        #[serde(default)]
        forked_from: Option<super::super::Lineage>,
        #[serde(default)]
        log_bytes: u64,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    fn full() -> Value {
        json!({"id": "s1", "conversationId": "c", "title": "t", "titleSet": true,
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-02T00:00:00.000Z",
            "status": "completed", "lastAssistantReply": "r", "thinking": null,
            "refusalReason": null, "failureReason": "f", "lastToolCall": {"name": "x"},
            "tokenUsage": {"input_tokens": 3}, "activeTokens": 7, "childProcesses": [1],
            "headId": "m", "messageCount": 2, "forkedFrom": {"sessionId": "a", "messageId": null},
            "logBytes": 99, "newer": {"k": [1, 2]}, "zz": 1})
    }

    #[test]
    fn reads_what_the_derive_reads_and_refuses_what_it_refuses() {
        let mut cases = vec![full()];
        for required in ["id", "title", "createdAt", "updatedAt"] {
            let mut v = full();
            v.as_object_mut().unwrap().shift_remove(required);
            cases.push(v);
        }
        for (field, bad) in [
            ("titleSet", json!("yes")),
            ("status", json!("sleeping")),
            ("messageCount", json!(-1)),
            ("logBytes", json!(null)),
            ("forkedFrom", json!({"sessionId": 1})),
            ("tokenUsage", json!([])),
            ("activeTokens", json!(1.5)),
            ("thinking", json!(null)),
        ] {
            let mut v = full();
            v[field] = bad;
            cases.push(v);
        }
        cases.push(json!({"id": "s", "title": "", "createdAt": "", "updatedAt": ""}));
        cases.push(json!([1, 2]));
        cases.push(json!("entry"));
        for case in cases {
            let text = case.to_string();
            let ours = serde_json::from_str::<IndexEntry>(&text);
            let derived = serde_json::from_str::<Derived>(&text);
            assert_eq!(ours.is_ok(), derived.is_ok(), "{text}: {ours:?}");
            if let (Ok(ours), Ok(d)) = (ours, derived) {
                assert_eq!(ours.id, d.id);
                assert_eq!(ours.forked_from, d.forked_from);
                assert_eq!(ours.token_usage, d.token_usage);
                assert_eq!(ours.log_bytes, d.log_bytes);
                assert_eq!(ours.extra, d.extra, "{text}");
                // Written back, the entry is the same bytes in §10.2's order.
                assert_eq!(
                    serde_json::to_string(&ours).unwrap(),
                    serde_json::to_string(&serde_json::from_value::<IndexEntry>(case).unwrap())
                        .unwrap()
                );
            }
        }
    }

    #[test]
    fn a_member_given_twice_is_refused_naming_it() {
        let text =
            r#"{"id":"a","title":"","createdAt":"","updatedAt":"","logBytes":1,"logBytes":2}"#;
        let err = serde_json::from_str::<IndexEntry>(text).unwrap_err();
        assert!(
            err.to_string().contains("duplicate field `logBytes`"),
            "{err}"
        );
    }
}
