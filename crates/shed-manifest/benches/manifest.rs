//! The issue's two figures: reading and validating a manifest of 500 commands
//! (target: under 5 ms), and filling the run club's `log_run` (target: under
//! 5 µs). Run with `cargo bench -p shed-manifest`.
//!
//! Each is measured twice: by the wall clock (criterion's default) and by
//! the CPU time of the benchmark's own thread, which a machine busy with
//! other work does not inflate by descheduling. A baseline — serde_json
//! parsing the same `tools.json` into a value — runs beside them, so the
//! cost of reading can be read as a ratio to parsing in the same run.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};

/// An app of 500 hand-written commands — half writes, half reads, a third of
/// them with a view — over ten kinds, each kind adding its two generated ones.
fn five_hundred_commands() -> BTreeMap<String, Vec<u8>> {
    let mut vocab = Map::new();
    for k in 0..10 {
        vocab.insert(
            format!("kind{k}"),
            json!({ "who": "text", "miles": "number", "at": "time", "ok": "bool", "link": "url" }),
        );
    }
    let mut tools = Map::new();
    for n in 0..500 {
        let kind = format!("kind{}", n % 10);
        let mut entry = if n % 2 == 0 {
            json!({
                "description": "Log a run for the club leaderboard, with who ran it and how far",
                "input": { "who": "text", "miles": "number", "at": "time", "note": "text" },
                "apply": [
                    { "entity": { "eid": "$run" },
                      "doc": { "title": "Run by {{who}} on {{at}}" },
                      kind.clone(): { "who": "{{who}}", "miles": "{{miles}}", "at": "{{at}}" } },
                    { "entity": { "eid": "$note" }, "doc": { "body": "{{note}}" },
                      "comment": { "target": "$run" } } ] })
        } else {
            json!({
                "description": "Runs over a distance since a date. Ask for it when someone wants the board.",
                "input": { "miles": "number", "since": "time" },
                "query": format!(".{kind}!&.doc?&.{kind}.miles>={{{{miles}}}}&.created.at>={{{{since}}}}&limit=20") })
        };
        if n % 3 == 0
            && let Some(fields) = entry.as_object_mut()
        {
            fields.insert("view".into(), json!("views/board.html"));
        }
        tools.insert(format!("command_{n}"), entry);
    }
    let mut files = BTreeMap::new();
    files.insert(
        "vocab.json".into(),
        Value::Object(vocab).to_string().into_bytes(),
    );
    files.insert(
        "tools.json".into(),
        Value::Object(tools).to_string().into_bytes(),
    );
    files.insert("index.html".into(), b"<!doctype html>".to_vec());
    files.insert("views/board.html".into(), b"<!doctype html>".to_vec());
    files
}

fn run_club() -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    files.insert(
        "vocab.json".into(),
        br#"{ "jog": { "who": "text", "miles": "number", "at": "time" } }"#.to_vec(),
    );
    files.insert(
        "tools.json".into(),
        br#"{ "log_run": {
            "description": "Log a run for the club leaderboard",
            "input": { "who": "text", "miles": "number", "at": "time" },
            "apply": { "entity": { "eid": "$run" },
                       "doc": { "title": "Run by {{who}}" },
                       "jog": { "who": "{{who}}", "miles": "{{miles}}", "at": "{{at}}" } } } }"#
            .to_vec(),
    );
    files
}

/// The CPU time this thread has used so far.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to write into.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Benchmarks `work` by wall clock and by thread CPU time.
fn both_clocks<T>(c: &mut Criterion, name: &str, mut work: impl FnMut() -> T) {
    c.bench_function(name, |b| b.iter(&mut work));
    c.bench_function(&format!("{name} (thread CPU time)"), |b| {
        b.iter_custom(|iters| {
            let start = thread_cpu_time();
            for _ in 0..iters {
                black_box(work());
            }
            thread_cpu_time().saturating_sub(start)
        })
    });
}

fn benches(c: &mut Criterion) {
    let files = five_hundred_commands();
    let manifest = shed_manifest::read_app(&files, "bench/app").expect("the bench manifest reads");
    assert_eq!(manifest.commands.len(), 520);
    let tools = files.get("tools.json").expect("tools.json");
    both_clocks(c, "baseline: serde_json parse of that tools.json", || {
        serde_json::from_slice::<Value>(black_box(tools))
    });
    both_clocks(c, "read_app: 500 commands", || {
        shed_manifest::read_app(black_box(&files), "bench/app")
    });

    let club = shed_manifest::read_app(&run_club(), "club/runs").expect("the run club reads");
    let log_run = club.command("log_run").expect("log_run");
    let args = json!({ "who": "Ada", "miles": "5", "at": "2026-09-01T10:00:00Z" });
    let now = shed_manifest::Timestamp::now();
    assert!(log_run.fill(&args, now).is_ok());
    both_clocks(c, "fill: log_run", || log_run.fill(black_box(&args), now));
}

criterion_group!(manifest, benches);
criterion_main!(manifest);
