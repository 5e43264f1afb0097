//! The PostgreSQL server the test suites share (`tests/pg/server.sh`), as
//! `tests/run-all.sh` names it in the environment, and what a test that needs
//! it does without it: with `SESSIONKIT_REQUIRE_PG=1` (the test command
//! exports it) it fails; otherwise it is reported as skipped, never as passed.
//! The Python and Node suites follow the same rule (`tests/python/conftest.py`,
//! `tests/node/helpers.mjs`), and so does the C suite.

use std::path::PathBuf;

/// The server's libpq connection string.
pub const URL_VAR: &str = "SESSIONKIT_TEST_PG";
/// The server's directory, for `tests/pg/server.sh pause` and `resume` and for
/// the certificates of a server started with `--tls`.
pub const DIR_VAR: &str = "SESSIONKIT_TEST_PG_DIR";
/// `1`: a test that finds no server fails instead of being skipped.
pub const REQUIRE_VAR: &str = "SESSIONKIT_REQUIRE_PG";

/// What of the server a test needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A connection string.
    Server,
    /// Also its directory, to stop and start it again.
    Outage,
    /// Also its certificates: a server started with `--tls`.
    Tls,
}

/// The server a test runs against.
#[derive(Debug, Clone)]
pub struct TestServer {
    /// Its libpq connection string.
    pub url: String,
    /// Its directory, when the environment names it.
    pub dir: Option<PathBuf>,
}

/// Why a test cannot run: skipped, or (server required) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Absent {
    /// Report the test as skipped, saying why.
    Skip(String),
    /// Fail the test with this message.
    Fail(String),
}

/// The server for a test that needs `need`, or what to do without it.
pub fn test_server(need: Need) -> Result<TestServer, Absent> {
    let url = std::env::var(URL_VAR).ok().filter(|u| !u.is_empty());
    let dir = std::env::var_os(DIR_VAR)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let Some(url) = url else {
        return Err(absent(format!(
            "{URL_VAR} is not set (tests/pg/server.sh starts a server; tests/run-all.sh sets it)"
        )));
    };
    match (&dir, need) {
        (None, Need::Outage | Need::Tls) => Err(absent(format!(
            "{DIR_VAR} is not set (this test stops the server or reads its certificates; tests/run-all.sh sets it)"
        ))),
        (Some(d), Need::Tls) if !d.join("tls").join("ca.crt").exists() => Err(absent(format!(
            "the test server in {} was not started with --tls (tests/run-all.sh starts it so)",
            d.display()
        ))),
        _ => Ok(TestServer { url, dir }),
    }
}

/// Whether `SESSIONKIT_REQUIRE_PG` asks for the server: `1` yes; unset, empty
/// or `0` no; anything else is refused, naming the value.
pub fn required() -> Result<bool, String> {
    match std::env::var(REQUIRE_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(false),
        Ok(v) if v.is_empty() || v == "0" => Ok(false),
        Ok(v) if v == "1" => Ok(true),
        Ok(v) => Err(format!("{REQUIRE_VAR} must be 1 or 0, not {v:?}")),
        Err(e) => Err(format!("{REQUIRE_VAR} is not valid: {e}")),
    }
}

fn absent(why: String) -> Absent {
    match required() {
        Ok(false) => Absent::Skip(why),
        Ok(true) => Absent::Fail(format!("{REQUIRE_VAR}=1, and {why}")),
        Err(e) => Absent::Fail(e),
    }
}
