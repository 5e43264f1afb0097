//! Store-wide file-history maintenance: gc progress, and the read-only check of
//! the links between the logs and the repository (with the repair of orphans).

#[path = "support/tree_state.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};

use support::tree_state;

use serde_json::json;
use sessionkit::{
    CheckpointProblem, GcPhase, GcProgress, RewindMode, Session, Store, StoreOptions,
};

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    store: Store,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    fs::create_dir_all(&root).unwrap();
    let root = fs::canonicalize(&root).unwrap();
    let store = Store::open(
        &root,
        StoreOptions {
            home: Some(tmp.path().join("home")),
            ..StoreOptions::default()
        },
    )
    .unwrap();
    Env {
        _tmp: tmp,
        root,
        store,
    }
}

impl Env {
    /// A session with a user input and an edit of `file`: two snapshots.
    fn session_editing(&self, file: &str, content: &str) -> (Session, String) {
        let s = self.store.create_session(Default::default()).unwrap();
        let u = s
            .user_input(json!({"content": format!("edit {file}")}))
            .unwrap()
            .id()
            .to_string();
        s.before_edit(&[file]).unwrap();
        fs::write(self.root.join(file), content).unwrap();
        s.after_edit(&[file]).unwrap();
        (s, u)
    }

    fn git_dir(&self) -> PathBuf {
        self.store.dir().join("file-history/.git")
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for e in fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        total += if m.is_dir() {
            dir_bytes(&e.path())
        } else {
            m.len()
        };
    }
    total
}

#[test]
fn gc_reports_each_phase_up_to_its_total_and_the_bytes_freed() {
    let e = env();
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    let (doomed, _) = e.session_editing("big.txt", &big);
    let doomed_id = doomed.id().to_string();
    drop(doomed);
    let (kept, u) = e.session_editing("small.txt", "kept\n");
    e.store.delete_session(&doomed_id).unwrap();

    let objects = e.git_dir().join("objects");
    let before = dir_bytes(&objects);
    let mut events: Vec<GcProgress> = Vec::new();
    let report = e.store.gc_with_progress(&mut |p| events.push(p)).unwrap();

    assert!(report.bytes_freed > 0, "{report:?}");
    assert_eq!(report.bytes_before, before);
    assert_eq!(report.bytes_after, dir_bytes(&objects));
    assert_eq!(report.bytes_freed, report.bytes_before - report.bytes_after);

    // Each phase once, in order, its counts rising from 0 to its total.
    let mut phases: Vec<GcPhase> = events.iter().map(|p| p.phase).collect();
    phases.dedup();
    assert_eq!(
        phases,
        [GcPhase::Marking, GcPhase::Packing, GcPhase::Pruning],
        "{events:?}"
    );
    for phase in phases {
        let run: Vec<&GcProgress> = events.iter().filter(|p| p.phase == phase).collect();
        let total = run[0].total;
        assert!(total > 0, "{phase:?}: {events:?}");
        assert_eq!(run[0].done, 0, "{phase:?} starts at 0");
        assert!(run.iter().all(|p| p.total == total), "{phase:?}: {run:?}");
        assert!(
            run.windows(2).all(|w| w[0].done < w[1].done),
            "{phase:?} only rises: {run:?}"
        );
        assert_eq!(
            run.last().unwrap().done,
            total,
            "{phase:?} ends at its total"
        );
    }
    let marking = events.iter().find(|p| p.phase == GcPhase::Marking).unwrap();
    assert_eq!(marking.total, report.branches as u64);
    let packing = events.iter().find(|p| p.phase == GcPhase::Packing).unwrap();
    assert_eq!(packing.total, report.objects_after as u64);

    // Nothing left to do: only the branches are walked.
    let mut events = Vec::new();
    let again = e.store.gc_with_progress(&mut |p| events.push(p)).unwrap();
    assert_eq!(again.bytes_freed, 0);
    assert!(
        events.iter().all(|p| p.phase == GcPhase::Marking),
        "{events:?}"
    );

    // The surviving session still undoes.
    kept.rewind(&u, RewindMode::Files, false).unwrap();
    assert!(!e.root.join("small.txt").exists());
}

#[test]
fn a_healthy_store_checks_clean_without_writing_even_while_a_session_is_open() {
    let e = env();
    let (a, _) = e.session_editing("a.txt", "a\n");
    let (b, _) = e.session_editing("b.txt", "b\n");
    b.close().unwrap();
    // `a` stays open: its writer lock is held.
    let before = tree_state(e.store.dir());
    let c = e.store.check_file_history().unwrap();
    assert_eq!(tree_state(e.store.dir()), before, "the check wrote");
    assert!(c.exists);
    assert_eq!(c.branches, 2);
    assert!(c.is_healthy(), "{c:?}");
    assert!(c.orphan_refs.is_empty() && c.broken_refs.is_empty());
    assert!(c.dangling_checkpoints.is_empty(), "{c:?}");
    drop(a);
}

#[test]
fn checkpoint_hashes_that_name_no_snapshot_are_reported_with_why() {
    let e = env();
    let (a, _) = e.session_editing("a.txt", "a\n");
    let (b, _) = e.session_editing("b.txt", "b\n");
    let b_snapshot = b.last_snapshot().unwrap().unwrap();
    let lost = "0123456789abcdef0123456789abcdef01234567";
    a.append(json!({"id": "lost", "role": "user", "content": "x", "checkpointHash": lost}))
        .unwrap();
    a.append(json!({"id": "foreign", "role": "user", "content": "y", "checkpointHash": "abc123"}))
        .unwrap();
    a.append(json!({"id": "other", "role": "user", "content": "z", "checkpointHash": b_snapshot}))
        .unwrap();
    let c = e.store.check_file_history().unwrap();
    let got: Vec<(&str, &str, CheckpointProblem)> = c
        .dangling_checkpoints
        .iter()
        .map(|d| {
            assert_eq!(d.session_id, a.id());
            (d.message_id.as_str(), d.checkpoint_hash.as_str(), d.reason)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("lost", lost, CheckpointProblem::Missing),
            ("foreign", "abc123", CheckpointProblem::NotASnapshotId),
            ("other", b_snapshot.as_str(), CheckpointProblem::NotOnBranch),
        ]
    );
    // Only the lost snapshot is damage.
    assert!(!c.is_healthy());
    assert!(CheckpointProblem::Missing.is_damage());
    assert!(!CheckpointProblem::NotOnBranch.is_damage());
}

#[test]
fn without_a_repository_checkpoint_hashes_came_from_elsewhere() {
    let e = env();
    let s = e.store.create_session(Default::default()).unwrap();
    s.append(json!({"id": "u", "role": "user", "content": "x",
        "checkpointHash": "0123456789abcdef0123456789abcdef01234567"}))
        .unwrap();
    let c = e.store.check_file_history().unwrap();
    assert!(!c.exists);
    assert_eq!(c.dangling_checkpoints.len(), 1);
    assert_eq!(
        c.dangling_checkpoints[0].reason,
        CheckpointProblem::NoFileHistory
    );
    assert!(c.is_healthy(), "{c:?}");
    assert!(!e.git_dir().exists(), "the check created the repository");
}

#[test]
fn refs_of_vanished_sessions_are_orphans_and_pruned_and_broken_refs_reported() {
    let e = env();
    let (gone, _) = e.session_editing("a.txt", "a\n");
    let gone_id = gone.id().to_string();
    drop(gone);
    let (broken, _) = e.session_editing("b.txt", "b\n");
    let broken_id = broken.id().to_string();
    drop(broken);
    let (fine, u) = e.session_editing("c.txt", "c\n");
    // A log removed by hand leaves its branch behind.
    fs::remove_file(e.store.log_path(&gone_id).unwrap()).unwrap();
    // A branch pointing at a commit that is not there.
    let missing = "89abcdef0123456789abcdef0123456789abcdef";
    fs::write(
        e.git_dir().join("refs/heads").join(&broken_id),
        format!("{missing}\n"),
    )
    .unwrap();

    let c = e.store.check_file_history().unwrap();
    assert_eq!(c.branches, 3);
    assert_eq!(c.orphan_refs.len(), 1, "{c:?}");
    assert_eq!(c.orphan_refs[0].session_id, gone_id);
    assert_eq!(c.orphan_refs[0].ref_name, format!("refs/heads/{gone_id}"));
    assert_eq!(c.broken_refs.len(), 1, "{c:?}");
    assert_eq!(c.broken_refs[0].session_id, broken_id);
    assert_eq!(c.broken_refs[0].missing_commit, missing);
    assert!(!c.is_healthy());

    // The repair deletes the orphan only; the broken branch is left as it is.
    let pruned = e.store.prune_orphan_file_history().unwrap();
    assert_eq!(pruned, c.orphan_refs);
    let c = e.store.check_file_history().unwrap();
    assert!(c.orphan_refs.is_empty(), "{c:?}");
    assert_eq!(c.broken_refs.len(), 1);
    assert_eq!(c.branches, 2);
    assert!(e.store.prune_orphan_file_history().unwrap().is_empty());

    // gc then frees the orphan's objects, and the other sessions still undo.
    fs::remove_file(e.git_dir().join("refs/heads").join(&broken_id)).unwrap();
    assert!(e.store.gc().unwrap().bytes_freed > 0);
    fine.rewind(&u, RewindMode::Files, false).unwrap();
    assert!(!e.root.join("c.txt").exists());
}

/// Paths under `dir` (itself included) that group or others may use.
fn not_owner_only(dir: &Path, out: &mut Vec<String>) {
    use std::os::unix::fs::PermissionsExt;
    let m = fs::symlink_metadata(dir).unwrap();
    if m.permissions().mode() & 0o077 != 0 {
        out.push(format!("{} {:o}", dir.display(), m.permissions().mode()));
    }
    if m.is_dir() {
        for e in fs::read_dir(dir).unwrap() {
            not_owner_only(&e.unwrap().path(), out);
        }
    }
}

/// Transcripts and project files hold secrets: the file history is owner-only
/// like the rest of the store, whatever libgit2 creates in it (FORMAT.md §1.3):
/// after snapshots, a fork, a rewind (with its pending restore) and a gc.
#[test]
fn the_file_history_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    // Under a umask of 077 everything would pass for the wrong reason.
    let probe = e.root.join("umask-probe");
    fs::write(&probe, "").unwrap();
    if fs::metadata(&probe).unwrap().permissions().mode() & 0o077 == 0 {
        eprintln!("skipped: the umask leaves files owner-only already");
        return;
    }
    fs::remove_file(&probe).unwrap();

    let (s, u) = e.session_editing("a.txt", "one\n");
    s.before_edit(&["a.txt"]).unwrap();
    fs::write(e.root.join("a.txt"), "two\n").unwrap();
    s.after_edit(&["a.txt"]).unwrap();
    let fork = e
        .store
        .fork_session(s.id(), sessionkit::ForkOptions::default())
        .unwrap();
    drop(fork);
    s.rewind(&u, RewindMode::Both, false).unwrap();
    assert!(!e.root.join("a.txt").exists());
    drop(s);
    e.store.gc().unwrap();

    let history = e.store.dir().join("file-history");
    let mut loose = Vec::new();
    not_owner_only(&history, &mut loose);
    assert_eq!(loose, Vec::<String>::new());
    // What git makes read-only stays read-only.
    let packs = e.git_dir().join("objects/pack");
    for p in fs::read_dir(&packs).unwrap() {
        let mode = p.unwrap().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o400);
    }
}

#[test]
fn gc_refuses_when_a_ref_cannot_be_read_and_deletes_nothing() {
    let e = env();
    let (s, u) = e.session_editing("a.txt", "a\n");
    let branch = e.git_dir().join("refs/heads").join(s.id());
    let tip = fs::read_to_string(&branch).unwrap();
    // A ref that cannot be opened (here a symlink to itself: ELOOP). libgit2's
    // listing skips it silently; a gc that believed the listing would delete
    // the snapshots only this branch keeps.
    fs::remove_file(&branch).unwrap();
    std::os::unix::fs::symlink(&branch, &branch).unwrap();
    let before = dir_bytes(&e.git_dir().join("objects"));
    let err = e.store.gc().unwrap_err();
    assert!(err.to_string().contains(s.id()), "{err}");
    assert_eq!(dir_bytes(&e.git_dir().join("objects")), before);
    // Once the ref reads again, the session still undoes its edit.
    fs::remove_file(&branch).unwrap();
    fs::write(&branch, tip).unwrap();
    s.rewind(&u, RewindMode::Files, false).unwrap();
    assert!(!e.root.join("a.txt").exists());
}
