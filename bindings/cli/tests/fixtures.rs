//! The shared fixtures (tests/fixtures), copied to a temporary directory first:
//! the golden store read through the CLI, and `doctor --repair` on every log.

mod common;
#[path = "../../../tests/replay.rs"]
mod replay;

use std::collections::HashSet;

use common::{copy_dir, fixtures, Env};
use serde_json::{json, Value};
use sessionkit::{Store, StoreOptions};

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("manifest.json")).unwrap()).unwrap()
}

/// The golden home copied, with a runner for the project `/`.
fn golden() -> (tempfile::TempDir, assert_cmd::Command) {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("golden/home"), &tmp.path().join("home"));
    let mut c = assert_cmd::Command::cargo_bin("sessionkit").unwrap();
    c.env("NO_COLOR", "1")
        .env("SESSIONKIT_NOW", common::NOW)
        .arg("--home")
        .arg(tmp.path().join("home"))
        .arg("--project")
        .arg("/");
    (tmp, c)
}

fn run_json(mut c: assert_cmd::Command, args: &[&str]) -> Value {
    let out = c.arg("--json").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn golden_store_lists_and_shows_as_the_manifest_says() {
    let m = manifest();
    let store = &m["stores"][0];
    let (_tmp, c) = golden();
    let list = run_json(c, &["list"]);
    let order: Vec<&Value> = list.as_array().unwrap().iter().map(|e| &e["id"]).collect();
    let want: Vec<&Value> = store["indexOrder"].as_array().unwrap().iter().collect();
    assert_eq!(order, want);
    for s in store["sessions"].as_array().unwrap() {
        let id = s["session"].as_str().unwrap();
        let Some(path) = s["read"]["activePath"].as_array() else {
            continue;
        };
        let (_tmp, c) = golden();
        let v = run_json(c, &["show", id]);
        assert_eq!(
            shown_ids(&v),
            path.iter().collect::<Vec<_>>(),
            "session {id}"
        );
        if let Some(mv) = s["read"]["modelView"].as_array() {
            let (_tmp, c) = golden();
            let v = run_json(c, &["show", id, "--model-view"]);
            assert_eq!(
                shown_ids(&v),
                mv.iter().collect::<Vec<_>>(),
                "model view of {id}"
            );
        }
    }
}

#[test]
fn golden_store_is_healthy_for_doctor() {
    let (_tmp, mut c) = golden();
    let out = c.args(["--json", "doctor"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["index"]["state"], "ok");
    // Four sessions and two subagent sidechains.
    assert_eq!(v["logs"].as_array().unwrap().len(), 6);
}

#[test]
fn doctor_rebuilds_a_lost_index() {
    let (tmp, mut c) = golden();
    let index = tmp.path().join("home/projects/-/sessions-index.json");
    std::fs::write(&index, "{not json").unwrap();
    let out = c.args(["--json", "doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["index"]["state"], "corrupt");
    let home = tmp.path().join("home");
    let mut c = assert_cmd::Command::cargo_bin("sessionkit").unwrap();
    c.env("NO_COLOR", "1").arg("--home").arg(&home).args([
        "--project",
        "/",
        "--json",
        "doctor",
        "--repair",
    ]);
    let out = c.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["index"]["state"], "ok");
    assert!(v["repaired"][0]
        .as_str()
        .unwrap()
        .contains("rebuilt the index"));
    let idx: Value = serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    assert_eq!(idx["sessions"].as_array().unwrap().len(), 4);
}

/// A fresh store with the log entry `l` installed in its project directory.
fn installed(l: &Value) -> (Env, Store) {
    let env = Env::new();
    let store = Store::open(
        env.root(),
        StoreOptions {
            home: Some(env.home.path().to_path_buf()),
            ..StoreOptions::default()
        },
    )
    .unwrap();
    replay::install(l, &fixtures(), store.dir());
    (env, store)
}

/// Every message id of a log, through the library, if it can be read.
fn message_ids(store: &Store, id: &str) -> Option<HashSet<String>> {
    let v = store.read_session(id).ok()?;
    Some(v.tree().ok()?.into_iter().map(|n| n.id).collect())
}

#[test]
fn doctor_repair_on_every_fixture_log_loses_nothing() {
    let m = manifest();
    for l in m["logs"].as_array().unwrap() {
        let name = l["name"].as_str().unwrap();
        let sid = l["session"].as_str().unwrap();
        let (env, store) = installed(l);
        let before = message_ids(&store, sid);
        let log = store.log_path(sid).unwrap();
        let bytes_before = std::fs::read(&log).unwrap();

        let out = env
            .cmd()
            .args(["--json", "doctor", "--repair"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let code = out.status.code().unwrap();
        assert!(code == 0 || code == 1, "{name}: exit {code}");
        assert_eq!(code == 0, v["ok"] == true, "{name}");

        // Nothing already written was cut: the log only grew (a newline at most).
        let bytes_after = std::fs::read(&log).unwrap();
        assert!(
            bytes_after.starts_with(&bytes_before),
            "{name}: the log was rewritten"
        );
        assert!(bytes_after.len() <= bytes_before.len() + 1, "{name}");

        let c = v["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == sid)
            .unwrap();
        if l["read"]["error"].is_string() {
            assert!(c["error"].is_string(), "{name}: the read error is reported");
            assert_eq!(code, 1, "{name}");
            continue;
        }
        // Afterwards: no torn tail, nothing left to quarantine, and the store opens.
        assert!(c["tornTail"].is_null(), "{name}: {c}");
        assert_eq!(c["unquarantined"], 0, "{name}");
        let r = store.read_session(sid).unwrap();
        assert!(r.report().torn_tail.is_none(), "{name}");
        // (With an index of a newer version, opening for writing is refused.)
        if l["open"]["error"].is_null() && l["listSessions"]["error"].is_null() {
            let s = store.open_session(sid).unwrap();
            assert!(s.open_report().torn_tail.is_none(), "{name}");
            s.close().unwrap();
        }
        // No valid message was lost.
        let after = message_ids(&store, sid);
        if let Some(before) = before {
            let after = after.unwrap_or_else(|| panic!("{name}: readable before, not after"));
            assert!(
                before.is_subset(&after),
                "{name}: lost {:?}",
                before.difference(&after)
            );
        }
        if l["listSessions"]["error"].is_null() {
            assert_eq!(v["index"]["state"], "ok", "{name}");
            assert!(
                store.list_sessions().unwrap().iter().any(|e| e.id == sid),
                "{name}: in the index"
            );
        } else {
            assert_eq!(v["index"]["state"], "unsupported", "{name}");
        }
        // A second run has nothing left to repair.
        let out = env.cmd().args(["--json", "doctor"]).output().unwrap();
        let v2: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let c2 = v2["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == sid)
            .unwrap();
        assert!(
            c2["tornTail"].is_null() && c2["unquarantined"] == 0,
            "{name}: {c2}"
        );
    }
}

/// The ids of the messages `show --json` printed, in order.
fn shown_ids(v: &Value) -> Vec<&Value> {
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect()
}

/// The number a failure of this error kind exits with (bindings/cli/README.md).
fn exit_code(kind: &str) -> i32 {
    let kinds = [
        "NotFound",
        "Busy",
        "Conflict",
        "InvalidInput",
        "Corrupt",
        "Io",
        "Unsupported",
        "Internal",
    ];
    let n = kinds
        .iter()
        .position(|k| *k == kind)
        .unwrap_or_else(|| panic!("kind {kind}"));
    n as i32 + 3
}

/// Run `sessionkit --json ARGS`: its JSON output, or the kind its exit code says.
fn show(env: &Env, args: &[&str]) -> Result<Value, i32> {
    let out = env.cmd().arg("--json").args(args).output().unwrap();
    match out.status.code() {
        Some(0) => Ok(serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))),
        code => Err(code.unwrap_or(-1)),
    }
}

/// Every log of the manifest through `show --json`, `show --model-view` (with
/// and without options), `show --active-path` and `list`: the UI view, the
/// report, the model views, single messages' fields and the index entry the
/// manifest states, a read error as its exit code.
#[test]
fn every_fixture_log_shows_as_the_manifest_says() {
    let m = manifest();
    let mut failures = Vec::new();
    for l in m["logs"].as_array().unwrap() {
        let name = l["name"].as_str().unwrap();
        let sid = l["session"].as_str().unwrap();
        let mut c = replay::Check::new(name, l);
        let (env, _store) = installed(l);
        let want = &l["read"];
        // `show` reads the session's index entry too: with an index it must
        // refuse (a newer version), there is nothing to compare.
        if l["listSessions"]["error"].is_string() {
            continue;
        }
        let view_error = |w: &Value| w["error"].as_str().map(exit_code);

        let shown = show(&env, &["show", sid]);
        let read_error = view_error(want);
        let path_error = want.get("activePath").and_then(view_error);
        match (&shown, read_error.or(path_error)) {
            (Err(code), Some(wanted)) => {
                if *code != wanted {
                    c.fail(format!("show: exit {code}, expected {wanted}"));
                }
            }
            (Err(code), None) => c.fail(format!("show: exit {code}, expected success")),
            (Ok(_), Some(wanted)) => c.fail(format!("show succeeded, expected exit {wanted}")),
            (Ok(v), None) => {
                let msgs = v["messages"].as_array().cloned().unwrap_or_default();
                let ids: Vec<Value> = msgs.iter().map(|m| m["id"].clone()).collect();
                if let Some(p) = want.get("activePath") {
                    c.eq("read.activePath", &Value::Array(ids), p);
                }
                if let Some(u) = want.get("ui") {
                    let rows: Vec<Value> = msgs
                        .iter()
                        .map(|m| json!([m["id"], m["visible"], m["compacted"]]))
                        .collect();
                    c.eq("read.ui", &Value::Array(rows), u);
                }
                if let Some(r) = want.get("report") {
                    replay::check_report(&mut c, "read.report", &v["report"], r);
                }
            }
        }
        if read_error.is_some() {
            c.finish(&mut failures, false);
            continue;
        }
        if let Some(mv) = want.get("modelView") {
            match show(&env, &["show", sid, "--model-view"]) {
                Ok(v) => {
                    let msgs = v["messages"].as_array().cloned().unwrap_or_default();
                    let ids: Vec<Value> = msgs.iter().map(|m| m["id"].clone()).collect();
                    c.eq("read.modelView", &Value::Array(ids), mv);
                    for (id, fields) in want["modelViewMessages"].as_object().into_iter().flatten()
                    {
                        let Some(got) = msgs.iter().find(|m| m["id"] == json!(id)) else {
                            c.fail(format!(
                                "read.modelViewMessages.{id}: not in the model view"
                            ));
                            continue;
                        };
                        for (k, w) in fields.as_object().unwrap() {
                            let g = got.get(k).cloned().unwrap_or(Value::Null);
                            c.eq(&format!("read.modelViewMessages.{id}.{k}"), &g, w);
                        }
                    }
                }
                Err(code) => match view_error(mv) {
                    Some(wanted) if wanted == code => {}
                    _ => c.eq("read.modelView", &json!({"exit": code}), mv),
                },
            }
        }
        for case in want["modelViewWith"].as_array().into_iter().flatten() {
            let o = &case["options"];
            let mut args = vec!["show", sid, "--model-view"];
            let (last, budget) = (o["lastN"].to_string(), o["tokenBudget"].to_string());
            if o["lastN"].is_u64() {
                args.extend(["--last", &last]);
            }
            if o["tokenBudget"].is_u64() {
                args.extend(["--token-budget", &budget]);
            }
            match show(&env, &args) {
                Ok(v) => {
                    let ids: Vec<Value> = v["messages"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|m| m["id"].clone())
                        .collect();
                    c.eq(
                        &format!("read.modelViewWith {o}"),
                        &Value::Array(ids),
                        &case["ids"],
                    );
                }
                Err(code) => c.fail(format!("show --model-view {o}: exit {code}")),
            }
        }
        // Fields of single messages, for those on the active path.
        if let Some(fields) = want["messages"].as_object() {
            match show(&env, &["show", sid, "--active-path"]) {
                Ok(v) => {
                    let path = v["messages"].as_array().cloned().unwrap_or_default();
                    for (id, want_fields) in fields {
                        let Some(got) = path.iter().find(|m| m["id"] == json!(id)) else {
                            continue;
                        };
                        for (k, w) in want_fields.as_object().unwrap() {
                            let g = got.get(k).cloned().unwrap_or(Value::Null);
                            c.eq(&format!("read.messages.{id}.{k}"), &g, w);
                        }
                    }
                }
                Err(code) => c.fail(format!("show --active-path: exit {code}")),
            }
        }
        // The index entry, as `list` builds it from the log in a store without an index.
        if let Some(fields) = l["index"].as_object() {
            match show(&env, &["list"]) {
                Ok(list) => {
                    let entry = list
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|e| e["id"] == json!(sid))
                        .cloned()
                        .unwrap_or(Value::Null);
                    for (k, w) in fields {
                        c.eq(&format!("index.{k}"), &entry[k], w);
                    }
                }
                Err(code) => c.fail(format!("list: exit {code}")),
            }
        }
        // Only part of READ goes through the CLI: deviations elsewhere are not stale here.
        c.finish(&mut failures, false);
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
