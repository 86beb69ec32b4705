//! The WAL stays bounded under a steady stream of writes: checkpoints run off
//! the writer's path, and a WAL that never gets a quiet moment to restart is
//! checkpointed and restarted by the writer once it reaches its bound.

use crate::common;
use serde_json::{Value, json};

use shed_store::ColumnType;

/// SQLite's WAL frame: a 24-byte header and a 4096-byte page.
const FRAME: u64 = 24 + 4096;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steady_stream_of_writes_keeps_the_wal_bounded() {
    if !common::on_sqlite("a_steady_stream_of_writes_keeps_the_wal_bounded") {
        return;
    }
    let fixture =
        common::with_jog(&[("miles", ColumnType::Number), ("who", ColumnType::Text)]).await;
    let (store, actor) = (&fixture.store, fixture.as_ada());
    let mut largest = 0;
    for a in 0..150u64 {
        let body: Vec<Value> = (0..100u64)
            .map(|i| {
                let n = a * 100 + i;
                json!({
                    "entity": { "eid": format!("$r{i}") },
                    "jog": { "miles": (n * 7919) % 1000, "who": format!("runner {}", n * 104_729 % 9973) },
                    "doc": { "title": format!("Run {n}"), "body": format!("lap {} of {}", n % 13, n % 17) }
                })
            })
            .collect();
        store
            .apply("jeff/runs", &actor, Value::Array(body), None)
            .await
            .unwrap();
        largest = largest.max(
            std::fs::metadata(fixture._dir.path().join("shed.db-wal"))
                .unwrap()
                .len(),
        );
    }
    assert_eq!(store.data_version("jeff/runs").await.unwrap(), 150);
    // The bound is 8,000 pages; one apply adds a few hundred past it.
    assert!(
        largest < 10_000 * FRAME,
        "the WAL grew to {largest} bytes ({} frames)",
        largest / FRAME
    );
    assert!(largest > 1_000 * FRAME, "the stream never filled the WAL");
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_store_answers_no_read_and_leaves_no_wal() {
    if !common::on_sqlite("a_closed_store_answers_no_read_and_leaves_no_wal") {
        return;
    }
    let fixture = common::with_jog(&[("miles", ColumnType::Number)]).await;
    let store = &fixture.store;
    fixture
        .apply(
            "jeff/runs",
            json!([{ "entity": { "eid": "$r" }, "jog": { "miles": 5 } }]),
        )
        .await;
    assert_eq!(store.data_version("jeff/runs").await.unwrap(), 1);
    store.close().await.unwrap();
    // A read after the close (a watcher's tick, a request still running)
    // would open a connection that keeps the WAL until the process ends.
    let refused = store.data_version("jeff/runs").await.unwrap_err();
    assert!(
        refused.to_string().contains("shed is stopping"),
        "{refused}"
    );
    let wal = fixture._dir.path().join("shed.db-wal");
    assert!(!wal.exists(), "the last connection closed removes the WAL");
}
