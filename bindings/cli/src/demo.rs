//! `sessionkit demo`: a scripted agent session in a temporary project, on the
//! default store (or `--home`), printing what each step did.

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};
use sessionkit::{CompactionPolicy, CreateOptions, ForkOptions, RewindMode, Store};

use crate::cli::Global;
use crate::ctx::{paint, store_options, CliError, Ctx, Output, Result, BOLD, DIM};
use crate::sessions;

fn say(step: &str, text: impl AsRef<str>) {
    let mut out = anstream::stdout().lock();
    let _ = writeln!(
        out,
        "{} {}",
        paint(BOLD, format!("{step:<10}")),
        text.as_ref()
    );
}

fn write(root: &Path, rel: &str, text: &str) -> Result<()> {
    std::fs::write(root.join(rel), text).map_err(|e| {
        CliError::new(
            sessionkit::ErrorKind::of_io(&e),
            format!("writing {}: {e}", root.join(rel).display()),
        )
    })
}

fn tool_call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
}

pub fn run(g: &Global) -> Result<Output> {
    let project = tempfile::Builder::new()
        .prefix("sessionkit-demo-")
        .tempdir()
        .map_err(CliError::from)?;
    let root = project.path();
    write(root, "util.py", "def helper():\n    return 42\n")?;
    write(
        root,
        "test_util.py",
        "from util import helper\n\ndef test_helper():\n    assert helper() == 42\n",
    )?;
    let store = Store::open(root, store_options(g)?)?;
    say("store", store.dir().display().to_string());
    say(
        "project",
        format!("{} (util.py, test_util.py)", root.display()),
    );

    let s = store.create_session(CreateOptions::default())?;
    say("create", format!("session {}", s.id()));

    // Turn 1: read, edit with snapshots around it, a subagent, a reply.
    let u1 = s.user_input(
        json!({"content": "Rename helper() in util.py to answer() and run the tests"}),
    )?;
    s.update_state(json!({"status": "processing"}))?;
    say(
        "user",
        format!("{} (files snapshotted before it: checkpointHash)", u1.id()),
    );
    let a1 = s.append(json!({"role": "assistant", "content": "I'll read util.py first.",
        "messageParams": {"tool_calls": [tool_call("call_1", "read_file", json!({"path": "util.py"}))]}}))?;
    s.track_read(&["util.py"])?;
    s.append(
        json!({"role": "tool", "content": "def helper():\n    return 42\n",
        "messageParams": {"tool_call_id": "call_1"}}),
    )?;
    s.patch_message(
        a1.id(),
        json!({"meta": {"usage": {"input_tokens": 812, "output_tokens": 64}}}),
    )?;
    say(
        "assistant",
        format!("{} read_file util.py; usage patched in later", a1.id()),
    );

    s.append(json!({"role": "assistant", "content": "Renaming it in both files.",
        "messageParams": {"tool_calls": [tool_call("call_2", "edit_files", json!({"paths": ["util.py", "test_util.py"]}))]}}))?;
    s.before_edit(&["util.py", "test_util.py"])?;
    write(root, "util.py", "def answer():\n    return 42\n")?;
    write(
        root,
        "test_util.py",
        "from util import answer\n\ndef test_answer():\n    assert answer() == 42\n",
    )?;
    s.after_edit(&["util.py", "test_util.py"])?;
    s.append(
        json!({"role": "tool", "content": "edited util.py, test_util.py",
        "messageParams": {"tool_call_id": "call_2"}}),
    )?;
    say(
        "edit",
        "util.py, test_util.py (snapshots before and after the edit)",
    );

    let agent = s.spawn_subagent(None, json!({"description": "run the test suite"}))?;
    agent.append_batch(vec![
        json!({"role": "user", "content": "Run pytest and report failures"}),
        json!({"role": "assistant", "content": "1 passed."}),
    ])?;
    agent.finish(json!({"summary": "1 passed"}), false)?;
    say(
        "subagent",
        format!(
            "{} ran the tests; its result is in the main log",
            agent.id()
        ),
    );
    s.append(
        json!({"role": "assistant", "content": "Renamed helper() to answer(); the test passes.",
        "meta": {"usage": {"input_tokens": 1020, "output_tokens": 31}}}),
    )?;
    s.update_state(json!({"status": "completed"}))?;
    say("assistant", "reply; status completed");

    // Turn 2: an edit the user then undoes, files and conversation.
    let u2 =
        s.user_input(json!({"content": "Also write a NOTES.md and make answer() return 43"}))?;
    say("user", u2.id());
    s.append(json!({"role": "assistant", "content": "Writing NOTES.md and changing answer().",
        "messageParams": {"tool_calls": [tool_call("call_3", "write_files", json!({"paths": ["NOTES.md", "util.py"]}))]}}))?;
    s.before_edit(&["NOTES.md", "util.py"])?;
    write(root, "NOTES.md", "# Notes\n\nanswer() now returns 43.\n")?;
    write(root, "util.py", "def answer():\n    return 43\n")?;
    s.after_edit(&["NOTES.md", "util.py"])?;
    s.append(json!({"role": "tool", "content": "wrote NOTES.md, util.py",
        "messageParams": {"tool_call_id": "call_3"}}))?;
    s.append(
        json!({"role": "assistant", "content": "Done: NOTES.md written, answer() returns 43."}),
    )?;
    say("edit", "NOTES.md created, util.py changed");

    for c in s.undo_candidates()? {
        say(
            "undo?",
            format!(
                "{} {:?}: {} file(s), +{} -{} lines since",
                c.message_id,
                c.preview,
                c.stats.files_changed,
                c.stats.lines_added,
                c.stats.lines_removed
            ),
        );
    }
    let plan = s.rewind_plan(u2.id())?;
    for f in &plan.files {
        say(
            "plan",
            format!(
                "{:?} {} (+{} -{})",
                f.action, f.path, f.lines_added, f.lines_removed
            ),
        );
    }
    let r = s.rewind(u2.id(), RewindMode::Both, false)?;
    say(
        "rewind",
        format!(
            "files and conversation to before {}: restored {:?}, deleted {:?}; head → {}",
            u2.id(),
            r.restored,
            r.deleted,
            r.head.as_deref().unwrap_or("-")
        ),
    );
    let notes_gone = !root.join("NOTES.md").exists();
    let util = std::fs::read_to_string(root.join("util.py")).unwrap_or_default();
    say(
        "check",
        format!(
            "NOTES.md gone: {notes_gone}; util.py returns 42 again: {}",
            util.contains("42")
        ),
    );

    // Turn 3 on a new branch, then a compaction of turn 1.
    let u3 = s.user_input(json!({"content": "Instead, add a docstring to answer()"}))?;
    s.append(
        json!({"role": "assistant", "content": "Added a docstring to answer().",
        "meta": {"usage": {"input_tokens": 1200, "output_tokens": 20}}}),
    )?;
    say(
        "user",
        format!("{} starts a new branch from the rewound point", u3.id()),
    );
    let policy = CompactionPolicy {
        token_budget: 60,
        keep_last_turns: 1,
        summary_tokens: 20,
    };
    match s.select_compaction(&policy)? {
        Some(plan) => {
            let summary = s.apply_compaction(
                &plan.replaces,
                json!("The user asked to rename helper() to answer(); it was renamed in util.py and test_util.py and the test passes."),
            )?;
            say(
                "compact",
                format!(
                    "{} messages replaced by summary {} ({} → {} tokens without it)",
                    plan.replaces.len(),
                    summary.id(),
                    plan.tokens_before,
                    plan.tokens_after
                ),
            );
        }
        None => say("compact", "nothing to compact"),
    }
    let model = s.model_view(&Default::default())?;
    say(
        "model",
        format!("the model would get {} messages", model.len()),
    );
    let id = s.id().to_string();
    s.close()?;

    // A fork of the session at its head.
    let f = store.fork_session(
        &id,
        ForkOptions {
            at: None,
            title: Some("Docstring experiment (fork)".into()),
        },
    )?;
    f.append(json!({"role": "user", "content": "Try a one-line docstring instead"}))?;
    let fork_id = f.id().to_string();
    f.close()?;
    say("fork", format!("{fork_id} from {id}"));

    let ctx = Ctx {
        store,
        json: g.json,
    };
    if g.json {
        return Output::json(json!({
            "store": ctx.store.dir(),
            "project": root,
            "session": id,
            "fork": fork_id,
        }));
    }
    let mut text = format!("\n{}\n", paint(BOLD, "$ sessionkit list"));
    if let Output::Text(t) = sessions::list(&ctx, sessionkit::ListOptions::default())? {
        text.push_str(&t);
    }
    text.push_str(&format!(
        "\n{}\n",
        paint(BOLD, format!("$ sessionkit tree {id}"))
    ));
    if let Output::Text(t) = sessions::tree(&ctx, &id)? {
        text.push_str(&t);
    }
    text.push_str(&format!(
        "\n{}\n",
        paint(
            DIM,
            "the temporary project is removed; the sessions stay in the store"
        )
    ));
    Ok(Output::Text(text))
}
