//! Every example manifest of "Commands of your own" reads, and fills as the
//! spec says.

use crate::common;

use common::{apply, command, names, query, read, read_as};
use serde_json::json;

const RUN_CLUB_VOCAB: &str = r#"{ "jog": { "who": "text", "miles": "number", "at": "time" } }"#;

const RUN_CLUB_TOOLS: &str = r#"
{ "log_run": {
    "description": "Log a run for the club leaderboard",
    "input": { "who": "text", "miles": "number", "at": "time" },
    "apply": { "entity": { "eid": "$run" },
               "doc": { "title": "Run by {{who}}" },
               "jog": { "who": "{{who}}", "miles": "{{miles}}",
                        "at": "{{at}}" } } },
  "leaderboard": {
    "description": "Every run logged so far, with who logged it",
    "input": {},
    "query": ".jog!&.created!",
    "view": "leaderboard.html" },
  "since": {
    "description": "Runs logged since a date",
    "input": { "since": "time" },
    "query": ".jog!&.created!&.created.at>={{since}}",
    "view": "leaderboard.html" } }
"#;

fn run_club() -> shed_manifest::Manifest {
    read(&[
        ("index.html", "<!doctype html>"),
        ("leaderboard.html", "<!doctype html>"),
        ("vocab.json", RUN_CLUB_VOCAB),
        ("tools.json", RUN_CLUB_TOOLS),
    ])
}

#[test]
fn the_run_club_reads_with_its_three_verbs_and_its_kind() {
    let club = run_club();
    assert_eq!(
        names(&club),
        ["log_run", "leaderboard", "since", "add_jog", "find_jog"]
    );
    let leaderboard = command(&club, "leaderboard");
    assert_eq!(leaderboard.view.as_deref(), Some("leaderboard.html"));
    assert!(leaderboard.read_only());
    assert!(!command(&club, "log_run").read_only());
    assert_eq!(
        command(&club, "log_run").call_shape(),
        "log_run(who, miles, at)"
    );
}

#[test]
fn log_run_writes_a_typed_jog_and_a_spliced_title() {
    let club = run_club();
    let log_run = command(&club, "log_run");
    assert_eq!(
        apply(
            log_run,
            json!({ "who": "Ada", "miles": "5", "at": "2026-09-01" })
        ),
        json!({ "entity": { "eid": "$run" },
                "doc": { "title": "Run by Ada" },
                "jog": { "who": "Ada", "miles": 5, "at": "2026-09-01" } })
    );
}

#[test]
fn the_board_and_since_fill_their_filter_lines() {
    let club = run_club();
    assert_eq!(
        query(command(&club, "leaderboard"), json!({})),
        ".jog!&.created!"
    );
    let since = command(&club, "since");
    assert_eq!(
        query(since, json!({ "since": "2026-09-01" })),
        ".jog!&.created!&.created.at>=2026-09-01"
    );
    assert_eq!(
        query(since, json!({ "since": "2026-09-01T12:00:00+02:00" })),
        ".jog!&.created!&.created.at>=2026-09-01T10%3A00%3A00Z",
        "a time is said in UTC, and its colons are encoded"
    );
}

#[test]
fn the_first_log_run_needs_only_its_jog() {
    let app = read(&[
        (
            "vocab.json",
            r#"{ "jog": { "who": "text", "miles": "number" } }"#,
        ),
        (
            "tools.json",
            r#"{ "log_run": {
                "description": "Log a run for the club leaderboard",
                "input": { "who": "text", "miles": "number" },
                "apply": { "entity": { "eid": "$run" },
                           "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#,
        ),
    ]);
    assert_eq!(
        apply(
            command(&app, "log_run"),
            json!({ "who": "Ada", "miles": 5 })
        ),
        json!({ "entity": { "eid": "$run" }, "jog": { "who": "Ada", "miles": 5 } })
    );
}

#[test]
fn log_with_note_writes_two_entities_the_second_pointing_at_the_first() {
    let app = read(&[
        (
            "vocab.json",
            r#"{ "jog": { "who": "text", "miles": "number" } }"#,
        ),
        (
            "tools.json",
            r#"{ "log_with_note": {
                "description": "Log a run and a note about how it felt",
                "input": { "who": "text", "miles": "number", "note": "text" },
                "apply": [
                  { "entity": { "eid": "$run" },
                    "jog": { "who": "{{who}}", "miles": "{{miles}}" } },
                  { "entity": { "eid": "$note" },
                    "doc": { "body": "{{note}}" },
                    "comment": { "target": "$run" } } ] } }"#,
        ),
    ]);
    let args = json!({ "who": "Ada", "miles": 5.5, "note": "Legs like lead & a headwind" });
    assert_eq!(
        apply(command(&app, "log_with_note"), args),
        json!([
            { "entity": { "eid": "$run" }, "jog": { "who": "Ada", "miles": 5.5 } },
            { "entity": { "eid": "$note" },
              "doc": { "body": "Legs like lead & a headwind" },
              "comment": { "target": "$run" } }
        ])
    );
}

#[test]
fn drop_run_puts_an_argument_where_the_eid_goes() {
    let app = read(&[(
        "tools.json",
        r#"{ "drop_run": {
            "description": "Delete a run somebody logged by mistake",
            "input": { "run": "text" },
            "apply": { "entity": { "eid": "{{run}}" }, "tombstone": {} } } }"#,
    )]);
    assert_eq!(names(&app), ["drop_run"], "no vocab.json, no kinds");
    assert_eq!(
        apply(command(&app, "drop_run"), json!({ "run": "4f3c" })),
        json!({ "entity": { "eid": "4f3c" }, "tombstone": {} })
    );
}

#[test]
fn board_since_and_longest_fill_as_the_query_act_says() {
    let app = read(&[
        (
            "vocab.json",
            r#"{ "jog": { "who": "text", "miles": "number" } }"#,
        ),
        (
            "tools.json",
            r#"{ "board": {
                "description": "The leaderboard: every run, with who logged it",
                "input": {},
                "query": ".jog!&.created!" },
              "since": {
                "description": "Runs logged since a date",
                "input": { "since": "time" },
                "query": ".jog!&.doc?&.created.at>={{since}}" },
              "longest": {
                "description": "Runs over a distance",
                "input": { "miles": "number" },
                "query": ".jog.miles>={{miles}}&.doc?&limit=20" } }"#,
        ),
    ]);
    assert_eq!(query(command(&app, "board"), json!({})), ".jog!&.created!");
    assert_eq!(
        query(command(&app, "since"), json!({ "since": "2026-09-01" })),
        ".jog!&.doc?&.created.at>=2026-09-01"
    );
    assert_eq!(
        query(command(&app, "longest"), json!({ "miles": "5" })),
        ".jog.miles>=5&.doc?&limit=20"
    );
}

#[test]
fn a_view_names_a_deployed_page() {
    let app = read(&[
        ("vocab.json", r#"{ "jog": { "who": "text" } }"#),
        ("leaderboard.html", "<ol></ol>"),
        (
            "tools.json",
            r#"{ "leaderboard": { "description": "Every run so far",
                                  "input": {},
                                  "query": ".jog!&.created!",
                                  "view": "leaderboard.html" } }"#,
        ),
    ]);
    assert_eq!(
        command(&app, "leaderboard").view.as_deref(),
        Some("leaderboard.html")
    );
}

#[test]
fn tools_yml_is_the_same_document_in_yaml() {
    let yaml = r#"
log_run:
  description: Log a run for the club leaderboard
  input: { who: text, miles: number, at: time }
  apply:
    entity: { eid: $run }
    doc: { title: "Run by {{who}}" }
    jog: { who: "{{who}}", miles: "{{miles}}", at: "{{at}}" }
leaderboard:
  description: Every run logged so far, with who logged it
  input: {}
  query: .jog!&.created!
  view: leaderboard.html
since:
  description: Runs logged since a date
  input: { since: time }
  query: .jog!&.created!&.created.at>={{since}}
  view: leaderboard.html
"#;
    let from_yaml = read(&[
        ("leaderboard.html", ""),
        ("vocab.json", RUN_CLUB_VOCAB),
        ("tools.yml", yaml),
    ]);
    let from_json = run_club();
    assert_eq!(names(&from_yaml), names(&from_json));
    for (a, b) in from_yaml.commands.iter().zip(&from_json.commands) {
        assert_eq!(a.description, b.description);
        assert_eq!(a.input_schema(), b.input_schema());
        let args = json!({ "who": "Ada", "miles": 3, "at": "2026-09-01", "since": "2026-09-01" });
        assert_eq!(
            a.fill(&args, common::clock()).ok(),
            b.fill(&args, common::clock()).ok(),
            "{}",
            a.name
        );
    }
}

#[test]
fn the_recipe_kind_is_two_commands_already() {
    let app = read(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "number", "cuisine": "text" } }"#,
    )]);
    assert_eq!(names(&app), ["add_recipe", "find_recipe"]);
    let add = command(&app, "add_recipe");
    let find = command(&app, "find_recipe");
    assert_eq!(
        add.call_shape(),
        "add_recipe(title, body?, alias?, serves?, cuisine?)"
    );
    assert_eq!(
        find.call_shape(),
        "find_recipe(words?, serves?, cuisine?, limit?)"
    );
    assert!(add.generated && find.generated);
    // The spec's `commands` listing: "add_recipe(title, body?, alias?,
    // serves?) — Add a recipe to jeff/recipes — Recipes, an app at …".
    assert_eq!(add.description, "Add a recipe to jeff/recipes");
    assert_eq!(
        find.description,
        "Find recipes in jeff/recipes by words in their title or body, or by serves or cuisine; say nothing for every one"
    );
}

#[test]
fn generated_descriptions_name_the_app_they_were_read_for() {
    let vocab =
        r#"{ "order": {}, "shift_note": { "day": "text", "crew": "text", "hours": "number" } }"#;
    let app = read_as("club/shop", &[("vocab.json", vocab)]);
    let described: Vec<(&str, &str)> = app
        .commands
        .iter()
        .map(|c| (c.name.as_str(), c.description.as_str()))
        .collect();
    assert_eq!(
        described,
        [
            ("add_order", "Add an order to club/shop"),
            (
                "find_order",
                "Find orders in club/shop by words in their title or body; say nothing for every one"
            ),
            ("add_shift_note", "Add a shift note to club/shop"),
            (
                "find_shift_note",
                "Find shift notes in club/shop by words in their title or body, or by day, crew or hours; say nothing for every one"
            ),
        ]
    );
}

#[test]
fn add_writes_only_the_columns_somebody_named() {
    let app = read(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "number", "cuisine": "text" } }"#,
    )]);
    let add = command(&app, "add_recipe");
    assert_eq!(
        apply(add, json!({ "title": "Apple pie" })),
        json!({ "entity": { "eid": "$recipe" },
                "doc": { "title": "Apple pie" },
                "recipe": {} })
    );
    assert_eq!(
        apply(
            add,
            json!({ "title": "Apple pie", "body": "Bake it.", "alias": "pie", "serves": "6" })
        ),
        json!({ "entity": { "eid": "$recipe", "alias": "pie" },
                "doc": { "title": "Apple pie", "body": "Bake it." },
                "recipe": { "serves": 6 } })
    );
    assert_eq!(
        common::arg_errors(add, json!({ "serves": "lots" })),
        "title is required; serves is a number"
    );
}

#[test]
fn find_drops_every_clause_left_out() {
    let app = read(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "number", "cuisine": "text" } }"#,
    )]);
    let find = command(&app, "find_recipe");
    assert_eq!(query(find, json!({})), ".recipe!&.doc?");
    assert_eq!(
        query(
            find,
            json!({ "words": "apple pie", "cuisine": "Thai & Lao" })
        ),
        ".recipe!&.doc?&q=apple%20pie&.recipe.cuisine=Thai%20%26%20Lao"
    );
    assert_eq!(
        query(find, json!({ "serves": 4, "limit": "10" })),
        ".recipe!&.doc?&.recipe.serves=4&limit=10"
    );
}

#[test]
fn the_listing_prints_short_call_shapes() {
    let club = read(&[
        (
            "vocab.json",
            r#"{ "jog": { "who": "text", "miles": "number" } }"#,
        ),
        (
            "tools.json",
            r#"{ "log_run": {
                "description": "Log a run for the club leaderboard",
                "input": { "who": "text", "miles": "number" },
                "apply": { "entity": { "eid": "$run" },
                           "jog": { "who": "{{who}}", "miles": "{{miles}}" } } } }"#,
        ),
    ]);
    assert_eq!(
        command(&club, "log_run").call_shape(),
        "log_run(who, miles)"
    );
    let recipes = read(&[("vocab.json", r#"{ "recipe": { "serves": "number" } }"#)]);
    assert_eq!(
        command(&recipes, "add_recipe").call_shape(),
        "add_recipe(title, body?, alias?, serves?)"
    );
}

#[test]
fn tools_false_opts_out_of_generated_commands() {
    let app = read(&[(
        "vocab.json",
        r#"{ "tools": false, "recipe": { "serves": "number" } }"#,
    )]);
    assert!(app.commands.is_empty());
    assert!(app.vocab.components.contains_key("recipe"));
}

#[test]
fn a_hand_written_add_replaces_the_generated_one_whole() {
    let app = read(&[
        ("vocab.json", r#"{ "recipe": { "serves": "number" } }"#),
        (
            "tools.json",
            r#"{ "add_recipe": {
                "description": "Keep a recipe somebody cooked tonight",
                "input": { "title": "text" },
                "apply": { "entity": { "eid": "$r" }, "doc": { "title": "{{title}}" },
                           "recipe": {} } } }"#,
        ),
    ]);
    assert_eq!(names(&app), ["add_recipe", "find_recipe"]);
    let add = command(&app, "add_recipe");
    assert!(!add.generated);
    assert_eq!(add.description, "Keep a recipe somebody cooked tonight");
    assert_eq!(add.call_shape(), "add_recipe(title)");
}

#[test]
fn input_schemas_type_every_argument() {
    let club = run_club();
    assert_eq!(
        command(&club, "log_run").input_schema(),
        json!({
            "type": "object",
            "properties": {
                "who": { "type": "string" },
                "miles": { "type": "number" },
                "at": { "type": "string",
                        "description": "a time, like 2026-09-01 or 2026-09-01T10:00:00Z, \
                                        or now, today or yesterday (the server's clock, UTC)",
                        "pattern": "^(now|today|yesterday|[0-9]{4}-[0-9]{2}-[0-9]{2}\
                                    (T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?\
                                    (Z|[+-][0-9]{2}:[0-9]{2}))?)$" }
            },
            "required": ["who", "miles", "at"]
        })
    );
    assert_eq!(
        command(&club, "leaderboard").input_schema(),
        json!({ "type": "object", "properties": {} })
    );
    let app = read(&[(
        "vocab.json",
        r#"{ "link": { "to": "url", "ready": "bool", "of": "ref" } }"#,
    )]);
    let schema = command(&app, "add_link").input_schema();
    assert_eq!(schema["required"], json!(["title"]));
    assert_eq!(schema["properties"]["ready"], json!({ "type": "boolean" }));
    assert_eq!(schema["properties"]["of"], json!({ "type": "string" }));
    assert_eq!(
        schema["properties"]["to"],
        json!({ "type": "string", "description": "a web address, like https://example.com/" })
    );
    let find = command(&app, "find_link").input_schema();
    assert!(
        find.get("required").is_none(),
        "every find argument is optional"
    );
}
