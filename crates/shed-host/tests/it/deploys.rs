//! Deploys: a refused deploy changes nothing and the last good one keeps
//! answering; a column added to a kind is an argument added to its two
//! commands; drafts through app_files become the next version; a deploy by
//! another process is seen by the next call and announced.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use serde_json::json;
use shed_host::{Access, Role};

const BAD_TOOLS: &str = r#"{ "bad": { "description": "Do a bad thing", "input": {}, "screen": 1,
  "apply": { "doc": { "title": "{{who}}" } } } }"#;

#[tokio::test]
async fn a_refused_deploy_changes_nothing_and_the_last_good_one_answers() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    deploy_run_club(host, &jeff, "jeff/runs").await;
    let before = host.commands(&jeff, None).await.unwrap();

    let mut bad = run_club();
    bad.insert("tools.json".into(), BAD_TOOLS.as_bytes().to_vec());
    let (kind, sentence) = refusal(
        host.deploy_folder(
            &jeff,
            "jeff/runs",
            bad,
            Some("Broken".into()),
            Some(Access::Open),
        )
        .await,
    );
    assert_eq!(kind, "bad-input");
    assert_eq!(
        sentence,
        "tools.json: bad: screen — a tool says description, input, apply, query, view, confirm; bad: {{who}} names no input — declare it in bad.input"
    );
    let mut gone = run_club();
    gone.remove("leaderboard.html");
    let (_, sentence) = refusal(
        host.deploy_folder(&jeff, "jeff/runs", gone, None, None)
            .await,
    );
    assert_eq!(
        sentence,
        "tools.json: leaderboard.html — a view names a page in this app's own files; deploy the page beside index.html"
    );

    // The commands the app had keep answering, as v1, private, "Run club".
    let after = host.commands(&jeff, None).await.unwrap();
    assert_eq!(after.text, before.text);
    let logged = host
        .command(
            &jeff,
            "log_run",
            json!({ "who": "Jeff", "miles": 1, "at": "2026-01-01" }),
            None,
        )
        .await
        .unwrap();
    assert!(
        logged
            .text
            .starts_with("log_run: wrote 1 entity in jeff/runs")
    );
    let spaces = host.spaces(&jeff).await.unwrap();
    assert!(
        spaces
            .text
            .ends_with("jeff/runs — Run club, private, v1 — http://jeff.localhost:7700/runs/"),
        "{}",
        spaces.text
    );
    // The next good deploy (a changed folder) is v2.
    let mut changed = run_club();
    changed.insert("notes.txt".into(), b"v2".to_vec());
    let next = deploy(
        host,
        &jeff,
        "jeff/runs",
        changed,
        "Run club",
        Access::Private,
    )
    .await;
    assert!(next.starts_with("deployed jeff/runs v2: "), "{next}");
}

#[tokio::test]
async fn a_column_added_to_a_kind_is_an_argument_of_its_two_commands() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    let v1 = files(&[("vocab.json", r#"{ "recipe": { "serves": "number" } }"#)]);
    let answer = deploy(host, &jeff, "jeff/recipes", v1, "Recipes", Access::Private).await;
    assert!(
        answer.ends_with("\ncommands: add_recipe, find_recipe"),
        "{answer}"
    );
    let shapes = |text: &str| {
        text.lines()
            .skip(1)
            .map(|l| l.split(" — ").next().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    let listed = host.commands(&jeff, None).await.unwrap();
    assert_eq!(
        shapes(&listed.text),
        [
            "add_recipe(title, body?, alias?, serves?)",
            "find_recipe(words?, serves?, limit?)"
        ]
    );
    host.command(
        &jeff,
        "add_recipe",
        json!({ "title": "Soup", "serves": 4 }),
        None,
    )
    .await
    .unwrap();

    let v2 = files(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "number", "cuisine": "text" } }"#,
    )]);
    deploy(host, &jeff, "jeff/recipes", v2, "Recipes", Access::Private).await;
    let listed = host.commands(&jeff, None).await.unwrap();
    assert_eq!(
        shapes(&listed.text),
        [
            "add_recipe(title, body?, alias?, serves?, cuisine?)",
            "find_recipe(words?, serves?, cuisine?, limit?)"
        ]
    );
    assert_eq!(
        listed.data_json()["commands"][0]["input"]["properties"]["cuisine"]["type"],
        "string"
    );
    host.command(
        &jeff,
        "add_recipe",
        json!({ "title": "Ramen", "serves": 2, "cuisine": "japanese" }),
        None,
    )
    .await
    .unwrap();
    let found = host
        .command(&jeff, "find_recipe", json!({ "cuisine": "japanese" }), None)
        .await
        .unwrap();
    assert_eq!(found.text, "find_recipe: 1 row in jeff/recipes");
    assert_eq!(found.data_json()["rows"][0]["doc"]["title"], "Ramen");
    let every = host
        .command(&jeff, "find_recipe", json!({}), None)
        .await
        .unwrap();
    assert_eq!(every.text, "find_recipe: 2 rows in jeff/recipes");

    // Changing a column's type while rows hold it is refused, and nothing moves.
    let v3 = files(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "text", "cuisine": "text" } }"#,
    )]);
    let (kind, sentence) = refusal(
        host.deploy_folder(&jeff, "jeff/recipes", v3, None, None)
            .await,
    );
    assert_eq!(kind, "bad-input");
    assert!(sentence.contains("recipe.serves"), "{sentence}");
    let spaces = host.spaces(&jeff).await.unwrap();
    assert!(
        spaces
            .text
            .contains("jeff/recipes — Recipes, private, v2 —"),
        "{}",
        spaces.text
    );
}

#[tokio::test]
async fn drafts_become_the_next_deploy() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    let write = |pairs: &[(&str, Option<&str>)]| -> BTreeMap<String, Option<String>> {
        pairs
            .iter()
            .map(|(p, t)| (p.to_string(), t.map(str::to_string)))
            .collect()
    };
    // A new app, named by slug alone: the one space jeff edits.
    let (kind, sentence) = refusal(host.app_deploy(&jeff, "runs", None, None).await);
    assert_eq!(kind, "bad-input");
    assert!(
        sentence.starts_with("jeff/runs has no files to deploy — write them with app_files first"),
        "{sentence}"
    );
    let mut drafts = BTreeMap::new();
    for (path, bytes) in run_club() {
        drafts.insert(path, Some(String::from_utf8(bytes).unwrap()));
    }
    let wrote = host.app_files(&jeff, "runs", drafts, vec![]).await.unwrap();
    assert_eq!(
        wrote.text,
        "jeff/runs: wrote index.html, leaderboard.html, style.css, tools.json, vocab.json — app_deploy deploys them as v1"
    );
    let listed = host
        .app_files(&jeff, "jeff/runs", BTreeMap::new(), vec![])
        .await
        .unwrap();
    assert!(
        listed
            .text
            .starts_with("jeff/runs: 5 files for v1, its first deploy\nindex.html ("),
        "{}",
        listed.text
    );
    let deployed = host
        .app_deploy(&jeff, "runs", Some("Run club".into()), Some(Access::Public))
        .await
        .unwrap();
    assert!(
        deployed.text.starts_with(
            "deployed jeff/runs v1: http://jeff.localhost:7700/runs/\ncommands: log_run, "
        ),
        "{}",
        deployed.text
    );
    assert_eq!(deployed.data_json()["access"], "public");

    // Drafts are writes over the deployed files: delete one, change one.
    let index = "<!doctype html><p>v2</p>";
    host.app_files(
        &jeff,
        "runs",
        write(&[("index.html", Some(index)), ("style.css", None)]),
        vec![],
    )
    .await
    .unwrap();
    let listed = host
        .app_files(&jeff, "runs", BTreeMap::new(), vec!["index.html".into()])
        .await
        .unwrap();
    assert_eq!(listed.text, format!("--- index.html ---\n{index}"));
    assert_eq!(listed.data_json()["deleted"], json!(["style.css"]));
    let (kind, sentence) = refusal(
        host.app_files(&jeff, "runs", BTreeMap::new(), vec!["style.css".into()])
            .await,
    );
    assert_eq!(kind, "not-found");
    assert!(
        sentence.starts_with("no file style.css in jeff/runs's next deploy — it has index.html, "),
        "{sentence}"
    );
    let (kind, sentence) = refusal(
        host.app_files(&jeff, "runs", write(&[("../x", Some("no"))]), vec![])
            .await,
    );
    assert_eq!(kind, "bad-input");
    assert!(
        sentence.starts_with("../x is not a file path of an app"),
        "{sentence}"
    );

    // The deployed version still answers with the old files until app_deploy.
    let page = host
        .read_view(&jeff, "ui://jeff/runs/leaderboard.html")
        .await
        .unwrap();
    assert!(page.html.contains("./style.css"));
    let v2 = host
        .app_deploy(&jeff, "jeff/runs", None, None)
        .await
        .unwrap();
    assert!(
        v2.text.starts_with("deployed jeff/runs v2: "),
        "{}",
        v2.text
    );
    let listed = host
        .app_files(&jeff, "runs", BTreeMap::new(), vec![])
        .await
        .unwrap();
    assert!(
        listed.text.starts_with("jeff/runs: 4 files for v3\n"),
        "{}",
        listed.text
    );
    assert!(!listed.text.contains("not deployed yet"), "{}", listed.text);
    let spaces = host.spaces(&jeff).await.unwrap();
    assert!(
        spaces.text.contains("jeff/runs — Run club, public, v2 —"),
        "{}",
        spaces.text
    );
}

#[tokio::test]
async fn a_deploy_by_another_process_is_seen_by_the_next_call_and_announced() {
    let w = world().await;
    let server = &w.host;
    let jeff = space(server, "jeff", "jeff").await;
    let ada = member(server, "jeff", "ada", Role::Editor).await;
    let mut announced = server.app_changes();
    assert_eq!(
        server.commands(&ada, None).await.unwrap().data_json()["commands"],
        json!([])
    );

    // The CLI: its own host on the same data directory.
    let cli = open(w.dir.path()).await;
    let cli_jeff = cli.caller_for_handle("jeff").await.unwrap();
    deploy_run_club(&cli, &cli_jeff, "jeff/runs").await;

    let listed = server.commands(&ada, None).await.unwrap();
    assert_eq!(listed.data_json()["commands"].as_array().unwrap().len(), 5);
    let app = tokio::time::timeout(Duration::from_secs(5), announced.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(app, "jeff/runs");

    // And a second deploy with a new command is seen too.
    let mut more = run_club();
    let tools = String::from_utf8(more["tools.json"].clone()).unwrap().replacen(
        "{ \"log_run\"",
        "{ \"ping\": { \"description\": \"Say hello\", \"input\": {}, \"query\": \".jog!\" },\n  \"log_run\"",
        1,
    );
    more.insert("tools.json".into(), tools.into_bytes());
    deploy(
        &cli,
        &cli_jeff,
        "jeff/runs",
        more,
        "Run club",
        Access::Private,
    )
    .await;
    let pinged = server
        .command(&jeff, "ping", json!({}), None)
        .await
        .unwrap();
    assert_eq!(pinged.text, "ping: 0 rows in jeff/runs");
    let app = tokio::time::timeout(Duration::from_secs(5), announced.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(app, "jeff/runs");
}

#[tokio::test]
async fn a_column_another_process_added_is_written_by_the_next_call() {
    let w = world().await;
    let server = &w.host;
    let jeff = space(server, "jeff", "jeff").await;
    let v1 = files(&[("vocab.json", r#"{ "recipe": { "serves": "number" } }"#)]);
    deploy(
        server,
        &jeff,
        "jeff/recipes",
        v1,
        "Recipes",
        Access::Private,
    )
    .await;
    server
        .command(
            &jeff,
            "add_recipe",
            json!({ "title": "Soup", "serves": 4 }),
            None,
        )
        .await
        .unwrap();
    server
        .command(&jeff, "find_recipe", json!({}), None)
        .await
        .unwrap();

    let cli = open(w.dir.path()).await;
    let cli_jeff = cli.caller_for_handle("jeff").await.unwrap();
    let v2 = files(&[(
        "vocab.json",
        r#"{ "recipe": { "serves": "number", "cuisine": "text" } }"#,
    )]);
    deploy(
        &cli,
        &cli_jeff,
        "jeff/recipes",
        v2,
        "Recipes",
        Access::Private,
    )
    .await;

    let none = server
        .command(&jeff, "find_recipe", json!({ "cuisine": "japanese" }), None)
        .await
        .unwrap();
    assert_eq!(none.text, "find_recipe: 0 rows in jeff/recipes");
    server
        .command(
            &jeff,
            "add_recipe",
            json!({ "title": "Ramen", "cuisine": "japanese" }),
            None,
        )
        .await
        .unwrap();
    let found = server
        .command(&jeff, "find_recipe", json!({ "cuisine": "japanese" }), None)
        .await
        .unwrap();
    assert_eq!(found.text, "find_recipe: 1 row in jeff/recipes");
}

/// Issue 39: deploying a folder again unchanged makes no new version — it
/// says so, naming the version that answers; a changed file, title or
/// access makes one as before.
#[tokio::test]
async fn a_redeploy_of_an_unchanged_folder_makes_no_new_version() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    deploy_run_club(host, &jeff, "jeff/runs").await;
    let again = host
        .deploy_folder(&jeff, "jeff/runs", run_club(), None, None)
        .await
        .unwrap();
    assert!(
        again.text.starts_with("jeff/runs unchanged — still v1: "),
        "{}",
        again.text
    );
    let same_title = host
        .deploy_folder(
            &jeff,
            "jeff/runs",
            run_club(),
            Some("Run club".into()),
            Some(Access::Private),
        )
        .await
        .unwrap();
    assert!(
        same_title
            .text
            .starts_with("jeff/runs unchanged — still v1: ")
    );
    let retitled = host
        .deploy_folder(&jeff, "jeff/runs", run_club(), Some("Runs".into()), None)
        .await
        .unwrap();
    assert!(retitled.text.starts_with("deployed jeff/runs v2: "));
    let mut changed = run_club();
    changed.insert("notes.txt".into(), b"new".to_vec());
    let changed = host
        .deploy_folder(&jeff, "jeff/runs", changed, None, None)
        .await
        .unwrap();
    assert!(changed.text.starts_with("deployed jeff/runs v3: "));
}
