//! Sessions shared through PostgreSQL (docs/DISTRIBUTED.md): the local store stays
//! the fast, offline cache, the database is the truth between machines. This
//! module owns the connection, the schema and its migrations, and the lease;
//! `sync` copies logs and blobs both ways by byte offset.

mod background;
mod follow;
mod sync;
mod tls;

use std::time::Duration;

use postgres::Client;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::IndexEntry;

pub use background::BackgroundPush;
pub use follow::Follower;
pub(crate) use sync::{pull, push};
pub use sync::{PullReport, PushReport};

/// The schema's migrations, in order; the version of the schema is the number
/// of them applied. Each runs once, in the transaction that records it.
const MIGRATIONS: &[&str] = &[
    // 1: sessions with their lease, their log as chunks keyed by byte offset, and
    // the blobs the logs name.
    "CREATE TABLE sessionkit_sessions (
        project text NOT NULL,
        id text NOT NULL,
        entry text,
        pushed bigint NOT NULL DEFAULT 0,
        lease_holder text,
        lease_token bigint NOT NULL DEFAULT 0,
        lease_expires timestamptz,
        PRIMARY KEY (project, id)
    );
    CREATE TABLE sessionkit_log_chunks (
        project text NOT NULL,
        id text NOT NULL,
        byte_offset bigint NOT NULL,
        bytes bytea NOT NULL,
        PRIMARY KEY (project, id, byte_offset),
        FOREIGN KEY (project, id) REFERENCES sessionkit_sessions (project, id)
    );
    CREATE TABLE sessionkit_blobs (
        sha256 text PRIMARY KEY,
        bytes bytea NOT NULL
    );",
];

/// The schema version this library writes and reads.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Serialises migrations between clients connecting at once (a transaction-scoped
/// advisory lock, released at commit): an arbitrary constant of sessionkit's.
const MIGRATION_LOCK: i64 = 0x5e55_1047_0001;

/// A lease's default time to live: a holder that vanished (a killed process, a
/// lost laptop) stops blocking others after this long.
pub(crate) use crate::options::DEFAULT_LEASE_TTL;

/// The biggest batch of log bytes one push transaction sends (whole lines; a
/// longer single line goes alone, up to [`MAX_LINE_BYTES`]).
pub(crate) const BATCH_BYTES: usize = 1 << 20;

/// The longest log line the remote accepts: a message line is at most
/// `maxRecordBytes` (4 MiB by default) after blob extraction, and a host may set
/// that higher; past 64 MiB it is not a session line but an accident.
pub(crate) const MAX_LINE_BYTES: usize = 64 << 20;

/// How often a follower reads the session when no notification woke it: the
/// fallback for a NOTIFY that never arrives (a pooler in transaction mode, a
/// read replica), and the longest such a follower lags.
pub(crate) const FOLLOW_POLL: Duration = Duration::from_secs(1);

/// An open connection to the shared database, with the schema checked.
pub(crate) struct Connection {
    client: Client,
    /// Where it connects, without credentials, for error messages.
    target: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("target", &self.target)
            .finish()
    }
}

/// A remote session as listed: its id, how many bytes of its log the database
/// holds, its index entry as last pushed, and who holds its lease.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteSession {
    /// The session id.
    pub id: String,
    /// Bytes of the log the database holds.
    pub pushed_bytes: u64,
    /// The index entry pushed with the log (`None` before the first push).
    pub entry: Option<IndexEntry>,
    /// The lease holder, when a lease is held and not expired.
    pub lease_holder: Option<String>,
}

/// A lease on a session: while held (until `expires_ms`), no other holder can
/// push lines to it. `token` is the fencing token, larger at every acquire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lease {
    /// The session id.
    pub session_id: String,
    /// Who holds it (a name per machine and process, chosen by the host).
    pub holder: String,
    /// The fencing token: every push carries it and the database refuses a stale one.
    pub token: i64,
    /// When it expires, in milliseconds since the Unix epoch (the database's clock).
    pub expires_ms: i64,
}

impl Lease {
    /// A lease as the bindings hand it back (the JSON of one taken before).
    pub fn from_json(json: &str) -> Result<Lease> {
        crate::format::json::object_from_json("lease", json)
    }
}

impl Connection {
    /// Connect with a libpq connection string (`host=… dbname=…` or a
    /// `postgresql://` URI, with libpq's `sslmode` and `sslrootcert`) and
    /// create or migrate the schema.
    pub(crate) fn open(url: &str) -> Result<Connection> {
        let split = tls::split(url)?;
        let mut config: postgres::Config = split.rest.parse().map_err(|e| {
            Error::InvalidInput(format!(
                "remote connection string is not valid: {}",
                with_causes(&e)
            ))
        })?;
        let (mode, connector) = tls::connector(&split, &mut config)?;
        let target = describe(&config);
        let client = config.connect(connector).map_err(|e| {
            // The server's refusal of a plain connection says "no encryption":
            // say which setting caused it.
            let refused = mode == tls::Mode::Disable
                && e.as_db_error()
                    .is_some_and(|db| db.message().contains("no encryption"));
            let doing = if refused {
                "connecting without TLS (sslmode=disable), which the server refuses".to_string()
            } else {
                format!("connecting (sslmode={})", mode.name())
            };
            remote_error(&target, &doing, e)
        })?;
        let mut c = Connection { client, target };
        c.migrate()?;
        Ok(c)
    }

    fn fail(&self, doing: &str, e: postgres::Error) -> Error {
        remote_error(&self.target, doing, e)
    }

    fn migrate(&mut self) -> Result<()> {
        let target = self.target.clone();
        let err = |doing: &str, e| remote_error(&target, doing, e);
        let mut tx = self
            .client
            .transaction()
            .map_err(|e| err("migrating the schema", e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(|e| err("locking the schema", e))?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS sessionkit_schema (version bigint PRIMARY KEY)",
        )
        .map_err(|e| err("creating the schema table", e))?;
        let found: i64 = tx
            .query_one(
                "SELECT coalesce(max(version), 0) FROM sessionkit_schema",
                &[],
            )
            .map_err(|e| err("reading the schema version", e))?
            .get(0);
        if found > SCHEMA_VERSION {
            return Err(Error::Unsupported(format!(
                "the remote {target} has schema version {found}; this sessionkit knows up to {SCHEMA_VERSION}"
            )));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            let version = i as i64 + 1;
            tx.batch_execute(sql)
                .map_err(|e| err(&format!("applying schema migration {version}"), e))?;
            tx.execute(
                "INSERT INTO sessionkit_schema (version) VALUES ($1)",
                &[&version],
            )
            .map_err(|e| err("recording the schema version", e))?;
        }
        tx.commit().map_err(|e| err("committing the schema", e))
    }

    /// The schema version the database holds.
    pub(crate) fn schema_version(&mut self) -> Result<i64> {
        let row = self
            .client
            .query_one(
                "SELECT coalesce(max(version), 0) FROM sessionkit_schema",
                &[],
            )
            .map_err(|e| self.fail("reading the schema version", e))?;
        Ok(row.get(0))
    }

    /// The sessions of a project the database holds, by id: those with
    /// pushed lines, and those leased for a first push (a lease taken and
    /// given back before any push leaves nothing to list).
    pub(crate) fn list(&mut self, project: &str) -> Result<Vec<RemoteSession>> {
        let rows = self
            .client
            .query(
                "SELECT id, pushed, entry,
                        CASE WHEN lease_expires > now() THEN lease_holder END
                 FROM sessionkit_sessions
                 WHERE project = $1 AND (pushed > 0 OR lease_expires > now())
                 ORDER BY id",
                &[&project],
            )
            .map_err(|e| self.fail(&format!("listing the sessions of project {project}"), e))?;
        rows.iter()
            .map(|r| {
                let id: String = r.get(0);
                let entry: Option<String> = r.get(2);
                let entry = match entry {
                    Some(text) => Some(serde_json::from_str(&text).map_err(|e| {
                        Error::Corrupt(format!(
                            "the index entry of remote session {id} in {} is not valid: {e}",
                            self.target
                        ))
                    })?),
                    None => None,
                };
                Ok(RemoteSession {
                    pushed_bytes: r.get::<_, i64>(1) as u64,
                    lease_holder: r.get(3),
                    entry,
                    id,
                })
            })
            .collect()
    }

    /// Take the lease of a session for `holder`, for `ttl`. Held by another
    /// holder and not expired: `Busy`. Held by `holder` already: renewed with a
    /// new token (an acquire always fences off what came before).
    pub(crate) fn acquire(
        &mut self,
        project: &str,
        id: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Lease> {
        check_id(id)?;
        let ttl_ms = ttl.as_millis().min(i64::MAX as u128) as i64;
        let target = self.target.clone();
        let err = |e| remote_error(&target, &format!("taking the lease of session {id}"), e);
        let mut tx = self.client.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO sessionkit_sessions (project, id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&project, &id],
        )
        .map_err(err)?;
        let row = tx
            .query_one(
                "SELECT lease_holder, lease_expires > now(),
                        to_char(lease_expires AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
                 FROM sessionkit_sessions WHERE project = $1 AND id = $2 FOR UPDATE",
                &[&project, &id],
            )
            .map_err(err)?;
        let current: Option<String> = row.get(0);
        let live: Option<bool> = row.get(1);
        if let (Some(other), Some(true)) = (&current, live) {
            if other != holder {
                let until: String = row.get(2);
                return Err(Error::Busy(format!(
                    "session {id} is leased by {other} until {until} on the remote {target}"
                )));
            }
        }
        let row = tx
            .query_one(
                "UPDATE sessionkit_sessions
                 SET lease_holder = $3, lease_token = lease_token + 1,
                     lease_expires = now() + $4 * interval '1 millisecond'
                 WHERE project = $1 AND id = $2
                 RETURNING lease_token, (extract(epoch from lease_expires) * 1000)::bigint",
                &[&project, &id, &holder, &(ttl_ms as f64)],
            )
            .map_err(err)?;
        let lease = Lease {
            session_id: id.to_string(),
            holder: holder.to_string(),
            token: row.get(0),
            expires_ms: row.get(1),
        };
        tx.commit().map_err(err)?;
        Ok(lease)
    }

    /// Extend a lease that is still this holder's (same token): `Busy` when
    /// another holder took it since.
    pub(crate) fn renew(&mut self, project: &str, lease: &Lease, ttl: Duration) -> Result<Lease> {
        let ttl_ms = ttl.as_millis().min(i64::MAX as u128) as f64;
        let row = self
            .client
            .query_opt(
                "UPDATE sessionkit_sessions
                 SET lease_expires = now() + $4 * interval '1 millisecond'
                 WHERE project = $1 AND id = $2 AND lease_token = $3 AND lease_holder IS NOT NULL
                 RETURNING (extract(epoch from lease_expires) * 1000)::bigint",
                &[&project, &lease.session_id, &lease.token, &ttl_ms],
            )
            .map_err(|e| {
                self.fail(
                    &format!("renewing the lease of session {}", lease.session_id),
                    e,
                )
            })?;
        match row {
            Some(r) => Ok(Lease {
                expires_ms: r.get(0),
                ..lease.clone()
            }),
            None => Err(lost_lease(&self.target, lease)),
        }
    }

    /// Give a lease back (nothing happens when it was lost already).
    pub(crate) fn release(&mut self, project: &str, lease: &Lease) -> Result<()> {
        self.client
            .execute(
                "UPDATE sessionkit_sessions SET lease_holder = NULL, lease_expires = NULL
                 WHERE project = $1 AND id = $2 AND lease_token = $3",
                &[&project, &lease.session_id, &lease.token],
            )
            .map_err(|e| {
                self.fail(
                    &format!("releasing the lease of session {}", lease.session_id),
                    e,
                )
            })?;
        Ok(())
    }
}

/// A session id the remote takes: the rule a local log's name follows, since a
/// remote session is one that can be pulled anywhere.
pub(crate) fn check_id(id: &str) -> Result<()> {
    crate::format::layout::Layout::new(std::path::PathBuf::new()).log_path(id)?;
    Ok(())
}

fn lost_lease(target: &str, lease: &Lease) -> Error {
    Error::Busy(format!(
        "the lease of session {} (token {}) held by {} was taken over on the remote {target}",
        lease.session_id, lease.token, lease.holder
    ))
}

/// Where a configuration connects, for messages: hosts, port and database,
/// never the password.
fn describe(config: &postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let port = config
        .get_ports()
        .first()
        .map_or(String::new(), |p| format!(":{p}"));
    format!(
        "postgresql {}{port}/{}",
        hosts.join(","),
        config.get_dbname().unwrap_or("")
    )
}

/// An error's message with its causes: the driver's own says only what failed
/// ("error performing TLS handshake"), its cause says why.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// A driver error as the library's: a lost or refused connection and server
/// errors are I/O on the remote (the message names it and what was being done).
fn remote_error(target: &str, doing: &str, e: postgres::Error) -> Error {
    let detail = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => with_causes(&e),
    };
    Error::Io {
        path: std::path::PathBuf::from(target),
        source: std::io::Error::other(format!("{doing}: {detail}")),
    }
}
