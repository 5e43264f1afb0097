//! `sessionkit`: the command line of the sessionkit session store. Each command is
//! a thin layer over the core library; exit codes and `--json` shapes are
//! documented in `bindings/cli/README.md`.

mod agent;
mod checkpoints;
mod cli;
mod config;
mod ctx;
mod demo;
mod edit;
mod import;
mod maint;
mod remote;
mod render;
mod search;
mod sessions;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command};
use ctx::{exit_code, CliError, Ctx, Output};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let name = command_name(&cli.command);
    let mut store_dir = None;
    match run(cli, &mut store_dir) {
        Ok((out, code)) => match out.print() {
            Ok(()) => ExitCode::from(code),
            Err(e) => {
                // Not eprintln!: with stderr broken too, it would panic.
                let _ = writeln!(
                    std::io::stderr(),
                    "sessionkit {name}: writing the output: {e}"
                );
                ExitCode::from(exit_code(sessionkit::ErrorKind::Io))
            }
        },
        Err(e) => {
            let at = store_dir
                .map(|d: std::path::PathBuf| format!(" (store {})", d.display()))
                .unwrap_or_default();
            let msg = e.msg.replace('\n', " ");
            let mut err = anstream::stderr();
            let _ = std::io::Write::write_fmt(
                &mut err,
                format_args!(
                    "{} {msg}{at}\n",
                    ctx::paint(ctx::BAD, format!("sessionkit {name}: error:"))
                ),
            );
            ExitCode::from(exit_code(e.kind))
        }
    }
}

fn command_name(c: &Command) -> &'static str {
    match c {
        Command::List { .. } => "list",
        Command::Import { .. } => "import",
        Command::Push { .. } => "push",
        Command::Pull { .. } => "pull",
        Command::Follow { .. } => "follow",
        Command::Show { .. } => "show",
        Command::Tree { .. } => "tree",
        Command::New { .. } => "new",
        Command::Append { .. } => "append",
        Command::UserInput { .. } => "user-input",
        Command::Snapshot { .. } => "snapshot",
        Command::State { .. } => "state",
        Command::Compact(_) => "compact",
        Command::Subagent(_) => "subagent",
        Command::Checkpoint(_) => "checkpoint",
        Command::Fork { .. } => "fork",
        Command::ResumeAt { .. } => "resume-at",
        Command::Rename { .. } => "rename",
        Command::Delete { .. } => "delete",
        Command::Trash => "trash",
        Command::Restore { .. } => "restore",
        Command::Undo { .. } => "undo",
        Command::Rewind(_) => "rewind",
        Command::Export { .. } => "export",
        Command::Search(_) => "search",
        Command::Doctor { .. } => "doctor",
        Command::Gc => "gc",
        Command::Config(_) => "config",
        Command::Instructions(_) => "instructions",
        Command::Memory(_) => "memory",
        Command::Demo => "demo",
        Command::Completions { .. } => "completions",
    }
}

fn run(cli: Cli, store_dir: &mut Option<std::path::PathBuf>) -> Result<(Output, u8), CliError> {
    match &cli.command {
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "sessionkit", &mut buf);
            return Ok((Output::Raw(String::from_utf8_lossy(&buf).into_owned()), 0));
        }
        Command::Demo => return demo::run(&cli.global).map(|o| (o, 0)),
        Command::Import {
            paths,
            watch,
            quiet,
            from,
            map_paths,
        } => {
            let run = import::ImportRun {
                paths,
                from: *from,
                map_paths,
                quiet: *quiet,
            };
            return if *watch {
                import::watch(&cli.global, &run)
            } else {
                import::import(&cli.global, &run)
            };
        }
        Command::List { all: true, .. } => return import::list_all(&cli.global).map(|o| (o, 0)),
        _ => {}
    }
    let ctx = Ctx::open(&cli.global)?;
    *store_dir = Some(ctx.store.dir().to_path_buf());
    let done = dispatch(cli.command, &ctx);
    ctx::save_deterministic_state(&cli.global, &ctx.store)?;
    done
}

fn dispatch(command: Command, ctx: &Ctx) -> Result<(Output, u8), CliError> {
    let out = match command {
        Command::List {
            remote: Some(url), ..
        } => remote::list(ctx, url)?,
        Command::List { limit, offset, .. } => {
            sessions::list(ctx, sessionkit::ListOptions { offset, limit })?
        }
        Command::Push { ids, remote } => remote::push(ctx, &ids, &remote)?,
        Command::Pull { id, remote } => remote::pull(ctx, &id, &remote)?,
        Command::Follow {
            id,
            from,
            until_idle,
            remote,
        } => remote::follow(ctx, &id, from, until_idle, &remote)?,
        Command::Show {
            id,
            full,
            model_view,
            last,
            token_budget,
            active_path,
        } => {
            let view = if model_view {
                sessions::View::Model(sessionkit::ModelViewOptions {
                    last_n: last,
                    token_budget,
                })
            } else if active_path {
                sessions::View::ActivePath
            } else {
                sessions::View::Transcript
            };
            sessions::show(ctx, &id, full, view)?
        }
        Command::Tree { id } => sessions::tree(ctx, &id)?,
        Command::New { title, id } => edit::new_session(ctx, title, id)?,
        Command::Append { id, message } => edit::append(ctx, &id, &message)?,
        Command::UserInput { id, message } => agent::user_input(ctx, &id, &message)?,
        Command::Snapshot {
            id, after, paths, ..
        } => agent::snapshot(ctx, &id, after, &paths)?,
        Command::State { id, set } => agent::state(ctx, &id, &set)?,
        Command::Compact(c) => agent::compact(ctx, &c)?,
        Command::Subagent(c) => agent::subagent(ctx, &c)?,
        Command::Checkpoint(c) => checkpoints::checkpoint(ctx, &c)?,
        Command::Fork { id, at, title } => edit::fork(ctx, &id, at.as_deref(), title)?,
        Command::ResumeAt { id, msg } => edit::resume_at(ctx, &id, &msg)?,
        Command::Rename { id, title } => edit::rename(ctx, &id, &title)?,
        Command::Delete { id } => edit::delete(ctx, &id)?,
        Command::Trash => maint::trash(ctx)?,
        Command::Restore { id } => edit::restore(ctx, &id)?,
        Command::Undo { id } => edit::undo(ctx, &id)?,
        Command::Rewind(a) => edit::rewind(ctx, &a)?,
        Command::Export {
            id,
            to: Some(to),
            agent_home,
            ..
        } => sessions::export_to(ctx, &id, to, agent_home)?,
        Command::Export { id, format, .. } => sessions::export(ctx, &id, format)?,
        Command::Search(a) => search::search(ctx, a)?,
        Command::Doctor { repair } => return maint::doctor(ctx, repair),
        Command::Gc => maint::gc(ctx)?,
        Command::Config(c) => config::config(ctx, c)?,
        Command::Instructions(a) => config::instructions(ctx, a)?,
        Command::Memory(c) => config::memory(ctx, c)?,
        Command::Demo | Command::Completions { .. } | Command::Import { .. } => {
            unreachable!("handled above")
        }
    };
    Ok((out, 0))
}
