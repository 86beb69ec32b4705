//! Many apps on one database: the acceptance figures (#35), each
//! at a few counts of apps and as a ratio to the first count. Deploys small
//! apps through the store's own deploy API (`declare` of the vocabulary,
//! then `record_deploy` of its files, as `shed-host`'s deploy does; no
//! HTTP) — 3 components of 4 columns each (text, number, bool, time),
//! beside the `doc` and `comment` every app has — up to each count of
//! `SHED_BENCH_APPS` in turn (default `10,10000`; the first is the count
//! the others are compared with), the apps empty but the first and the
//! last, and at each count prints:
//!
//! - a deploy's time (median of the last [`EDGE`] deployed);
//! - PostgreSQL: relations in `pg_class` by kind and triggers in
//!   `pg_trigger`; the database's size and what an empty app added to it
//!   since the count before; `pg_dump --schema-only`'s time. SQLite: its
//!   schema's objects, the file's size, and a fresh connection's open and
//!   first statement (which reads the whole schema);
//! - through a fresh store, on the first and the last app, the median of
//!   [`READS`] of each: a new-entity write, an update of an entity, the
//!   50-row read `.task!&limit=50`, and `commands` (the app's record and its
//!   manifest files, what the MCP door's `commands` reads);
//!
//! and then the full-text case: a `q=` search of a word in one app while
//! its document is the only one, then beside `SHED_BENCH_FTS_APPS - 1`
//! apps' documents of other words (default 1,000 apps), then with as many
//! more apps each holding a document with the same word ([`full_text`]).
//! Each ratio is printed beside the bound.
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
const DEFAULT_COUNTS: &str = "10,10000";
/// The apps holding a doc with the same word when `SHED_BENCH_FTS_APPS`
/// is not set.
const DEFAULT_FTS_APPS: usize = 1000;
/// Entities written to the first and the last app, for the 50-row read.
const ROWS: usize = 60;
/// Deploys at the end of each count whose median is shown.
const EDGE: usize = 50;
/// Runs of each measured call whose median is shown.
const READS: usize = 30;
/// Searches of the full-text case whose median is shown (each a few
/// microseconds on SQLite).
const WORD_READS: usize = 1000;
/// The body of a full-text document holding the word searched, and of one
/// that does not.
const HOLDING: &str = "a sunrise over the hills";
const NOT_HOLDING: &str = "a sundown over the hills";
/// The database made for the run on the server.
const DATABASE: &str = "shed_bench_many_apps";
/// The filter line read.
const LINE: &str = ".task!&limit=50";
/// The word every app of the full-text case holds, and a search of it.
const WORDS: &str = "q=sunrise";
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
/// The bounds: a deploy, and a read or write, at N apps against
/// the first count.
const DEPLOY_BOUND: f64 = 1.5;
const CALL_BOUND: f64 = 1.2;

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

/// The app's files: its vocabulary as `vocab.json`, a command in
/// `tools.json`.
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
    let tools = json!({ "tasks": { "description": "Every task", "input": {}, "query": LINE } });
    [
        (
            "vocab.json".to_string(),
            Value::Object(vocab).to_string().into_bytes(),
        ),
        ("tools.json".to_string(), tools.to_string().into_bytes()),
    ]
    .into()
}

fn slug(i: usize) -> String {
    format!("a{i:06}")
}

fn app_name(i: usize) -> String {
    format!("bench/{}", slug(i))
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

/// `now` against `then`, as a ratio beside its bound.
fn ratio(now: Duration, then: Duration, bound: f64) -> String {
    let r = now.as_secs_f64() / then.as_secs_f64().max(1e-9);
    let verdict = if r <= bound { "within" } else { "OVER" };
    format!("×{r:.2} ({verdict} ×{bound})")
}

/// The run's settings, read from the environment.
struct Settings {
    counts: Vec<usize>,
    fts_apps: usize,
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
                "SHED_BENCH_APPS={line} is not a list of app counts — give rising counts of at least 2, e.g. 10,10000"
            )
        })?;
    let fts_apps = match std::env::var("SHED_BENCH_FTS_APPS") {
        Ok(s) => s.trim().parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
            format!("SHED_BENCH_FTS_APPS={s} is not a count of apps — give e.g. 1000")
        })?,
        Err(_) => DEFAULT_FTS_APPS,
    };
    let max = match std::env::var("SHED_BENCH_MAX_SECONDS") {
        Ok(s) => Some(Duration::from_secs(s.trim().parse().map_err(|_| {
            format!("SHED_BENCH_MAX_SECONDS={s} is not a number of seconds — give e.g. 1500")
        })?)),
        Err(_) => None,
    };
    Ok(Settings {
        counts,
        fts_apps,
        max,
    })
}

/// What one count measured, to compare the next counts with.
#[derive(Clone, Copy)]
struct Figures {
    deploy: Duration,
    /// New-entity write, update, 50-row read, commands; on the last app.
    calls: [Duration; 4],
}

const CALLS: [&str; 4] = ["new-entity write", "update", "50-row read", "commands"];

/// A backend being filled: its store, who deploys, the apps deployed and
/// each deploy's time.
struct Filling {
    /// The backend's name, as the figures print it.
    backend: &'static str,
    store: Store,
    actor: Actor,
    deployed: usize,
    took: Vec<Duration>,
    spent: Duration,
    /// The first count's figures.
    base: Option<(usize, Figures)>,
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
            deployed: 0,
            took: Vec::new(),
            spent: Duration::ZERO,
            base: None,
        };
        filling.deploy_to(1, None).await;
        filling.fill(1).await;
        filling
    }

    /// Deploys apps up to `n` (fewer when `max` runs out) and prints the
    /// count's heading: whether it reached `n`.
    async fn next_count(&mut self, n: usize, max: Option<Duration>) -> bool {
        let reached = self.deploy_to(n, max).await;
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
        reached
    }

    /// Fills the last app, then measures the calls through a fresh store
    /// (`opening`, printed as `how` with its time) and prints them with the
    /// deploy time, as ratios to the first count's.
    async fn measure(&mut self, how: &str, opening: impl Future<Output = Store>) {
        let last = self.deployed;
        let last_eid = self.fill(last).await;
        let t = Instant::now();
        let fresh = opening.await;
        println!("  {how} {:.1} ms", ms(t.elapsed()));
        let edge = self.took.len().min(EDGE);
        let figures = Figures {
            deploy: median(self.took[self.took.len() - edge..].to_vec()),
            calls: calls(&fresh, &self.actor, last, &last_eid).await,
        };
        fresh.close().await.unwrap();
        let base = *self.base.get_or_insert((self.deployed, figures));
        let against = |now, then, bound| match base.0 == self.deployed {
            true => String::new(),
            false => format!("   {} against {} apps", ratio(now, then, bound), base.0),
        };
        println!(
            "  deploy (declare + record_deploy), median of the last {edge}: {:.2} ms{}",
            ms(figures.deploy),
            against(figures.deploy, base.1.deploy, DEPLOY_BOUND)
        );
        for (i, what) in CALLS.iter().enumerate() {
            println!(
                "  {what} on app {last}, median of {READS}: {:.2} ms{}",
                ms(figures.calls[i]),
                against(figures.calls[i], base.1.calls[i], CALL_BOUND)
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
}

/// The median of [`READS`] runs (after a first, not counted) of each of
/// [`CALLS`] on app `i`, `eid` one of its entities.
async fn calls(store: &Store, actor: &Actor, i: usize, eid: &str) -> [Duration; 4] {
    let app = app_name(i);
    let mut took = [(); 4].map(|()| Vec::new());
    for k in 0..=READS {
        let mut timed = Vec::with_capacity(4);
        let new =
            json!({ "entity": { "eid": "$t" }, "task": { "title": "new", "points": k as f64 } });
        let t = Instant::now();
        store.apply(&app, actor, new, None).await.unwrap();
        timed.push(t.elapsed());
        let update = json!({ "entity": { "eid": eid }, "task": { "points": k as f64 } });
        let t = Instant::now();
        store.apply(&app, actor, update, None).await.unwrap();
        timed.push(t.elapsed());
        let t = Instant::now();
        let rows = store.query(&app, LINE).await.unwrap().rows.len();
        timed.push(t.elapsed());
        assert_eq!(rows, 50, "{LINE} on app {i}");
        let t = Instant::now();
        let record = store
            .platform_app("bench", &slug(i))
            .await
            .unwrap()
            .unwrap();
        let manifest = store
            .deploy_files_with_contents_of(record.deploy, &["tools.json", "vocab.json"])
            .await
            .unwrap();
        timed.push(t.elapsed());
        assert!(!manifest["tools.json"].is_empty());
        if k > 0 {
            for (all, one) in took.iter_mut().zip(timed) {
                all.push(one);
            }
        }
    }
    took.map(median)
}

/// The full-text case, in `store` beside what is there: the search of a
/// word in one app while it alone holds it (one document in the full text);
/// then with `n - 1` more apps each holding a document of other words; then
/// with `n` more apps each holding the word. Each measured once the store
/// has had a pause to merge its full text ([`shed_store::MERGE_IDLE`]), as a
/// served store's are between writes. The second against the third is what
/// other apps holding the same word cost (the full text being alike); the
/// first against the third, the ratio.
async fn full_text(store: &Store, actor: &Actor, n: usize) {
    let app = |i: usize| format!("bench/words-{i:05}");
    let add = |i: usize, body: &'static str| async move {
        let doc = json!({ "entity": { "eid": "$d" },
                          "doc": { "title": format!("words {i}"), "body": body } });
        store.apply(&app(i), actor, doc, None).await.unwrap();
    };
    let search = || async {
        tokio::time::sleep(shed_store::MERGE_IDLE * 10).await;
        let mut took = Vec::new();
        for _ in 0..=WORD_READS {
            let t = Instant::now();
            let rows = store.query(&app(1), WORDS).await.unwrap().rows.len();
            took.push(t.elapsed());
            assert_eq!(rows, 1, "{WORDS} in {}", app(1));
        }
        took.remove(0);
        median(took)
    };
    add(1, HOLDING).await;
    let alone = search().await;
    println!(
        "  full text: {WORDS} in an app, the only document: median of {WORD_READS} {:.3} ms",
        ms(alone)
    );
    for i in 2..=n {
        add(i, NOT_HOLDING).await;
    }
    let apart = search().await;
    println!(
        "  full text: the same beside {} apps' documents of other words: median {:.3} ms",
        n - 1,
        ms(apart)
    );
    for i in n + 1..=2 * n {
        add(i, HOLDING).await;
    }
    let all = search().await;
    println!(
        "  full text: the same with {n} more apps holding the word: median {:.3} ms   {} against other words   {} against the only document",
        ms(all),
        ratio(all, apart, CALL_BOUND),
        ratio(all, alone, CALL_BOUND)
    );
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

/// The catalog's relations and triggers, and the database's size in bytes.
async fn catalog(db: &Client) -> i64 {
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
        "  pg_trigger: {} triggers, {} of them on ec_entities",
        triggers.get::<_, i64>(0),
        triggers.get::<_, i64>(1)
    );
    db.query_one("SELECT pg_database_size(current_database())", &[])
        .await
        .unwrap()
        .get(0)
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
    let mut before: Option<(usize, i64)> = None;
    for &n in &settings.counts {
        let reached = filling.next_count(n, settings.max).await;
        let size = catalog(&admin).await;
        match before {
            Some((apps, bytes)) => println!(
                "  database {:.1} MiB; an empty app added {:.1} KiB ({} apps since)",
                mib(size),
                (size - bytes) as f64 / (filling.deployed - apps) as f64 / 1024.0,
                filling.deployed - apps
            ),
            None => println!("  database {:.1} MiB", mib(size)),
        }
        before = Some((filling.deployed, size));
        pg_dump(&db_url);
        let opening = async { Store::connect(&db_url).await.unwrap() };
        filling.measure("Store::connect", opening).await;
        if !reached {
            break;
        }
    }
    println!();
    let fresh = Store::connect(&db_url).await.unwrap();
    full_text(&fresh, &filling.actor, settings.fts_apps).await;
    fresh.close().await.unwrap();
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
    let mut first_open: Option<(usize, Duration)> = None;
    for &n in &settings.counts {
        let reached = filling.next_count(n, settings.max).await;
        let wal = path.with_extension("db-wal");
        let size = std::fs::metadata(path).unwrap().len()
            + std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        // A fresh connection reads the whole schema at its first statement.
        let mut opens = Vec::new();
        let mut objects = 0;
        for _ in 0..READS {
            let t = Instant::now();
            let conn = rusqlite::Connection::open(path).unwrap();
            objects = conn
                .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
                .unwrap();
            opens.push(t.elapsed());
        }
        let open = median(opens);
        let (apps, base) = *first_open.get_or_insert((filling.deployed, open));
        println!(
            "  sqlite_schema: {objects} objects; file {:.1} MiB (with its WAL)",
            size as f64 / (1024.0 * 1024.0)
        );
        println!(
            "  fresh connection: open and first statement, median of {READS}: {:.2} ms{}",
            ms(open),
            match apps == filling.deployed {
                true => String::new(),
                false => format!("   {} against {apps} apps", ratio(open, base, DEPLOY_BOUND)),
            }
        );
        let opening = async { Store::open(path).await.unwrap() };
        filling
            .measure("Store::open (a second store on the file)", opening)
            .await;
        if !reached {
            break;
        }
    }
    println!();
    full_text(&filling.store, &filling.actor, settings.fts_apps).await;
    filling.store.close().await.unwrap();
}
