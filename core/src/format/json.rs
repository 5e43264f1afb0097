//! Writing JSON for log lines: the same bytes as `serde_json::to_vec`, with strings
//! escaped by SIMD (`json-escape-simd`, picked at run time). Escaping the code and
//! tool output that fill agent messages is most of what an append costs, and
//! serde_json escapes a byte at a time.

use std::io::Write;

use serde_json::{Map, Value};

/// Append the JSON string for `s` (quoted and escaped) to `out`.
#[inline(always)]
pub(crate) fn write_str(s: &str, out: &mut Vec<u8>) {
    // The escaper first reserves room for every byte escaped as `\u00XX` (this
    // many bytes). A `reserve` that grows the buffer reallocates, and realloc
    // copies all of the old capacity, however little of it is used: for a
    // tool result of 100 KB, a megabyte. Move to a new buffer instead,
    // copying only what was written.
    let need = s.len() * 6 + 35;
    if out.capacity() - out.len() < need {
        let mut grown = Vec::with_capacity((out.len() + need).max(out.capacity() * 2));
        grown.extend_from_slice(out);
        *out = grown;
    }
    json_escape_simd::escape_into(s, out)
}

/// Append `v` to `out`, compact, exactly as `serde_json::to_vec(v)` writes it.
pub(crate) fn write_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // `Number`'s Display is what serde_json writes (itoa, or ryu for the
        // finite floats a `Value` can hold); a `Vec` never fails a write.
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_str(s, out),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(x, out);
            }
            out.push(b']');
        }
        Value::Object(m) => write_map(m, out),
    }
}

/// Append the object `m` to `out`, as [`write_value`] does.
pub(crate) fn write_map(m: &Map<String, Value>, out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_member(k, x, out);
    }
    out.push(b'}');
}

/// Append one member of an object, `"k":v`, as [`write_map`] writes it.
#[inline(always)]
pub(crate) fn write_member(k: &str, v: &Value, out: &mut Vec<u8>) {
    write_str(k, out);
    out.push(b':');
    write_value(v, out);
}

/// Options a host passes as a JSON object: empty text gives the defaults; bad
/// JSON or an unknown field is `InvalidInput`, prefixed with `what`.
pub(crate) fn options_from_json<T: serde::de::DeserializeOwned + Default>(
    what: &str,
    json: &str,
) -> crate::error::Result<T> {
    if json.trim().is_empty() {
        return Ok(T::default());
    }
    object_from_json(what, json)
}

/// A struct a host passes as a JSON object; bad JSON, anything but an object
/// or an unknown field is `InvalidInput`, prefixed with `what`.
pub(crate) fn object_from_json<T: serde::de::DeserializeOwned>(
    what: &str,
    json: &str,
) -> crate::error::Result<T> {
    let json = json.trim();
    // serde reads a struct from an array too (fields by position); these are
    // documented as objects, and a positional form would be read silently wrong.
    if !json.starts_with('{') {
        let got = match json.as_bytes().first() {
            None => "nothing",
            Some(b'[') => "an array",
            Some(b'"') => "a string",
            Some(b'n') => "null",
            Some(b't' | b'f') => "a boolean",
            Some(_) => "a number or invalid JSON",
        };
        return Err(crate::error::Error::invalid(format!(
            "{what}: expected a JSON object, got {got}"
        )));
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let e = e.into_inner();
        // An unknown field's message names it already; a wrong value's does not.
        if at == "." || e.to_string().contains("unknown field") {
            crate::error::Error::invalid(format!("{what}: {e}"))
        } else {
            crate::error::Error::invalid(format!("{what}: {at}: {e}"))
        }
    })?;
    de.end()
        .map_err(|e| crate::error::Error::invalid(format!("{what}: {e}")))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn ours(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        write_value(v, &mut out);
        out
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from), // non-finite becomes null
            any::<String>().prop_map(Value::String),
            // Dense in what needs escaping: quotes, backslashes, controls, DEL,
            // non-ASCII, at every offset of a SIMD block.
            proptest::collection::vec(
                prop_oneof![
                    Just('"'),
                    Just('\\'),
                    Just('/'),
                    Just('\u{7f}'),
                    Just('é'),
                    Just('🚧'),
                    (0u8..0x20).prop_map(char::from),
                    proptest::char::range('a', 'z'),
                ],
                0..200
            )
            .prop_map(|c| Value::String(c.into_iter().collect())),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        // The seed is printed; PROPTEST_RNG_SEED=<seed> reruns a failure's inputs.
        #![proptest_config(ProptestConfig {
            rng_seed: proptest::test_runner::RngSeed::Fixed(crate::testing::proptest_seed()),
            ..ProptestConfig::default()
        })]
        #[test]
        fn same_bytes_as_serde_json(v in value()) {
            prop_assert_eq!(ours(&v), serde_json::to_vec(&v).unwrap());
        }
    }

    #[test]
    fn every_character_below_0x800_and_edge_numbers() {
        let all: String = (0u32..0x800).filter_map(char::from_u32).collect();
        let v = json!({
            "s": all, "k\u{1}\"": [u64::MAX, i64::MIN, 0, -0.0, 1e300, 0.1, -1.5e-7, 1.0]
        });
        assert_eq!(ours(&v), serde_json::to_vec(&v).unwrap());
    }
}
