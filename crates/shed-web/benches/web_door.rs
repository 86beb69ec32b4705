//! The web door under load: the run club deployed as `demo/runs` (private)
//! with 200 runs logged, served in-process on a loopback port, then 4
//! concurrent connections (one keep-alive client each) ask as fast as they
//! can for: the style sheet (a static file), the index page (a private page:
//! session check, access decision, rendered page from the cache, CSP), and
//! `./api/query` (the board, 50 rows, through Host::graph_query). Prints
//! requests/s, p50 and p99 for each.
//!
//! `cargo bench -p shed-web --bench web_door`. Knobs: SHED_BENCH_SECONDS
//! (default 5 per phase; 1 when run by `cargo test --benches`),
//! SHED_BENCH_CLIENTS (default 4), SHED_BENCH_DATABASE (a PostgreSQL
//! server's URL: the host keeps its data in a new database there,
//! `shed_bench_web`, made and dropped with `psql`; else SQLite).

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use shed_host::{Access, Host, HostConfig};

struct Phase {
    name: &'static str,
    path: &'static str,
}

/// The database made for the run on the server SHED_BENCH_DATABASE names.
const DATABASE: &str = "shed_bench_web";

/// Runs `sql` on the server with `psql`.
fn psql(server: &str, sql: &str) {
    let status = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", server, "-c", sql])
        .status()
        .expect("psql runs");
    assert!(status.success(), "psql: {sql}");
}

/// The new, empty database [`DATABASE`] on `server`: its URL.
fn new_database(server: &str) -> String {
    psql(
        server,
        &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
    );
    psql(server, &format!("CREATE DATABASE {DATABASE}"));
    let (base, _) = server.rsplit_once('/').expect("a URL ending in /database");
    format!("{base}/{DATABASE}")
}

async fn setup(data: &Path, port: u16, database: Option<String>) -> (Host, String) {
    let host = Host::open(HostConfig {
        data_dir: data.to_path_buf(),
        public_url: format!("http://localhost:{port}"),
        database,
    })
    .await
    .expect("a host");
    host.add_person("ada", Some("Ada")).await.expect("ada");
    host.add_space("demo", "ada").await.expect("demo");
    let ada = host.caller_for_handle("ada").await.expect("ada signs in");
    let club = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&club).expect("the run club example") {
        let path = entry.expect("a file").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a name")
            .to_string();
        files.insert(name, std::fs::read(&path).expect("readable"));
    }
    host.deploy_folder(
        &ada,
        "demo/runs",
        files,
        Some("Run club".into()),
        Some(Access::Private),
    )
    .await
    .expect("deployed");
    for i in 0..200 {
        let run = serde_json::json!({ "entity": { "eid": "$run" }, "doc": { "title": format!("Run {i}") },
                                      "jog": { "who": format!("runner {}", i % 17), "miles": i % 13, "at": "2026-09-01T07:00:00Z" } });
        host.graph_apply(&ada, "demo/runs", run)
            .await
            .expect("a run");
    }
    let token = host
        .create_token("ada", Default::default())
        .await
        .expect("a token");
    (host, token)
}

async fn phase(
    at: SocketAddr,
    token: &str,
    clients: usize,
    seconds: u64,
    path: &str,
) -> (usize, Duration, Vec<Duration>) {
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let url = format!("http://demo.localhost:{}{path}", at.port());
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let http = reqwest::Client::builder()
            .resolve("demo.localhost", at)
            .pool_max_idle_per_host(1)
            .build()
            .expect("a client");
        let (url, bearer) = (url.clone(), format!("Bearer {token}"));
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < until {
                let sent = Instant::now();
                let response = http
                    .get(&url)
                    .header("authorization", &bearer)
                    .send()
                    .await
                    .expect("an answer");
                assert!(
                    response.status().is_success(),
                    "{url}: {}",
                    response.status()
                );
                response.bytes().await.expect("a body");
                latencies.push(sent.elapsed());
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("a client ran"));
    }
    (all.len(), started.elapsed(), all)
}

fn report(what: &str, (requests, elapsed, mut latencies): (usize, Duration, Vec<Duration>)) {
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "{what:<34} {requests:>7} requests in {:>5.2}s = {:>8.0} requests/s   p50 {:>6.3} ms   p99 {:>6.3} ms",
        elapsed.as_secs_f64(),
        requests as f64 / elapsed.as_secs_f64(),
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
    );
}

fn main() {
    let benching = std::env::args().any(|arg| arg == "--bench");
    let knob = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let seconds = knob("SHED_BENCH_SECONDS", if benching { 5 } else { 1 });
    let clients = knob("SHED_BENCH_CLIENTS", 4) as usize;
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let data = tempfile::tempdir().expect("a temp dir");
    let server = std::env::var("SHED_BENCH_DATABASE")
        .ok()
        .filter(|url| !url.is_empty());
    let database = server.as_deref().map(new_database);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let at = listener.local_addr().expect("an address");
        let (host, token) = setup(data.path(), at.port(), database.clone()).await;
        let routes = shed_web::router(host, axum::Router::new(), shed_web::Operator::default());
        tokio::spawn(async move { axum::serve(listener, routes).await });
        println!(
            "web door on {}, {clients} concurrent connections, {seconds}s per phase (demo/runs, 200 runs)",
            if database.is_some() { "PostgreSQL" } else { "SQLite" }
        );
        for Phase { name, path } in [
            Phase {
                name: "static file  /runs/style.css",
                path: "/runs/style.css",
            },
            Phase {
                name: "private page /runs/",
                path: "/runs/",
            },
            Phase {
                name: "page api     ./api/query (50 rows)",
                path: "/runs/api/query?.jog!&.created!",
            },
        ] {
            report(name, phase(at, &token, clients, seconds, path).await);
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
    if let Some(server) = server {
        psql(
            &server,
            &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
        );
    }
}
