//! Commands that change a session: new, append, fork, resume-at, rename, delete,
//! undo, rewind.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{json, Value};
use sessionkit::{
    CreateOptions, ErrorKind, FileAction, ForkOptions, RewindMode, RewindPlan, RewindPreview,
};

use crate::cli::RewindArgs;
use crate::ctx::{
    clip, one_line, paint, CliError, Ctx, Output, Result, BAD, BOLD, DIM, GOOD, WARN,
};
use crate::sessions::new_table;

pub fn new_session(ctx: &Ctx, title: Option<String>, id: Option<String>) -> Result<Output> {
    let s = ctx.store.create_session(CreateOptions { title, id })?;
    let entry = s.entry();
    s.close()?;
    if ctx.json {
        return Output::json(&entry);
    }
    Ok(Output::Text(format!(
        "{} session {}\n",
        paint(GOOD, "created"),
        paint(BOLD, &entry.id)
    )))
}

pub fn append(ctx: &Ctx, id: &str, message: &str) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let message = crate::agent::json_arg("the message", message)?;
    // One write, beside whatever else writes the conversation: a shared writer.
    let s = ctx.store.open_shared(&id)?;
    // An array is a batch: one write, all of it or (refused) none.
    let batch = message.is_array();
    let stored = match message {
        Value::Array(batch) => s.append_batch(batch),
        one => s.append(one).map(|m| vec![m]),
    };
    s.close()?;
    let stored = stored?;
    if ctx.json {
        let text = sessionkit::to_json_array(&stored);
        let all: Value = serde_json::from_str(&text)
            .map_err(|e| CliError::new(ErrorKind::Internal, format!("the stored messages: {e}")))?;
        return Ok(Output::Json(match all {
            Value::Array(mut a) if !batch && a.len() == 1 => a.remove(0),
            all => all,
        }));
    }
    let ids: Vec<&str> = stored.iter().map(|m| m.id()).collect();
    Ok(Output::Text(format!(
        "{} {} to session {}\n",
        paint(GOOD, "appended"),
        paint(BOLD, ids.join(", ")),
        id
    )))
}

pub fn fork(ctx: &Ctx, id: &str, at: Option<&str>, title: Option<String>) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let at = at.map(|m| ctx.resolve_message(&id, m)).transpose()?;
    let s = ctx.store.fork_session(
        &id,
        ForkOptions {
            at: at.clone(),
            title,
        },
    )?;
    let entry = s.entry();
    s.close()?;
    if ctx.json {
        return Output::json(&entry);
    }
    Ok(Output::Text(format!(
        "{} {} → new session {}\n{}\n",
        paint(GOOD, "forked"),
        id,
        paint(BOLD, &entry.id),
        paint(
            DIM,
            format!(
                "at message {}, {} messages, title {:?}",
                entry
                    .head_id
                    .as_deref()
                    .or(at.as_deref())
                    .unwrap_or("(none)"),
                entry.message_count,
                entry.title
            )
        )
    )))
}

pub fn resume_at(ctx: &Ctx, id: &str, msg: &str) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let msg = ctx.resolve_message(&id, msg)?;
    let s = ctx.store.open_session(&id)?;
    let before = s.head();
    s.resume_at(&msg)?;
    let entry = s.entry();
    s.close()?;
    if ctx.json {
        return Output::json(&entry);
    }
    Ok(Output::Text(format!(
        "{} {}: head {} → {}\n",
        paint(GOOD, "resumed"),
        id,
        before.as_deref().unwrap_or("(none)"),
        msg
    )))
}

pub fn rename(ctx: &Ctx, id: &str, title: &str) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let entry = ctx.store.rename_session(&id, title)?;
    if ctx.json {
        return Output::json(&entry);
    }
    Ok(Output::Text(format!(
        "{} {} to {:?}\n",
        paint(GOOD, "renamed"),
        id,
        entry.title
    )))
}

pub fn delete(ctx: &Ctx, id: &str) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let path = ctx.log_path(&id);
    ctx.store.delete_session(&id)?;
    if ctx.json {
        return Output::json(json!({"deleted": id}));
    }
    Ok(Output::Text(format!(
        "{} session {} ({} and its sidecars, quarantine file and file history)\n",
        paint(GOOD, "deleted"),
        id,
        path.display()
    )))
}

pub fn restore(ctx: &Ctx, id: &str) -> Result<Output> {
    let entry = ctx.store.restore_session(id)?;
    if ctx.json {
        return Output::json(&entry);
    }
    Ok(Output::Text(format!(
        "{} session {} ({:?}, {} message(s)) from the trash\n",
        paint(GOOD, "restored"),
        entry.id,
        entry.title,
        entry.message_count
    )))
}

pub fn undo(ctx: &Ctx, id: &str) -> Result<Output> {
    let id = ctx.resolve(id)?;
    let s = ctx.store.open_session(&id)?;
    let cands = s.undo_candidates()?;
    s.close()?;
    if ctx.json {
        return Output::json(json!({"session": id, "candidates": cands}));
    }
    if cands.is_empty() {
        return Ok(Output::Text(format!(
            "no user messages to rewind to in session {id}\n"
        )));
    }
    let view = ctx.store.read_session(&id)?;
    let all: Vec<String> = view.tree()?.into_iter().map(|n| n.id).collect();
    let mut t = new_table(&[
        "MESSAGE",
        "TIME",
        "FILES",
        "+LINES",
        "-LINES",
        "FILES RESTORABLE",
        "TEXT",
    ]);
    let short = crate::ctx::ShortIds::new(all.iter().map(String::as_str));
    for c in &cands {
        t.add_row(vec![
            short.of(&c.message_id).to_string(),
            c.timestamp
                .as_deref()
                .map(crate::ctx::short_time)
                .unwrap_or_default(),
            c.stats.files_changed.to_string(),
            c.stats.lines_added.to_string(),
            c.stats.lines_removed.to_string(),
            match &c.reason {
                None => "yes".into(),
                Some(r) => format!("no: {}", clip(r, 40)),
            },
            clip(&one_line(&c.preview), 40),
        ]);
    }
    let mut s: String = t.lines().map(|l| l.trim_end().to_string() + "\n").collect();
    let _ = writeln!(
        s,
        "\n{}",
        paint(DIM, format!("FILES and LINES: changes since the message's snapshot. Preview with `sessionkit rewind {} --to MSG --dry-run`.", crate::ctx::ShortIds::new([id.as_str()]).of(&id)))
    );
    Ok(Output::Text(s))
}

fn mode_of(a: &RewindArgs) -> RewindMode {
    if a.files {
        RewindMode::Files
    } else if a.conversation {
        RewindMode::Conversation
    } else {
        RewindMode::Both
    }
}

fn action_name(a: FileAction) -> &'static str {
    match a {
        FileAction::Restore => "restore",
        FileAction::Recreate => "recreate",
        FileAction::Delete => "delete",
    }
}

fn plan_text(plan: &RewindPlan, force: bool) -> String {
    let mut s = String::new();
    if plan.files.is_empty() {
        let _ = writeln!(
            s,
            "  files: nothing to change (every tracked file is as at the snapshot)"
        );
        return s;
    }
    let _ = writeln!(
        s,
        "  files: {} to change (+{} -{} lines since the snapshot)",
        plan.files.len(),
        plan.stats.lines_added,
        plan.stats.lines_removed
    );
    for f in &plan.files {
        let what = format!("{:<8}", action_name(f.action));
        let lines = if f.binary {
            "binary".to_string()
        } else {
            format!("+{} -{}", f.lines_added, f.lines_removed)
        };
        let conflict = match f.conflict {
            None => String::new(),
            Some(c) => {
                let name = serde_json::to_value(c)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let style = if c.forcible() { WARN } else { BAD };
                let note = if !c.forcible() {
                    "never overwritten"
                } else if force {
                    "overwritten: --force"
                } else {
                    "refused without --force"
                };
                format!("  {}", paint(style, format!("CONFLICT {name} ({note})")))
            }
        };
        let _ = writeln!(s, "    {what} {}  {}{conflict}", f.path, paint(DIM, lines));
    }
    s
}

/// The `--json` form of a dry run: the preview, with the session beside it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DryRun<'a> {
    dry_run: bool,
    session: &'a str,
    #[serde(flatten)]
    preview: &'a RewindPreview,
}

pub fn rewind(ctx: &Ctx, a: &RewindArgs) -> Result<Output> {
    let id = ctx.resolve(&a.id)?;
    let msg = ctx.resolve_message(&id, &a.to)?;
    let mode = mode_of(a);
    let s = ctx.store.open_session(&id)?;
    if a.dry_run {
        let p = s.rewind_preview(&msg, mode)?;
        s.close()?;
        if ctx.json {
            return Output::json(DryRun {
                dry_run: true,
                session: &id,
                preview: &p,
            });
        }
        let mut out = format!(
            "{} rewind of session {} to before message {} ({})\n",
            paint(BOLD, "plan (dry run, nothing changed):"),
            id,
            msg,
            mode
        );
        if let Some(plan) = &p.plan {
            out.push_str(&plan_text(plan, a.force));
            let blocking = p.forcible_conflicts();
            if blocking > 0 && !a.force {
                let _ = writeln!(
                    out,
                    "  {}",
                    paint(
                        BAD,
                        format!(
                            "{blocking} conflict(s): applying would fail; add --force to overwrite"
                        )
                    )
                );
            }
        }
        if mode != RewindMode::Files {
            let _ = writeln!(
                out,
                "  conversation: head {} → {}",
                p.head.from.as_deref().unwrap_or("(none)"),
                p.head.to.as_deref().unwrap_or("(before the first message)")
            );
        }
        return Ok(Output::Text(out));
    }
    let r = s.rewind(&msg, mode, a.force)?;
    s.close()?;
    if ctx.json {
        return Output::json(json!({"dryRun": false, "session": id, "result": r}));
    }
    let mut out = format!(
        "{} session {} to before message {} ({})\n",
        paint(GOOD, "rewound"),
        id,
        msg,
        mode
    );
    for (what, files) in [
        ("restored", &r.restored),
        ("recreated", &r.recreated),
        ("deleted", &r.deleted),
    ] {
        for f in files.iter() {
            let _ = writeln!(out, "  {what:<9} {f}");
        }
    }
    for f in &r.skipped {
        let _ = writeln!(
            out,
            "  {} {} (a directory or symlink is in the way)",
            paint(BAD, "skipped  "),
            f.path
        );
    }
    if mode != RewindMode::Files {
        let _ = writeln!(
            out,
            "  conversation: head {} → {}",
            r.previous_head.as_deref().unwrap_or("(none)"),
            r.head.as_deref().unwrap_or("(before the first message)")
        );
    }
    if let Some(u) = &r.undo_snapshot {
        let _ = writeln!(
            out,
            "  {}",
            paint(
                DIM,
                format!("the files before this rewind are snapshot {u}")
            )
        );
    }
    if let Some(p) = &r.previous_head {
        if mode != RewindMode::Files {
            let _ = writeln!(
                out,
                "  {}",
                paint(
                    DIM,
                    format!("undo the conversation side: sessionkit resume-at {id} {p}")
                )
            );
        }
    }
    Ok(Output::Text(out))
}
