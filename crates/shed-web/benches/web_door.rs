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
//! SHED_BENCH_CLIENTS (default 4).

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

async fn setup(data: &Path, port: u16) -> (Host, String) {
    let host = Host::open(HostConfig {
        data_dir: data.to_path_buf(),
        public_url: format!("http://localhost:{port}"),
        database: None,
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
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let at = listener.local_addr().expect("an address");
        let (host, token) = setup(data.path(), at.port()).await;
        let routes = shed_web::router(host, axum::Router::new(), shed_web::Operator::default());
        tokio::spawn(async move { axum::serve(listener, routes).await });
        println!(
            "web door, {clients} concurrent connections, {seconds}s per phase (demo/runs, 200 runs)"
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
}
