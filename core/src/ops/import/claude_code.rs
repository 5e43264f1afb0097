//! Claude Code transcripts (FORMAT.md §22.2): `user` / `assistant` / `system`
//! lines with a `uuid` become messages with that id and `parentUuid` as their
//! parent; inline sidechain lines go to a subagent; a compact boundary and its
//! summary become a compaction; everything else is kept as `import` records.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::source::{is_sidechain_file, SourceFile};
use super::{message, path_id, timestamp, Converted, Item};

pub(super) fn convert(path: &Path, file: &SourceFile) -> Converted {
    let sidechain_file = is_sidechain_file(path);
    let mut out = Converted::default();
    // Every uuid of the file with its parent, for titles and sidechain roots.
    let mut parents: HashMap<&str, Option<&str>> = HashMap::new();
    for (_, o) in file.objects() {
        if let Some(u) = o.get("uuid").and_then(Value::as_str) {
            parents
                .entry(u)
                .or_insert(o.get("parentUuid").and_then(Value::as_str));
        }
        if out.session_id.is_none() {
            out.session_id = path_id(o.get("sessionId"));
        }
        if out.project.is_none() {
            out.project = o.get("cwd").and_then(Value::as_str).map(PathBuf::from);
        }
        if out.created_at.is_none() {
            out.created_at = timestamp(o.get("timestamp"));
        }
        if sidechain_file && out.agent_id.is_none() {
            out.agent_id = path_id(o.get("agentId"));
        }
    }
    if sidechain_file && out.agent_id.is_none() {
        out.agent_id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_prefix("agent-"))
            .and_then(|s| path_id(Some(&Value::from(s))));
    }
    // The title as Claude Code shows it: the summary of a branch of this file
    // (a `summary` line names its branch by the leaf's uuid; the last one
    // wins), else the last summary, else the first prompt typed.
    let summaries: Vec<(bool, &str)> = file
        .objects()
        .filter(|(_, o)| o.get("type").and_then(Value::as_str) == Some("summary"))
        .filter_map(|(_, o)| {
            let own = o
                .get("leafUuid")
                .and_then(Value::as_str)
                .is_some_and(|l| parents.contains_key(l));
            let text = o.get("summary").and_then(Value::as_str)?;
            Some((own, text))
        })
        .filter(|(_, s)| !s.trim().is_empty())
        .collect();
    out.title = summaries
        .iter()
        .rev()
        .find(|(own, _)| *own)
        .or(summaries.last())
        .map(|(_, s)| super::title_of(s))
        .or_else(|| {
            file.objects()
                .filter(|(_, o)| {
                    o.get("type").and_then(Value::as_str) == Some("user")
                        && o.get("isMeta") != Some(&Value::Bool(true))
                        && o.get("isSidechain") != Some(&Value::Bool(true))
                        && o.get("isCompactSummary") != Some(&Value::Bool(true))
                })
                .find_map(|(_, o)| {
                    o.get("message")
                        .and_then(|m| m.get("content"))
                        .and_then(prompt)
                })
        });

    // Ids written so far, per target log (`None`: the session).
    let mut written: HashMap<Option<String>, HashSet<String>> = HashMap::new();
    let mut last_boundary: Option<String> = None;
    for (n, o) in file.objects() {
        let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
        let uuid = o
            .get("uuid")
            .and_then(Value::as_str)
            .filter(|u| crate::format::ids::validate_message_id(u).is_ok());
        let item = match (kind, uuid) {
            ("user" | "assistant" | "system", Some(uuid)) => {
                let agent = if o.get("isSidechain") == Some(&Value::Bool(true)) && !sidechain_file {
                    Some(
                        path_id(o.get("agentId"))
                            .unwrap_or_else(|| format!("sidechain-{}", root_of(uuid, &parents))),
                    )
                } else {
                    None
                };
                let ids = written.entry(agent.clone()).or_default();
                if ids.contains(uuid) {
                    out.items.push(Item::record(
                        n,
                        format!("uuid {uuid} repeats an earlier line's: kept as a record"),
                    ));
                    continue;
                }
                let (item, boundary) =
                    line_message(n, o, kind, uuid, ids, last_boundary.as_deref());
                if agent.is_none() {
                    if boundary {
                        last_boundary = Some(uuid.to_string());
                    } else if kind != "system" {
                        last_boundary = None;
                    }
                }
                ids.insert(uuid.to_string());
                Item { agent, ..item }
            }
            ("user" | "assistant" | "system", None) => Item::record(
                n,
                format!("a {kind} line without a valid uuid: kept as a record"),
            ),
            ("summary", _) => Item::record(
                n,
                "summary: kept as a record (a title when it names a branch of this file)",
            ),
            (k, _) => Item::record(
                n,
                format!(
                    "{} line: not modelled, kept as a record",
                    if k.is_empty() { "untyped" } else { k }
                ),
            ),
        };
        out.items.push(item);
    }
    out
}

/// The root of the sidechain `uuid` belongs to (its first line's uuid).
fn root_of<'a>(uuid: &'a str, parents: &HashMap<&'a str, Option<&'a str>>) -> &'a str {
    let mut at = uuid;
    // Bounded: a loop in the parents must not hang the import.
    for _ in 0..parents.len() {
        match parents.get(at).copied().flatten() {
            Some(p) if parents.contains_key(p) => at = p,
            _ => break,
        }
    }
    at
}

/// The message of a `user` / `assistant` / `system` line, and whether it is a
/// compact boundary. `known`: the ids already in its log.
fn line_message(
    n: u64,
    o: &Map<String, Value>,
    kind: &str,
    uuid: &str,
    known: &HashSet<String>,
    after_boundary: Option<&str>,
) -> (Item, bool) {
    let mut note = None;
    let boundary =
        kind == "system" && o.get("subtype").and_then(Value::as_str) == Some("compact_boundary");
    let mut parent = o.get("parentUuid").and_then(Value::as_str);
    if boundary && parent.is_none() {
        // A boundary starts a new root in the source; its logical parent keeps
        // the tree whole, and the compaction hides what came before.
        parent = o.get("logicalParentUuid").and_then(Value::as_str);
    }
    if let Some(p) = parent {
        if !known.contains(p) {
            note = Some(format!(
                "parentUuid {p} is not an earlier line of this transcript: imported as a root"
            ));
            parent = None;
        }
    }
    let role = match kind {
        "system" => "system",
        "assistant" => "assistant",
        _ => "user",
    };
    let mut m = message(uuid, parent, role, timestamp(o.get("timestamp")));
    let body = o.get("message").and_then(Value::as_object);
    let content = match kind {
        "system" => o.get("content").cloned(),
        _ => body.and_then(|b| b.get("content")).cloned(),
    };
    if content.is_none() {
        note.get_or_insert_with(|| format!("a {kind} line without content"));
    }
    m.insert("content".into(), content.unwrap_or(Value::Null));
    if o.get("isMeta") == Some(&Value::Bool(true)) || kind == "system" {
        m.insert("visible".into(), false.into());
    }
    if let Some(usage) = body.and_then(|b| b.get("usage")).filter(|u| u.is_object()) {
        m.insert("meta".into(), serde_json::json!({ "usage": usage }));
    }
    let summary = o.get("isCompactSummary") == Some(&Value::Bool(true));
    let item = if summary && parent.is_some() && parent == after_boundary {
        Item::compaction(n, m)
    } else {
        Item::message(n, m)
    };
    (item.noted(note), boundary)
}

/// The markup Claude Code wraps around what is not typed by the user: these
/// elements are dropped from a prompt (`command-name` and `command-args` are
/// shown as the slash command they record).
const NOT_TYPED: [&str; 7] = [
    "command-message",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "system-reminder",
    "bash-stdout",
    "bash-stderr",
];

/// A user line's content as Claude Code lists it as a prompt: a slash command
/// as `/name args`, a shell escape as `! command`, any other text without the
/// markup of [`NOT_TYPED`], white space collapsed; `None` when nothing typed
/// is left (a tool result, command output, an interruption notice).
pub(super) fn prompt(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            if blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            {
                return None;
            }
            crate::format::records::content_text(content)?
        }
        _ => return None,
    };
    if let Some(name) = element(&text, "command-name") {
        let args = element(&text, "command-args").unwrap_or_default();
        let name = name.trim();
        let name = if name.starts_with('/') {
            name.to_string()
        } else {
            format!("/{name}")
        };
        return Some(super::title_of(&format!("{name} {args}"))).filter(|t| t != "/");
    }
    if let Some(cmd) = element(&text, "bash-input") {
        return Some(super::title_of(&format!("! {cmd}")));
    }
    let mut rest = text;
    for tag in NOT_TYPED {
        rest = without_element(&rest, tag);
    }
    let title = super::title_of(&rest);
    (!title.is_empty() && !title.starts_with("[Request interrupted by user")).then_some(title)
}

/// The text inside the first `<tag>…</tag>` of `text`.
fn element<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..]
        .find(&format!("</{tag}>"))
        .map_or(text.len(), |e| start + e);
    Some(&text[start..end])
}

/// `text` without its `<tag>…</tag>` elements (an unclosed one runs to the end).
fn without_element(text: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        out.push_str(&rest[..i]);
        out.push(' ');
        rest = match rest[i..].find(&close) {
            Some(e) => &rest[i + e + close.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::prompt;
    use serde_json::json;

    #[test]
    fn prompts_lose_claude_code_markup() {
        for (content, want) in [
            (
                json!("<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n<command-args>fix the   build</command-args>"),
                Some("/orchestrator fix the build"),
            ),
            (json!("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"), Some("/clear")),
            (json!("<local-command-stdout>done</local-command-stdout>"), None),
            (json!("<local-command-caveat>Caveat: generated</local-command-caveat>"), None),
            (json!("<system-reminder>be nice</system-reminder>\n  Fix the\n greeting "), Some("Fix the greeting")),
            (json!("[Request interrupted by user]"), None),
            (json!([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]), None),
            (json!([{"type": "text", "text": "Hello\tthere"}]), Some("Hello there")),
            (json!("<bash-input>ls -la</bash-input>"), Some("! ls -la")),
        ] {
            assert_eq!(prompt(&content).as_deref(), want, "{content}");
        }
    }
}
