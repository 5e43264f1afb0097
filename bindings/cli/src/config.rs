//! `config`, `instructions` and `memory`: settings, instruction files and
//! memories, each rendered from the core's result.

use std::io::Read;

use serde_json::{json, Value};
use sessionkit::{
    ErrorKind, InstructionOptions, MemoryScope, SettingSource, SettingValue, Settings,
    SettingsOptions, SourceStatus, MAX_MEMORY_BYTES,
};

use crate::cli::{ConfigCommand, InstructionsArgs, MemoryCommand, ScopeArg, SourcesArg};
use crate::ctx::{paint, CliError, Ctx, Output, Result, BOLD, DIM, GOOD, WARN};

fn load(ctx: &Ctx, sources: &SourcesArg) -> Result<Settings> {
    let sources = match &sources.setting_sources {
        Some(list) => Some(SettingSource::parse_list(list)?),
        None => None,
    };
    Ok(ctx.store.settings(&SettingsOptions {
        sources,
        overrides: None,
    }))
}

/// What a person should know about the sources: errors and warnings, on stderr
/// (the settings themselves still print).
fn warn_sources(s: &Settings) {
    for r in &s.sources {
        if let Some(e) = &r.error {
            eprintln!("{} {e}", paint(WARN, "warning:"));
        }
        if let Some(w) = &r.warning {
            eprintln!("{} {w}", paint(WARN, "warning:"));
        }
    }
}

fn line(v: &SettingValue, show_origin: bool) -> String {
    let origin = match (show_origin, v.origin) {
        (false, _) => String::new(),
        (true, Some(o)) => format!("{}\t", o.name()),
        (true, None) => "mixed\t".into(),
    };
    format!("{origin}{}={}\n", paint(BOLD, &v.key), v.value)
}

pub fn config(ctx: &Ctx, c: ConfigCommand) -> Result<Output> {
    match c {
        ConfigCommand::Get {
            key,
            show_origin,
            sources,
        } => {
            let s = load(ctx, &sources)?;
            warn_sources(&s);
            let v = s.get(&key).ok_or_else(|| {
                CliError::new(ErrorKind::NotFound, format!("setting {key:?} is not set"))
            })?;
            if ctx.json {
                return Output::json(&v);
            }
            Ok(Output::Text(if show_origin {
                line(&v, true)
            } else {
                format!("{}\n", v.value)
            }))
        }
        ConfigCommand::List {
            show_origin,
            sources,
        } => {
            let s = load(ctx, &sources)?;
            if ctx.json {
                return Output::json(&s);
            }
            warn_sources(&s);
            let mut out: String = s.list().iter().map(|v| line(v, show_origin)).collect();
            if show_origin {
                for r in &s.sources {
                    let path = r
                        .path
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default();
                    let status = match r.status {
                        SourceStatus::Loaded => paint(GOOD, "loaded"),
                        SourceStatus::Missing => paint(DIM, "missing"),
                        SourceStatus::Skipped => paint(DIM, "skipped"),
                        SourceStatus::Error => paint(WARN, "error"),
                    };
                    out.push_str(&format!("# {} {status} {path}\n", r.source.name()));
                }
            }
            Ok(Output::Text(out))
        }
        ConfigCommand::Set { key, value, target } => {
            // A value that is not JSON is a string, so `config set model large` works.
            let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
            let w = ctx.store.set_setting(
                SettingSource::parse(&target.source)?,
                &key,
                value.clone(),
            )?;
            if ctx.json {
                return Output::json(&w);
            }
            let backup = w
                .backup
                .map(|b| format!(" (the older file kept as {})", b.display()))
                .unwrap_or_default();
            Ok(Output::Text(format!(
                "{} {key}={value} in {}{backup}\n",
                paint(GOOD, "set"),
                w.path.display()
            )))
        }
        ConfigCommand::Unset { key, target } => {
            let w = ctx
                .store
                .unset_setting(SettingSource::parse(&target.source)?, &key)?;
            if ctx.json {
                return Output::json(&w);
            }
            let what = if w.existed {
                "removed"
            } else {
                "was not set in"
            };
            Ok(Output::Text(format!("{key} {what} {}\n", w.path.display())))
        }
        ConfigCommand::Migrate { target } => {
            let w = ctx
                .store
                .migrate_settings(SettingSource::parse(&target.source)?)?;
            if ctx.json {
                return Output::json(&w);
            }
            let mut out = format!("{} {}\n", paint(GOOD, "current shape:"), w.path.display());
            for m in &w.migrations {
                out.push_str(&format!("  {m}\n"));
            }
            if let Some(b) = w.backup {
                out.push_str(&format!("the older file is kept as {}\n", b.display()));
            }
            Ok(Output::Text(out))
        }
    }
}

pub fn instructions(ctx: &Ctx, a: InstructionsArgs) -> Result<Output> {
    let dir = match a.dir {
        Some(d) => d,
        None => std::env::current_dir()?,
    };
    let options = InstructionOptions {
        names: a
            .names
            .map(|n| n.split(',').map(|s| s.trim().to_string()).collect()),
        max_include_depth: a.max_include_depth,
    };
    let i = ctx.store.instructions(&dir, &options)?;
    if ctx.json {
        return Output::json(&i);
    }
    let mut out = String::new();
    for f in &i.files {
        let indent = "  ".repeat(f.depth);
        out.push_str(&format!(
            "{indent}{} {}\n",
            paint(DIM, format!("{:?}", f.level).to_lowercase()),
            f.path.display()
        ));
        if a.full {
            for l in f.content.lines() {
                out.push_str(&format!("{indent}  | {l}\n"));
            }
        }
    }
    if i.files.is_empty() {
        out.push_str(&format!(
            "no instruction files ({}) from {} down to {}\n",
            i.names.join(", "),
            i.root.display(),
            i.dir.display()
        ));
    }
    for p in &i.problems {
        out.push_str(&format!("{} {}\n", paint(WARN, "not read:"), p.message));
    }
    Ok(Output::Text(out))
}

fn scope(s: &ScopeArg) -> MemoryScope {
    if s.user {
        MemoryScope::User
    } else {
        MemoryScope::Project
    }
}

/// A memory's text: the argument, or stdin for `-` or none, read no further
/// than one byte past the largest memory (stdin may be endless: /dev/zero).
fn text_arg(text: Option<String>) -> Result<String> {
    match text.as_deref() {
        Some("-") | None => {
            let mut s = String::new();
            std::io::stdin()
                .take(MAX_MEMORY_BYTES + 1)
                .read_to_string(&mut s)?;
            if s.len() as u64 > MAX_MEMORY_BYTES {
                return Err(CliError::new(
                    ErrorKind::InvalidInput,
                    format!("the memory on stdin is over the limit of {MAX_MEMORY_BYTES} bytes"),
                ));
            }
            Ok(s)
        }
        Some(t) => Ok(t.to_string()),
    }
}

pub fn memory(ctx: &Ctx, c: MemoryCommand) -> Result<Output> {
    let s = &ctx.store;
    match c {
        MemoryCommand::Add {
            name,
            text,
            scope: sc,
        } => {
            let m = s.add_memory(scope(&sc), &name, &text_arg(text)?)?;
            if ctx.json {
                return Output::json(&m);
            }
            Ok(Output::Text(format!(
                "{} {}\n",
                paint(GOOD, "added"),
                m.path.display()
            )))
        }
        MemoryCommand::Update {
            name,
            text,
            scope: sc,
        } => {
            let m = s.update_memory(scope(&sc), &name, &text_arg(text)?)?;
            if ctx.json {
                return Output::json(&m);
            }
            Ok(Output::Text(format!(
                "{} {}\n",
                paint(GOOD, "updated"),
                m.path.display()
            )))
        }
        MemoryCommand::Rm { name, scope: sc } => {
            s.delete_memory(scope(&sc), &name)?;
            if ctx.json {
                return Output::json(json!({"deleted": name}));
            }
            Ok(Output::Text(format!(
                "{} memory {name}\n",
                paint(GOOD, "deleted")
            )))
        }
        MemoryCommand::List { scope: sc } => {
            let list = s.list_memories(scope(&sc))?;
            if ctx.json {
                return Output::json(&list);
            }
            if list.is_empty() {
                let dir = s.memory_path(scope(&sc));
                return Ok(Output::Text(format!("no memories in {}\n", dir.display())));
            }
            Ok(Output::Text(
                list.iter()
                    .map(|m| format!("{}  {}\n", paint(BOLD, &m.name), m.summary))
                    .collect(),
            ))
        }
        MemoryCommand::Show { name, scope: sc } => {
            let text = s.read_memory(scope(&sc), &name)?;
            if ctx.json {
                return Output::json(json!({"name": name, "content": text}));
            }
            Ok(Output::Raw(text))
        }
    }
}
