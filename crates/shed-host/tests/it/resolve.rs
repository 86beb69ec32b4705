//! Finding a command by name: two apps spelling one name, a name nobody has,
//! and `commands` narrowed to one app by slug or by space/app.

use crate::common;

use common::*;
use serde_json::json;
use shed_host::{Access, Role};

#[tokio::test]
async fn a_name_two_apps_spell_asks_which_app() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    let club = space(host, "club", "coach").await;
    host.add_member("club", "jeff", Role::Editor).await.unwrap();
    deploy_run_club(host, &jeff, "jeff/runs").await;
    deploy(
        host,
        &club,
        "club/runs",
        run_club(),
        "Club runs",
        Access::Private,
    )
    .await;

    let args = json!({ "who": "Ada", "miles": 5, "at": "2026-09-01" });
    let (kind, sentence) = refusal(host.command(&jeff, "log_run", args.clone(), None).await);
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "bad-input",
            "log_run is a command of club/runs and jeff/runs — say which app"
        )
    );
    // Saying the app runs it there, and only there.
    let wrote = host
        .command(&jeff, "log_run", args.clone(), Some("club/runs"))
        .await
        .unwrap();
    assert!(
        wrote
            .text
            .starts_with("log_run: wrote 1 entity in club/runs: $run="),
        "{}",
        wrote.text
    );
    assert_eq!(
        host.command(&jeff, "leaderboard", json!({}), Some("club/runs"))
            .await
            .unwrap()
            .text,
        "leaderboard: 1 row in club/runs"
    );
    assert_eq!(
        host.command(&jeff, "leaderboard", json!({}), Some("jeff/runs"))
            .await
            .unwrap()
            .text,
        "leaderboard: 0 rows in jeff/runs"
    );
    // A slug two spaces spell is itself ambiguous.
    let (kind, sentence) = refusal(
        host.command(&jeff, "log_run", args.clone(), Some("runs"))
            .await,
    );
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "bad-input",
            "runs is an app in club and jeff — say which: club/runs or jeff/runs"
        )
    );
    // The coach is only in club: for them the name is one app's.
    let coach = host.caller_for_handle("coach").await.unwrap();
    let wrote = host.command(&coach, "log_run", args, None).await.unwrap();
    assert!(
        wrote
            .text
            .starts_with("log_run: wrote 1 entity in club/runs"),
        "{}",
        wrote.text
    );
}

#[tokio::test]
async fn a_name_nobody_has_answers_with_what_there_is() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    let tools_only = {
        let mut files = run_club();
        files.insert(
            "vocab.json".into(),
            br#"{ "tools": false, "jog": { "who": "text", "miles": "number", "at": "time" } }"#
                .to_vec(),
        );
        files
    };
    deploy(
        host,
        &jeff,
        "jeff/runs",
        tools_only,
        "Run club",
        Access::Private,
    )
    .await;
    let (kind, sentence) = refusal(host.command(&jeff, "add_run", json!({}), None).await);
    assert_eq!(kind, "not-found");
    assert_eq!(
        sentence,
        "no command add_run — the apps here offer jeff/runs: log_run, leaderboard, since. commands lists them with their arguments."
    );
    let (_, sentence) = refusal(
        host.command(&jeff, "add_run", json!({}), Some("runs"))
            .await,
    );
    assert_eq!(
        sentence,
        "no command add_run in jeff/runs — it offers log_run, leaderboard, since. commands lists them with their arguments."
    );
}

#[tokio::test]
async fn commands_narrows_to_one_app() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    space(host, "club", "coach").await;
    host.add_member("club", "jeff", Role::Viewer).await.unwrap();
    let coach = host.caller_for_handle("coach").await.unwrap();
    deploy_run_club(host, &jeff, "jeff/runs").await;
    deploy(
        host,
        &coach,
        "club/runs",
        run_club(),
        "Club runs",
        Access::Public,
    )
    .await;
    let recipes = files(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "number", "cuisine": "text" } }"#,
    )]);
    deploy(
        host,
        &jeff,
        "jeff/recipes",
        recipes,
        "Recipes",
        Access::Private,
    )
    .await;

    let all = host.commands(&jeff, None).await.unwrap();
    let headings: Vec<&str> = all.text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        ["## club/runs", "## jeff/runs", "## jeff/recipes"]
    );
    assert_eq!(all.data_json()["commands"].as_array().unwrap().len(), 12);
    assert!(
        all.text.contains(
            "\n\n## jeff/recipes\nadd_recipe(title, body?, alias?, serves?, cuisine?) — "
        ),
        "{}",
        all.text
    );
    assert!(
        all.text
            .contains("— Recipes, an app at jeff.localhost:7700/recipes/")
    );

    let one = host.commands(&jeff, Some("recipes")).await.unwrap();
    assert!(one.text.starts_with("## jeff/recipes\n"), "{}", one.text);
    assert_eq!(one.text.lines().count(), 3);
    let one_json = one.data_json();
    let names: Vec<&str> = one_json["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add_recipe", "find_recipe"]);
    assert!(
        one.data_json()["commands"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["at"] == "jeff/recipes")
    );

    let (kind, sentence) = refusal(host.commands(&jeff, Some("runs")).await);
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "bad-input",
            "runs is an app in club and jeff — say which: club/runs or jeff/runs"
        )
    );
    let club = host.commands(&jeff, Some("club/runs")).await.unwrap();
    assert!(club.text.starts_with("## club/runs\nlog_run(who, miles, at) — Log a run for the club leaderboard — Club runs, an app at club.localhost:7700/runs/"));
    let (kind, sentence) = refusal(host.commands(&jeff, Some("jeff/nope")).await);
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "not-found",
            "no app jeff/nope in your spaces — the apps here are club/runs, jeff/runs, jeff/recipes"
        )
    );
    let (kind, sentence) = refusal(host.commands(&jeff, Some("Jeff Runs")).await);
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "bad-input",
            "Jeff Runs is not an app — name one by its slug, like runs, or as space/app, like jeff/runs"
        )
    );
}
