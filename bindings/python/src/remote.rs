//! `Remote`: a project's sessions shared through PostgreSQL
//! (docs/DISTRIBUTED.md), bound to the store it pushes from and pulls into.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sessionkit::{Lease, RemoteOptions};

use crate::store::{options, Store};
use crate::{arg_seconds, arg_str, detach, dumps, error, invalid, opt_int, to_py};

/// A remote: its connection, dropped on `close`.
#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Remote {
    remote: RwLock<Option<sessionkit::Remote>>,
    store: sessionkit::Store,
    project: String,
    holder: String,
}

fn lease(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Lease> {
    Lease::from_json(&dumps(py, value, "lease")?).map_err(|e| error(py, &e))
}

impl Remote {
    /// Run `f` on the open remote with the GIL released.
    fn call<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&sessionkit::Remote) -> sessionkit::Result<R> + Send,
    ) -> PyResult<R> {
        match py.detach(|| self.remote.read().as_ref().map(f)) {
            Some(r) => r.map_err(|e| error(py, &e)),
            None => Err(invalid(
                py,
                format!("the remote of project {} is closed", self.project),
            )),
        }
    }
}

#[pymethods]
impl Remote {
    #[new]
    #[pyo3(signature = (store, options=None))]
    fn new(
        py: Python<'_>,
        store: &Bound<'_, Store>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Remote> {
        let opts = self::options(py, options, "options", RemoteOptions::from_json)?;
        let store = store.get().open(py)?.clone();
        let remote = detach(py, || sessionkit::Remote::connect(&store, opts))?;
        Ok(Remote {
            project: remote.project().to_string(),
            holder: remote.holder().to_string(),
            remote: RwLock::new(Some(remote)),
            store,
        })
    }

    #[getter]
    fn project(&self) -> &str {
        &self.project
    }

    #[getter]
    fn holder(&self) -> &str {
        &self.holder
    }

    #[getter]
    fn closed(&self) -> bool {
        self.remote.read().is_none()
    }

    /// Close the connection (waiting for calls in flight); closing twice does
    /// nothing. Followers and background pushes have their own connections.
    fn close(&self, py: Python<'_>) {
        let taken = py.detach(|| self.remote.write().take());
        drop(taken);
    }

    fn schema_version(&self, py: Python<'_>) -> PyResult<i64> {
        self.call(py, |r| r.schema_version())
    }

    fn list(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = self.call(py, |r| r.list())?;
        to_py(py, &v)
    }

    fn acquire(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, session_id, "session_id")?;
        let v = self.call(py, |r| r.acquire(&id))?;
        to_py(py, &v)
    }

    fn renew(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let l = self::lease(py, lease)?;
        let v = self.call(py, |r| r.renew(&l))?;
        to_py(py, &v)
    }

    fn release(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<()> {
        let l = self::lease(py, lease)?;
        self.call(py, |r| r.release(&l))
    }

    #[pyo3(signature = (session_id, lease=None))]
    fn push(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        lease: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, session_id, "session_id")?;
        let l = lease
            .filter(|l| !l.is_none())
            .map(|l| self::lease(py, l))
            .transpose()?;
        let v = self.call(py, |r| match &l {
            Some(l) => r.push_with(&self.store, &id, l),
            None => r.push(&self.store, &id),
        })?;
        to_py(py, &v)
    }

    #[pyo3(signature = (session_id, start=None))]
    fn follow(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        start: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Follower> {
        let id = arg_str(py, session_id, "session_id")?;
        let start: Option<u64> = opt_int(py, start, "start")?;
        let f = self.call(py, |r| r.follow(&id, start))?;
        Ok(Follower {
            offset: AtomicU64::new(f.offset()),
            follower: Mutex::new(Some(f)),
            closed: AtomicBool::new(false),
            session_id: id,
        })
    }

    fn push_in_background(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        interval: &Bound<'_, PyAny>,
    ) -> PyResult<BackgroundPush> {
        let id = arg_str(py, session_id, "session_id")?;
        let every = arg_seconds(py, interval, "interval")?;
        let pusher = self.call(py, |r| r.push_in_background(&self.store, &id, every))?;
        Ok(BackgroundPush {
            pusher,
            stopped: AtomicBool::new(false),
        })
    }

    fn pull(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, session_id, "session_id")?;
        let v = self.call(py, |r| r.pull(&self.store, &id))?;
        to_py(py, &v)
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!(
            "<sessionkit Remote project={:?} holder={:?} ({state})>",
            self.project, self.holder
        )
    }
}

/// A session followed as others push it (the core's `Follower`). The offset
/// is kept apart from the follower, so reading it never waits for a
/// `next_lines` in flight.
#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Follower {
    follower: Mutex<Option<sessionkit::Follower>>,
    offset: AtomicU64,
    closed: AtomicBool,
    session_id: String,
}

#[pymethods]
impl Follower {
    #[getter]
    fn offset(&self) -> u64 {
        self.offset.load(Ordering::Acquire)
    }

    #[getter]
    fn session_id(&self) -> &str {
        &self.session_id
    }

    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The lines pushed past the offset, each as its bytes with its newline,
    /// waiting up to `timeout` seconds for some (with the GIL released).
    fn next_lines<'py>(
        &self,
        py: Python<'py>,
        timeout: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let wait = arg_seconds(py, timeout, "timeout")?;
        let lines = py.detach(|| {
            let mut f = self.follower.lock();
            f.as_mut().map(|f| {
                let lines = f.next_lines(wait);
                self.offset.store(f.offset(), Ordering::Release);
                lines
            })
        });
        match lines {
            Some(lines) => {
                let lines = lines.map_err(|e| error(py, &e))?;
                Ok(lines.iter().map(|l| PyBytes::new(py, l)).collect())
            }
            None => Err(invalid(
                py,
                format!("the follower of session {} is closed", self.session_id),
            )),
        }
    }

    /// Close the follower's connection (after a `next_lines` in flight
    /// returns); closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Release);
        let taken = py.detach(|| self.follower.lock().take());
        drop(taken);
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!(
            "<sessionkit Follower of session {} at byte {} ({state})>",
            self.session_id,
            self.offset()
        )
    }
}

/// A session pushed in the background (the core's `BackgroundPush`).
#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct BackgroundPush {
    pusher: sessionkit::BackgroundPush,
    stopped: AtomicBool,
}

#[pymethods]
impl BackgroundPush {
    #[getter]
    fn pushed(&self) -> u64 {
        self.pusher.pushed()
    }

    #[getter]
    fn session_id(&self) -> &str {
        self.pusher.session_id()
    }

    #[getter]
    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    fn flush(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = detach(py, || self.pusher.flush())?;
        to_py(py, &v)
    }

    fn stop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.stopped.store(true, Ordering::Release);
        let v = detach(py, || self.pusher.stop())?;
        to_py(py, &v)
    }

    fn __repr__(&self) -> String {
        let state = if self.stopped() { "stopped" } else { "running" };
        format!(
            "<sessionkit BackgroundPush of session {} pushed={} ({state})>",
            self.pusher.session_id(),
            self.pusher.pushed()
        )
    }
}
