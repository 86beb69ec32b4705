//! The PostgreSQL mode of the store bench: when `SHED_BENCH_DATABASE` names a
//! server (`postgres://user:password@host:port/postgres`), the store on
//! PostgreSQL beside a plain `tokio-postgres` baseline doing the same SQL —
//! the same tables (made by declaring the same kind on a second database),
//! the same statements per entity (the app row locked, the entity, its
//! `jog` and `doc` rows, its history entry, the app's version) in
//! transactions of 100, and the same four SELECTs the store writes for the
//! filter lines, every column of every row read. What is left between the
//! two is the store's own work: the wire, the catalog, JSON, the read's
//! transaction. Two databases are made for the run and dropped after it.
//! Last, the leaderboard's read (the store alone) and the plan of the
//! statement it sent, as `EXPLAIN (ANALYZE, BUFFERS)` shows it — read back
//! from `pg_stat_activity`, where the reads' sessions show their last.

use std::time::{Duration, Instant};

use serde_json::json;
use shed_store::Store;
use tokio_postgres::Client;
use tokio_postgres::types::{ToSql, Type};

use super::server::{connect, database_url, drop_database, new_database};
use super::{
    BATCH, ENTITIES, LEADERBOARD, QUERIES, QUERY_RUNS, Run, SINGLES, batches, bundle, median, ms,
    report, report_inserts,
};

/// The environment variable naming the server.
pub const SWITCH: &str = "SHED_BENCH_DATABASE";

/// The baseline's SELECT for each of [`QUERIES`] — the statement the store
/// writes for the line (`query/sql.rs`, PostgreSQL's dialect) for the app
/// with id `app` — and its parameters after the app id and before the limit.
fn baseline_selects(app: i64) -> [(String, Vec<Box<dyn ToSql + Sync + Send>>); 4] {
    let jog = format!("ec_{app}_jog");
    let doc = format!("ec_{app}_doc");
    let jog_columns = "t0.id, e.eid, e.num, e.version, e.alias, t0.id, t0.id, t0.\"who\", t0.\"miles\", t0.\"at\"";
    let from = format!(
        "{jog} t0 JOIN ec_entities e ON e.id = t0.id WHERE e.app = $1 AND e.tombstoned = 0"
    );
    [
        (
            format!(
                "SELECT {jog_columns} FROM {from} AND t0.\"miles\" >= $2 ORDER BY t0.id DESC LIMIT $3"
            ),
            vec![Box::new(95.0f64)],
        ),
        (
            format!(
                "SELECT t0.id, e.eid, e.num, e.version, e.alias, t0.\"miles\", t0.id, t0.\"who\", t0.\"miles\", t0.\"at\" FROM {from} ORDER BY t0.\"miles\" DESC NULLS LAST, t0.id DESC LIMIT $2"
            ),
            vec![],
        ),
        (
            format!(
                "SELECT {jog_columns} FROM {from} AND t0.\"who\" = $2 ORDER BY t0.id DESC LIMIT $3"
            ),
            vec![Box::new("Ada".to_string())],
        ),
        (
            format!(
                "SELECT t0.id, e.eid, e.num, e.version, e.alias, t0.id, t0.id, t0.\"title\", t0.\"body\" FROM {doc} t0 JOIN ec_entities e ON e.id = t0.id WHERE e.app = $1 AND e.tombstoned = 0 AND t0.id IN (SELECT id FROM {doc} WHERE fts @@ to_tsquery('simple', $2)) ORDER BY t0.id DESC LIMIT $3"
            ),
            vec![Box::new("'sunrise':*".to_string())],
        ),
    ]
}

/// Runs a baseline SELECT and reads every column of every row.
async fn baseline_query(
    db: &Client,
    stmt: &tokio_postgres::Statement,
    params: &[&(dyn ToSql + Sync)],
) -> usize {
    let rows = db.query(stmt, params).await.unwrap();
    for row in &rows {
        for (i, column) in row.columns().iter().enumerate() {
            match *column.type_() {
                Type::INT8 => drop(row.get::<_, Option<i64>>(i)),
                Type::FLOAT8 => drop(row.get::<_, Option<f64>>(i)),
                Type::TEXT => drop(row.get::<_, Option<String>>(i)),
                Type::TIMESTAMPTZ => drop(row.get::<_, Option<std::time::SystemTime>>(i)),
                ref other => panic!("a column of type {other}"),
            }
        }
    }
    rows.len()
}

/// The baseline's writes: one transaction per call, the same statements
/// the store runs for a list of new entities with `jog` and `doc`.
struct Baseline {
    db: Client,
    app: i64,
    person: String,
}

impl Baseline {
    async fn insert(&mut self, runs: &[Run]) {
        let txn = self.db.transaction().await.unwrap();
        let row = txn
            .query_one(
                "SELECT id, version, last_num FROM ec_apps WHERE name = $1 FOR UPDATE",
                &[&"bench/runs"],
            )
            .await
            .unwrap();
        let (version, mut last_num): (i64, i64) = (row.get(1), row.get(2));
        let entity = txn
            .prepare(
                "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                 VALUES($1, $2, $3, 1, $4, $5, $6, $4, $5, $6) RETURNING id",
            )
            .await
            .unwrap();
        let jog = txn
            .prepare(&format!(
                "INSERT INTO ec_{}_jog(id, \"who\", \"miles\", \"at\") VALUES($1, $2, $3, $4)
                 ON CONFLICT(id) DO UPDATE SET \"who\" = excluded.\"who\", \"miles\" = excluded.\"miles\", \"at\" = excluded.\"at\"",
                self.app
            ))
            .await
            .unwrap();
        let doc = txn
            .prepare(&format!(
                "INSERT INTO ec_{}_doc(id, \"title\", \"body\") VALUES($1, $2, $3)
                 ON CONFLICT(id) DO UPDATE SET \"title\" = excluded.\"title\", \"body\" = excluded.\"body\"",
                self.app
            ))
            .await
            .unwrap();
        let history = txn
            .prepare(
                "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .await
            .unwrap();
        let now = jiff::Timestamp::now().as_microsecond();
        let via: Option<String> = None;
        for (step, r) in runs.iter().enumerate() {
            last_num += 1;
            let eid = format!("{:032x}", rand::random::<u128>());
            let id: i64 = txn
                .query_one(
                    &entity,
                    &[&self.app, &eid, &last_num, &now, &self.person, &via],
                )
                .await
                .unwrap()
                .get(0);
            let at = std::time::UNIX_EPOCH + Duration::from_micros(r.at as u64);
            txn.execute(&jog, &[&id, &r.who, &r.miles, &at])
                .await
                .unwrap();
            txn.execute(&doc, &[&id, &r.title, &r.body]).await.unwrap();
            let change = json!({
                "entity": { "eid": eid },
                "jog": { "who": r.who, "miles": r.miles, "at": super::shed_render(r.at) },
                "doc": { "title": r.title, "body": r.body }
            })
            .to_string();
            txn.execute(
                &history,
                &[
                    &id,
                    &(version + 1),
                    &(step as i64),
                    &1i64,
                    &now,
                    &self.person,
                    &via,
                    &change,
                ],
            )
            .await
            .unwrap();
        }
        txn.execute(
            "UPDATE ec_apps SET version = $2, last_num = $3 WHERE id = $1",
            &[&self.app, &(version + 1), &last_num],
        )
        .await
        .unwrap();
        txn.commit().await.unwrap();
    }
}

/// The PostgreSQL figures, printed.
pub async fn bench(url: &str, data: &[Run]) {
    let server = connect(url).await;
    let names = ["shed_bench_store", "shed_bench_baseline"];
    for name in names {
        new_database(&server, name).await;
    }
    println!();
    println!(
        "shed-store bench on PostgreSQL: {ENTITIES} entities of jog {{who, miles, at}} + doc, synchronous_commit=on, the server {}",
        shed_store::redacted_url(url)
    );

    // ---- inserts in applies of 100 ----
    let store = Store::connect(&database_url(url, names[0])).await.unwrap();
    let actor = super::support::ada_writing(&store, &["bench/runs", "bench/single"]).await;
    let bodies = batches(data);
    let t = Instant::now();
    for body in bodies {
        store.apply("bench/runs", &actor, body, None).await.unwrap();
    }
    let store_insert = t.elapsed();

    // The baseline's tables: the same kind declared on its own database.
    let baseline_url = database_url(url, names[1]);
    let made = Store::connect(&baseline_url).await.unwrap();
    let person = super::support::ada_writing(&made, &["bench/runs"])
        .await
        .person;
    made.close().await.unwrap();
    drop(made);
    let db = connect(&baseline_url).await;
    let app: i64 = db
        .query_one("SELECT id FROM ec_apps WHERE name = 'bench/runs'", &[])
        .await
        .unwrap()
        .get(0);
    let mut base = Baseline { db, app, person };
    let t = Instant::now();
    for chunk in data.chunks(BATCH) {
        base.insert(chunk).await;
    }
    let base_insert = t.elapsed();
    report_inserts(store_insert, base_insert, "");

    // ---- single durable applies ----
    let mut latencies = Vec::new();
    let mut base_latencies = Vec::new();
    for i in 0..SINGLES {
        let t = Instant::now();
        store
            .apply("bench/single", &actor, bundle(&data[i], "$one"), None)
            .await
            .unwrap();
        latencies.push(t.elapsed());
        let t = Instant::now();
        base.insert(&data[i..i + 1]).await;
        base_latencies.push(t.elapsed());
    }
    report(
        "single apply, durable, median latency (ms)",
        ms(median(latencies)),
        ms(median(base_latencies)),
        "ms",
        "",
    );

    // ---- the four filter lines over the 100k ----
    let store_db = connect(&database_url(url, names[0])).await;
    let store_app: i64 = store_db
        .query_one("SELECT id FROM ec_apps WHERE name = 'bench/runs'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(store_app, app, "both databases number the app alike");
    for (line, (sql, params)) in QUERIES.iter().zip(baseline_selects(app)) {
        let mut bound: Vec<&(dyn ToSql + Sync)> = vec![&base.app];
        bound.extend(params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)));
        let limit = 51i64;
        bound.push(&limit);
        let stmt = base.db.prepare(&sql).await.unwrap();
        let rows = store.query("bench/runs", line).await.unwrap().rows.len();
        assert_eq!(rows, 50, "{line}");
        assert_eq!(baseline_query(&base.db, &stmt, &bound).await, 51, "{line}");
        let mut s = Vec::new();
        let mut b = Vec::new();
        for _ in 0..QUERY_RUNS {
            let t = Instant::now();
            store.query("bench/runs", line).await.unwrap();
            s.push(t.elapsed());
            let t = Instant::now();
            baseline_query(&base.db, &stmt, &bound).await;
            b.push(t.elapsed());
        }
        report(
            &format!("{line} median (ms)"),
            ms(median(s)),
            ms(median(b)),
            "ms",
            "(need ratio <= 3.00)",
        );
    }

    super::leaderboard(&store).await;
    explain_last_read(&store_db, app).await;

    store.close().await.unwrap();
    drop(store);
    drop(base);
    for name in names {
        drop_database(&server, name).await;
    }
}

/// Prints the plan of the last statement a read sent on the database
/// `db` is connected to, run again with the app `app` and the limit 51.
async fn explain_last_read(db: &Client, app: i64) {
    let last = db
        .query_one(
            "SELECT query FROM pg_stat_activity WHERE datname = current_database() \
             AND application_name = $1 AND query LIKE '%people p%' LIMIT 1",
            &[&shed_store::POSTGRES_READS_APPLICATION],
        )
        .await
        .expect("a read's session");
    let sql: String = last.get(0);
    db.batch_execute(&format!("PREPARE leaderboard AS {sql}"))
        .await
        .unwrap();
    println!("the plan of {LEADERBOARD}:\n  {sql}");
    for row in db
        .query(
            &format!("EXPLAIN (ANALYZE, BUFFERS) EXECUTE leaderboard({app}, 51)"),
            &[],
        )
        .await
        .unwrap()
    {
        println!("  {}", row.get::<_, String>(0));
    }
}
