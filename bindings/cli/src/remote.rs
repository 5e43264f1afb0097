//! Sessions shared through PostgreSQL (docs/DISTRIBUTED.md): push, pull,
//! list --remote, follow.

use std::io::Write;
use std::time::{Duration, Instant};

use sessionkit::{ErrorKind, Remote, RemoteOptions, RemoteSession};

use crate::cli::RemoteArgs;
use crate::ctx::{
    clip, now, one_line, paint, relative, CliError, Ctx, Output, Result, ShortIds, DIM,
};
use crate::sessions::{new_table, status_name, table_text};

/// How long `follow` waits for lines at a time: short enough to notice
/// `--until-idle` promptly.
const FOLLOW_STEP: Duration = Duration::from_millis(500);

fn connect(ctx: &Ctx, args: &RemoteArgs) -> Result<Remote> {
    Ok(Remote::connect(
        &ctx.store,
        RemoteOptions {
            url: args.remote.clone(),
            holder: args.holder.clone(),
            map_paths: args
                .map_paths
                .iter()
                .map(|m| m.parse())
                .collect::<sessionkit::Result<_>>()?,
            ..RemoteOptions::default()
        },
    )?)
}

/// Push the given sessions, or every session of the project: each one that
/// can be is pushed; the first failure is the command's error, naming what
/// was pushed before it.
pub fn push(ctx: &Ctx, ids: &[String], args: &RemoteArgs) -> Result<Output> {
    let ids: Vec<String> = if ids.is_empty() {
        ctx.store
            .list_sessions()?
            .into_iter()
            .map(|e| e.id)
            .collect()
    } else {
        ids.iter()
            .map(|id| ctx.resolve(id))
            .collect::<Result<_>>()?
    };
    let remote = connect(ctx, args)?;
    let mut reports = Vec::new();
    let mut failures: Vec<(String, CliError)> = Vec::new();
    for id in &ids {
        match remote.push(&ctx.store, id) {
            Ok(r) => reports.push(r),
            Err(e) => failures.push((id.clone(), e.into())),
        }
    }
    if let Some((_, first)) = failures.first() {
        let kind = first.kind;
        let what: Vec<String> = failures.iter().map(|(_, e)| e.msg.clone()).collect();
        return Err(CliError::new(
            kind,
            format!(
                "pushed {} of {} sessions; {}",
                reports.len(),
                ids.len(),
                what.join("; ")
            ),
        ));
    }
    if ctx.json {
        return Output::json(&reports);
    }
    let mut text = String::new();
    for r in &reports {
        text += &if r.from == r.to {
            format!("{}: up to date ({} bytes)\n", r.session_id, r.to)
        } else {
            format!(
                "{}: pushed bytes {}..{} ({} batches, {} blobs)\n",
                r.session_id, r.from, r.to, r.batches, r.blobs
            )
        };
    }
    if reports.is_empty() {
        text = "no sessions to push\n".to_string();
    }
    Ok(Output::Text(text))
}

pub fn pull(ctx: &Ctx, id: &str, args: &RemoteArgs) -> Result<Output> {
    let r = connect(ctx, args)?.pull(&ctx.store, id)?;
    if ctx.json {
        return Output::json(&r);
    }
    Ok(Output::Text(if r.from == r.to {
        format!("{}: up to date ({} bytes)\n", r.session_id, r.to)
    } else {
        format!(
            "{}: pulled bytes {}..{} ({} blobs)\n",
            r.session_id, r.from, r.to, r.blobs
        )
    }))
}

pub fn list(ctx: &Ctx, url: Option<String>) -> Result<Output> {
    let args = RemoteArgs {
        remote: url,
        holder: None,
        map_paths: Vec::new(),
    };
    let remote = connect(ctx, &args)?;
    let sessions = remote.list()?;
    if ctx.json {
        return Output::json(&sessions);
    }
    if sessions.is_empty() {
        return Ok(Output::Text(format!(
            "no sessions of project {} on the remote\n",
            remote.project()
        )));
    }
    Ok(Output::Text(remote_table(&sessions)?))
}

fn remote_table(sessions: &[RemoteSession]) -> Result<String> {
    let now = now()?;
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let mut t = new_table(&[
        "ID", "TITLE", "STATUS", "UPDATED", "MESSAGES", "BYTES", "LEASE",
    ]);
    let ids = ShortIds::new(ids);
    for s in sessions {
        let short = ids.of(&s.id).to_string();
        let lease = s.lease_holder.clone().unwrap_or_default();
        let row = match &s.entry {
            Some(e) => vec![
                short,
                clip(&one_line(&e.title), 40),
                status_name(e),
                relative(&e.updated_at, now),
                e.message_count.to_string(),
                s.pushed_bytes.to_string(),
                lease,
            ],
            None => vec![
                short,
                paint(DIM, "(nothing pushed yet)"),
                String::new(),
                String::new(),
                String::new(),
                s.pushed_bytes.to_string(),
                lease,
            ],
        };
        t.add_row(row);
    }
    Ok(table_text(&t))
}

/// Print the session's lines as they are pushed, until interrupted or, with
/// `until_idle`, until none came for that long.
pub fn follow(
    ctx: &Ctx,
    id: &str,
    from: Option<u64>,
    until_idle: Option<f64>,
    args: &RemoteArgs,
) -> Result<Output> {
    let idle = match until_idle {
        Some(s) => Some(Duration::try_from_secs_f64(s).map_err(|e| {
            CliError::new(
                ErrorKind::InvalidInput,
                format!("--until-idle {s} is not a duration in seconds: {e}"),
            )
        })?),
        None => None,
    };
    let mut follower = connect(ctx, args)?.follow(id, from)?;
    let mut out = std::io::stdout().lock();
    let mut last = Instant::now();
    loop {
        let step = idle.map_or(FOLLOW_STEP, |i| {
            i.saturating_sub(last.elapsed()).min(FOLLOW_STEP)
        });
        let lines = follower.next_lines(step)?;
        if !lines.is_empty() {
            last = Instant::now();
            let written = lines
                .iter()
                .try_for_each(|l| out.write_all(l))
                .and_then(|_| out.flush());
            match written {
                // A closed pipe (`| head`) ends the follow, as it ends `tail -f`.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => break,
                r => r?,
            }
        } else if idle.is_some_and(|i| last.elapsed() >= i) {
            break;
        }
    }
    Ok(Output::Raw(String::new()))
}
