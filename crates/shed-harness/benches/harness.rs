//! Prints the harness's figures: the time to render `list_commands` over a
//! 10,000-row listing (target: under 50 ms), and a batch's overhead per call
//! — the harness's own time beside the host processes it starts.
//!
//! Run: `cargo bench -p shed-harness --bench harness`.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

/// The same allocator as the `shed-harness` binary, so the figures are its figures.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use serde_json::{Value, json};
use shed_harness::calls::{Answer, CallResult, CallSpec};
use shed_harness::catalog::Catalog;
use shed_harness::config::HostConfig;
use shed_harness::harness::{Harness, RunSettings, render_batch};
use shed_harness::labels::Label;
use shed_harness::listing;
use shed_harness::outcome::HostOutcome;
use shed_harness::policy::{Mode, PolicyTrace, TaskSlot};
use shed_harness::tools::ALL_TOOLS;

/// This thread's user and system time (Linux, 10 ms ticks), so a figure
/// summed over many iterations holds on a machine others are loading.
fn cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = text.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn listing_rows(n: usize) -> Value {
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("space{}/app{}.command_{i}", i % 50, i % 7),
                "title": "Find the rows that match a filter line.",
                "description": "Reads rows of the app that match the filter line, newest first, with the components the line asks for. ".repeat(2),
                "inputSchema": {"type": "object", "x-host": true, "properties": {
                    "filter": {"type": "string"}, "limit": {"type": "integer", "default": 50},
                    "order": {"enum": ["newest", "oldest", "by name"]}, "loomId": {"type": "string", "x-source": "job"}
                }, "required": ["filter", "loomId"]},
                "outputs": {"rows": {}, "next": {}},
                "effect": if i % 2 == 0 { "read" } else { "write" },
                "scope": "app",
                "readOnlyGranted": i % 4 == 0,
            })
        })
        .collect();
    json!({ "commands": rows })
}

fn bench_listing() {
    let listing_value = listing_rows(10_000);
    let mut reads = Vec::new();
    let mut renders = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..15 {
        let listing_copy = listing_value.clone();
        let cpu_start = cpu_time();
        let start = Instant::now();
        let catalog = Catalog::from_listing_owned(listing_copy).expect("a listing");
        let read = start.elapsed();
        let out = listing::render(
            &catalog,
            &["space3/app3.command_3".to_string()],
            32 * 1024,
            "out-1",
        );
        std::hint::black_box(out);
        renders.push(start.elapsed() - read);
        reads.push(read);
        if let (Some(a), Some(b)) = (cpu_start, cpu_time()) {
            cpu.push(b - a);
        }
        drop(catalog);
    }
    let (read, render) = (median(reads), median(renders));
    let total = read + render;
    println!(
        "list_commands over 10,000 rows (32 KiB bound): median {:.2} ms = catalog with signatures {:.2} ms + render {:.2} ms (target < 50 ms: {})",
        total.as_secs_f64() * 1e3,
        read.as_secs_f64() * 1e3,
        render.as_secs_f64() * 1e3,
        if total < Duration::from_millis(50) {
            "met"
        } else {
            "MISSED"
        }
    );
    if !cpu.is_empty() {
        let on_cpu = cpu.iter().sum::<Duration>() / cpu.len() as u32;
        println!(
            "  the same in CPU time (mean of this thread's user+system time, unaffected by other load): {:.2} ms",
            on_cpu.as_secs_f64() * 1e3
        );
    }
}

fn bench_batch_render() {
    let results: Vec<(String, CallResult)> = (0..16)
        .map(|i| {
            let outcome = HostOutcome::from_json(&json!({
                "ok": true, "id": format!("op-{i}"), "code": "ok", "mayHaveLanded": true,
                "completed": ["a", "b"], "body": {"rows": vec![json!({"miles": 5, "who": "jeff"}); 20]}, "version": 3
            }));
            let answer = Answer::Admitted {
                entry: outcome.admitted_entry(),
                label: Label::bottom(),
            };
            let spec = CallSpec {
                command: "jeff/runs.find".into(),
                args: json!({}),
                loom_id: None,
                expected_version: None,
            };
            (format!("out-{i}"), CallResult::Executed { spec: Box::new(spec), outcome: Box::new(outcome), signature: None, answer })
        })
        .collect();
    let mut samples = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        std::hint::black_box(render_batch(&results, "out-b", 32 * 1024));
        samples.push(start.elapsed());
    }
    println!(
        "batch shaping (16 calls, 32 KiB bound): {:.1} µs per call",
        median(samples).as_secs_f64() * 1e6 / 16.0
    );
}

async fn bench_batch_end_to_end() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let queue = dir.path().join("queue");
    std::fs::create_dir_all(queue.join("outcomes")).expect("fixture dirs");
    std::fs::write(queue.join("listing.json"), listing_rows(20).to_string()).expect("listing");
    let fake = env!("CARGO_BIN_EXE_shed-harness-fake-host");
    let harness = Harness::new(RunSettings {
        host: Some(HostConfig {
            cli_path: fake.into(),
            job_id_env_var: None,
            queue_path: queue.clone(),
        }),
        command_job_id: None,
        allowed: ALL_TOOLS.to_vec(),
        mode: Mode::Off,
        task_slot: TaskSlot::DirectCommand,
        ceiling: None,
        output_bound: 32 * 1024,
        trace: PolicyTrace::default(),
    });
    let calls: Vec<Value> = (0..16)
        .map(|_| json!({"command": "space0/app0.command_0", "args": {"filter": ".jog!", "loomId": "x"}}))
        .collect();
    let input = json!({ "calls": calls });
    let _ = harness.call("run_command", input.clone()).await; // holds the catalog
    let mut with_harness = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        std::hint::black_box(harness.call("run_command", input.clone()).await);
        with_harness.push(start.elapsed());
        // The same 16 host processes, four at a time, without the harness.
        let start = Instant::now();
        for _ in 0..4 {
            let mut children = Vec::new();
            for _ in 0..4 {
                let mut cmd = tokio::process::Command::new(fake);
                cmd.args([
                    "command",
                    "run",
                    "space0/app0.command_0",
                    "--args-json",
                    "-",
                    "--json",
                ])
                .env_clear()
                .env("LOOM_PAGE_RPC_QUEUE", &queue)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped());
                children.push(cmd.spawn().expect("fake host starts"));
            }
            for child in children {
                let _ = child.wait_with_output().await;
            }
        }
        bare.push(start.elapsed());
    }
    let (h, b) = (median(with_harness), median(bare));
    println!(
        "16-call batch end to end: {:.2} ms; the same 16 host processes alone: {:.2} ms; harness overhead {:.3} ms per call (ratio {:.2})",
        h.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        (h.as_secs_f64() - b.as_secs_f64()) * 1e3 / 16.0,
        h.as_secs_f64() / b.as_secs_f64()
    );
}

fn main() {
    bench_listing();
    bench_batch_render();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(bench_batch_end_to_end());
}
