//! Follow: the lines of a session as another machine pushes them, woken by the
//! push's NOTIFY on `sessionkit_lines`, with a poll as the fallback when a
//! notification is lost (a connection pooler, a read replica).

use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;

use super::{Connection, FOLLOW_POLL};
use crate::error::{Error, Result};

/// A session followed from a byte offset on its own connection (LISTEN holds
/// it). Each call to [`Follower::next_lines`] returns the whole lines pushed
/// past the offset, in order, each once.
#[derive(Debug)]
pub struct Follower {
    conn: Connection,
    project: String,
    id: String,
    at: u64,
}

impl Follower {
    /// Listen first, then read where the session stands: a push that lands in
    /// between is both notified and read, never missed.
    pub(crate) fn start(
        mut conn: Connection,
        project: &str,
        id: &str,
        from: Option<u64>,
    ) -> Result<Follower> {
        conn.client
            .batch_execute("LISTEN sessionkit_lines")
            .map_err(|e| conn.fail(&format!("listening for the lines of session {id}"), e))?;
        let pushed = pushed(&mut conn, project, id)?;
        let at = from.unwrap_or(pushed);
        if at > pushed {
            return Err(Error::InvalidInput(format!(
                "cannot follow session {id} from byte {at}: the remote {} holds {pushed} bytes",
                conn.target
            )));
        }
        Ok(Follower {
            conn,
            project: project.to_string(),
            id: id.to_string(),
            at,
        })
    }

    /// The byte offset the next lines start at.
    pub fn offset(&self) -> u64 {
        self.at
    }

    /// The lines pushed past the offset (each with its `\n`), waiting up to
    /// `timeout` for some; an empty list when none came in time.
    pub fn next_lines(&mut self, timeout: Duration) -> Result<Vec<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        loop {
            let lines = self.read_new()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if !lines.is_empty() || left.is_zero() {
                return Ok(lines);
            }
            self.wait(left.min(FOLLOW_POLL))?;
        }
    }

    /// Wait for a notification about this session, or `at_most`.
    fn wait(&mut self, at_most: Duration) -> Result<()> {
        let key = format!("{}/{}", self.project, self.id);
        let deadline = Instant::now() + at_most;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            let next = self.conn.client.notifications().timeout_iter(left).next();
            match next {
                Ok(None) => return Ok(()),
                Ok(Some(n)) if n.payload() == key => return Ok(()),
                Ok(Some(_)) => {}
                Err(e) => {
                    let doing = format!("waiting for the lines of session {}", self.id);
                    return Err(self.conn.fail(&doing, e));
                }
            }
        }
    }

    /// The chunks past the offset, cut into lines.
    fn read_new(&mut self) -> Result<Vec<Vec<u8>>> {
        let (project, id) = (&self.project, &self.id);
        let rows = self
            .conn
            .client
            .query(
                "SELECT byte_offset, bytes FROM sessionkit_log_chunks
                 WHERE project = $1 AND id = $2 AND byte_offset + length(bytes) > $3
                 ORDER BY byte_offset LIMIT 64",
                &[project, id, &(self.at as i64)],
            )
            .map_err(|e| self.conn.fail(&format!("following session {id}"), e))?;
        let mut lines = Vec::new();
        for row in rows {
            let offset = row.get::<_, i64>(0) as u64;
            let bytes: Vec<u8> = row.get(1);
            if offset > self.at {
                return Err(Error::Corrupt(format!(
                    "the remote {} lacks bytes {}..{offset} of session {id}",
                    self.conn.target, self.at
                )));
            }
            let new = &bytes[(self.at - offset) as usize..];
            lines.extend(new.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec));
            self.at += new.len() as u64;
        }
        Ok(lines)
    }
}

/// The bytes of session `id` the remote holds; `NotFound` when it has none.
pub(crate) fn pushed(conn: &mut Connection, project: &str, id: &str) -> Result<u64> {
    let row = conn
        .client
        .query_opt(
            "SELECT pushed FROM sessionkit_sessions WHERE project = $1 AND id = $2",
            &[&project, &id],
        )
        .map_err(|e| conn.fail(&format!("reading session {id}"), e))?;
    match row {
        Some(r) => Ok(r.get::<_, i64>(0) as u64),
        None => Err(Error::NotFound(format!(
            "session {id} of project {project} on the remote {}",
            conn.target
        ))),
    }
}
