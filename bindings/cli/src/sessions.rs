//! Reading commands: list, show, tree, export.

use std::collections::HashMap;
use std::fmt::Write as _;

use comfy_table::{presets, Table};
use serde_json::{json, Value};
use sessionkit::{IndexEntry, ModelViewOptions, TreeNode};

use crate::cli::ExportFormat;
use crate::ctx::{
    clip, now, one_line, paint, relative, role_style, Ctx, Output, Result, ShortIds, BOLD, DIM,
    GOOD, WARN,
};
use crate::render::{body, heading};

pub fn status_name(e: &IndexEntry) -> String {
    serde_json::to_value(e.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn lineage(e: &IndexEntry, ids: &ShortIds<'_>) -> String {
    match &e.forked_from {
        Some(l) => format!("fork of {}", ids.of(&l.session_id)),
        None => String::new(),
    }
}

/// Table text without the trailing blanks comfy-table pads cells with.
pub fn table_text(t: &Table) -> String {
    let mut s: String = t
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    s.push('\n');
    s
}

pub fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING);
    t.set_header(header.iter().map(|h| paint(BOLD, h)));
    t
}

pub fn list(ctx: &Ctx, options: sessionkit::ListOptions) -> Result<Output> {
    let page = ctx.store.list_page(&options)?;
    if ctx.json {
        return Output::json(&page.sessions);
    }
    if page.total == 0 {
        return Ok(Output::Text(format!(
            "no sessions for project {} (store {})\n",
            ctx.store.project_root().display(),
            ctx.store.dir().display()
        )));
    }
    let mut text = if page.sessions.len() == page.total {
        // Every session is listed: their ids are the ones to tell apart.
        sessions_table(&page.sessions, &[])?
    } else {
        // Short ids stay unambiguous among the sessions not on the page.
        let all = ctx.store.session_ids()?;
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        sessions_table(&page.sessions, &all)?
    };
    let (from, shown) = (options.offset.min(page.total), page.sessions.len());
    if shown < page.total {
        let _ = writeln!(
            text,
            "{}",
            paint(
                DIM,
                format!(
                    "sessions {}–{} of {} (--offset {} for the next)",
                    from + shown.min(1),
                    from + shown,
                    page.total,
                    from + shown
                )
            )
        );
    }
    Ok(Output::Text(text))
}

/// The sessions as a table, one row each. Ids are shortened to the prefixes
/// that tell them apart from each other and from `others` (the sessions of the
/// project not in the table, for a page).
pub fn sessions_table(sessions: &[IndexEntry], others: &[&str]) -> Result<String> {
    let now = now()?;
    let ids = ShortIds::new(
        sessions
            .iter()
            .map(|e| e.id.as_str())
            .chain(others.iter().copied()),
    );
    let mut t = new_table(&[
        "ID", "TITLE", "STATUS", "UPDATED", "MESSAGES", "TOKENS", "LINEAGE",
    ]);
    for e in sessions {
        // A conversation's own id is what its host knows it by.
        let id = ids.of(&e.id).to_string();
        t.add_row(vec![
            match &e.conversation_id {
                Some(c) => format!("{id} ({})", clip(&one_line(c), 30)),
                None => id,
            },
            clip(&one_line(&e.title), 40),
            status_name(e),
            relative(&e.updated_at, now),
            e.message_count.to_string(),
            e.token_totals()
                .total
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            lineage(e, &ids),
        ]);
    }
    Ok(table_text(&t))
}

/// A summary line of what reading a log found, if anything.
fn report_note(r: &sessionkit::ReadReport) -> Option<String> {
    let mut parts = Vec::new();
    if !r.skipped.is_empty() {
        parts.push(format!("{} unreadable line(s) skipped", r.skipped.len()));
    }
    if let Some(t) = &r.torn_tail {
        parts.push(format!("torn last line {} ({})", t.line, t.reason));
    }
    if !r.broken_chains.is_empty() {
        parts.push(format!(
            "{} message(s) with a missing parent",
            r.broken_chains.len()
        ));
    }
    if !r.duplicate_ids.is_empty() {
        parts.push(format!("duplicate ids: {}", r.duplicate_ids.join(", ")));
    }
    if !r.missing_blobs.is_empty() {
        parts.push(format!(
            "{} value(s) missing from the blob store (shown as null)",
            r.missing_blobs.len()
        ));
    }
    parts.extend(r.warnings.iter().cloned());
    (!parts.is_empty()).then(|| format!("log problems: {}", parts.join("; ")))
}

/// A checkpointer's thread (LangGraph's): one line per checkpoint, oldest
/// first in each namespace, with its step, source, channels and writes.
fn render_checkpoints(s: &mut String, cps: &[sessionkit::CheckpointSummary]) {
    if cps.is_empty() {
        return;
    }
    let _ = writeln!(s, "{}", paint(BOLD, format!("{} checkpoints", cps.len())));
    let mut ns: Option<&str> = None;
    for c in cps {
        if ns != Some(c.ns.as_str()) {
            ns = Some(&c.ns);
            let name = if c.ns.is_empty() {
                "(root)"
            } else {
                c.ns.as_str()
            };
            let _ = writeln!(s, "  {}", paint(DIM, format!("namespace {name}")));
        }
        let meta = |k: &str| {
            c.metadata.get(k).map(|v| match v {
                Value::String(t) => t.clone(),
                other => other.to_string(),
            })
        };
        let _ = writeln!(
            s,
            "  {} {}  step {} · {} · {}{}{}",
            paint(BOLD, &c.id),
            paint(DIM, c.ts.as_deref().unwrap_or("")),
            meta("step").unwrap_or_else(|| "?".into()),
            meta("source").unwrap_or_else(|| "?".into()),
            if c.channels.is_empty() {
                "no values".into()
            } else {
                c.channels.join(", ")
            },
            if c.writes > 0 {
                format!(" · {} pending writes", c.writes)
            } else {
                String::new()
            },
            match &c.parent_id {
                Some(p) => paint(DIM, format!(" · after {p}")),
                None => String::new(),
            }
        );
    }
    s.push('\n');
}

/// Which messages `show` prints.
pub enum View {
    /// What a person reads: the active path with compacted originals folded.
    Transcript,
    /// Root to head, every message as stored.
    ActivePath,
    /// What the model would get on resume.
    Model(ModelViewOptions),
}

pub fn show(ctx: &Ctx, id: &str, full: bool, which: View) -> Result<Output> {
    let id = ctx.resolve(id)?;
    if let View::Model(options) = &which {
        let msgs = ctx.store.model_view(&id, options)?;
        let values: Vec<Value> = msgs.iter().map(|m| m.value()).collect();
        if ctx.json {
            return Output::json(json!({"session": id, "messages": values}));
        }
        let mut s = format!(
            "{} {}  {}\n",
            paint(BOLD, "model view of"),
            id,
            paint(DIM, format!("({} messages)", values.len()))
        );
        for m in &values {
            render_message(
                &mut s,
                m,
                m["id"].as_str().unwrap_or(""),
                &model_flags(m),
                full,
            );
        }
        return Ok(Output::Text(s));
    }

    let view = ctx.store.read_session(&id)?;
    let entry = ctx.store.session_entry(&id)?;
    let messages = match which {
        View::ActivePath => view.active_path()?,
        _ => view.ui_view()?,
    };
    let messages: Vec<Value> = messages.iter().map(|m| m.value()).collect();
    let tree = view.tree()?;
    let branches = view.branches()?;
    let subagents = ctx.store.list_subagents(&id)?;
    let checkpoints = ctx.store.checkpoint_summaries(&id)?;
    if ctx.json {
        return Output::json(json!({
            "session": entry,
            "messages": messages,
            "branches": branches,
            "subagents": subagents,
            "checkpoints": checkpoints,
            "report": view.report(),
        }));
    }
    let all_ids: Vec<&str> = tree.iter().map(|n| n.id.as_str()).collect();
    let short_ids = ShortIds::new(all_ids.iter().copied());
    let short = |m: &str| short_ids.of(m).to_string();

    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} {}{}",
        paint(BOLD, one_line(&entry.title)),
        paint(DIM, &id),
        match &entry.conversation_id {
            Some(c) => paint(DIM, format!(" (conversation {c:?})")),
            None => String::new(),
        }
    );
    let _ = writeln!(
        s,
        "{}",
        paint(
            DIM,
            format!(
                "status {} · {} messages · created {} · updated {}{}",
                status_name(&entry),
                entry.message_count,
                entry.created_at,
                entry.updated_at,
                match &entry.forked_from {
                    Some(l) => format!(
                        " · fork of {}{}",
                        l.session_id,
                        l.message_id
                            .as_deref()
                            .map(|m| format!(" at {m}"))
                            .unwrap_or_default()
                    ),
                    None => String::new(),
                }
            )
        )
    );
    if let Some(note) = report_note(view.report()) {
        let _ = writeln!(s, "{}", paint(WARN, note));
    }
    s.push('\n');
    render_checkpoints(&mut s, &checkpoints);

    let children: HashMap<&str, usize> = tree.iter().map(|n| (n.id.as_str(), n.children)).collect();
    // Each run of compacted messages is shown collapsed, with the summary that
    // replaces it: the summaries on the path, paired with the runs in order.
    let mut summaries = messages
        .iter()
        .filter(|m| m.pointer("/meta/compaction").is_some() && m["compacted"] != true);
    let mut in_run = false;
    let branch_notes = |s: &mut String, mid: &str| {
        if children.get(mid).copied().unwrap_or(0) < 2 {
            return;
        }
        for b in branches
            .iter()
            .filter(|b| !b.is_active && b.fork_point_id.as_deref() == Some(mid))
        {
            let _ = writeln!(
                s,
                "  {} {}\n",
                paint(WARN, "⑂ branch"),
                paint(
                    DIM,
                    format!(
                        "another branch leaves {}: leaf {} ({} messages); `sessionkit tree` shows it",
                        short(mid),
                        short(&b.leaf_id),
                        b.length
                    )
                )
            );
        }
    };
    for (k, m) in messages.iter().enumerate() {
        let mid = m["id"].as_str().unwrap_or("");
        let compacted = m["compacted"] == true;
        if compacted && !full {
            if !in_run {
                in_run = true;
                let run: Vec<&str> = messages[k..]
                    .iter()
                    .take_while(|m| m["compacted"] == true)
                    .map(|m| m["id"].as_str().unwrap_or(""))
                    .collect();
                let summary = summaries.next();
                let _ = writeln!(
                    s,
                    "{} {}",
                    paint(role_style("system"), "compacted"),
                    paint(
                        DIM,
                        format!(
                            "{} message{} ({} … {}){}",
                            run.len(),
                            if run.len() == 1 { "" } else { "s" },
                            short(run[0]),
                            short(run[run.len() - 1]),
                            summary
                                .map(|m| format!(
                                    ", replaced by summary {}:",
                                    short(m["id"].as_str().unwrap_or(""))
                                ))
                                .unwrap_or_default()
                        )
                    )
                );
                if let Some(sm) = summary {
                    for l in body(sm, false) {
                        let _ = writeln!(s, "    {l}");
                    }
                }
                s.push('\n');
                for r in &run {
                    branch_notes(&mut s, r);
                }
            }
            continue;
        }
        in_run = false;
        if m.pointer("/meta/compaction").is_some() && !full {
            let _ = writeln!(
                s,
                "{}\n",
                paint(
                    DIM,
                    format!(
                        "(compaction summary {} written here; shown above)",
                        short(mid)
                    )
                )
            );
        } else {
            let mut flags = Vec::new();
            if m["visible"] == false {
                flags.push("hidden");
            }
            if compacted {
                flags.push("compacted");
            }
            if m.pointer("/meta/compaction").is_some() {
                flags.push("compaction summary");
            }
            if m.pointer("/meta/synthetic").is_some() {
                flags.push("synthetic");
            }
            render_message(&mut s, m, &short(mid), &flags, full);
        }
        branch_notes(&mut s, mid);
    }
    if view.head().is_none() && !tree.is_empty() {
        let _ = writeln!(
            s,
            "{}",
            paint(
                DIM,
                "(the head is before the first message: the active path is empty)"
            )
        );
    }
    for a in &subagents {
        let _ = writeln!(
            s,
            "{} {} {}",
            paint(role_style("assistant"), "subagent"),
            a["agentId"].as_str().unwrap_or("?"),
            paint(
                DIM,
                format!(
                    "{} {}",
                    a["status"].as_str().unwrap_or("?"),
                    a.get("result")
                        .map(|r| clip(&r.to_string(), 80))
                        .unwrap_or_default()
                )
            )
        );
    }
    Ok(Output::Text(s))
}

fn model_flags(m: &Value) -> Vec<&'static str> {
    let mut f = Vec::new();
    if m.pointer("/meta/compaction").is_some() {
        f.push("compaction summary");
    }
    if m.pointer("/meta/synthetic").is_some() {
        f.push("synthetic");
    }
    f
}

pub fn render_message(s: &mut String, m: &Value, id: &str, flags: &[&str], full: bool) {
    let _ = writeln!(s, "{}", heading(m, id, flags));
    for l in body(m, full) {
        let _ = writeln!(s, "    {l}");
    }
    s.push('\n');
}

pub fn tree(ctx: &Ctx, id: &str) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let view = ctx.store.read_session(&id)?;
    let nodes = view.tree()?;
    let branches = view.branches()?;
    if ctx.json {
        return Output::json(json!({
            "session": id,
            "head": view.head(),
            "nodes": nodes,
            "branches": branches,
        }));
    }
    let all: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let short_ids = ShortIds::new(all.iter().copied());
    let short = |m: &str| short_ids.of(m).to_string();
    let width = nodes.iter().map(|n| short(&n.id).len()).max().unwrap_or(8);
    let by_id: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut kids: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match n.parent_id.as_deref().filter(|p| by_id.contains_key(p)) {
            Some(p) => kids.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    let mut s = format!(
        "{} {}  {}\n",
        paint(BOLD, "tree of"),
        id,
        paint(
            DIM,
            format!(
                "({} messages, {} branches; * active path)",
                nodes.len(),
                branches.len()
            )
        )
    );
    let line = |n: &TreeNode, lead: &str| -> String {
        let mark = if n.on_active_path { "*" } else { " " };
        let mut tail = String::new();
        if n.is_head {
            tail.push_str(&format!("  {}", paint(WARN, "← HEAD")));
        }
        if n.compacted {
            tail.push_str(&format!("  {}", paint(DIM, "(compacted)")));
        }
        if n.parent_id
            .as_deref()
            .is_some_and(|p| !by_id.contains_key(p))
        {
            tail.push_str(&format!("  {}", paint(WARN, "(parent missing)")));
        }
        format!(
            "{mark} {lead}{:<width$}  {}  {}{tail}\n",
            short(&n.id),
            paint(role_style(&n.role), format!("{:<9}", n.role)),
            clip(&n.preview, 60),
        )
    };
    // Iterative walk: a chain stays at one indent; a message with several
    // children opens one indented lane per child.
    let mut stack: Vec<(usize, String, String)> = Vec::new(); // (node, first lead, rest lead)
    for &r in roots.iter().rev() {
        stack.push((r, String::new(), String::new()));
    }
    while let Some((i, first, rest)) = stack.pop() {
        s.push_str(&line(&nodes[i], &first));
        let ch = kids.get(nodes[i].id.as_str()).cloned().unwrap_or_default();
        match ch.len() {
            0 => {}
            1 => stack.push((ch[0], rest.clone(), rest)),
            n => {
                for (k, &c) in ch.iter().enumerate().rev() {
                    let last = k == n - 1;
                    let f = format!("{rest}{}", if last { "└─ " } else { "├─ " });
                    let r = format!("{rest}{}", if last { "   " } else { "│  " });
                    stack.push((c, f, r));
                }
            }
        }
    }
    s.push('\n');
    let mut t = new_table(&[
        "BRANCH LEAF",
        "LENGTH",
        "FORKS FROM ACTIVE AT",
        "ACTIVE",
        "LAST MESSAGE",
    ]);
    for b in &branches {
        t.add_row(vec![
            short(&b.leaf_id),
            b.length.to_string(),
            b.fork_point_id
                .as_deref()
                .map(&short)
                .unwrap_or_else(|| "-".into()),
            if b.is_active { "yes".into() } else { "".into() },
            b.last_timestamp.clone().unwrap_or_default(),
        ]);
    }
    s.push_str(&table_text(&t));
    Ok(Output::Text(s))
}

pub fn export(ctx: &Ctx, id: &str, format: ExportFormat) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let format = match format {
        ExportFormat::Jsonl => sessionkit::ExportFormat::Jsonl,
        ExportFormat::Markdown => sessionkit::ExportFormat::Markdown,
        ExportFormat::Json => sessionkit::ExportFormat::Json,
    };
    Ok(Output::Raw(ctx.store.export_session(&id, format)?))
}

pub fn export_to(
    ctx: &Ctx,
    id: &str,
    to: crate::cli::ExportTarget,
    home: Option<std::path::PathBuf>,
) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let to = match to {
        crate::cli::ExportTarget::ClaudeCode => sessionkit::ExportTarget::ClaudeCode,
        crate::cli::ExportTarget::Codex => sessionkit::ExportTarget::Codex,
    };
    let out = ctx.store.export_to(
        &id,
        &sessionkit::ExportToOptions {
            home,
            ..sessionkit::ExportToOptions::new(to)
        },
    )?;
    if ctx.json {
        return Output::json(&out);
    }
    let mut s = format!(
        "{} {} ({} items{})\n",
        if out.written {
            paint(GOOD, "exported")
        } else {
            paint(DIM, "unchanged")
        },
        paint(BOLD, out.path.display().to_string()),
        out.items,
        if out.dropped > 0 {
            format!(", {} messages without a {to} form left out", out.dropped)
        } else {
            String::new()
        }
    );
    let _ = writeln!(s, "resume with: {}", paint(BOLD, &out.resume_command));
    if let Some(n) = &out.notice {
        let _ = writeln!(s, "{}", paint(WARN, n));
    }
    Ok(Output::Text(s))
}
