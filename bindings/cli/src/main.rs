//! `sessionkit`: the command line of the sessionkit session store. Each command is
//! a thin layer over the core library; exit codes and `--json` shapes are
//! documented in `bindings/cli/README.md`.

mod cli;
mod ctx;
mod demo;
mod edit;
mod maint;
mod render;
mod search;
mod sessions;

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
                eprintln!("sessionkit {name}: writing the output: {e}");
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
        Command::List => "list",
        Command::Show { .. } => "show",
        Command::Tree { .. } => "tree",
        Command::New { .. } => "new",
        Command::Append { .. } => "append",
        Command::Fork { .. } => "fork",
        Command::ResumeAt { .. } => "resume-at",
        Command::Rename { .. } => "rename",
        Command::Delete { .. } => "delete",
        Command::Undo { .. } => "undo",
        Command::Rewind(_) => "rewind",
        Command::Export { .. } => "export",
        Command::Search(_) => "search",
        Command::Doctor { .. } => "doctor",
        Command::Gc => "gc",
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
        _ => {}
    }
    let ctx = Ctx::open(&cli.global)?;
    *store_dir = Some(ctx.store.dir().to_path_buf());
    let out = match cli.command {
        Command::List => sessions::list(&ctx)?,
        Command::Show {
            id,
            full,
            model_view,
        } => sessions::show(&ctx, &id, full, model_view)?,
        Command::Tree { id } => sessions::tree(&ctx, &id)?,
        Command::New { title, id } => edit::new_session(&ctx, title, id)?,
        Command::Append { id, message } => edit::append(&ctx, &id, &message)?,
        Command::Fork { id, at, title } => edit::fork(&ctx, &id, at.as_deref(), title)?,
        Command::ResumeAt { id, msg } => edit::resume_at(&ctx, &id, &msg)?,
        Command::Rename { id, title } => edit::rename(&ctx, &id, &title)?,
        Command::Delete { id } => edit::delete(&ctx, &id)?,
        Command::Undo { id } => edit::undo(&ctx, &id)?,
        Command::Rewind(a) => edit::rewind(&ctx, &a)?,
        Command::Export { id, format } => sessions::export(&ctx, &id, format)?,
        Command::Search(a) => search::search(&ctx, a)?,
        Command::Doctor { repair } => return maint::doctor(&ctx, repair),
        Command::Gc => maint::gc(&ctx)?,
        Command::Demo | Command::Completions { .. } => unreachable!("handled above"),
    };
    Ok((out, 0))
}
