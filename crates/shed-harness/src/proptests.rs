//! Property tests of the signature and listing code over arbitrary JSON
//! Schemas and listings: a signature is at most 400 characters, a listing
//! stays within its bound, and nothing panics.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::listing::{self, json_len};
use crate::signature::{self, SIGNATURE_MAX_CHARS, SignatureSource};

const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "$ref",
    "default",
    "x-source",
    "additionalProperties",
    "name",
    "inputSchema",
    "outputs",
    "effect",
    "scope",
    "readOnlyGranted",
    "developer",
    "actors",
    "origin",
    "grant",
    "description",
    "title",
];
const WORDS: &[&str] = &[
    "string",
    "object",
    "array",
    "integer",
    "number",
    "boolean",
    "null",
    "read",
    "write",
    "loom",
    "session",
    "pattern",
    "person",
    "#/$defs/Thing",
    "",
];

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,30}".prop_map(Value::String),
        prop::sample::select(WORDS).prop_map(|w| json!(w)),
    ];
    let key = prop_oneof![
        prop::sample::select(KEYS).prop_map(str::to_string),
        "\\PC{0,12}"
    ];
    leaf.prop_recursive(6, 96, 10, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..10)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #[test]
    fn any_schema_gives_a_line_of_at_most_400_characters(
        schema in arb_json(),
        outputs in arb_json(),
        name in "\\PC{0,500}",
        effect in proptest::option::of("\\PC{0,80}"),
        scope in proptest::option::of("\\PC{0,80}"),
    ) {
        let line = signature::render(&SignatureSource {
            name: &name,
            input_schema: &schema,
            outputs: Some(&outputs),
            effect: effect.as_deref(),
            scope: scope.as_deref(),
        });
        prop_assert!(line.chars().count() <= SIGNATURE_MAX_CHARS);
    }

    #[test]
    fn any_listing_renders_within_its_bound(rows in prop::collection::vec(arb_json(), 0..40), bound in 2048usize..20_000) {
        let Ok(catalog) = Catalog::from_listing(&json!({ "commands": rows })) else {
            return Ok(());
        };
        let out = listing::render(&catalog, &[], bound, "out-1");
        prop_assert!(json_len(&out) <= bound, "{} > {bound}", json_len(&out));
        let shown = out["entries"].as_array().map(Vec::len).unwrap_or(0);
        prop_assert_eq!(shown + out["omitted"].as_u64().unwrap_or(0) as usize, catalog.rows().len() + catalog.omitted);
    }

    #[test]
    fn any_listing_value_reads_or_is_refused(value in arb_json()) {
        let _ = Catalog::from_listing(&value);
    }
}
