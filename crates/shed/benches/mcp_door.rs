//! The MCP door under load: starts a real `shed up` on a fresh data folder,
//! then 4 concurrent clients call `command find_jog` (50 rows) on the empty board,
//! `command log_run` (writes: each client one call at a time, then each
//! keeping several in flight, as a client running a batch does), and
//! `command find_jog` on the full board (50 rows an answer), over
//! Streamable HTTP — plain JSON-RPC POSTs to /mcp with the bearer token, one
//! request per call, as a 2026-07-28 client sends them — and prints calls/s,
//! p50 and p99. A durable write waits for an fsync, so the bench first prints
//! what one takes in the data folder: one-at-a-time writers can do no better
//! than (clients ÷ that time) however fast the server is.
//!
//! Beside each phase's figures it prints the CPU time the server process,
//! this bench's clients and the database (every `postgres` process on the
//! machine) spent per call, from /proc: on a shared, noisy machine the
//! wall-clock rates move with the load, the CPU per call much less. And how
//! idle the machine's cores were over the phase: idle cores under load mean
//! the calls wait on something one after another.
//!
//! With a PostgreSQL server named (`-- --database URL`, or
//! SHED_BENCH_DATABASE: `postgres://user:password@host:port/postgres`), the
//! phases run again on a `shed up --database` on a new database there
//! (`shed_bench_mcp`, made and dropped with `psql`), then once more on
//! another new database (`shed_bench_mcp_two`) with a second `shed serve`
//! beside the first and the clients split between the two — each
//! configuration from an empty board, so their phases read the same — and
//! after each phase a line gives its calls/s as a ratio of SQLite's. When
//! the server has `pg_stat_statements` loaded (`shared_preload_libraries`;
//! `scripts/postgres-cluster` takes it in SHED_POSTGRES_SETTINGS), each
//! phase also prints the statements the database ran per call: the delta
//! of the extension's `calls` for the bench's database over the phase
//! (counted by the server, so nothing in shed pays for it; a statement
//! sent unprepared costs one more round trip than it counts) — and, where
//! the phase committed, its calls per `COMMIT`: how many writes a group
//! commit took together.
//!
//! `cargo bench -p shed --bench mcp_door` (release build). Knobs:
//! SHED_BENCH_SECONDS (default 5 per phase), SHED_BENCH_CLIENTS (default 4),
//! SHED_BENCH_IN_FLIGHT (default 4: the calls each client keeps in flight in
//! the second write phase; every other phase keeps one), SHED_BENCH_BINARY
//! (another `shed` to start instead of this build's, e.g. a release build of
//! an earlier commit, for A/B runs back to back).

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/database.rs"]
mod database;
mod support;

use database::{database_flag, psql};

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PROTOCOL, Server, binary, call, free_port, start, wait_until_listening};

/// What the clients read of an answer: whether it is a result and not an
/// error. The whole body is still parsed (serde checks every byte of it), but
/// into nothing: a load generator that built a tree of every answer would
/// spend the shared cores the server is being measured on.
#[derive(serde::Deserialize)]
struct Reply {
    result: Option<ReplyResult>,
}

#[derive(serde::Deserialize)]
struct ReplyResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

/// How a phase loads the server: this many clients (each its own HTTP
/// client), each keeping this many calls in flight at once.
#[derive(Clone, Copy)]
struct Load {
    clients: usize,
    in_flight: usize,
}

/// What a client sends for its i-th call: the command and its arguments.
type Call = fn(u64) -> (String, Value);

/// Drives `make(i)` calls under `load` for `seconds`; returns every call's
/// latency.
async fn phase(
    servers: &[&Server],
    load: Load,
    seconds: u64,
    make: Call,
) -> (usize, Duration, Vec<Duration>) {
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    let mut clients: Vec<reqwest::Client> = Vec::new();
    for lane in 0..load.clients * load.in_flight {
        if lane % load.in_flight == 0 {
            clients.push(reqwest::Client::new());
        }
        let client = lane / load.in_flight;
        let http = clients[client].clone();
        // Clients take the servers in turn; a token works on every server
        // of one database, so the first's serves them all.
        let url = servers[client % servers.len()].url.clone();
        let bearer = format!("Bearer {}", servers[0].token);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = lane as u64 * 1_000_000;
            while Instant::now() < until {
                i += 1;
                let (name, args) = make(i);
                let sent = Instant::now();
                let response = http
                    .post(&url)
                    .header("authorization", &bearer)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", PROTOCOL)
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "command")
                    .json(&call(i, &name, args))
                    .send()
                    .await
                    .expect("the server answers");
                let body = response.bytes().await.expect("an answer");
                let reply: Reply = serde_json::from_slice(&body).expect("a JSON-RPC answer");
                latencies.push(sent.elapsed());
                assert!(
                    reply.result.is_some_and(|result| !result.is_error),
                    "a failed call: {}",
                    String::from_utf8_lossy(&body)
                );
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

/// CPU time (user + system) a process has used so far, from /proc.
fn process_cpu(pid: u32) -> Duration {
    let stat =
        std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's /proc stat");
    stat_cpu(&stat).1
}

/// A `/proc/<pid>/stat` line's command name and CPU time (user + system).
fn stat_cpu(stat: &str) -> (&str, Duration) {
    // The command name is in parentheses; the fields follow it.
    let (open, close) = (
        stat.find('(').unwrap_or(0),
        stat.rfind(')').expect("a stat line"),
    );
    let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    let time = Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second() as f64);
    (&stat[open + 1..close], time)
}

fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as u64 }
}

/// CPU time every process named `postgres` on this machine has used so far:
/// the database's own share of the cores, when its server runs here (as the
/// bench's loopback cluster does; 0 when it runs elsewhere).
fn database_cpu() -> Duration {
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return Duration::ZERO;
    };
    processes
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .map(|stat| match stat_cpu(&stat) {
            ("postgres", time) => time,
            _ => Duration::ZERO,
        })
        .sum()
}

/// The machine's idle and total CPU time so far, in clock ticks over every
/// core (`/proc/stat`'s first line).
fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .expect("a cpu line")
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse().expect("a tick count"))
        .collect();
    // idle and iowait are the 4th and 5th.
    (ticks[3] + ticks[4], ticks.iter().sum())
}

/// CPU time this bench process (its clients) has used so far.
fn own_cpu() -> Duration {
    process_cpu(std::process::id())
}

/// How one configuration's phases are measured beside the server's:
/// SQLite's rates to compare with, and where to count statements.
struct Beside<'a> {
    /// SQLite's calls/s for each phase, in order, when this is not SQLite.
    sqlite: Option<&'a [f64; PHASES]>,
    /// The database whose statements are counted, when it can be.
    statements: Option<&'a Statements>,
}

/// Runs a phase and reports it with the CPU the server and the clients
/// spent per call, its ratio to SQLite's rate and the statements per call
/// where `beside` has them (`at`: the phase's place in [`PHASE_NAMES`]).
async fn measured(
    servers: &[&Server],
    what: &str,
    load: Load,
    seconds: u64,
    make: Call,
    beside: &Beside<'_>,
    at: usize,
) -> f64 {
    let servers_cpu = || -> Duration { servers.iter().map(|s| process_cpu(s.child.id())).sum() };
    let (server_before, own_before) = (servers_cpu(), own_cpu());
    let (database_before, machine_before) = (database_cpu(), machine_ticks());
    let statements_before = beside.statements.and_then(Statements::count);
    let outcome = phase(servers, load, seconds, make).await;
    let calls = outcome.0.max(1) as f64;
    let rate = outcome.0 as f64 / outcome.1.as_secs_f64();
    let server_cpu = (servers_cpu() - server_before).as_secs_f64() / calls;
    let client_cpu = (own_cpu() - own_before).as_secs_f64() / calls;
    let database_cpu = (database_cpu() - database_before).as_secs_f64() / calls;
    let machine = machine_ticks();
    let idle = (machine.0 - machine_before.0) as f64 / (machine.1 - machine_before.1).max(1) as f64;
    let statements_after = beside.statements.and_then(Statements::count);
    report(what, outcome);
    println!(
        "{:<24} CPU per call: server {:>6.0} µs, clients {:>6.0} µs, database {:>6.0} µs; machine {:.0} % idle",
        "",
        server_cpu * 1e6,
        client_cpu * 1e6,
        database_cpu * 1e6,
        idle * 100.0
    );
    if let (Some(before), Some(after)) = (statements_before, statements_after) {
        let commits = after.commits.saturating_sub(before.commits);
        let per_commit = if commits == 0 {
            String::new()
        } else {
            format!(", {:.1} calls per commit", calls / commits as f64)
        };
        println!(
            "{:<24} statements per call: {:.1}{per_commit}",
            "",
            after.statements.saturating_sub(before.statements) as f64 / calls
        );
    }
    if let Some(sqlite) = beside.sqlite {
        println!(
            "{:<24} PostgreSQL/SQLite: {:.2} ({rate:.0} against {:.0} calls/s)",
            "",
            rate / sqlite[at].max(f64::MIN_POSITIVE),
            sqlite[at]
        );
    }
    rate
}

/// The statements PostgreSQL ran on one database, as `pg_stat_statements`
/// counts them.
struct Statements {
    server: String,
    database: String,
}

impl Statements {
    /// Counting on `database`, if the server has `pg_stat_statements` loaded.
    fn on(server: &str, database: &str) -> Option<Statements> {
        let made = std::process::Command::new("psql")
            .args([
                "-qtA",
                server,
                "-c",
                "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
            ])
            .stderr(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let counting = Statements {
            server: server.into(),
            database: database.into(),
        };
        (made && counting.count().is_some()).then_some(counting)
    }

    /// The statements run on the database so far, and of them the commits
    /// (a group commit's one `COMMIT` for all its writes).
    fn count(&self) -> Option<Counted> {
        let sql = format!(
            "SELECT COALESCE(SUM(calls), 0), COALESCE(SUM(calls) FILTER (WHERE query = 'COMMIT'), 0) \
             FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{}')",
            self.database
        );
        let out = std::process::Command::new("psql")
            .args(["-qtA", &self.server, "-c", &sql])
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let out = String::from_utf8_lossy(&out.stdout);
        let (statements, commits) = out.trim().split_once('|')?;
        Some(Counted {
            statements: statements.parse().ok()?,
            commits: commits.parse().ok()?,
        })
    }
}

/// What [`Statements::count`] counts.
#[derive(Clone, Copy)]
struct Counted {
    statements: u64,
    commits: u64,
}

fn report(what: &str, (calls, elapsed, mut latencies): (usize, Duration, Vec<Duration>)) {
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "{what:<24} {calls:>7} calls in {:>5.2}s = {:>8.0} calls/s   p50 {:>7.3} ms   p99 {:>7.3} ms",
        elapsed.as_secs_f64(),
        calls as f64 / elapsed.as_secs_f64(),
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
    );
}

fn log_run(i: u64) -> (String, Value) {
    (
        "log_run".into(),
        json!({ "who": format!("runner {}", i % 97), "miles": (i % 26) as f64 / 2.0, "at": "2026-09-01T07:00:00Z" }),
    )
}

/// A 50-row read of the runs (the run club's generated `find_jog`; its
/// `leaderboard` reads every run since #39, up to 1,000, for the totals).
fn find_runs(_: u64) -> (String, Value) {
    ("find_jog".into(), json!({ "limit": 50 }))
}

/// The median time an fsync of a 4 KiB write takes in `dir`: a durable
/// write waits for one, so it bounds what one client's writes can do.
fn fsync_median(dir: &std::path::Path) -> Duration {
    use std::io::Write;
    let path = dir.join("fsync-probe");
    let mut file = std::fs::File::create(&path).expect("a probe file");
    let mut took: Vec<Duration> = (0..50)
        .map(|_| {
            file.write_all(&[7u8; 4096]).expect("a probe write");
            let started = Instant::now();
            file.sync_all().expect("an fsync");
            started.elapsed()
        })
        .collect();
    drop(file);
    let _ = std::fs::remove_file(path);
    took.sort();
    took[took.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing and
    // wants a quick smoke run.
    let benching = std::env::args().any(|arg| arg == "--bench");
    let knob = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let seconds = knob("SHED_BENCH_SECONDS", if benching { 5 } else { 1 }) as u64;
    let clients = knob("SHED_BENCH_CLIENTS", 4);
    let in_flight = knob("SHED_BENCH_IN_FLIGHT", 4);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let load = (
        Load {
            clients,
            in_flight: 1,
        },
        Load { clients, in_flight },
    );
    let alone = Beside {
        sqlite: None,
        statements: None,
    };
    let on_sqlite = runtime.block_on(phases(&[&start(None)], "SQLite", load, seconds, &alone));
    let Some(server_url) = database_flag() else {
        return;
    };
    let database = new_database(&server_url, ONE_SERVER);
    let first = start(Some(&database));
    let counted = Statements::on(&server_url, ONE_SERVER);
    let on_postgres = runtime.block_on(phases(
        &[&first],
        "PostgreSQL",
        load,
        seconds,
        &Beside {
            sqlite: Some(&on_sqlite),
            statements: counted.as_ref(),
        },
    ));
    // The servers stop before their database goes.
    drop(first);
    psql(&server_url, &drop_database(ONE_SERVER));
    let database = new_database(&server_url, TWO_SERVERS);
    let first = start(Some(&database));
    let second = serve_beside(&first, &database);
    let counted = Statements::on(&server_url, TWO_SERVERS);
    let on_two = runtime.block_on(phases(
        &[&first, &second],
        "PostgreSQL, two servers",
        load,
        seconds,
        &Beside {
            sqlite: Some(&on_sqlite),
            statements: counted.as_ref(),
        },
    ));
    println!();
    println!(
        "{:<28} {:>12} {:>12} {:>12}",
        "calls/s", "SQLite", "PostgreSQL", "two servers"
    );
    for (i, what) in PHASE_NAMES.iter().enumerate() {
        println!(
            "{what:<28} {:>12.0} {:>12.0} {:>12.0}",
            on_sqlite[i], on_postgres[i], on_two[i]
        );
    }
    drop((second, first));
    psql(&server_url, &drop_database(TWO_SERVERS));
}

/// The databases the two PostgreSQL configurations run on, each made
/// empty for its phases.
const ONE_SERVER: &str = "shed_bench_mcp";
const TWO_SERVERS: &str = "shed_bench_mcp_two";

/// The phases, in the order they run.
const PHASES: usize = 4;
const PHASE_NAMES: [&str; PHASES] = [
    "find_jog, 0 rows",
    "log_run, one at a time",
    "log_run, in flight",
    "find_jog, 50 rows",
];

fn drop_database(name: &str) -> String {
    format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")
}

/// A second server on `first`'s database: `shed serve` on a data folder of
/// its own (its broker's socket and lock), answering `first`'s token.
fn serve_beside(first: &Server, database: &str) -> Server {
    let data = tempfile::tempdir().expect("a temp dir");
    let port = free_port();
    let child = std::process::Command::new(binary())
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--data")
        .arg(data.path())
        .args(["--database", database])
        .env_remove("SHED_DATABASE_URL")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("shed serve starts");
    wait_until_listening(port, "shed serve");
    Server {
        child,
        url: format!("http://localhost:{port}/mcp"),
        token: first.token.clone(),
        data,
    }
}

/// Makes the empty database `name` on the server, anew: its URL.
fn new_database(server: &str, name: &str) -> String {
    psql(server, &drop_database(name));
    psql(server, &format!("CREATE DATABASE {name}"));
    let (base, _) = server.rsplit_once('/').expect("a URL ending in /database");
    format!("{base}/{name}")
}

/// The four phases on `servers`: the calls/s of each, in [`PHASE_NAMES`]' order.
async fn phases(
    servers: &[&Server],
    on: &str,
    (one_each, several_each): (Load, Load),
    seconds: u64,
    beside: &Beside<'_>,
) -> [f64; PHASES] {
    let in_flight = several_each.in_flight;
    println!(
        "MCP door on {on}, {} concurrent clients over Streamable HTTP, {seconds}s per phase; \
         an fsync in the data folder takes {:.2} ms (median)",
        one_each.clients,
        fsync_median(servers[0].data.path()).as_secs_f64() * 1e3
    );
    let several = format!("log_run, {in_flight} in flight");
    let runs: [(&str, Load, Call); PHASES] = [
        (PHASE_NAMES[0], one_each, find_runs),
        ("command log_run", one_each, log_run),
        (&several, several_each, log_run),
        (PHASE_NAMES[3], one_each, find_runs),
    ];
    let mut rates = [0.0; PHASES];
    for (at, (what, load, make)) in runs.into_iter().enumerate() {
        rates[at] = measured(servers, what, load, seconds, make, beside, at).await;
    }
    rates
}
