//! A message of the model view before it is finished.
//!
//! Most stored messages are plain text: no tool call, tool result or blob
//! reference can be in them. For those the model view needs a few facts (id,
//! parent, whether it is a system message, excluded, its token count) and hands
//! the stored line out as it is, so the line is read for those facts only and
//! never built into a value (which was most of what an uncompacted model view
//! cost). Every other message is a value, as before.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::format::decode::{Probe, Shape};
use crate::log::LineText;
use crate::view::{token_count, tokens_of, tools};

pub(crate) enum ModelItem {
    Plain(Plain),
    /// Its value, and its stored line when that is its value as it is (no patch
    /// applied, no blob reference), so that it is handed out byte for byte.
    Full {
        map: Map<String, Value>,
        line: Option<LineText>,
    },
}

pub(crate) struct Plain {
    id: String,
    parent: Option<String>,
    facts: PlainFacts,
    line: LineText,
}

impl ModelItem {
    /// A stored message from its line; `unchanged` when no patch applies to it
    /// (else `patched` gives its value with the patches applied). `plain` are
    /// its facts when it is plain text and its probe is at hand; `None` probes
    /// the line again.
    pub(crate) fn stored(
        (id, parent): (&str, Option<&str>),
        line: LineText,
        plain: Option<Option<PlainFacts>>,
        unchanged: bool,
        patched: impl FnOnce(Value) -> Value,
    ) -> Result<ModelItem> {
        if unchanged {
            let facts = match plain {
                Some(f) => f,
                None => crate::log::probe(line.as_bytes())
                    .ok()
                    .and_then(|(_, p)| PlainFacts::of(&p)),
            };
            if let Some(facts) = facts {
                return Ok(ModelItem::Plain(Plain {
                    id: id.to_owned(),
                    parent: parent.map(str::to_owned),
                    facts,
                    line,
                }));
            }
        }
        let v: Value = serde_json::from_str(&line)
            .map_err(|err| Error::Corrupt(format!("message {id}: {err}")))?;
        let Value::Object(map) = (if unchanged { v } else { patched(v) }) else {
            return Err(Error::Corrupt(format!("message {id} is not a JSON object")));
        };
        let has_blob = crate::blobs::BLOB_FIELDS
            .iter()
            .any(|(_, r)| map.contains_key(*r));
        let line = (unchanged && !has_blob).then_some(line);
        Ok(ModelItem::Full { map, line })
    }

    /// The message as a value.
    pub(crate) fn into_map(self) -> Result<Map<String, Value>> {
        match self {
            ModelItem::Full { map, .. } => Ok(map),
            ModelItem::Plain(p) => match serde_json::from_str(&p.line) {
                Ok(Value::Object(m)) => Ok(m),
                _ => Err(Error::Corrupt(format!("message {} no longer parses", p.id))),
            },
        }
    }

    pub(crate) fn excluded(&self) -> bool {
        match self {
            ModelItem::Plain(p) => p.facts.excluded,
            ModelItem::Full { map, .. } => excluded_from_model(map),
        }
    }

    pub(crate) fn is_system(&self) -> bool {
        match self {
            ModelItem::Plain(p) => p.facts.system,
            ModelItem::Full { map, .. } => {
                map.get("role").and_then(Value::as_str) == Some("system")
            }
        }
    }

    pub(crate) fn tokens(&self) -> u64 {
        match self {
            ModelItem::Plain(p) => p.facts.tokens,
            ModelItem::Full { map, .. } => token_count(map),
        }
    }

    /// Ids of the tool calls it makes (none for a plain message).
    pub(crate) fn calls(&self) -> Vec<(String, tools::Style)> {
        match self {
            ModelItem::Plain(_) => Vec::new(),
            ModelItem::Full { map, .. } => tools::calls(map),
        }
    }

    /// Ids of the tool calls it answers (none for a plain message).
    pub(crate) fn results(&self) -> Vec<String> {
        match self {
            ModelItem::Plain(_) => Vec::new(),
            ModelItem::Full { map, .. } => tools::results(map),
        }
    }

    pub(crate) fn is_result(&self) -> bool {
        match self {
            ModelItem::Plain(_) => false,
            ModelItem::Full { map, .. } => tools::is_result(map),
        }
    }

    /// The finished message.
    pub(crate) fn into_message(self) -> crate::view::Message {
        use crate::view::Message;
        match self {
            ModelItem::Plain(p) => Message::from_shared(p.id, p.parent, p.line),
            ModelItem::Full { map, line } => {
                let id = map
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let parent = map
                    .get("parentId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match line {
                    Some(line) => Message::from_shared(id, parent, line),
                    None => Message::from_map(id, parent, &map),
                }
            }
        }
    }
}

impl From<Map<String, Value>> for ModelItem {
    fn from(map: Map<String, Value>) -> ModelItem {
        ModelItem::Full { map, line: None }
    }
}

pub(crate) fn excluded_from_model(m: &Map<String, Value>) -> bool {
    excluded_by(m.get("meta"))
}

fn excluded_by(meta: Option<&Value>) -> bool {
    meta.and_then(|x| x.get("excludeFromModel"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// What the model view needs of a plain-text message, from its probe; `None`
/// when the message may hold a tool call, a tool result or a blob reference
/// (it is then read whole).
#[derive(Clone, Copy)]
pub(crate) struct PlainFacts {
    system: bool,
    excluded: bool,
    tokens: u64,
}

impl PlainFacts {
    pub(crate) fn of(p: &Probe<'_>) -> Option<PlainFacts> {
        let role = p.role.str();
        let plain = matches!(p.content, Shape::Absent | Shape::Null | Shape::Str(_))
            && p.content_params.is_missing()
            && p.message_params.is_missing()
            && !p.has_blob()
            && role != Some("tool");
        if !plain {
            return None;
        }
        let meta: Option<Value> = match p.meta {
            Some(raw) => Some(serde_json::from_str(raw.get()).ok()?),
            None => None,
        };
        let tokens = tokens_of(meta.as_ref(), || match p.content {
            Shape::Str(n) => n,
            _ => 0,
        });
        Some(PlainFacts {
            system: role == Some("system"),
            excluded: excluded_by(meta.as_ref()),
            tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(v: Value) -> ModelItem {
        let id = v["id"].as_str().unwrap_or("m").to_owned();
        let parent = v["parentId"].as_str().map(str::to_owned);
        ModelItem::stored(
            (&id, parent.as_deref()),
            LineText::from(v.to_string()),
            None,
            true,
            |v| v,
        )
        .unwrap()
    }

    /// Every fact a plain item answers with is the one the full value gives.
    #[test]
    fn plain_items_answer_as_their_values_do() {
        let cases = [
            json!({"id": "a", "parentId": null, "role": "system", "content": "be brief"}),
            json!({"id": "b", "parentId": "a", "role": "user", "content": "h\u{e9}llo \"x\"\n"}),
            json!({"id": "c", "parentId": "b", "role": "assistant", "content": "x".repeat(4001),
                   "meta": {"tokens": 7, "excludeFromModel": true}, "extra": [1, {"a": null}]}),
            json!({"id": "d", "parentId": "c", "role": "user", "content": null, "meta": {"tokens": -1}}),
            json!({"id": "e", "parentId": "d", "role": "user"}),
        ];
        for v in cases {
            let plain = item(v.clone());
            assert!(matches!(plain, ModelItem::Plain(_)), "{v} should be plain");
            let full = ModelItem::from(v.as_object().unwrap().clone());
            assert_eq!(plain.excluded(), full.excluded(), "{v}");
            assert_eq!(plain.is_system(), full.is_system(), "{v}");
            assert_eq!(plain.tokens(), full.tokens(), "{v}");
            assert_eq!(plain.is_result(), full.is_result(), "{v}");
            assert_eq!(plain.into_map().unwrap(), full.into_map().unwrap());
        }
    }

    /// A message that may hold a call, a result or a blob is read whole.
    #[test]
    fn tool_and_blob_messages_are_read_whole() {
        let cases = [
            json!({"id": "a", "role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}),
            json!({"id": "b", "role": "assistant", "content": "",
                   "messageParams": {"tool_calls": [{"id": "c"}]}}),
            json!({"id": "c", "role": "tool", "content": "ok", "tool_call_id": "c"}),
            json!({"id": "d", "role": "user", "content": null, "contentBlob": "sha256:00"}),
            json!({"id": "e", "role": "user", "contentParams": [{"type": "tool_result"}]}),
        ];
        for v in cases {
            assert!(matches!(item(v.clone()), ModelItem::Full { .. }), "{v}");
        }
    }

    /// A patched message is its value with the patch applied, never its line.
    #[test]
    fn patched_messages_are_values() {
        let line = LineText::from(r#"{"id":"a","role":"user","content":"old"}"#);
        let m = ModelItem::stored(("a", None), line, None, false, |mut v| {
            v["content"] = json!("new");
            v
        })
        .unwrap();
        assert!(matches!(&m, ModelItem::Full { line: None, .. }));
        assert_eq!(m.into_map().unwrap()["content"], "new");
    }
}
