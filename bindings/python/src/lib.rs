//! `sessionkit._native`: the private native module under the `sessionkit`
//! Python package. It converts types and maps errors, nothing else: every
//! method calls one operation of the core (`sessionkit`), with the GIL released
//! while the core works, and mirrors a function of the C ABI (`ffi/src`).
//!
//! Values cross as JSON values, walked in place (no JSON text is made to cross):
//! arguments refuse what JSON cannot hold (NaN, bytes, sets, objects), results
//! come back as dicts, lists, str, int, float, bool and None. JSON texts the
//! core makes are parsed while the GIL is released. Errors are raised as the classes of
//! `sessionkit.errors`, picked by the core's error kind name.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};
use sessionkit::{Error, ErrorKind};

mod checkpoints;
mod json;
mod remote;
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

/// How deep a value may nest; deeper (or a cycle) is refused. The core refuses
/// more than 100 levels anyway; this keeps the conversion's recursion bounded.
const MAX_DEPTH: usize = 128;

/// Where in an argument a value could not be converted, and why.
struct Unconvertible {
    /// Keys and indexes from the innermost out.
    path: Vec<String>,
    why: String,
}

impl Unconvertible {
    fn new(why: impl Into<String>) -> Unconvertible {
        Unconvertible {
            path: Vec::new(),
            why: why.into(),
        }
    }

    fn at(mut self, segment: String) -> Unconvertible {
        self.path.push(segment);
        self
    }
}

fn type_of(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn items_of<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    depth: usize,
) -> Result<Value, Unconvertible> {
    items
        .enumerate()
        .map(|(i, x)| convert(&x, depth + 1).map_err(|e| e.at(format!("[{i}]"))))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// A Python value (None, bool, int, float, str, dict with str keys, list,
/// tuple) as a JSON value, walked in place: no JSON text is made and parsed.
fn convert(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Unconvertible> {
    if depth > MAX_DEPTH {
        return Err(Unconvertible::new(format!(
            "nested more than {MAX_DEPTH} levels deep (or it contains itself)"
        )));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(s) = value.cast::<PyString>() {
        let s = s
            .to_str()
            .map_err(|e| Unconvertible::new(format!("a str that is not valid UTF-8: {e}")))?;
        return Ok(Value::String(s.to_owned()));
    }
    // Before int: bool is a subclass of int.
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = value.cast::<PyInt>() {
        if let Ok(n) = i.extract::<i64>() {
            return Ok(n.into());
        }
        if let Ok(n) = i.extract::<u64>() {
            return Ok(n.into());
        }
        return Err(Unconvertible::new(format!(
            "the int {i} is beyond the 64 bits a JSON number is kept in exactly"
        )));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        let x = f.value();
        return Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| Unconvertible::new(format!("the float {x} is not a JSON number")));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(Unconvertible::new(format!(
                    "a dict key must be a str, not {} ({k})",
                    type_of(&k)
                )));
            };
            let key = key
                .to_str()
                .map_err(|e| Unconvertible::new(e.to_string()))?
                .to_owned();
            let v = convert(&v, depth + 1).map_err(|e| e.at(format!("[{key:?}]")))?;
            map.insert(key, v);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = value.cast::<PyList>() {
        return items_of(l.iter(), depth);
    }
    if let Ok(t) = value.cast::<PyTuple>() {
        return items_of(t.iter(), depth);
    }
    Err(Unconvertible::new(format!(
        "{} is not JSON serializable",
        type_of(value)
    )))
}

/// A Python value as a JSON value; `InvalidInputError` naming the argument and
/// the place inside it for what JSON cannot hold (NaN, bytes, sets, objects,
/// keys that are not str, ints beyond 64 bits).
pub(crate) fn to_json(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    convert(value, 0).map_err(|e| {
        let at: String = e.path.iter().rev().map(String::as_str).collect();
        invalid(
            py,
            format!("argument `{name}{at}` cannot be stored as JSON: {}", e.why),
        )
    })
}

/// The JSON text of a Python value (for options the core parses from text).
pub(crate) fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    Ok(to_json(py, value, name)?.to_string())
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

/// The Python value of a JSON value: dicts (in the JSON's key order), lists,
/// str, int, float, bool and None.
pub(crate) fn value_py(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(py_of(py, value)?.unbind())
}

/// The Python value of a (small) result: a report, an entry, an info object.
pub(crate) fn to_py<T: serde::Serialize>(py: Python<'_>, v: &T) -> PyResult<Py<PyAny>> {
    // As JSON text, built into objects by `json::Builder` (strings borrowed,
    // known keys interned): a listing of ten thousand entries through a
    // `serde_json::Value` copied every string twice.
    let text = serde_json::to_string(v)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise a result: {e}")))?;
    json_py(py, &text)
}

fn py_of<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for x in items {
                list.append(py_of(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, x) in map {
                dict.set_item(PyString::new(py, k), py_of(py, x)?)?;
            }
            dict.into_any()
        }
    })
}

/// The dict of a message the core returned.
pub(crate) fn message_py(py: Python<'_>, m: &sessionkit::Message) -> PyResult<Py<PyAny>> {
    json_py(py, m.json())
}

/// The list of dicts of messages the core returned.
pub(crate) fn messages_py(py: Python<'_>, ms: &[sessionkit::Message]) -> PyResult<Py<PyAny>> {
    Ok(json::Builder::new(py)
        .list(ms.iter().map(|m| m.json()))?
        .unbind())
}

/// The Python value of a JSON text the core made (a list of items, an item).
pub(crate) fn json_py(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(json::Builder::new(py).value(text)?.unbind())
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

/// An integer argument of the Rust type `T`: `InvalidInputError` naming it for
/// anything but an int (bool included), or an int `T` cannot hold (negative,
/// too large), where pyo3 alone would raise `TypeError` or `OverflowError`.
pub(crate) fn arg_int<T>(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<T>
where
    T: for<'a, 'py> FromPyObject<'a, 'py>,
{
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return Err(invalid(
            py,
            format!(
                "argument `{name}` must be an int, not {}",
                value.get_type().name()?
            ),
        ));
    }
    value.extract::<T>().map_err(|_| {
        invalid(
            py,
            format!(
                "argument `{name}` is out of range: {value} (expected 0 to {})",
                type_max::<T>()
            ),
        )
    })
}

/// The largest value of an unsigned integer type, for messages.
fn type_max<T>() -> u64 {
    match std::mem::size_of::<T>() {
        1 => u8::MAX.into(),
        2 => u16::MAX.into(),
        4 => u32::MAX.into(),
        _ => u64::MAX,
    }
}

/// An optional integer argument (None means absent).
pub(crate) fn opt_int<T>(
    py: Python<'_>,
    value: Option<&Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<T>>
where
    T: for<'a, 'py> FromPyObject<'a, 'py>,
{
    match value {
        Some(v) if !v.is_none() => arg_int(py, v, name).map(Some),
        _ => Ok(None),
    }
}

/// A bool argument: `InvalidInputError` for anything but a `bool`.
pub(crate) fn arg_bool(py: Python<'_>, value: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    match value.cast::<PyBool>() {
        Ok(b) => Ok(b.is_true()),
        Err(_) => Err(invalid(
            py,
            format!(
                "argument `{name}` must be a bool, not {}",
                value.get_type().name()?
            ),
        )),
    }
}

/// A number of seconds (int or float, >= 0, finite).
pub(crate) fn arg_seconds(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<std::time::Duration> {
    let secs = if value.is_instance_of::<PyBool>() {
        None
    } else if let Ok(f) = value.cast::<PyFloat>() {
        Some(f.value())
    } else if value.is_instance_of::<PyInt>() {
        value.extract::<f64>().ok()
    } else {
        None
    };
    secs.and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| {
            invalid(
                py,
                format!("argument `{name}` must be a number of seconds >= 0, not {value}"),
            )
        })
}

/// The core's table of enum values and defaults, as JSON text:
/// `{"enums": {...}, "defaults": {...}}`.
#[pyfunction]
fn defaults() -> String {
    sessionkit::defaults_json()
}

/// A fresh session id (a UUIDv7), made without touching a file.
#[pyfunction]
fn new_session_id() -> String {
    sessionkit::new_session_id()
}

/// The channel version after `current` (None, a number or a version this
/// made), for a LangGraph saver's `get_next_version`.
#[pyfunction]
#[pyo3(signature = (current=None))]
fn next_channel_version(py: Python<'_>, current: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let current = match current {
        Some(c) if !c.is_none() => Some(to_json(py, c, "current")?),
        _ => None,
    };
    sessionkit::next_channel_version(current.as_ref()).map_err(|e| error(py, &e))
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

/// Import Claude Code, Codex or seed-style transcripts (files or directories);
/// `options` as the core's `ImportOptions` (`from`, `project`, `store`).
/// Returns the import report.
#[pyfunction]
fn conversation_session_id(py: Python<'_>, conversation_id: &Bound<'_, PyAny>) -> PyResult<String> {
    let id = arg_str(py, conversation_id, "conversation_id")?;
    sessionkit::conversation_session_id(&id).map_err(|e| error(py, &e))
}

#[pyfunction]
#[pyo3(signature = (paths, options=None))]
fn import_transcripts(
    py: Python<'_>,
    paths: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let paths: Vec<std::path::PathBuf> =
        arg_paths(py, paths)?.into_iter().map(Into::into).collect();
    let opts = store::options(py, options, "options", sessionkit::ImportOptions::from_json)?;
    let report = detach(py, || sessionkit::import(&paths, &opts, &mut |_| {}))?;
    to_py(py, &report)
}

/// The sessions of every project in the home `options` (store options) names.
#[pyfunction]
#[pyo3(signature = (options=None))]
fn list_all_sessions(py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    let opts = store::options(py, options, "options", sessionkit::StoreOptions::from_json)?;
    let all = detach(py, || sessionkit::list_all_sessions(&opts))?;
    to_py(py, &all)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(new_session_id, m)?)?;
    m.add_function(wrap_pyfunction!(project_code, m)?)?;
    m.add_function(wrap_pyfunction!(conversation_session_id, m)?)?;
    m.add_function(wrap_pyfunction!(next_channel_version, m)?)?;
    m.add_function(wrap_pyfunction!(import_transcripts, m)?)?;
    m.add_function(wrap_pyfunction!(list_all_sessions, m)?)?;
    m.add_class::<store::Store>()?;
    m.add_class::<remote::Remote>()?;
    m.add_class::<remote::Follower>()?;
    m.add_class::<remote::BackgroundPush>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<session::Subagent>()?;
    m.add_class::<view::SessionView>()?;
    m.add_class::<view::MessageIter>()?;
    Ok(())
}
