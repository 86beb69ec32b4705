//! Two `shed serve` on one PostgreSQL database behave as one shed,
//! black-box (on SQLite a data folder's file is one server's, and these
//! tests say they are skipped): started together on an empty database they
//! migrate it once; a deploy through one reaches an MCP session on the
//! other as `notifications/resources/list_changed` within a second, and the
//! other serves the new version's commands at once; writers with `was`
//! through both lose no update, and of two writes racing with one `was`
//! exactly one lands; tokens, sign-in sessions and jobs work on
//! both, and what one takes back stops working on both at the next request.
//! Each server has its own data folder (its queue socket and lock) and port.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::data_place::{on_server, private_folder};
use crate::listening::{free_port, wait_until_listening};
use crate::operating_support::{SHED, call};
use crate::web_door::{Shed, run};

/// How soon a deploy through one server reaches a session on the other.
const LIST_CHANGED_BOUND: Duration = Duration::from_secs(1);

/// The protocol of a client that keeps a session (and so hears notifications).
const LEGACY: &str = "2025-06-18";

/// The writers through each server, and the writes each tries.
const WRITERS_PER_SERVER: usize = 4;
const ATTEMPTS: usize = 25;

/// Whether the test is skipped, saying so: two servers share a database
/// only on a database server.
fn skipped(test: &str) -> bool {
    let skipped = !on_server();
    if skipped {
        eprintln!(
            "{test}: two servers on one database need PostgreSQL (SHED_TEST_DATABASE), skipped on SQLite"
        );
    }
    skipped
}

/// A `shed serve` started on its own, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shed serve` on `data` and the database `url`, on a free loopback port,
/// not waited for.
fn serve(data: &Path, url: &str) -> (Served, u16) {
    let port = free_port();
    let child = Command::new(SHED)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("SHED_DATA", data)
        .env("SHED_DATABASE_URL", url)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    (Served(child), port)
}

#[tokio::test]
async fn two_servers_started_together_on_an_empty_database_migrate_it_once() {
    if skipped("two_servers_started_together_on_an_empty_database_migrate_it_once") {
        return;
    }
    let url = shed_test_database::fresh().unwrap();
    let folders = [private_folder(), private_folder()];
    let mut servers: Vec<(Served, u16)> = folders.iter().map(|f| serve(f.path(), &url)).collect();
    let http = reqwest::Client::new();
    for (child, port) in &mut servers {
        wait_until_listening(*port);
        let ready = http
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            .unwrap();
        let status = ready.status();
        assert_eq!(status, StatusCode::OK, "{}", ready.text().await.unwrap());
        assert!(child.0.try_wait().unwrap().is_none(), "both servers run");
    }

    let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    // Had both migrated, the second would have failed on the first's
    // tables or versions and exited.
    let rows = db
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    let versions: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let expected: Vec<i64> = (1..=versions.len() as i64).collect();
    assert_eq!(versions, expected, "every migration once, in order");
}

/// Opens a session on `shed` as `token` the way a client that keeps one
/// does (`initialize`, `notifications/initialized`, then the session's
/// stream) and sends the moment each `notifications/resources/list_changed`
/// arrives on it.
async fn hear_list_changed(shed: &Shed, token: &str) -> mpsc::UnboundedReceiver<Instant> {
    let url = format!("{}/mcp", shed.url());
    let post = |message: Value, session: Option<&str>| {
        let mut request = shed
            .http
            .post(&url)
            .bearer_auth(token)
            .header(header::ACCEPT, "application/json, text/event-stream")
            .json(&message);
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", LEGACY);
        }
        request.send()
    };
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": { "name": "two_servers", "version": "0" } } });
    let answer = post(initialize, None).await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let session = answer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    answer.text().await.unwrap();
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let answer = post(initialized, Some(&session)).await.unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());

    let mut stream = shed
        .http
        .get(&url)
        .bearer_auth(token)
        .header(header::ACCEPT, "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let (heard, hearing) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut pending = String::new();
        while let Ok(Some(chunk)) = stream.chunk().await {
            pending.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                let Some(data) = line.trim().strip_prefix("data:") else {
                    continue;
                };
                let message: Value = serde_json::from_str(data.trim()).unwrap_or_default();
                if message["method"] == "notifications/resources/list_changed" {
                    let _ = heard.send(Instant::now());
                }
            }
        }
    });
    hearing
}

/// `app_deploy` of demo/runs through `shed` as `token`, retitled `title`.
async fn deploy_titled(shed: &Shed, token: &str, title: &str) {
    let (error, said) = shed
        .mcp(
            token,
            "app_deploy",
            json!({ "app": "demo/runs", "title": title }),
        )
        .await;
    assert!(!error, "{said}");
}

/// The run club's tools with one command more, `log_walk`.
fn walks_too() -> String {
    let club = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club/tools.json");
    let mut tools: Value = serde_json::from_slice(&std::fs::read(club).unwrap()).unwrap();
    tools["log_walk"] = json!({
        "description": "Log a walk for the club",
        "input": { "who": "text", "miles": "number", "at": "time" },
        "apply": { "entity": { "eid": "$walk" }, "doc": { "title": "Walk by {{who}}" },
                   "jog": { "who": "{{who}}", "miles": "{{miles}}", "at": "{{at}}" } } });
    tools.to_string()
}

/// Whether `shed` lists `log_walk` among the commands `token` reaches.
async fn lists_log_walk(shed: &Shed, token: &str) -> bool {
    let (error, listed) = shed.mcp(token, "commands", json!({})).await;
    assert!(!error, "{listed}");
    listed.to_string().contains("\"log_walk\"")
}

#[tokio::test]
async fn a_deploy_through_one_server_is_announced_on_the_other_within_a_second_and_served_there_at_once()
 {
    if skipped("a_deploy_through_one_server_is_announced_on_the_other_within_a_second") {
        return;
    }
    let a = Shed::start().await;
    let b = a.beside();
    let ada = a.token("ada");
    let mut heard = hear_list_changed(&b, &ada).await;
    // The session's watcher has read what Ada reaches once it announces a
    // deploy: retitle the app through A until B's session hears of it.
    for warm_up in 1.. {
        deploy_titled(&a, &ada, &format!("Run club {warm_up}")).await;
        if tokio::time::timeout(Duration::from_secs(2), heard.recv())
            .await
            .is_ok()
        {
            break;
        }
        assert!(
            warm_up < 10,
            "B's session heard none of {warm_up} deploys through A"
        );
    }
    while heard.try_recv().is_ok() {}
    assert!(!lists_log_walk(&b, &ada).await);

    let (error, said) = a
        .mcp(
            &ada,
            "app_files",
            json!({ "app": "demo/runs", "write": { "tools.json": walks_too() } }),
        )
        .await;
    assert!(!error, "{said}");
    let sent = Instant::now();
    deploy_titled(&a, &ada, "Run club, walks too").await;
    let acknowledged = Instant::now();
    assert!(
        lists_log_walk(&b, &ada).await,
        "B lists the new version's command at once"
    );
    let (error, wrote) = b
        .mcp(
            &ada,
            "command",
            json!({ "name": "log_walk", "app": "demo/runs",
                    "args": { "who": "Ada", "miles": 2, "at": "2026-09-03" } }),
        )
        .await;
    assert!(!error, "B runs the new version's command: {wrote}");

    let arrived = tokio::time::timeout(Duration::from_secs(10), heard.recv())
        .await
        .expect("B's session heard the deploy through A")
        .unwrap();
    let after_acknowledged = arrived.saturating_duration_since(acknowledged);
    let after_sent = arrived.duration_since(sent);
    eprintln!(
        "list_changed on B {after_acknowledged:?} after A acknowledged the deploy ({after_sent:?} after it was sent; the deploy took {:?})",
        acknowledged - sent
    );
    assert!(
        after_acknowledged < LIST_CHANGED_BOUND,
        "list_changed reached B {after_acknowledged:?} after the deploy"
    );
}

/// What one writer saw: the writes acknowledged to each counter, and the
/// sentences of those refused.
#[derive(Default)]
struct Tally {
    acknowledged: [u64; 2],
    refused: Vec<String>,
}

/// Two servers on one database, ada's token, and a run at 0 miles made
/// through the first for each of `who`: the counters' eids.
async fn two_servers_with_counters<const N: usize>(
    who: [&str; N],
) -> (Shed, Shed, String, [String; N]) {
    let a = Shed::start().await;
    let b = a.beside();
    let ada = a.token("ada");
    let bundles: Vec<Value> = who
        .iter()
        .map(|who| json!({ "entity": { "eid": format!("${who}") }, "jog": { "who": who, "miles": 0 } }))
        .collect();
    let (error, made) = a
        .mcp(
            &ada,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": bundles }),
        )
        .await;
    assert!(!error, "{made}");
    let counters = std::array::from_fn(|i| made["entities"][i].as_str().unwrap().to_string());
    (a, b, ada, counters)
}

/// The counter `eid` as `server` reads it for `token`: its row, with `jog`.
async fn counter(server: &Shed, token: &str, eid: &str) -> Value {
    let (error, read) = server
        .mcp(
            token,
            "graph_query",
            json!({ "app": "demo/runs", "filter": format!("eid={eid}&.jog!") }),
        )
        .await;
    assert!(!error, "{read}");
    read["rows"][0].clone()
}

/// Reads a counter's version and miles through `mcp`, then writes miles + 1
/// with `was`, `ATTEMPTS` times over the two counters.
async fn count_with_was(mcp: String, token: String, counters: [String; 2], first: usize) -> Tally {
    let http = reqwest::Client::new();
    let mut tally = Tally::default();
    for attempt in 0..ATTEMPTS {
        let which = (first + attempt) % 2;
        let eid = &counters[which];
        let read = crate::operating_support::succeeded(
            call(
                &http,
                &mcp,
                &token,
                "graph_query",
                json!({ "app": "demo/runs", "filter": format!("eid={eid}&.jog!") }),
            )
            .await
            .unwrap(),
        );
        let row = &read["rows"][0];
        let (version, miles) = (
            &row["entity"]["version"],
            row["jog"]["miles"].as_f64().unwrap(),
        );
        let bundle =
            json!({ "entity": { "eid": eid }, "jog": { "miles": miles + 1.0 }, "was": version });
        let (status, message) = call(
            &http,
            &mcp,
            &token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": bundle }),
        )
        .await
        .unwrap();
        assert_eq!(status, StatusCode::OK, "{message}");
        if message["result"]["isError"] == json!(false) {
            tally.acknowledged[which] += 1;
        } else {
            let said = message["result"]["content"][0]["text"].as_str().unwrap();
            tally.refused.push(said.to_string());
        }
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_with_was_through_two_servers_lose_no_update() {
    if skipped("writers_with_was_through_two_servers_lose_no_update") {
        return;
    }
    let (a, b, ada, counters) = two_servers_with_counters(["one", "two"]).await;

    let started = Instant::now();
    let writers: Vec<_> = (0..2 * WRITERS_PER_SERVER)
        .map(|writer| {
            let server = if writer % 2 == 0 { &a } else { &b };
            tokio::spawn(count_with_was(
                format!("{}/mcp", server.url()),
                ada.clone(),
                counters.clone(),
                writer / 2,
            ))
        })
        .collect();
    let mut total = Tally::default();
    for writer in writers {
        let tally = writer.await.unwrap();
        for which in 0..2 {
            total.acknowledged[which] += tally.acknowledged[which];
        }
        total.refused.extend(tally.refused);
    }
    let took = started.elapsed();

    for (which, eid) in counters.iter().enumerate() {
        let acknowledged = total.acknowledged[which];
        for server in [&a, &b] {
            let row = counter(server, &ada, eid).await;
            assert_eq!(
                row["jog"]["miles"].as_f64(),
                Some(acknowledged as f64),
                "counter {which}: every acknowledged write counted, none lost"
            );
            assert_eq!(row["entity"]["version"], json!(1 + acknowledged));
        }
    }
    for said in &total.refused {
        assert!(
            is_was_refusal(said),
            "a refusal other than was's sentence: {said}"
        );
    }
    let acknowledged: u64 = total.acknowledged.iter().sum();
    eprintln!(
        "{} writers over two servers: {acknowledged} writes acknowledged and {} refused as changed since read, of {} tried, in {took:?} ({:.0} acknowledged writes/s)",
        2 * WRITERS_PER_SERVER,
        total.refused.len(),
        2 * WRITERS_PER_SERVER * ATTEMPTS,
        acknowledged as f64 / took.as_secs_f64()
    );
    assert!(
        acknowledged > 0 && !total.refused.is_empty(),
        "the writers both wrote and collided"
    );
}

/// Races of two writes with the same `was`.
const RACES: usize = 12;

/// Two writes with the same `was` sent at once, one through each server,
/// `RACES` times: each time exactly one lands and the other is refused with
/// the `was` sentence, whichever server's writer (and its group commit)
/// gets the app first; the counter ends at the writes that landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_two_writes_racing_with_the_same_was_through_two_servers_exactly_one_lands() {
    if skipped("of_two_writes_racing_with_the_same_was_through_two_servers_exactly_one_lands") {
        return;
    }
    let (a, b, ada, [eid]) = two_servers_with_counters(["one"]).await;
    let mut landed_on = [0; 2];
    for race in 0..RACES {
        let version = (race + 1) as u64;
        let write = |server: &'static str| {
            json!({ "app": "demo/runs", "bundle": { "entity": { "eid": eid },
                    "jog": { "who": server, "miles": race + 1 }, "was": version } })
        };
        let (through_a, through_b) = tokio::join!(
            a.mcp(&ada, "graph_apply", write("a")),
            b.mcp(&ada, "graph_apply", write("b"))
        );
        let (landed, refused) = match (through_a, through_b) {
            ((false, _), (true, said)) => (0, said),
            ((true, said), (false, _)) => (1, said),
            answers => panic!("race {race}: not one write landed and one refused: {answers:?}"),
        };
        landed_on[landed] += 1;
        let said = refused.as_str().unwrap();
        assert!(is_was_refusal(said), "race {race}: {said}");
        assert!(
            said.ends_with(&format!("(version {}, you had {version})", version + 1)),
            "race {race}: {said}"
        );
        let row = counter(&b, &ada, &eid).await;
        assert_eq!(row["entity"]["version"], json!(version + 1), "race {race}");
        assert_eq!(row["jog"]["who"], json!(["a", "b"][landed]), "race {race}");
    }
    eprintln!(
        "{RACES} races of two writes with one was: landed through A {}, through B {}",
        landed_on[0], landed_on[1]
    );
}

/// Whether a refusal is the `was` check's sentence:
/// `<eid> changed since you read it (version N, you had M)`, N and M apart.
fn is_was_refusal(said: &str) -> bool {
    let Some((eid, rest)) = said.split_once(" changed since you read it (version ") else {
        return false;
    };
    let Some((now, had)) = rest.split_once(", you had ") else {
        return false;
    };
    let number = |n: &str| n.parse::<u64>().ok();
    eid.len() == 32
        && number(now).is_some()
        && had.strip_suffix(')').and_then(number).is_some()
        && number(now) != had.strip_suffix(')').and_then(number)
}

/// A run club `log_run` through MCP's `command` tool.
fn log_run(who: &str) -> Value {
    json!({ "name": "log_run", "app": "demo/runs",
            "args": { "who": who, "miles": 3, "at": "2026-09-01" } })
}

#[tokio::test]
async fn tokens_sessions_and_jobs_work_on_both_and_what_one_takes_back_stops_on_both() {
    if skipped("tokens_sessions_and_jobs_work_on_both_and_what_one_takes_back_stops_on_both") {
        return;
    }
    let a = Shed::start().await;
    let b = a.beside();
    let token = a.shed(&["token", "create", "ed", "--name", "laptop"]);
    let token = token.trim();
    let cookie = a.demo_cookie("ed").await;
    let job = a.job_for("ed");
    for server in [&a, &b] {
        let (error, said) = server.mcp(token, "command", log_run("Ed")).await;
        assert!(!error, "{said}");
        assert_eq!(server.apply_with_token(token).await, StatusCode::OK);
        let (status, wrote) = server.apply("runs", run("Ed", 1.0), Some(&cookie)).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "the session signed in on A: {wrote}"
        );
        let outcome = server.run_as_job(&job);
        assert_eq!(outcome["ok"], true, "{outcome}");
    }

    let listed = a.shed(&["token", "list", "ed"]);
    let id = listed
        .lines()
        .find(|line| line.contains("laptop"))
        .and_then(|line| line.split_whitespace().next())
        .unwrap_or_else(|| panic!("no laptop token in {listed}"));
    a.shed(&["token", "revoke", id]);
    for server in [&b, &a] {
        let (error, said) = server.mcp(token, "command", log_run("Ed")).await;
        assert!(error, "a revoked token was answered: {said}");
        assert_eq!(
            server.apply_with_token(token).await,
            StatusCode::UNAUTHORIZED
        );
    }

    a.shed(&["member", "remove", "demo", "ed"]);
    for server in [&b, &a] {
        let (status, said) = server.apply("runs", run("Ed", 1.0), Some(&cookie)).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "a member taken out wrote: {said}"
        );
        let outcome = server.run_as_job(&job);
        assert_ne!(
            outcome["ok"], true,
            "a member taken out ran a job: {outcome}"
        );
    }
}
