//! `import` and `list --all`: the commands that span the projects of a home.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use sessionkit::{ImportFormat, ImportOptions, PathMapping, SourceOutcome};

use crate::cli::{Global, ImportFrom};
use crate::ctx::{paint, store_options, Output, Result, BAD, BOLD, DIM, EXIT_PROBLEMS, WARN};

pub fn import(
    g: &Global,
    paths: &[PathBuf],
    from: Option<ImportFrom>,
    map_paths: &[String],
) -> Result<(Output, u8)> {
    let map_paths = map_paths
        .iter()
        .map(|m| m.parse::<PathMapping>())
        .collect::<sessionkit::Result<Vec<_>>>()?;
    let options = ImportOptions {
        from: from.map(|f| match f {
            ImportFrom::ClaudeCode => ImportFormat::ClaudeCode,
            ImportFrom::Codex => ImportFormat::Codex,
            ImportFrom::Deepcode => ImportFormat::Deepcode,
            ImportFrom::Pi => ImportFormat::Pi,
            ImportFrom::GeminiCli => ImportFormat::GeminiCli,
            ImportFrom::CopilotCli => ImportFormat::CopilotCli,
            ImportFrom::Opencode => ImportFormat::Opencode,
        }),
        project: g.project.clone(),
        map_paths,
        store: store_options(g)?,
    };
    let bar = if std::io::stderr().is_terminal() && !g.json {
        let bar = ProgressBar::new(0);
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} importing {wide_bar} {pos}/{len} {msg}")
        {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let report = sessionkit::import(paths, &options, &mut |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(
            p.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
    })?;
    bar.finish_and_clear();
    let code = if report.failed > 0 { EXIT_PROBLEMS } else { 0 };
    if g.json {
        return Ok((Output::json(&report)?, code));
    }
    let mut s = String::new();
    for r in &report.sources {
        let (mark, style) = match r.outcome {
            SourceOutcome::Imported => ("imported", BOLD),
            SourceOutcome::UpToDate => ("up to date", DIM),
            SourceOutcome::Changed => ("changed", WARN),
            SourceOutcome::Failed => ("failed", BAD),
        };
        let target = match (&r.session_id, &r.agent_id) {
            (Some(s), Some(a)) => format!(" → session {s}, subagent {a}"),
            (Some(s), None) => format!(" → session {s}"),
            _ => String::new(),
        };
        let _ = writeln!(s, "{} {}{target}", paint(style, mark), r.path.display());
        if r.outcome == SourceOutcome::Imported {
            let _ = writeln!(
                s,
                "  {} new line(s): {} message(s), {} kept as records{}",
                r.lines,
                r.messages_added,
                r.records_added,
                if r.created { ", session created" } else { "" }
            );
        }
        if let Some(n) = &r.notice {
            let _ = writeln!(s, "  {}", paint(WARN, n));
        }
        if let Some(e) = &r.error {
            let _ = writeln!(s, "  {e}");
        }
        for n in &r.skipped {
            let _ = writeln!(s, "  line {}: skipped: {}", n.line, n.reason);
        }
        if !r.unmapped.is_empty() {
            let _ = writeln!(
                s,
                "  {} line(s) not fully mapped (--json lists them)",
                r.unmapped.len()
            );
        }
    }
    let _ = writeln!(
        s,
        "{} source(s), {} message(s) added, {} failed or changed",
        report.sources.len(),
        report.messages_added,
        report.failed
    );
    Ok((Output::Text(s), code))
}

pub fn list_all(g: &Global) -> Result<Output> {
    let projects = sessionkit::list_all_sessions(&store_options(g)?)?;
    if g.json {
        return Output::json(&projects);
    }
    if projects.is_empty() {
        return Ok(Output::Text("no projects in the home\n".into()));
    }
    let mut s = String::new();
    for p in &projects {
        let name = p
            .project_root
            .as_ref()
            .map(|r| r.display().to_string())
            .unwrap_or_else(|| p.project_code.clone());
        let _ = writeln!(s, "{}", paint(BOLD, &name));
        match &p.error {
            Some(e) => {
                let _ = writeln!(s, "  {}", paint(WARN, e));
            }
            None if p.sessions.is_empty() => {
                let _ = writeln!(s, "  no sessions");
            }
            None => s.push_str(&crate::sessions::sessions_table(&p.sessions)?),
        }
        s.push('\n');
    }
    Ok(Output::Text(s))
}
