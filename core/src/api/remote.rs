//! The public [`Remote`] handle: a project's sessions shared through PostgreSQL
//! (docs/DISTRIBUTED.md). Each method delegates to the `remote` layer.

use std::time::Duration;

use parking_lot::Mutex;
use serde::Deserialize;

use crate::api::Store;
use crate::error::{Error, Result};
use crate::remote::{
    self, BackgroundPush, Connection, Follower, Lease, PullReport, PushReport, RemoteSession,
};
use crate::settings::SettingsOptions;

/// Where and as whom to share: every field has a default. As JSON (the
/// bindings' form): `{"url", "project", "holder", "leaseTtlMs", "mapPaths"}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoteOptions {
    /// A libpq connection string (`host=… dbname=…` or a `postgresql://` URI);
    /// default: the environment variable `SESSIONKIT_REMOTE`, else the setting
    /// `remote.url` (docs/SETTINGS.md).
    pub url: Option<String>,
    /// The name the project's sessions share on the remote; default: the
    /// store's project code. Machines whose checkouts sit at different paths
    /// set the same name here to share.
    pub project: Option<String>,
    /// Who takes leases (shown to others who get `Busy`); default:
    /// `<host name>:<process id>`. 1 to 200 bytes, no control character.
    pub holder: Option<String>,
    /// How long a lease lasts unless renewed; default 60 s, at most a day.
    #[serde(rename = "leaseTtlMs", default, deserialize_with = "millis")]
    pub lease_ttl: Option<Duration>,
    /// Where this project sat on the machines that share it, when that differs
    /// and `project` is not given: the default name is then the project code
    /// of this store's root with the longest `to` prefix (whole components)
    /// replaced by its `from`. With `{"from": "/home/a/src", "to":
    /// "/Users/b/code"}` the store of `/Users/b/code/x` shares the sessions
    /// pushed from `/home/a/src/x`. As JSON a list of `{"from", "to"}`, as
    /// for an import.
    #[serde(default)]
    pub map_paths: Vec<crate::format::project::PathMapping>,
}

impl RemoteOptions {
    /// Parse options from a JSON object; empty text gives the defaults. Fails
    /// with `InvalidInput` on unknown fields or bad values.
    pub fn from_json(json: &str) -> Result<RemoteOptions> {
        crate::format::json::options_from_json("remote options", json)
    }
}

fn millis<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Duration>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
}

/// The longest lease: a holder that vanished keeps others out this long.
const MAX_LEASE_TTL: Duration = Duration::from_secs(24 * 3600);

/// A connection to the shared database for one project. Safe to share between
/// threads (calls take turns on the one connection).
pub struct Remote {
    conn: Mutex<Connection>,
    /// Kept for the extra connection a follower listens on.
    url: String,
    project: String,
    holder: String,
    ttl: Duration,
}

// By hand: the connection string may hold a password.
impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("conn", &self.conn)
            .field("project", &self.project)
            .field("holder", &self.holder)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// Connect for the project of `store`, creating or migrating the schema.
    /// Fails with `InvalidInput` when no connection string is given or set
    /// (in the options, `SESSIONKIT_REMOTE` or the `remote.url` setting), or
    /// when the project or holder name is empty, over 200 bytes or holds a
    /// control character (NUL included), or a path mapping is not two
    /// absolute paths,
    /// `Io` when the server cannot be reached (the message names it), and
    /// `Unsupported` when its schema is newer than this library.
    pub fn connect(store: &Store, options: RemoteOptions) -> Result<Remote> {
        crate::format::project::check_mappings("remote options: mapPaths", &options.map_paths)?;
        let url = match options.url {
            Some(u) => u,
            None => remote_url(store)?,
        };
        let project = options.project.unwrap_or_else(|| {
            match crate::format::project::unmap_path(&options.map_paths, store.core.project_root())
            {
                Some(there) => crate::format::project::project_code(&there),
                None => store.core.project_code().to_string(),
            }
        });
        if project.is_empty() || project.len() > 200 {
            return Err(Error::InvalidInput(format!(
                "remote project name must be 1 to 200 bytes, not {} bytes",
                project.len()
            )));
        }
        let holder = options.holder.unwrap_or_else(default_holder);
        if holder.is_empty() || holder.len() > 200 {
            return Err(Error::InvalidInput(format!(
                "lease holder name must be 1 to 200 bytes, not {} bytes",
                holder.len()
            )));
        }
        // The database stores no NUL, and both names are shown to other
        // machines' users (a holder in every `Busy` message): no control
        // characters either.
        for (what, name) in [
            ("remote project name", &project),
            ("lease holder name", &holder),
        ] {
            if let Some(at) = name.find(char::is_control) {
                return Err(Error::InvalidInput(format!(
                    "{what} {name:?} holds a NUL or another control character at byte {at}"
                )));
            }
        }
        let ttl = options.lease_ttl.unwrap_or(remote::DEFAULT_LEASE_TTL);
        if ttl.is_zero() || ttl > MAX_LEASE_TTL {
            return Err(Error::InvalidInput(format!(
                "lease time must be from 1 ms to 24 h, not {} ms",
                ttl.as_millis()
            )));
        }
        Ok(Remote {
            conn: Mutex::new(Connection::open(&url)?),
            url,
            project,
            holder,
            ttl,
        })
    }

    /// The project name the sessions are shared under.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// Who this handle takes leases as.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The schema version of the database (after migration: this library's).
    pub fn schema_version(&self) -> Result<i64> {
        self.conn.lock().schema_version()
    }

    /// The project's sessions on the remote, by id, with their index entries.
    pub fn list(&self) -> Result<Vec<RemoteSession>> {
        self.conn.lock().list(&self.project)
    }

    /// Take the lease of session `id`: `Busy` while another holder's lease has
    /// not expired. Every acquire returns a larger fencing token.
    pub fn acquire(&self, id: &str) -> Result<Lease> {
        self.conn
            .lock()
            .acquire(&self.project, id, &self.holder, self.ttl)
    }

    /// Extend a lease; `Busy` when another holder took it since.
    pub fn renew(&self, lease: &Lease) -> Result<Lease> {
        self.conn.lock().renew(&self.project, lease, self.ttl)
    }

    /// Give a lease back.
    pub fn release(&self, lease: &Lease) -> Result<()> {
        self.conn.lock().release(&self.project, lease)
    }

    /// Push the lines of session `id` that the remote lacks, under `lease`:
    /// `Busy` when the lease was taken over (its lines are refused), `Conflict`
    /// when the local log does not continue the remote one.
    pub fn push_with(&self, store: &Store, id: &str, lease: &Lease) -> Result<PushReport> {
        if lease.session_id != id {
            return Err(Error::InvalidInput(format!(
                "the lease is for session {}, not {id}",
                lease.session_id
            )));
        }
        remote::push(&mut self.conn.lock(), &store.core, &self.project, id, lease)
    }

    /// Push session `id` on demand: take its lease, push, give it back. `Busy`
    /// while another machine holds the lease.
    pub fn push(&self, store: &Store, id: &str) -> Result<PushReport> {
        store.core.log_path(id)?;
        let lease = self.acquire(id)?;
        let pushed = self.push_with(store, id, &lease);
        let released = self.release(&lease);
        let report = pushed?;
        released?;
        Ok(report)
    }

    /// Push session `id` in the background while this process writes it: take
    /// its lease on a connection of its own (`Busy` while another holder has
    /// it), then push what the log gained every `interval` and renew the lease
    /// on time, on a thread of its own, so that an append never waits for the
    /// network. `interval` is from 10 ms to a third of the lease time. Stop it
    /// (or drop it) to push the rest and give the lease back.
    pub fn push_in_background(
        &self,
        store: &Store,
        id: &str,
        interval: Duration,
    ) -> Result<BackgroundPush> {
        BackgroundPush::start(
            &self.url,
            store.core.clone(),
            &self.project,
            id,
            &self.holder,
            self.ttl,
            interval,
        )
    }

    /// Follow session `id` as others push it, from byte `from` of its log (a
    /// line boundary: 0, or the length of a local copy; `None`: where the
    /// remote stands now). The follower listens on a connection of its own for
    /// the push's notification and reads every second when none comes.
    /// `NotFound` when the remote lacks the session.
    pub fn follow(&self, id: &str, from: Option<u64>) -> Result<Follower> {
        remote::check_id(id)?;
        Follower::start(Connection::open(&self.url)?, &self.project, id, from)
    }

    /// Bring the local copy of session `id` up to the remote's: the missing lines
    /// are appended (a session open here for writing is `Busy`), the blobs they
    /// name fetched, the index entry refolded. `NotFound` when the remote lacks
    /// the session or holds no line of it (leased, never pushed: no local log
    /// is made); `Conflict` when the local log is not a prefix of the remote's.
    pub fn pull(&self, store: &Store, id: &str) -> Result<PullReport> {
        remote::pull(&mut self.conn.lock(), &store.core, &self.project, id)
    }
}

/// The remote when no URL is given: `SESSIONKIT_REMOTE`, else the setting
/// `remote.url` of the store's project (a string).
fn remote_url(store: &Store) -> Result<String> {
    if let Some(url) = std::env::var("SESSIONKIT_REMOTE")
        .ok()
        .filter(|u| !u.is_empty())
    {
        return Ok(url);
    }
    let settings = store.settings(&SettingsOptions::default());
    match settings.get("remote.url").map(|v| v.value) {
        Some(serde_json::Value::String(url)) if !url.is_empty() => Ok(url),
        Some(other) => Err(Error::InvalidInput(format!(
            "the setting remote.url must be a connection string, not {other}"
        ))),
        None => Err(Error::InvalidInput(
            "no remote: give a connection string, set SESSIONKIT_REMOTE or the setting remote.url"
                .to_string(),
        )),
    }
}

fn default_holder() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}:{}", std::process::id())
}
