//! Many apps on one database: what each app's own tables cost the database
//! as their number grows. Deploys small apps through the store's own deploy
//! API (`declare` of the vocabulary, then `record_deploy` of its files, as
//! `shed-host`'s deploy does; no HTTP) — 3 components of 4 columns each
//! (text, number, bool, time), beside the `doc` and `comment` every app has —
//! up to each count of `SHED_BENCH_APPS` in turn (default `1000,10000`), and
//! at each count prints:
//!
//! - the deploy time per app, at the start and the end of each thousand;
//! - the catalog's size: relations in `pg_class` by kind, the database's
//!   size, the size of `pg_catalog`'s relations (SQLite: its schema rows and
//!   file size);
//! - a fresh connection's memory after touching 100 apps spread over all
//!   of them with the store's 50-row read (the statement `query/sql.rs`
//!   writes for `.task!&limit=50`, mirrored here): once run unprepared,
//!   once prepared and kept as the store's `prepare_cached` keeps it
//!   (`pg_backend_memory_contexts`; SQLite: `sqlite3_memory_used`);
//! - the time of `pg_dump --schema-only` (its locks grow with the tables);
//! - a 50-row read's latency (`Store::query`) on the first and the last app,
//!   the first call of a fresh store and the median of later ones.
//!
//! PostgreSQL when `SHED_BENCH_DATABASE` (or else `SHED_TEST_DATABASE`)
//! names a server: a database `shed_bench_many_apps` is made for the run and
//! dropped after it. SQLite in a temporary folder unless
//! `SHED_BENCH_SQLITE=0`. `SHED_BENCH_MAX_SECONDS` stops deploying on a
//! backend after that long and measures what is there.
//! Run: `scripts/postgres-cluster cargo bench -p shed-store --bench many_apps`.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shed_store::platform::NewDeploy;
use shed_store::{Actor, ColumnType, Store, Vocabulary};
use tokio_postgres::Client;

#[path = "support/server.rs"]
mod server;

use server::{connect, database_url, drop_database, new_database};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The counts of apps measured at when `SHED_BENCH_APPS` is not set.
const DEFAULT_COUNTS: &str = "1000,10000";
/// The apps a fresh connection reads from before its memory is measured.
const TOUCHED: usize = 100;
/// Entities written to the first and the last app, for the 50-row read.
const ROWS: usize = 60;
/// Deploys at the start and at the end of each thousand whose median is shown.
const EDGE: usize = 50;
/// Reads of each app whose median is shown.
const READS: usize = 30;
/// Runs of each kept statement on the touching connection: PostgreSQL keeps
/// a generic plan from the sixth run on, as on a pool connection in use.
const PREPARED_RUNS: usize = 6;
/// The database made for the run on the server.
const DATABASE: &str = "shed_bench_many_apps";
/// The filter line read.
const LINE: &str = ".task!&limit=50";
/// The app's components (each with a text, number, bool and time column).
const COMPONENTS: [(&str, [&str; 4]); 3] = [
    ("task", ["title", "points", "done", "due"]),
    ("note", ["body", "weight", "pinned", "at"]),
    ("tag", ["label", "rank", "shown", "since"]),
];
const TYPES: [ColumnType; 4] = [
    ColumnType::Text,
    ColumnType::Number,
    ColumnType::Bool,
    ColumnType::Time,
];

fn vocabulary() -> Vocabulary {
    Vocabulary {
        components: COMPONENTS
            .iter()
            .map(|(name, columns)| {
                let columns = columns.iter().map(|c| c.to_string()).zip(TYPES).collect();
                (name.to_string(), columns)
            })
            .collect(),
    }
}

/// The app's files: its vocabulary as `vocab.json`.
fn files() -> std::collections::BTreeMap<String, Vec<u8>> {
    let vocab: serde_json::Map<String, Value> = COMPONENTS
        .iter()
        .map(|(name, columns)| {
            let columns: serde_json::Map<String, Value> = columns
                .iter()
                .zip(TYPES)
                .map(|(c, t)| (c.to_string(), json!(t.as_str())))
                .collect();
            (name.to_string(), Value::Object(columns))
        })
        .collect();
    [(
        "vocab.json".to_string(),
        Value::Object(vocab).to_string().into_bytes(),
    )]
    .into()
}

fn slug(i: usize) -> String {
    format!("a{i:06}")
}

fn app_name(i: usize) -> String {
    format!("bench/{}", slug(i))
}

/// The store's SELECT for [`LINE`] in the app with row id `app` (mirrors
/// `query/sql.rs`: `JOIN` on PostgreSQL, `CROSS JOIN` on SQLite).
fn read_sql(app: i64, join: &str, params: (&str, &str)) -> String {
    format!(
        "SELECT t0.id, e.eid, e.num, e.version, e.alias, t0.id, e.created_by, e.created_via, \
         e.updated_by, e.updated_via, t0.id, t0.\"title\", t0.\"points\", t0.\"done\", t0.\"due\" \
         FROM \"ec_{app}_task\" t0 {join} ec_entities e ON e.id = t0.id \
         WHERE e.app = {} AND e.tombstoned = 0 ORDER BY t0.id DESC LIMIT {}",
        params.0, params.1
    )
}

/// The apps a fresh connection touches: [`TOUCHED`] spread evenly over `n`.
fn touched(n: usize) -> Vec<usize> {
    let k = TOUCHED.min(n);
    (0..k).map(|j| 1 + j * n / k).collect()
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mib(bytes: i64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The run's settings, read from the environment.
struct Settings {
    counts: Vec<usize>,
    max: Option<Duration>,
}

fn settings() -> Result<Settings, String> {
    let line = std::env::var("SHED_BENCH_APPS").unwrap_or_else(|_| DEFAULT_COUNTS.into());
    let counts = line
        .split(',')
        .map(|c| c.trim().parse::<usize>().ok().filter(|&n| n >= 2))
        .collect::<Option<Vec<_>>>()
        .filter(|c| c.windows(2).all(|w| w[0] < w[1]))
        .ok_or_else(|| {
            format!(
                "SHED_BENCH_APPS={line} is not a list of app counts — give rising counts of at least 2, e.g. 1000,10000"
            )
        })?;
    let max = match std::env::var("SHED_BENCH_MAX_SECONDS") {
        Ok(s) => Some(Duration::from_secs(s.trim().parse().map_err(|_| {
            format!("SHED_BENCH_MAX_SECONDS={s} is not a number of seconds — give e.g. 1500")
        })?)),
        Err(_) => None,
    };
    Ok(Settings { counts, max })
}

/// A backend being filled: its store, who deploys, the apps deployed and
/// each deploy's time.
struct Filling {
    /// The backend's name, as the figures print it.
    backend: &'static str,
    store: Store,
    actor: Actor,
    /// The eid written to the first app, read and written at every count.
    first_eid: String,
    deployed: usize,
    /// The apps whose deploy times are printed.
    reported: usize,
    took: Vec<Duration>,
    /// The part of each deploy's time that was `declare`.
    declaring: Vec<Duration>,
    spent: Duration,
}

impl Filling {
    /// Ada's space on `store`, with the first app deployed and filled.
    async fn new(backend: &'static str, store: Store) -> Filling {
        let ada = store.add_person("ada", "Ada").await.unwrap();
        store.add_space("bench", &ada.eid).await.unwrap();
        let mut filling = Filling {
            backend,
            store,
            actor: Actor {
                person: ada.eid,
                via: None,
                through: None,
            },
            first_eid: String::new(),
            deployed: 0,
            reported: 0,
            took: Vec::new(),
            declaring: Vec::new(),
            spent: Duration::ZERO,
        };
        filling.deploy_to(1, None).await;
        filling.first_eid = filling.fill(1).await;
        filling
    }

    /// Deploys apps up to `n` (fewer when `max` runs out), fills the last
    /// one, and prints the count's heading and the deploy times since the
    /// last count: whether it reached `n`, and the eid written to the last app.
    async fn next_count(&mut self, n: usize, max: Option<Duration>) -> (bool, String) {
        let reached = self.deploy_to(n, max).await;
        let last_eid = self.fill(self.deployed).await;
        println!();
        println!(
            "{} apps{} on {}",
            self.deployed,
            if reached {
                String::new()
            } else {
                format!(" (stopped by SHED_BENCH_MAX_SECONDS before {n})")
            },
            self.backend
        );
        self.report_deploys();
        (reached, last_eid)
    }

    /// A second store on the database, `opening` (printed as `how`, with
    /// its time): the first call of it and the median of later ones,
    /// reading and writing the first and the last app (`last_eid` in it).
    async fn through_a_fresh_store(
        &self,
        how: &str,
        opening: impl Future<Output = Store>,
        last_eid: &str,
    ) {
        let t = Instant::now();
        let fresh = opening.await;
        let opened = t.elapsed();
        let last = self.deployed;
        let write = "apply changing one entity";
        let measured = [
            (LINE, 1, read_latency(&fresh, 1).await),
            (LINE, last, read_latency(&fresh, last).await),
            (
                write,
                1,
                write_latency(&fresh, &self.actor, 1, &self.first_eid).await,
            ),
            (
                write,
                last,
                write_latency(&fresh, &self.actor, last, last_eid).await,
            ),
        ];
        fresh.close().await.unwrap();
        println!("  {how} {:.1} ms", ms(opened));
        for (what, i, (first, later)) in measured {
            println!(
                "  {what} on app {i:>6}: first call of a fresh store {:>7.2} ms, then median {:>6.2} ms",
                ms(first),
                ms(later)
            );
        }
    }

    /// Deploys apps up to `n` (fewer when `max` runs out); answers whether
    /// it reached `n`.
    async fn deploy_to(&mut self, n: usize, max: Option<Duration>) -> bool {
        let vocab = vocabulary();
        let files = files();
        let mut since = Instant::now();
        while self.deployed < n {
            if max.is_some_and(|max| self.spent >= max) {
                return false;
            }
            let i = self.deployed + 1;
            let t = Instant::now();
            self.store.declare(&app_name(i), &vocab).await.unwrap();
            self.declaring.push(t.elapsed());
            self.store
                .record_deploy(NewDeploy {
                    space: "bench".into(),
                    slug: slug(i),
                    title: None,
                    access: None,
                    by: self.actor.person.clone(),
                    files: files.clone(),
                    clear_drafts: false,
                    rolls_back_to: None,
                })
                .await
                .unwrap();
            let took = t.elapsed();
            self.took.push(took);
            self.spent += took;
            self.deployed = i;
            if i.is_multiple_of(250) {
                eprintln!(
                    "{}: {i}/{n} apps, {:.1} ms an app over the last 250, {:.0} s deploying",
                    self.backend,
                    ms(since.elapsed()) / 250.0,
                    self.spent.as_secs_f64()
                );
                since = Instant::now();
            }
        }
        true
    }

    /// Writes [`ROWS`] entities of every component to app `i`; answers the
    /// first one's eid.
    async fn fill(&self, i: usize) -> String {
        let bundles: Vec<Value> = (0..ROWS)
            .map(|r| {
                let mut b = json!({ "entity": { "eid": format!("$r{r}") } });
                for (name, [text, number, flag, time]) in COMPONENTS {
                    b[name] = json!({
                        text: format!("{name} {r}"), number: r as f64, flag: r.is_multiple_of(2),
                        time: "2026-09-01T06:30:00Z"
                    });
                }
                b
            })
            .collect();
        self.store
            .apply(&app_name(i), &self.actor, Value::Array(bundles), None)
            .await
            .unwrap()
            .entities
            .swap_remove(0)
    }

    /// The deploy times of the apps deployed since the last report, per thousand.
    fn report_deploys(&mut self) {
        println!("  deploy time per app (declare + record_deploy), median of {EDGE}:");
        let mut start = self.reported;
        while start < self.deployed {
            let end = (start + 1000).min(self.deployed);
            let block = &self.took[start..end];
            let mean = block.iter().sum::<Duration>() / block.len() as u32;
            let declaring =
                self.declaring[start..end].iter().sum::<Duration>() / block.len() as u32;
            if block.len() >= 2 * EDGE {
                println!(
                    "    apps {:>6}–{:<6} first {EDGE} {:>7.1} ms   last {EDGE} {:>7.1} ms   mean {:>7.1} ms (declare {:>7.1} ms)",
                    start + 1,
                    end,
                    ms(median(block[..EDGE].to_vec())),
                    ms(median(block[block.len() - EDGE..].to_vec())),
                    ms(mean),
                    ms(declaring)
                );
            } else {
                println!(
                    "    apps {:>6}–{:<6} mean {:>7.1} ms (declare {:>7.1} ms)",
                    start + 1,
                    end,
                    ms(mean),
                    ms(declaring)
                );
            }
            start = end;
        }
        self.reported = self.deployed;
    }
}

/// The first call of a store and the median of [`READS`] more, on app `i`.
async fn read_latency(store: &Store, i: usize) -> (Duration, Duration) {
    let t = Instant::now();
    let rows = store.query(&app_name(i), LINE).await.unwrap().rows.len();
    let first = t.elapsed();
    assert_eq!(rows, 50, "{LINE} on app {i}");
    let mut later = Vec::new();
    for _ in 0..READS {
        let t = Instant::now();
        store.query(&app_name(i), LINE).await.unwrap();
        later.push(t.elapsed());
    }
    (first, median(later))
}

/// The first call of a store and the median of [`READS`] more, each an
/// apply changing one column of entity `eid` of app `i` (an UPDATE of its
/// `ec_entities` row, whose triggers PostgreSQL looks through).
async fn write_latency(store: &Store, actor: &Actor, i: usize, eid: &str) -> (Duration, Duration) {
    let mut took = Vec::new();
    for k in 0..=READS {
        let body = json!({ "entity": { "eid": eid }, "task": { "points": k as f64 } });
        let t = Instant::now();
        store.apply(&app_name(i), actor, body, None).await.unwrap();
        took.push(t.elapsed());
    }
    let first = took.remove(0);
    (first, median(took))
}

fn main() {
    let settings = match settings() {
        Ok(s) => s,
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
        Ok(url) => runtime.block_on(postgres(&url, &settings)),
        Err(_) => println!(
            "PostgreSQL: skipped — name a server in SHED_BENCH_DATABASE (scripts/postgres-cluster gives SHED_TEST_DATABASE)"
        ),
    }
    if std::env::var("SHED_BENCH_SQLITE").as_deref() != Ok("0") {
        let dir = tempfile::tempdir().unwrap();
        runtime.block_on(sqlite(&dir.path().join("shed.db"), &settings));
    }
}

// ---- PostgreSQL ----

/// This backend's memory: all its contexts; the catalog caches
/// (`CacheMemoryContext` and its children but the plans); the kept plans.
async fn backend_memory(db: &Client) -> (i64, i64, i64) {
    let r = db
        .query_one(
            "SELECT sum(total_bytes)::bigint,
                    coalesce(sum(total_bytes) FILTER (WHERE name = 'CacheMemoryContext'
                        OR (parent = 'CacheMemoryContext' AND name NOT LIKE 'CachedPlan%')), 0)::bigint,
                    coalesce(sum(total_bytes) FILTER (WHERE name LIKE 'CachedPlan%'), 0)::bigint
             FROM pg_backend_memory_contexts",
            &[],
        )
        .await
        .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

/// A fresh connection's memory before and after reading from the touched
/// apps, the statements run once unprepared or prepared and kept.
async fn touch(url: &str, ids: &[i64], keep: bool) {
    let db = connect(url).await;
    let before = backend_memory(&db).await;
    let mut kept = Vec::new();
    for &id in ids {
        let sql = read_sql(id, "JOIN", ("$1", "$2"));
        if keep {
            let stmt = db.prepare(&sql).await.unwrap();
            for _ in 0..PREPARED_RUNS {
                db.query(&stmt, &[&id, &51i64]).await.unwrap();
            }
            kept.push(stmt);
        } else {
            db.query(&sql, &[&id, &51i64]).await.unwrap();
        }
    }
    let after = backend_memory(&db).await;
    let per_app = (after.0 - before.0) as f64 / ids.len() as f64 / 1024.0;
    println!(
        "  fresh connection, {} apps read {}: {:.1} MiB → {:.1} MiB ({per_app:.1} KiB an app); catalog caches {:.1} MiB, kept plans {:.1} MiB",
        ids.len(),
        if keep {
            "with prepared statements kept (as prepare_cached)"
        } else {
            "unprepared"
        },
        mib(before.0),
        mib(after.0),
        mib(after.1),
        mib(after.2)
    );
}

async fn catalog(db: &Client) {
    let kinds = db
        .query(
            "SELECT relkind::text, count(*) FROM pg_class GROUP BY relkind ORDER BY count(*) DESC",
            &[],
        )
        .await
        .unwrap();
    let total: i64 = kinds.iter().map(|r| r.get::<_, i64>(1)).sum();
    let kinds: Vec<String> = kinds
        .iter()
        .map(|r| format!("{} {}", r.get::<_, String>(0), r.get::<_, i64>(1)))
        .collect();
    println!("  pg_class: {total} relations ({})", kinds.join(", "));
    let triggers = db
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE tgrelid = 'ec_entities'::regclass) FROM pg_trigger",
            &[],
        )
        .await
        .unwrap();
    println!(
        "  pg_trigger: {} triggers, {} of them on ec_entities (the foreign keys' actions)",
        triggers.get::<_, i64>(0),
        triggers.get::<_, i64>(1)
    );
    let sizes = db
        .query_one(
            "SELECT pg_database_size(current_database()),
                    (SELECT sum(pg_total_relation_size(oid))::bigint FROM pg_class
                     WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind = 'r')",
            &[],
        )
        .await
        .unwrap();
    println!(
        "  database {:.1} MiB, of which pg_catalog's tables (with indexes) {:.1} MiB",
        mib(sizes.get(0)),
        mib(sizes.get(1))
    );
    let top = db
        .query(
            "SELECT relname::text, pg_total_relation_size(oid) FROM pg_class
             WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind = 'r'
             ORDER BY 2 DESC LIMIT 5",
            &[],
        )
        .await
        .unwrap();
    let top: Vec<String> = top
        .iter()
        .map(|r| format!("{} {:.1}", r.get::<_, String>(0), mib(r.get(1))))
        .collect();
    println!("  largest catalog tables (MiB): {}", top.join(", "));
}

/// `pg_dump --schema-only` of the database: its time, or why it failed.
fn pg_dump(url: &str) {
    let bin = std::env::var("SHED_BENCH_PG_DUMP").ok().or_else(|| {
        let mut found: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin/pg_dump")))
            .filter(|p| p.exists())
            .collect();
        found.sort();
        found.pop().map(|p| p.display().to_string())
    });
    let Some(bin) = bin else {
        println!("  pg_dump --schema-only: skipped (no pg_dump; name one in SHED_BENCH_PG_DUMP)");
        return;
    };
    let t = Instant::now();
    let out = Command::new(&bin)
        .args(["--schema-only", "--file", "/dev/null", "--dbname", url])
        .output()
        .unwrap();
    let took = t.elapsed().as_secs_f64();
    if out.status.success() {
        println!("  pg_dump --schema-only: {took:.1} s");
    } else {
        let why = String::from_utf8_lossy(&out.stderr);
        let why: Vec<&str> = why.lines().filter(|l| !l.trim().is_empty()).collect();
        println!(
            "  pg_dump --schema-only: FAILED after {took:.1} s: {}",
            why.join(" / ")
        );
    }
}

async fn postgres(url: &str, settings: &Settings) {
    let server = connect(url).await;
    new_database(&server, DATABASE).await;
    let db_url = database_url(url, DATABASE);
    let admin = connect(&db_url).await;
    let show = |name: &'static str| {
        let admin = &admin;
        async move {
            admin
                .query_one(&format!("SHOW {name}"), &[])
                .await
                .unwrap()
                .get::<_, String>(0)
        }
    };
    println!(
        "many apps on PostgreSQL {} ({}): shared_buffers {}, max_locks_per_transaction {}, max_connections {}",
        show("server_version").await,
        shed_store::redacted_url(url),
        show("shared_buffers").await,
        show("max_locks_per_transaction").await,
        show("max_connections").await
    );
    let store = Store::connect(&db_url).await.unwrap();
    let mut filling = Filling::new("PostgreSQL", store).await;
    for &n in &settings.counts {
        let (reached, last_eid) = filling.next_count(n, settings.max).await;
        catalog(&admin).await;
        let ids: Vec<i64> = {
            let names: Vec<String> = touched(filling.deployed)
                .into_iter()
                .map(app_name)
                .collect();
            let rows = admin
                .query(
                    "SELECT id FROM ec_apps WHERE name = ANY($1) ORDER BY id",
                    &[&names],
                )
                .await
                .unwrap();
            rows.iter().map(|r| r.get(0)).collect()
        };
        touch(&db_url, &ids, false).await;
        touch(&db_url, &ids, true).await;
        pg_dump(&db_url);
        let opening = async { Store::connect(&db_url).await.unwrap() };
        filling
            .through_a_fresh_store("Store::connect", opening, &last_eid)
            .await;
        if !reached {
            break;
        }
    }
    filling.store.close().await.unwrap();
    drop(filling);
    drop(admin);
    drop_database(&server, DATABASE).await;
}

// ---- SQLite ----

async fn sqlite(path: &Path, settings: &Settings) {
    println!();
    println!(
        "many apps on SQLite {} (one file, WAL)",
        rusqlite::version()
    );
    let store = Store::open(path).await.unwrap();
    let mut filling = Filling::new("SQLite", store).await;
    for &n in &settings.counts {
        let (reached, last_eid) = filling.next_count(n, settings.max).await;
        let wal = path.with_extension("db-wal");
        let size = std::fs::metadata(path).unwrap().len()
            + std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        // A fresh connection parses the whole schema at its first statement.
        // SAFETY: sqlite3_memory_used reads SQLite's own counter; no arguments.
        let memory = || unsafe { rusqlite::ffi::sqlite3_memory_used() };
        let before = memory();
        let t = Instant::now();
        let conn = rusqlite::Connection::open(path).unwrap();
        let objects: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .unwrap();
        let open = t.elapsed();
        let schema = memory() - before;
        let ids: Vec<i64> = touched(filling.deployed)
            .into_iter()
            .map(|i| {
                conn.query_row(
                    "SELECT id FROM ec_apps WHERE name = ?1",
                    [app_name(i)],
                    |r| r.get(0),
                )
                .unwrap()
            })
            .collect();
        let mut kept = Vec::new();
        for &id in &ids {
            let mut stmt = conn
                .prepare(&read_sql(id, "CROSS JOIN", ("?1", "?2")))
                .unwrap();
            stmt.query_map([id, 51], |_| Ok(())).unwrap().for_each(drop);
            kept.push(stmt);
        }
        let touched_memory = memory() - before;
        drop(kept);
        drop(conn);
        println!(
            "  sqlite_schema: {objects} objects; file {:.1} MiB (with its WAL)",
            size as f64 / (1024.0 * 1024.0)
        );
        println!(
            "  fresh connection: open and first statement {:.1} ms, {:.1} MiB (the schema); {} apps read with statements kept {:.1} MiB",
            ms(open),
            mib(schema),
            ids.len(),
            mib(touched_memory)
        );
        let opening = async { Store::open(path).await.unwrap() };
        filling
            .through_a_fresh_store(
                "Store::open (a second store on the file)",
                opening,
                &last_eid,
            )
            .await;
        if !reached {
            break;
        }
    }
    filling.store.close().await.unwrap();
}
