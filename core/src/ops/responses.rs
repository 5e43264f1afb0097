//! The OpenAI Responses API's input items (what the OpenAI Agents SDK keeps in
//! a session: messages, function calls, their outputs, reasoning, ...) stored as
//! sessionkit messages, so that they show in the index and the CLI and can be
//! compacted, forked and undone like any other message, and come back exactly
//! as they went in.
//!
//! An item becomes a message with:
//! - `role`: `tool` for an item whose `type` ends in `_output`; else the item's
//!   `role` (`developer` becomes `system`); `assistant` for items without one
//!   (function calls, reasoning);
//! - `content`: the item's `content`, else its `output`, moved out of the item
//!   (so that it is what renderers and compaction read, and what goes to a blob
//!   when large); `itemContent: "output"` says it came from `output`;
//! - `messageParams`: for an item with a `call_id`, the OpenAI chat-style
//!   reference the model view pairs calls and results by (`tool_calls[0].id` on
//!   a call, `tool_call_id` on an output);
//! - `item`: the rest of the item, verbatim.
//!
//! Back, the item is `item` with the content put back under its field. A message
//! some other host wrote (no `item`), a compaction summary, or a synthetic
//! "interrupted" result becomes the plain item its role and content describe.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::format::records::type_name;
use crate::ops::compaction::compaction_record;
use crate::store::session::SessionCore;
use crate::view::{Message, ModelViewOptions};

/// Which Responses items to read (`Session::responses_items`), as hosts that
/// speak JSON pass them: `{"limit": n, "modelView": bool}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ItemsOptions {
    /// The last `limit` items (all when absent).
    pub limit: Option<usize>,
    /// The model view (compaction applied) instead of the active path.
    pub model_view: bool,
}

impl ItemsOptions {
    /// Parse options from a JSON object; empty text gives the defaults.
    pub fn from_json(json: &str) -> Result<ItemsOptions> {
        crate::format::json::options_from_json("responses items options", json)
    }
}

/// The message that stores a Responses input item. Fails with `InvalidInput`
/// for an item that is not a JSON object.
pub fn item_to_message(item: Value) -> Result<Value> {
    let Value::Object(mut rest) = item else {
        return Err(Error::invalid(format!(
            "a Responses item must be a JSON object, not {}",
            type_name(&item)
        )));
    };
    let kind = rest.get("type").and_then(Value::as_str).unwrap_or("");
    let role = if kind.ends_with("_output") {
        "tool"
    } else {
        match rest.get("role").and_then(Value::as_str) {
            Some("user") => "user",
            Some("system" | "developer") => "system",
            _ => "assistant",
        }
    };
    let params = match rest.get("call_id").and_then(Value::as_str) {
        Some(call) if role == "tool" => Some(json!({ "tool_call_id": call })),
        Some(call) if kind.ends_with("_call") => {
            let name = rest.get("name").and_then(Value::as_str).unwrap_or(kind);
            Some(json!({
                "tool_calls": [{"id": call, "type": "function", "function": {"name": name}}]
            }))
        }
        _ => None,
    };
    let mut m = Map::new();
    m.insert("role".into(), role.into());
    if let Some(c) = rest.remove("content") {
        m.insert("content".into(), c);
    } else if let Some(c) = rest.remove("output") {
        m.insert("content".into(), c);
        m.insert("itemContent".into(), "output".into());
    }
    if let Some(p) = params {
        m.insert("messageParams".into(), p);
    }
    m.insert("item".into(), Value::Object(rest));
    Ok(Value::Object(m))
}

/// The parts of a stored message that make its item, borrowed from its text.
#[derive(Deserialize)]
struct Parts<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    item: Option<&'a RawValue>,
    #[serde(default, rename = "itemContent")]
    item_content: Option<String>,
    #[serde(default)]
    role: Option<Value>,
    #[serde(default, rename = "messageParams")]
    message_params: Option<Value>,
}

/// A field that is present, even as `null`, is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The Responses item a message stands for, as JSON text: the stored item
/// spliced back together without re-serialising it, or for a message that holds
/// none, the item its role and content describe.
pub fn message_to_item_json(message: &Message) -> Result<String> {
    let text = message.json();
    let parts: Parts = serde_json::from_str(text).map_err(|e| {
        Error::Internal(format!(
            "message {} of a view is not a JSON object: {e}",
            message.id()
        ))
    })?;
    let Some(item) = parts.item.map(RawValue::get).filter(|i| i.starts_with('{')) else {
        return Ok(plain_item(parts).to_string());
    };
    let Some(content) = parts.content else {
        return Ok(item.to_string());
    };
    let field = serde_json::to_string(parts.item_content.as_deref().unwrap_or("content"))
        .unwrap_or_default();
    let body = item[1..item.len() - 1].trim();
    let mut out = String::with_capacity(item.len() + field.len() + content.get().len() + 2);
    out.push('{');
    out.push_str(body);
    if !body.is_empty() {
        out.push(',');
    }
    out.push_str(&field);
    out.push(':');
    out.push_str(content.get());
    out.push('}');
    Ok(out)
}

/// The item of a message that holds none: a tool result becomes a
/// `function_call_output`, anything else an input message of its role.
fn plain_item(parts: Parts) -> Value {
    let content = parts
        .content
        .and_then(|c| serde_json::from_str::<Value>(c.get()).ok())
        .filter(|c| !c.is_null())
        .unwrap_or_else(|| Value::String(String::new()));
    let role = parts
        .role
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or("user");
    if role == "tool" {
        let call = parts
            .message_params
            .as_ref()
            .and_then(|p| p.get("tool_call_id"))
            .cloned()
            .unwrap_or(Value::Null);
        return json!({"type": "function_call_output", "call_id": call, "output": content});
    }
    let role = match role {
        "system" | "assistant" => role,
        _ => "user",
    };
    json!({"role": role, "content": content})
}

/// The items of messages, as one JSON array text.
pub fn items_json(messages: &[Message]) -> Result<String> {
    let mut out = String::from("[");
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&message_to_item_json(m)?);
    }
    out.push(']');
    Ok(out)
}

/// A session's items as a JSON array text, oldest first: the last `limit` of
/// the active path (all of it when `None`); with `model_view`, the model view
/// instead (compaction applied, a cut that never starts at a tool output, and
/// the leading system messages kept).
pub(crate) fn items(
    session: &SessionCore,
    limit: Option<usize>,
    model_view: bool,
) -> Result<String> {
    let messages = if model_view {
        let opts = ModelViewOptions {
            last_n: limit,
            ..ModelViewOptions::default()
        };
        session.model_view(&opts)?
    } else {
        let mut path = session.active_path()?;
        let keep = limit.unwrap_or(path.len()).min(path.len());
        path.drain(..path.len() - keep);
        path
    };
    items_json(&messages)
}

/// Append items in one write: once this returns, they survive a killed process.
pub(crate) fn append_items(session: &SessionCore, items: Vec<Value>) -> Result<Vec<Message>> {
    let messages = items
        .into_iter()
        .map(item_to_message)
        .collect::<Result<Vec<_>>>()?;
    session.append_batch(messages)
}

/// Make `items` (a Responses `compaction` item followed by the items kept
/// after it) the session's history as the model sees it, keeping the
/// originals: in one write, the items are appended as messages and, when
/// there was a history, a compaction record whose summary is the compaction
/// item's message and which replaces the whole model view before it. The
/// active path keeps the originals (marked compacted in the UI view); the
/// model view, and so a resume, starts at the compaction item.
pub(crate) fn replace_with_compaction(
    session: &SessionCore,
    items: Vec<Value>,
) -> Result<Vec<Message>> {
    match items.first() {
        Some(first) if first.get("type").and_then(Value::as_str) == Some("compaction") => {}
        Some(first) => {
            return Err(Error::invalid(format!(
                "the items must start with a Responses `compaction` item; the first is {}",
                match first.get("type").and_then(Value::as_str) {
                    Some(t) => format!("of type {t:?}"),
                    None => format!("{} without a `type`", type_name(first)),
                }
            )))
        }
        None => {
            return Err(Error::invalid(
                "the items must start with a Responses `compaction` item; none were given",
            ))
        }
    }
    let messages = items
        .into_iter()
        .map(item_to_message)
        .collect::<Result<Vec<_>>>()?;
    // One write: a shared handle replaces the history as it is under the lock.
    session.write_transaction(|| compact_locked(session, messages))
}

fn compact_locked(session: &SessionCore, mut messages: Vec<Value>) -> Result<Vec<Message>> {
    let view = session.read()?;
    let replaced = view.log().model_items()?;
    if view.head() != session.head().as_deref() {
        return Err(Error::Conflict(
            "the session changed while compacting; try again".into(),
        ));
    }
    if replaced.is_empty() {
        return session.append_batch(messages);
    }
    let replaces: Vec<String> = replaced
        .iter()
        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect();
    if let Some(Value::Object(summary)) = messages.first_mut() {
        summary.insert(
            "meta".into(),
            json!({"compaction": {"replaces": replaces.len()}}),
        );
    }
    let build = |stored: &[Map<String, Value>]| {
        let summary = stored
            .first()
            .ok_or_else(|| Error::Internal("empty batch".into()))?;
        let prefix = vec![Value::Object(summary.clone())];
        Ok(vec![compaction_record(summary, &replaces, prefix)])
    };
    session.append_with(messages, Some(&build))
}

/// Move the head back over the latest message and return its item (`None`
/// when the session has no head). The message stays in the log, on a branch
/// that `resume_at` or a fork can reach again.
pub(crate) fn pop_item(session: &SessionCore) -> Result<Option<String>> {
    // One write: a shared handle pops the newest item whoever added it.
    session.write_transaction(|| {
        let Some(head) = session.head() else {
            return Ok(None);
        };
        let message = session.read()?.message(&head)?;
        session.set_head(message.parent_id())?;
        message_to_item_json(&message).map(Some)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(item: Value) -> Value {
        let m = item_to_message(item).unwrap();
        let msg = Message::from_map("m1".into(), None, m.as_object().unwrap());
        serde_json::from_str(&message_to_item_json(&msg).unwrap()).unwrap()
    }

    #[test]
    fn items_come_back_as_they_went_in() {
        for item in [
            json!({"role": "user", "content": "hi"}),
            json!({"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                   "content": [{"type": "output_text", "text": "ok", "annotations": []}]}),
            json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": "c1", "output": null}),
            json!({"type": "reasoning", "id": "r1", "summary": []}),
            json!({}),
        ] {
            assert_eq!(round_trip(item.clone()), item);
        }
    }

    #[test]
    fn calls_and_outputs_carry_the_references_the_model_view_pairs() {
        let call = item_to_message(json!({"type": "function_call", "call_id": "c1", "name": "f"}));
        let call = call.unwrap();
        assert_eq!(call["role"], "assistant");
        assert_eq!(call["messageParams"]["tool_calls"][0]["id"], "c1");
        let out = item_to_message(json!({"type": "function_call_output", "call_id": "c1",
                                         "output": "x"}))
        .unwrap();
        assert_eq!(
            (&out["role"], &out["content"]),
            (&json!("tool"), &json!("x"))
        );
        assert_eq!(out["messageParams"]["tool_call_id"], "c1");
        let dev = item_to_message(json!({"role": "developer", "content": "be terse"})).unwrap();
        assert_eq!(dev["role"], "system");
        let err = item_to_message(json!("text")).unwrap_err();
        assert!(
            err.to_string()
                .contains("must be a JSON object, not a string"),
            "{err}"
        );
    }

    #[test]
    fn a_message_without_an_item_becomes_the_item_it_describes() {
        let synthetic = json!({"role": "tool", "content": "[interrupted]",
                               "messageParams": {"tool_call_id": "c9"}});
        let m = Message::from_map("m".into(), None, synthetic.as_object().unwrap());
        let item: Value = serde_json::from_str(&message_to_item_json(&m).unwrap()).unwrap();
        assert_eq!(
            item,
            json!({"type": "function_call_output", "call_id": "c9", "output": "[interrupted]"})
        );
        let summary = json!({"role": "system", "content": "The user asked for X."});
        let m = Message::from_map("s".into(), None, summary.as_object().unwrap());
        let item: Value = serde_json::from_str(&message_to_item_json(&m).unwrap()).unwrap();
        assert_eq!(item, summary);
    }
}
