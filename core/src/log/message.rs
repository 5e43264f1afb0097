//! A message of a view as hosts receive it: its JSON text, shared with the
//! buffer it was read from where no later record changed it.

use serde_json::{Map, Value};

use crate::log::LineText;

/// One message of a view, as a JSON object in text form. Messages that no later
/// record changed are handed out exactly as stored, without re-serialising.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    id: String,
    parent_id: Option<String>,
    json: LineText,
}

impl Message {
    /// The message id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The parent message id; `None` for a root message.
    pub fn parent_id(&self) -> Option<&str> {
        self.parent_id.as_deref()
    }

    /// The message as a JSON object text.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The message parsed.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    pub(crate) fn from_shared(
        id: String,
        parent_id: Option<String>,
        json: impl Into<LineText>,
    ) -> Message {
        Message {
            id,
            parent_id,
            json: json.into(),
        }
    }

    pub(crate) fn from_map(
        id: String,
        parent_id: Option<String>,
        map: &Map<String, Value>,
    ) -> Message {
        Message {
            id,
            parent_id,
            json: serde_json::to_string(map).unwrap_or_default().into(),
        }
    }
}

/// Join messages into one JSON array text (how views cross the C ABI).
pub fn to_json_array(messages: &[Message]) -> String {
    let mut out =
        String::with_capacity(messages.iter().map(|m| m.json.len() + 1).sum::<usize>() + 2);
    out.push('[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&m.json);
    }
    out.push(']');
    out
}

/// The results of [`Session::append_groups`] as one JSON array text, one
/// entry per group: `{"ok": [messages]}`, or `{"error": {"code", "message",
/// "errno"}}` with the error kind's name (how they cross the C ABI and reach
/// the bindings).
///
/// [`Session::append_groups`]: crate::Session::append_groups
pub fn group_results_json(results: &[crate::error::Result<Vec<Message>>]) -> String {
    let mut out = String::from("[");
    for (i, r) in results.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match r {
            Ok(messages) => {
                out.push_str("{\"ok\":");
                out.push_str(&to_json_array(messages));
                out.push('}');
            }
            Err(e) => {
                let error = serde_json::json!({
                    "code": e.kind().name(),
                    "message": e.to_string(),
                    "errno": e.os_errno(),
                });
                out.push_str(&serde_json::json!({ "error": error }).to_string());
            }
        }
    }
    out.push(']');
    out
}
