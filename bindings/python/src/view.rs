//! `SessionView`: a session or sidechain read without a lock (the C ABI's
//! `sk_view`), and `MessageIter`, which hands a long view out one message at
//! a time.

use parking_lot::Mutex;
use pyo3::prelude::*;
use sessionkit::{Message, ModelViewOptions};

use crate::store::options;
use crate::{arg_str, detach, message_py, messages_py, to_py};

#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct SessionView {
    view: sessionkit::SessionView,
}

impl SessionView {
    pub(crate) fn new(view: sessionkit::SessionView) -> SessionView {
        SessionView { view }
    }
}

#[pymethods]
impl SessionView {
    fn info(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.view.info())
    }

    fn active_path(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = detach(py, || self.view.active_path())?;
        messages_py(py, &text)
    }

    fn ui_view(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = detach(py, || self.view.ui_view())?;
        messages_py(py, &text)
    }

    #[pyo3(signature = (options=None))]
    fn model_view(
        &self,
        py: Python<'_>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let opts = self::options(py, options, "options", ModelViewOptions::from_json)?;
        let text = detach(py, || self.view.model_view(&opts))?;
        messages_py(py, &text)
    }

    /// The active path (`"active"`), UI view (`"ui"`) or model view
    /// (`"model"`), converted one message at a time as it is iterated.
    #[pyo3(signature = (which, options=None))]
    fn iter(
        &self,
        py: Python<'_>,
        which: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<MessageIter> {
        let which = arg_str(py, which, "which")?;
        let opts = self::options(py, options, "options", ModelViewOptions::from_json)?;
        let messages = detach(py, || match which.as_str() {
            "active" => self.view.active_path(),
            "ui" => self.view.ui_view(),
            "model" => self.view.model_view(&opts),
            other => Err(sessionkit::Error::InvalidInput(format!(
                "argument `which` must be \"active\", \"ui\" or \"model\", not {other:?}"
            ))),
        })?;
        Ok(MessageIter {
            rest: Mutex::new(messages.into_iter()),
        })
    }

    fn message(&self, py: Python<'_>, message_id: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let id = arg_str(py, message_id, "message_id")?;
        let text = detach(py, || self.view.message(&id))?;
        message_py(py, &text)
    }

    fn resolve_message(&self, py: Python<'_>, prefix: &Bound<'_, PyAny>) -> PyResult<String> {
        let prefix = arg_str(py, prefix, "prefix")?;
        detach(py, || self.view.resolve_message(&prefix))
    }

    fn tree(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = detach(py, || self.view.tree())?;
        to_py(py, &v)
    }

    fn branches(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = detach(py, || self.view.branches())?;
        to_py(py, &v)
    }

    fn records(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.view.records())
    }
}

/// The messages of a view, each loaded into Python only when it is reached.
#[pyclass(module = "sessionkit._native", frozen)]
pub(crate) struct MessageIter {
    rest: Mutex<std::vec::IntoIter<Message>>,
}

#[pymethods]
impl MessageIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let next = self.rest.lock().next();
        next.map(|m| message_py(py, &m)).transpose()
    }

    fn __length_hint__(&self) -> usize {
        self.rest.lock().len()
    }
}
