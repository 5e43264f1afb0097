//! `import` and `list --all`: the commands that span the projects of a home.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use sessionkit::{
    ImportFormat, ImportOptions, ImportProgress, ImportReport, PathMapping, SourceOutcome,
};

use crate::cli::{Global, ImportFrom};
use crate::ctx::{paint, store_options, Output, Result, BAD, BOLD, DIM, EXIT_PROBLEMS, WARN};

mod watch;
pub use watch::watch;

/// The arguments of `import`, with or without `--watch`.
pub struct ImportRun<'a> {
    pub paths: &'a [PathBuf],
    pub from: Option<ImportFrom>,
    pub map_paths: &'a [String],
    pub quiet: bool,
}

/// A path to import: one given, or a tool's own session directory, with the
/// format its files are read as (`None`: detected per file).
struct Root {
    path: PathBuf,
    from: Option<ImportFormat>,
}

fn format_of(f: ImportFrom) -> ImportFormat {
    match f {
        ImportFrom::ClaudeCode => ImportFormat::ClaudeCode,
        ImportFrom::Codex => ImportFormat::Codex,
        ImportFrom::Deepcode => ImportFormat::Deepcode,
        ImportFrom::Pi => ImportFormat::Pi,
        ImportFrom::GeminiCli => ImportFormat::GeminiCli,
        ImportFrom::CopilotCli => ImportFormat::CopilotCli,
        ImportFrom::Opencode => ImportFormat::Opencode,
    }
}

fn env(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}

/// The paths given, else every tool's session directory that exists (each
/// read as its tool's format unless `--from` says otherwise).
fn roots(run: &ImportRun) -> Vec<Root> {
    let from = run.from.map(format_of);
    if !run.paths.is_empty() {
        return run
            .paths
            .iter()
            .map(|p| Root {
                path: p.clone(),
                from,
            })
            .collect();
    }
    sessionkit::default_sources(&env)
        .into_iter()
        .map(|d| Root {
            path: d.path,
            from: from.or(Some(d.format)),
        })
        .collect()
}

/// Where the tools' sessions would be, for a message saying none is there.
fn default_locations_text() -> String {
    ImportFormat::ALL
        .iter()
        .filter_map(|f| f.default_location(&env))
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn options(g: &Global, run: &ImportRun) -> Result<ImportOptions> {
    let map_paths = run
        .map_paths
        .iter()
        .map(|m| m.parse::<PathMapping>())
        .collect::<sessionkit::Result<Vec<_>>>()?;
    Ok(ImportOptions {
        from: None,
        project: g.project.clone(),
        map_paths,
        store: store_options(g)?,
    })
}

/// Import `paths`, each read as `from`, adding to `report`.
fn import_into(
    report: &mut ImportReport,
    paths: &[PathBuf],
    from: Option<ImportFormat>,
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> sessionkit::Result<()> {
    let options = ImportOptions {
        from,
        ..options.clone()
    };
    let r = sessionkit::import(paths, &options, progress)?;
    report.messages_added += r.messages_added;
    report.failed += r.failed;
    report.sources.extend(r.sources);
    Ok(())
}

/// Every root, in order: the import's report.
fn import_roots(
    roots: &[Root],
    options: &ImportOptions,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport> {
    let mut report = ImportReport::default();
    for r in roots {
        import_into(
            &mut report,
            std::slice::from_ref(&r.path),
            r.from,
            options,
            progress,
        )?;
    }
    Ok(report)
}

pub fn import(g: &Global, run: &ImportRun) -> Result<(Output, u8)> {
    let options = options(g, run)?;
    let roots = roots(run);
    if roots.is_empty() {
        // No path given and no tool's directory here: nothing to keep.
        if run.quiet {
            return Ok((Output::Raw(String::new()), 0));
        }
        if g.json {
            return Ok((Output::json(ImportReport::default())?, 0));
        }
        return Ok((
            Output::Text(format!(
                "no tool's session directory exists here (looked for {})\n",
                default_locations_text()
            )),
            0,
        ));
    }
    let bar = if std::io::stderr().is_terminal() && !g.json && !run.quiet {
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
    let report = import_roots(&roots, &options, &mut |p| {
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
    if run.quiet && code == 0 {
        return Ok((Output::Raw(String::new()), 0));
    }
    if g.json {
        return Ok((Output::json(&report)?, code));
    }
    // Quiet but something failed: only what failed, for cron's mail.
    let mut s = render(&report, |r| {
        !run.quiet || matches!(r.outcome, SourceOutcome::Failed | SourceOutcome::Changed)
    });
    let _ = writeln!(
        s,
        "{} source(s), {} message(s) added, {} failed or changed",
        report.sources.len(),
        report.messages_added,
        report.failed
    );
    Ok((Output::Text(s), code))
}

/// The lines of `report` for the sources `show` keeps.
fn render(report: &ImportReport, show: impl Fn(&sessionkit::SourceReport) -> bool) -> String {
    let mut s = String::new();
    for r in report.sources.iter().filter(|r| show(r)) {
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
    s
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
            None => s.push_str(&crate::sessions::sessions_table(&p.sessions, &[])?),
        }
        s.push('\n');
    }
    Ok(Output::Text(s))
}
