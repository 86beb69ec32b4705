//! Durability: a child process applies writes and prints each acknowledged
//! eid; it is killed with SIGKILL mid-stream; the store reopens with every
//! printed eid in it and the database's integrity check saying ok. The child
//! is this test binary itself, re-run with an environment variable naming
//! the data folder. On both backends: the folder's SQLite file, or — under
//! `SHED_TEST_DATABASE` — the folder's database on the PostgreSQL server
//! (`common::open_store`), where an acknowledged write is a commit with
//! `synchronous_commit` on.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::json;
use shed_store::{Actor, ColumnType, Vocabulary};

use crate::common::open_store;

const CHILD_DIR: &str = "SHED_STORE_CRASH_CHILD_DIR";

/// The child: four tasks writing as fast as they can, printing `ACK <eid>`
/// after each acknowledged apply. Runs only when the parent starts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of kill_9_never_loses_an_acknowledged_write"]
async fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let store = open_store(std::path::Path::new(&dir)).await;
    let ada = match store.person("ada").await.unwrap() {
        Some(p) => p,
        None => store.add_person("ada", "Ada").await.unwrap(),
    };
    let vocab = Vocabulary {
        components: vec![("jog".into(), vec![("miles".into(), ColumnType::Number)])],
    };
    store.declare("jeff/runs", &vocab).await.unwrap();
    let mut tasks = Vec::new();
    for t in 0..4u64 {
        let store = store.clone();
        let actor = Actor {
            person: ada.eid.clone(),
            via: None,
            through: None,
        };
        tasks.push(tokio::spawn(async move {
            for i in 0u64.. {
                let body = if i % 3 == 0 {
                    json!([
                        { "entity": { "eid": "$r" }, "jog": { "miles": i }, "doc": { "title": format!("run {t} {i}") } },
                        { "entity": { "eid": "$c" }, "comment": { "target": "$r" } }
                    ])
                } else {
                    json!({ "entity": { "eid": "$r" }, "jog": { "miles": i } })
                };
                let applied = store.apply("jeff/runs", &actor, body, None).await.unwrap();
                let mut out = std::io::stdout().lock();
                for eid in applied.entities {
                    writeln!(out, "ACK {eid}").unwrap();
                }
                out.flush().unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[test]
fn kill_9_never_loses_an_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut acknowledged: Vec<String> = Vec::new();
    for (round, kill_after) in [40usize, 350, 7, 1200, 150].into_iter().enumerate() {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "crash::crash_child_writer",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = 0;
        for line in lines.by_ref() {
            if let Some(eid) = line.unwrap().strip_prefix("ACK ") {
                acknowledged.push(eid.to_string());
                seen += 1;
                if seen == kill_after {
                    child.kill().unwrap(); // SIGKILL
                    break;
                }
            }
        }
        // Whatever the child printed before it died was acknowledged too.
        for line in lines {
            let Ok(line) = line else { break };
            if let Some(eid) = line.strip_prefix("ACK ") {
                acknowledged.push(eid.to_string());
            }
        }
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "round {round}: the child was killed, not finished"
        );
        runtime.block_on(async {
            let store = open_store(dir.path()).await;
            assert_eq!(
                store.integrity_check().await.unwrap(),
                "ok",
                "round {round}"
            );
            for eid in &acknowledged {
                let rows = store
                    .query("jeff/runs", &format!("eid={eid}"))
                    .await
                    .unwrap()
                    .rows;
                assert_eq!(
                    rows.len(),
                    1,
                    "round {round}: acknowledged {eid} is missing after kill -9"
                );
            }
            let version = store.data_version("jeff/runs").await.unwrap();
            assert!(
                version as usize >= acknowledged.len() * 2 / 3,
                "round {round}: the data version went back"
            );
        });
    }
    assert!(acknowledged.len() > 1700);
}
