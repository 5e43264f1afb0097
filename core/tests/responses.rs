//! OpenAI Responses items (the OpenAI Agents SDK's session items) kept as
//! messages: they come back as they went in, `pop` only moves the head, the
//! model view never starts at an output, and open-or-create keeps a given id.

use serde_json::{json, Value};
use sessionkit::{CreateOptions, ErrorKind, Store, StoreOptions};

fn store() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        home: Some(tmp.path().join("home")),
        ..StoreOptions::default()
    };
    let store = Store::open(tmp.path(), options).unwrap();
    (tmp, store)
}

fn items(text: &str) -> Vec<Value> {
    serde_json::from_str(text).unwrap()
}

fn turn() -> Vec<Value> {
    vec![
        json!({"role": "user", "content": "weather in Paris?"}),
        json!({"type": "function_call", "call_id": "c1", "name": "weather",
               "arguments": "{\"city\":\"Paris\"}", "id": "fc_1", "status": "completed"}),
        json!({"type": "function_call_output", "call_id": "c1", "output": "sunny"}),
        json!({"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
               "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]}),
    ]
}

#[test]
fn items_round_trip_and_show_as_messages_in_the_index() {
    let (_tmp, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append_responses_items(turn()).unwrap();
    assert_eq!(items(&s.responses_items(None, false).unwrap()), turn());
    assert_eq!(
        items(&s.responses_items(Some(2), false).unwrap()),
        turn()[2..]
    );
    assert_eq!(
        items(&s.responses_items(Some(0), false).unwrap()),
        Vec::<Value>::new()
    );
    let entry = store.session_entry(s.id()).unwrap();
    assert_eq!(
        (entry.title.as_str(), entry.message_count),
        ("weather in Paris?", 4)
    );
    let roles: Vec<Value> = s
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.value()["role"].clone())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    // Nothing is written when one item is bad.
    let err = s
        .append_responses_items(vec![json!({"role": "user"}), json!(7)])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(s.active_path().unwrap().len(), 4);
}

#[test]
fn pop_moves_the_head_back_and_keeps_the_message_in_the_log() {
    let (_tmp, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append_responses_items(turn()).unwrap();
    let popped = s.pop_responses_item().unwrap().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&popped).unwrap(), turn()[3]);
    assert_eq!(items(&s.responses_items(None, false).unwrap()), turn()[..3]);
    let view = store.read_session(s.id()).unwrap();
    assert_eq!(view.message_count(), 4);
    for _ in 0..3 {
        s.pop_responses_item().unwrap().unwrap();
    }
    assert_eq!(s.pop_responses_item().unwrap(), None);
}

#[test]
fn the_model_view_never_starts_at_an_output_and_answers_open_calls() {
    let (_tmp, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append_responses_items(turn()).unwrap();
    // The last two items start at an output, cut from its call: the model
    // view leaves it out rather than send an output without its call.
    let got = items(&s.responses_items(Some(2), true).unwrap());
    assert_eq!(got, turn()[3..], "{got:?}");
    let got = items(&s.responses_items(Some(3), true).unwrap());
    assert_eq!(got, turn()[1..], "{got:?}");
    // A call without an output gets a synthetic one.
    s.append_responses_items(vec![json!({"type": "function_call", "call_id": "c2",
                                         "name": "weather", "arguments": "{}"})])
        .unwrap();
    let got = items(&s.responses_items(None, true).unwrap());
    let last = got.last().unwrap();
    assert_eq!(
        (&last["type"], &last["call_id"]),
        (&json!("function_call_output"), &json!("c2"))
    );
}

#[test]
fn open_or_create_keeps_the_given_id() {
    let (_tmp, store) = store();
    let s = store.open_or_create_session("chat-1").unwrap();
    assert_eq!(s.id(), "chat-1");
    s.append_responses_items(turn()).unwrap();
    s.close().unwrap();
    let again = store.open_or_create_session("chat-1").unwrap();
    assert_eq!(again.active_path().unwrap().len(), 4);
    let err = store.open_or_create_session("chat-1").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    let err = store.open_or_create_session("../x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

fn compaction_item(n: u32) -> Value {
    json!({"type": "compaction", "id": format!("cmp_{n}"), "encrypted_content": format!("opaque-{n}")})
}

#[test]
fn replace_with_compaction_starts_the_model_view_at_the_compaction_item_and_keeps_the_originals() {
    let (_tmp, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let originals = s.append_responses_items(turn()).unwrap();
    let replacement = vec![
        compaction_item(1),
        json!({"role": "user", "content": "and tomorrow?"}),
    ];
    let stored = s
        .replace_responses_items_with_compaction(replacement.clone())
        .unwrap();
    assert_eq!(stored.len(), 2);

    // The model's view is the replacement, exactly; the active path keeps all.
    assert_eq!(items(&s.responses_items(None, true).unwrap()), replacement);
    let mut all = turn();
    all.extend(replacement.clone());
    assert_eq!(items(&s.responses_items(None, false).unwrap()), all);

    // One compaction record, naming the compaction item and every original.
    let log = std::fs::read_to_string(store.log_path(s.id()).unwrap()).unwrap();
    let compactions: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "compaction")
        .collect();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["summaryId"], stored[0].id());
    let original_ids: Vec<&str> = originals.iter().map(|m| m.id()).collect();
    assert_eq!(compactions[0]["replaces"], json!(original_ids));
    let flags: Vec<bool> = store
        .read_session(s.id())
        .unwrap()
        .ui_view()
        .unwrap()
        .iter()
        .map(|m| m.value()["compacted"] == true)
        .collect();
    assert_eq!(flags, [true, true, true, true, false, false]);

    // Read back from the log by a reader (the backward resume), and after a
    // second compaction, which replaces the first.
    let id = s.id().to_string();
    s.close().unwrap();
    let ids = |ms: Vec<sessionkit::Message>| -> Vec<String> {
        ms.iter().map(|m| m.id().to_string()).collect()
    };
    let resumed = store.model_view(&id, &Default::default()).unwrap();
    assert_eq!(ids(resumed), ids(stored.clone()));
    let s = store.open_session(&id).unwrap();
    let again = vec![
        compaction_item(2),
        json!({"role": "user", "content": "thanks"}),
    ];
    s.replace_responses_items_with_compaction(again.clone())
        .unwrap();
    assert_eq!(items(&s.responses_items(None, true).unwrap()), again);

    // Moving the head back before a compaction brings the originals back.
    s.set_head(Some(originals[3].id())).unwrap();
    assert_eq!(items(&s.responses_items(None, true).unwrap()), turn());
}

#[test]
fn replace_with_compaction_refuses_items_that_do_not_start_with_one_and_writes_nothing() {
    let (_tmp, store) = store();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append_responses_items(turn()).unwrap();
    let before = std::fs::read(store.log_path(s.id()).unwrap()).unwrap();
    for (bad, says) in [
        (vec![], "none were given"),
        (
            vec![json!({"role": "user", "content": "hi"})],
            "an object without a `type`",
        ),
        (turn()[1..].to_vec(), "of type \"function_call\""),
        (vec![compaction_item(1), json!(7)], "must be a JSON object"),
    ] {
        let err = s.replace_responses_items_with_compaction(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains(says), "{err}");
    }
    assert_eq!(
        std::fs::read(store.log_path(s.id()).unwrap()).unwrap(),
        before
    );

    // On an empty session there is nothing to replace: the items are the history.
    let empty = store.create_session(CreateOptions::default()).unwrap();
    let given = vec![compaction_item(3), json!({"role": "user", "content": "hi"})];
    empty
        .replace_responses_items_with_compaction(given.clone())
        .unwrap();
    assert_eq!(items(&empty.responses_items(None, true).unwrap()), given);
    assert_eq!(items(&empty.responses_items(None, false).unwrap()), given);
}
