//! Conversions for the checkpoint methods of `Store` (LangGraph's saver):
//! a serializer's `(type, bytes)` pairs and the dicts of stored checkpoints.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde_json::{Map, Value};
use sessionkit::{ChannelValue, CheckpointTuple, PendingWrite, TypedValue};

use crate::{arg_str, invalid, to_json, value_py};

/// A `(type, bytes)` pair, as a LangGraph serializer's `dumps_typed` makes it.
pub(crate) fn typed(py: Python<'_>, v: &Bound<'_, PyAny>, name: &str) -> PyResult<TypedValue> {
    let bad = || {
        invalid(
            py,
            format!("argument `{name}` must be a (str, bytes) tuple"),
        )
    };
    let t = v.cast::<PyTuple>().map_err(|_| bad())?;
    if t.len() != 2 {
        return Err(bad());
    }
    let kind = arg_str(py, &t.get_item(0)?, &format!("{name}[0]"))?;
    let bytes = t.get_item(1)?;
    let bytes = bytes.cast::<PyBytes>().map_err(|_| bad())?;
    Ok(TypedValue {
        kind,
        bytes: bytes.as_bytes().to_vec(),
    })
}

/// A dict argument, as a JSON object.
pub(crate) fn object(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Map<String, Value>> {
    match to_json(py, v, name)? {
        Value::Object(m) => Ok(m),
        other => Err(invalid(
            py,
            format!(
                "argument `{name}` must be a dict, not {}",
                sessionkit::type_name(&other)
            ),
        )),
    }
}

fn items<'py>(
    py: Python<'py>,
    v: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if v.is_instance_of::<pyo3::types::PyString>() {
        return Err(invalid(
            py,
            format!("argument `{name}` must be a list, not a str"),
        ));
    }
    v.try_iter()
        .map_err(|_| invalid(py, format!("argument `{name}` must be a list")))?
        .collect()
}

/// `[(channel, version, (type, bytes) | None), ...]`.
pub(crate) fn channel_values(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Vec<ChannelValue>> {
    let mut out = Vec::new();
    for (i, item) in items(py, v, "values")?.into_iter().enumerate() {
        let name = format!("values[{i}]");
        let t = item
            .cast::<PyTuple>()
            .ok()
            .filter(|t| t.len() == 3)
            .ok_or_else(|| {
                invalid(
                    py,
                    format!("argument `{name}` must be a (channel, version, value) tuple"),
                )
            })?;
        let value = t.get_item(2)?;
        out.push(ChannelValue {
            channel: arg_str(py, &t.get_item(0)?, &format!("{name}[0]"))?,
            version: to_json(py, &t.get_item(1)?, &format!("{name}[1]"))?,
            value: if value.is_none() {
                None
            } else {
                Some(typed(py, &value, &format!("{name}[2]"))?)
            },
        });
    }
    Ok(out)
}

/// `[(channel, (type, bytes)), ...]`.
pub(crate) fn writes(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Vec<(String, TypedValue)>> {
    let mut out = Vec::new();
    for (i, item) in items(py, v, "writes")?.into_iter().enumerate() {
        let name = format!("writes[{i}]");
        let t = item
            .cast::<PyTuple>()
            .ok()
            .filter(|t| t.len() == 2)
            .ok_or_else(|| {
                invalid(
                    py,
                    format!("argument `{name}` must be a (channel, value) tuple"),
                )
            })?;
        out.push((
            arg_str(py, &t.get_item(0)?, &format!("{name}[0]"))?,
            typed(py, &t.get_item(1)?, &format!("{name}[1]"))?,
        ));
    }
    Ok(out)
}

/// A list of str.
pub(crate) fn strings(py: Python<'_>, v: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    items(py, v, name)?
        .iter()
        .enumerate()
        .map(|(i, s)| arg_str(py, s, &format!("{name}[{i}]")))
        .collect()
}

pub(crate) fn typed_py<'py>(py: Python<'py>, v: &TypedValue) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            v.kind.clone().into_pyobject(py)?.into_any(),
            PyBytes::new(py, &v.bytes).into_any(),
        ],
    )
}

pub(crate) fn write_py<'py>(py: Python<'py>, w: &PendingWrite) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            w.task_id.clone().into_pyobject(py)?.into_any(),
            w.channel.clone().into_pyobject(py)?.into_any(),
            typed_py(py, &w.value)?.into_any(),
            w.task_path.clone().into_pyobject(py)?.into_any(),
            w.idx.into_pyobject(py)?.into_any(),
        ],
    )
}

pub(crate) fn writes_py<'py>(py: Python<'py>, ws: &[PendingWrite]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for w in ws {
        list.append(write_py(py, w)?)?;
    }
    Ok(list)
}

/// A stored checkpoint as a dict (see `_native.pyi`).
pub(crate) fn tuple_py(py: Python<'_>, t: &CheckpointTuple) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    d.set_item("thread_id", &t.thread_id)?;
    d.set_item("ns", &t.ns)?;
    d.set_item("id", &t.id)?;
    d.set_item("parent_id", &t.parent_id)?;
    d.set_item(
        "checkpoint",
        value_py(py, &Value::Object(t.checkpoint.clone()))?,
    )?;
    d.set_item(
        "metadata",
        value_py(py, &Value::Object(t.metadata.clone()))?,
    )?;
    let values = PyDict::new(py);
    for (c, v) in &t.values {
        values.set_item(c, typed_py(py, v)?)?;
    }
    d.set_item("values", values)?;
    d.set_item("writes", writes_py(py, &t.writes)?)?;
    let sends = PyList::empty(py);
    for v in &t.pending_sends {
        sends.append(typed_py(py, v)?)?;
    }
    d.set_item("pending_sends", sends)?;
    Ok(d.into_any().unbind())
}
