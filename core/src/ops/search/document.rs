//! What of a message the search cache indexes: its text (string content and
//! text blocks), its tool calls (name and input) and tool results, with its
//! role, time, the tools it calls and the calls its results answer.

use serde_json::{Map, Value};

use crate::format::ids::parse_ms;
use crate::format::records::content_text_ref;
use crate::format::tool_calls::{tool_calls, tool_results};

/// One message, as the cache indexes it.
pub(crate) struct Document<'a> {
    pub text: String,
    pub role: Option<&'a str>,
    pub ts: Option<i64>,
    /// The names of the tools it calls.
    pub tools: Vec<&'a str>,
    /// Its calls that have an id, as (call id, tool name): a result later in
    /// the log names the call by its id only.
    pub calls: Vec<(&'a str, &'a str)>,
    /// The ids of the calls whose results it carries.
    pub answers: Vec<&'a str>,
}

pub(crate) fn of(m: &Map<String, Value>) -> Document<'_> {
    let mut parts: Vec<String> = Vec::new();
    let mut push = |s: String| {
        // A `tool` message's content is also its result: index it once.
        if !s.is_empty() && !parts.contains(&s) {
            parts.push(s);
        }
    };
    if let Some(t) = m.get("content").and_then(content_text_ref) {
        push(t.into_owned());
    }
    let calls = tool_calls(m);
    for call in &calls {
        push(call.name.unwrap_or_default().to_string());
        push(call.arguments_text());
    }
    let results = tool_results(m);
    for result in &results {
        push(result.text());
    }
    Document {
        text: parts.join("\n"),
        role: m.get("role").and_then(Value::as_str),
        ts: m
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_ms)
            .map(|ms| ms as i64),
        tools: calls.iter().filter_map(|c| c.name).collect(),
        calls: calls
            .iter()
            .filter_map(|c| Some((c.id?, c.name?)))
            .collect(),
        answers: results.iter().filter_map(|r| r.call_id).collect(),
    }
}
