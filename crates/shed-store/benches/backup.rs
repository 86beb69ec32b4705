//! How long `shed backup` and `shed restore` take, and how big the copy
//! is, for a store of 100,000 entities (one kind, `jog {who, miles, at}`,
//! with a `doc` title and body — the store bench's shape): a backup of the
//! idle store, a backup while a writer keeps applying single durable
//! writes (how many landed meanwhile), and a restore (which runs SQLite's
//! integrity check over the copy first). Prints the figures.
//! Run: `cargo bench -p shed-store --bench backup`.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shed_store::Store;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ENTITIES: usize = 100_000;
const BATCH: usize = 500;
const WHO: [&str; 8] = ["Ada", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal"];

/// Run `i` as one bundle of an apply.
fn bundle(i: usize) -> Value {
    json!({
        "entity": { "eid": format!("$r{}", i % BATCH) },
        "jog": { "who": WHO[i % WHO.len()], "miles": (i % 2_000) as f64 / 100.0,
                 "at": "2026-09-01T06:30:00Z" },
        "doc": { "title": format!("Run {i} by the river"), "body": "A loop of the park, then the hill." }
    })
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("shed.db");
    let store = runtime.block_on(Store::open(&database)).unwrap();
    let actor = runtime.block_on(support::ada_writing(&store, &["bench/runs"]));
    let filled = Instant::now();
    runtime.block_on(async {
        for start in (0..ENTITIES).step_by(BATCH) {
            let body = Value::Array((start..start + BATCH).map(bundle).collect());
            store.apply("bench/runs", &actor, body, None).await.unwrap();
        }
    });
    println!(
        "filled {ENTITIES} entities in {:.1} s",
        filled.elapsed().as_secs_f64()
    );

    let idle = dir.path().join("idle.backup");
    let started = Instant::now();
    let copied = shed_store::backup(&database, &idle, |_| {}).unwrap();
    println!(
        "backup, idle:         {:.2} s, {:.1} MiB",
        started.elapsed().as_secs_f64(),
        mib(copied.bytes)
    );

    let busy = dir.path().join("busy.backup");
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (store, actor, stop, written) =
            (store.clone(), actor.clone(), stop.clone(), written.clone());
        runtime.spawn(async move {
            let mut i = ENTITIES;
            while !stop.load(Ordering::Relaxed) {
                store
                    .apply("bench/runs", &actor, bundle(i), None)
                    .await
                    .unwrap();
                written.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
        })
    };
    // Let the writer get going first.
    std::thread::sleep(Duration::from_millis(200));
    let before = written.load(Ordering::Relaxed);
    let started = Instant::now();
    let copied = shed_store::backup(&database, &busy, |_| {}).unwrap();
    let took = started.elapsed();
    let during = written.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    runtime.block_on(writer).unwrap();
    println!(
        "backup, under writes: {:.2} s, {:.1} MiB; {during} durable writes committed meanwhile",
        took.as_secs_f64(),
        mib(copied.bytes)
    );

    let restored = dir.path().join("restored.db");
    let started = Instant::now();
    let copied = shed_store::restore(&idle, &restored).unwrap();
    println!(
        "restore (integrity check, then copy): {:.2} s, {:.1} MiB",
        started.elapsed().as_secs_f64(),
        mib(copied.bytes)
    );
}
