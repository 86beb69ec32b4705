//! The broker's figures, printed:
//! - in-process: calls/s of `Broker::run` (a read and a write, 16 at once);
//! - per process: the p50 and p90 wall time of one `shed command run`
//!   process against a live queue, beside `shed --version` (a process that
//!   asks nothing), as a ratio in the same run.
//!
//! `cargo bench -p shed-broker --bench broker` — the per-process figure needs
//! the release `shed` binary (`cargo build --release -p shed`), found at
//! $SHED_BIN or next to this bench's target directory.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shed_broker::protocol::RunRequest;
use shed_broker::{Broker, Code, Queue, jobs};
use shed_host::{Host, HostConfig};

const IN_PROCESS_CALLS: usize = 4000;
const IN_FLIGHT: usize = 16;
const PROCESSES: usize = 200;

fn run_club() -> BTreeMap<String, Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    std::fs::read_dir(&dir)
        .expect("the run club example")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

fn request(job: &str, command: &str, args: Value) -> RunRequest {
    RunRequest {
        job: Some(job.to_string()),
        command: command.to_string(),
        args,
        loom: None,
        expect: None,
        read_only: false,
        actor: None,
    }
}

fn shed_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("SHED_BIN") {
        return Some(PathBuf::from(bin));
    }
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?; // target/release/deps/<bench> → target/release
    let candidate = profile_dir.join("shed");
    candidate.exists().then_some(candidate)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn timed(processes: usize, mut one: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..processes)
        .map(|_| {
            let start = Instant::now();
            one();
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    let data = dir.path().join("d");
    let (broker, job) = runtime.block_on(async {
        let host = Host::open(HostConfig {
            data_dir: data.clone(),
            public_url: "http://localhost:7700".into(),
            database: None,
        })
        .await
        .expect("the host");
        host.add_person("ada", Some("Ada")).await.expect("ada");
        host.add_space("demo", "ada").await.expect("demo");
        let ada = host.caller_for_handle("ada").await.expect("ada's caller");
        host.deploy_folder(&ada, "demo/runs", run_club(), Some("Run club".into()), None)
            .await
            .expect("deploy");
        let ttl = Duration::from_secs(3600);
        let made = jobs::create(&host, "ada", vec!["demo/runs.*".into()], vec![], ttl)
            .await
            .expect("job");
        (Arc::new(Broker::new(host)), made.secret)
    });

    for (what, command, args) in [
        (
            "read (demo/runs.leaderboard)",
            "demo/runs.leaderboard",
            json!({}),
        ),
        (
            "write (demo/runs.log_run)",
            "demo/runs.log_run",
            json!({"who": "Ada", "miles": 5, "at": "2026-09-01"}),
        ),
    ] {
        let start = Instant::now();
        runtime.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            for worker in 0..IN_FLIGHT {
                let broker = broker.clone();
                let request = request(&job, command, args.clone());
                tasks.spawn(async move {
                    for _ in (worker..IN_PROCESS_CALLS).step_by(IN_FLIGHT) {
                        let outcome = broker.run(request.clone()).await;
                        assert_eq!(outcome.code, Code::Ok, "{}", outcome.message);
                    }
                });
            }
            while tasks.join_next().await.is_some() {}
        });
        let rate = IN_PROCESS_CALLS as f64 / start.elapsed().as_secs_f64();
        println!(
            "broker in-process, {what}: {rate:.0} calls/s ({IN_PROCESS_CALLS} calls, {IN_FLIGHT} in flight)"
        );
    }

    let Some(shed) = shed_binary() else {
        println!(
            "shed command run per process: skipped — build the release shed (cargo build --release -p shed) or set SHED_BIN"
        );
        return;
    };
    let queue_path = dir.path().join("q.sock");
    let _guard = runtime.enter();
    let _queue = Queue::start(broker.clone(), &data, &queue_path, 16).expect("the queue");
    let run = || {
        let mut child = Command::new(&shed)
            .args([
                "command",
                "run",
                "demo/runs.leaderboard",
                "--args-json",
                "-",
                "--json",
            ])
            .env_clear()
            .env("LOOM_PAGE_RPC_QUEUE", &queue_path)
            .env("LOOM_COMMAND_JOB_ID", &job)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("shed command run");
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(b"{}");
        }
        let out = child.wait_with_output().expect("its output");
        assert!(
            out.status.success() && out.stdout.starts_with(b"{\"ok\":true"),
            "{out:?}"
        );
    };
    let bare = || {
        let status = Command::new(&shed)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .expect("shed --version");
        assert!(status.success());
    };
    // Warm the page cache, then measure both in one run.
    timed(10, run);
    let runs = timed(PROCESSES, run);
    let bares = timed(PROCESSES, bare);
    let (p50, p90, bare50) = (
        percentile(&runs, 0.5),
        percentile(&runs, 0.9),
        percentile(&bares, 0.5),
    );
    println!(
        "shed command run per process ({}): p50 {:.2} ms, p90 {:.2} ms; `shed --version` p50 {:.2} ms; ratio run/version {:.2}",
        shed.display(),
        p50.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
        bare50.as_secs_f64() * 1e3,
        p50.as_secs_f64() / bare50.as_secs_f64().max(1e-9)
    );
}
