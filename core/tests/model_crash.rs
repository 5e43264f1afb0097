//! A model-based test with crashes: two processes run random operations
//! (append, batch, state, fork, rewind, rename, delete, compaction) on their
//! own sessions of one project, and are killed with SIGKILL at random moments.
//! After every kill the store is checked against an in-memory model of what
//! must survive: every session's active path is exactly what its acknowledged
//! operations made it, or that plus the one operation in flight (nothing
//! unacknowledged half-visible); a deleted session is gone; titles in the
//! index match; the index parses; every view folds.
//!
//! Each child writes, before an operation, its intent with the session's state
//! should it complete, and after it returns, an acknowledgement (each line one
//! write on an append-only file; a line the kill cut is not counted). The next
//! generation of children starts from the state the check found.
//!
//! The children re-execute this test binary with the ignored test
//! `child_operator` as their entry point (`--ignored --exact`), so a plain run
//! never counts a child as a passing test.
//!
//! Knobs: `SESSIONKIT_MODEL_CYCLES` (kill cycles, default 20; e.g. 2000 for a
//! long run: `SESSIONKIT_MODEL_CYCLES=2000 cargo test --release -p sessionkit
//! --test model_crash -- --nocapture`), `SESSIONKIT_MODEL_SEED`.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use sessionkit::{CreateOptions, ErrorKind, ForkOptions, Session, Store, StoreOptions};

const CHILD_ENV: &str = "SESSIONKIT_MODEL_CHILD";
const CHILDREN: usize = 2;

#[path = "support/child.rs"]
mod support_child;
use support_child::test_child;
#[path = "support/leftovers.rs"]
mod leftovers;
#[path = "support/rng.rs"]
mod rng;
use leftovers::{gc_removes_every_temp_file, temp_files};
use rng::{env_u64, Rng};

fn options(home: &Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        max_sessions: 0,
        ..StoreOptions::default()
    }
}

/// What must be true of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Expect {
    /// Message ids from the root to the head.
    path: Vec<String>,
    /// Set by a rename; `None`: whatever the library derived.
    title: Option<String>,
    /// Ids of compaction summaries (never compacted again).
    summaries: Vec<String>,
}

/// One journal line: an intent (`if_done`: the session's state should the
/// operation complete, `None` for a delete) or an acknowledgement.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Intent {
        intent: u64,
        op: String,
        session: String,
        if_done: Option<Expect>,
    },
    Ack {
        ack: u64,
        ok: bool,
    },
}

type Model = BTreeMap<String, Expect>;

// ---------------------------------------------------------------------------
// The child.

struct Operator {
    store: Store,
    open: BTreeMap<String, (Session, Expect)>,
    journal: fs::File,
    seq: u64,
    rng: Rng,
    tag: String,
    made: u64,
}

impl Operator {
    fn line(&mut self, l: &Line) {
        let mut s = serde_json::to_string(l).expect("a journal line");
        s.push('\n');
        self.journal.write_all(s.as_bytes()).expect("the journal");
    }

    fn fresh_id(&mut self) -> String {
        self.made += 1;
        format!("{}-{}", self.tag, self.made)
    }

    /// Journal the intent, run `op`, journal its outcome; on success the
    /// session's state becomes `if_done`.
    fn step(
        &mut self,
        op: &str,
        session: &str,
        if_done: Option<Expect>,
        run: impl FnOnce(&mut Operator) -> sessionkit::Result<()>,
    ) {
        self.seq += 1;
        let seq = self.seq;
        self.line(&Line::Intent {
            intent: seq,
            op: op.into(),
            session: session.into(),
            if_done: if_done.clone(),
        });
        let r = run(self);
        if let Err(e) = &r {
            eprintln!("{}: {op} {session} failed: {e}", self.tag);
        }
        let ok = r.is_ok();
        self.line(&Line::Ack { ack: seq, ok });
        if ok {
            match if_done {
                Some(e) => {
                    if let Some(s) = self.open.get_mut(session) {
                        s.1 = e;
                    }
                }
                None => {
                    self.open.remove(session);
                }
            }
        }
    }

    fn one_op(&mut self) {
        if self.open.is_empty() {
            let id = self.fresh_id();
            let e = Expect {
                path: vec![],
                title: None,
                summaries: vec![],
            };
            self.step("create", &id.clone(), Some(e.clone()), |c| {
                let s = c.store.create_session(CreateOptions {
                    id: Some(id.clone()),
                    title: None,
                })?;
                c.open.insert(id, (s, e));
                Ok(())
            });
            return;
        }
        let ids: Vec<String> = self.open.keys().cloned().collect();
        let sid = ids[self.rng.index(ids.len())].clone();
        let cur = self.open[&sid].1.clone();
        let mut next = cur.clone();
        match self.rng.index(12) {
            0..=3 => {
                let m = self.fresh_id();
                next.path.push(m.clone());
                let role = if self.rng.index(2) == 0 {
                    "user"
                } else {
                    "assistant"
                };
                self.step("append", &sid, Some(next), |c| {
                    c.open[&sid]
                        .0
                        .append(json!({"id": m, "role": role, "content": format!("text of {m}")}))
                        .map(drop)
                });
            }
            4 => {
                let n = 2 + self.rng.index(3);
                let ms: Vec<String> = (0..n).map(|_| self.fresh_id()).collect();
                next.path.extend(ms.iter().cloned());
                self.step("batch", &sid, Some(next), |c| {
                    let batch = ms
                        .iter()
                        .map(|m| json!({"id": m, "role": "assistant", "content": "x".repeat(3000)}))
                        .collect();
                    c.open[&sid].0.append_batch(batch).map(drop)
                });
            }
            5 => self.step("state", &sid, Some(next), |c| {
                c.open[&sid]
                    .0
                    .update_state(json!({"status": "processing"}))
                    .map(drop)
            }),
            6 if !cur.path.is_empty() => {
                let at = self.rng.index(cur.path.len());
                next.path.truncate(at + 1);
                let to = cur.path[at].clone();
                self.step("rewind", &sid, Some(next), |c| {
                    c.open[&sid].0.resume_at(&to)
                });
            }
            7 => {
                let t = format!("title {}", self.fresh_id());
                next.title = Some(t.clone());
                self.step("rename", &sid, Some(next), |c| {
                    c.open[&sid].0.rename(&t).map(drop)
                });
            }
            8 if !cur.path.is_empty() => {
                let at = self.rng.index(cur.path.len());
                let forked = Expect {
                    path: cur.path[..=at].to_vec(),
                    title: cur.title.clone(),
                    summaries: cur
                        .summaries
                        .iter()
                        .filter(|s| cur.path[..=at].contains(s))
                        .cloned()
                        .collect(),
                };
                let at_id = cur.path[at].clone();
                // A fork's id is the library's: the intent names the source.
                self.seq += 1;
                let seq = self.seq;
                self.line(&Line::Intent {
                    intent: seq,
                    op: "fork".into(),
                    session: sid.clone(),
                    if_done: Some(forked.clone()),
                });
                let r = self.store.fork_session(
                    &sid,
                    ForkOptions {
                        at: Some(at_id),
                        title: None,
                    },
                );
                let ok = r.is_ok();
                if let Ok(s) = r {
                    let id = s.id().to_string();
                    // The fork's id, so that the model can follow it.
                    self.line(&Line::Intent {
                        intent: seq,
                        op: "forked".into(),
                        session: id.clone(),
                        if_done: Some(forked.clone()),
                    });
                    self.open.insert(id, (s, forked));
                }
                self.line(&Line::Ack { ack: seq, ok });
            }
            9 if self.open.len() > 1 => {
                self.step("delete", &sid, None, |c| {
                    let (s, _) = c.open.remove(&sid).expect("an open session");
                    s.close()?;
                    c.store.delete_session(&sid)
                });
            }
            10 if cur.path.len() >= 3 => {
                // The last two messages, unless a summary is among them.
                let run: Vec<String> = cur.path[cur.path.len() - 2..].to_vec();
                if run.iter().any(|m| cur.summaries.contains(m)) {
                    return;
                }
                // The summary's id is the library's: the intent allows any one
                // more message on the path (checked by `matches`).
                next.path.push("?summary".into());
                self.seq += 1;
                let seq = self.seq;
                self.line(&Line::Intent {
                    intent: seq,
                    op: "compact".into(),
                    session: sid.clone(),
                    if_done: Some(next.clone()),
                });
                let r = self.open[&sid].0.apply_compaction(&run, json!("a summary"));
                let ok = r.is_ok();
                if let Ok(m) = r {
                    let mut done = cur.clone();
                    done.path.push(m.id().to_string());
                    done.summaries.push(m.id().to_string());
                    self.line(&Line::Intent {
                        intent: seq,
                        op: "compacted".into(),
                        session: sid.clone(),
                        if_done: Some(done.clone()),
                    });
                    self.open.get_mut(&sid).expect("open").1 = done;
                }
                self.line(&Line::Ack { ack: seq, ok });
            }
            _ => {}
        }
    }
}

/// Child: open this child's sessions from the state file, then operate until
/// killed. Spawned by `model_with_crashes` (with `--ignored --exact`).
#[test]
#[ignore = "entry point of a child process of model_with_crashes"]
fn child_operator() {
    let role = std::env::var(CHILD_ENV)
        .unwrap_or_else(|_| panic!("a child process of model_with_crashes: {CHILD_ENV} unset"));
    let var = |n: &str| std::env::var(n).unwrap_or_else(|_| panic!("child needs {n}"));
    let store = Store::open(var("SK_ROOT"), options(Path::new(&var("SK_HOME")))).unwrap();
    let model: Model = serde_json::from_slice(&fs::read(var("SK_STATE")).unwrap()).unwrap();
    let mut open = BTreeMap::new();
    for (id, e) in model {
        open.insert(id.clone(), (store.open_session(&id).unwrap(), e));
    }
    let journal = OpenOptions::new()
        .create(true)
        .append(true)
        .open(var("SK_JOURNAL"))
        .unwrap();
    let mut c = Operator {
        store,
        open,
        journal,
        seq: 0,
        rng: Rng(var("SK_SEED").parse().unwrap()),
        tag: role,
        made: 0,
    };
    loop {
        c.one_op();
    }
}

// ---------------------------------------------------------------------------
// The parent.

/// Whether `actual` is what `e` describes (`?summary`: any one id).
fn matches(actual: &[String], e: &Expect) -> bool {
    actual.len() == e.path.len()
        && actual
            .iter()
            .zip(&e.path)
            .all(|(a, x)| x == "?summary" || a == x)
}

/// Replay a child's journal onto its part of the model: the state after the
/// last acknowledged operation, and the one in flight (session, state if done,
/// and whether it creates a session whose id the journal may not name).
fn replay(
    model: &mut Model,
    journal: &Path,
    acked: &mut BTreeMap<String, u64>,
) -> Option<(String, String, Option<Expect>)> {
    let text = fs::read_to_string(journal).unwrap_or_default();
    // A SIGKILL may cut the last line (a write that crosses a page boundary is
    // not atomic against it): a cut intent was never acted on, a cut
    // acknowledgement leaves its operation in flight.
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    let mut pending: Option<(u64, String, String, Option<Expect>)> = None;
    for line in complete.lines() {
        let l: Line = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a torn journal line {line:?}: {e}"));
        match l {
            Line::Intent {
                intent,
                op,
                session,
                if_done,
            } => pending = Some((intent, op, session, if_done)),
            Line::Ack { ack, ok } => {
                let (seq, op, session, if_done) = pending.take().expect("an intent");
                assert_eq!(seq, ack);
                if !ok {
                    continue;
                }
                *acked.entry(op.clone()).or_default() += 1;
                match (op.as_str(), if_done) {
                    ("delete", _) => {
                        model.remove(&session);
                    }
                    ("fork", _) => {}
                    (_, Some(e)) => {
                        model.insert(session, e);
                    }
                    (_, None) => unreachable!(),
                }
            }
        }
    }
    pending.map(|(_, op, s, e)| (op, s, e))
}

fn active_ids(store: &Store, id: &str) -> sessionkit::Result<Vec<String>> {
    let v = store.read_session(id)?;
    let _ = v.ui_view()?;
    let _ = v.model_view(&Default::default())?;
    Ok(v.active_path()?
        .iter()
        .map(|m| m.id().to_string())
        .collect())
}

fn log_ids(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            // `.tmp-*`: a write not yet given its name, no session (FORMAT §2).
            let name = e.file_name().to_str()?.to_string();
            (!name.starts_with('.'))
                .then(|| name.strip_suffix(".jsonl").map(str::to_string))
                .flatten()
        })
        .collect();
    out.sort();
    out
}

/// Check the store against the model of each child (and its operation in
/// flight), and settle the model on what is there.
fn check(
    store: &Store,
    models: &mut [Model],
    pending: &[Option<(String, String, Option<Expect>)>],
) {
    store.read_index().expect("the index parses");
    let listed = store.list_sessions().expect("the index lists");
    let on_disk = log_ids(store.dir());
    // A fork in flight may have made a session whose id its journal lacks.
    let claimed: Vec<String> = models.iter().flat_map(|m| m.keys().cloned()).collect();
    for (k, model) in models.iter_mut().enumerate() {
        match &pending[k] {
            Some((op, _, Some(e))) if op == "fork" => {
                for id in on_disk.iter().filter(|id| !claimed.contains(id)) {
                    let ids = active_ids(store, id).expect("a fork in flight reads");
                    if matches(&ids, e) {
                        model.insert(id.clone(), e.clone());
                    }
                }
            }
            Some((op, id, Some(e))) if op == "forked" || op == "create" => {
                model.insert(id.clone(), e.clone());
            }
            _ => {}
        }
    }
    let mut known: Vec<String> = Vec::new();
    let mut in_flight: Vec<String> = Vec::new();
    for (k, model) in models.iter_mut().enumerate() {
        let p = &pending[k];
        let ids: Vec<String> = model.keys().cloned().collect();
        for id in ids {
            let e = model[&id].clone();
            let flight = p.as_ref().filter(|(_, s, _)| *s == id);
            match active_ids(store, &id) {
                Ok(actual) => {
                    let mut want = e.clone();
                    if !matches(&actual, &e) {
                        want = flight
                            .and_then(|(op, _, d)| {
                                let d = d.clone()?;
                                // A batch is one write, which a kill can cut
                                // between lines (FORMAT §6.2): a prefix of it may be there.
                                let cut_batch = op == "batch"
                                    && actual.len() > e.path.len()
                                    && actual.len() < d.path.len()
                                    && d.path.starts_with(&actual);
                                (matches(&actual, &d) || cut_batch).then_some(d)
                            })
                            .unwrap_or_else(|| {
                                panic!(
                                    "session {id}: active path {actual:?}, expected {:?} (in flight: {flight:?})",
                                    e.path
                                )
                            });
                    }
                    // A rename in flight leaves the path as it was: whether it
                    // took effect shows in the title, which the model then keeps.
                    let entry = store.session_entry(&id).expect("an index entry");
                    let alt = flight.and_then(|(_, _, d)| d.as_ref()?.title.clone());
                    if alt.as_ref() == Some(&entry.title) {
                        want.title = alt;
                    } else if let Some(t) = &want.title {
                        assert_eq!(&entry.title, t, "session {id}: the title");
                    }
                    want.path = actual;
                    model.insert(id.clone(), want);
                }
                Err(err) if err.kind() == ErrorKind::NotFound => {
                    let may_be_gone =
                        flight.is_some_and(|(op, _, _)| op == "delete" || op == "create");
                    assert!(may_be_gone, "session {id} lost: {err}");
                    model.remove(&id);
                }
                Err(err) => panic!("session {id}: {err}"),
            }
        }
        known.extend(model.keys().cloned());
        in_flight.extend(p.iter().map(|(_, s, _)| s.clone()));
    }
    for id in &on_disk {
        assert!(
            known.contains(id),
            "a session nobody made: {id}, active path {:?}, operations in flight {pending:?}",
            active_ids(store, id)
        );
        // The index may miss a session made by the operation in flight: it is
        // rebuilt from the logs.
        assert!(
            in_flight.contains(id) || !claimed.contains(id) || listed.iter().any(|e| e.id == *id),
            "session {id} is not in the index"
        );
    }
}

/// Every kind of operation the children run, as its acknowledgement names it.
const OPS: [&str; 9] = [
    "create",
    "append",
    "batch",
    "state",
    "rewind",
    "rename",
    "forked",
    "delete",
    "compacted",
];

/// Wait until the child has opened its sessions (its journal exists), so that
/// a kill after a delay lands while it operates; fails if it ends first.
fn wait_operating(child: &mut Child, journal: &Path) {
    let t = std::time::Instant::now();
    while !journal.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("a child ended before it operated: {status}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "a child did not start within 120 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn model_with_crashes() {
    let cycles = env_u64("SESSIONKIT_MODEL_CYCLES", 20);
    let seed = env_u64("SESSIONKIT_MODEL_SEED", 0x5e55_10f1);
    println!("model with crashes: SESSIONKIT_MODEL_SEED={seed} SESSIONKIT_MODEL_CYCLES={cycles}");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = dir.path().join("project");
    fs::create_dir(&root).unwrap();
    let mut models: Vec<Model> = vec![Model::new(); CHILDREN];
    let mut acked: BTreeMap<String, u64> = BTreeMap::new();
    let mut killed_at_startup = 0u64;
    for cycle in 0..cycles {
        let mut kids: Vec<(Child, PathBuf)> = Vec::new();
        for (k, model) in models.iter().enumerate() {
            let state = dir.path().join(format!("state-{k}.json"));
            fs::write(&state, serde_json::to_vec(model).unwrap()).unwrap();
            let journal = dir.path().join(format!("journal-{cycle}-{k}.jsonl"));
            let child = test_child("child_operator")
                .env(CHILD_ENV, format!("c{k}g{cycle}"))
                .env("SK_ROOT", &root)
                .env("SK_HOME", &home)
                .env("SK_STATE", &state)
                .env("SK_JOURNAL", &journal)
                .env("SK_SEED", rng.next().to_string())
                .spawn()
                .unwrap();
            kids.push((child, journal));
        }
        for (child, journal) in &mut kids {
            // One kill in five while the child opens its sessions (and repairs
            // what the last kill left); the others while it operates.
            if rng.below(5) == 0 {
                killed_at_startup += 1;
                std::thread::sleep(Duration::from_millis(rng.below(50)));
            } else {
                wait_operating(child, journal);
                std::thread::sleep(Duration::from_millis(20 + rng.below(300)));
            }
            let _ = child.kill();
            let status = child.wait().unwrap();
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                status.signal(),
                Some(9),
                "a child ended on its own: {status}"
            );
        }
        let mut pending = Vec::new();
        for (k, (_, journal)) in kids.iter().enumerate() {
            pending.push(replay(&mut models[k], journal, &mut acked));
            let _ = fs::remove_file(journal);
        }
        let store = Store::open(&root, options(&home)).unwrap();
        // The check reads and lists; only a killed child may leave a temporary file.
        let temps = temp_files(store.dir());
        check(&store, &mut models, &pending);
        assert_eq!(
            temp_files(store.dir()),
            temps,
            "cycle {cycle}: the check left a temporary file"
        );
    }
    let store = Store::open(&root, options(&home)).unwrap();
    let temp_left = gc_removes_every_temp_file(&store, "model_with_crashes");
    let sessions: usize = models.iter().map(Model::len).sum();
    let total: u64 = acked.values().sum();
    println!(
        "model with crashes: {cycles} cycles of {CHILDREN} processes ({killed_at_startup} killed at startup), \
         {total} operations acknowledged {acked:?}, {sessions} sessions at the end, 0 lost, \
         {temp_left} temporary files left by kills and removed by gc"
    );
    // The run did what it is meant to: operations acknowledged (and so checked
    // after the kills that followed), of every kind once there were enough of
    // them for each to come up (a few hundred; a default run makes thousands).
    assert!(
        total >= 5 * cycles,
        "only {total} operations acknowledged in {cycles} cycles: {acked:?}"
    );
    if total >= 500 {
        let missing: Vec<&str> = OPS
            .iter()
            .copied()
            .filter(|op| !acked.contains_key(*op))
            .collect();
        assert!(
            missing.is_empty(),
            "never acknowledged: {missing:?} ({acked:?})"
        );
    }
    assert!(sessions > 0, "no session left to check");
}
