//! JSON text the core made, built straight into Python objects.
//!
//! Going through a `serde_json::Value` first allocated every string twice (once
//! in Rust, once as a `str`) and built every object twice. Here the parser
//! hands each value to a visitor that makes the Python object at once; strings
//! without escapes are borrowed from the text, and the keys every message has
//! are interned once per process.

use std::fmt;

use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Builds Python values from JSON texts.
pub(crate) struct Builder<'py> {
    py: Python<'py>,
}

impl<'py> Builder<'py> {
    pub(crate) fn new(py: Python<'py>) -> Self {
        Builder { py }
    }

    /// The Python value of one JSON text: dicts (in the text's key order),
    /// lists, str, int, float, bool and None.
    pub(crate) fn value(&self, text: &str) -> PyResult<Bound<'py, PyAny>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Seed(self).deserialize(&mut de).and_then(|v| {
            de.end()?;
            Ok(v)
        });
        v.map_err(|e| {
            PyRuntimeError::new_err(format!(
                "sessionkit made JSON text that does not load into Python: {e}"
            ))
        })
    }

    /// A list of the Python values of JSON texts.
    pub(crate) fn list<'t>(
        &self,
        texts: impl ExactSizeIterator<Item = &'t str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let items = texts.map(|t| self.value(t)).collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(self.py, items)?.into_any())
    }

    /// An object key: the names every stored message and index entry has are
    /// made once.
    fn key(&self, k: &str) -> Bound<'py, PyString> {
        let py = self.py;
        let known = match k {
            "type" => intern!(py, "type"),
            "id" => intern!(py, "id"),
            "parentId" => intern!(py, "parentId"),
            "sessionId" => intern!(py, "sessionId"),
            "role" => intern!(py, "role"),
            "timestamp" => intern!(py, "timestamp"),
            "content" => intern!(py, "content"),
            "meta" => intern!(py, "meta"),
            // Those of every index entry (a listing is thousands of them).
            "title" => intern!(py, "title"),
            "titleSet" => intern!(py, "titleSet"),
            "createdAt" => intern!(py, "createdAt"),
            "updatedAt" => intern!(py, "updatedAt"),
            "status" => intern!(py, "status"),
            "lastAssistantReply" => intern!(py, "lastAssistantReply"),
            "thinking" => intern!(py, "thinking"),
            "refusalReason" => intern!(py, "refusalReason"),
            "failureReason" => intern!(py, "failureReason"),
            "lastToolCall" => intern!(py, "lastToolCall"),
            "tokenUsage" => intern!(py, "tokenUsage"),
            "activeTokens" => intern!(py, "activeTokens"),
            "childProcesses" => intern!(py, "childProcesses"),
            "headId" => intern!(py, "headId"),
            "messageCount" => intern!(py, "messageCount"),
            "forkedFrom" => intern!(py, "forkedFrom"),
            "logBytes" => intern!(py, "logBytes"),
            _ => return PyString::new(py, k),
        };
        known.clone()
    }
}

/// One value.
struct Seed<'b, 'py>(&'b Builder<'py>);

/// One object key.
struct Key<'b, 'py>(&'b Builder<'py>);

fn py_err<E: serde::de::Error>(e: PyErr) -> E {
    E::custom(e)
}

impl<'de, 'py> DeserializeSeed<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 'py> Visitor<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.py.None().into_bound(self.0.py))
    }

    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(PyBool::new(self.0.py, b).to_owned().into_any())
    }

    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.0.py, i).into_any())
    }

    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.0.py, u).into_any())
    }

    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Self::Value, E> {
        Ok(PyFloat::new(self.0.py, f).into_any())
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0.py, s).into_any())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(Seed(self.0))? {
            items.push(v);
        }
        Ok(PyList::new(self.0.py, items).map_err(py_err)?.into_any())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.0.py);
        while let Some(k) = map.next_key_seed(Key(self.0))? {
            let v = map.next_value_seed(Seed(self.0))?;
            dict.set_item(k, v).map_err(py_err)?;
        }
        Ok(dict.into_any())
    }
}

impl<'de, 'py> DeserializeSeed<'de> for Key<'_, 'py> {
    type Value = Bound<'py, PyString>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, 'py> Visitor<'de> for Key<'_, 'py> {
    type Value = Bound<'py, PyString>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(self.0.key(s))
    }
}
