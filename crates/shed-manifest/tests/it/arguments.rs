//! Arguments read under their declared types: a table of good and bad values
//! for every type, the spec's refusals, and holes that survive the trip
//! through the store's filter reader.

use crate::common;

use common::{arg_errors, command, query, read};
use percent_encoding::percent_decode_str;
use serde_json::{Value, json};
use shed_manifest::{Filled, Manifest, Timestamp};

/// What a `time` argument takes, as its schema and its refusals say it.
const TIME: &str = "a time, like 2026-09-01 or 2026-09-01T10:00:00Z, \
                    or now, today or yesterday (the server's clock, UTC)";

/// An app with one command per type: `put_<type>` writes the value whole into
/// a column, `say_<type>` splices it into a sentence, `ask_<type>` a filter.
fn typed_app() -> Manifest {
    let mut tools = serde_json::Map::new();
    for ty in ["text", "number", "bool", "time", "url"] {
        tools.insert(
            format!("put_{ty}"),
            json!({ "description": format!("Write a {ty} into a thing"),
                    "input": { "v": ty },
                    "apply": { "entity": { "eid": "$t" }, "thing": { ty: "{{v}}" } } }),
        );
        tools.insert(
            format!("say_{ty}"),
            json!({ "description": format!("Say a {ty} in a title"),
                    "input": { "v": ty },
                    "apply": { "entity": { "eid": "$t" }, "doc": { "title": "It is {{v}}." } } }),
        );
        tools.insert(
            format!("ask_{ty}"),
            json!({ "description": format!("Find things by a {ty}"),
                    "input": { "v": ty },
                    "query": format!(".thing.{ty}={{{{v}}}}&.doc?") }),
        );
    }
    let vocab = r#"{ "thing": { "text": "text", "number": "number", "bool": "bool",
                                "time": "time", "url": "url" }, "tools": false }"#;
    let tools = Value::Object(tools).to_string();
    read(&[("vocab.json", vocab), ("tools.json", &tools)])
}

/// What `put_<ty>` wrote into the column, or the argument errors.
fn put(app: &Manifest, ty: &str, value: Value) -> Result<Value, String> {
    match command(app, &format!("put_{ty}")).fill(&json!({ "v": value }), common::clock()) {
        Ok(Filled::Apply(body)) => Ok(body["thing"][ty].clone()),
        Ok(other) => panic!("put_{ty} filled {other:?}"),
        Err(errors) => Err(errors.to_string()),
    }
}

#[test]
fn every_type_reads_good_values_and_refuses_bad_ones() {
    let app = typed_app();
    let time = &format!("v is {TIME}");
    let url = "v is a web address, like https://example.com/";
    #[rustfmt::skip]
    let table: Vec<(&str, Value, Result<Value, &str>)> = vec![
        ("text", json!("Ada"), Ok(json!("Ada"))),
        ("text", json!(""), Ok(json!(""))),
        ("text", json!(5), Ok(json!("5"))),
        ("text", json!(true), Ok(json!("true"))),
        ("text", json!({ "name": "Ada" }), Err("v is text")),
        ("text", json!(["Ada"]), Err("v is text")),
        ("number", json!(5), Ok(json!(5))),
        ("number", json!(5.25), Ok(json!(5.25))),
        ("number", json!(-3), Ok(json!(-3))),
        ("number", json!("5"), Ok(json!(5))),
        ("number", json!(" 2.5 "), Ok(json!(2.5))),
        ("number", json!("1e3"), Ok(json!(1000.0))),
        ("number", json!("five"), Err("v is a number")),
        ("number", json!(""), Err("v is a number")),
        ("number", json!("NaN"), Err("v is a number")),
        ("number", json!("inf"), Err("v is a number")),
        ("number", json!("1e400"), Err("v is a number")),
        ("number", json!(true), Err("v is a number")),
        ("number", json!([5]), Err("v is a number")),
        ("bool", json!(true), Ok(json!(true))),
        ("bool", json!(false), Ok(json!(false))),
        ("bool", json!("true"), Ok(json!(true))),
        ("bool", json!("False"), Ok(json!(false))),
        ("bool", json!("yes"), Err("v is true or false")),
        ("bool", json!(1), Err("v is true or false")),
        ("bool", json!({}), Err("v is true or false")),
        ("time", json!("2026-09-01"), Ok(json!("2026-09-01"))),
        ("time", json!("2026-09-01T10:00:00Z"), Ok(json!("2026-09-01T10:00:00Z"))),
        ("time", json!("2026-09-01T12:30:00+02:00"), Ok(json!("2026-09-01T10:30:00Z"))),
        ("time", json!("2026-09-01T10:00:00.5Z"), Ok(json!("2026-09-01T10:00:00.5Z"))),
        ("time", json!("2026-02-30"), Err(time)),
        ("time", json!("2026-09-01T10:00:00"), Err(time)),
        ("time", json!("last week"), Err(time)),
        ("time", json!(20260901), Err(time)),
        ("url", json!("https://example.com/"), Ok(json!("https://example.com/"))),
        ("url", json!("http://localhost:7700/runs/?a=1#top"), Ok(json!("http://localhost:7700/runs/?a=1#top"))),
        ("url", json!("https://[::1]:8080/x"), Ok(json!("https://[::1]:8080/x"))),
        ("url", json!("HTTPS://Example.com"), Ok(json!("HTTPS://Example.com"))),
        ("url", json!("example.com"), Err(url)),
        ("url", json!("ftp://example.com/"), Err(url)),
        ("url", json!("https:///path"), Err(url)),
        ("url", json!("https://exa mple.com/"), Err(url)),
        ("url", json!("https://example.com:port/"), Err(url)),
        ("url", json!("javascript:alert(1)"), Err(url)),
        ("url", json!(5), Err(url)),
    ];
    for (ty, given, wanted) in table {
        let got = put(&app, ty, given.clone());
        assert_eq!(got, wanted.map_err(str::to_owned), "{ty} given {given}");
    }
}

#[test]
fn the_spec_refusals_of_arguments() {
    let app = read(&[
        (
            "vocab.json",
            r#"{ "jog": { "who": "text", "miles": "number", "ready": "bool" } }"#,
        ),
        (
            "tools.json",
            r#"{ "log_run": { "description": "Log a run for the club leaderboard",
                              "input": { "who": "text", "miles": "number", "ready": "bool" },
                              "apply": { "entity": { "eid": "$run" },
                                         "jog": { "who": "{{who}}", "miles": "{{miles}}",
                                                  "ready": "{{ready}}" } } } }"#,
        ),
    ]);
    let log_run = command(&app, "log_run");
    assert_eq!(
        arg_errors(log_run, json!({ "who": "Ada", "ready": true })),
        "miles is required"
    );
    assert_eq!(
        arg_errors(
            log_run,
            json!({ "who": "Ada", "miles": "far", "ready": true })
        ),
        "miles is a number"
    );
    assert_eq!(
        arg_errors(
            log_run,
            json!({ "who": "Ada", "miles": 5, "ready": "maybe" })
        ),
        "ready is true or false"
    );
    assert_eq!(
        arg_errors(
            log_run,
            json!({ "who": { "name": "Ada" }, "miles": 5, "ready": true })
        ),
        "who is text"
    );
    assert_eq!(
        arg_errors(log_run, json!({ "who": [], "miles": null, "ready": "no" })),
        "who is text; miles is required; ready is true or false",
        "every problem of one call in one answer"
    );
    assert_eq!(
        arg_errors(log_run, json!(["Ada", 5])),
        "args is an object of log_run's arguments: log_run(who, miles, ready)"
    );
    let typed = common::apply(
        log_run,
        json!({ "who": "Ada", "miles": "5", "ready": "true", "shoe": "left" }),
    );
    assert_eq!(
        typed,
        json!({ "entity": { "eid": "$run" }, "jog": { "who": "Ada", "miles": 5, "ready": true } }),
        "types kept, the undeclared shoe dropped"
    );
}

#[test]
fn a_command_taking_nothing_takes_no_args_at_all() {
    let app_with_board = read(&[(
        "tools.json",
        r#"{ "board": { "description": "Every run so far", "input": {}, "query": ".doc!" } }"#,
    )]);
    let board = command(&app_with_board, "board");
    assert_eq!(query(board, Value::Null), ".doc!");
    assert_eq!(query(board, json!({ "anything": 1 })), ".doc!");
    assert_eq!(
        arg_errors(board, json!("x")),
        "args is an object of board's arguments: board()"
    );
}

#[test]
fn a_spliced_hole_is_text() {
    let app = typed_app();
    let title = |ty: &str, v: Value| match command(&app, &format!("say_{ty}"))
        .fill(&json!({ "v": v }), common::clock())
    {
        Ok(Filled::Apply(body)) => body["doc"]["title"].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(title("number", json!("5")), json!("It is 5."));
    assert_eq!(title("number", json!(2.5)), json!("It is 2.5."));
    assert_eq!(title("bool", json!("true")), json!("It is true."));
    assert_eq!(
        title("text", json!("{{v}}")),
        json!("It is {{v}}."),
        "a value is never a template"
    );
}

/// The store's reading of a clause's value: split at `&`, then decode `%XX`.
fn store_reads(line: &str, prefix: &str) -> String {
    let clause = line
        .split('&')
        .find_map(|c| c.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix} clause in {line}"));
    percent_decode_str(clause)
        .decode_utf8()
        .expect("utf-8")
        .into_owned()
}

#[test]
fn a_hole_in_a_query_survives_the_store_reader() {
    let app = typed_app();
    let ask = command(&app, "ask_text");
    for value in [
        "Ada",
        "fish & chips",
        "a=b",
        "100%",
        "two words",
        "1+1",
        "é ☃ 🏃",
        "%41",
        "~-._",
        ".thing!&limit=1000",
    ] {
        let line = query(ask, json!({ "v": value }));
        assert_eq!(line.split('&').count(), 2, "one clause of value: {line}");
        assert_eq!(store_reads(&line, ".thing.text="), value, "{line}");
    }
    let url = query(
        command(&app, "ask_url"),
        json!({ "v": "https://example.com/?a=1&b=2" }),
    );
    assert_eq!(
        store_reads(&url, ".thing.url="),
        "https://example.com/?a=1&b=2"
    );
}

#[test]
fn a_time_takes_now_today_and_yesterday_by_the_clock_handed_in() {
    let app = typed_app();
    let time = format!("v is {TIME}");
    #[rustfmt::skip]
    let table: Vec<(&str, Result<&str, &str>)> = vec![
        ("now", Ok("2026-12-01T18:50:12Z")),
        ("today", Ok("2026-12-01")),
        ("yesterday", Ok("2026-11-30")),
        (" Today ", Ok("2026-12-01")),
        ("NOW", Ok("2026-12-01T18:50:12Z")),
        ("YesterDay", Ok("2026-11-30")),
        ("tomorrow", Err(&time)),
        ("to day", Err(&time)),
        ("today at 10", Err(&time)),
        ("nowhere", Err(&time)),
        ("", Err(&time)),
    ];
    for (given, wanted) in table {
        let got = put(&app, "time", json!(given));
        assert_eq!(
            got,
            wanted.map(|v| json!(v)).map_err(str::to_owned),
            "given {given:?}"
        );
    }
    let new_year: Timestamp = "2027-01-01T00:00:05Z".parse().expect("a timestamp");
    let put_time = command(&app, "put_time");
    let at = |word: &str| match put_time.fill(&json!({ "v": word }), new_year) {
        Ok(Filled::Apply(body)) => body["thing"]["time"].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(at("yesterday"), json!("2026-12-31"), "across a year");
    assert_eq!(at("today"), json!("2027-01-01"));
    assert_eq!(
        query(command(&app, "ask_time"), json!({ "v": "today" })),
        ".thing.time=2026-12-01&.doc?",
        "a query reads the word as the date it means"
    );
}

#[test]
fn a_missing_time_says_what_to_send() {
    let app = typed_app();
    assert_eq!(
        arg_errors(command(&app, "put_time"), json!({})),
        format!("v is required — {TIME}")
    );
    assert_eq!(
        arg_errors(command(&app, "put_url"), json!({})),
        "v is required — a web address, like https://example.com/"
    );
    assert_eq!(
        arg_errors(command(&app, "put_number"), json!({})),
        "v is required"
    );
}

#[test]
fn the_schema_and_the_listing_line_name_the_words() {
    let app = typed_app();
    let schema = command(&app, "put_time").input_schema();
    assert_eq!(schema["properties"]["v"]["description"], json!(TIME));
    assert_eq!(app.time_arguments_line(), Some(format!("v: {TIME}")));
    let club = read(&[
        (
            "vocab.json",
            r#"{ "jog": { "who": "text", "at": "time" } }"#,
        ),
        (
            "tools.json",
            r#"{ "since": { "description": "Runs logged since a date",
                            "input": { "since": "time" },
                            "query": ".jog!&.created.at>={{since}}" } }"#,
        ),
    ]);
    assert_eq!(
        club.time_arguments_line(),
        Some(format!("since, at: {TIME}")),
        "each name once, in the order the commands say them"
    );
    let untimed = read(&[("vocab.json", r#"{ "jog": { "who": "text" } }"#)]);
    assert_eq!(untimed.time_arguments_line(), None);
}
