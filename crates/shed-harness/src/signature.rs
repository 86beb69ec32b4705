//! One-line signatures read from a command's argument schema, the line
//! `list_commands` shows and a `bad-args` refusal repeats:
//! `name(req: T, opt?: T = default) -> {a, b}  [effect, target]`.

use std::fmt::Write;

use serde_json::{Map, Value};

/// The longest signature line, in characters.
pub const SIGNATURE_MAX_CHARS: usize = 400;
const ELLIPSIS: &str = "…";
const MAX_DEPTH: usize = 64;

/// What a signature is read from: one manifest row.
#[derive(Clone, Copy, Debug)]
pub struct SignatureSource<'a> {
    /// The command's name, the line's start.
    pub name: &'a str,
    /// The JSON schema of the command's arguments: its properties become
    /// the parameters, `name: T` when required and `name?: T` when optional.
    pub input_schema: &'a Value,
    /// The row's `outputs`: an object schema, a map or a list naming the
    /// answer's fields, shown as `-> {a, b}`; `None` shows no fields.
    pub outputs: Option<&'a Value>,
    /// The declared effect (`read`, `write`), first in the brackets; `None`
    /// leaves it out.
    pub effect: Option<&'a str>,
    /// What the command acts on (`app`), last in the brackets; `None` shows
    /// `global`.
    pub scope: Option<&'a str>,
}

/// Renders the signature line, at most [`SIGNATURE_MAX_CHARS`] characters.
pub fn render(source: &SignatureSource<'_>) -> String {
    let params = parameters(source.input_schema);
    let tail = tail(source);
    let full = assemble(source.name, params.as_deref(), false, &tail);
    if full.chars().count() <= SIGNATURE_MAX_CHARS {
        return full;
    }
    // Replace trailing parameters by `…` until the line fits.
    if let Some(params) = params.as_deref() {
        for keep in (0..params.len()).rev() {
            let line = assemble(source.name, Some(&params[..keep]), true, &tail);
            if line.chars().count() <= SIGNATURE_MAX_CHARS {
                return line;
            }
        }
    }
    let mut cut: String = full.chars().take(SIGNATURE_MAX_CHARS - 1).collect();
    cut.push_str(ELLIPSIS);
    cut
}

fn assemble(name: &str, params: Option<&[String]>, elided: bool, tail: &str) -> String {
    let mut line = String::with_capacity(name.len() + tail.len() + 64);
    line.push_str(name);
    line.push('(');
    match params {
        None => line.push_str("..."),
        Some(list) => {
            let parts = list.iter().map(String::as_str);
            let ellipsis = elided.then_some(ELLIPSIS);
            for (i, part) in parts.chain(ellipsis).enumerate() {
                if i > 0 {
                    line.push_str(", ");
                }
                line.push_str(part);
            }
        }
    }
    line.push(')');
    line.push_str(tail);
    line
}

fn tail(source: &SignatureSource<'_>) -> String {
    let mut out = String::new();
    let fields = output_fields(source.outputs);
    if !fields.is_empty() {
        out.push_str(" -> {");
        out.push_str(&fields.join(", "));
        out.push('}');
    }
    out.push_str("  [");
    if let Some(effect) = source.effect {
        out.push_str(effect);
        out.push_str(", ");
    }
    out.push_str(source.scope.unwrap_or("global"));
    out.push(']');
    out
}

/// The answer's declared fields: the keys of `outputs` (or of its
/// `properties` where it is an object schema), or its members where it is a
/// list of names.
fn output_fields(outputs: Option<&Value>) -> Vec<&str> {
    match outputs {
        Some(Value::Object(map)) => {
            let schema_props = map
                .get("properties")
                .and_then(Value::as_object)
                .filter(|_| map.get("type").and_then(Value::as_str) == Some("object"));
            schema_props
                .unwrap_or(map)
                .keys()
                .map(String::as_str)
                .collect()
        }
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The parameter list, or `None` where the schema leaves its arguments open.
fn parameters(schema: &Value) -> Option<Vec<String>> {
    let object = match schema {
        Value::Object(object) => object,
        Value::Bool(false) => return Some(vec!["never".to_string()]),
        _ => return None,
    };
    let properties = match object.get("properties").and_then(Value::as_object) {
        Some(p) if !p.is_empty() => p,
        _ => {
            return if object.get("additionalProperties") == Some(&Value::Bool(false)) {
                Some(Vec::new())
            } else {
                None
            };
        }
    };
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut first = Vec::new();
    let mut rest = Vec::new();
    for (name, sub) in properties {
        // One pass over the property's keywords, not a look-up each.
        let mut filled_by_host = false;
        let mut default = None;
        for (keyword, value) in sub.as_object().into_iter().flatten() {
            match keyword.as_str() {
                "x-source" => filled_by_host = true,
                "default" => default = Some(value),
                _ => {}
            }
        }
        let ty = type_of(sub, 0);
        let mut param = String::with_capacity(name.len() + ty.len() + 3);
        param.push_str(name);
        let optional = !required.contains(&name.as_str()) || filled_by_host;
        param.push_str(if optional { "?: " } else { ": " });
        param.push_str(&ty);
        // "a default follows `=`": for every parameter that has one,
        // required ones included.
        if let Some(default) = default {
            // Writing to a String cannot fail.
            let _ = write!(param, " = {default}");
        }
        if optional {
            rest.push(param);
        } else {
            first.push(param);
        }
    }
    first.extend(rest);
    Some(first)
}

/// A schema's type as the signature writes it.
pub fn type_of(schema: &Value, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "any".to_string();
    }
    let object = match schema {
        Value::Bool(false) => return "never".to_string(),
        Value::Object(object) => object,
        _ => return "any".to_string(),
    };
    let keywords = Keywords::of(object);
    if let Some(reference) = keywords.reference {
        let name = reference.rsplit(['/', '#']).next().unwrap_or_default();
        return if name.is_empty() { "any" } else { name }.to_string();
    }
    if let Some(members) = keywords.enumeration {
        return union(members.iter().map(enum_member));
    }
    if let Some(constant) = keywords.constant {
        return enum_member(constant);
    }
    if let Some(members) = keywords.any_of.or(keywords.one_of) {
        return union(members.iter().map(|m| type_of(m, depth + 1)));
    }
    match keywords.ty {
        Some(Value::String(ty)) => named_type(ty, object, depth),
        Some(Value::Array(types)) => union(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(|ty| named_type(ty, object, depth)),
        ),
        _ if object
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty()) =>
        {
            "{...}".to_string()
        }
        _ if object.contains_key("items") => named_type("array", object, depth),
        _ => "any".to_string(),
    }
}

/// The keywords [`type_of`] reads first, found in one pass over a schema
/// rather than one look-up each.
#[derive(Default)]
struct Keywords<'a> {
    reference: Option<&'a str>,
    enumeration: Option<&'a Vec<Value>>,
    constant: Option<&'a Value>,
    any_of: Option<&'a Vec<Value>>,
    one_of: Option<&'a Vec<Value>>,
    ty: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn of(object: &'a Map<String, Value>) -> Keywords<'a> {
        let mut keywords = Keywords::default();
        for (key, value) in object {
            match key.as_str() {
                "$ref" => keywords.reference = value.as_str(),
                "enum" => keywords.enumeration = value.as_array(),
                "const" => keywords.constant = Some(value),
                "anyOf" => keywords.any_of = value.as_array(),
                "oneOf" => keywords.one_of = value.as_array(),
                "type" => keywords.ty = Some(value),
                _ => {}
            }
        }
        keywords
    }
}

fn named_type(ty: &str, object: &Map<String, Value>, depth: usize) -> String {
    match ty {
        "array" => {
            let inner = object
                .get("items")
                .map(|items| type_of(items, depth + 1))
                .unwrap_or_else(|| "any".to_string());
            if inner.contains('|') {
                format!("({inner})[]")
            } else {
                format!("{inner}[]")
            }
        }
        "object" => {
            if object
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty())
            {
                "{...}".to_string()
            } else {
                "object".to_string()
            }
        }
        other => other.to_string(),
    }
}

/// Joins members with `|`, `never` where there are none.
fn union(members: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for member in members {
        if !seen.contains(&member) {
            seen.push(member);
        }
    }
    if seen.is_empty() {
        "never".to_string()
    } else {
        seen.join("|")
    }
}

/// An enum member: a plain string as it is, unless it is empty or holds
/// whitespace, `|`, a quote, a backslash or a control character, in which
/// case it is quoted and escaped as JSON; other values as JSON.
fn enum_member(member: &Value) -> String {
    match member {
        Value::String(s) => {
            let needs_quotes = s.is_empty()
                || s.chars()
                    .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '|' | '"' | '\\'));
            if needs_quotes {
                member.to_string()
            } else {
                s.clone()
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig(
        schema: Value,
        outputs: Option<Value>,
        effect: Option<&str>,
        scope: Option<&str>,
    ) -> String {
        render(&SignatureSource {
            name: "c",
            input_schema: &schema,
            outputs: outputs.as_ref(),
            effect,
            scope,
        })
    }

    fn param(schema: Value) -> String {
        sig(
            json!({"type": "object", "properties": {"p": schema}, "required": ["p"]}),
            None,
            None,
            None,
        )
    }

    #[test]
    fn the_spec_example() {
        let line = render(&SignatureSource {
            name: "people-discovery.dossier",
            input_schema: &json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "default": 50},
                    "entity_id": {"type": "string"}
                },
                "required": ["entity_id"]
            }),
            outputs: Some(&json!({"messages": {}, "records": {}})),
            effect: Some("read"),
            scope: None,
        });
        assert_eq!(
            line,
            "people-discovery.dossier(entity_id: string, limit?: integer = 50) -> {messages, records}  [read, global]"
        );
    }

    // "each group in the schema's order; a default follows `=`" — for a
    // required parameter as for an optional one.
    #[test]
    fn a_default_follows_the_equals_sign_for_required_parameters_too() {
        let line = render(&SignatureSource {
            name: "x.source",
            input_schema: &json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "default": 50},
                    "kind": {"type": "string", "default": "run"},
                    "q": {"type": "string"},
                    "after": {"type": "string", "default": null}
                },
                "required": ["limit", "q"]
            }),
            outputs: None,
            effect: Some("read"),
            scope: Some("app"),
        });
        assert_eq!(
            line,
            r#"x.source(limit: integer = 50, q: string, kind?: string = "run", after?: string = null)  [read, app]"#
        );
    }

    #[test]
    fn host_filled_inputs_read_optional() {
        let line = sig(
            json!({"type": "object", "properties": {"loomId": {"type": "string", "x-source": "job"}, "q": {"type": "string"}}, "required": ["loomId", "q"]}),
            None,
            Some("write"),
            Some("loom"),
        );
        assert_eq!(line, "c(q: string, loomId?: string)  [write, loom]");
    }

    #[test]
    fn every_schema_form() {
        assert_eq!(
            param(json!({"enum": ["a", "b", "c"]})),
            "c(p: a|b|c)  [global]"
        );
        assert_eq!(
            param(json!({"enum": ["", "a b", "x|y", "q\"", "b\\", "t\u{1}", "ok", 3, null]})),
            r#"c(p: ""|"a b"|"x|y"|"q\""|"b\\"|"t\u0001"|ok|3|null)  [global]"#
        );
        assert_eq!(
            param(json!({"type": "array", "items": {"type": "string"}})),
            "c(p: string[])  [global]"
        );
        assert_eq!(
            param(json!({"type": "object", "properties": {"a": {}}})),
            "c(p: {...})  [global]"
        );
        assert_eq!(param(json!({"type": "object"})), "c(p: object)  [global]");
        assert_eq!(
            param(json!({"$ref": "#/$defs/Person"})),
            "c(p: Person)  [global]"
        );
        assert_eq!(param(json!(false)), "c(p: never)  [global]");
        assert_eq!(param(json!({"enum": []})), "c(p: never)  [global]");
        assert_eq!(param(json!({"anyOf": []})), "c(p: never)  [global]");
        assert_eq!(param(json!({"oneOf": []})), "c(p: never)  [global]");
        assert_eq!(
            param(json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            "c(p: string|null)  [global]"
        );
        assert_eq!(
            param(json!({"type": ["integer", "null"]})),
            "c(p: integer|null)  [global]"
        );
        assert_eq!(sig(json!(true), None, None, None), "c(...)  [global]");
        assert_eq!(
            sig(json!({"type": "object"}), None, None, None),
            "c(...)  [global]"
        );
        assert_eq!(
            sig(
                json!({"type": "object", "additionalProperties": false}),
                None,
                None,
                None
            ),
            "c()  [global]"
        );
    }

    #[test]
    fn outputs_and_bracket() {
        assert_eq!(
            sig(json!(true), Some(json!({})), None, None),
            "c(...)  [global]"
        );
        assert_eq!(
            sig(
                json!(true),
                Some(json!(["entities", "version"])),
                Some("write"),
                Some("app")
            ),
            "c(...) -> {entities, version}  [write, app]"
        );
    }

    #[test]
    fn long_lines_lose_trailing_parameters() {
        let props: Map<String, Value> = (0..60)
            .map(|i| (format!("parameter_number_{i}"), json!({"type": "string"})))
            .collect();
        let line = sig(
            json!({"type": "object", "properties": props}),
            Some(json!({"a": 1})),
            Some("read"),
            None,
        );
        assert!(line.chars().count() <= SIGNATURE_MAX_CHARS, "{line}");
        assert!(line.contains("parameter_number_0?: string"));
        assert!(line.ends_with(", …) -> {a}  [read, global]"), "{line}");
        let long_name = "n".repeat(500);
        let line = render(&SignatureSource {
            name: &long_name,
            input_schema: &json!(true),
            outputs: None,
            effect: None,
            scope: None,
        });
        assert_eq!(line.chars().count(), SIGNATURE_MAX_CHARS);
        assert!(line.ends_with('…'));
    }
}
