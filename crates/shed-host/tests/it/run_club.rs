//! The run club of the spec, at the host's API: deploy it, list its commands,
//! log a run as a person and as their agent, read the board, draw it in its view.

use crate::common;

use common::*;
use serde_json::json;
use shed_host::{Access, Answer, Caller, Role};

#[tokio::test]
async fn the_run_club_story() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    let ada = person(host, "ada", "Ada Lovelace").await;
    host.add_member("jeff", "ada", Role::Editor).await.unwrap();

    // The deploy answers with the version, the address and the names it planted:
    // the three of tools.json, then the two every kind is worth.
    let first = deploy_run_club(host, &jeff, "jeff/runs").await;
    assert_eq!(
        first,
        "deployed jeff/runs v1: http://jeff.localhost:7700/runs/\ncommands: log_run, leaderboard, since, add_jog, find_jog"
    );
    // The same folder again changes nothing; a changed one is v2.
    let again = deploy_run_club(host, &jeff, "jeff/runs").await;
    assert!(
        again.starts_with("jeff/runs unchanged — still v1: http://jeff.localhost:7700/runs/\n"),
        "{again}"
    );
    let mut changed = run_club();
    changed.insert("notes.txt".into(), b"v2".to_vec());
    let again = deploy(
        host,
        &jeff,
        "jeff/runs",
        changed,
        "Run club",
        Access::Private,
    )
    .await;
    assert!(
        again.starts_with("deployed jeff/runs v2: http://jeff.localhost:7700/runs/\n"),
        "{again}"
    );

    // commands: grouped by app, call shapes, description, and the app's
    // title and address once, on its first command's line.
    let listed = host.commands(&ada, None).await.unwrap();
    assert_eq!(
        listed.text.lines().take(4).collect::<Vec<_>>(),
        [
            "## jeff/runs",
            "log_run(who, miles, at) — Log a run for the club leaderboard — Run club, an app at jeff.localhost:7700/runs/",
            "leaderboard() — Every run logged so far (up to 1,000), with who ran, how far and who logged it: add up each runner's miles for the standings, as its view does",
            "since(since) — Runs logged since a date",
        ]
    );
    assert!(
        listed
            .text
            .contains("\nadd_jog(title, body?, alias?, who?, miles?, at?) — "),
        "{}",
        listed.text
    );
    let listed_json = listed.data_json();
    let rows = listed_json["commands"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["at"], "jeff/runs");
    assert_eq!(rows[0]["name"], "log_run");
    assert_eq!(rows[0]["title"], "Run club");
    assert_eq!(rows[0]["readOnly"], false);
    assert_eq!(rows[0]["input"]["required"], json!(["who", "miles", "at"]));
    assert!(rows[0].get("view").is_none());
    assert_eq!(rows[1]["readOnly"], true);
    assert_eq!(rows[1]["view"], "ui://jeff/runs/leaderboard.html");
    assert_eq!(rows[2]["view"], "ui://jeff/runs/leaderboard.html");

    // Ada logs a run: her arguments typed, the eid it minted in the answer.
    let logged = host
        .command(
            &ada,
            "log_run",
            json!({ "who": "Ada", "miles": "5", "at": "2026-09-01" }),
            None,
        )
        .await
        .unwrap();
    let eid = logged.data_json()["aliases"]["$run"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(is_eid(&eid));
    assert_eq!(
        logged.text,
        format!("log_run: wrote 1 entity in jeff/runs: $run={eid}")
    );
    assert_eq!(logged.data_json()["entities"], json!([eid]));

    // The board says who logged it: created.by names the caller.
    let board = host
        .command(&ada, "leaderboard", json!({}), None)
        .await
        .unwrap();
    assert_eq!(board.text, "leaderboard: 1 row in jeff/runs");
    let row = &board.data_json()["rows"][0];
    assert_eq!(row["entity"]["eid"], eid.as_str());
    assert_eq!(row["jog"]["miles"], json!(5));
    assert_eq!(row["jog"]["who"], "Ada");
    assert_eq!(row["created"]["by"]["name"], "Ada Lovelace");
    let since = host
        .command(
            &ada,
            "since",
            json!({ "since": "2000-01-01" }),
            Some("jeff/runs"),
        )
        .await
        .unwrap();
    assert_eq!(since.text, "since: 1 row in jeff/runs");
    let none_yet = host
        .command(
            &ada,
            "since",
            json!({ "since": "2999-01-01" }),
            Some("runs"),
        )
        .await
        .unwrap();
    assert_eq!(none_yet.text, "since: 0 rows in jeff/runs");

    // Bad arguments are the manifest's sentences, and nothing is written.
    let (kind, sentence) = refusal(
        host.command(
            &ada,
            "log_run",
            json!({ "who": "Ada", "miles": "far", "at": "2026-09-01" }),
            None,
        )
        .await,
    );
    assert_eq!(
        (kind, sentence.as_str()),
        ("bad-input", "miles is a number")
    );
    let board = host
        .command(&ada, "leaderboard", json!({}), None)
        .await
        .unwrap();
    assert_eq!(board.text, "leaderboard: 1 row in jeff/runs");

    // The graph tools read and write the same app.
    let read = host
        .graph_query(&ada, None, "jeff/runs", ".jog!&.created!")
        .await
        .unwrap();
    assert_eq!(read.text, "jeff/runs: 1 row");
    let wrote = host
        .graph_apply(
            &jeff,
            "jeff/runs",
            json!({ "entity": { "eid": "$run" }, "jog": { "who": "Jeff", "miles": 3 } }),
        )
        .await
        .unwrap();
    let jeffs = wrote.data_json()["aliases"]["$run"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        wrote.text,
        format!("jeff/runs: wrote 1 entity: $run={jeffs}")
    );
    let mine = host
        .graph_query(&jeff, None, "runs", ".jog!&.created!&order=.jog.miles")
        .await
        .unwrap();
    assert_eq!(mine.data_json()["rows"][0]["created"]["by"]["name"], "jeff");

    // The view: listed once though two commands name it, served with its base.
    let views = host.views(&ada).await.unwrap();
    assert_eq!(views.len(), 1);
    assert_eq!(views[0].uri, "ui://jeff/runs/leaderboard.html");
    assert_eq!(views[0].app_address, "http://jeff.localhost:7700/runs/");
    assert_eq!(views[0].app_origin, "http://jeff.localhost:7700");
    let page = host
        .read_view(&ada, "ui://jeff/runs/leaderboard.html")
        .await
        .unwrap();
    // A private app's view loads its files through an address keyed for
    // the member who read it, on the app's own origin.
    let keyed = page
        .html
        .strip_prefix("<!doctype html><base href=\"http://jeff.localhost:7700/_shed/view/")
        .and_then(|rest| {
            rest.split_once("/runs/\">\n<html lang=\"en\">\n<meta charset=\"utf-8\" />")
        })
        .map(|(key, _)| key.to_string())
        .unwrap_or_else(|| panic!("no keyed base href: {}", page.html));
    assert_eq!(keyed.len(), 32, "{keyed}");
    let reader = host
        .caller_for_view_key(&keyed, "jeff", "runs")
        .await
        .unwrap();
    assert_eq!(reader.person().unwrap().handle, "ada");
    let style = host
        .web_file(&reader, "jeff", "runs", "style.css")
        .await
        .unwrap();
    assert_eq!(style.path, "style.css");
    for (key, slug) in [
        (keyed.as_str(), "other"),
        ("0123456789abcdef0123456789abcdef", "runs"),
    ] {
        let (kind, sentence) = refusal(host.caller_for_view_key(key, "jeff", slug).await);
        assert_eq!(kind, "sign-in");
        assert!(
            sentence.starts_with("this view's address has expired"),
            "{sentence}"
        );
    }
    let (kind, sentence) = refusal(host.read_view(&ada, "ui://jeff/runs/index.html").await);
    assert_eq!(
        (kind, sentence.as_str()),
        ("not-found", "no resource ui://jeff/runs/index.html")
    );
    let (_, sentence) = refusal(host.read_view(&ada, "ui://jeff/runs/tools.json").await);
    assert_eq!(sentence, "no resource ui://jeff/runs/tools.json");

    // spaces: how many, then the role and the apps with their title, access,
    // version, address.
    let spaces = host.spaces(&ada).await.unwrap();
    assert_eq!(
        spaces.text,
        "you belong to 1 space, with 1 app in them: jeff (editor, 1 app)\n\n\
         ## jeff — you are an editor\njeff/runs — Run club, private, v2 — http://jeff.localhost:7700/runs/"
    );
    assert_eq!(spaces.data_json()["spaces"][0]["apps"][0]["version"], 2);

    // The app's inside reads back with app_files.
    let tools = host
        .app_files(
            &ada,
            "jeff/runs",
            Default::default(),
            vec!["tools.json".into()],
        )
        .await
        .unwrap();
    let expected = String::from_utf8(run_club()["tools.json"].clone()).unwrap();
    assert_eq!(tools.data_json()["read"][0]["text"], expected.as_str());
    assert_eq!(tools.text, format!("--- tools.json ---\n{expected}"));
}

#[tokio::test]
async fn an_agents_write_names_the_person_and_the_agent() {
    let w = world().await;
    let host = &w.host;
    let jeff = space(host, "jeff", "jeff").await;
    deploy_run_club(host, &jeff, "jeff/runs").await;
    let Caller::Person { person, .. } = jeff else {
        panic!("jeff is a person")
    };
    let agent = Caller::Agent {
        person,
        job: "job7".into(),
    };
    host.command(
        &agent,
        "log_run",
        json!({ "who": "Jeff", "miles": 2, "at": "2026-09-02" }),
        None,
    )
    .await
    .unwrap();
    let board = host
        .graph_query(&agent, None, "jeff/runs", ".jog!&.created!")
        .await
        .unwrap();
    let created = &board.data_json()["rows"][0]["created"];
    assert_eq!(created["by"]["name"], "jeff");
    assert_eq!(created["via"], "agent:job7");
}

#[tokio::test]
async fn a_token_signs_in_and_a_wrong_one_is_told_how() {
    let w = world().await;
    let host = &w.host;
    person(host, "ada", "Ada").await;
    let token = host.create_token("ada", Default::default()).await.unwrap();
    assert!(token.starts_with("shed_") && token.len() == 37, "{token}");
    let Caller::Person {
        person,
        token: Some(_),
        ..
    } = host.caller_for_token(&token).await.unwrap()
    else {
        panic!("a token signs a person in");
    };
    assert_eq!(person.handle, "ada");
    assert_ne!(
        host.create_token("ada", Default::default()).await.unwrap(),
        token
    );
    let (kind, sentence) = refusal(host.caller_for_token("shed_0000").await);
    assert_eq!(kind, "sign-in");
    assert!(sentence.starts_with("sign in first — "), "{sentence}");
    assert!(
        sentence.contains("shed token create <handle>")
            && sentence.contains("shed mcp --as <handle>")
    );
    let (kind, sentence) = refusal(host.create_token("nobody", Default::default()).await);
    assert_eq!(
        (kind, sentence.as_str()),
        (
            "not-found",
            "no person nobody — `shed person add nobody` adds them"
        )
    );
}

#[tokio::test]
async fn signed_out_callers_are_asked_to_sign_in() {
    let w = world().await;
    let host = &w.host;
    let nobody = Caller::Nobody;
    for result in [
        host.commands(&nobody, None).await.map(Answer::widen),
        host.command(&nobody, "log_run", json!({}), None)
            .await
            .map(Answer::widen),
        host.spaces(&nobody).await.map(Answer::widen),
        host.app_deploy(&nobody, "jeff/runs", None, None)
            .await
            .map(Answer::widen),
        host.app_files(&nobody, "jeff/runs", Default::default(), vec![])
            .await
            .map(Answer::widen),
    ] {
        let (kind, sentence) = refusal(result);
        assert_eq!(kind, "sign-in");
        assert_eq!(
            sentence,
            "sign in first — send a bearer token from `shed token create <handle>` in the Authorization header, or run `shed mcp --as <handle>` over stdio"
        );
    }
    assert!(host.views(&nobody).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_tokens_first_look_at_its_reach_is_what_its_read_found_and_later_looks_read_afresh() {
    let w = world().await;
    let host = &w.host;
    let ada = space(host, "jeff", "ada").await;
    deploy_run_club(host, &ada, "jeff/runs").await;
    let token = host.create_token("ada", Default::default()).await.unwrap();
    let caller = host.caller_for_token(&token).await.unwrap();
    // A space of ada's made after the token was read, with an app in it.
    host.add_space("club", "ada").await.unwrap();
    deploy_run_club(host, &ada, "club/runs").await;
    let apps = |list: shed_host::Answer<shed_host::answer::AppList>| -> Vec<String> {
        list.data.apps.into_iter().map(|app| app.app.at).collect()
    };
    assert_eq!(
        apps(host.apps(&caller).await.unwrap()),
        ["jeff/runs"],
        "the request's first look: the spaces read with its token"
    );
    assert_eq!(
        apps(host.apps(&caller).await.unwrap()),
        ["club/runs", "jeff/runs"],
        "a later look reads afresh"
    );
}
