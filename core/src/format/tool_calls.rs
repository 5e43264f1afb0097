//! The tool calls and tool results of a message, in the two styles hosts write:
//! OpenAI's (`messageParams.tool_calls`, and a `tool` message answering one by
//! `tool_call_id`) and Anthropic's (`tool_use` and `tool_result` blocks in
//! `contentParams` or `content`). The one place that knows both: the model view,
//! the index fold, compaction and every renderer read calls and results here.

use serde::Serialize;
use serde_json::{Map, Value};

/// The message style a tool call or result is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStyle {
    /// `messageParams.tool_calls`, answered by a `tool` message.
    OpenAi,
    /// A `tool_use` block, answered by a `tool_result` block.
    Anthropic,
}

/// One tool call of a message, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    /// Which of the two styles the call is written in.
    pub style: ToolStyle,
    /// The message field it is in: `messageParams`, `contentParams` or `content`.
    pub field: &'static str,
    /// The call id a result answers with (`id`), if it has one.
    pub id: Option<&'a str>,
    /// The tool's name (OpenAI `function.name`, or `name`).
    pub name: Option<&'a str>,
    /// OpenAI `function.arguments` (usually a JSON text) or Anthropic `input`.
    pub arguments: Option<&'a Value>,
    /// The call as stored: an element of `tool_calls`, or the `tool_use` block.
    pub raw: &'a Value,
}

impl ToolCall<'_> {
    /// The arguments as text: OpenAI's argument string as it is, Anthropic's
    /// input as compact JSON; empty when there are none.
    pub fn arguments_text(&self) -> String {
        match (self.style, self.arguments) {
            (_, None) => String::new(),
            (ToolStyle::OpenAi, Some(a)) => text_of(a),
            (ToolStyle::Anthropic, Some(a)) => a.to_string(),
        }
    }
}

/// One tool result of a message, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolResult<'a> {
    /// Which of the two styles the result is written in.
    pub style: ToolStyle,
    /// The message field it is in: `content` for a `tool` message, else the
    /// field holding the `tool_result` block.
    pub field: &'static str,
    /// The id of the call it answers.
    pub call_id: Option<&'a str>,
    /// The result: the `tool` message's `content`, or the block's `content`.
    pub content: Option<&'a Value>,
}

impl ToolResult<'_> {
    /// The result as text: a string as it is, the text parts of an array of
    /// blocks, any other JSON as compact JSON; empty when there is none.
    pub fn text(&self) -> String {
        self.content.map(text_of).unwrap_or_default()
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => crate::format::records::content_text(v).unwrap_or_else(|| v.to_string()),
    }
}

/// Fields that may hold Anthropic blocks, in the order they are read.
const BLOCK_FIELDS: [&str; 2] = ["contentParams", "content"];

/// The blocks of type `kind` in a message, field by field, with their field.
fn blocks<'a>(
    m: &'a Map<String, Value>,
    kind: &'a str,
) -> impl Iterator<Item = (&'static str, &'a Value)> + 'a {
    BLOCK_FIELDS
        .into_iter()
        .filter_map(move |f| Some((f, m.get(f)?.as_array()?)))
        .flat_map(|(f, a)| a.iter().map(move |b| (f, b)))
        .filter(move |(_, b)| b.get("type").and_then(Value::as_str) == Some(kind))
}

/// The tool calls a message makes, whatever its role: OpenAI calls first, in
/// order, then `tool_use` blocks of `contentParams`, then of `content`. Calls
/// without an id are included (`id` is `None`).
pub fn tool_calls(m: &Map<String, Value>) -> Vec<ToolCall<'_>> {
    let openai = m
        .get("messageParams")
        .and_then(|p| p.get("tool_calls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            style: ToolStyle::OpenAi,
            field: "messageParams",
            id: c.get("id").and_then(Value::as_str),
            name: c
                .pointer("/function/name")
                .or_else(|| c.get("name"))
                .and_then(Value::as_str),
            arguments: c.pointer("/function/arguments"),
            raw: c,
        });
    let anthropic = blocks(m, "tool_use").map(|(field, b)| ToolCall {
        style: ToolStyle::Anthropic,
        field,
        id: b.get("id").and_then(Value::as_str),
        name: b.get("name").and_then(Value::as_str),
        arguments: b.get("input"),
        raw: b,
    });
    openai.chain(anthropic).collect()
}

/// The call an index entry shows as a message's last: the last call of the
/// first field that has any (OpenAI calls before `contentParams` blocks before
/// `content` blocks).
pub(crate) fn last_tool_call(m: &Map<String, Value>) -> Option<&Value> {
    let calls = tool_calls(m);
    let field = calls.first()?.field;
    calls.iter().rev().find(|c| c.field == field).map(|c| c.raw)
}

/// The tool results a message carries: for a `tool` message, its own (with
/// the call id from `messageParams.tool_call_id`, else `tool_call_id`), then
/// `tool_result` blocks of `contentParams`, then of `content`.
pub fn tool_results(m: &Map<String, Value>) -> Vec<ToolResult<'_>> {
    let mut out = Vec::new();
    if m.get("role").and_then(Value::as_str) == Some("tool") {
        out.push(ToolResult {
            style: ToolStyle::OpenAi,
            field: "content",
            call_id: m
                .get("messageParams")
                .and_then(|p| p.get("tool_call_id"))
                .and_then(Value::as_str)
                .or_else(|| m.get("tool_call_id").and_then(Value::as_str)),
            content: m.get("content"),
        });
    }
    out.extend(blocks(m, "tool_result").map(|(field, b)| ToolResult {
        style: ToolStyle::Anthropic,
        field,
        call_id: b.get("tool_use_id").and_then(Value::as_str),
        content: b.get("content"),
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!("a test message is an object"),
        }
    }

    #[test]
    fn calls_of_both_styles_in_order() {
        let m = map(json!({
            "role": "assistant",
            "content": [{"type": "text", "text": "x"},
                        {"type": "tool_use", "id": "t2", "name": "read", "input": {"path": "a"}}],
            "contentParams": [{"type": "tool_use", "id": "t1", "name": "grep", "input": {}}],
            "messageParams": {"tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "edit", "arguments": "{\"p\":1}"}},
                {"type": "function", "function": {"name": "noid"}}
            ]}
        }));
        let calls = tool_calls(&m);
        let got: Vec<(Option<&str>, Option<&str>, &str, String)> = calls
            .iter()
            .map(|c| (c.id, c.name, c.field, c.arguments_text()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Some("c1"),
                    Some("edit"),
                    "messageParams",
                    "{\"p\":1}".into()
                ),
                (None, Some("noid"), "messageParams", String::new()),
                (Some("t1"), Some("grep"), "contentParams", "{}".into()),
                (
                    Some("t2"),
                    Some("read"),
                    "content",
                    "{\"path\":\"a\"}".into()
                ),
            ]
        );
        assert_eq!(calls[2].raw["id"], "t1");
        assert_eq!(calls[0].style, ToolStyle::OpenAi);
        assert_eq!(calls[3].style, ToolStyle::Anthropic);
    }

    #[test]
    fn last_call_is_the_last_of_the_first_field_with_any() {
        let openai = map(
            json!({"messageParams": {"tool_calls": [{"id": "a"}, {"id": "b"}]},
            "content": [{"type": "tool_use", "id": "z"}]}),
        );
        assert_eq!(last_tool_call(&openai).unwrap()["id"], "b");
        let blocks = map(json!({"messageParams": {"tool_calls": []},
            "contentParams": [{"type": "text"}],
            "content": [{"type": "tool_use", "id": "x"}, {"type": "tool_use", "id": "y"}]}));
        assert_eq!(last_tool_call(&blocks).unwrap()["id"], "y");
        assert!(last_tool_call(&map(json!({"content": "no calls"}))).is_none());
    }

    #[test]
    fn results_of_both_styles() {
        let tool = map(json!({"role": "tool", "content": "ok",
            "messageParams": {"tool_call_id": "c1"}}));
        let r = tool_results(&tool);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].call_id, r[0].text()), (Some("c1"), "ok".to_string()));
        let legacy = map(json!({"role": "tool", "tool_call_id": "c2"}));
        assert_eq!(tool_results(&legacy)[0].call_id, Some("c2"));
        assert_eq!(tool_results(&legacy)[0].text(), "");
        let user = map(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "text", "text": "line"}]},
            {"type": "tool_result", "content": {"n": 1}}]}));
        let r = tool_results(&user);
        assert_eq!(r[0].call_id, Some("t1"));
        assert_eq!(r[0].text(), "line");
        assert_eq!((r[1].call_id, r[1].text()), (None, "{\"n\":1}".to_string()));
        assert!(tool_results(&map(json!({"role": "user", "content": "hi"}))).is_empty());
    }
}
