//! `push`, `pull`, `list --remote` and `follow` against a real PostgreSQL
//! server: two homes on one project path stand for two machines. The server
//! comes from `SESSIONKIT_TEST_PG` (`tests/run-all.sh` starts one with
//! `tests/pg/server.sh`). Without it each test is reported as ignored, with
//! the reason; under `SESSIONKIT_REQUIRE_PG=1` (the test command) it fails.
//! Its own harness (`harness = false`, libtest-mimic), as in the core's
//! `tests/remote.rs`: libtest counts a test that returns early as passed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use libtest_mimic::{Arguments, Completion, Trial};
use serde_json::{json, Value};
use sessionkit::testing::pg::{self, Absent, Need, TestServer};
use sessionkit::{CreateOptions, Remote, RemoteOptions, Store, StoreOptions};

/// A test body, given the server.
type Test = fn(&TestServer);

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let tests: [(&str, Test); 8] = [
        (
            "push_pull_and_list_remote_carry_a_session_between_two_machines",
            push_pull_and_list_remote_carry_a_session_between_two_machines,
        ),
        (
            "the_remote_comes_from_the_flag_the_environment_or_the_setting_and_is_required",
            the_remote_comes_from_the_flag_the_environment_or_the_setting_and_is_required,
        ),
        (
            "push_while_another_machine_holds_the_lease_says_busy_with_holder_and_expiry",
            push_while_another_machine_holds_the_lease_says_busy_with_holder_and_expiry,
        ),
        (
            "follow_prints_exactly_the_lines_pushed_after_its_start_in_order",
            follow_prints_exactly_the_lines_pushed_after_its_start_in_order,
        ),
        (
            "a_push_killed_half_way_resumes_without_losing_or_duplicating_bytes",
            a_push_killed_half_way_resumes_without_losing_or_duplicating_bytes,
        ),
        (
            "a_line_over_the_remote_limit_is_refused_after_the_lines_before_it",
            a_line_over_the_remote_limit_is_refused_after_the_lines_before_it,
        ),
        (
            "hostile_ids_are_refused_and_nothing_is_written_outside_the_home",
            hostile_ids_are_refused_and_nothing_is_written_outside_the_home,
        ),
        (
            "pull_with_map_path_brings_a_session_pushed_from_another_path",
            pull_with_map_path_brings_a_session_pushed_from_another_path,
        ),
    ];
    let trials = tests
        .into_iter()
        .map(|(name, test)| {
            Trial::ignorable_test(name, move || match pg::test_server(Need::Server) {
                Ok(server) => {
                    test(&server);
                    Ok(Completion::Completed)
                }
                Err(Absent::Skip(why)) => Ok(Completion::ignored_with(why)),
                Err(Absent::Fail(why)) => Err(why.into()),
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// Two machines: homes `a` and `b` on one project path (one project code, new
/// to the server at every run).
struct Machines {
    tmp: tempfile::TempDir,
    url: String,
}

impl Machines {
    fn new(url: &str) -> Machines {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(tmp.path().join("project")).expect("project dir");
        Machines {
            tmp,
            url: url.to_string(),
        }
    }

    fn root(&self) -> PathBuf {
        self.tmp.path().join("project")
    }

    fn home(&self, machine: &str) -> PathBuf {
        self.tmp.path().join(format!("home-{machine}"))
    }

    fn store(&self, machine: &str) -> Store {
        Store::open(
            self.root(),
            StoreOptions {
                home: Some(self.home(machine)),
                ..StoreOptions::default()
            },
        )
        .expect("open store")
    }

    /// The binary on `machine`, with no remote in its environment.
    fn process(&self, machine: &str) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sessionkit"));
        c.env_remove("SESSIONKIT_HOME")
            .env_remove("SESSIONKIT_REMOTE")
            .env("NO_COLOR", "1")
            .arg("--home")
            .arg(self.home(machine))
            .arg("--project")
            .arg(self.root());
        c
    }

    fn cmd(&self, machine: &str) -> Command {
        Command::from_std(self.process(machine))
    }

    /// Run `c` with `args`, expect success, return stdout.
    fn run(&self, mut c: Command, args: &[&str]) -> String {
        let out = c.args(args).output().expect("run");
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// Run on `machine` with the remote in `SESSIONKIT_REMOTE`, expect success.
    fn ok(&self, machine: &str, args: &[&str]) -> String {
        let mut c = self.cmd(machine);
        c.env("SESSIONKIT_REMOTE", &self.url);
        self.run(c, args)
    }

    fn json(&self, machine: &str, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(machine, &all)).expect("json")
    }

    /// Run on `machine` with the remote, expect exit `code`, return stderr.
    fn fails(&self, machine: &str, args: &[&str], code: i32) -> String {
        let mut c = self.cmd(machine);
        c.env("SESSIONKIT_REMOTE", &self.url);
        fails_with(c, args, code)
    }

    fn log(&self, machine: &str, id: &str) -> Vec<u8> {
        std::fs::read(self.store(machine).dir().join(format!("{id}.jsonl"))).expect("read log")
    }

    /// The library's handle on the remote for `machine`, as `holder`.
    fn remote(&self, store: &Store, holder: &str) -> Remote {
        Remote::connect(
            store,
            RemoteOptions {
                url: Some(self.url.clone()),
                holder: Some(holder.to_string()),
                ..RemoteOptions::default()
            },
        )
        .expect("connect")
    }
}

/// Run `c` with `args`, expect exit `code`, return stderr.
fn fails_with(mut c: Command, args: &[&str], code: i32) -> String {
    let out = c.args(args).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    stderr
}

/// A session on `store` with `n` short messages; its id.
fn session(store: &Store, n: usize) -> String {
    let s = store
        .create_session(CreateOptions::default())
        .expect("create");
    for i in 0..n {
        s.append(json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message {i}")}))
            .expect("append");
    }
    s.id().to_string()
}

fn append(store: &Store, id: &str, text: &str) {
    let s = store.open_session(id).expect("open");
    s.append(json!({"role": "user", "content": text}))
        .expect("append");
}

fn push_pull_and_list_remote_carry_a_session_between_two_machines(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    let a = m.store("a");
    let id = session(&a, 3);

    // No id: every session of the project.
    let pushed = m.json("a", &["push"]);
    assert_eq!(pushed[0]["sessionId"], json!(id));
    assert_eq!(pushed[0]["from"], json!(0));
    let first = m.log("a", &id);
    assert_eq!(pushed[0]["to"], json!(first.len()));

    let listed = m.json("b", &["list", "--remote"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], json!(id));
    assert_eq!(listed[0]["pushedBytes"], json!(first.len()));
    assert_eq!(listed[0]["entry"]["title"], json!("message 0"));
    assert_eq!(listed[0]["entry"]["messageCount"], json!(3));
    let table = m.ok("b", &["list", "--remote"]);
    assert!(table.contains("message 0"), "{table}");
    assert!(table.contains(&first.len().to_string()), "{table}");

    let pulled = m.json("b", &["pull", &id]);
    assert_eq!(
        (pulled["from"].clone(), pulled["to"].clone()),
        (json!(0), json!(first.len()))
    );
    assert_eq!(m.log("b", &id), first);
    // The pulled session is a local session on b, listed and readable.
    assert!(m.ok("b", &["list"]).contains("message 0"));

    append(&a, &id, "one more");
    let text = m.ok("a", &["push", &id[..12]]);
    assert!(
        text.contains(&format!("{id}: pushed bytes {}..", first.len())),
        "{text}"
    );
    let again = m.json("b", &["pull", &id]);
    assert_eq!(again["from"], json!(first.len()), "only the new bytes");
    assert_eq!(m.log("b", &id), m.log("a", &id));
    assert!(m.ok("b", &["pull", &id]).contains("up to date"));
}

fn the_remote_comes_from_the_flag_the_environment_or_the_setting_and_is_required(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    let id = session(&m.store("a"), 1);

    let stderr = fails_with(m.cmd("a"), &["push"], 6);
    assert!(
        stderr.contains("no remote") && stderr.contains("SESSIONKIT_REMOTE"),
        "{stderr}"
    );

    m.run(m.cmd("a"), &["push", "--remote", &url]);

    m.cmd("a")
        .args(["config", "set", "remote.url", &url])
        .assert()
        .success();
    let listed = m.run(m.cmd("a"), &["--json", "list", "--remote"]);
    assert!(listed.contains(&id), "{listed}");

    let unreachable = "host=/nonexistent/socket/dir port=1 dbname=x";
    let stderr = fails_with(m.cmd("a"), &["push", "--remote", unreachable], 8);
    assert!(stderr.contains("/nonexistent/socket/dir"), "{stderr}");
}

fn push_while_another_machine_holds_the_lease_says_busy_with_holder_and_expiry(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    let a = m.store("a");
    let id = session(&a, 2);
    let other = m.remote(&m.store("b"), "ci-runner-7");
    let lease = other.acquire(&id).expect("acquire");

    let stderr = m.fails("a", &["push", &id], 4);
    assert!(stderr.contains("ci-runner-7"), "{stderr}");
    assert!(stderr.contains("until 20"), "{stderr}");
    assert!(stderr.contains("pushed 0 of 1 sessions"), "{stderr}");

    other.release(&lease).expect("release");
    m.ok("a", &["push", &id]);
}

fn follow_prints_exactly_the_lines_pushed_after_its_start_in_order(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    let a = m.store("a");
    let id = session(&a, 2);
    let ra = m.remote(&a, "laptop");
    let start = ra.push(&a, &id).expect("push").to;

    // A follower with no idle limit: each round is pushed once the one before
    // came out of it, so no wait of the test depends on how fast the machine
    // is. It ends when the test has seen every line.
    let mut follower = m
        .process("b")
        .args(["follow", &id, "--remote", &url])
        .args(["--from", &start.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn follow");
    let mut stdout = follower.stdout.take().expect("stdout");
    let (chunks, printed) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        loop {
            match std::io::Read::read(&mut stdout, &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if chunks.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut out = Vec::new();
    for round in 0..3 {
        for i in 0..=round {
            append(&a, &id, &format!("round {round} line {i}"));
        }
        ra.push(&a, &id).expect("push");
        let want = m.log("a", &id)[start as usize..].to_vec();
        let deadline = Instant::now() + Duration::from_secs(60);
        while out.len() < want.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            match printed.recv_timeout(left) {
                Ok(chunk) => out.extend(chunk),
                Err(e) => panic!(
                    "round {round}: the follower printed {:?} in 60 s ({e})",
                    String::from_utf8_lossy(&out)
                ),
            }
        }
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want),
            "round {round}"
        );
    }
    follower.kill().expect("stop the follower");
    follower.wait().expect("reap");
    reader.join().expect("reader");
    out.extend(printed.try_iter().flatten());
    let log = m.log("a", &id);
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&log[start as usize..])
    );
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 6);

    // --until-idle ends a follow once nothing more comes, with success: from
    // the same start, the same lines, each once, then the end.
    let idle = m
        .process("b")
        .args(["follow", &id, "--until-idle", "1", "--remote", &url])
        .args(["--from", &start.to_string()])
        .output()
        .expect("follow --until-idle");
    assert!(
        idle.status.success(),
        "{}",
        String::from_utf8_lossy(&idle.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&idle.stdout),
        String::from_utf8_lossy(&log[start as usize..])
    );
}

/// The digests of the blobs in a store, from their paths (`blobs/<hh>/<rest>`).
fn blob_digests(store: &Store) -> Vec<String> {
    let mut found = Vec::new();
    for dir in std::fs::read_dir(store.dir().join("blobs")).expect("blobs dir") {
        let dir = dir.expect("entry").path();
        for f in std::fs::read_dir(&dir).expect("blob dir") {
            let name = f.expect("entry").file_name().to_string_lossy().into_owned();
            let hh = dir
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            found.push(format!("{hh}{name}"));
        }
    }
    found
}

fn remote_pushed(m: &Machines, id: &str) -> u64 {
    let listed = m.json("b", &["list", "--remote"]);
    listed
        .as_array()
        .and_then(|l| l.iter().find(|s| s["id"] == json!(id)))
        .and_then(|s| s["pushedBytes"].as_u64())
        .unwrap_or(0)
}

fn a_push_killed_half_way_resumes_without_losing_or_duplicating_bytes(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    let a = m.store("a");
    // Three batches of small lines, then a line naming a blob, then more lines.
    let id = session(&a, 0);
    let s = a.open_session(&id).expect("open");
    let line = "y".repeat(100 * 1024);
    for i in 0..30 {
        s.append(json!({"role": "user", "content": format!("{i} {line}")}))
            .expect("append");
    }
    let before_blob = std::fs::metadata(a.dir().join(format!("{id}.jsonl")))
        .expect("log")
        .len();
    let big = format!("{} {}", m.tmp.path().display(), "z".repeat(300 * 1024));
    s.append(json!({"role": "tool", "content": big}))
        .expect("append");
    for i in 0..5 {
        s.append(json!({"role": "assistant", "content": format!("after {i}")}))
            .expect("append");
    }
    drop(s);
    let digests = blob_digests(&a);
    assert_eq!(digests.len(), 1, "{digests:?}");

    // Hold the blob's row uncommitted: the push blocks uploading it, after the
    // batches before it committed.
    let mut db = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let mut tx = db.transaction().expect("begin");
    // The schema exists before the row is locked.
    Remote::connect(
        &a,
        RemoteOptions {
            url: Some(url.clone()),
            ..RemoteOptions::default()
        },
    )
    .expect("migrate");
    tx.execute(
        "INSERT INTO sessionkit_blobs (sha256, bytes) VALUES ($1, '') ON CONFLICT DO NOTHING",
        &[&digests[0]],
    )
    .expect("lock the blob row");

    let mut push = m
        .process("a")
        .args(["push", &id, "--holder", "laptop", "--remote", &url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn push");
    // Until the push waits on that row: the server says so (the push's
    // backend is blocked by this transaction's). The batches before the blob
    // are in by then.
    let holder: i32 = tx
        .query_one("SELECT pg_backend_pid()", &[])
        .expect("this backend's pid")
        .get(0);
    let mut watch = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let blocked: bool = watch
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND $1 = ANY(pg_blocking_pids(pid)))",
                &[&holder],
            )
            .expect("the server's locks")
            .get(0);
        if blocked {
            break;
        }
        assert_eq!(
            push.try_wait().expect("push state"),
            None,
            "the push ended before it reached the blob"
        );
        assert!(
            Instant::now() < deadline,
            "in 120 s the push did not reach the blob"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = remote_pushed(&m, &id);
    assert_eq!(
        push.try_wait().expect("push state"),
        None,
        "the push is blocked"
    );
    push.kill().expect("SIGKILL the push");
    push.wait().expect("reap");
    tx.rollback().expect("rollback");
    let full = m.log("a", &id);
    assert!(
        seen > 0 && seen <= before_blob,
        "{seen} pushed, the blob's line starts at {before_blob}"
    );

    // The same holder retries at once (its lease is its own) and finishes.
    let retry = [
        "--json", "push", &id, "--holder", "laptop", "--remote", &url,
    ];
    let report: Value = serde_json::from_str(&m.run(m.cmd("a"), &retry)).expect("json");
    assert_eq!(report[0]["from"], json!(seen));
    assert_eq!(report[0]["to"], json!(full.len()));
    assert_eq!(remote_pushed(&m, &id), full.len() as u64);

    m.ok("b", &["pull", &id]);
    assert_eq!(m.log("b", &id), full);
    let shown = m.ok("b", &["show", &id, "--full"]);
    assert!(shown.contains("zzzz"), "the blob came along");
}

fn a_line_over_the_remote_limit_is_refused_after_the_lines_before_it(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    let a = m.store("a");
    let id = session(&a, 2);
    let path = a.dir().join(format!("{id}.jsonl"));
    let before = std::fs::metadata(&path).expect("log").len();
    // Written behind the library's back: appends extract big payloads to blobs,
    // so only a foreign writer makes such a line.
    let mut huge = format!("{{\"role\":\"tool\",\"content\":\"{}", "h".repeat(64 << 20));
    huge.push_str("\"}\n");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open log");
    std::io::Write::write_all(&mut f, huge.as_bytes()).expect("write");
    drop(f);
    drop(huge);

    let stderr = m.fails("a", &["push", &id], 6);
    assert!(
        stderr.contains("longer than the remote accepts"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("at byte {before}")), "{stderr}");
    assert_eq!(remote_pushed(&m, &id), before);
}

fn hostile_ids_are_refused_and_nothing_is_written_outside_the_home(pg: &TestServer) {
    let url = pg.url.clone();
    let m = Machines::new(&url);
    session(&m.store("a"), 1);
    for id in ["../escape", "/etc/passwd", "blobs", "a/b", "..", ""] {
        m.fails("b", &["pull", id], 6);
        m.fails("b", &["follow", id, "--until-idle", "1"], 6);
        let out = m
            .cmd("a")
            .env("SESSIONKIT_REMOTE", &url)
            .args(["push", id])
            .output()
            .expect("run");
        assert!(!out.status.success(), "push {id:?} succeeded");
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(m.tmp.path())
        .expect("tmp")
        .map(|e| e.expect("entry").path())
        .collect();
    let names: Vec<&str> = entries
        .iter()
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()))
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["home-a", "home-b", "project"]);
    assert!(!Path::new(&m.root()).join("escape.jsonl").exists());
}

/// Machine A keeps the project at `<tmp>/home/a/src/x`, machine B at
/// `<tmp>/Users/b/code/x`: `pull --map-path OLD=NEW` on B finds what A pushed
/// and lands it in B's project, byte for byte; a bad mapping is refused.
fn pull_with_map_path_brings_a_session_pushed_from_another_path(pg: &TestServer) {
    let m = Machines::new(&pg.url);
    let a_src = m.tmp.path().join("home/a/src");
    let b_code = m.tmp.path().join("Users/b/code");
    let on = |machine: &str, root: &Path| {
        std::fs::create_dir_all(root).expect("project dir");
        let mut c = Command::cargo_bin("sessionkit").expect("binary");
        c.env_remove("SESSIONKIT_HOME")
            .env("SESSIONKIT_REMOTE", &m.url)
            .env("NO_COLOR", "1")
            .arg("--home")
            .arg(m.home(machine))
            .arg("--project")
            .arg(root);
        c
    };
    // The store of a project as the machine whose home it is opens it.
    let open = |machine: &str, dir: PathBuf| {
        let options = StoreOptions {
            home: Some(m.home(machine)),
            ..StoreOptions::default()
        };
        Store::open(dir, options).unwrap_or_else(|e| panic!("open {machine}'s store: {e}"))
    };
    std::fs::create_dir_all(a_src.join("x")).expect("project dir");
    let a = open("a", a_src.join("x"));
    let id = session(&a, 2);
    m.run(on("a", &a_src.join("x")), &["push", &id]);

    // Without the mapping B's project has another name: nothing to pull.
    fails_with(on("b", &b_code.join("x")), &["pull", &id], 3);
    let map = format!("{}={}", a_src.display(), b_code.display());
    let out = m.run(
        on("b", &b_code.join("x")),
        &["--json", "pull", &id, "--map-path", &map],
    );
    let pulled: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(pulled["from"], json!(0));
    let b = open("b", b_code.join("x"));
    let log = |s: &Store| std::fs::read(s.dir().join(format!("{id}.jsonl"))).expect("log");
    assert_eq!(log(&b), log(&a));
    assert_eq!(b.session_entry(&id).expect("in B").title, "message 0");

    let stderr = fails_with(
        on("b", &b_code.join("x")),
        &["pull", &id, "--map-path", "home/a=/x"],
        6,
    );
    assert!(
        stderr.contains("path mapping") && stderr.contains("not an absolute path"),
        "{stderr}"
    );
}
