//! `sessionkit search`: the core's full-text search, rendered.

use sessionkit::SearchQuery;

use crate::cli::SearchArgs;
use crate::ctx::{paint, Ctx, Output, Result, BOLD, DIM};

pub fn search(ctx: &Ctx, a: SearchArgs) -> Result<Output> {
    let query = SearchQuery {
        text: a.query.join(" "),
        all: a.all,
        role: a.role,
        session: a.session,
        since: a.since,
        until: a.until,
        tool: a.tool,
        limit: a.limit,
    };
    let results = ctx.store.search(&query)?;
    if ctx.json {
        return Output::json(&results);
    }
    let mut out = String::new();
    for dir in &results.set_aside {
        out.push_str(&format!(
            "search cache was damaged: set aside as {} and rebuilt\n",
            dir.display()
        ));
    }
    for project in &results.stale {
        out.push_str(&format!(
            "project {project}: cache busy in another process, recent appends may be missing\n"
        ));
    }
    if results.hits.is_empty() {
        out.push_str(&format!("no match for {:?}\n", query.text));
    }
    for h in &results.hits {
        let mut head = match &h.agent_id {
            Some(agent) => format!("{} (agent {agent}) {}", h.session_id, h.message_id),
            None => format!("{} {}", h.session_id, h.message_id),
        };
        if a.all {
            head = format!("{} {head}", h.project);
        }
        let role = h.role.as_deref().unwrap_or("-");
        let when = h.timestamp.as_deref().unwrap_or("");
        let tools = if h.tools.is_empty() {
            String::new()
        } else {
            format!(" [{}]", h.tools.join(", "))
        };
        out.push_str(&format!(
            "{}  {}\n",
            paint(BOLD, head),
            paint(DIM, format!("{role} {when}{tools}"))
        ));
        let snippet = h.snippet.replace('\n', " ");
        let snippet = snippet
            .replace('«', &format!("{BOLD}"))
            .replace('»', &format!("{BOLD:#}"));
        out.push_str(&format!("    {snippet}\n"));
    }
    Ok(Output::Text(out))
}
