//! `import --watch`: import, then import again whatever grows or appears,
//! until SIGINT or SIGTERM, so that transcripts are kept before their tool's
//! own cleanup deletes them (issue 32).
//!
//! File events come from the `notify` crate (inotify, FSEvents, kqueue…);
//! when they cannot be had (e.g. the inotify watch limit), the paths are
//! polled instead and the first line printed says so. Which files are sources
//! and in what order they are imported is the core's
//! ([`sessionkit::import_source_of`], [`sessionkit::sort_import_sources`]).

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, DataChange, MetadataKind, ModifyKind};
use notify::{Event, EventKind, RecursiveMode, Watcher};
use sessionkit::{ErrorKind, ImportReport, SourceOutcome};

use super::{default_locations_text, import_into, import_roots, options, render, roots};
use super::{ImportRun, Root};
use crate::cli::Global;
use crate::ctx::{paint, CliError, Output, Result, WARN};

/// How long after a change more changes are gathered before importing: a
/// tool writing a turn writes several lines in a burst.
const DEBOUNCE: Duration = Duration::from_millis(100);
/// How often the paths are polled when file events cannot be had.
const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// How often the loop looks at the stop flag while nothing happens.
const TICK: Duration = Duration::from_millis(100);

type Events = mpsc::Receiver<notify::Result<Event>>;

pub fn watch(g: &Global, run: &ImportRun) -> Result<(Output, u8)> {
    let options = options(g, run)?;
    let mut roots = roots(run);
    if roots.is_empty() {
        return Err(CliError::new(
            ErrorKind::NotFound,
            format!(
                "nothing to watch: no tool's session directory exists here (looked for {}); \
                 give the paths to watch",
                default_locations_text()
            ),
        ));
    }
    for r in &mut roots {
        // Events name absolute paths: the roots must be too, to tell which
        // root (and so which format) a changed file is under.
        r.path = std::fs::canonicalize(&r.path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CliError::new(
                ErrorKind::NotFound,
                format!("import source {}", r.path.display()),
            ),
            _ => CliError::new(ErrorKind::Io, format!("{}: {e}", r.path.display())),
        })?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).map_err(|e| {
            CliError::new(
                ErrorKind::Io,
                format!("installing the handler of signal {signal}: {e}"),
            )
        })?;
    }
    // The watch starts before the first import, so that nothing written
    // during it is missed (a file changed then is only imported once more).
    let (tx, rx) = mpsc::channel();
    let (watcher, how) = start_watcher(&roots, tx)?;
    let printer = Printer {
        json: g.json,
        quiet: run.quiet,
    };
    let status = format!(
        "watching {} ({how}); SIGINT or SIGTERM stops",
        roots
            .iter()
            .map(|r| r.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    match watcher {
        Some(_) => printer.status(&status),
        // Polling is worth saying even with --quiet: it costs more.
        None => printer.warn(&status),
    }
    printer.report(&import_roots(&roots, &options, &mut |_| {})?);
    while !stop.load(Ordering::Relaxed) {
        let mut pending = BTreeSet::new();
        let mut rescan = false;
        match rx.recv_timeout(TICK) {
            Ok(e) => take(e, &mut pending, &mut rescan, &printer),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(CliError::new(
                    ErrorKind::Io,
                    "the file watcher stopped unexpectedly",
                ))
            }
        }
        gather(&rx, &mut pending, &mut rescan, &printer);
        if rescan {
            match import_roots(&roots, &options, &mut |_| {}) {
                Ok(r) => printer.report(&r),
                Err(e) => printer.warn(&format!("importing again: {}", e.msg)),
            }
        } else if !pending.is_empty() {
            printer.report(&import_changed(&roots, pending, &options, &printer));
        }
    }
    Ok((Output::Raw(String::new()), 0))
}

/// Watch every root recursively with the system's file events, else by
/// polling (a thread that ends with the watch); with a few words saying which.
fn start_watcher(
    roots: &[Root],
    tx: mpsc::Sender<notify::Result<Event>>,
) -> Result<(Option<Box<dyn Watcher>>, String)> {
    // For tests of the fallback: SESSIONKIT_WATCH_POLL=1 skips the events.
    let forced = std::env::var_os("SESSIONKIT_WATCH_POLL").is_some_and(|v| v == "1");
    let events = if forced {
        Err("SESSIONKIT_WATCH_POLL=1".to_string())
    } else {
        notify::recommended_watcher(tx.clone())
            .and_then(|mut w| {
                for r in roots {
                    w.watch(&r.path, RecursiveMode::Recursive)?;
                }
                Ok(w)
            })
            .map_err(|e| e.to_string())
    };
    let why = match events {
        Ok(w) => return Ok((Some(Box::new(w)), "file events".into())),
        Err(why) => why,
    };
    let paths: Vec<PathBuf> = roots.iter().map(|r| r.path.clone()).collect();
    std::thread::Builder::new()
        .name("import-poll".into())
        .spawn(move || poll(&paths, &tx))
        .map_err(|e| CliError::new(ErrorKind::Io, format!("starting the poll: {e}")))?;
    Ok((
        None,
        format!(
            "polling every {} ms: file events unavailable: {why}",
            POLL_INTERVAL.as_millis()
        ),
    ))
}

/// Every [`POLL_INTERVAL`], look for sources whose size or modification time
/// changed, or that appeared, and send an event for each; until the watch
/// ends. (Not notify's `PollWatcher`: it compares modification times to the
/// second, so a line appended in the same second as the last would wait for
/// the next change.)
fn poll(roots: &[PathBuf], tx: &mpsc::Sender<notify::Result<Event>>) {
    let mut seen = std::collections::HashMap::new();
    scan(roots, &mut seen, &mut |_| {});
    loop {
        std::thread::sleep(POLL_INTERVAL);
        let mut changed = Vec::new();
        scan(roots, &mut seen, &mut |p| changed.push(p));
        for p in changed
            .into_iter()
            .filter_map(|p| sessionkit::import_source_of(&p))
        {
            let e = Event::new(EventKind::Modify(ModifyKind::Data(DataChange::Any))).add_path(p);
            if tx.send(Ok(e)).is_err() {
                return;
            }
        }
    }
}

/// The sources under `roots` (without following links), with `changed`
/// called for each whose size or modification time is not as `seen` had it.
fn scan(
    roots: &[PathBuf],
    seen: &mut std::collections::HashMap<PathBuf, (u64, Option<std::time::SystemTime>)>,
    changed: &mut dyn FnMut(PathBuf),
) {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, std::fs::Metadata)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => walk(&path, out),
                Ok(t) if t.is_file() && sessionkit::import_source_of(&path).is_some() => {
                    if let Ok(m) = e.metadata() {
                        out.push((path, m));
                    }
                }
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    for r in roots {
        match std::fs::metadata(r) {
            Ok(m) if m.is_dir() => walk(r, &mut found),
            Ok(m) => found.push((r.clone(), m)),
            Err(_) => {}
        }
    }
    // Only what is there now is remembered: a deleted file is forgotten
    // (and imported again, if only its new lines, when it comes back).
    let before = std::mem::take(seen);
    for (path, m) in found {
        let state = (m.len(), m.modified().ok());
        if before.get(&path) != Some(&state) {
            changed(path.clone());
        }
        seen.insert(path, state);
    }
}

/// Gather the events that come within [`DEBOUNCE`] of the first.
fn gather(rx: &Events, pending: &mut BTreeSet<PathBuf>, rescan: &mut bool, printer: &Printer) {
    let until = Instant::now() + DEBOUNCE;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(e) => take(e, pending, rescan, printer),
            Err(_) => break,
        }
    }
}

/// Note what an event asks to import: a source written, created or moved
/// in, or a directory created or moved in (whose sources the import finds,
/// including any written before its own watch began).
fn take(
    e: notify::Result<Event>,
    pending: &mut BTreeSet<PathBuf>,
    rescan: &mut bool,
    printer: &Printer,
) {
    let e = match e {
        Ok(e) => e,
        Err(e) => {
            // E.g. an event queue overflow: changes may have been lost.
            printer.warn(&format!("file events: {e}; importing everything again"));
            *rescan = true;
            return;
        }
    };
    if e.need_rescan() {
        *rescan = true;
        return;
    }
    let wanted = match e.kind {
        EventKind::Create(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Modify(ModifyKind::Metadata(m)) => {
            // Some back ends see a write only as a new modification time;
            // a change of owner or mode, or an access (the import's own
            // reading), brings nothing to import.
            matches!(m, MetadataKind::WriteTime)
        }
        EventKind::Modify(_) => true,
        EventKind::Access(_) | EventKind::Remove(_) => false,
    };
    if !wanted {
        return;
    }
    for p in e.paths {
        if let Some(source) = sessionkit::import_source_of(&p) {
            pending.insert(source);
        } else if p.is_dir() {
            pending.insert(p);
        }
    }
}

/// Import the changed paths, each with the format of the root it is under.
fn import_changed(
    roots: &[Root],
    pending: BTreeSet<PathBuf>,
    options: &sessionkit::ImportOptions,
    printer: &Printer,
) -> ImportReport {
    // A file gone since its event (a tool's cleanup, a rename) is not an error.
    let mut paths: Vec<PathBuf> = pending.into_iter().filter(|p| p.exists()).collect();
    sessionkit::sort_import_sources(&mut paths);
    let mut report = ImportReport::default();
    for p in &paths {
        let from = root_of(roots, p).and_then(|r| r.from);
        if let Err(e) = import_into(
            &mut report,
            std::slice::from_ref(p),
            from,
            options,
            &mut |_| {},
        ) {
            printer.warn(&format!("importing {}: {e}", p.display()));
        }
    }
    report
}

/// The innermost root `p` is under.
fn root_of<'a>(roots: &'a [Root], p: &Path) -> Option<&'a Root> {
    roots
        .iter()
        .filter(|r| p.starts_with(&r.path))
        .max_by_key(|r| r.path.components().count())
}

/// Where the watch's lines go: reports to stdout (text, or one JSON object a
/// line with `--json`), status and warnings to stderr.
struct Printer {
    json: bool,
    quiet: bool,
}

impl Printer {
    /// The sources that changed, a line each as a one-shot import prints
    /// them; nothing when none did.
    fn report(&self, report: &ImportReport) {
        let changed = |r: &sessionkit::SourceReport| r.outcome != SourceOutcome::UpToDate;
        let shown = |r: &sessionkit::SourceReport| {
            if self.quiet {
                matches!(r.outcome, SourceOutcome::Failed | SourceOutcome::Changed)
            } else {
                changed(r)
            }
        };
        if !report.sources.iter().any(shown) {
            return;
        }
        let text = if self.json {
            let mut r = report.clone();
            r.sources.retain(changed);
            match serde_json::to_string(&r) {
                Ok(mut s) => {
                    s.push('\n');
                    s
                }
                Err(e) => {
                    self.warn(&format!("serialising a report: {e}"));
                    return;
                }
            }
        } else {
            render(report, shown)
        };
        let mut out = anstream::stdout().lock();
        // A closed pipe must not stop the watch: keeping the history is the point.
        let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }

    fn status(&self, msg: &str) {
        if !self.quiet {
            let _ = writeln!(anstream::stderr(), "{msg}");
        }
    }

    fn warn(&self, msg: &str) {
        let _ = writeln!(anstream::stderr(), "{}", paint(WARN, msg));
    }
}
