//! Property tests of the signature and listing code over arbitrary JSON
//! Schemas and listings: a signature is at most 400 characters, a listing
//! stays within its bound, and nothing panics; and of results: a batch of any
//! mix of results stays within its bound or counts what it left out, and a
//! withheld answer reads the same whatever it held.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::calls::{Answer, CallResult, CallSpec};
use crate::catalog::Catalog;
use crate::harness::{render_alone, render_batch};
use crate::labels::Label;
use crate::listing::{self, json_len};
use crate::outcome::HostOutcome;
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

/// Any host outcome: any code, ids, completed list and body size.
fn arb_outcome() -> impl Strategy<Value = HostOutcome> {
    (
        any::<bool>(),
        "\\PC{0,80}",
        prop::sample::select(vec![
            "ok",
            "forbidden",
            "refused",
            "bad-args",
            "not-found",
            "error",
        ]),
        prop::collection::vec("\\PC{0,70}", 0..40),
        "\\PC{0,3000}",
        "\\PC{0,200}",
    )
        .prop_map(|(ok, id, code, completed, body, message)| {
            HostOutcome::from_json(&json!({
                "ok": ok, "id": id, "code": code, "mayHaveLanded": ok,
                "completed": completed, "body": {"rows": body}, "version": 3,
                "message": message,
            }))
        })
}

fn executed(outcome: HostOutcome, signature: Option<String>, answer: Answer) -> CallResult {
    CallResult::Executed {
        spec: Box::new(CallSpec {
            command: "demo/runs.find".into(),
            args: json!({}),
            loom_id: None,
            expected_version: None,
        }),
        outcome: Box::new(outcome),
        signature,
        answer,
    }
}

/// Any call's result, of every form.
fn arb_result() -> impl Strategy<Value = CallResult> {
    let name = "\\PC{0,300}";
    let message = "\\PC{0,2000}";
    prop_oneof![
        (arb_outcome(), proptest::option::of("\\PC{0,400}")).prop_map(|(outcome, signature)| {
            let answer = Answer::Admitted {
                entry: outcome.admitted_entry(),
                label: Label::bottom(),
            };
            executed(outcome, signature, answer)
        }),
        arb_outcome().prop_map(|outcome| executed(
            outcome,
            None,
            Answer::Withheld {
                reason_code: "above_observation_ceiling"
            }
        )),
        (name, prop::collection::vec(name, 0..4)).prop_map(|(command, suggestions)| {
            CallResult::Unknown {
                command,
                suggestions,
            }
        }),
        message.prop_map(|message| CallResult::NotDelivered {
            reason: "invalid_input",
            message
        }),
        (name, message).prop_map(|(command, message)| CallResult::NotGranted { command, message }),
        (name, message).prop_map(|(command, message)| CallResult::Lost { command, message }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_batch_fits_its_bound_or_counts_what_it_left_out(
        results in prop::collection::vec(arb_result(), 1..=16),
        bound in 1024usize..40_000,
    ) {
        let results: Vec<(String, CallResult)> = results
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("out-{}", i + 2), r))
            .collect();
        let (out, shown) = render_batch(&results, "out-1", bound);
        prop_assert!(json_len(&out) <= bound, "{} > {bound}", json_len(&out));
        let kept = out["results"].as_array().map(Vec::len).unwrap_or(0);
        let omitted = out["omitted"]["count"].as_u64().unwrap_or(0) as usize;
        prop_assert_eq!(kept + omitted, results.len());
        prop_assert!(omitted == 0 || out["truncated"] == true);
        let text = out.to_string();
        for hint in out["hints"].as_array().into_iter().flatten() {
            prop_assert_eq!(text.matches(hint.as_str().unwrap_or("")).count(), 1);
        }
        for (i, was_shown) in shown.iter().enumerate() {
            let entry = out["results"].get(i).is_some_and(|r| r.get("entry").is_some());
            prop_assert_eq!(*was_shown, entry);
        }
    }

    #[test]
    fn a_withheld_answer_reads_the_same_whatever_it_held(
        one in arb_outcome(),
        other in arb_outcome(),
        before in prop::collection::vec(arb_result(), 0..8),
        bound in 1024usize..40_000,
    ) {
        let withheld = |outcome: HostOutcome| executed(outcome, None, Answer::Withheld {
            reason_code: "above_observation_ceiling",
        });
        let (one, other) = (withheld(one), withheld(other));
        prop_assert_eq!(render_alone(&one, "out-1", bound), render_alone(&other, "out-1", bound));
        let batch = |last: &CallResult| {
            let mut results: Vec<(String, CallResult)> = before
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("out-{}", i + 2), r.clone()))
                .collect();
            results.push(("out-99".into(), last.clone()));
            render_batch(&results, "out-1", bound)
        };
        prop_assert_eq!(batch(&one), batch(&other));
    }
}
