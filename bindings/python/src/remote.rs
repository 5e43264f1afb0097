//! `Remote`: a project's sessions shared through PostgreSQL
//! (docs/DISTRIBUTED.md), bound to the store it pushes from and pulls into.

use std::time::Duration;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sessionkit::{Lease, RemoteOptions};

use crate::store::{options, Store};
use crate::{arg_str, detach, dumps, error, invalid, to_py};

#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Remote {
    remote: sessionkit::Remote,
    store: sessionkit::Store,
}

fn lease(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Lease> {
    Lease::from_json(&dumps(py, value, "lease")?).map_err(|e| error(py, &e))
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
        let store = store.get().store.clone();
        let remote = detach(py, || sessionkit::Remote::connect(&store, opts))?;
        Ok(Remote { remote, store })
    }

    #[getter]
    fn project(&self) -> &str {
        self.remote.project()
    }

    #[getter]
    fn holder(&self) -> &str {
        self.remote.holder()
    }

    fn schema_version(&self, py: Python<'_>) -> PyResult<i64> {
        detach(py, || self.remote.schema_version())
    }

    fn list(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = detach(py, || self.remote.list())?;
        to_py(py, &v)
    }

    fn acquire(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, session_id, "session_id")?;
        let v = detach(py, || self.remote.acquire(&id))?;
        to_py(py, &v)
    }

    fn renew(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let l = self::lease(py, lease)?;
        let v = detach(py, || self.remote.renew(&l))?;
        to_py(py, &v)
    }

    fn release(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<()> {
        let l = self::lease(py, lease)?;
        detach(py, || self.remote.release(&l))
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
        let v = detach(py, || match &l {
            Some(l) => self.remote.push_with(&self.store, &id, l),
            None => self.remote.push(&self.store, &id),
        })?;
        to_py(py, &v)
    }

    #[pyo3(signature = (session_id, start=None))]
    fn follow(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        start: Option<u64>,
    ) -> PyResult<Follower> {
        let id = arg_str(py, session_id, "session_id")?;
        let f = detach(py, || self.remote.follow(&id, start))?;
        Ok(Follower {
            follower: Mutex::new(f),
        })
    }

    fn push_in_background(
        &self,
        py: Python<'_>,
        session_id: &Bound<'_, PyAny>,
        interval: f64,
    ) -> PyResult<BackgroundPush> {
        let id = arg_str(py, session_id, "session_id")?;
        let every = seconds(py, interval, "interval")?;
        let pusher = detach(py, || {
            self.remote.push_in_background(&self.store, &id, every)
        })?;
        Ok(BackgroundPush { pusher })
    }

    fn pull(&self, py: Python<'_>, session_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, session_id, "session_id")?;
        let v = detach(py, || self.remote.pull(&self.store, &id))?;
        to_py(py, &v)
    }
}

/// A session followed as others push it (the core's `Follower`).
#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct Follower {
    follower: Mutex<sessionkit::Follower>,
}

#[pymethods]
impl Follower {
    #[getter]
    fn offset(&self) -> u64 {
        self.follower.lock().offset()
    }

    /// The lines pushed past the offset, each as its bytes with its newline,
    /// waiting up to `timeout` seconds for some.
    fn next_lines<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let wait = seconds(py, timeout, "timeout")?;
        let lines = detach(py, || self.follower.lock().next_lines(wait))?;
        Ok(lines.iter().map(|l| PyBytes::new(py, l)).collect())
    }
}

fn seconds(py: Python<'_>, value: f64, name: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        invalid(
            py,
            format!("{name} must be a number of seconds >= 0, not {value}"),
        )
    })
}

/// A session pushed in the background (the core's `BackgroundPush`).
#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct BackgroundPush {
    pusher: sessionkit::BackgroundPush,
}

#[pymethods]
impl BackgroundPush {
    #[getter]
    fn pushed(&self) -> u64 {
        self.pusher.pushed()
    }

    fn flush(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = detach(py, || self.pusher.flush())?;
        to_py(py, &v)
    }

    fn stop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = detach(py, || self.pusher.stop())?;
        to_py(py, &v)
    }
}
