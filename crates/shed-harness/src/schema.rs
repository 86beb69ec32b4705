//! JSON Schemas as the model sees them: the host's schema with its `x-*`
//! extension keywords removed, and `true` (open) where it is not an object or
//! is larger than the schema bound.

use serde_json::{Map, Value};

/// The largest schema shown, once `x-*` keywords are removed (16 KiB).
pub const SCHEMA_BOUND_BYTES: usize = 16 * 1024;

/// Keywords whose value is a map from names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a schema or a list of schemas.
const SCHEMA_SLOTS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
];

/// Removes `x-*` keywords wherever a schema stands; names of properties and
/// values of `enum`, `const` and `default` are kept as they are.
pub fn strip_extensions(schema: &Value) -> Value {
    strip(schema, 0)
}

const MAX_DEPTH: usize = 256;

fn strip(schema: &Value, depth: usize) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    if depth > MAX_DEPTH {
        return Value::Bool(true);
    }
    let mut out = Map::with_capacity(object.len());
    for (key, value) in object {
        if key.starts_with("x-") {
            continue;
        }
        let kept = if SCHEMA_MAPS.contains(&key.as_str()) {
            match value {
                Value::Object(map) => Value::Object(
                    map.iter()
                        .map(|(name, sub)| (name.clone(), strip(sub, depth + 1)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else if SCHEMA_SLOTS.contains(&key.as_str()) {
            match value {
                Value::Array(list) => {
                    Value::Array(list.iter().map(|sub| strip(sub, depth + 1)).collect())
                }
                other => strip(other, depth + 1),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), kept);
    }
    Value::Object(out)
}

/// The `inputSchema` a `detail` entry carries: stripped, or `true` where the
/// host's is not an object or is larger than [`SCHEMA_BOUND_BYTES`].
pub fn detail_schema(schema: &Value) -> Value {
    if !schema.is_object() {
        return Value::Bool(true);
    }
    let stripped = strip_extensions(schema);
    match serde_json::to_vec(&stripped) {
        Ok(bytes) if bytes.len() <= SCHEMA_BOUND_BYTES => stripped,
        _ => Value::Bool(true),
    }
}

/// The schema a tool definition gives a command's `args`: the `detail`
/// schema, with the inputs the host fills from the call's context
/// (`x-source`) no longer required — the signature shows them optional, and
/// a model held to the schema must not be made to invent them — and an
/// object, open, where the host's is not one or is too large.
pub fn args_schema(schema: &Value) -> Value {
    let mut shown = detail_schema(schema);
    let Value::Object(object) = &mut shown else {
        return serde_json::json!({"type": "object"});
    };
    let filled: Vec<&String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, sub)| sub.get("x-source").is_some())
        .map(|(name, _)| name)
        .collect();
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| !filled.iter().any(|f| name.as_str() == Some(f.as_str())));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extension_keywords_go_and_property_names_stay() {
        let schema = json!({
            "type": "object",
            "x-owner": "host",
            "properties": {
                "x-name": {"type": "string", "x-source": "job"},
                "tags": {"type": "array", "items": {"type": "string", "x-hint": 1}}
            },
            "anyOf": [{"x-a": 1, "required": ["x-name"]}],
            "default": {"x-keep": true}
        });
        assert_eq!(
            strip_extensions(&schema),
            json!({
                "type": "object",
                "properties": {
                    "x-name": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "anyOf": [{"required": ["x-name"]}],
                "default": {"x-keep": true}
            })
        );
    }

    #[test]
    fn a_large_or_non_object_schema_reads_open() {
        assert_eq!(detail_schema(&json!(false)), json!(true));
        assert_eq!(detail_schema(&json!("string")), json!(true));
        let big: Map<String, Value> = (0..2000)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        assert_eq!(
            detail_schema(&json!({"type": "object", "properties": big})),
            json!(true)
        );
        let with_big_extension = json!({"type": "object", "x-blob": "a".repeat(20_000)});
        assert_eq!(
            detail_schema(&with_big_extension),
            json!({"type": "object"})
        );
    }

    #[test]
    fn an_input_the_host_fills_is_not_required_of_the_model() {
        let schema = json!({
            "type": "object",
            "properties": {"q": {"type": "string"}, "loomId": {"type": "string", "x-source": "job"}},
            "required": ["q", "loomId"]
        });
        assert_eq!(
            args_schema(&schema),
            json!({
                "type": "object",
                "properties": {"q": {"type": "string"}, "loomId": {"type": "string"}},
                "required": ["q"]
            })
        );
        assert_eq!(args_schema(&json!(true)), json!({"type": "object"}));
    }
}
