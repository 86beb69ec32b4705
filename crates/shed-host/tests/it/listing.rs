//! `commands` answers from parts kept per deploy, and reach read per call:
//! a membership made by any process shows at once, a redeploy changes only
//! its own app's part, and the parts join in listing order (by space, then in
//! the order the apps were made).

use crate::common;

use common::*;
use serde_json::json;
use shed_host::{Access, Role};

const NOTES: &str = r#"{ "note": { "text": "text" } }"#;

/// The descriptions the manifest gives the two commands of the kind `note`
/// in the app `app` (`<space>/<app>`).
fn note_descriptions(app: &str) -> (String, String) {
    (
        format!("Add a note to {app}"),
        format!(
            "Find notes in {app} by words in their title or body, or by text; say nothing for every one"
        ),
    )
}

#[tokio::test]
async fn a_generated_command_names_its_app_then_the_title_and_address() {
    let w = world().await;
    let jeff = space(&w.host, "jeff", "jeff").await;
    let recipes = files(&[("vocab.json", r#"{ "recipe": { "serves": "number" } }"#)]);
    deploy(
        &w.host,
        &jeff,
        "jeff/recipes",
        recipes,
        "Recipes",
        Access::Private,
    )
    .await;
    let listed = w.host.commands(&jeff, Some("recipes")).await.unwrap();
    let lines: Vec<&str> = listed.text.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "## jeff/recipes",
            "add_recipe(title, body?, alias?, serves?) — Add a recipe to jeff/recipes \
             — Recipes, an app at jeff.localhost:7700/recipes/",
        ],
        "{}",
        listed.text
    );
    assert_eq!(
        listed.data_json()["commands"][0]["description"],
        "Add a recipe to jeff/recipes"
    );
}

#[tokio::test]
async fn a_membership_made_by_another_process_shows_at_once() {
    let w = world().await;
    let server = &w.host;
    let coach = space(server, "club", "coach").await;
    deploy_run_club(server, &coach, "club/runs").await;
    let ada = person(server, "ada", "Ada").await;
    let before = server.commands(&ada, None).await.unwrap();
    assert_eq!(before.data_json()["commands"], json!([]));
    assert!(
        before
            .text
            .starts_with("the apps in your spaces offer no commands yet")
    );

    // `shed member add` while the server runs: its own host, same data.
    let cli = open(w.dir.path()).await;
    cli.add_member("club", "ada", Role::Viewer).await.unwrap();

    let after = server.commands(&ada, None).await.unwrap();
    assert!(
        after.text.starts_with("## club/runs\nlog_run("),
        "{}",
        after.text
    );
    let after_json = after.data_json();
    let names: Vec<&str> = after_json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["log_run", "leaderboard", "since", "add_jog", "find_jog"]
    );
    // The same answer as the owner's: one listing, whoever reads it.
    assert_eq!(
        after.data_json(),
        server.commands(&coach, None).await.unwrap().data_json()
    );
}

#[tokio::test]
async fn a_redeploy_changes_its_own_part_at_once_and_leaves_the_rest_as_it_was() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    space(host, "club", "coach").await;
    host.add_member("club", "jeff", Role::Editor).await.unwrap();
    let notes = files(&[("vocab.json", NOTES)]);
    for (app, title) in [
        ("jeff/notes", "Notes"),
        ("club/notes", "Club notes"),
        ("jeff/jots", "Jots"),
    ] {
        deploy(host, &jeff, app, notes.clone(), title, Access::Private).await;
    }

    let part = |title: &str, space: &str, slug: &str| {
        let (app, at) = (
            format!("{space}/{slug}"),
            format!("{title}, an app at {space}.localhost:7700/{slug}/"),
        );
        let (add, find) = note_descriptions(&app);
        format!(
            "## {app}\nadd_note(title, body?, alias?, text?) — {add} — {at}\n\
             find_note(words?, text?, limit?) — {find}"
        )
    };
    // The whole listing, with jeff/notes under the title it has.
    let listing = |notes_title: &str| {
        [
            part("Club notes", "club", "notes"),
            part(notes_title, "jeff", "notes"),
            part("Jots", "jeff", "jots"),
        ]
        .join("\n\n")
    };
    let listed = host.commands(&jeff, None).await.unwrap();
    assert_eq!(listed.text, listing("Notes"));

    deploy(
        host,
        &jeff,
        "jeff/notes",
        notes,
        "Notebook",
        Access::Private,
    )
    .await;
    let again = host.commands(&jeff, None).await.unwrap();
    assert_eq!(again.text, listing("Notebook"));
    let (again_json, listed_json) = (again.data_json(), listed.data_json());
    let (rows, before) = (
        again_json["commands"].as_array().unwrap(),
        listed_json["commands"].as_array().unwrap(),
    );
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[2]["title"], "Notebook");
    assert_eq!(rows[3]["title"], "Notebook");
    for i in [0, 1, 4, 5] {
        assert_eq!(rows[i], before[i], "row {i}");
    }
}
