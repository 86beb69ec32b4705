//! The store's numbers beside a plain-rusqlite baseline, in one run.
//!
//! Over 100,000 entities of one kind (`jog {who, miles, at}` with a `doc`):
//! inserts in applies of 100, single durable applies (median; 1 task vs 4),
//! and four filter lines, each against the same work done with one plain
//! table (same columns and indexes, an FTS5 table, prepared INSERTs in
//! transactions of 100, the same SELECTs). Prints each figure and the ratio.
//! Run: `cargo bench -p shed-store --bench store`. With `SHED_BENCH_DATABASE`
//! naming a PostgreSQL server, the same run goes on to the store on
//! PostgreSQL beside a plain `tokio-postgres` baseline (`store/postgres.rs`).

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};
use serde_json::{Value, json};
#[path = "store/postgres.rs"]
mod postgres;
#[path = "support/server.rs"]
mod server;
mod support;

use shed_store::Store;

/// The allocator the `shed` binary runs the store with; the baseline, in the
/// same process, allocates with it too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ENTITIES: usize = 100_000;
const BATCH: usize = 100;
const SINGLES: usize = 300;
const QUERY_RUNS: usize = 200;
/// The four filter lines both backends are measured on.
const QUERIES: [&str; 4] = [
    ".jog!&.jog.miles>=95&limit=50",
    ".jog!&order=-.jog.miles&limit=50",
    ".jog!&.jog.who=Ada&limit=50",
    ".doc!&q=sunrise&limit=50",
];
/// The run club's leaderboard read (`shed`'s `mcp_door` bench): 50 rows,
/// each with who made it — a name per row the reader looks up.
const LEADERBOARD: &str = ".jog!&.created!&limit=50";
const WHO: [&str; 20] = [
    "Ada", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kim", "Lu", "Max", "Ned",
    "Oz", "Pia", "Quin", "Ray", "Sol", "Tam",
];
const WORDS: [&str; 16] = [
    "river", "hill", "loop", "park", "track", "trail", "road", "bridge", "harbor", "forest",
    "meadow", "canal", "ridge", "valley", "beach", "tempo",
];

/// One generated run, the same for the store and the baseline.
struct Run {
    who: &'static str,
    miles: f64,
    at: i64,
    title: String,
    body: String,
}

fn runs() -> Vec<Run> {
    let mut seed: u64 = 0x5eed;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 33
    };
    let start = jiff::Timestamp::from_second(1_767_225_600)
        .unwrap()
        .as_microsecond(); // 2026-01-01
    (0..ENTITIES)
        .map(|i| {
            let w1 = WORDS[next() as usize % WORDS.len()];
            let w2 = WORDS[next() as usize % WORDS.len()];
            // "sunrise" is in about one title in a hundred
            let rare = if next() % 100 == 0 { " sunrise" } else { "" };
            Run {
                who: WHO[next() as usize % WHO.len()],
                miles: (next() % 10_000) as f64 / 100.0,
                at: start + (i as i64) * 60_000_000,
                title: format!("Run {i} by the {w1}{rare}"),
                body: format!("A {w2} run, then the {w1}."),
            }
        })
        .collect()
}

fn bundle(run: &Run, name: &str) -> Value {
    json!({
        "entity": { "eid": name },
        "jog": { "who": run.who, "miles": run.miles, "at": shed_render(run.at) },
        "doc": { "title": run.title, "body": run.body }
    })
}

/// The runs as the applies of [`BATCH`] that insert them.
fn batches(data: &[Run]) -> Vec<Value> {
    data.chunks(BATCH)
        .map(|chunk| {
            Value::Array(
                chunk
                    .iter()
                    .enumerate()
                    .map(|(i, r)| bundle(r, &format!("$r{i}")))
                    .collect(),
            )
        })
        .collect()
}

/// The two lines of the inserts' figures: the rate (with `bound`, what it
/// needs), then the time for every entity and the ratio.
fn report_inserts(store: Duration, base: Duration, bound: &str) {
    let rate = |d: Duration| ENTITIES as f64 / d.as_secs_f64();
    report(
        "inserts, applies of 100 (entities/s)",
        rate(store),
        rate(base),
        "/s ",
        bound,
    );
    println!(
        "{:<48} store {:>10.3} s    baseline {:>10.3} s    ratio {:>5.2}   (need <= 2.00)",
        "inserts, applies of 100 (time for 100k)",
        store.as_secs_f64(),
        base.as_secs_f64(),
        store.as_secs_f64() / base.as_secs_f64()
    );
}

fn shed_render(micros: i64) -> String {
    jiff::Timestamp::from_microsecond(micros)
        .unwrap()
        .to_string()
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

// ---- the baseline: one plain table ----

fn baseline_open(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-32000;
         CREATE TABLE jog(num INTEGER PRIMARY KEY, eid TEXT UNIQUE NOT NULL, who TEXT, miles REAL, at INTEGER, title TEXT, body TEXT);
         CREATE INDEX jog_who ON jog(who); CREATE INDEX jog_miles ON jog(miles); CREATE INDEX jog_at ON jog(at);
         CREATE VIRTUAL TABLE jog_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');",
    )
    .unwrap();
    conn
}

fn baseline_insert(conn: &mut Connection, runs: &[Run], first_num: usize) {
    let tx = conn.transaction().unwrap();
    {
        let mut row = tx
            .prepare_cached("INSERT INTO jog(num, eid, who, miles, at, title, body) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            .unwrap();
        let mut fts = tx
            .prepare_cached("INSERT INTO jog_fts(rowid, title, body) VALUES(?1, ?2, ?3)")
            .unwrap();
        for (i, r) in runs.iter().enumerate() {
            let num = (first_num + i) as i64;
            let eid = format!("{:032x}", rand::random::<u128>());
            row.execute(params![num, eid, r.who, r.miles, r.at, r.title, r.body])
                .unwrap();
            fts.execute(params![num, r.title, r.body]).unwrap();
        }
    }
    tx.commit().unwrap();
}

/// Runs a baseline SELECT and reads every column of every row.
fn baseline_query(conn: &Connection, sql: &str, param: Option<rusqlite::types::Value>) -> usize {
    let mut stmt = conn.prepare_cached(sql).unwrap();
    let width = stmt.column_count();
    let read = |r: &rusqlite::Row<'_>| {
        (0..width)
            .map(|i| r.get::<_, rusqlite::types::Value>(i))
            .collect::<Result<Vec<_>, _>>()
    };
    let rows: Vec<Vec<rusqlite::types::Value>> = match param {
        Some(p) => stmt
            .query_map([p], read)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap(),
        None => stmt
            .query_map([], read)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap(),
    };
    rows.len()
}

fn report(what: &str, store: f64, base: f64, unit: &str, bound: &str) {
    println!(
        "{what:<48} store {store:>10.3} {unit}   baseline {base:>10.3} {unit}   ratio {:>5.2}   {bound}",
        store / base
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let data = runs();
    println!(
        "shed-store bench: {ENTITIES} entities of jog {{who, miles, at}} + doc, synchronous=FULL, WAL"
    );

    // ---- inserts in applies of 100 (this builds the query dataset) ----
    let store = runtime
        .block_on(Store::open(&dir.path().join("shed.db")))
        .unwrap();
    let actor = runtime.block_on(support::ada_writing(
        &store,
        &["bench/runs", "bench/single"],
    ));
    let bodies = batches(&data);
    let t = Instant::now();
    runtime.block_on(async {
        for body in bodies {
            store.apply("bench/runs", &actor, body, None).await.unwrap();
        }
    });
    let store_insert = t.elapsed();

    let mut base = baseline_open(&dir.path().join("baseline.db"));
    let t = Instant::now();
    for (i, chunk) in data.chunks(BATCH).enumerate() {
        baseline_insert(&mut base, chunk, i * BATCH + 1);
    }
    let base_insert = t.elapsed();
    report_inserts(store_insert, base_insert, "(need >= 50000/s)");

    // ---- single durable applies: median, and 1 task vs 4 tasks ----
    let single = |i: usize| bundle(&data[i % data.len()], "$one");
    let mut latencies = Vec::new();
    let t1 = Instant::now();
    runtime.block_on(async {
        for i in 0..SINGLES {
            let t = Instant::now();
            store
                .apply("bench/single", &actor, single(i), None)
                .await
                .unwrap();
            latencies.push(t.elapsed());
        }
    });
    let one_task = SINGLES as f64 / t1.elapsed().as_secs_f64();
    let mut base_lat = Vec::new();
    for i in 0..SINGLES {
        let t = Instant::now();
        baseline_insert(&mut base, &data[i..i + 1], ENTITIES + 1 + i);
        base_lat.push(t.elapsed());
    }
    report(
        "single apply, durable, median latency (ms)",
        ms(median(latencies)),
        ms(median(base_lat)),
        "ms",
        "",
    );
    let t4 = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..4)
            .map(|k| {
                let store = store.clone();
                let actor = actor.clone();
                let bodies: Vec<Value> = (0..SINGLES).map(|i| single(k * SINGLES + i)).collect();
                tokio::spawn(async move {
                    for b in bodies {
                        store.apply("bench/single", &actor, b, None).await.unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let four_tasks = (4 * SINGLES) as f64 / t4.elapsed().as_secs_f64();
    println!(
        "{:<48} 1 task {:>9.0} /s   4 tasks {:>9.0} /s   ratio {:>5.2}   (need >= 2.00)",
        "single applies, throughput",
        one_task,
        four_tasks,
        four_tasks / one_task
    );

    // ---- queries over the 100k ----
    let sqlite_selects: [(&str, Option<rusqlite::types::Value>); 4] = [
        (
            "SELECT num, eid, who, miles, at FROM jog WHERE miles >= ?1 ORDER BY num DESC LIMIT 51",
            Some(rusqlite::types::Value::Real(95.0)),
        ),
        (
            "SELECT num, eid, who, miles, at FROM jog ORDER BY miles DESC, num DESC LIMIT 51",
            None,
        ),
        (
            "SELECT num, eid, who, miles, at FROM jog WHERE who = ?1 ORDER BY num DESC LIMIT 51",
            Some(rusqlite::types::Value::Text("Ada".into())),
        ),
        (
            "SELECT num, eid, title, body FROM jog WHERE num IN (SELECT rowid FROM jog_fts WHERE jog_fts MATCH ?1) ORDER BY num DESC LIMIT 51",
            Some(rusqlite::types::Value::Text("\"sunrise\"*".into())),
        ),
    ];
    let mut overhead = Vec::new();
    for _ in 0..QUERY_RUNS {
        let t = Instant::now();
        runtime.block_on(store.data_version("bench/runs")).unwrap();
        overhead.push(t.elapsed());
    }
    println!(
        "{:<48} store {:>10.3} ms   (a call's fixed cost: one indexed lookup)",
        "data_version median (ms)",
        ms(median(overhead))
    );
    for (line, (sql, param)) in QUERIES.into_iter().zip(sqlite_selects) {
        let name = line;
        let rows = runtime
            .block_on(store.query("bench/runs", line))
            .unwrap()
            .rows
            .len();
        let base_rows = baseline_query(&base, sql, param.clone());
        assert_eq!(rows, 50, "{name}");
        assert_eq!(base_rows, 51, "{name}");
        let mut s = Vec::new();
        let mut b = Vec::new();
        for _ in 0..QUERY_RUNS {
            let t = Instant::now();
            runtime.block_on(store.query("bench/runs", line)).unwrap();
            s.push(t.elapsed());
            let t = Instant::now();
            baseline_query(&base, sql, param.clone());
            b.push(t.elapsed());
        }
        report(
            &format!("{name} median (ms)"),
            ms(median(s)),
            ms(median(b)),
            "ms",
            "(need < 5 ms, ratio <= 3.00)",
        );
    }

    runtime.block_on(leaderboard(&store));

    if let Ok(url) = std::env::var(postgres::SWITCH) {
        runtime.block_on(postgres::bench(&url, &data));
    }
}

/// The median of [`QUERY_RUNS`] leaderboard reads of `store`, printed
/// alike on both backends.
async fn leaderboard(store: &Store) {
    let mut reads = Vec::new();
    for _ in 0..QUERY_RUNS {
        let t = Instant::now();
        store.query("bench/runs", LEADERBOARD).await.unwrap();
        reads.push(t.elapsed());
    }
    println!(
        "{:<48} store {:>10.3} ms",
        format!("{LEADERBOARD} median (ms)"),
        ms(median(reads))
    );
}
