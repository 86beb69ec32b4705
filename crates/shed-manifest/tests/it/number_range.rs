//! A `number` argument that says its range: `{ "type": "number", "minimum":
//! 0 }` in `tools.json` reads, its schema carries JSON Schema's `minimum`
//! and `maximum`, a call outside the range is refused naming the argument
//! and its bound, and a range that cannot be is refused at deploy.

use crate::common;

use common::{apply, arg_errors, command, read, refused};
use proptest::prelude::*;
use serde_json::json;
use shed_manifest::{Filled, Manifest};

const JOG: (&str, &str) = (
    "vocab.json",
    r#"{ "jog": { "who": "text", "miles": "number" }, "tools": false }"#,
);

/// The run club's `log_run`, its miles from `minimum` to `maximum` (either
/// left out when `None`).
fn club(minimum: Option<f64>, maximum: Option<f64>) -> Manifest {
    let mut miles = json!({ "type": "number" });
    if let Some(minimum) = minimum {
        miles["minimum"] = json!(minimum);
    }
    if let Some(maximum) = maximum {
        miles["maximum"] = json!(maximum);
    }
    let tools = json!({ "log_run": {
        "description": "Log a run for the club",
        "input": { "who": "text", "miles": miles },
        "apply": { "entity": { "eid": "$run" }, "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } });
    read(&[JOG, ("tools.json", &tools.to_string())])
}

#[test]
fn a_minimum_is_in_the_schema_and_a_call_below_it_is_refused() {
    let tools = r#"{ "log_run": { "description": "Log a run for the club",
        "input": { "who": "text", "miles": { "type": "number", "minimum": 0, "maximum": 1000 } },
        "apply": { "entity": { "eid": "$run" }, "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#;
    let app = read(&[JOG, ("tools.json", tools)]);
    let log_run = command(&app, "log_run");
    assert_eq!(
        log_run.input_schema(),
        json!({ "type": "object",
                "properties": { "who": { "type": "string" },
                                "miles": { "type": "number", "minimum": 0, "maximum": 1000 } },
                "required": ["who", "miles"] })
    );
    assert_eq!(
        arg_errors(log_run, json!({ "who": "Ada", "miles": -3 })),
        "miles is at least 0, not -3"
    );
    assert_eq!(
        arg_errors(log_run, json!({ "who": "Ada", "miles": "1000.5" })),
        "miles is at most 1000, not 1000.5"
    );
    assert_eq!(
        apply(log_run, json!({ "who": "Ada", "miles": 0 }))["jog"]["miles"],
        json!(0)
    );
    assert_eq!(
        apply(log_run, json!({ "who": "Ada", "miles": "1000" }))["jog"]["miles"],
        json!(1000)
    );
}

#[test]
fn a_type_word_alone_still_reads() {
    let app = club(None, None);
    assert_eq!(
        apply(
            command(&app, "log_run"),
            json!({ "who": "Ada", "miles": -3 })
        )["jog"]["miles"],
        json!(-3)
    );
}

#[test]
fn a_range_that_cannot_be_is_refused_at_deploy() {
    let tools = r#"{
        "a": { "description": "Log a run for the club", "input": { "who": { "type": "text", "minimum": 1 } }, "query": ".jog!" },
        "b": { "description": "Log a run for the club", "input": { "miles": { "type": "number", "minimum": "0" } }, "query": ".jog!" },
        "c": { "description": "Log a run for the club", "input": { "miles": { "type": "number", "minimum": 5, "maximum": 1 } }, "query": ".jog!" },
        "d": { "description": "Log a run for the club", "input": { "miles": { "type": "number", "step": 1 } }, "query": ".jog!" },
        "e": { "description": "Log a run for the club", "input": { "miles": { "minimum": 0 } }, "query": ".jog!" } }"#;
    assert_eq!(
        refused(&[JOG, ("tools.json", tools)]),
        "tools.json: a.input.who has a minimum, and only a number has one — leave it out, or say \"type\": \"number\"; \
         b.input.miles.minimum is text — a minimum is a number, like 0; \
         c.input.miles: its minimum 5 is above its maximum 1 — no number is both; \
         d.input.miles: step — an argument says type, and a number minimum and maximum; \
         e.input.miles has no type — say \"type\": \"number\" (or text, bool, time, url)"
    );
}

proptest! {
    /// Any call of a number argument with a minimum is taken exactly when
    /// its value is at or above the minimum, and refused by name otherwise.
    #[test]
    fn a_value_is_taken_exactly_when_it_is_within_the_range(
        minimum in -1.0e6..1.0e6f64,
        maximum in proptest::option::of(-1.0e6..1.0e6f64),
        miles in -2.0e6..2.0e6f64,
    ) {
        let maximum = maximum.map(|maximum| maximum.max(minimum));
        let app = club(Some(minimum), maximum);
        let within = miles >= minimum && maximum.is_none_or(|maximum| miles <= maximum);
        match command(&app, "log_run").fill(&json!({ "who": "Ada", "miles": miles }), common::clock()) {
            Ok(Filled::Apply(_)) => prop_assert!(within, "{miles} taken outside {minimum}..{maximum:?}"),
            Ok(other) => prop_assert!(false, "filled {other:?}"),
            Err(errors) => {
                prop_assert!(!within, "{miles} refused within {minimum}..{maximum:?}: {errors}");
                prop_assert!(errors.to_string().starts_with("miles is at "), "{errors}");
            }
        }
    }
}
