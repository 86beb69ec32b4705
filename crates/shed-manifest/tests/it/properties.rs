//! Property tests: arbitrary JSON and YAML documents as manifests, and
//! arbitrary argument objects for a command, give a manifest, a sentence or
//! argument errors — never a panic; any text given a `time`, by any clock,
//! is a time or the one sentence saying what a time is.

use crate::common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use shed_manifest::{Filled, Timestamp, read_app};

/// Words a manifest is made of, so arbitrary documents reach deep checks
/// rather than stopping at the first unknown key.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("description".to_owned()),
        Just("input".to_owned()),
        Just("apply".to_owned()),
        Just("query".to_owned()),
        Just("view".to_owned()),
        Just("entity".to_owned()),
        Just("eid".to_owned()),
        Just("jog".to_owned()),
        Just("doc".to_owned()),
        Just("who".to_owned()),
        Just("text".to_owned()),
        Just("number".to_owned()),
        Just("time".to_owned()),
        Just("tools".to_owned()),
        Just("{{who}}".to_owned()),
        Just("Run by {{who}}".to_owned()),
        Just("board.html".to_owned()),
        Just("Log a run for the board".to_owned()),
        "[a-z_{}$. &%]{0,12}",
        any::<String>(),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((word(), inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Text near a time: the words in any case and spacing, words like them,
/// dates and times, and anything at all.
fn time_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ \t]{0,2}(now|today|yesterday)[ \t]{0,2}",
        "(?i)(now|today|yesterday)",
        "(now|today|yesterday|tomorrow|to day|noon|midnight|last week)[ !.0-9a-z]{0,4}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+-][0-9]{2}:[0-9]{2})?)?",
        any::<String>(),
    ]
}

/// Any instant jiff can hold, to the second: the clock a call is filled by.
fn clock() -> impl Strategy<Value = Timestamp> {
    (Timestamp::MIN.as_second()..=Timestamp::MAX.as_second())
        .prop_map(|second| Timestamp::from_second(second).expect("in range"))
}

fn to_yaml(value: &Value) -> String {
    serde_yaml_ng::to_string(value).unwrap_or_default()
}

/// Every command of whatever read gets filled with `args`; none may panic.
fn exercise(files: &BTreeMap<String, Vec<u8>>, args: &Value) {
    match read_app(files, common::APP) {
        Ok(manifest) => {
            for command in &manifest.commands {
                let _ = command.input_schema();
                let _ = command.call_shape();
                if let Ok(Filled::Query(line)) = command.fill(args, common::clock()) {
                    assert!(!line.contains("{{"), "a hole left in {line}");
                }
            }
        }
        Err(refusal) => assert!(!refusal.0.is_empty()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_json_manifests_never_panic(
        vocab in json_value(),
        tools in json_value(),
        args in json_value(),
    ) {
        let files = common::files(&[
            ("vocab.json", &vocab.to_string()),
            ("tools.json", &tools.to_string()),
            ("board.html", ""),
        ]);
        exercise(&files, &args);
    }

    #[test]
    fn arbitrary_yaml_manifests_never_panic(tools in json_value(), args in json_value()) {
        let files = common::files(&[
            ("vocab.json", r#"{ "jog": { "who": "text", "miles": "number" } }"#),
            ("tools.yml", &to_yaml(&tools)),
        ]);
        exercise(&files, &args);
    }

    #[test]
    fn arbitrary_bytes_never_panic(vocab in any::<Vec<u8>>(), tools in any::<Vec<u8>>(), yaml in any::<bool>()) {
        let mut files = BTreeMap::new();
        files.insert("vocab.json".to_owned(), vocab);
        files.insert(if yaml { "tools.yml" } else { "tools.json" }.to_owned(), tools);
        exercise(&files, &Value::Null);
    }

    #[test]
    fn arbitrary_entries_are_read_or_refused_by_name(
        entry in prop::collection::vec((word(), json_value()), 0..6),
    ) {
        let entry = Value::Object(entry.into_iter().collect());
        let tools = json!({ "log_run": entry }).to_string();
        let files = common::files(&[
            ("vocab.json", r#"{ "jog": { "who": "text" } }"#),
            ("tools.json", &tools),
            ("board.html", ""),
        ]);
        match read_app(&files, common::APP) {
            Ok(manifest) => prop_assert!(manifest.command("log_run").is_some()),
            Err(refusal) => prop_assert!(refusal.0.starts_with("tools.json: "), "{}", refusal.0),
        }
    }

    #[test]
    fn arbitrary_arguments_give_a_fill_or_errors(args in json_value(), who in json_value(), miles in json_value()) {
        let club = common::read(&[
            ("vocab.json", r#"{ "jog": { "who": "text", "miles": "number", "at": "time" } }"#),
            ("tools.json", r#"{ "log_run": {
                "description": "Log a run for the club leaderboard",
                "input": { "who": "text", "miles": "number" },
                "apply": { "entity": { "eid": "$run" }, "doc": { "title": "Run by {{who}}" },
                           "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#),
        ]);
        let mut with_both = args.as_object().cloned().unwrap_or_default();
        with_both.insert("who".into(), who);
        with_both.insert("miles".into(), miles);
        for command in &club.commands {
            for args in [&args, &Value::Object(with_both.clone())] {
                // A value may itself hold `{{` (the text "{{who}}" is a fine
                // name to log a run for): it comes back as given. Only when
                // no value does is any `{{` in the fill a hole left unfilled.
                let given_braces = args.to_string().contains("{{");
                match command.fill(args, common::clock()) {
                    Ok(Filled::Apply(body)) => {
                        prop_assert!(given_braces || !body.to_string().contains("{{"))
                    }
                    Ok(Filled::Query(line)) => prop_assert!(given_braces || !line.contains("{{")),
                    Err(errors) => prop_assert!(!errors.0.is_empty()),
                }
            }
        }
    }

    #[test]
    fn any_text_in_a_query_hole_comes_back_unchanged(value in any::<String>()) {
        let club = common::read(&[("vocab.json", r#"{ "jog": { "who": "text" } }"#)]);
        let find = common::command(&club, "find_jog");
        let line = common::query(find, json!({ "who": value }));
        let clause = line.split('&').find_map(|c| c.strip_prefix(".jog.who="));
        let decoded = percent_encoding::percent_decode_str(clause.unwrap_or_default())
            .decode_utf8()
            .map(|d| d.into_owned());
        prop_assert_eq!(decoded.ok(), Some(value));
    }

    #[test]
    fn any_text_for_a_time_is_a_time_or_the_sentence(text in time_text(), now in clock()) {
        let app = common::read(&[
            ("vocab.json", r#"{ "jog": { "at": "time" }, "tools": false }"#),
            ("tools.json", r#"{ "log_run": { "description": "Log a run at a time",
                "input": { "at": "time" },
                "apply": { "entity": { "eid": "$run" }, "jog": { "at": "{{at}}" } } } }"#),
        ]);
        let log_run = common::command(&app, "log_run");
        let trimmed = text.trim();
        let a_word = ["now", "today", "yesterday"].iter().any(|w| trimmed.eq_ignore_ascii_case(w));
        let a_time = trimmed.parse::<Timestamp>().is_ok();
        let a_date = trimmed.len() == "2026-09-01".len() && trimmed.parse::<jiff::civil::Date>().is_ok();
        match log_run.fill(&json!({ "at": text }), now) {
            Ok(Filled::Apply(body)) => {
                let kept = body["jog"]["at"].as_str().unwrap_or_default().to_owned();
                prop_assert!(
                    kept.parse::<Timestamp>().is_ok() || kept.parse::<jiff::civil::Date>().is_ok(),
                    "{text:?} kept as {kept:?}, not a time"
                );
                prop_assert!(a_word || a_time || a_date, "{text:?} taken as {kept:?}");
            }
            Ok(other) => prop_assert!(false, "log_run filled {other:?}"),
            Err(errors) => {
                prop_assert!(!(a_time || a_date), "{text:?} refused: {errors}");
                prop_assert_eq!(
                    errors.to_string(),
                    "at is a time, like 2026-09-01 or 2026-09-01T10:00:00Z, \
                     or now, today or yesterday (the server's clock, UTC)"
                );
            }
        }
    }
}
