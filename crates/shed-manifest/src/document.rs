//! Turns a manifest file's bytes into a JSON value, or into the sentence that
//! says where it stops reading. `tools.yml` is the same document as
//! `tools.json`, spelled in YAML; both come out as the same value, keys in
//! file order. A key said twice in one object is refused, not read as its
//! last value: a command copied and not renamed would otherwise silently
//! replace the one above it.

use std::{collections::HashSet, fmt};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// How a file is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Yaml,
}

/// Reads `bytes` (the file `file`) as `format`. The error is the sentence,
/// naming the line and column where the file stops making sense.
pub(crate) fn parse(file: &str, bytes: &[u8], format: Format) -> Result<Value, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let value = match format {
        Format::Json => serde_json::from_slice(bytes).map_err(|e| {
            let message = without_marks(&e.to_string());
            unreadable(file, "JSON", Some((e.line(), e.column())), &message)
        })?,
        Format::Yaml => serde_yaml_ng::from_slice(bytes).map_err(|e| {
            let message = without_marks(&e.to_string());
            let at = e.location().map(|l| (l.line(), l.column()));
            unreadable(file, "YAML", at, &message)
        })?,
    };
    // Both parsers keep the last of two equal keys; a second reading finds
    // them (the file is known to parse by now).
    let twice = match format {
        Format::Json => OnceEach
            .deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .map_err(|e| (e.to_string(), Some((e.line(), e.column())))),
        // serde_yaml_ng places such an error at the document's start, not
        // at the key: no place is better than a wrong one.
        Format::Yaml => OnceEach
            .deserialize(serde_yaml_ng::Deserializer::from_slice(bytes))
            .map_err(|e| (e.to_string(), None)),
    };
    match twice {
        Ok(()) => Ok(value),
        Err((key, Some((line, column)))) => Err(format!(
            "{file} says {} twice in one object, the second time at line {line}, column {column} — keep one",
            without_marks(&key)
        )),
        Err((key, None)) => Err(format!(
            "{file} says {} twice in one object — keep one",
            without_marks(&key)
        )),
    }
}

/// Walks a document, refusing an object that says a key twice; the error's
/// message is the key, quoted. It takes every value a `serde_json::Value`
/// takes, so a document that parsed fails it only for a key said twice.
struct OnceEach;

impl<'de> DeserializeSeed<'de> for OnceEach {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OnceEach {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(Value::String(key)));
            }
            map.next_value_seed(OnceEach)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(OnceEach)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
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
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }
}

fn unreadable(file: &str, language: &str, at: Option<(usize, usize)>, message: &str) -> String {
    match at {
        Some((line, column)) if line > 0 => format!(
            "{file} is not {language} at line {line}, column {column}: {message} — fix the file there"
        ),
        _ => format!("{file} is not {language}: {message} — fix the file"),
    }
}

/// The parsers' messages end in ` at line 3 column 5` (sometimes twice, or
/// ` at position 12`); the sentence says the place once, so drop them.
fn without_marks(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest
        .find(" at line ")
        .or_else(|| rest.find(" at position "))
    {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        let end = after.find(',').unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..6)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// A document with no key said twice (a JSON value cannot hold one)
        /// is never refused for one, in either spelling.
        #[test]
        fn a_document_without_a_repeated_key_parses(value in json_value()) {
            let json = value.to_string();
            prop_assert!(parse("tools.json", json.as_bytes(), Format::Json).is_ok(), "{json}");
            let yaml = serde_yaml_ng::to_string(&value).unwrap_or_default();
            if let Err(e) = parse("tools.yml", yaml.as_bytes(), Format::Yaml) {
                prop_assert!(!e.contains(" twice in one object"), "{e}\n{yaml}");
            }
        }
    }

    #[test]
    fn json_and_yaml_read_the_same_document() {
        let json = br#"{"b": {"x": 1}, "a": [true, "s"]}"#;
        let yaml = b"b:\n  x: 1\na:\n  - true\n  - s\n";
        let from_json = parse("tools.json", json, Format::Json).unwrap();
        let from_yaml = parse("tools.yml", yaml, Format::Yaml).unwrap();
        assert_eq!(from_json, from_yaml);
        let keys: Vec<_> = from_yaml.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a"], "file order is kept");
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        assert!(parse("tools.json", b"\xEF\xBB\xBF{}", Format::Json).is_ok());
    }

    #[test]
    fn bad_json_names_line_and_column() {
        let err = parse("tools.json", b"{\n  \"a\": 1\n  \"b\": 2\n}", Format::Json).unwrap_err();
        assert_eq!(
            err,
            "tools.json is not JSON at line 3, column 3: expected `,` or `}` — fix the file there"
        );
    }

    #[test]
    fn a_key_said_twice_is_refused_with_its_place() {
        let tools =
            b"{\n  \"log_run\": {\"query\": \".jog!\"},\n  \"log_run\": {\"query\": \".doc!\"}\n}";
        assert_eq!(
            parse("tools.json", tools, Format::Json).unwrap_err(),
            "tools.json says \"log_run\" twice in one object, the second time at line 3, column 11 — keep one"
        );
        let nested = br#"{"a": [{"input": {"who": "text", "who": "number"}}]}"#;
        let err = parse("tools.json", nested, Format::Json).unwrap_err();
        assert!(err.starts_with("tools.json says \"who\" twice"), "{err}");
        let keys_apart = br#"{"a": {"x": 1}, "b": {"x": 1}}"#;
        assert!(parse("tools.json", keys_apart, Format::Json).is_ok());
    }

    #[test]
    fn a_yaml_key_said_twice_is_refused() {
        let err = parse(
            "tools.yml",
            b"log_run:\n  query: a\nlog_run:\n  query: b\n",
            Format::Yaml,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "tools.yml says \"log_run\" twice in one object — keep one"
        );
    }

    #[test]
    fn bad_yaml_names_line_and_column() {
        let err = parse("tools.yml", b"a: 1\n b: [\n", Format::Yaml).unwrap_err();
        assert!(
            err.starts_with("tools.yml is not YAML at line 2, column "),
            "{err}"
        );
        assert!(!err.contains(" at line 2 column"), "{err}");
    }
}
