//! An app's versions, roll back, trash, restore and purge, black-box: `shed
//! app …` run on the data folder while `shed serve` answers, and every door
//! asked as its client would — MCP (`commands`, `command`, `graph_query`,
//! `tools/list`), the web (a page, the page api) and the broker (`shed
//! command run`, `shed command list`). And the public URL a server records,
//! which the CLI's links then use.

use std::path::Path;
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::broker_support::{answered, cli};
use crate::data_place::{DataIn, private_folder};
use crate::listening::{free_port, wait_until_listening};
use crate::web_door::{Shed, run, run_club};

const SHED: &str = env!("CARGO_BIN_EXE_shed");

/// What every door says of demo/runs while it is in the trash, before how
/// to restore it, which each door says its own way ([`trashed`]).
const TRASHED: &str = "demo/runs is in the trash — an owner or an editor of demo can restore it";

/// [`TRASHED`] and how, as a door restores it: at the terminal, `shed app
/// restore … --as …`; elsewhere, the Restore on its page at the public URL.
fn trashed(how: &str) -> String {
    format!("{TRASHED} ({how})")
}

/// The app page's Restore, as a door not on the pages points to it.
fn restore_on_page(home: &str) -> String {
    trashed(&format!(
        "with Restore on its page, {home}/spaces/demo/apps/runs"
    ))
}

/// The run club's second edition: its page retitled, `since` gone and
/// `longest` new.
fn second_edition() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    let club = run_club();
    for entry in std::fs::read_dir(&club).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), folder.path().join(entry.file_name())).unwrap();
    }
    let index = std::fs::read_to_string(club.join("index.html")).unwrap();
    std::fs::write(
        folder.path().join("index.html"),
        index.replace("<h1>Run club</h1>", "<h1>Run club, second edition</h1>"),
    )
    .unwrap();
    let mut tools: Value =
        serde_json::from_slice(&std::fs::read(club.join("tools.json")).unwrap()).unwrap();
    let tools = tools.as_object_mut().unwrap();
    tools.remove("since");
    tools.insert(
        "longest".into(),
        json!({ "description": "Runs over a distance", "input": { "miles": "number" },
                "query": ".jog.miles>={{miles}}&.doc?" }),
    );
    std::fs::write(
        folder.path().join("tools.json"),
        serde_json::to_vec(&tools).unwrap(),
    )
    .unwrap();
    folder
}

impl Shed {
    /// The names of demo/runs's commands in MCP's `commands`, as `token`.
    async fn runs_commands(&self, token: &str) -> Vec<String> {
        let (error, listed) = self
            .mcp(token, "commands", json!({ "app": "demo/runs" }))
            .await;
        assert!(!error, "{listed}");
        listed["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The apps MCP's `commands` lists, as `token`.
    async fn apps_listed(&self, token: &str) -> Vec<String> {
        let (error, listed) = self.mcp(token, "commands", json!({})).await;
        assert!(!error, "{listed}");
        let mut apps: Vec<String> = listed["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["at"].as_str().unwrap().to_string())
            .collect();
        apps.dedup();
        apps
    }

    /// The bytes of MCP's `tools/list`, as `token`.
    async fn tools_list(&self, token: &str) -> String {
        let answer = self.mcp_request(token, "tools/list", "", json!({})).await;
        answer["result"]["tools"].to_string()
    }

    /// demo/runs's page as the browser holding `cookie`: status and page.
    async fn runs_page(&self, cookie: &str) -> (StatusCode, String) {
        let (status, _, page) = self.get(&self.demo("/runs/"), Some(cookie)).await;
        (status, page)
    }

    /// `shed command list --json` as `job`: the names listed.
    fn job_lists(&self, job: &str) -> Vec<String> {
        let queue = self.data.path().join("command-queue.sock");
        let listed = answered(&cli(&queue, Some(job), &["command", "list", "--json"], ""));
        listed["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["name"].as_str().unwrap().to_string())
            .collect()
    }
}

#[tokio::test]
async fn a_roll_back_is_a_new_deploy_of_the_old_files_and_the_tool_list_stays() {
    let shed = Shed::start().await;
    let token = shed.token("ed");
    let cookie = shed.demo_cookie("ed").await;
    let tools = shed.tools_list(&token).await;
    let edition = second_edition();
    let folder = edition.path().to_str().unwrap();
    shed.shed(&["deploy", folder, "--to", "demo/runs", "--as", "ada"]);
    assert_eq!(
        shed.runs_commands(&token).await,
        ["log_run", "leaderboard", "longest", "add_jog", "find_jog"]
    );
    assert!(shed.runs_page(&cookie).await.1.contains("second edition"));

    // An editor rolls back: a new version, theirs, with v1's files.
    let said = shed.shed(&["app", "rollback", "demo/runs", "v1", "--as", "ed"]);
    assert!(
        said.starts_with(&format!(
            "rolled demo/runs back to v1: now v3, at http://demo.localhost:{}/runs/\n\
             commands: log_run, leaderboard, since, add_jog, find_jog",
            shed.port
        )),
        "{said}"
    );
    assert_eq!(
        shed.runs_commands(&token).await,
        ["log_run", "leaderboard", "since", "add_jog", "find_jog"]
    );
    let (error, since) = shed
        .mcp(
            &token,
            "command",
            json!({ "name": "since", "app": "demo/runs", "args": { "since": "2026-01-01" } }),
        )
        .await;
    assert!(!error, "v1's command since answers again: {since}");
    let (status, page) = shed.runs_page(&cookie).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("<h1>Run club</h1>") && !page.contains("second edition"),
        "{page}"
    );
    assert_eq!(shed.tools_list(&token).await, tools, "the tool list moved");

    let versions = shed.shed(&["app", "versions", "demo/runs", "--as", "vic"]);
    let lines: Vec<&str> = versions.lines().collect();
    assert_eq!(lines[0], "demo/runs: 3 versions, v3 answers");
    assert!(
        lines[1].starts_with("v3 — 20")
            && lines[1].ends_with(" by ed — back to v1 — added: since; removed: longest"),
        "{versions}"
    );
    assert!(
        lines[2].ends_with(" by ada — added: longest; removed: since"),
        "{versions}"
    );
    assert!(
        lines[3].ends_with(
            " by ada — added: log_run, leaderboard, since, add_jog, find_jog; removed: none"
        ),
        "{versions}"
    );

    // The rule book: a viewer reads versions and rolls nothing back; an
    // outsider learns nothing; a version nobody made is a sentence.
    assert_eq!(
        shed.refused(&["app", "rollback", "demo/runs", "2", "--as", "vic"]),
        "you can read this app but not change it — its owner can make you an editor"
    );
    assert_eq!(
        shed.refused(&["app", "versions", "demo/runs", "--as", "sam"]),
        "no app demo/runs"
    );
    assert_eq!(
        shed.refused(&["app", "rollback", "demo/runs", "9", "--as", "ada"]),
        "demo/runs has no version 9 — it has v1 to v3; `shed app versions demo/runs --as ada` lists them"
    );
    assert_eq!(
        shed.refused(&["app", "rollback", "demo/runs", "3", "--as", "ada"]),
        "demo/runs v3 is the version answering now — roll back to an earlier one \
         (`shed app versions demo/runs --as ada` lists them)"
    );
}

#[tokio::test]
async fn a_trashed_app_is_refused_through_every_door_and_restored_whole() {
    let shed = Shed::start().await;
    let token = shed.token("ed");
    let cookie = shed.demo_cookie("ed").await;
    let job = shed.job_for("ed");
    let (status, _) = shed.apply("runs", run("Ed", 4.0), Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    let outcome = shed.run_as_job(&job);
    assert_eq!(outcome["ok"], true, "{outcome}");
    let apps = shed.apps_listed(&token).await;
    assert_eq!(apps, ["demo/runs", "demo/pub", "demo/open"]);

    assert_eq!(
        shed.refused(&["app", "trash", "demo/runs", "--as", "vic"]),
        "you can read this app but not change it — its owner can make you an editor"
    );
    let said = shed.shed(&["app", "trash", "demo/runs", "--as", "ed"]);
    assert!(
        said.starts_with(
            "demo/runs is in the trash: its commands, pages, views and data are out of reach"
        ),
        "{said}"
    );

    // MCP: gone from `commands`, refused by name through every tool.
    assert_eq!(shed.apps_listed(&token).await, ["demo/pub", "demo/open"]);
    let log_run = json!({ "name": "log_run", "app": "demo/runs",
                          "args": { "who": "Ed", "miles": 3, "at": "2026-09-01" } });
    for (tool, arguments) in [
        ("command", log_run.clone()),
        ("commands", json!({ "app": "demo/runs" })),
        (
            "graph_query",
            json!({ "app": "demo/runs", "filter": ".jog!" }),
        ),
        (
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": run("Ed", 1.0) }),
        ),
    ] {
        let (error, said) = shed.mcp(&token, tool, arguments).await;
        assert!(error, "{tool} reached a trashed app: {said}");
        assert_eq!(said, restore_on_page(&shed.url()), "{tool}");
    }
    // The web: the page and the page api.
    // The trashed app's address says so, and links to where it is restored.
    let (status, page) = shed.runs_page(&cookie).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let on_page = format!("{}/spaces/demo/apps/runs", shed.url());
    assert!(
        page.contains(&format!(
            "{TRASHED} (with Restore on its page, <a href=\"{on_page}\">{on_page}</a>)"
        )),
        "{page}"
    );
    let (status, said) = shed.query("runs", ".jog!", Some(&cookie)).await;
    assert_eq!(
        (status, said),
        (
            StatusCode::FORBIDDEN,
            json!({ "error": restore_on_page(&shed.url()) })
        )
    );
    let (status, said) = shed.apply("runs", run("Ed", 2.0), Some(&cookie)).await;
    assert_eq!(
        (status, said),
        (
            StatusCode::FORBIDDEN,
            json!({ "error": restore_on_page(&shed.url()) })
        )
    );
    // The broker.
    let outcome = shed.run_as_job(&job);
    assert_eq!(
        (&outcome["ok"], &outcome["code"], &outcome["message"]),
        (
            &json!(false),
            &json!("refused"),
            &json!(restore_on_page(&shed.url()))
        ),
        "{outcome}"
    );
    assert!(
        !shed
            .job_lists(&job)
            .iter()
            .any(|name| name.starts_with("demo/runs.")),
        "the broker listed a trashed app's commands"
    );
    // Its name is not free, and an outsider learns nothing of it.
    let club = run_club();
    let deploy = [
        "deploy",
        club.to_str().unwrap(),
        "--to",
        "demo/runs",
        "--as",
        "ada",
    ];
    assert!(
        shed.refused(&deploy)
            .starts_with("demo/runs is in the trash, and its name stays taken until it is purged"),
    );
    let sam = shed.token("sam");
    let (error, said) = shed
        .mcp(
            &sam,
            "graph_query",
            json!({ "app": "demo/runs", "filter": ".jog!" }),
        )
        .await;
    assert!(error);
    assert_eq!(said, "no app demo/runs");
    let listed = shed.shed(&["app", "list", "--as", "ed"]);
    assert_eq!(
        crate::cli_lists::cells(listed.lines().next().unwrap()),
        [
            "APP", "TITLE", "ACCESS", "VERSION", "DEPLOYED", "BY", "ROLE", "TRASH", "COMMANDS"
        ]
    );
    let runs = crate::cli_lists::rows(&listed)
        .into_iter()
        .find(|row| row[0] == "demo/runs")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(
        [runs[1], runs[2], runs[3], runs[5], runs[6], runs[8]],
        [
            "Run club",
            "private",
            "v1",
            "ada",
            "editor",
            "log_run, leaderboard, since, add_jog, find_jog"
        ],
        "{listed}"
    );
    assert!(
        runs[4].starts_with("20") && runs[4].ends_with(" UTC"),
        "{listed}"
    );
    assert!(
        runs[7].starts_with("since 20") && runs[7].ends_with(" UTC by ed"),
        "{listed}"
    );

    // Restore: all of it answers again, its data kept.
    assert_eq!(
        shed.refused(&["app", "restore", "demo/pub", "--as", "ed"]),
        "demo/pub is not in the trash — it answers as it is"
    );
    shed.shed(&["app", "restore", "demo/runs", "--as", "ed"]);
    assert_eq!(shed.apps_listed(&token).await, apps);
    let (error, said) = shed.mcp(&token, "command", log_run).await;
    assert!(!error, "{said}");
    assert_eq!(shed.runs_page(&cookie).await.0, StatusCode::OK);
    let (status, rows) = shed.query("runs", ".jog!", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rows["rows"].as_array().unwrap().len(), 3, "{rows}");
    assert_eq!(shed.run_as_job(&job)["ok"], true);
}

#[tokio::test]
async fn a_purge_asks_the_exact_name_of_a_trashed_app_and_frees_it() {
    let shed = Shed::start().await;
    // `shed app purge demo/runs --confirm <confirm> --as <who>`.
    let purge = |confirm: &'static str, who: &'static str| {
        [
            "app",
            "purge",
            "demo/runs",
            "--confirm",
            confirm,
            "--as",
            who,
        ]
    };
    let cookie = shed.demo_cookie("ada").await;
    let (status, _) = shed.apply("runs", run("Ada", 4.0), Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        shed.refused(&purge("demo/runs", "ada")),
        "only an app in the trash is purged, and demo/runs is not in it — put it there first \
         (`shed app trash demo/runs --as ada`)"
    );
    shed.shed(&["app", "trash", "demo/runs", "--as", "ada"]);
    assert_eq!(
        shed.refused(&purge("demo/runs", "ed")),
        "only an owner of demo purges its apps — an owner or an editor of demo may restore \
         demo/runs from the trash"
    );
    assert_eq!(
        shed.refused(&purge("runs", "ada")),
        "to purge demo/runs, type its name exactly: demo/runs (you typed runs) — nothing was deleted"
    );
    let output = crate::web_door::shed_output(
        shed.data.path(),
        shed.port,
        &["app", "purge", "demo/runs", "--as", "ada"],
    );
    assert!(!output.status.success(), "a purge without --confirm ran");
    assert_eq!(
        shed.shed(&purge("demo/runs", "ada")).trim(),
        "purged demo/runs: 1 version and 1 entity deleted for good; the name demo/runs is free"
    );
    assert!(!shed.shed(&["app", "list"]).contains("demo/runs "));

    // The name is free: a deploy makes a new app, v1, with no data.
    let club = run_club();
    let said = shed.shed(&[
        "deploy",
        club.to_str().unwrap(),
        "--to",
        "demo/runs",
        "--as",
        "ada",
    ]);
    assert!(said.starts_with("deployed demo/runs v1: "), "{said}");
    let (status, rows) = shed.query("runs", ".jog!", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rows["rows"], json!([]));
}

/// `shed <args>` on `data` with no `SHED_PUBLIC_URL`: its stdout.
fn shed_plain(data: &Path, args: &[&str]) -> String {
    let output = Command::new(SHED)
        .args(args)
        .data_in(data)
        .env_remove("SHED_PUBLIC_URL")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "shed {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_cli_s_links_point_where_the_last_server_served() {
    let data = private_folder();
    shed_plain(data.path(), &["person", "add", "ada"]);
    shed_plain(data.path(), &["space", "add", "demo", "--owner", "ada"]);
    let before = shed_plain(data.path(), &["login", "ada"]);
    assert!(
        before.starts_with("http://localhost:7700/_shed/login?key="),
        "{before}"
    );

    let port = free_port();
    let served_at = format!("http://shed.test:{port}");
    let mut server = Command::new(SHED)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--public-url", &served_at])
        .data_in(data.path())
        .env_remove("SHED_PUBLIC_URL")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_listening(port);
    let link = shed_plain(data.path(), &["login", "ada"]);
    let club = run_club();
    let club = club.to_str().unwrap();
    let deployed = shed_plain(
        data.path(),
        &["deploy", club, "--to", "demo/runs", "--as", "ada"],
    );
    let given = shed_plain(
        data.path(),
        &["login", "ada", "--public-url", "https://elsewhere.example"],
    );
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        link.starts_with(&format!("{served_at}/_shed/login?key=")),
        "{link}"
    );
    assert!(
        deployed.starts_with(&format!(
            "deployed demo/runs v1: http://demo.shed.test:{port}/runs/"
        )),
        "{deployed}"
    );
    assert!(
        given.starts_with("https://elsewhere.example/_shed/login?key="),
        "{given}"
    );
    // After the server stopped, the address it served at is still the one.
    let after = shed_plain(data.path(), &["login", "ada"]);
    assert!(
        after.starts_with(&format!("{served_at}/_shed/login?key=")),
        "{after}"
    );
}
