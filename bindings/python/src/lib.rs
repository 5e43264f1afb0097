//! `sessionkit._native`: the private native module under the `sessionkit`
//! Python package. It converts types and maps errors, nothing else: every
//! method calls one operation of the core (`sessionkit`), with the GIL released
//! while the core works, and mirrors a function of the C ABI (`ffi/src`).
//!
//! Values cross as the C ABI's do, as JSON: arguments are dumped by Python's
//! `json` module (which refuses NaN, bytes and other values JSON cannot hold),
//! results are loaded by it. Errors are raised as the classes of
//! `sessionkit.errors`, picked by the core's error kind name.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use serde_json::Value;
use sessionkit::{Error, ErrorKind};

mod session;
mod store;
mod view;

/// Run a call into the core with the GIL released, so that other Python
/// threads run meanwhile, and raise its error as a `sessionkit.errors` class.
pub(crate) fn detach<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> sessionkit::Result<T> + Send,
) -> PyResult<T> {
    py.detach(f).map_err(|e| error(py, &e))
}

/// The exception for a core error: the class of `sessionkit.errors` named by
/// its kind, with `.code` (the C status name) and `.errno` (the OS error
/// number, or None).
pub(crate) fn error(py: Python<'_>, e: &Error) -> PyErr {
    raise(py, e.kind(), &e.to_string(), e.os_errno())
}

/// An `InvalidInputError` for an argument the binding could not convert.
pub(crate) fn invalid(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, ErrorKind::InvalidInput, &message.into(), None)
}

fn raise(py: Python<'_>, kind: ErrorKind, message: &str, errno: Option<i32>) -> PyErr {
    static BY_NAME: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let made = (|| -> PyResult<PyErr> {
        let classes = BY_NAME.import(py, "sessionkit.errors", "_BY_CODE")?;
        let class = classes
            .get_item(kind.name())?
            .ok_or_else(|| PyRuntimeError::new_err(format!("no class for {}", kind.name())))?;
        let exc = class.call1((message,))?;
        exc.setattr("errno", errno)?;
        Ok(PyErr::from_value(exc))
    })();
    made.unwrap_or_else(|e| {
        PyRuntimeError::new_err(format!(
            "{message} (and sessionkit.errors could not give its class: {e})"
        ))
    })
}

/// The JSON text of a Python value; `InvalidInputError` naming the argument
/// for what JSON cannot hold (NaN, bytes, sets, objects).
pub(crate) fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let dumps = DUMPS.import(py, "json", "dumps")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    kwargs.set_item("ensure_ascii", false)?;
    kwargs.set_item("separators", (",", ":"))?;
    let text = dumps.call((value,), Some(&kwargs)).map_err(|e| {
        invalid(
            py,
            format!(
                "argument `{name}` cannot be stored as JSON: {}",
                e.value(py)
            ),
        )
    })?;
    text.extract::<String>()
}

/// A Python value as a JSON value (see [`dumps`]).
pub(crate) fn to_json(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    let text = dumps(py, value, name)?;
    serde_json::from_str(&text)
        .map_err(|e| invalid(py, format!("argument `{name}` is not valid JSON: {e}")))
}

/// A JSON list argument whose items must be objects (messages, items).
pub(crate) fn to_objects(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Vec<Value>> {
    match to_json(py, value, name)? {
        Value::Array(items) => {
            if let Some((i, bad)) = items.iter().enumerate().find(|(_, m)| !m.is_object()) {
                return Err(invalid(
                    py,
                    format!(
                        "argument `{name}` must be a list of dicts; item {i} is {}",
                        sessionkit::type_name(bad)
                    ),
                ));
            }
            Ok(items)
        }
        other => Err(invalid(
            py,
            format!(
                "argument `{name}` must be a list of dicts, not {}",
                sessionkit::type_name(&other)
            ),
        )),
    }
}

/// The Python value of a JSON text.
pub(crate) fn loads(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS.import(py, "json", "loads")?;
    Ok(loads.call1((text,))?.unbind())
}

/// The Python value of a result, through its JSON text.
pub(crate) fn to_py<T: serde::Serialize>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise a result: {e}")))?;
    loads(py, &text)
}

/// A required string argument: `InvalidInputError` naming it, for anything
/// but a `str` (bytes included).
pub(crate) fn arg_str(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_owned()),
        Err(_) => Err(invalid(
            py,
            format!(
                "argument `{name}` must be a str, not {}",
                value.get_type().name()?
            ),
        )),
    }
}

/// An optional string argument (None means absent).
pub(crate) fn opt_str(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<String>> {
    match value {
        Some(v) if !v.is_none() => arg_str(py, v, name).map(Some),
        _ => Ok(None),
    }
}

/// A list of path strings.
pub(crate) fn arg_paths(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if value.is_instance_of::<PyString>() {
        return Err(invalid(
            py,
            "argument `paths` must be a list of str, not a single str",
        ));
    }
    let items = value
        .try_iter()
        .map_err(|_| invalid(py, "argument `paths` must be a list of str"))?;
    items
        .enumerate()
        .map(|(i, p)| arg_str(py, &p?, &format!("paths[{i}]")))
        .collect()
}

/// The library's version (the crate version, from Cargo.toml).
#[pyfunction]
fn version() -> &'static str {
    sessionkit::VERSION
}

/// The core's table of error kinds: `(code, name, description)` each, in the
/// order of their numbers.
#[pyfunction]
fn error_kinds(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyTuple>>> {
    ErrorKind::ALL
        .iter()
        .map(|k| {
            PyTuple::new(
                py,
                [
                    k.code().into_pyobject(py)?.into_any(),
                    PyString::new(py, k.name()).into_any(),
                    PyString::new(py, k.description()).into_any(),
                ],
            )
        })
        .collect()
}

/// The directory name of a project under `<home>/projects/`, from its
/// canonical root path.
#[pyfunction]
fn project_code(py: Python<'_>, canonical_root: &Bound<'_, PyAny>) -> PyResult<String> {
    let root = arg_str(py, canonical_root, "canonical_root")?;
    Ok(sessionkit::project_code(std::path::Path::new(&root)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(project_code, m)?)?;
    m.add_class::<store::Store>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<session::Subagent>()?;
    m.add_class::<view::SessionView>()?;
    m.add_class::<view::MessageIter>()?;
    Ok(())
}
