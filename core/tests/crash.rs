//! Crash safety of the session log.
//!
//! `kill_cycles` runs a child process (this test binary, re-executed) that appends
//! messages, large batches and state updates in a loop, and kills it with SIGKILL
//! at a random moment, again and again. After every kill it checks what a user
//! would: every append that returned is in the log's active path, there is at most
//! one torn tail, the next `open_session` repairs and reports it and quarantines its
//! bytes, the following read is clean, and the index file always parses.
//!
//! Knobs (environment variables):
//! - `SESSIONKIT_CRASH_CYCLES`: number of kill cycles (default 200; e.g. 10000 for
//!   a long run: `SESSIONKIT_CRASH_CYCLES=10000 cargo test --release -p sessionkit
//!   --test crash -- kill_cycles --nocapture`).
//! - `SESSIONKIT_CRASH_SEED`: seed of the random kill delays and child workload
//!   (default fixed, so a failure can be replayed with the same seed).
//!
//! The other tests are deterministic: a log cut mid-line by hand, a torn tail that
//! happens to be a whole record, and a write that fails half way (RLIMIT_FSIZE).

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use sessionkit::{CreateOptions, ErrorKind, Store, StoreOptions};

/// Set in a re-executed child to the role it plays. The children's entry
/// points are ignored tests, run with `--ignored --exact`, so a plain run never
/// counts a child as a passing test.
const CHILD_ENV: &str = "SESSIONKIT_CRASH_CHILD";

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

/// This test binary, re-executed to run only `test` in the given role.
fn child_command(test: &str, role: &str) -> Command {
    let mut c = test_child(test);
    c.env(CHILD_ENV, role);
    c
}

fn child_role() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("child needs {name}"))
}

// ---------------------------------------------------------------------------
// The appending child.

/// Child: open the session, say "ready" on stdout, then append until killed. Each
/// acknowledgement is written to the ack file in one write, only after the append
/// returned, so every complete ack line names a message the library stored.
#[test]
#[ignore = "entry point of a child process of kill_cycles"]
fn child_appender() {
    assert_eq!(
        child_role().as_deref(),
        Some("append"),
        "a child of kill_cycles"
    );
    let store = Store::open(var("SK_ROOT"), options(Path::new(&var("SK_HOME")))).unwrap();
    let session = store.open_session(&var("SK_SESSION")).unwrap();
    let mut acks = OpenOptions::new()
        .append(true)
        .create(true)
        .open(var("SK_ACKS"))
        .unwrap();
    let mut rng = Rng(var("SK_SEED").parse().unwrap());
    let pace_us: u64 = var("SK_PACE_US").parse().unwrap();
    let mut out = std::io::stdout();
    out.write_all(b"ready\n").unwrap();
    out.flush().unwrap();
    // Never outlive a parent that died: a cycle takes milliseconds.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut batch_no = 0u64;
    while Instant::now() < deadline {
        let roll = rng.below(100);
        let stored = if roll < 50 {
            let role = if rng.below(2) == 0 {
                "user"
            } else {
                "assistant"
            };
            vec![session
                .append(json!({"role": role, "content": format!("small {}", rng.next())}))
                .unwrap()]
        } else if roll < 75 {
            // A large batch: one multi-page write that a kill can cut. The batch
            // tag comes before the content so the parent finds it cheaply.
            batch_no += 1;
            let n = rng.range(4, 16);
            let tag = format!("{}-{batch_no}", std::process::id());
            let msgs = (0..n)
                .map(|i| {
                    let size = rng.range(4_000, 32_000) as usize;
                    json!({
                        "role": "tool",
                        "meta": {"batch": tag, "index": i, "of": n},
                        "content": "x".repeat(size),
                    })
                })
                .collect();
            session.append_batch(msgs).unwrap()
        } else if roll < 90 {
            let size = rng.range(64_000, 200_000) as usize;
            vec![session
                .append(json!({"role": "tool", "content": "y".repeat(size)}))
                .unwrap()]
        } else {
            let status = ["processing", "waiting_for_user", "completed"][rng.below(3) as usize];
            session
                .update_state(json!({"status": status, "activeTokens": rng.below(100_000)}))
                .unwrap();
            Vec::new()
        };
        if !stored.is_empty() {
            let mut line = String::new();
            for m in &stored {
                line.push_str("acked ");
                line.push_str(m.id());
                line.push('\n');
            }
            acks.write_all(line.as_bytes()).unwrap();
        }
        // An agent appends in bursts with pauses; the pauses also keep the log
        // from growing too fast for the checks.
        if pace_us > 0 {
            std::thread::sleep(Duration::from_micros(rng.below(pace_us)));
        }
    }
}

// ---------------------------------------------------------------------------
// The kill loop.

#[derive(Debug, Default)]
struct Stats {
    cycles: u64,
    /// Kills while the child was starting up (opening and repairing the log).
    killed_during_startup: u64,
    /// Kills after a random delay while the child appended.
    killed_at_random: u64,
    /// Kills the moment the log's last byte was not a newline: a write under way.
    killed_mid_write: u64,
    torn_tails: u64,
    /// Torn tails that were a whole record short of its newline.
    torn_whole_records: u64,
    acked_checked: u64,
    /// Appends acknowledged by the children (each checked after every later kill).
    acked_new: u64,
    /// Ack lines the kill cut (dropped: the child never finished acknowledging).
    torn_acks: u64,
    /// Batches only partly in the log after a kill (see the report).
    partial_batches: u64,
    sessions: u64,
    /// `.tmp-*` files the killed children left (gc removes them at the end).
    temp_files_left: usize,
}

/// Cuts the ack file back to its last complete line; true if it had a torn one.
fn drop_torn_ack(path: &Path) -> bool {
    let text = match fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete == text.len() {
        return false;
    }
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(complete as u64).unwrap();
    true
}

/// Ids named by the lines of the ack file, in order (torn lines were dropped).
fn read_acks(path: &Path) -> Vec<String> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("{}: {e}", path.display()),
    };
    text.lines()
        .map(|l| {
            l.strip_prefix("acked ")
                .unwrap_or_else(|| panic!("bad ack line {l:?}"))
                .to_string()
        })
        .collect()
}

/// The index file must always parse, whatever moment the kill hit; the session's
/// entry is taken from the index as stored (the file with its journal applied,
/// not refolded). A kill mid-append may leave a torn journal line: it is
/// reported, and the next append ends it (a skipped line), never corrupts the
/// lines after it.
fn index_entry(store: &Store, sid: &str, what: &str) -> Value {
    let bytes = fs::read(store.index_path()).unwrap();
    let _: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{what}: index does not parse ({e}): {:?}",
            String::from_utf8_lossy(&bytes)
        )
    });
    let stored = store.read_index().unwrap().expect("an index");
    let entry = stored
        .index
        .sessions
        .iter()
        .find(|e| e.id == sid)
        .unwrap_or_else(|| panic!("{what}: session missing from the index"));
    serde_json::to_value(entry).unwrap()
}

/// Kill once a write is visibly under way: the file ends in a partial line.
/// Gives up (and kills anyway) after `limit`.
fn wait_for_write_in_progress(log: &Path, limit: Duration) -> bool {
    use std::os::unix::fs::FileExt;
    let f = File::open(log).unwrap();
    let t = Instant::now();
    let mut last = [0u8; 1];
    while t.elapsed() < limit {
        let len = f.metadata().unwrap().len();
        if len > 0 && f.read_at(&mut last, len - 1).unwrap() == 1 && last[0] != b'\n' {
            return true;
        }
    }
    false
}

fn spawn_appender(
    home: &Path,
    root: &Path,
    sid: &str,
    acks: &Path,
    seed: u64,
    pace_us: u64,
    err: &Path,
) -> Child {
    child_command("child_appender", "append")
        .env("SK_HOME", home)
        .env("SK_ROOT", root)
        .env("SK_SESSION", sid)
        .env("SK_ACKS", acks)
        .env("SK_SEED", seed.to_string())
        .env("SK_PACE_US", pace_us.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(File::create(err).unwrap())
        .spawn()
        .unwrap()
}

fn wait_ready(child: &mut Child, err_path: &Path, what: &str) {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // libtest may print "test child_appender ... " on the same line.
    while !line.trim_end().ends_with("ready") {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            let _ = child.wait();
            panic!(
                "{what}: child ended before it was ready: {}",
                fs::read_to_string(err_path).unwrap_or_default()
            );
        }
    }
}

#[test]
fn kill_cycles() {
    let cycles = env_u64("SESSIONKIT_CRASH_CYCLES", 200);
    let seed = env_u64("SESSIONKIT_CRASH_SEED", 0x5e55_104c);
    let mut rng = Rng(seed);
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let err_path = scratch.path().join("child.stderr");
    let store = Store::open(root.path(), options(home.path())).unwrap();
    let started = Instant::now();
    let mut stats = Stats::default();

    // Start a new session when the log gets big: checking a log costs time in
    // proportion to its size, and the cycles should stay short.
    const ROTATE_BYTES: u64 = 16 << 20;
    let mut sid = String::new();
    let mut acks_path = PathBuf::new();
    let mut expected_skipped = 0usize;
    let mut acked_before = 0usize;
    let mut partial_batches = HashSet::new();

    for cycle in 0..cycles {
        let log_len = fs::metadata(store.dir().join(format!("{sid}.jsonl")))
            .map(|m| m.len())
            .unwrap_or(u64::MAX);
        if sid.is_empty() || log_len > ROTATE_BYTES {
            if !sid.is_empty() {
                store.delete_session(&sid).unwrap();
            }
            let s = store.create_session(CreateOptions::default()).unwrap();
            sid = s.id().to_string();
            s.close().unwrap();
            acks_path = scratch.path().join(format!("{sid}.acks"));
            expected_skipped = 0;
            acked_before = 0;
            stats.sessions += 1;
        }
        let log_path = store.log_path(&sid).unwrap();
        let what = format!("cycle {cycle} (SESSIONKIT_CRASH_SEED={seed}, session {sid})");

        // Run the child and kill it: sometimes while it starts up (and repairs the
        // log), sometimes after a random delay while it appends at an agent's
        // pace, and half the time the moment a write is visibly under way while
        // it appends flat out (a random delay first, so not always the first one).
        let mode = rng.below(10);
        let pace_us = if mode >= 5 { 0 } else { 1_000 };
        let mut child = spawn_appender(
            home.path(),
            root.path(),
            &sid,
            &acks_path,
            rng.next(),
            pace_us,
            &err_path,
        );
        match mode {
            0 => {
                stats.killed_during_startup += 1;
                std::thread::sleep(Duration::from_micros(rng.below(8_000)));
            }
            1..=4 => {
                stats.killed_at_random += 1;
                wait_ready(&mut child, &err_path, &what);
                std::thread::sleep(Duration::from_micros(rng.below(15_000)));
            }
            _ => {
                wait_ready(&mut child, &err_path, &what);
                std::thread::sleep(Duration::from_micros(rng.below(3_000)));
                if wait_for_write_in_progress(&log_path, Duration::from_millis(60)) {
                    stats.killed_mid_write += 1;
                } else {
                    stats.killed_at_random += 1;
                }
            }
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "{what}: child did not die by the kill ({status}): {}",
            fs::read_to_string(&err_path).unwrap_or_default()
        );
        stats.cycles += 1;
        // The kill may have cut the child's last ack line (a write that crosses a
        // page boundary is not atomic against SIGKILL). That ack was never made, and
        // the next child must not append its own ack onto the cut line.
        if drop_torn_ack(&acks_path) {
            stats.torn_acks += 1;
        }
        index_entry(&store, &sid, &what);
        // Only a killed child may leave a temporary file; the parent's reads and
        // its writer below, which nobody kills, leave none.
        let temps_after_kill = temp_files(store.dir());

        // What a reader sees right after the crash: only the torn lines already
        // terminated by earlier repairs are skipped, and every acknowledged
        // message is on the active path.
        let view = store.read_session(&sid).unwrap();
        let report = view.report().clone();
        assert_eq!(
            report.skipped.len(),
            expected_skipped,
            "{what}: skipped lines other than repaired torn tails: {report:?}"
        );
        assert!(
            report.broken_chains.is_empty()
                && report.duplicate_ids.is_empty()
                && report.warnings.is_empty(),
            "{what}: {report:?}"
        );
        let acked = read_acks(&acks_path);
        check_acked_on_path(&view, &acked, &what);
        stats.acked_new += (acked.len() - acked_before) as u64;
        acked_before = acked.len();
        stats.acked_checked += acked.len() as u64;
        drop(view);

        // The next writer repairs and reports the torn tail, keeping every byte.
        let before = fs::read(&log_path).unwrap();
        let s = store.open_session(&sid).unwrap();
        assert_eq!(
            s.open_report().torn_tail,
            report.torn_tail,
            "{what}: the writer saw another torn tail than the reader"
        );
        s.close().unwrap();
        let after = fs::read(&log_path).unwrap();
        assert!(
            after.starts_with(&before),
            "{what}: repair changed bytes already in the log"
        );
        match &report.torn_tail {
            None => assert_eq!(after.len(), before.len(), "{what}: repair of a clean log"),
            Some(t) => {
                stats.torn_tails += 1;
                assert_eq!(t.offset + t.length, before.len() as u64, "{what}: {t:?}");
                assert_eq!(
                    &after[before.len()..],
                    b"\n",
                    "{what}: repair is one newline"
                );
                let torn = &before[t.offset as usize..];
                check_quarantined(&log_path, t.offset, torn, &what);
                if serde_json::from_slice::<Value>(torn).is_ok_and(|v| v.is_object()) {
                    // The write reached the record's last byte but not its
                    // newline: once terminated the line is a whole record.
                    stats.torn_whole_records += 1;
                } else {
                    expected_skipped += 1;
                }
            }
        }
        drop(before);

        // The following read is clean apart from the terminated torn lines.
        let view = store.read_session(&sid).unwrap();
        let report = view.report();
        assert!(
            report.torn_tail.is_none(),
            "{what}: torn tail after repair: {report:?}"
        );
        assert_eq!(report.skipped.len(), expected_skipped, "{what}: {report:?}");
        assert!(
            report.duplicate_ids.is_empty() && report.broken_chains.is_empty(),
            "{what}: {report:?}"
        );
        partial_batches.extend(check_acked_on_path(&view, &acked, &what));

        // After the writer closed, the index entry matches the log.
        let entry = index_entry(&store, &sid, &what);
        assert_eq!(entry["logBytes"], json!(after.len()), "{what}: {entry}");
        assert_eq!(
            entry["messageCount"],
            json!(view.message_count()),
            "{what}: {entry}"
        );
        assert_eq!(
            temp_files(store.dir()),
            temps_after_kill,
            "{what}: a temporary file left by a process nobody killed"
        );
    }
    stats.partial_batches = partial_batches.len() as u64;
    stats.temp_files_left = gc_removes_every_temp_file(&store, "kill_cycles");
    eprintln!(
        "kill_cycles: {stats:?} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    // The run exercised what it is meant to: appends acknowledged before kills,
    // kills in each of the three moments, and kills that cut a write short.
    assert_eq!(stats.cycles, cycles, "{stats:?}");
    // (A loaded machine may let a child append little before its kill: one
    // append in four cycles is the floor; a run makes several per cycle.)
    assert!(4 * stats.acked_new >= cycles, "{stats:?}");
    if cycles >= 100 {
        assert!(
            stats.killed_during_startup > 0 && stats.killed_at_random > 0,
            "{stats:?}"
        );
        assert!(
            stats.killed_mid_write > 0 && stats.torn_tails > 0,
            "no kill landed mid-write: {stats:?}"
        );
    }
}

/// Every acknowledged message is on the active path, in the order acknowledged, and
/// the path is one unbroken chain. Returns the tags of batches that are only partly
/// there (a kill cut the batch's single write after some of its lines).
fn check_acked_on_path(
    view: &sessionkit::SessionView,
    acked: &[String],
    what: &str,
) -> Vec<String> {
    let path = view.active_path().unwrap();
    for w in path.windows(2) {
        assert_eq!(
            w[1].parent_id(),
            Some(w[0].id()),
            "{what}: the active path is not a chain"
        );
    }
    let pos: HashMap<&str, usize> = path.iter().enumerate().map(|(i, m)| (m.id(), i)).collect();
    let mut last = None;
    for id in acked {
        let p = *pos
            .get(id.as_str())
            .unwrap_or_else(|| panic!("{what}: acknowledged message {id} is not in the log"));
        assert!(
            last < Some(p),
            "{what}: acknowledged message {id} out of order"
        );
        last = Some(p);
    }
    // The batch tag sits before the content, in the first few hundred bytes.
    let mut batches: HashMap<String, (u64, u64)> = HashMap::new();
    for m in &path {
        let head = &m.json()[..m.json().len().min(400)];
        let Some(at) = head.find(r#""meta":{"batch":"#) else {
            continue;
        };
        let rest = &head[at + 7..];
        let end = rest.find('}').unwrap() + 1;
        let meta: Value = serde_json::from_str(&rest[..end]).unwrap();
        let tag = meta["batch"].as_str().unwrap().to_string();
        batches
            .entry(tag)
            .or_insert((0, meta["of"].as_u64().unwrap()))
            .0 += 1;
    }
    batches
        .into_iter()
        .filter(|(_, (n, of))| n < of)
        .map(|(tag, _)| tag)
        .collect()
}

/// The quarantine file holds a record of the torn bytes, by offset.
fn check_quarantined(log: &Path, offset: u64, torn: &[u8], what: &str) {
    let q = PathBuf::from(format!("{}.corrupt", log.display()));
    let text = fs::read_to_string(&q)
        .unwrap_or_else(|e| panic!("{what}: no quarantine file {}: {e}", q.display()));
    let hits: Vec<Value> = text
        .lines()
        // A line a crash cut is not a record.
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["offset"] == json!(offset))
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "{what}: quarantine records for offset {offset}"
    );
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(hits[0]["bytesBase64"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        bytes, torn,
        "{what}: quarantined bytes differ from the torn tail"
    );
}

// ---------------------------------------------------------------------------
// Deterministic torn tails.

struct Fixture {
    _home: tempfile::TempDir,
    _root: tempfile::TempDir,
    store: Store,
}

fn fixture() -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), options(home.path())).unwrap();
    Fixture {
        _home: home,
        _root: root,
        store,
    }
}

#[test]
fn torn_tail_cut_by_hand_is_repaired_and_quarantined() {
    let f = fixture();
    let s = f.store.create_session(CreateOptions::default()).unwrap();
    let sid = s.id().to_string();
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(
            s.append(json!({"role": "user", "content": format!("message {i}")}))
                .unwrap()
                .id()
                .to_string(),
        );
    }
    s.close().unwrap();
    let log = f.store.log_path(&sid).unwrap();
    let full = fs::read(&log).unwrap();
    // Cut the last line in the middle, as a crash mid-write would.
    let last_start = full[..full.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let cut = last_start + (full.len() - last_start) / 2;
    let torn_log = full[..cut].to_vec();
    fs::write(&log, &torn_log).unwrap();

    // A reader reports the torn tail and keeps the first three messages.
    let view = f.store.read_session(&sid).unwrap();
    let t = view.report().torn_tail.clone().expect("torn tail reported");
    assert_eq!(
        (t.offset, t.length),
        (last_start as u64, (cut - last_start) as u64)
    );
    assert_eq!(t.line, 5, "header + 3 messages, then the torn line");
    assert!(view.report().skipped.is_empty());
    let on_path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(on_path, ids[..3]);

    // The writer repairs, reports and quarantines it.
    let s = f.store.open_session(&sid).unwrap();
    assert_eq!(s.open_report().torn_tail.as_ref(), Some(&t));
    let repaired = fs::read(&log).unwrap();
    assert_eq!(&repaired[..cut], &torn_log[..], "nothing written is lost");
    assert_eq!(&repaired[cut..], b"\n");
    check_quarantined(&log, t.offset, &torn_log[last_start..], "hand cut");

    // The next append starts on a line of its own, after the last good message.
    let m = s
        .append(json!({"role": "user", "content": "after"}))
        .unwrap();
    assert_eq!(m.parent_id(), Some(ids[2].as_str()));
    s.close().unwrap();
    let after = fs::read(&log).unwrap();
    assert!(after.starts_with(&repaired));
    let new_line = &after[repaired.len()..];
    assert!(new_line.ends_with(b"\n"));
    let rec: Value = serde_json::from_slice(new_line).expect("the append is a whole line");
    assert_eq!(rec["id"], m.id());

    let view = f.store.read_session(&sid).unwrap();
    assert!(view.report().torn_tail.is_none());
    assert_eq!(
        view.report().skipped.len(),
        1,
        "the torn bytes stay, skipped"
    );
    assert_eq!(view.report().skipped[0].offset, t.offset);
    let on_path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(
        on_path,
        [&ids[..3], &[m.id().to_string()]].concat(),
        "all good messages survive"
    );

    // Reopening does not quarantine the same bytes twice.
    let s = f.store.open_session(&sid).unwrap();
    assert!(s.open_report().torn_tail.is_none());
    s.close().unwrap();
    let q = fs::read_to_string(format!("{}.corrupt", log.display())).unwrap();
    assert_eq!(q.lines().count(), 1, "{q}");
    let entry = f.store.session_entry(&sid).unwrap();
    assert_eq!(entry.message_count, 4);
}

#[test]
fn torn_tail_of_nul_bytes_is_repaired() {
    let f = fixture();
    let s = f.store.create_session(CreateOptions::default()).unwrap();
    let sid = s.id().to_string();
    let a = s.append(json!({"role": "user", "content": "a"})).unwrap();
    s.close().unwrap();
    let log = f.store.log_path(&sid).unwrap();
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(&[0u8; 512]).unwrap();
    drop(file);
    let s = f.store.open_session(&sid).unwrap();
    let t = s
        .open_report()
        .torn_tail
        .clone()
        .expect("NUL tail reported");
    assert_eq!(t.length, 512);
    let b = s.append(json!({"role": "user", "content": "b"})).unwrap();
    assert_eq!(b.parent_id(), Some(a.id()));
    s.close().unwrap();
    let view = f.store.read_session(&sid).unwrap();
    assert!(view.report().torn_tail.is_none());
    let ids: Vec<&str> = vec![a.id(), b.id()];
    let path = view.active_path().unwrap();
    assert_eq!(path.iter().map(|m| m.id()).collect::<Vec<_>>(), ids);
}

/// The records of a log's quarantine file, by line; `None` for a line that is not
/// a JSON object.
fn quarantine_records(log: &Path) -> Vec<Option<Value>> {
    let q = fs::read(format!("{}.corrupt", log.display())).unwrap();
    assert!(q.ends_with(b"\n"), "the quarantine file ends a line");
    q[..q.len() - 1]
        .split(|&b| b == b'\n')
        .map(|l| {
            serde_json::from_slice::<Value>(l)
                .ok()
                .filter(Value::is_object)
        })
        .collect()
}

/// A writer killed while appending to the quarantine file leaves its last line
/// cut: the next writer's record must start on a line of its own, and count.
#[test]
fn cut_quarantine_record_does_not_swallow_the_next() {
    let f = fixture();
    let s = f.store.create_session(CreateOptions::default()).unwrap();
    let sid = s.id().to_string();
    s.append(json!({"role": "user", "content": "a"})).unwrap();
    s.close().unwrap();
    let log = f.store.log_path(&sid).unwrap();
    let good_len = fs::metadata(&log).unwrap().len();
    let torn = br#"{"role":"user","content":"cut"#;
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(torn).unwrap();
    drop(file);
    let qpath = format!("{}.corrupt", log.display());
    fs::write(
        &qpath,
        br#"{"offset":3,"line":1,"length":90,"reason":"x","bytesBa"#,
    )
    .unwrap();

    let s = f.store.open_session(&sid).unwrap();
    assert!(s.open_report().torn_tail.is_some());
    s.close().unwrap();
    let recs = quarantine_records(&log);
    assert_eq!(recs.len(), 2, "the cut line, then the new record");
    assert!(recs[0].is_none());
    let rec = recs[1].as_ref().expect("the new record is a JSON line");
    assert_eq!(rec["offset"], json!(good_len));

    // The segment counts as quarantined: reopening copies nothing again.
    for _ in 0..2 {
        f.store.open_session(&sid).unwrap().close().unwrap();
    }
    assert_eq!(quarantine_records(&log).len(), 2);
    check_quarantined(&log, good_len, torn, "after a cut record");
}

/// A torn tail that starts with NUL bytes is one torn segment; once repaired it
/// reads as a NUL run and a skipped line at a later offset. Its bytes are
/// quarantined once, not once per way of splitting them.
#[test]
fn torn_tail_starting_with_nul_bytes_is_quarantined_once() {
    let f = fixture();
    let s = f.store.create_session(CreateOptions::default()).unwrap();
    let sid = s.id().to_string();
    let a = s.append(json!({"role": "user", "content": "a"})).unwrap();
    s.close().unwrap();
    let log = f.store.log_path(&sid).unwrap();
    let x = fs::metadata(&log).unwrap().len();
    let torn = b"\0\0\0{\"role\":\"user\",\"content\":\"cu";
    let mut file = OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(torn).unwrap();
    drop(file);

    let s = f.store.open_session(&sid).unwrap();
    let t = s.open_report().torn_tail.clone().expect("torn tail");
    assert_eq!((t.offset, t.length), (x, torn.len() as u64));
    let b = s.append(json!({"role": "user", "content": "b"})).unwrap();
    s.close().unwrap();
    check_quarantined(&log, x, torn, "NUL-led torn tail");

    // Read again, the repaired bytes split in more than one segment, all within
    // the record already quarantined.
    let view = f.store.read_session(&sid).unwrap();
    let skipped = &view.report().skipped;
    assert!(!skipped.is_empty());
    assert!(
        skipped
            .iter()
            .all(|s| s.offset >= x && s.offset + s.length <= x + torn.len() as u64),
        "{skipped:?}"
    );
    let path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(path, [a.id(), b.id()]);
    for _ in 0..2 {
        f.store.open_session(&sid).unwrap().close().unwrap();
    }
    let recs = quarantine_records(&log);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let report = f
        .store
        .doctor(&sessionkit::DoctorOptions::default(), &mut |_| {})
        .unwrap();
    assert_eq!(report.logs[0].unquarantined, 0, "{report:?}");
}

/// A crash can stop a write after the last byte of a record but before its newline.
/// The repaired line is then a whole record: writer and readers must agree on it,
/// so a host that retries the unacknowledged append with the same id does not
/// create a duplicate.
#[test]
fn torn_tail_that_is_a_whole_record_is_not_duplicated() {
    let f = fixture();
    let s = f.store.create_session(CreateOptions::default()).unwrap();
    let sid = s.id().to_string();
    let a = s.append(json!({"role": "user", "content": "a"})).unwrap();
    let b = s
        .append(json!({"role": "assistant", "id": "retry-me", "content": "b"}))
        .unwrap();
    s.close().unwrap();
    let log = f.store.log_path(&sid).unwrap();
    let full = fs::read(&log).unwrap();
    fs::write(&log, &full[..full.len() - 1]).unwrap();

    let view = f.store.read_session(&sid).unwrap();
    assert!(view.report().torn_tail.is_some());
    assert!(!view.log().contains("retry-me"), "a torn line is not read");

    let s = f.store.open_session(&sid).unwrap();
    assert!(s.open_report().torn_tail.is_some());
    let after_repair = f.store.read_session(&sid).unwrap();
    assert_eq!(
        s.head().as_deref(),
        after_repair.head(),
        "writer and readers disagree on the head after the repair"
    );
    // The host retries the append it never saw acknowledged.
    let retry = s.append(json!({"role": "assistant", "id": "retry-me", "content": "b"}));
    match &retry {
        Ok(_) => {}
        Err(e) => assert_eq!(e.kind(), ErrorKind::Conflict, "{e}"),
    }
    let c = s.append(json!({"role": "user", "content": "c"})).unwrap();
    s.close().unwrap();
    let view = f.store.read_session(&sid).unwrap();
    assert!(
        view.report().duplicate_ids.is_empty(),
        "{:?}",
        view.report()
    );
    let path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(path, [a.id(), b.id(), c.id()]);
}

// ---------------------------------------------------------------------------
// A write that fails half way (file size limit): the next record must not be
// glued to the partial line, and a failed batch must leave nothing behind.

/// Child: lower RLIMIT_FSIZE so that a batch write stops part way, then append
/// again with the limit lifted.
#[test]
#[ignore = "entry point of a child process of failed_partial_write_does_not_take_the_next_record"]
fn child_partial_write() {
    assert_eq!(
        child_role().as_deref(),
        Some("partial-write"),
        "a child of failed_partial_write_does_not_take_the_next_record"
    );
    let store = Store::open(var("SK_ROOT"), options(Path::new(&var("SK_HOME")))).unwrap();
    let s = store.open_session(&var("SK_SESSION")).unwrap();
    let len = fs::metadata(s.path()).unwrap().len();
    // SAFETY: plain libc calls on this single-threaded child; SIGXFSZ would kill
    // the process instead of failing the write.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut lim: libc::rlimit = std::mem::zeroed();
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim), 0);
        let saved = lim;
        lim.rlim_cur = len + 5000;
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
        let batch = (0..4)
            .map(|i| json!({"role": "tool", "content": format!("{i}{}", "z".repeat(3000))}))
            .collect();
        let err = s.append_batch(batch).expect_err("the write must fail");
        assert_eq!(err.kind(), ErrorKind::Io, "{err}");
        assert_eq!(err.os_errno(), Some(libc::EFBIG), "{err}");
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &saved), 0);
    }
    let m = s
        .append(json!({"role": "user", "content": "after the failure"}))
        .unwrap();
    s.close().unwrap();
    println!("appended {}", m.id());
}

#[test]
fn failed_partial_write_does_not_take_the_next_record() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), options(home.path())).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let first = s
        .append(json!({"role": "user", "content": "before"}))
        .unwrap();
    let sid = s.id().to_string();
    s.close().unwrap();
    let out = child_command("child_partial_write", "partial-write")
        .env("SK_HOME", home.path())
        .env("SK_ROOT", root.path())
        .env("SK_SESSION", &sid)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let appended = stdout
        .lines()
        .find_map(|l| l.split("appended ").nth(1))
        .expect("child reports its append")
        .to_string();
    let view = store.read_session(&sid).unwrap();
    let path: Vec<String> = view
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.id().to_string())
        .collect();
    assert_eq!(
        path,
        vec![first.id().to_string(), appended],
        "the append after a failed write is lost or the failed batch is half there: {:?}",
        view.report()
    );
    assert!(view.report().torn_tail.is_none(), "{:?}", view.report());
}
