//! `shed serve`'s memory after serving many apps on one PostgreSQL database
//! (#35): starts a real `shed up --database` on a new database there
//! (`shed_bench_served`, made and dropped with `psql`), which deploys the
//! run club as `demo/runs`, and calls its `leaderboard` once. Then deploys
//! the run club again as `demo/r00002` … up to SHED_BENCH_APPS apps in all
//! (default 10,000) through the store, as `shed deploy` does (`declare` of
//! its vocabulary, then `record_deploy` of its files; no process a deploy,
//! so 10,000 take minutes), while the server runs. Then 4 clients reach
//! every app through the MCP door — `commands` with the app, then `command
//! leaderboard` in it — a block of 1,000 apps at a time, and after each
//! block the bench prints the server's VmRSS and VmHWM (`/proc`), the
//! block's time, and at the end what serving every app added, per app.
//!
//! `scripts/postgres-cluster sh -c 'cargo bench -p shed --bench many_apps_served -- --database "$SHED_TEST_DATABASE"'`
//! (release build). Knobs: SHED_BENCH_APPS (default 10,000),
//! SHED_BENCH_BINARY (another `shed` to start instead of this build's).

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/database.rs"]
mod database;
mod support;

use database::{database_flag, psql};

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use shed_store::platform::NewDeploy;
use shed_store::{ColumnType, Store, Vocabulary};
use support::{PROTOCOL, Server, call, start, tool_call};

/// Apps on the database when SHED_BENCH_APPS is not set.
const DEFAULT_APPS: usize = 10_000;
/// Apps reached between two readings of the server's memory.
const BLOCK: usize = 1_000;
/// Concurrent clients.
const CLIENTS: usize = 4;
/// The database made for the run on the server.
const DATABASE: &str = "shed_bench_served";

/// The run club's files, as a deploy takes them.
fn run_club() -> BTreeMap<String, Vec<u8>> {
    let club = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    std::fs::read_dir(&club)
        .expect("the run club example")
        .map(|entry| {
            let path = entry.expect("a file").path();
            let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
            (name.to_string(), std::fs::read(&path).expect("readable"))
        })
        .collect()
}

/// The run club's vocabulary (`examples/run-club/vocab.json`), as a deploy
/// declares it.
fn run_club_vocabulary() -> Vocabulary {
    let jog = [
        ("who", ColumnType::Text),
        ("miles", ColumnType::Number),
        ("at", ColumnType::Time),
    ];
    Vocabulary {
        components: vec![(
            "jog".into(),
            jog.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
        )],
    }
}

/// The app `i` (1-based): the first is the one `shed up` deploys.
fn app(i: usize) -> String {
    match i {
        1 => "demo/runs".into(),
        _ => format!("demo/r{i:05}"),
    }
}

/// Deploys the run club as apps 2 to `apps`, through the store.
async fn deploy(url: &str, apps: usize) {
    let store = Store::connect(url).await.unwrap();
    let you = store
        .person("you")
        .await
        .unwrap()
        .expect("shed up made you");
    let (vocabulary, files) = (run_club_vocabulary(), run_club());
    let started = Instant::now();
    for i in 2..=apps {
        let name = app(i);
        store.declare(&name, &vocabulary).await.unwrap();
        let (space, slug) = name.split_once('/').unwrap();
        store
            .record_deploy(NewDeploy {
                space: space.into(),
                slug: slug.into(),
                title: None,
                access: None,
                by: you.eid.clone(),
                files: files.clone(),
                clear_drafts: false,
                rolls_back_to: None,
            })
            .await
            .unwrap();
        if i.is_multiple_of(BLOCK) {
            eprintln!(
                "  {i} apps deployed ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
        }
    }
    println!(
        "deployed {} more apps in {:.1} s",
        apps - 1,
        started.elapsed().as_secs_f64()
    );
    store.close().await.unwrap();
}

/// The server's resident memory and its peak, in KiB (`/proc/PID/status`).
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .expect("a field of /proc/PID/status")
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Where the clients call: the MCP address and the bearer token.
#[derive(Clone)]
struct Door {
    http: reqwest::Client,
    url: String,
    bearer: String,
}

impl Door {
    fn of(server: &Server) -> Door {
        Door {
            http: reqwest::Client::new(),
            url: server.url.clone(),
            bearer: format!("Bearer {}", server.token),
        }
    }

    /// One tools/call: the JSON-RPC answer's result, which must not be an
    /// error.
    async fn ask(&self, request: &Value) -> Value {
        let body: Value = self
            .http
            .post(&self.url)
            .header("authorization", &self.bearer)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", "tools/call")
            .header(
                "mcp-name",
                request["params"]["name"].as_str().unwrap_or_default(),
            )
            .json(request)
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("a JSON-RPC answer");
        let result = body.get("result").cloned().unwrap_or_default();
        assert!(
            !result.is_null() && result.get("isError") != Some(&json!(true)),
            "a failed call: {body}"
        );
        result
    }

    /// Reaches apps `from..to` (1-based, `to` excluded), [`CLIENTS`] at a
    /// time: `commands` with the app, then its `leaderboard`.
    async fn reach(&self, from: usize, to: usize) {
        let mut clients = tokio::task::JoinSet::new();
        for client in 0..CLIENTS {
            let door = self.clone();
            clients.spawn(async move {
                for i in (from + client..to).step_by(CLIENTS) {
                    let commands = tool_call(i as u64, "commands", json!({ "app": app(i) }));
                    door.ask(&commands).await;
                    let board = json!({ "name": "leaderboard", "args": {}, "app": app(i) });
                    door.ask(&tool_call(i as u64, "command", board)).await;
                }
            });
        }
        while let Some(done) = clients.join_next().await {
            done.expect("a client ran");
        }
    }
}

fn main() {
    let Some(server_url) = database_flag() else {
        println!(
            "skipped — name a PostgreSQL server with `-- --database URL` or SHED_BENCH_DATABASE"
        );
        return;
    };
    let apps: usize = std::env::var("SHED_BENCH_APPS")
        .ok()
        .map(|s| {
            s.trim()
                .parse()
                .expect("SHED_BENCH_APPS is a count of apps, e.g. 10000")
        })
        .unwrap_or(DEFAULT_APPS);
    let drop_database = format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)");
    psql(&server_url, &drop_database);
    psql(&server_url, &format!("CREATE DATABASE {DATABASE}"));
    let (base, _) = server_url
        .rsplit_once('/')
        .expect("a URL ending in /database");
    let url = format!("{base}/{DATABASE}");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = start(Some(&url));
    let pid = server.child.id();
    let door = Door::of(&server);
    runtime.block_on(async {
        let started = memory(pid);
        door.ask(&call(0, "leaderboard", json!({}))).await;
        let one = memory(pid);
        println!(
            "shed up on PostgreSQL ({DATABASE}; its data folder {}): started {:.1} MiB (peak {:.1}); after one call of its one app {:.1} MiB (peak {:.1})",
            server.data.path().display(),
            mib(started.0),
            mib(started.1),
            mib(one.0),
            mib(one.1)
        );
        deploy(&url, apps).await;
        let before = memory(pid);
        println!(
            "{apps} apps on the database, none of the new ones served yet: {:.1} MiB (peak {:.1})",
            mib(before.0),
            mib(before.1)
        );
        let mut reached = 1;
        while reached <= apps {
            let to = (reached + BLOCK).min(apps + 1);
            let t = Instant::now();
            door.reach(reached, to).await;
            let now = memory(pid);
            println!(
                "  apps {reached}–{}: {:.1} s ({:.2} ms an app, 2 calls); VmRSS {:.1} MiB, VmHWM {:.1} MiB",
                to - 1,
                t.elapsed().as_secs_f64(),
                t.elapsed().as_secs_f64() * 1000.0 / (to - reached) as f64,
                mib(now.0),
                mib(now.1)
            );
            reached = to;
        }
        let after = memory(pid);
        println!(
            "after serving all {apps} apps: VmRSS {:.1} MiB, VmHWM {:.1} MiB; since before serving them {:+.1} KiB an app (RSS), {:+.1} KiB (peak)",
            mib(after.0),
            mib(after.1),
            (after.0 as f64 - before.0 as f64) / apps as f64,
            (after.1 as f64 - before.1 as f64) / apps as f64
        );
    });
    drop(server);
    psql(&server_url, &drop_database);
}
