//! A crash of the database server, black-box: PostgreSQL stopped as a crash
//! stops it (`pg_ctl stop -m immediate`: no shutdown checkpoint, every
//! connection cut) while 4 MCP clients write through a real `shed up`, then
//! started again. shed answers the calls of the outage with a refusal and
//! writes again once the server is back, and every write it acknowledged —
//! before, during and after — is there: an acknowledged write is a commit
//! PostgreSQL has flushed. PostgreSQL only (on SQLite the tests say they
//! are skipped). The stop would cut every other test's connections to the
//! shared cluster, so the test runs a child of its own (this binary again)
//! under `scripts/postgres-cluster`, beside a cluster of its own, which the
//! script's `SHED_TEST_DATABASE_CTL` stops and starts.

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::data_place::on_server;
use crate::operating_support::{
    Shed, data_folder, every_run_holding, log_run, until_counted, written_eid,
};

/// Set in the child's environment: it is the child and runs.
const CHILD: &str = "SHED_POSTGRES_STOP_CHILD";

/// The writing clients.
const WRITERS: usize = 4;

/// Writes acknowledged before the stop, and again after the start.
const WRITES_EACH_SIDE: usize = 100;

/// How long the server stays stopped.
const OUTAGE: Duration = Duration::from_millis(500);

/// The most the child waits for the writers at each step.
const STEP_BOUND: Duration = Duration::from_secs(60);

/// The pause of a writer refused during the outage before it tries again.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

#[test]
fn an_immediate_stop_of_postgres_under_four_writers_loses_no_acknowledged_write() {
    if !on_server() {
        eprintln!(
            "an_immediate_stop_of_postgres_under_four_writers_loses_no_acknowledged_write: a crash of PostgreSQL needs PostgreSQL (SHED_TEST_DATABASE), skipped on SQLite"
        );
        return;
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres-cluster");
    let output = Command::new(script)
        .arg(std::env::current_exe().unwrap())
        .args([
            "postgres_stop::under_a_cluster_of_its_own",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let said = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    assert!(
        output.status.success(),
        "the child failed: {}\n{}",
        said(&output.stdout),
        said(&output.stderr)
    );
    let printed = said(&output.stdout);
    let line = printed
        .lines()
        .find(|line| line.starts_with("stopped under 4 writers:"))
        .unwrap_or_else(|| panic!("the child did not run: {printed}"));
    eprintln!("{line}");
}

/// Writes `w<writer>-<i>` runs until `stop`: the writes acknowledged
/// (eid → who); a call refused or cut is counted in `refused` and tried
/// again, as a client would, under another name.
async fn writer(
    writer: usize,
    url: String,
    token: String,
    stop: Arc<AtomicBool>,
    acknowledged: Arc<AtomicUsize>,
    refused: Arc<AtomicUsize>,
) -> HashMap<String, String> {
    let http = reqwest::Client::new();
    let mut written = HashMap::new();
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let who = format!("w{writer}-{i}");
        match log_run(&http, &url, &token, &who).await {
            Ok((status, message))
                if status == reqwest::StatusCode::OK
                    && message["result"]["isError"] == serde_json::json!(false) =>
            {
                written.insert(written_eid(&message["result"]["structuredContent"]), who);
                acknowledged.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                refused.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(RETRY_PAUSE).await;
            }
        }
    }
    written
}

/// Runs `$SHED_TEST_DATABASE_CTL <what>` (the child's own cluster).
fn cluster(what: &str) {
    let ctl = std::env::var("SHED_TEST_DATABASE_CTL")
        .expect("scripts/postgres-cluster exports SHED_TEST_DATABASE_CTL");
    let status = Command::new(ctl).arg(what).status().unwrap();
    assert!(status.success(), "{what} of the cluster: {status}");
}

/// The child: `shed up` on its own cluster, 4 writers, the cluster
/// stopped at once and started again under them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child of an_immediate_stop_of_postgres_under_four_writers_loses_no_acknowledged_write"]
async fn under_a_cluster_of_its_own() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let shed = Shed::up(&data, &logs, &[]);
    let token = shed.token();
    let url = shed.url("/mcp");
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            tokio::spawn(writer(
                w,
                url.clone(),
                token.clone(),
                stop.clone(),
                acknowledged.clone(),
                refused.clone(),
            ))
        })
        .collect();
    until_counted(
        &acknowledged,
        WRITES_EACH_SIDE,
        STEP_BOUND,
        "writes before the stop",
    )
    .await;
    tokio::task::spawn_blocking(|| cluster("stop"))
        .await
        .unwrap();
    let at_stop = acknowledged.load(Ordering::Relaxed);
    tokio::time::sleep(OUTAGE).await;
    tokio::task::spawn_blocking(|| cluster("start"))
        .await
        .unwrap();
    until_counted(
        &acknowledged,
        at_stop + WRITES_EACH_SIDE,
        STEP_BOUND,
        "writes after the start",
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    let mut written = HashMap::new();
    for writer in writers {
        written.extend(writer.await.unwrap());
    }
    every_run_holding(&url, &token, &written).await;
    let log = std::fs::read_to_string(&logs).unwrap_or_default();
    assert!(
        refused.load(Ordering::Relaxed) > 0,
        "no call was refused while the server was stopped: {log}"
    );
    println!(
        "stopped under 4 writers: {} writes acknowledged ({at_stop} when the server stopped), {} calls refused or cut meanwhile, every acknowledged write there",
        written.len(),
        refused.load(Ordering::Relaxed)
    );
    drop(shed);
}
