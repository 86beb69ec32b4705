//! The apply reader: turns the wire's JSON (one bundle or a list of them) into
//! bundles, checking their shape. What needs the app's catalog — component and
//! column names, values under their types, eids that exist — is checked when
//! the bundles are written. Backend-free, and safe on any input.

use serde_json::{Map, Value};
use shed_words::thousands;

use crate::StoreError;
use crate::names::{is_alias, is_dollar_name, is_eid, is_word};

/// The most bytes one value of a column may hold: a text's (or a web
/// address's) UTF-8 bytes, any other value's JSON. Past it a write is
/// refused naming the `<component>.<column>`.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// The most bytes one write (an apply's bundles together, an undo's too)
/// may keep: the history entries it writes, each its values and the eids
/// it names as kept. Past it the write is refused, nothing written.
pub const MAX_WRITE_BYTES: usize = 256 * 1024;

/// Columns a bundle sets on a component, as named (a null value clears one).
pub type Columns = Vec<(String, Value)>;

/// One bundle of an apply.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// The entity the bundle writes.
    pub target: Target,
    /// `Some(Some(a))` sets the alias, `Some(None)` clears it.
    pub alias: Option<Option<String>>,
    /// Components as named: columns to set (a null value clears one), or
    /// `None` to remove the component.
    pub components: Vec<(String, Option<Columns>)>,
    /// Edges to add or drop.
    pub edges: Vec<EdgeChange>,
    /// Delete the entity (its history is kept).
    pub tombstone: bool,
    /// The entity version the writer read.
    pub was: Option<u64>,
    /// Bring a tombstoned entity back (an undo's, `undo.rs`): never set
    /// by [`read`], so the wire has no way to revive one.
    pub(crate) revive: bool,
}

/// Which entity a bundle writes, or an edge or ref points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `$name`: a new entity, the same one everywhere in the apply.
    Mint(String),
    /// An eid (32 hex digits).
    Eid(String),
    /// An alias.
    Alias(String),
}

impl Target {
    /// Reads `$name`, an eid or an alias.
    pub fn read(s: &str) -> Result<Target, StoreError> {
        if is_dollar_name(s) {
            Ok(Target::Mint(s.to_string()))
        } else if is_eid(s) {
            Ok(Target::Eid(s.to_string()))
        } else if is_alias(s) {
            Ok(Target::Alias(s.to_string()))
        } else {
            Err(StoreError::refused(format!(
                "{s} is not an eid, an alias or a $name — an eid is 32 hex digits, an alias a-z, 0-9 and -, a $name mints a new entity"
            )))
        }
    }

    /// The name as the writer gave it.
    pub fn given(&self) -> &str {
        match self {
            Target::Mint(s) | Target::Eid(s) | Target::Alias(s) => s,
        }
    }
}

/// An edge to add or drop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeChange {
    /// The edge's relation name (`[a-z][a-z0-9_]{0,39}`), e.g. `parent`.
    pub rel: String,
    /// The entity the edge points at (the bundle's entity is the one it
    /// points from).
    pub to: Target,
    /// Whether the edge is dropped (`"drop": true`) rather than added.
    pub drop: bool,
}

/// A value's size as [`MAX_VALUE_BYTES`] counts it: a text's UTF-8
/// bytes, any other value's JSON.
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        other => other.to_string().len(),
    }
}

/// Refuses the first value of `bundles` past [`MAX_VALUE_BYTES`], naming
/// its `<component>.<column>`.
pub(crate) fn check_values(bundles: &[Bundle]) -> Result<(), StoreError> {
    let columns = bundles
        .iter()
        .flat_map(|b| &b.components)
        .filter_map(|(component, columns)| Some((component, columns.as_ref()?)))
        .flat_map(|(component, columns)| columns.iter().map(move |(c, v)| (component, c, v)));
    for (component, column, value) in columns {
        let bytes = value_bytes(value);
        if bytes > MAX_VALUE_BYTES {
            return Err(StoreError::refused(format!(
                "{component}.{column} is {} bytes; a value may be at most {} bytes — shorten it",
                thousands(bytes),
                thousands(MAX_VALUE_BYTES)
            )));
        }
    }
    Ok(())
}

/// Refuses a write that keeps `kept` bytes, past [`MAX_WRITE_BYTES`].
pub(crate) fn check_write(kept: usize) -> Result<(), StoreError> {
    if kept > MAX_WRITE_BYTES {
        return Err(StoreError::refused(format!(
            "this write is {} bytes; a write may be at most {} bytes — split it into smaller writes",
            thousands(kept),
            thousands(MAX_WRITE_BYTES)
        )));
    }
    Ok(())
}

const BUNDLE_SHAPE: &str = r#"a bundle is {"entity": {"eid": "$new" | eid | alias}, "<component>": {…} | null, "edges"?: […], "tombstone"?: {}, "was"?: n}"#;

/// Reads an apply body: a bundle or a non-empty list of them.
pub fn read(body: &Value) -> Result<Vec<Bundle>, StoreError> {
    match body {
        Value::Object(map) => Ok(vec![read_bundle(map, None)?]),
        Value::Array(items) if items.is_empty() => Err(StoreError::refused(
            "this apply is an empty list — give it at least one bundle",
        )),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(map) => read_bundle(map, Some(i + 1)),
                _ => Err(StoreError::refused(format!(
                    "bundle {} is not an object — {BUNDLE_SHAPE}",
                    i + 1
                ))),
            })
            .collect(),
        _ => Err(StoreError::refused(format!(
            "an apply is a bundle or a list of them — {BUNDLE_SHAPE}"
        ))),
    }
}

fn read_bundle(map: &Map<String, Value>, index: Option<usize>) -> Result<Bundle, StoreError> {
    let which = index
        .map(|i| format!("bundle {i}"))
        .unwrap_or_else(|| "the bundle".into());
    let entity = map.get("entity").ok_or_else(|| {
        StoreError::refused(format!(
            r#"{which} has no entity — say {{"entity": {{"eid": "$new"}}}} to make one, or the eid or alias of the one to change"#
        ))
    })?;
    let (target, alias) = read_entity(entity)?;
    let mut bundle = Bundle {
        target,
        alias,
        components: Vec::new(),
        edges: Vec::new(),
        tombstone: false,
        was: None,
        revive: false,
    };
    for (key, value) in map {
        match key.as_str() {
            "entity" => {}
            "edges" => bundle.edges = read_edges(value)?,
            "tombstone" => match value {
                Value::Object(m) if m.is_empty() => bundle.tombstone = true,
                _ => {
                    return Err(StoreError::refused(
                        "tombstone is {} — it deletes the entity, keeping its history",
                    ));
                }
            },
            "was" => {
                bundle.was = Some(value.as_u64().ok_or_else(|| {
                    StoreError::refused("was is the entity version you read, a whole number")
                })?)
            }
            component => bundle
                .components
                .push((component.to_string(), read_columns(component, value)?)),
        }
    }
    Ok(bundle)
}

fn read_entity(entity: &Value) -> Result<(Target, Option<Option<String>>), StoreError> {
    let shape = || {
        StoreError::refused(
            r#"entity is {"eid": "$name" | eid | alias, "alias"?: name} — $name mints a new entity"#,
        )
    };
    let Value::Object(map) = entity else {
        return Err(shape());
    };
    if let Some(other) = map.keys().find(|k| *k != "eid" && *k != "alias") {
        return Err(StoreError::refused(format!(
            "entity takes eid and alias — not {other}"
        )));
    }
    let target = match map.get("eid") {
        Some(Value::String(s)) => Target::read(s)?,
        _ => return Err(shape()),
    };
    let alias = match map.get("alias") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(a)) if is_alias(a) => Some(Some(a.clone())),
        Some(other) => {
            let shown = other
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| other.to_string());
            return Err(StoreError::refused(format!(
                "alias {shown} is not a name — use a-z, 0-9 and -, starting with a letter or digit, up to 64 characters, not 32 hex digits"
            )));
        }
    };
    Ok((target, alias))
}

fn read_columns(
    component: &str,
    value: &Value,
) -> Result<Option<Vec<(String, Value)>>, StoreError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(cols) => Ok(Some(
            cols.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        )),
        _ => Err(StoreError::refused(format!(
            "{component} is an object of columns, or null to remove it"
        ))),
    }
}

fn read_edges(value: &Value) -> Result<Vec<EdgeChange>, StoreError> {
    let shape = || {
        StoreError::refused(
            r#"edges is a list of {"rel": name, "to": eid | alias | $name, "drop"?: true}"#,
        )
    };
    let Value::Array(items) = value else {
        return Err(shape());
    };
    items
        .iter()
        .map(|item| {
            let Value::Object(m) = item else {
                return Err(shape());
            };
            if m.keys().any(|k| !matches!(k.as_str(), "rel" | "to" | "drop")) {
                return Err(shape());
            }
            let rel = match m.get("rel") {
                Some(Value::String(r)) if is_word(r) => r.clone(),
                Some(Value::String(r)) => {
                    return Err(StoreError::refused(format!(
                        "edge rel {r} is not a name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
                    )));
                }
                _ => return Err(shape()),
            };
            let to = match m.get("to") {
                Some(Value::String(t)) => Target::read(t)?,
                _ => return Err(shape()),
            };
            let drop = match m.get("drop") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(shape()),
            };
            Ok(EdgeChange { rel, to, drop })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn reads_a_list() {
        let b = read(&json!([
            {"entity": {"eid": "$run", "alias": "tuesday"}, "jog": {"miles": 5}, "doc": null},
            {"entity": {"eid": "tuesday"}, "edges": [{"rel": "follows", "to": "$run", "drop": true}], "tombstone": {}, "was": 3}
        ]))
        .unwrap();
        assert_eq!(b[0].target, Target::Mint("$run".into()));
        assert_eq!(b[0].alias, Some(Some("tuesday".into())));
        assert_eq!(b[0].components[1], ("doc".into(), None));
        assert!(b[1].tombstone);
        assert_eq!(b[1].was, Some(3));
        assert!(b[1].edges[0].drop);
    }

    #[test]
    fn refuses_shapes_with_sentences() {
        let e = |v: Value| read(&v).unwrap_err().to_string();
        assert!(e(json!([])).contains("empty list"));
        assert!(e(json!({"jog": {}})).starts_with("the bundle has no entity"));
        assert!(e(json!([{"entity": {"eid": "$a"}}, 5])).starts_with("bundle 2 is not an object"));
        assert!(
            e(json!({"entity": {"eid": "Not An Eid"}})).starts_with("Not An Eid is not an eid")
        );
        assert!(
            e(json!({"entity": {"eid": "$a"}, "jog": 5}))
                .starts_with("jog is an object of columns")
        );
        assert!(
            e(json!({"entity": {"eid": "$a"}, "was": -1})).starts_with("was is the entity version")
        );
        assert!(
            e(json!({"entity": {"eid": "$a", "alias": "Tue"}}))
                .starts_with("alias Tue is not a name")
        );
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[$a-z0-9 ]{0,12}".prop_map(Value::String),
            prop_oneof![
                Just("entity"),
                Just("eid"),
                Just("alias"),
                Just("edges"),
                Just("rel"),
                Just("to"),
                Just("drop"),
                Just("tombstone"),
                Just("was"),
                Just("$run")
            ]
            .prop_map(|s| Value::String(s.into())),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("entity".to_string()),
                            Just("eid".to_string()),
                            Just("alias".to_string()),
                            Just("edges".to_string()),
                            Just("tombstone".to_string()),
                            Just("was".to_string()),
                            Just("rel".to_string()),
                            Just("to".to_string()),
                            "[a-z]{1,6}"
                        ],
                        inner
                    ),
                    0..5
                )
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// A value is taken exactly when its bytes are within the bound,
        /// else refused naming its field.
        #[test]
        fn a_value_is_taken_exactly_within_its_bound(
            bytes in (MAX_VALUE_BYTES - 4)..(MAX_VALUE_BYTES + 4),
            wide in any::<bool>(),
        ) {
            // A two-byte character where asked, so bytes, not characters, count.
            let text = if wide && bytes >= 2 {
                format!("é{}", "x".repeat(bytes - 2))
            } else {
                "x".repeat(bytes)
            };
            let bundles = read(&json!([
                {"entity": {"eid": "$a"}, "jog": {"miles": 1}},
                {"entity": {"eid": "$a"}, "jog": {"notes": text}}
            ]))
            .unwrap();
            match check_values(&bundles) {
                Ok(()) => prop_assert!(bytes <= MAX_VALUE_BYTES),
                Err(StoreError::Refused(said)) => {
                    prop_assert!(bytes > MAX_VALUE_BYTES);
                    prop_assert_eq!(said, format!(
                        "jog.notes is {} bytes; a value may be at most 65,536 bytes — shorten it",
                        thousands(bytes)
                    ));
                }
                Err(other) => prop_assert!(false, "{other}"),
            }
        }

        #[test]
        fn any_json_reads_or_gets_a_sentence(v in arb_json()) {
            match read(&v) {
                Ok(bundles) => prop_assert!(!bundles.is_empty()),
                Err(e) => prop_assert!(matches!(e, StoreError::Refused(s) if !s.is_empty())),
            }
        }

        #[test]
        fn any_text_parsed_as_json_never_panics(s in ".{0,64}") {
            if let Ok(v) = serde_json::from_str::<Value>(&s) {
                let _ = read(&v);
            }
        }
    }
}
