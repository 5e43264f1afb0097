//! Sessions shared through a real PostgreSQL server: two homes stand for two
//! machines. The server comes from `SESSIONKIT_TEST_PG` (a libpq connection
//! string; `tests/run-all.sh` starts one with `tests/pg/server.sh` and sets it,
//! with `SESSIONKIT_TEST_PG_DIR` for the outage and TLS tests). Without it each
//! test that needs it is reported as ignored, with the reason; under
//! `SESSIONKIT_REQUIRE_PG=1` (the test command) it fails instead.
//!
//! libtest cannot decide at run time that a test did not run: a test that
//! returns early counts as passed. So this file is its own harness
//! (`harness = false`, libtest-mimic), whose runtime skip is reported as
//! `ignored (reason)`; `#[ignore]` stays for what must be asked for by name.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::RwLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::json;
use sessionkit::testing::pg::{self, Absent, Need, TestServer};
use sessionkit::{
    CreateOptions, ErrorKind, Lease, Remote, RemoteOptions, SettingSource, Store, StoreOptions,
};

/// A test body, given the server.
type Test = fn(&TestServer);

fn main() -> ExitCode {
    // Each test names its remote itself; one from the environment would win
    // over the setting the settings test writes. Removed before any thread starts.
    std::env::remove_var("SESSIONKIT_REMOTE");
    let args = Arguments::from_args();
    let with_server: [(&str, Need, Test); 12] = [
        (
            "a_pushed_session_pulls_byte_identical_and_again_only_new_bytes",
            Need::Server,
            a_pushed_session_pulls_byte_identical_and_again_only_new_bytes,
        ),
        (
            "a_leased_session_is_busy_for_another_machine_and_a_stale_holder_is_fenced_off",
            Need::Server,
            a_leased_session_is_busy_for_another_machine_and_a_stale_holder_is_fenced_off,
        ),
        (
            "a_follower_receives_exactly_the_lines_pushed_after_it_started_in_order",
            Need::Server,
            a_follower_receives_exactly_the_lines_pushed_after_it_started_in_order,
        ),
        (
            "without_a_url_the_remote_comes_from_the_remote_url_setting",
            Need::Server,
            without_a_url_the_remote_comes_from_the_remote_url_setting,
        ),
        (
            "hostile_ids_and_unknown_sessions_are_refused_before_any_path_is_touched",
            Need::Server,
            hostile_ids_and_unknown_sessions_are_refused_before_any_path_is_touched,
        ),
        (
            "a_push_cut_by_a_server_outage_resumes_without_losing_or_duplicating_bytes",
            Need::Outage,
            a_push_cut_by_a_server_outage_resumes_without_losing_or_duplicating_bytes,
        ),
        (
            "a_background_push_follows_the_writer_renews_its_lease_and_hands_it_back_at_stop",
            Need::Server,
            a_background_push_follows_the_writer_renews_its_lease_and_hands_it_back_at_stop,
        ),
        (
            "a_background_push_whose_lease_was_taken_over_says_busy_and_pushes_nothing_more",
            Need::Server,
            a_background_push_whose_lease_was_taken_over_says_busy_and_pushes_nothing_more,
        ),
        (
            "a_pull_whose_pushed_entry_lags_the_lines_folds_the_log_it_wrote",
            Need::Server,
            a_pull_whose_pushed_entry_lags_the_lines_folds_the_log_it_wrote,
        ),
        (
            "tls_as_libpq_users_write_it_connects_verifies_and_refuses_clearly",
            Need::Tls,
            tls_as_libpq_users_write_it_connects_verifies_and_refuses_clearly,
        ),
        (
            "a_checkpointer_thread_travels_with_its_values_and_blobs",
            Need::Server,
            a_checkpointer_thread_travels_with_its_values_and_blobs,
        ),
        (
            "a_session_pushed_from_one_path_pulls_into_the_mapped_path",
            Need::Server,
            a_session_pushed_from_one_path_pulls_into_the_mapped_path,
        ),
    ];
    let mut trials: Vec<Trial> = with_server
        .into_iter()
        .map(|(name, need, test)| {
            // Run against the server; without it, ignored with the reason, or
            // failed under SESSIONKIT_REQUIRE_PG=1 (see `testing::pg`).
            Trial::ignorable_test(name, move || match pg::test_server(need) {
                Ok(server) => {
                    test(&server);
                    Ok(Completion::Completed)
                }
                Err(Absent::Skip(why)) => Ok(Completion::ignored_with(why)),
                Err(Absent::Fail(why)) => Err(why.into()),
            })
        })
        .collect();
    let without_server: [(&str, fn()); 2] = [
        (
            "a_bad_connection_string_and_an_unreachable_server_say_what_failed",
            a_bad_connection_string_and_an_unreachable_server_say_what_failed,
        ),
        (
            "a_lease_is_read_back_only_from_the_object_it_was_given_as",
            a_lease_is_read_back_only_from_the_object_it_was_given_as,
        ),
    ];
    trials.extend(without_server.into_iter().map(|(name, test)| {
        Trial::test(name, move || {
            test();
            Ok(())
        })
    }));
    libtest_mimic::run(&args, trials).exit_code()
}

/// The outage test stops the shared server: it runs alone, the others together.
static SERVER: RwLock<()> = RwLock::new(());

struct Machines {
    _tmp: tempfile::TempDir,
    a: Store,
    b: Store,
    home_b: PathBuf,
    project: String,
}

/// Two homes on one project path (same project code), and a project name on
/// the remote that no other test uses.
fn machines() -> Machines {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("project");
    std::fs::create_dir(&root).expect("project dir");
    let open = |home: &Path| {
        Store::open(
            &root,
            StoreOptions {
                home: Some(home.to_path_buf()),
                ..StoreOptions::default()
            },
        )
        .expect("open store")
    };
    let home_b = tmp.path().join("home-b");
    let a = open(&tmp.path().join("home-a"));
    let b = open(&home_b);
    Machines {
        project: format!("test-{}", uuid::Uuid::now_v7()),
        _tmp: tmp,
        a,
        b,
        home_b,
    }
}

fn remote(url: &str, m: &Machines, store: &Store, holder: &str, ttl: Duration) -> Remote {
    Remote::connect(
        store,
        RemoteOptions {
            url: Some(url.to_string()),
            project: Some(m.project.clone()),
            holder: Some(holder.to_string()),
            lease_ttl: Some(ttl),
            map_paths: Vec::new(),
        },
    )
    .expect("connect to the test server")
}

fn log_bytes(store: &Store, id: &str) -> Vec<u8> {
    let dir = store.dir().to_path_buf();
    std::fs::read(dir.join(format!("{id}.jsonl"))).expect("read log")
}

fn a_pushed_session_pulls_byte_identical_and_again_only_new_bytes(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let rb = remote(&url, &m, &m.b, "ci", Duration::from_secs(60));

    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "Summarise the build log"}))
        .expect("append");
    // Over the blob threshold: the line names a blob that must travel with it.
    // Blobs are shared by digest across projects: this one is new to the server.
    let big = format!("{} {}", m.project, "x".repeat(300 * 1024));
    s.append(json!({"role": "tool", "content": big}))
        .expect("append");
    s.append(json!({"role": "assistant", "content": "It passed."}))
        .expect("append");

    let pushed = ra.push(&m.a, &id).expect("push");
    assert_eq!(pushed.from, 0);
    assert_eq!(pushed.to, log_bytes(&m.a, &id).len() as u64);
    assert_eq!(pushed.blobs, 1);

    let listed = rb.list().expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, id);
    let entry = listed[0].entry.as_ref().expect("entry pushed");
    assert_eq!(entry.title, "Summarise the build log");
    assert_eq!(entry.message_count, 3);

    let pulled = rb.pull(&m.b, &id).expect("pull");
    assert_eq!((pulled.from, pulled.blobs), (0, 1));
    assert_eq!(log_bytes(&m.b, &id), log_bytes(&m.a, &id));
    assert_eq!(
        m.b.session_entry(&id).expect("entry in B"),
        m.a.session_entry(&id).expect("entry in A")
    );
    let view = m.b.read_session(&id).expect("read in B");
    let texts: Vec<_> = view
        .active_path()
        .expect("path")
        .iter()
        .map(|msg| msg.value()["content"].clone())
        .collect();
    assert_eq!(texts[1], json!(big), "the blob came along and inlines");

    // More lines on A: a retried push of what is there sends nothing, the next
    // push only the new lines, and the pull only those.
    let again = ra.push(&m.a, &id).expect("push again");
    assert_eq!(
        (again.from, again.to, again.batches),
        (pushed.to, pushed.to, 0)
    );
    s.append(json!({"role": "user", "content": "And the tests?"}))
        .expect("append");
    let more = ra.push(&m.a, &id).expect("push more");
    assert_eq!(more.from, pushed.to);
    let pulled2 = rb.pull(&m.b, &id).expect("pull again");
    assert_eq!(pulled2.from, pulled.to);
    assert_eq!(pulled2.to, more.to);
    assert_eq!(pulled2.blobs, 0);
    assert_eq!(log_bytes(&m.b, &id), log_bytes(&m.a, &id));
    assert_eq!(rb.pull(&m.b, &id).expect("nothing new").to, more.to);

    // B can continue the session it pulled.
    s.close().expect("close");
    let cont = m.b.open_session(&id).expect("resume in B");
    cont.append(json!({"role": "assistant", "content": "They pass."}))
        .expect("append in B");
}

fn a_leased_session_is_busy_for_another_machine_and_a_stale_holder_is_fenced_off(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    // A lease no load outlasts: it ends below because the test shortens it.
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let rb = remote(&url, &m, &m.b, "sandbox", Duration::from_secs(60));

    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "one"}))
        .expect("append");
    let lease = ra.acquire(&id).expect("lease on A");
    ra.push_with(&m.a, &id, &lease)
        .expect("push under the lease");
    rb.pull(&m.b, &id).expect("pull into B");

    // While A's lease lives, B cannot take it nor push.
    let busy = rb.acquire(&id).expect_err("B must not get the lease");
    assert_eq!(busy.kind(), ErrorKind::Busy);
    assert!(busy.to_string().contains("laptop"), "{busy}");
    assert_eq!(
        rb.push(&m.b, &id).expect_err("B push").kind(),
        ErrorKind::Busy
    );

    // A vanishes and its lease runs out, without the test racing a clock:
    // A's last renewal asked for 1 ms, and B tries once the database's clock
    // (this machine's) is past that. B takes over with a larger token.
    let brief = remote(&url, &m, &m.a, "laptop", Duration::from_millis(1));
    let lapsing = brief.renew(&lease).expect("A renews for 1 ms");
    assert_eq!(lapsing.token, lease.token);
    wait_past(lapsing.expires_ms);
    let taken = rb.acquire(&id).expect("B takes the expired lease");
    assert!(taken.token > lease.token);
    let w = m.b.open_session(&id).expect("write in B");
    w.append(json!({"role": "assistant", "content": "B's line"}))
        .expect("append B");
    rb.push_with(&m.b, &id, &taken).expect("B pushes");

    // A comes back with lines of its own and its old lease: refused.
    s.append(json!({"role": "assistant", "content": "A's late line"}))
        .expect("append A");
    let late = ra.push_with(&m.a, &id, &lease).expect_err("stale token");
    assert_eq!(late.kind(), ErrorKind::Busy);
    assert_eq!(
        ra.renew(&lease).expect_err("renew stale").kind(),
        ErrorKind::Busy
    );
    // The remote holds B's line, not A's.
    let listed = rb.list().expect("list");
    assert_eq!(listed[0].pushed_bytes, log_bytes(&m.b, &id).len() as u64);
    // A, pulling now, finds its log diverged: it must fork.
    s.close().expect("close A");
    assert_eq!(
        ra.pull(&m.a, &id).expect_err("diverged").kind(),
        ErrorKind::Conflict
    );
}

fn a_follower_receives_exactly_the_lines_pushed_after_it_started_in_order(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let rb = remote(&url, &m, &m.b, "dashboard", Duration::from_secs(60));
    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "before the follower"}))
        .expect("append");
    let start = ra.push(&m.a, &id).expect("push").to;

    // From where the remote stands: nothing of what came before.
    let mut follower = rb.follow(&id, None).expect("follow");
    assert_eq!(follower.offset(), start);
    let pusher = std::thread::spawn(move || {
        for round in 0..3 {
            for i in 0..=round {
                s.append(
                    json!({"role": "assistant", "content": format!("round {round} line {i}")}),
                )
                .expect("append");
            }
            ra.push(&m.a, &id).expect("push");
            std::thread::sleep(Duration::from_millis(200));
        }
        (m, id)
    });
    let mut got = Vec::new();
    let begun = std::time::Instant::now();
    while got.len() < 6 && begun.elapsed() < Duration::from_secs(30) {
        got.extend(follower.next_lines(Duration::from_secs(5)).expect("lines"));
    }
    let (m, id) = pusher.join().expect("pusher");
    assert!(
        follower
            .next_lines(Duration::from_millis(300))
            .expect("nothing more")
            .is_empty(),
        "no line twice"
    );
    assert_eq!(
        got.concat(),
        log_bytes(&m.a, &id)[start as usize..].to_vec()
    );
    assert_eq!(got.len(), 6);
    assert!(got.iter().all(|l| l.ends_with(b"\n")), "whole lines");

    assert_eq!(
        rb.follow("../escape", None).expect_err("hostile").kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        rb.follow("0190a4b0-0000-7000-8000-000000000000", None)
            .expect_err("unknown")
            .kind(),
        ErrorKind::NotFound
    );
}

fn without_a_url_the_remote_comes_from_the_remote_url_setting(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let none = Remote::connect(&m.a, RemoteOptions::default()).expect_err("no remote");
    assert_eq!(none.kind(), ErrorKind::InvalidInput);
    assert!(none.to_string().contains("remote.url"), "{none}");

    m.a.set_setting(SettingSource::Local, "remote.url", json!(url))
        .expect("set");
    let r = Remote::connect(&m.a, RemoteOptions::default()).expect("connect from the setting");
    assert!(r.list().expect("list").is_empty());

    m.a.set_setting(SettingSource::Local, "remote.url", json!(5432))
        .expect("set");
    let bad = Remote::connect(&m.a, RemoteOptions::default()).expect_err("not a string");
    assert_eq!(bad.kind(), ErrorKind::InvalidInput);
    assert!(bad.to_string().contains("5432"), "{bad}");
}

fn hostile_ids_and_unknown_sessions_are_refused_before_any_path_is_touched(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let rb = remote(&url, &m, &m.b, "ci", Duration::from_secs(60));
    for bad in ["../escape", "/etc/passwd", "a/b", "", "blobs", "x.jsonl"] {
        assert_eq!(
            rb.pull(&m.b, bad).expect_err(bad).kind(),
            ErrorKind::InvalidInput,
            "pull {bad:?}"
        );
        assert_eq!(
            rb.acquire(bad).expect_err(bad).kind(),
            ErrorKind::InvalidInput,
            "lease {bad:?}"
        );
    }
    assert!(!m.home_b.join("escape").exists());
    let missing = rb
        .pull(&m.b, "0190a4b0-0000-7000-8000-000000000000")
        .expect_err("unknown");
    assert_eq!(missing.kind(), ErrorKind::NotFound);
}

fn a_bad_connection_string_and_an_unreachable_server_say_what_failed() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = Store::open(
        tmp.path(),
        StoreOptions {
            home: Some(tmp.path().join("home")),
            ..StoreOptions::default()
        },
    )
    .expect("open");
    let connect = |url: &str| {
        Remote::connect(
            &store,
            RemoteOptions {
                url: Some(url.to_string()),
                ..RemoteOptions::default()
            },
        )
    };
    let bad = connect("host=").expect_err("empty host");
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
    // A Unix socket directory where no server listens.
    let none = format!("host={} port=1 dbname=x user=x", tmp.path().display());
    let down = connect(&none).expect_err("nobody listens");
    assert_eq!(down.kind(), ErrorKind::Io);
    assert!(down.to_string().contains("connecting"), "{down}");
    assert!(
        down.to_string().contains(&tmp.path().display().to_string()),
        "{down}"
    );
}

fn a_push_cut_by_a_server_outage_resumes_without_losing_or_duplicating_bytes(pg: &TestServer) {
    let url = pg.url.clone();
    let dir = server_dir(pg);
    let _alone = SERVER.write().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    // About 24 MiB in lines of 100 KiB: two dozen batches, long enough to cut.
    let line = "y".repeat(100 * 1024);
    for _ in 0..240 {
        s.append(json!({"role": "assistant", "content": line}))
            .expect("append");
    }
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let cut = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            server_ctl("pause", &dir);
        })
    };
    let first = ra.push(&m.a, &id);
    cut.join().expect("pause thread");
    server_ctl("resume", &dir);
    if let Err(e) = &first {
        assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    }
    // The lease the cut push took is still held by this holder: the retry takes
    // it again (same holder) and goes on from where the remote stands.
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let done = ra.push(&m.a, &id).expect("push after the outage");
    let total = log_bytes(&m.a, &id).len() as u64;
    assert_eq!(done.to, total);
    let rb = remote(&url, &m, &m.b, "ci", Duration::from_secs(60));
    rb.pull(&m.b, &id).expect("pull");
    assert_eq!(log_bytes(&m.b, &id), log_bytes(&m.a, &id));
}

/// When the lease of session `id` expires, in milliseconds since the epoch
/// on the database's clock.
fn lease_expiry(db: &mut postgres::Client, project: &str, id: &str) -> i64 {
    db.query_one(
        "SELECT (extract(epoch from lease_expires) * 1000)::bigint
         FROM sessionkit_sessions WHERE project = $1 AND id = $2",
        &[&project, &id],
    )
    .expect("the lease's expiry")
    .get(0)
}

/// Wait until this machine's clock, which the test server reads too, is past
/// `ms` milliseconds since the epoch.
fn wait_past(ms: i64) {
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_millis() as i64;
        if now > ms + 1 {
            return;
        }
        std::thread::sleep(Duration::from_millis((ms + 2 - now) as u64));
    }
}

/// Stop (`pause`) or start again (`resume`) the test server, keeping its data.
fn server_ctl(what: &str, dir: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/pg/server.sh");
    let ok = std::process::Command::new("bash")
        .arg(&script)
        .args([what, dir])
        .status()
        .expect("run tests/pg/server.sh")
        .success();
    assert!(ok, "tests/pg/server.sh {what} {dir}");
}

fn a_lease_is_read_back_only_from_the_object_it_was_given_as() {
    let lease = Lease {
        session_id: "s1".into(),
        holder: "laptop".into(),
        token: 3,
        expires_ms: 1_700_000_000_000,
    };
    let json = serde_json::to_string(&lease).expect("lease as JSON");
    assert_eq!(Lease::from_json(&json).expect("read back"), lease);
    // Positional, empty, null, partial or with a stray field: refused, never
    // read silently wrong.
    for bad in [
        r#"["s1","laptop",3,1700000000000]"#,
        "",
        "null",
        r#"{"sessionId":"s1"}"#,
        r#"{"sessionId":"s1","holder":"laptop","token":3,"expiresMs":1,"x":1}"#,
    ] {
        let e = Lease::from_json(bad).expect_err(bad);
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{bad}: {e}");
        assert!(e.to_string().contains("lease"), "{bad}: {e}");
    }
}

fn a_background_push_follows_the_writer_renews_its_lease_and_hands_it_back_at_stop(
    pg: &TestServer,
) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    // A lease no load outlasts while the test runs; the pusher renews it a
    // third of the way through (after 5 s), which the test waits to see in
    // the database instead of racing its expiry.
    let ttl = Duration::from_secs(15);
    let ra = remote(&url, &m, &m.a, "laptop", ttl);
    let rb = remote(&url, &m, &m.b, "ci", ttl);
    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();

    let interval = Duration::from_millis(20);
    let bad = ra.push_in_background(&m.a, &id, Duration::from_millis(1));
    assert_eq!(bad.expect_err("1 ms").kind(), ErrorKind::InvalidInput);
    assert_eq!(
        ra.push_in_background(&m.a, "../x", interval)
            .expect_err("hostile id")
            .kind(),
        ErrorKind::InvalidInput
    );
    let pusher = ra.push_in_background(&m.a, &id, interval).expect("start");
    let mut db = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let taken_until = lease_expiry(&mut db, &m.project, &id);
    let busy_for_b = || {
        let busy = rb.acquire(&id).expect_err("held by the pusher");
        assert_eq!(busy.kind(), ErrorKind::Busy, "{busy}");
        assert!(busy.to_string().contains("laptop"), "{busy}");
    };
    busy_for_b();
    // The writer appends, never waiting for the network, until the pusher
    // has pushed lines on its interval, unasked, and renewed its lease.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut n = 0;
    loop {
        s.append(json!({"role": "user", "content": format!("turn {n}")}))
            .expect("append");
        n += 1;
        std::thread::sleep(Duration::from_millis(5));
        if n % 20 == 0
            && pusher.pushed() > 0
            && lease_expiry(&mut db, &m.project, &id) > taken_until
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "in 120 s the pusher pushed {} bytes and did not renew its lease",
            pusher.pushed()
        );
    }
    // Renewed, still the pusher's: the other machine cannot take the session.
    busy_for_b();
    let flushed = pusher.flush().expect("flush");
    let local = log_bytes(&m.a, &id).len() as u64;
    assert_eq!(flushed.to, local);
    assert_eq!(pusher.pushed(), local);
    rb.pull(&m.b, &id).expect("pull");
    assert_eq!(log_bytes(&m.b, &id), log_bytes(&m.a, &id));

    // The last lines go at stop, and the lease is given back.
    s.append(json!({"role": "assistant", "content": "done"}))
        .expect("append");
    let stopped = pusher.stop().expect("stop");
    assert_eq!(stopped.to, log_bytes(&m.a, &id).len() as u64);
    // Once only: a flush or a stop after it says so, and waits for nothing.
    for after in [pusher.flush(), pusher.stop()] {
        let e = after.expect_err("stopped already");
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains("stopped already"), "{e}");
    }
    rb.pull(&m.b, &id).expect("pull the rest");
    assert_eq!(log_bytes(&m.b, &id), log_bytes(&m.a, &id));
    let lease = rb.acquire(&id).expect("free after stop");
    rb.release(&lease).expect("release");
}

fn a_background_push_whose_lease_was_taken_over_says_busy_and_pushes_nothing_more(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let ttl = Duration::from_secs(60);
    let ra = remote(&url, &m, &m.a, "laptop", ttl);
    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "first"}))
        .expect("append");
    let pusher = ra
        .push_in_background(&m.a, &id, Duration::from_millis(20))
        .expect("start");
    let first = pusher.flush().expect("flush");
    assert_eq!(first.to, log_bytes(&m.a, &id).len() as u64);

    // The same holder name from elsewhere (the laptop's agent restarted) takes
    // the lease again: a new fencing token, and the old pusher is fenced off.
    let again = remote(&url, &m, &m.b, "laptop", ttl);
    let lease = again.acquire(&id).expect("take over");
    s.append(json!({"role": "user", "content": "late"}))
        .expect("append");
    let late = pusher.flush().expect_err("fenced off");
    assert_eq!(late.kind(), ErrorKind::Busy, "{late}");
    assert!(late.to_string().contains("taken over"), "{late}");
    assert_eq!(
        pusher.flush().expect_err("still fenced off").kind(),
        ErrorKind::Busy
    );
    let listed = again.list().expect("list");
    assert_eq!(listed[0].pushed_bytes, first.to, "no late line pushed");
    // Stopping does not give back the lease it no longer holds.
    assert_eq!(
        pusher.stop().expect_err("stop says why").kind(),
        ErrorKind::Busy
    );
    again.renew(&lease).expect("the new holder keeps its lease");
}

fn a_pull_whose_pushed_entry_lags_the_lines_folds_the_log_it_wrote(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let rb = remote(&url, &m, &m.b, "ci", Duration::from_secs(60));
    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "Count the lines"}))
        .expect("append");
    s.append(json!({"role": "assistant", "content": "Two."}))
        .expect("append");
    s.close().expect("close");
    // A writer killed mid-line: the push sends whole lines only, while the
    // entry pushed with them counts the torn tail, so it describes no prefix
    // the remote holds.
    let log = m.a.dir().join(format!("{id}.jsonl"));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .expect("open log");
    std::io::Write::write_all(&mut file, br#"{"role":"user","cont"#).expect("torn tail");
    let pushed = ra.push(&m.a, &id).expect("push");
    let listed = rb.list().expect("list");
    let remote_entry = listed[0].entry.as_ref().expect("entry pushed");
    assert!(remote_entry.log_bytes > pushed.to, "{remote_entry:?}");

    let pulled = rb.pull(&m.b, &id).expect("pull");
    assert_eq!(pulled.to, pushed.to);
    let entry = m.b.session_entry(&id).expect("entry in B");
    assert_eq!(entry.log_bytes, pulled.to);
    assert_eq!(entry.message_count, 2);
    assert_eq!(entry.title, "Count the lines");
    assert_eq!(entry.last_assistant_reply.as_deref(), Some("Two."));
}

/// The server's directory (`Need::Outage` and `Need::Tls` make sure of it).
fn server_dir(pg: &TestServer) -> String {
    let dir = pg.dir.as_ref().expect("the test server's directory");
    dir.display().to_string()
}

/// The TLS side of the test server (`tests/pg/server.sh start --tls`): its TCP
/// connection string without `sslmode`, and the directory of its certificates.
fn tls_server(pg: &TestServer) -> (String, PathBuf) {
    let dir = PathBuf::from(server_dir(pg));
    let port = std::fs::read_to_string(dir.join("port")).expect("the server's port");
    (
        format!(
            "host=localhost port={} user=sessionkit dbname=sessionkit",
            port.trim()
        ),
        dir.join("tls"),
    )
}

fn tls_as_libpq_users_write_it_connects_verifies_and_refuses_clearly(pg: &TestServer) {
    let (tcp, tls) = tls_server(pg);
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let connect = |url: String| {
        Remote::connect(
            &m.a,
            RemoteOptions {
                url: Some(url),
                project: Some(m.project.clone()),
                holder: Some("tls".into()),
                lease_ttl: None,
                map_paths: Vec::new(),
            },
        )
    };
    let ca = tls.join("ca.crt").display().to_string();
    let other_ca = tls.join("other-ca.crt").display().to_string();
    // The certificate names `localhost` only.
    let by_ip = tcp.replace("host=localhost", "host=127.0.0.1");

    // require: encrypted, the certificate not checked; a push goes through.
    let r = connect(format!("{tcp} sslmode=require")).expect("sslmode=require");
    let s =
        m.a.create_session(CreateOptions::default())
            .expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "Over TLS"}))
        .expect("append");
    let pushed = r.push(&m.a, &id).expect("push over TLS");
    assert_eq!(pushed.to, log_bytes(&m.a, &id).len() as u64);

    // verify-full with the authority that signed the server's certificate, in
    // both forms of the string; verify-ca checks the chain, not the name.
    connect(format!("{tcp} sslmode=verify-full sslrootcert='{ca}'")).expect("verify-full");
    let port = tcp.split("port=").nth(1).and_then(|p| p.split(' ').next());
    let uri = format!(
        "postgresql://sessionkit@localhost:{}/sessionkit?sslmode=verify-full&sslrootcert={ca}",
        port.expect("port")
    );
    let listed = connect(uri)
        .expect("verify-full, URI")
        .list()
        .expect("list");
    assert_eq!(listed.len(), 1);
    connect(format!("{by_ip} sslmode=verify-ca sslrootcert={ca}")).expect("verify-ca");

    // Refusals name TLS and what did not match.
    let wrong_root = connect(format!("{tcp} sslmode=verify-full sslrootcert={other_ca}"))
        .expect_err("an authority that signed nothing here");
    assert_eq!(wrong_root.kind(), ErrorKind::Io, "{wrong_root}");
    let text = wrong_root.to_string();
    assert!(
        text.contains("TLS") && text.contains("UnknownIssuer"),
        "{text}"
    );
    let wrong_name = connect(format!("{by_ip} sslmode=verify-full sslrootcert={ca}"))
        .expect_err("a certificate for another name");
    let text = wrong_name.to_string();
    assert!(text.contains("TLS") && text.contains("127.0.0.1"), "{text}");
    let plain = connect(format!("{tcp} sslmode=disable")).expect_err("the server wants TLS");
    let text = plain.to_string();
    assert!(text.contains("without TLS (sslmode=disable)"), "{text}");
    let bad = connect(format!(
        "{tcp} sslmode=verify-full sslrootcert=/nonexistent/ca.crt"
    ))
    .expect_err("a root file that is not there");
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
    assert!(bad.to_string().contains("/nonexistent/ca.crt"), "{bad}");
}

fn a_checkpointer_thread_travels_with_its_values_and_blobs(pg: &TestServer) {
    use sessionkit::{conversation_session_id, ChannelValue, CheckpointPut, TypedValue};
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let m = machines();
    let ra = remote(&url, &m, &m.a, "laptop", Duration::from_secs(60));
    let rb = remote(&url, &m, &m.b, "ci", Duration::from_secs(60));
    // Over the blob threshold even compressed (bytes zstd cannot shrink), and
    // named by this project, so the blob is new to the server.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut big: Vec<u8> = m.project.as_bytes().to_vec();
    big.extend((0..300 * 1024).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    }));
    let put = |id: &str, parent: Option<&str>, value: &[u8]| CheckpointPut {
        checkpoint: json!({"id": id, "channel_versions": {"state": id}})
            .as_object()
            .unwrap()
            .clone(),
        parent_id: parent.map(str::to_owned),
        values: vec![ChannelValue {
            channel: "state".into(),
            version: json!(id),
            value: Some(TypedValue {
                kind: "bytes".into(),
                bytes: value.to_vec(),
            }),
        }],
        ..CheckpointPut::default()
    };
    m.a.checkpoint_put("user@example.com/chat", put("1", None, &big))
        .expect("put");
    let mut bigger = big.clone();
    bigger.extend_from_slice(b"one more step");
    m.a.checkpoint_put("user@example.com/chat", put("2", Some("1"), &bigger))
        .expect("put");

    let id = conversation_session_id("user@example.com/chat").unwrap();
    let pushed = ra.push(&m.a, &id).expect("push");
    assert_eq!(
        pushed.blobs, 1,
        "the whole value is a blob, the next a delta in the line"
    );
    rb.pull(&m.b, &id).expect("pull");
    assert_eq!(log_bytes(&m.b, &id), log_bytes(&m.a, &id));
    for (cp, want) in [("1", &big), ("2", &bigger)] {
        let t =
            m.b.checkpoint_get("user@example.com/chat", "", Some(cp))
                .expect("get in B")
                .expect("the checkpoint is in B");
        assert_eq!(&t.values[0].1.bytes, want, "checkpoint {cp}");
        assert_eq!(t.thread_id, "user@example.com/chat");
    }
}

/// Machine A has the project at `<tmp>/home/a/src/x`, machine B at
/// `<tmp>/Users/b/code/x`: with the mapping, B's default remote name is A's,
/// so what A pushed B pulls, byte for byte, into its own project.
fn a_session_pushed_from_one_path_pulls_into_the_mapped_path(pg: &TestServer) {
    let url = pg.url.clone();
    let _shared = SERVER.read().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().expect("temp dir");
    let open = |root: &Path, home: &str| {
        std::fs::create_dir_all(root).expect("project dir");
        Store::open(
            root,
            StoreOptions {
                home: Some(tmp.path().join(home)),
                ..StoreOptions::default()
            },
        )
        .expect("open store")
    };
    let a_src = tmp.path().join("home/a/src");
    let b_code = tmp.path().join("Users/b/code");
    let a = open(&a_src.join("x"), "home-a");
    let b = open(&b_code.join("x"), "home-b");
    let connect = |store: &Store, map_paths: Vec<sessionkit::PathMapping>| {
        Remote::connect(
            store,
            RemoteOptions {
                url: Some(url.clone()),
                map_paths,
                ..RemoteOptions::default()
            },
        )
        .expect("connect")
    };
    let ra = connect(&a, Vec::new());
    let mapping: sessionkit::PathMapping = format!("{}={}", a_src.display(), b_code.display())
        .parse()
        .expect("mapping");
    let rb = connect(&b, vec![mapping]);
    assert_eq!(rb.project(), ra.project());
    assert_eq!(ra.project(), a.project_code());
    // Without the mapping, B's name is its own path's: it sees nothing of A's.
    assert_ne!(connect(&b, Vec::new()).project(), ra.project());

    let s = a.create_session(CreateOptions::default()).expect("create");
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "Port the build to the new CI"}))
        .expect("append");
    s.close().expect("close");
    ra.push(&a, &id).expect("push");
    let pulled = rb.pull(&b, &id).expect("pull");
    assert_eq!(pulled.from, 0);
    assert_eq!(log_bytes(&b, &id), log_bytes(&a, &id));
    assert_eq!(
        b.session_entry(&id).expect("in B's project").title,
        "Port the build to the new CI"
    );

    // A mapping that is not two absolute paths is refused before connecting.
    let bad = Remote::connect(
        &b,
        RemoteOptions {
            url: Some(url.clone()),
            map_paths: vec![sessionkit::PathMapping {
                from: "home/a".into(),
                to: b_code.clone(),
            }],
            ..RemoteOptions::default()
        },
    )
    .expect_err("a relative mapping");
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
    assert!(bad.to_string().contains("mapPaths"), "{bad}");
}
