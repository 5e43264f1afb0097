//! The model view pairs tool calls with results after blobs are inlined, and
//! never hands the model a broken sequence (FORMAT.md §8.6).

use serde_json::{json, Value};
use sessionkit::{CreateOptions, Durability, ModelViewOptions, StoreOptions};

#[path = "support/env.rs"]
mod support_env;
use support_env::{env_with, Env};

/// A store whose values over 200 bytes go to blobs.
fn env() -> Env {
    env_with(StoreOptions {
        durability: Durability::Never,
        blob_threshold: 200,
        ..StoreOptions::default()
    })
}

fn ids(view: &[sessionkit::Message]) -> Vec<String> {
    view.iter().map(|m| m.id().to_string()).collect()
}

#[test]
fn a_tool_call_held_in_a_blob_gets_its_synthetic_result() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"id": "u1", "role": "user", "content": "Read the file."}))
        .unwrap();
    // The whole content array, tool_use block included, is over the threshold.
    let content = json!([
        {"type": "text", "text": "x".repeat(400)},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.rs"}}
    ]);
    s.append(json!({"id": "a1", "role": "assistant", "content": content}))
        .unwrap();
    let sid = s.id().to_string();
    s.close().unwrap();
    let raw = std::fs::read_to_string(e.store.log_path(&sid).unwrap()).unwrap();
    assert!(
        raw.contains("\"contentBlob\""),
        "the content went to a blob"
    );

    let view = e.store.read_session(&sid).unwrap();
    let mv = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(ids(&mv), ["u1", "a1", "a1:interrupted:toolu_1"]);
    assert_eq!(mv[1].value()["content"], content, "inlined");
    assert_eq!(
        mv[2].value(),
        json!({"id": "a1:interrupted:toolu_1", "parentId": "a1", "sessionId": sid,
               "role": "user", "content": "",
               "contentParams": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                  "content": "[interrupted: this tool call did not complete]",
                                  "is_error": true}],
               "meta": {"synthetic": "interrupted"}})
    );
    // Resuming from the end gives the same.
    let resumed = e
        .store
        .model_view(&sid, &ModelViewOptions::default())
        .unwrap();
    assert_eq!(ids(&resumed), ids(&mv));
}

#[test]
fn a_result_whose_call_is_gone_is_not_sent() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    let sid = s.id().to_string();
    s.append(json!({"id": "u1", "role": "user", "content": "go"}))
        .unwrap();
    s.close().unwrap();
    // The assistant line that made the call was damaged (it is skipped); its
    // result, written after it, remains.
    let log = e.store.log_path(&sid).unwrap();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(
        b"{\"id\":\"a1\",\"parentId\":\"u1\",\"role\":\"assistant\",\"messageParams\":{\"tool_calls\":[{\"id\":\"c1\"}]},\"content\":\"\\ud800\"}\n",
    );
    bytes.extend_from_slice(
        b"{\"id\":\"t1\",\"parentId\":\"a1\",\"role\":\"tool\",\"messageParams\":{\"tool_call_id\":\"c1\"},\"content\":\"ok\"}\n",
    );
    bytes.extend_from_slice(
        b"{\"id\":\"a2\",\"parentId\":\"t1\",\"role\":\"assistant\",\"content\":\"done\"}\n",
    );
    std::fs::write(&log, bytes).unwrap();

    let view = e.store.read_session(&sid).unwrap();
    assert_eq!(view.report().skipped.len(), 1);
    assert_eq!(view.report().skipped[0].kind, sessionkit::SkipKind::Json);
    // The UI still shows the result (its parent is missing: a broken chain)...
    assert_eq!(ids(&view.active_path().unwrap()), ["t1", "a2"]);
    // ...but the model is not sent a result without its call.
    let mv = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(ids(&mv), ["a2"]);
}

#[test]
fn a_token_budget_counts_values_held_in_blobs() {
    let e = env();
    let s = e.store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"id": "big", "role": "user", "content": "y".repeat(4000)}))
        .unwrap();
    s.append(json!({"id": "small", "role": "assistant", "content": "ok"}))
        .unwrap();
    let sid = s.id().to_string();
    s.close().unwrap();
    let view = e.store.read_session(&sid).unwrap();
    // 4000 bytes are 1000 tokens: a budget of 100 keeps only the last message.
    let opts = ModelViewOptions {
        token_budget: Some(100),
        ..ModelViewOptions::default()
    };
    assert_eq!(ids(&view.model_view(&opts).unwrap()), ["small"]);
    let all = view.model_view(&ModelViewOptions::default()).unwrap();
    assert_eq!(all[0].value()["content"], Value::String("y".repeat(4000)));
}
