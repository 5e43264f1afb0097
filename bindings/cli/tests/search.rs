//! `sessionkit search`: hits as JSON and text, filters, `--all`, bad input.

mod common;

use common::{build, Env, MAIN};
use serde_json::{json, Value};
use sessionkit::{CreateOptions, Store};

fn hits(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["sessionId"].as_str().unwrap().to_string(),
                h["messageId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn search_json_finds_tool_calls_with_their_place() {
    let env = Env::new();
    let (main, fork) = build(&env);
    let v = env.json(&["search", "edit_file"]);
    // The fork copied the call: found in both sessions, by the same message id.
    assert_eq!(
        hits(&v),
        [
            (MAIN.to_string(), "a1".to_string()),
            (fork.clone(), "a1".to_string())
        ]
    );
    let h = &v["hits"][0];
    assert_eq!(h["role"], "assistant");
    assert_eq!(h["tools"], json!(["edit_file"]));
    assert!(
        h["snippet"].as_str().unwrap().contains("«edit_file»"),
        "{h}"
    );
    assert!(v["indexedBytes"].as_u64().unwrap() > 0);

    let only_main = env.json(&["search", "edit_file", "--session", &main[..8]]);
    assert_eq!(hits(&only_main), [(main.clone(), "a1".to_string())]);
    let users = env.json(&["search", "a.txt", "--role", "user", "--session", &main]);
    assert_eq!(
        hits(&users),
        [
            (main.clone(), "u1".to_string()),
            (main.clone(), "u3".to_string())
        ]
    );
    let by_tool = env.json(&["search", "a.txt", "--tool", "edit_file", "--limit", "1"]);
    assert_eq!(by_tool["hits"].as_array().unwrap().len(), 1);
    assert_eq!(by_tool["hits"][0]["messageId"], "a1");
    let late = env.json(&["search", "a.txt", "--since", "2100-01-01"]);
    assert!(hits(&late).is_empty());
}

#[test]
fn search_text_names_session_and_message() {
    let env = Env::new();
    build(&env);
    let out = env.text(&["search", "\"say three\""]);
    let first = out.lines().next().unwrap();
    assert!(first.contains(MAIN) && first.contains("u1"), "{out}");
    assert!(out.contains("Change a.txt to say three"), "{out}");
    assert!(env
        .text(&["search", "nowhere_to_be_found"])
        .contains("no match"));
}

#[test]
fn search_all_covers_every_project_of_the_home() {
    let env = Env::new();
    build(&env);
    let other = tempfile::tempdir().unwrap();
    let store = Store::open(other.path(), env.options(common::START_MS)).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"id": "x1", "role": "user", "content": "Change a.txt elsewhere"}))
        .unwrap();
    let here = env.json(&["search", "elsewhere"]);
    assert!(hits(&here).is_empty());
    let all = env.json(&["search", "--all", "elsewhere"]);
    assert_eq!(hits(&all), [(s.id().to_string(), "x1".to_string())]);
    assert_eq!(all["hits"][0]["project"], store.project_code());
}

#[test]
fn search_finds_results_by_tool_and_subagent_messages() {
    let env = Env::new();
    build(&env);
    // The result t1 answers call_1 (edit_file): the tool filter finds both.
    let by_tool = env.json(&["search", "a.txt", "--tool", "edit_file", "--session", MAIN]);
    assert_eq!(
        hits(&by_tool),
        [
            (MAIN.to_string(), "a1".to_string()),
            (MAIN.to_string(), "t1".to_string())
        ]
    );
    let store = Store::open(env.root(), env.options(common::START_MS)).unwrap();
    let s = store.open_session(MAIN).unwrap();
    let agent = s.spawn_subagent(Some("scout"), json!({})).unwrap();
    agent
        .append(json!({"id": "s1", "role": "assistant", "content": "Scouted the quokka module"}))
        .unwrap();
    let v = env.json(&["search", "quokka"]);
    assert_eq!(hits(&v), [(MAIN.to_string(), "s1".to_string())]);
    assert_eq!(v["hits"][0]["agentId"], "scout");
    assert_eq!(by_tool["hits"][0]["agentId"], Value::Null);
    let out = env.text(&["search", "quokka"]);
    assert!(out.contains("agent scout"), "{out}");
}

#[test]
fn search_bad_time_is_invalid_input() {
    let env = Env::new();
    build(&env);
    // InvalidInput (4) + 2.
    let err = env.fails(&["search", "a.txt", "--since", "yesterday"], 6);
    assert!(err.contains("yesterday"), "{err}");
}
