//! The README's demo: a scripted agent session on the default store
//! (`$SESSIONKIT_HOME`, else `~/.sessionkit`), printing what each step did.
//!
//! Run with `cargo run -p sessionkit --example demo`.

use serde_json::json;
use sessionkit::{CreateOptions, Store, StoreOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::Builder::new()
        .prefix("sessionkit-demo-")
        .tempdir()?;
    let store = Store::open(project.path(), StoreOptions::default())?;
    println!("store      {}", store.dir().display());

    let session = store.create_session(CreateOptions::default())?;
    println!("create     session {}", session.id());

    let user = session.append(
        json!({"role": "user", "content": "Rename the helper in util.py and run the tests"}),
    )?;
    session.update_state(json!({"status": "processing"}))?;
    println!("append     user {}", user.id());

    let call = session.append(json!({
        "role": "assistant",
        "content": "I'll look at util.py first.",
        "messageParams": {"tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\":\"util.py\"}"}}]}
    }))?;
    session.patch_message(
        call.id(),
        json!({"meta": {"usage": {"input_tokens": 812, "output_tokens": 64}}}),
    )?;
    println!(
        "append     assistant {} (tool call read_file; usage patched in later)",
        call.id()
    );

    let result = session.append(json!({
        "role": "tool", "content": "def helper():\n    return 42\n",
        "messageParams": {"tool_call_id": "call_1"}
    }))?;
    println!("append     tool result {}", result.id());

    let agent = session.spawn_subagent(None, json!({"description": "run the test suite"}))?;
    agent.append_batch(vec![
        json!({"role": "user", "content": "Run pytest and report failures"}),
        json!({"role": "assistant", "content": "All 12 tests passed."}),
    ])?;
    agent.finish(json!({"summary": "12 passed"}), false)?;
    println!(
        "subagent   {} ran 2 messages, result recorded in the main log",
        agent.id()
    );

    let reply = session.append(
        json!({"role": "assistant", "content": "Renamed helper() to answer(); all 12 tests pass.",
        "meta": {"usage": {"input_tokens": 1020, "output_tokens": 31}}}),
    )?;
    session.update_state(json!({"status": "completed"}))?;
    println!("append     assistant {}; status completed", reply.id());
    let id = session.id().to_string();
    session.close()?;

    let view = store.read_session(&id)?;
    println!(
        "resume     {} messages on the active path, log clean: {}",
        view.active_path()?.len(),
        view.report().is_clean()
    );
    for m in view.active_path()? {
        let v = m.value();
        let text = v["content"].as_str().unwrap_or("").replace('\n', " ");
        println!(
            "           {:<9} {}",
            v["role"].as_str().unwrap_or("?"),
            text.chars().take(60).collect::<String>()
        );
    }

    println!("list");
    for e in store.list_sessions()? {
        println!(
            "           {}  {:?}  {:?}  {} messages  tokens {}",
            &e.id[..8],
            e.title,
            e.status,
            e.message_count,
            serde_json::Value::Object(e.token_usage.clone())
        );
    }
    let picked = store.continue_session()?;
    println!(
        "continue   would resume {}",
        picked.map(|e| e.id).unwrap_or_default()
    );
    Ok(())
}
