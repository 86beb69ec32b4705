//! A space's activity at scale: with `SHED_BENCH_WRITES` writes (default
//! 100,000) in one space — each a real `Store::apply` of one entity,
//! alternating two apps, every other one an agent's (`agent:job-3` through
//! `log_run`) — how long the activity page's read takes: the first page
//! (50 writes), a page deep in the list (older than the write a tenth of
//! the way in, and halfway), the first page narrowed to the agent and to
//! one app, and the refusals' first page with the space's refusals full;
//! then keeping one more refusal (its caller's recent ones counted, the
//! space's oldest forgotten), and one past its caller's rate.
//! Each figure is the median and the 99th percentile of `READS` reads, in
//! process, through the store's API (what the page's server time is made
//! of, beside the page's drawing).
//!
//! PostgreSQL when `SHED_BENCH_DATABASE` (or else `SHED_TEST_DATABASE`)
//! names a server: a database `shed_bench_activity` is made for the run and
//! dropped after it. SQLite in a temporary folder unless
//! `SHED_BENCH_SQLITE=0`.
//! Run: `scripts/postgres-cluster cargo bench -p shed-store --bench activity`.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use shed_store::activity::{Narrow, NewRefusal, REFUSALS_KEPT_PER_CALLER, REFUSALS_PER_SPACE};
use shed_store::{Actor, Store, Through};

#[path = "support/server.rs"]
mod server;
#[path = "support/mod.rs"]
mod support;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Writes made when `SHED_BENCH_WRITES` is not set.
const DEFAULT_WRITES: i64 = 100_000;
/// Writes in flight while filling.
const IN_FLIGHT: i64 = 8;
/// A page of activity, as the pages ask for it (one more, to know of a next).
const PAGE: usize = 51;
/// Reads of each kind whose median and 99th percentile are shown.
const READS: usize = 300;
/// The two apps written, in the space `bench`.
const APPS: [&str; 2] = ["bench/runs", "bench/keep"];

/// The writes to make, from `SHED_BENCH_WRITES`.
fn writes_to_make() -> i64 {
    std::env::var("SHED_BENCH_WRITES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_WRITES)
}

/// The actor of the `i`th write: every other one the agent's.
fn actor(ada: &Actor, i: i64) -> Actor {
    let mut actor = ada.clone();
    actor.through = Some(if i % 2 == 0 {
        actor.via = Some("agent:job-3".into());
        Through {
            door: "broker".into(),
            command: Some("log_run".into()),
            client: Some("job-3".into()),
        }
    } else {
        Through {
            door: "web".into(),
            command: Some("apply".into()),
            client: None,
        }
    });
    actor
}

/// Fills the space with `n` writes, `IN_FLIGHT` at a time, saying how far.
async fn fill(store: &Store, ada: &Actor, n: i64) {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for lane in 0..IN_FLIGHT {
        let (store, ada) = (store.clone(), ada.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = lane;
            while i < n {
                let body = json!({ "entity": { "eid": "$r" }, "jog": { "miles": i } });
                let app = APPS[(i % 2) as usize];
                store.apply(app, &actor(&ada, i), body, None).await.unwrap();
                if i % 10_000 == 0 && i > 0 {
                    eprintln!("  {i} writes, {:.0} s", started.elapsed().as_secs_f64());
                }
                i += IN_FLIGHT;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "  filled: {n} writes in {seconds:.0} s ({:.0} writes/s)",
        n as f64 / seconds
    );
    // The space's refusals full, of as many agents as it takes to keep
    // them all.
    for i in 0..REFUSALS_PER_SPACE {
        let agent = format!("agent:job-{}", i / REFUSALS_KEPT_PER_CALLER);
        assert!(store.record_refusal(refusal(ada, &agent)).await.unwrap());
    }
}

/// A refusal of `ada`'s agent `via`, as the bench keeps them.
fn refusal(ada: &Actor, via: &str) -> NewRefusal {
    NewRefusal {
        app: APPS[0].into(),
        by: ada.person.clone(),
        via: Some(via.into()),
        through: actor(ada, 0).through.unwrap(),
        sentence: "refused".into(),
    }
}

/// The median and 99th percentile of `READS` runs of `read`, which must
/// answer `expect` rows.
async fn timed<F: AsyncFn() -> usize>(label: &str, expect: usize, read: F) {
    let mut times = Vec::with_capacity(READS);
    for _ in 0..READS {
        let started = Instant::now();
        let rows = read().await;
        times.push(started.elapsed());
        assert_eq!(rows, expect, "{label}: rows");
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "  {label:<48} median {:>7.3} ms   p99 {:>7.3} ms",
        ms(at(0.5)),
        ms(at(0.99))
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Fills `store` and measures its reads.
async fn measure(store: &Store) {
    let n = writes_to_make();
    let ada = support::ada_writing(store, &APPS).await;
    fill(store, &ada, n).await;
    let apps: Vec<String> = APPS.iter().map(|a| a.to_string()).collect();
    let all = Narrow::default();
    // The newest write's id: ids are handed out in order from the first.
    let newest = store.writes("bench", &apps, &all, None, 1).await.unwrap()[0].id;
    let page = |before: Option<i64>, narrow: Narrow| {
        let apps = apps.clone();
        async move || {
            store
                .writes("bench", &apps, &narrow, before, PAGE)
                .await
                .unwrap()
                .len()
        }
    };
    timed("first page", PAGE, page(None, all.clone())).await;
    let halfway = Some(newest - n / 2);
    timed("a page halfway down", PAGE, page(halfway, all.clone())).await;
    let deep = Some(newest - n * 9 / 10);
    timed("a page 90 % of the way down", PAGE, page(deep, all.clone())).await;
    let agent = Narrow {
        via: Some("agent:job-3".into()),
        ..Narrow::default()
    };
    timed(
        "first page, the agent's writes only",
        PAGE,
        page(None, agent),
    )
    .await;
    let keep = Narrow {
        app: Some(APPS[1].into()),
        ..Narrow::default()
    };
    timed("first page, one app's writes only", PAGE, page(None, keep)).await;
    let refusals = async || {
        store
            .refusals("bench", &apps, None, PAGE)
            .await
            .unwrap()
            .len()
    };
    timed("refusals, first page (the space's full)", PAGE, refusals).await;
    // One past its caller's rate (job-0 kept its 100 in the fill), only
    // counted; and keeping one more, of a caller with none: its recent
    // ones counted, the space's oldest forgotten.
    let past = async || {
        let refused = refusal(&ada, "agent:job-0");
        usize::from(store.record_refusal(refused).await.unwrap())
    };
    timed("a refusal past its caller's rate", 0, past).await;
    let fresh = std::sync::atomic::AtomicUsize::new(0);
    let kept = async || {
        let n = fresh.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let agent = format!("agent:bench-{n}");
        usize::from(store.record_refusal(refusal(&ada, &agent)).await.unwrap())
    };
    timed("a refusal kept (the space's full)", 1, kept).await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let url = std::env::var("SHED_BENCH_DATABASE").or_else(|_| std::env::var("SHED_TEST_DATABASE"));
    match url {
        Ok(url) => runtime.block_on(async {
            let name = "shed_bench_activity";
            let server = server::connect(&url).await;
            server::new_database(&server, name).await;
            println!("PostgreSQL ({} writes in one space):", writes_to_make());
            let store = Store::connect(&server::database_url(&url, name))
                .await
                .unwrap();
            measure(&store).await;
            store.close().await.unwrap();
            server::drop_database(&server, name).await;
        }),
        Err(_) => println!(
            "PostgreSQL: skipped — name a server in SHED_BENCH_DATABASE (scripts/postgres-cluster gives SHED_TEST_DATABASE)"
        ),
    }
    if std::env::var("SHED_BENCH_SQLITE").as_deref() != Ok("0") {
        let dir = tempfile::tempdir().unwrap();
        runtime.block_on(async {
            println!("SQLite ({} writes in one space):", writes_to_make());
            let store = Store::open(&dir.path().join("shed.db")).await.unwrap();
            measure(&store).await;
            store.close().await.unwrap();
        });
    }
}
