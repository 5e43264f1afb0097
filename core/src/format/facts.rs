//! What the index folds from a message, taken without parsing the message
//! whole: by the log reader from a probed line, and by the writer from the
//! fields a host passed. Both layers below the index build these.

use serde_json::{Map, Value};

pub(crate) fn usage_of(m: &Map<String, Value>) -> Option<&Value> {
    m.get("meta").and_then(|x| x.get("usage"))
}

/// The `usage` of a message's unparsed `meta`.
pub(crate) fn usage_in(meta: Option<&str>) -> Option<Value> {
    let meta = meta.filter(|m| m.contains("usage"))?;
    match serde_json::from_str::<Value>(meta) {
        Ok(Value::Object(mut m)) => m.remove("usage"),
        _ => None,
    }
}

/// What the index fold takes from a message without parsing it whole.
pub(crate) struct Facts<'a> {
    pub id: &'a str,
    pub role: Option<&'a str>,
    pub timestamp: Option<&'a str>,
    pub usage: Option<Value>,
}

impl<'a> Facts<'a> {
    /// The facts of a message parsed whole; `None` without a string `id`.
    pub fn of(m: &'a Map<String, Value>) -> Option<Facts<'a>> {
        Some(Facts {
            id: m.get("id")?.as_str()?,
            role: m.get("role").and_then(Value::as_str),
            timestamp: m.get("timestamp").and_then(Value::as_str),
            usage: usage_of(m).cloned(),
        })
    }
}

/// What a writer's entry folds from a message it wrote (the index's `LiveEntry::message`),
/// taken from the host's fields without building the whole record again.
pub(crate) struct Written {
    pub role: &'static str,
    pub timestamp: String,
    pub usage: Option<Value>,
    /// The fields a title, reply or tool call come from ([`TEXT_FIELDS`]), of
    /// user and assistant messages only. A list, not a `Map`: most are never
    /// looked at, and building a map hashed every key.
    pub texts: Vec<(String, Value)>,
    /// The length of its line.
    pub bytes: usize,
}

/// The fields of a message index entry's title, last reply and last tool call come from.
pub(crate) const TEXT_FIELDS: [&str; 3] = ["content", "contentParams", "messageParams"];

impl Written {
    /// `fields`: the message's fields other than those the store sets.
    pub fn new(
        role: &'static str,
        timestamp: String,
        mut fields: Vec<(String, Value)>,
        bytes: usize,
    ) -> Written {
        let usage = fields
            .iter()
            .find(|(k, _)| k == "meta")
            .and_then(|(_, m)| m.get("usage").cloned());
        let keep_texts = matches!(role, "user" | "assistant");
        fields.retain(|(k, _)| keep_texts && is_text_field(k));
        Written {
            role,
            timestamp,
            usage,
            texts: fields,
            bytes,
        }
    }
}

pub(crate) fn is_text_field(k: &str) -> bool {
    TEXT_FIELDS.contains(&k)
}
