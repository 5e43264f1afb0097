//! Decoding a line the way FORMAT.md §5 requires: a *decodable JSON object*, with
//! no lone surrogate escape, no number that is infinite as binary64, no repeated
//! member name (at any depth) and at most 127 levels of nesting. serde_json
//! already refuses the first, second and fourth when it decodes a value (its
//! recursion limit is 128 containers); skipping a value does not decode it, so
//! every value here is visited, and the maps check their names.
//!
//! [`Probe`] reads the fields a reader folds in the same pass, each as a
//! [`Json`] that says its JSON type, so the decision table (§6.9) can be applied
//! without parsing the line again.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A field of a probed line: whether it is there, and with which JSON type.
/// Strings are kept (borrowed from the line when they have no escapes); other
/// values were checked and dropped.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    /// The member is not in the object.
    #[default]
    Absent,
    Null,
    Bool,
    Number(f64),
    Str(Cow<'a, str>),
    Array,
    Object,
}

impl<'a> Json<'a> {
    /// The string, if the value is one.
    pub fn str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// How the value's type reads in a reason ("a number").
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Absent => "absent",
            Json::Null => "null",
            Json::Bool => "a boolean",
            Json::Number(_) => "a number",
            Json::Str(_) => "a string",
            Json::Array => "an array",
            Json::Object => "an object",
        }
    }

    /// Absent or `null`: what the decision table treats alike.
    pub fn is_missing(&self) -> bool {
        matches!(self, Json::Absent | Json::Null)
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Json::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Json::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Json::Str(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Json::Bool)
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Json::Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Json::Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Json::Number(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Check.visit_seq(seq).map(|()| Json::Array)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Check.visit_map(map).map(|()| Json::Object)
            }
        }
        d.deserialize_any(V)
    }
}

/// What a checked value is, without keeping it (a string's length in bytes).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The member is not in the object.
    #[default]
    Absent,
    Null,
    Str(usize),
    /// A number, a boolean, an array or an object.
    Other,
}

impl Shape {
    /// Absent or `null`.
    pub fn is_missing(self) -> bool {
        matches!(self, Shape::Absent | Shape::Null)
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Shape, E> {
                Ok(Shape::Str(v.len()))
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Null)
            }
            fn visit_none<E>(self) -> Result<Shape, E> {
                Ok(Shape::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape, A::Error> {
                Check.visit_seq(seq).map(|()| Shape::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shape, A::Error> {
                Check.visit_map(map).map(|()| Shape::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// Checks a value is decodable (§5) and keeps nothing of it.
#[derive(Clone, Copy)]
pub(crate) struct Check;

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Check).map(|()| Check)
    }
}

impl<'de> Visitor<'de> for Check {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Check>()?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut names = Names::default();
        while let Some(k) = map.next_key::<Name<'de>>()? {
            names.insert::<A::Error>(k.0)?;
            map.next_value::<Check>()?;
        }
        Ok(())
    }
}

/// A member name, borrowed from the line when it has no escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The member names of one object seen so far: a short list (most objects have
/// a few members), a hash set past that.
#[derive(Default)]
struct Names<'a> {
    few: Vec<Cow<'a, str>>,
    many: HashSet<Cow<'a, str>, foldhash::fast::RandomState>,
}

impl<'a> Names<'a> {
    const FEW: usize = 16;

    fn insert<E: serde::de::Error>(&mut self, name: Cow<'a, str>) -> Result<(), E> {
        let repeated = if self.few.len() < Self::FEW {
            if self.few.contains(&name) {
                true
            } else {
                self.few.push(name);
                false
            }
        } else {
            if self.many.is_empty() {
                self.many.extend(self.few.iter().cloned());
            }
            if self.many.contains(&name) {
                true
            } else {
                self.many.insert(name);
                false
            }
        };
        if repeated {
            return Err(E::custom("an object repeats a member name"));
        }
        Ok(())
    }
}

/// A `serde_json::Value` decoded with the checks of §5 (serde_json's own `Value`
/// keeps the last of repeated names silently).
pub(crate) struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> DeserializeSeed<'de> for StrictVisitor {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(StrictVisitor)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(StrictVisitor)?;
            if out.insert(k, v).is_some() {
                return Err(A::Error::custom("an object repeats a member name"));
            }
        }
        Ok(Value::Object(out))
    }
}

/// Parse `text` as one decodable JSON value (§5): what every host input and
/// every value a reader hands out goes through.
pub fn parse_strict(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str::<Strict>(text).map(|s| s.0)
}

/// How deep arrays and objects may nest in a line, the line's object included
/// (serde_json refuses the 128th level; FORMAT.md §5 says the same).
const MAX_LEVELS: usize = 127;

/// How deep the arrays and objects of a JSON text nest.
fn nesting(text: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut escaped) = (0usize, 0usize, false, false);
    for &b in text.as_bytes() {
        if in_str {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Parse JSON text a host passes in (a message, a patch, state): one decodable
/// JSON value (FORMAT.md §5), so that nothing a reader would skip is written.
/// Fails with `InvalidInput` naming `what`.
pub fn parse_json(what: &str, text: &str) -> crate::error::Result<Value> {
    parse_strict(text)
        .map_err(|e| crate::error::Error::invalid(format!("{what} is not valid JSON: {e}")))
}

/// The few fields a reader folds from every line, read while the whole line is
/// checked to be a decodable JSON object. Each member the decision table looks at
/// is a [`Json`] that keeps its type; the rest are only checked.
#[derive(Debug, Default)]
pub(crate) struct Probe<'a> {
    pub kind: Json<'a>,
    pub id: Json<'a>,
    pub parent_id: Json<'a>,
    pub message_id: Json<'a>,
    pub version: Json<'a>,
    pub role: Json<'a>,
    pub timestamp: Json<'a>,
    /// The `meta` value as it is in the line (checked).
    pub meta: Option<&'a RawValue>,
    /// Blob references, decoded (they are small).
    pub content_blob: Option<Value>,
    pub content_params_blob: Option<Value>,
    /// The shapes of the fields that may hold tool calls and results: what
    /// tells a plain-text message (the model view hands those out unparsed).
    pub content: Shape,
    pub content_params: Shape,
    pub message_params: Shape,
    pub patch: Json<'a>,
    pub summary_id: Json<'a>,
    pub replaces: Json<'a>,
    pub prefix: Json<'a>,
}

impl<'a> Probe<'a> {
    /// Whether the line has a blob reference (of any shape).
    pub fn has_blob(&self) -> bool {
        self.content_blob.is_some() || self.content_params_blob.is_some()
    }
}

impl<'de> Deserialize<'de> for Probe<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Probe<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe<'de>, A::Error> {
                let mut p = Probe::default();
                let mut names = Names::default();
                while let Some(Name(k)) = map.next_key::<Name<'de>>()? {
                    names.insert::<A::Error>(k.clone())?;
                    let slot = match &*k {
                        "type" => &mut p.kind,
                        "id" => &mut p.id,
                        "parentId" => &mut p.parent_id,
                        "messageId" => &mut p.message_id,
                        "version" => &mut p.version,
                        "role" => &mut p.role,
                        "timestamp" => &mut p.timestamp,
                        "patch" => &mut p.patch,
                        "summaryId" => &mut p.summary_id,
                        "replaces" => &mut p.replaces,
                        "prefix" => &mut p.prefix,
                        "meta" => {
                            // Kept as it is in the line, so checked on its own: a
                            // raw value is skipped, not decoded.
                            let raw: &'de RawValue = map.next_value()?;
                            serde_json::from_str::<Check>(raw.get()).map_err(A::Error::custom)?;
                            if nesting(raw.get()) >= MAX_LEVELS {
                                return Err(A::Error::custom("nested more than 127 levels"));
                            }
                            p.meta = Some(raw);
                            continue;
                        }
                        "content" => {
                            p.content = map.next_value()?;
                            continue;
                        }
                        "contentParams" => {
                            p.content_params = map.next_value()?;
                            continue;
                        }
                        "messageParams" => {
                            p.message_params = map.next_value()?;
                            continue;
                        }
                        "contentBlob" => {
                            p.content_blob = Some(map.next_value::<Strict>()?.0);
                            continue;
                        }
                        "contentParamsBlob" => {
                            p.content_params_blob = Some(map.next_value::<Strict>()?.0);
                            continue;
                        }
                        _ => {
                            map.next_value::<Check>()?;
                            continue;
                        }
                    };
                    *slot = map.next_value()?;
                }
                Ok(p)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(text: &str) -> serde_json::Result<Probe<'_>> {
        serde_json::from_str(text)
    }

    #[test]
    fn undecodable_values_anywhere_fail_the_line() {
        for bad in [
            r#"{"id":"a","content":"\ud800"}"#,
            r#"{"id":"a","content":["x",{"t":"\udc00x"}]}"#,
            r#"{"id":"a","content":1e400}"#,
            r#"{"id":"a","meta":{"n":-1e999}}"#,
            r#"{"id":"a","content":{"k":1,"k":2}}"#,
            r#"{"id":"a","content":{"k":1,"\u006b":2}}"#,
            r#"{"id":"a","x":1,"x":1}"#,
            r#"{"id":"a","id":"a"}"#,
            r#"{"id":"a","meta":{"u":1,"u":2}}"#,
            r#"{"id":"a","contentBlob":{"sha256":"x","sha256":"y"}}"#,
        ] {
            assert!(probe(bad).is_err(), "{bad}");
            assert!(parse_strict(bad).is_err(), "{bad}");
        }
        for good in [
            r#"{"id":"a","content":"\ud83d\ude00 \u00e9","n":1e-400,"big":18446744073709551616}"#,
            r#"{"id":"a","content":[{"k":1},{"k":2}],"meta":{"usage":{"k":1}}}"#,
        ] {
            assert!(probe(good).is_ok(), "{good}");
            assert!(parse_strict(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn many_members_are_checked_for_repeats_too() {
        let mut members: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let ok = format!("{{{}}}", members.join(","));
        assert!(parse_strict(&ok).is_ok() && probe(&ok).is_ok());
        members.push("\"k3\":0".into());
        let bad = format!("{{\"c\":{{{}}}}}", members.join(","));
        assert!(probe(&bad).is_err() && parse_strict(&bad).is_err());
    }

    #[test]
    fn nesting_is_limited_to_127_levels() {
        let nest = |levels: usize| {
            // The line's object is level 1.
            let inner = levels - 1;
            format!("{{\"c\":{}{}}}", "[".repeat(inner), "]".repeat(inner))
        };
        assert!(probe(&nest(127)).is_ok());
        assert!(parse_strict(&nest(127)).is_ok());
        assert!(probe(&nest(128)).is_err());
        let meta = |levels: usize| {
            let inner = levels - 2;
            format!(
                "{{\"meta\":{{\"x\":{}{}}}}}",
                "[".repeat(inner),
                "]".repeat(inner)
            )
        };
        assert!(probe(&meta(127)).is_ok());
        assert!(probe(&meta(128)).is_err());
        assert!(parse_strict(&nest(128)).is_err());
    }

    #[test]
    fn fields_keep_their_json_type() {
        let p = probe(r#"{"type":7,"id":null,"parentId":["x"],"version":1.0,"role":"user","messageId":{"a":1}}"#)
            .unwrap();
        assert_eq!(p.kind, Json::Number(7.0));
        assert_eq!(p.id, Json::Null);
        assert_eq!(p.parent_id, Json::Array);
        assert_eq!(p.version, Json::Number(1.0));
        assert_eq!(p.role.str(), Some("user"));
        assert_eq!(p.message_id, Json::Object);
        assert_eq!(p.timestamp, Json::Absent);
        assert!(matches!(
            probe(r#"{"id":"\u0061"}"#).unwrap().id,
            Json::Str(Cow::Owned(_))
        ));
        assert!(matches!(
            probe(r#"{"id":"a"}"#).unwrap().id,
            Json::Str(Cow::Borrowed("a"))
        ));
    }
}
