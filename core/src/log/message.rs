//! A message of a view as hosts receive it: its JSON text, shared with the
//! buffer it was read from where no later record changed it.

use std::collections::VecDeque;
use std::sync::Arc;

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

/// A page of a view's messages, as [`take_page`] hands them out.
#[derive(Debug)]
pub enum MessagePage {
    /// Messages whose texts lie in one buffer read from the log, in order:
    /// `text[span.0..span.1]` relative to `text`'s part `start..end` is each
    /// message's JSON text. Other records may lie between them. A host can
    /// hand the part across without copying it.
    Shared {
        /// The buffer (kept alive by whoever holds the page).
        text: Arc<String>,
        /// Where the page's part of it starts.
        start: usize,
        /// Where it ends.
        end: usize,
        /// Each message's text, relative to `start`.
        spans: Vec<(usize, usize)>,
    },
    /// Messages joined into one JSON array text (see [`to_json_array`]).
    Joined(String),
}

/// Take the next page of at most `max_bytes` of text (at least one message,
/// however long) from the front of `messages`; `None` when it is empty.
/// Messages that share a read buffer make a [`MessagePage::Shared`] when `share`
/// accepts the page's part of it (a host that can only hold some texts
/// without copying says which); all others are joined.
pub fn take_page(
    messages: &mut VecDeque<Message>,
    max_bytes: usize,
    share: impl Fn(&str) -> bool,
) -> Option<MessagePage> {
    let first = messages.front()?;
    if let Some((text, start, _)) = first.json.shared() {
        let text = text.clone();
        let mut end = start;
        let mut spans = Vec::new();
        let mut run = Vec::new();
        while let Some((t, a, b)) = messages.front().and_then(|m| m.json.shared()) {
            if !Arc::ptr_eq(t, &text) || a < end || (!spans.is_empty() && b - start > max_bytes) {
                break;
            }
            spans.push((a - start, b - start));
            end = b;
            run.extend(messages.pop_front());
        }
        if share(&text[start..end]) {
            return Some(MessagePage::Shared {
                text,
                start,
                end,
                spans,
            });
        }
        return Some(MessagePage::Joined(to_json_array(&run)));
    }
    let mut page: Vec<Message> = Vec::new();
    let mut bytes = 2usize;
    while let Some(m) = messages.front() {
        let more = m.json.len() + 1;
        if m.json.shared().is_some() || (!page.is_empty() && bytes + more > max_bytes) {
            break;
        }
        bytes += more;
        page.extend(messages.pop_front());
    }
    Some(MessagePage::Joined(to_json_array(&page)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(
        messages: &[Message],
        max_bytes: usize,
        share: bool,
    ) -> Vec<std::result::Result<Vec<String>, String>> {
        let mut left: VecDeque<Message> = messages.iter().cloned().collect();
        let mut out = Vec::new();
        while let Some(p) = take_page(&mut left, max_bytes, |_| share) {
            out.push(match p {
                MessagePage::Shared {
                    text,
                    start,
                    end,
                    spans,
                } => Ok(spans
                    .iter()
                    .map(|&(a, b)| text[start..end][a..b].to_string())
                    .collect()),
                MessagePage::Joined(s) => Err(s),
            });
        }
        out
    }

    #[test]
    fn pages_share_runs_of_one_buffer_and_join_the_rest() {
        let chunk = Arc::new(String::from("{\"a\":1}\n{\"p\":0}\n{\"b\":2}\n{\"c\":3}\n"));
        let within = |text: &str| {
            let at = chunk.find(text).unwrap();
            LineText::within(Some(&chunk), &chunk[at..at + text.len()])
        };
        let m = |json: LineText| Message::from_shared("id".into(), None, json);
        let messages = [
            m(within("{\"a\":1}")),
            m(within("{\"b\":2}")), // a patch line lies between: skipped over
            m(LineText::from("{\"own\":true}")),
            m(within("{\"c\":3}")),
        ];
        assert_eq!(
            pages(&messages, 1 << 20, true),
            [
                Ok(vec!["{\"a\":1}".into(), "{\"b\":2}".into()]),
                Err("[{\"own\":true}]".into()),
                Ok(vec!["{\"c\":3}".into()]),
            ]
        );
        // A host that cannot share gets the same messages joined.
        assert_eq!(
            pages(&messages, 1 << 20, false),
            [
                Err("[{\"a\":1},{\"b\":2}]".into()),
                Err("[{\"own\":true}]".into()),
                Err("[{\"c\":3}]".into()),
            ]
        );
        // A page holds at least one message, and no more than `max_bytes`.
        assert_eq!(pages(&messages, 10, true).len(), 4);
    }
}
