//! One app's reads as it grows (#35): the filter lines the web door and the
//! pages rely on, each timed when the app holds 10,000 entities, then
//! 100,000, then 1,000,000 (`SHED_BENCH_ROWS`), on the hosted store's
//! shared layout. Every read is an index walk inside the app, so each
//! figure should stay flat as the app grows; the bench prints each line's
//! median of [`RUNS`] and its ratio to the first count.
//!
//! The app holds `jog {who, miles, at, club}` (`club` a ref to one of
//! [`CLUBS`] `club` entities) with a `doc` whose title holds "sunrise" in
//! one entity in a hundred; the lines read 50 rows by equality, a range, a
//! ref, an order, full-text words, the newest with their authors, and the
//! second page of the order and of the newest (keyset: `after=` the first
//! page's cursor).
//!
//! PostgreSQL when `SHED_BENCH_DATABASE` (or else `SHED_TEST_DATABASE`)
//! names a server (a database `shed_bench_reads` made for the run and
//! dropped after it); SQLite in a temporary folder unless
//! `SHED_BENCH_SQLITE=0`. `SHED_BENCH_ANALYZE=1` runs `ANALYZE` on the
//! PostgreSQL database after each fill, as autovacuum would once it came
//! round: without it the planner reads the shape tables' statistics of
//! when they were small (2026-12-05: a sort of every row, 18 ms at 12,000
//! entities, instead of a walk of 51, 0.75 ms).
//! Run: `scripts/postgres-cluster cargo bench -p shed-store --bench reads_at_scale`.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shed_store::{Actor, ColumnType, Store, Vocabulary};

#[path = "support/server.rs"]
mod server;

use server::{connect, database_url, drop_database, new_database};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The counts of entities measured at when `SHED_BENCH_ROWS` is not set.
const DEFAULT_COUNTS: &str = "10000,100000,1000000";
/// Entities written per apply while filling.
const BATCH: usize = 500;
/// Runs of each line whose median is shown.
const RUNS: usize = 100;
/// The clubs the runs point at.
const CLUBS: usize = 10;
const APP: &str = "bench/runs";
/// The database made for the run on the server.
const DATABASE: &str = "shed_bench_reads";
const WHO: [&str; 8] = [
    "Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Frances", "Donald",
];

/// The lines read at each count. `{club}` is the first club's eid.
const LINES: [(&str, &str); 6] = [
    ("equality", ".jog!&.jog.who=Ada&limit=50"),
    ("range", ".jog!&.jog.miles>=95&limit=50"),
    ("ref", ".jog!&.jog.club={club}&limit=50"),
    ("order", ".jog!&order=-.jog.miles&limit=50"),
    ("words", ".doc!&q=sunrise&limit=50"),
    ("newest, with authors", ".jog!&.created!&limit=50"),
];
/// The lines whose second page is read too (keyset paging).
const PAGED: [&str; 2] = ["order", "newest, with authors"];

fn vocabulary() -> Vocabulary {
    Vocabulary {
        components: vec![
            (
                "jog".into(),
                vec![
                    ("who".into(), ColumnType::Text),
                    ("miles".into(), ColumnType::Number),
                    ("at".into(), ColumnType::Time),
                    ("club".into(), ColumnType::Ref),
                ],
            ),
            ("club".into(), vec![("name".into(), ColumnType::Text)]),
        ],
    }
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A deterministic stream of pseudo-random numbers.
struct Seed(u64);

impl Seed {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// The app being filled and read.
struct Filling {
    store: Store,
    actor: Actor,
    clubs: Vec<String>,
    written: usize,
    seed: Seed,
    /// Each line's median at the first count, and that count.
    base: Option<(usize, Vec<Duration>)>,
}

impl Filling {
    async fn new(store: Store) -> Filling {
        let ada = store.add_person("ada", "Ada").await.unwrap();
        store.add_space("bench", &ada.eid).await.unwrap();
        store.declare(APP, &vocabulary()).await.unwrap();
        let actor = Actor {
            person: ada.eid,
            via: None,
            through: None,
        };
        let bundles: Vec<Value> = (0..CLUBS)
            .map(|i| json!({ "entity": { "eid": format!("$c{i}") }, "club": { "name": format!("Club {i}") } }))
            .collect();
        let applied = store
            .apply(APP, &actor, Value::Array(bundles), None)
            .await
            .unwrap();
        let clubs = applied.entities;
        assert_eq!(clubs.len(), CLUBS, "the clubs' eids");
        Filling {
            store,
            actor,
            clubs,
            written: 0,
            seed: Seed(0x5eed),
            base: None,
        }
    }

    /// Writes runs until the app holds `n`, printing progress on stderr.
    async fn fill_to(&mut self, n: usize) {
        let start = Instant::now();
        let from = self.written;
        while self.written < n {
            let count = BATCH.min(n - self.written);
            let bundles: Vec<Value> = (0..count).map(|i| self.run(i)).collect();
            self.store
                .apply(APP, &self.actor, Value::Array(bundles), None)
                .await
                .unwrap();
            self.written += count;
            if self.written.is_multiple_of(100_000) {
                eprintln!(
                    "  … {} runs ({:.0}/s)",
                    self.written,
                    (self.written - from) as f64 / start.elapsed().as_secs_f64()
                );
            }
        }
    }

    /// The bundle of one new run.
    fn run(&mut self, i: usize) -> Value {
        let n = self.written + i;
        let who = WHO[self.seed.next() as usize % WHO.len()];
        let miles = (self.seed.next() % 10_000) as f64 / 100.0;
        let club = &self.clubs[self.seed.next() as usize % CLUBS];
        let rare = if self.seed.next().is_multiple_of(100) {
            " sunrise"
        } else {
            ""
        };
        let at = jiff::Timestamp::from_second(1_767_225_600 + n as i64 * 60).unwrap();
        json!({
            "entity": { "eid": format!("$r{i}") },
            "jog": { "who": who, "miles": miles, "at": at.to_string(), "club": club },
            "doc": { "title": format!("Run {n}{rare}"), "body": "A run by the river." }
        })
    }

    /// Times every line at the count written, and prints each median with
    /// its ratio to the first count's.
    async fn measure(&mut self, backend: &str) {
        println!();
        println!("{} entities on {backend}", self.written);
        let mut medians = Vec::new();
        let mut names = Vec::new();
        for (name, line) in LINES {
            let line = line.replace("{club}", &self.clubs[0]);
            let (first, next) = self.time(&line).await;
            medians.push(first);
            names.push(name.to_string());
            if PAGED.contains(&name) {
                let cursor = next.expect("a second page");
                let (second, _) = self.time(&format!("{line}&after={cursor}")).await;
                medians.push(second);
                names.push(format!("{name}, second page"));
            }
        }
        let (count, base) = self
            .base
            .get_or_insert_with(|| (self.written, medians.clone()))
            .clone();
        for (i, name) in names.iter().enumerate() {
            let against = match count == self.written {
                true => String::new(),
                false => format!(
                    "   ×{:.2} against {count}",
                    medians[i].as_secs_f64() / base[i].as_secs_f64().max(1e-9)
                ),
            };
            println!(
                "  {name:<34} median of {RUNS}: {:>7.3} ms{against}",
                ms(medians[i])
            );
        }
    }

    /// The median of [`RUNS`] reads of `line`, and its first page's cursor.
    async fn time(&self, line: &str) -> (Duration, Option<String>) {
        let listing = self.store.query(APP, line).await.unwrap();
        assert!(!listing.rows.is_empty(), "{line} reads rows");
        let mut took = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let t = Instant::now();
            self.store.query(APP, line).await.unwrap();
            took.push(t.elapsed());
        }
        (median(took), listing.next)
    }
}

/// The counts to measure at, from `SHED_BENCH_ROWS`.
fn counts() -> Result<Vec<usize>, String> {
    let line = std::env::var("SHED_BENCH_ROWS").unwrap_or_else(|_| DEFAULT_COUNTS.into());
    line.split(',')
        .map(|c| c.trim().parse::<usize>().ok().filter(|&n| n >= 100))
        .collect::<Option<Vec<_>>>()
        .filter(|c| c.windows(2).all(|w| w[0] < w[1]))
        .ok_or_else(|| {
            format!(
                "SHED_BENCH_ROWS={line} is not a list of entity counts — give rising counts of at least 100, e.g. 10000,100000,1000000"
            )
        })
}

async fn grow(store: Store, backend: &str, counts: &[usize], analyze: Option<&str>) {
    let mut filling = Filling::new(store).await;
    for &n in counts {
        filling.fill_to(n).await;
        if let Some(url) = analyze {
            connect(url).await.batch_execute("ANALYZE").await.unwrap();
            eprintln!("  (analyzed)");
        }
        filling.measure(backend).await;
    }
    filling.store.close().await.unwrap();
}

fn main() {
    let counts = match counts() {
        Ok(c) => c,
        Err(sentence) => {
            eprintln!("{sentence}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let url = std::env::var("SHED_BENCH_DATABASE").or_else(|_| std::env::var("SHED_TEST_DATABASE"));
    match url {
        Ok(url) => runtime.block_on(async {
            let server = connect(&url).await;
            new_database(&server, DATABASE).await;
            let db = database_url(&url, DATABASE);
            let store = Store::connect(&db).await.unwrap();
            let analyze = std::env::var("SHED_BENCH_ANALYZE")
                .is_ok()
                .then_some(db.as_str());
            grow(store, "PostgreSQL", &counts, analyze).await;
            drop_database(&server, DATABASE).await;
        }),
        Err(_) => println!(
            "PostgreSQL: skipped — name a server in SHED_BENCH_DATABASE (scripts/postgres-cluster gives SHED_TEST_DATABASE)"
        ),
    }
    if std::env::var("SHED_BENCH_SQLITE").as_deref() != Ok("0") {
        let dir = tempfile::tempdir().unwrap();
        runtime.block_on(async {
            let store = Store::open(&dir.path().join("shed.db")).await.unwrap();
            grow(store, "SQLite", &counts, None).await;
        });
    }
}
