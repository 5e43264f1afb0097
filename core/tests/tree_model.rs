//! Property test: random sequences of append / patch / compact / rewind /
//! resume-at / fork / reopen, checked after every step against a small in-memory
//! model of the views.
//!
//! `PROPTEST_CASES` sets the number of sequences (48 by default, as in CI).

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use serde_json::json;
use sessionkit::{
    CreateOptions, Durability, ForkOptions, ModelViewOptions, Session, Store, StoreOptions,
};

#[derive(Debug, Clone)]
enum Op {
    Append { user: bool, len: usize },
    Patch { pick: usize },
    Compact { len: usize },
    Rewind { pick: Option<usize> },
    Fork { pick: usize },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<bool>(), 1usize..200).prop_map(|(user, len)| Op::Append { user, len }),
        1 => any::<usize>().prop_map(|pick| Op::Patch { pick }),
        2 => (1usize..5).prop_map(|len| Op::Compact { len }),
        2 => proptest::option::weighted(0.9, any::<usize>()).prop_map(|pick| Op::Rewind { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Fork { pick }),
        1 => Just(Op::Reopen),
    ]
}

/// The model of one session: the tree, and for each message the model view that
/// holds when it is the head (a compaction's summary sees the run it replaces
/// swapped for itself; any other message extends its parent's view).
#[derive(Clone, Default)]
struct Model {
    parent: HashMap<String, Option<String>>,
    order: Vec<String>,
    content: HashMap<String, String>,
    view_at: HashMap<String, Vec<String>>,
    replaces: HashMap<String, Vec<String>>,
    head: Option<String>,
}

impl Model {
    fn path(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = self.head.clone();
        while let Some(id) = cur {
            cur = self.parent[&id].clone();
            out.push(id);
        }
        out.reverse();
        out
    }

    fn model_view(&self) -> Vec<String> {
        self.head
            .as_ref()
            .map(|h| self.view_at[h].clone())
            .unwrap_or_default()
    }

    fn compacted(&self) -> HashSet<String> {
        self.path()
            .iter()
            .filter_map(|id| self.replaces.get(id))
            .flatten()
            .cloned()
            .collect()
    }

    fn add(&mut self, id: &str, content: String, view: Vec<String>) {
        self.parent.insert(id.to_string(), self.head.clone());
        self.order.push(id.to_string());
        self.content.insert(id.to_string(), content);
        self.view_at.insert(id.to_string(), view);
        self.head = Some(id.to_string());
    }
}

fn check(store: &Store, s: &Session, m: &Model) {
    let view = s.read().unwrap();
    let path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|x| x.id().to_string())
        .collect();
    assert_eq!(path, m.path(), "active path");
    assert_eq!(view.head().map(str::to_string), m.head, "head");
    let compacted = m.compacted();
    for msg in view.ui_view().unwrap() {
        let v = msg.value();
        assert_eq!(
            v["compacted"],
            compacted.contains(msg.id()),
            "compacted flag of {}",
            msg.id()
        );
    }
    let opts = ModelViewOptions::default();
    for (how, mv) in [
        ("tail", store.model_view(s.id(), &opts).unwrap()),
        ("full", view.model_view(&opts).unwrap()),
    ] {
        let ids: Vec<String> = mv.iter().map(|x| x.id().to_string()).collect();
        assert_eq!(ids, m.model_view(), "model view ({how})");
        for x in &mv {
            assert_eq!(
                x.value()["content"].as_str().unwrap(),
                m.content[x.id()],
                "content of {} ({how})",
                x.id()
            );
        }
    }
}

fn run(ops: Vec<Op>) {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("p");
    std::fs::create_dir(&project).unwrap();
    let store = Store::open(
        &project,
        StoreOptions {
            home: Some(home.path().into()),
            durability: Durability::Never,
            max_sessions: 0,
            ..Default::default()
        },
    )
    .unwrap();
    let mut s = store.create_session(CreateOptions::default()).unwrap();
    let mut m = Model::default();
    let sys = s
        .append(json!({"role": "system", "content": "sys"}))
        .unwrap();
    m.add(sys.id(), "sys".into(), vec![sys.id().to_string()]);
    let mut n = 0;
    for op in ops {
        n += 1;
        match op {
            Op::Append { user, len } => {
                let content = format!("{n}:{}", "x".repeat(len));
                let role = if user { "user" } else { "assistant" };
                let msg = s.append(json!({"role": role, "content": content})).unwrap();
                let mut view = m.model_view();
                view.push(msg.id().to_string());
                m.add(msg.id(), content, view);
            }
            Op::Patch { pick } => {
                let id = m.order[pick % m.order.len()].clone();
                let content = format!("patched {n}");
                s.patch_message(&id, json!({"content": content})).unwrap();
                m.content.insert(id, content);
            }
            Op::Compact { len } => {
                let view = m.model_view();
                if view.len() < 2 {
                    continue;
                }
                let run: Vec<String> = view[1..view.len().min(1 + len)].to_vec();
                let content = format!("summary {n}");
                let sum = s.apply_compaction(&run, json!(content)).unwrap();
                let mut after = view[..1].to_vec();
                after.push(sum.id().to_string());
                after.extend(view[1 + run.len()..].iter().cloned());
                m.add(sum.id(), content, after);
                m.replaces.insert(sum.id().to_string(), run);
            }
            Op::Rewind { pick } => {
                let target = pick.map(|p| m.order[p % m.order.len()].clone());
                s.set_head(target.as_deref()).unwrap();
                m.head = target;
            }
            Op::Fork { pick } => {
                let path = m.path();
                if path.is_empty() {
                    continue;
                }
                let at = path[pick % path.len()].clone();
                let f = store
                    .fork_session(
                        s.id(),
                        ForkOptions {
                            at: Some(at.clone()),
                            title: None,
                        },
                    )
                    .unwrap();
                let mut fm = m.clone();
                fm.head = Some(at);
                let keep: HashSet<String> = fm.path().into_iter().collect();
                fm.order.retain(|id| keep.contains(id));
                s = f;
                m = fm;
            }
            Op::Reopen => {
                let id = s.id().to_string();
                s.close().unwrap();
                s = store.open_session(&id).unwrap();
            }
        }
        check(&store, &s, &m);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        // Printed; PROPTEST_RNG_SEED=<seed> reruns a failure's inputs.
        rng_seed: proptest::test_runner::RngSeed::Fixed(sessionkit::testing::proptest_seed()),
        ..ProptestConfig::default()
    })]

    #[test]
    fn views_agree_with_the_model(ops in proptest::collection::vec(op(), 1..40)) {
        run(ops);
    }
}

#[test]
fn a_fixed_sequence_covers_every_operation() {
    use Op::*;
    run(vec![
        Append {
            user: true,
            len: 10,
        },
        Append {
            user: false,
            len: 10,
        },
        Append {
            user: true,
            len: 10,
        },
        Compact { len: 2 },
        Append {
            user: false,
            len: 5,
        },
        Patch { pick: 1 },
        Reopen,
        Rewind { pick: Some(2) },
        Append { user: true, len: 3 },
        Fork { pick: 1 },
        Append {
            user: false,
            len: 3,
        },
        Compact { len: 3 },
        Rewind { pick: None },
        Append { user: true, len: 1 },
        Reopen,
    ]);
}
