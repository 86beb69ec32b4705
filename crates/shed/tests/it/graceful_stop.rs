//! Stopping shed, black-box: SIGTERM to the real `shed up` while 4 MCP
//! clients write as fast as they are answered. Every call is either
//! answered with its write, or fails as a connection error a client may
//! retry (refused, or closed before any answer) — never a half answer or a
//! refusal of the host's; shed exits 0 and logs what it waited for; and after
//! a restart every acknowledged write is there, and no write whose call was
//! cut is (so retrying it writes it once). SIGINT stops an idle shed the
//! same way. SIGKILL under 4 writers loses no acknowledged write.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::operating_support::{
    Shed, data_folder, every_run_holding, log_run, until_counted, written_eid,
};

/// The writing clients.
const WRITERS: usize = 4;

/// Writes acknowledged before the signal is sent.
const WRITES_BEFORE_THE_SIGNAL: usize = 200;

/// The most the test's writers run, whatever happens.
const WRITING_BOUND: Duration = Duration::from_secs(120);

/// What one writer saw: the writes acknowledged (eid → who), the calls cut
/// by a connection error (who, the error), and every other answer (none is
/// expected).
#[derive(Default)]
struct Seen {
    acknowledged: HashMap<String, String>,
    connection_errors: Vec<(String, String)>,
    unexpected: Vec<String>,
}

/// Writes `w<writer>-<i>` runs until the server refuses connections.
async fn writer(
    writer: usize,
    url: String,
    token: String,
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> Seen {
    let http = reqwest::Client::new();
    let mut seen = Seen::default();
    let started = Instant::now();
    for i in 0.. {
        if started.elapsed() > WRITING_BOUND {
            seen.unexpected.push("the server never stopped".into());
            break;
        }
        let who = format!("w{writer}-{i}");
        match log_run(&http, &url, &token, &who).await {
            Ok((status, message))
                if status == reqwest::StatusCode::OK
                    && message["result"]["isError"] == serde_json::json!(false) =>
            {
                let eid = written_eid(&message["result"]["structuredContent"]);
                seen.acknowledged.insert(eid, who);
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok((status, message)) => seen.unexpected.push(format!("{status}: {message}")),
            Err(error) if error.is_connect() => break,
            Err(error) if error.status().is_none() && (error.is_request() || error.is_body()) => {
                seen.connection_errors.push((who, format!("{error:?}")));
            }
            Err(error) => seen.unexpected.push(format!("{error:?}")),
        }
    }
    seen
}

/// How 4 writers saw a shed stopped by a signal once they had 200 writes
/// acknowledged: how it exited, the writes acknowledged (eid → who) and the
/// calls cut; and its data folder, its logs and the writers' token.
struct StoppedUnderWriters {
    status: std::process::ExitStatus,
    acknowledged: HashMap<String, String>,
    connection_errors: Vec<(String, String)>,
    _dir: tempfile::TempDir,
    data: std::path::PathBuf,
    logs: std::path::PathBuf,
    token: String,
}

/// Starts `shed up` on a new data folder, 4 writers on it, and sends it
/// `signal` once they have 200 writes acknowledged; no writer saw anything
/// but its writes and cut calls.
async fn stop_under_writers(signal: i32) -> StoppedUnderWriters {
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let shed = Shed::up(&data, &logs, &[]);
    let token = shed.token();
    let url = shed.url("/mcp");
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| tokio::spawn(writer(w, url.clone(), token.clone(), count.clone())))
        .collect();
    until_counted(
        &count,
        WRITES_BEFORE_THE_SIGNAL,
        WRITING_BOUND,
        "the writers were not answered",
    )
    .await;
    let (status, _) = tokio::task::spawn_blocking(move || shed.stop(signal))
        .await
        .unwrap();
    let mut acknowledged = HashMap::new();
    let mut connection_errors = Vec::new();
    for writer in writers {
        let seen = writer.await.unwrap();
        assert!(seen.unexpected.is_empty(), "{:?}", seen.unexpected);
        acknowledged.extend(seen.acknowledged);
        connection_errors.extend(seen.connection_errors);
    }
    StoppedUnderWriters {
        status,
        acknowledged,
        connection_errors,
        _dir: dir,
        data,
        logs,
        token,
    }
}

/// Restarts shed on the stopped one's data folder: every run it holds (eid → who),
/// each acknowledged write among them.
async fn every_acknowledged_write_is_there(
    stopped: &StoppedUnderWriters,
) -> HashMap<String, String> {
    let shed = Shed::up(&stopped.data, &stopped.logs, &[]);
    every_run_holding(&shed.url("/mcp"), &stopped.token, &stopped.acknowledged).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_four_writers_answers_every_call_or_closes_it_and_loses_no_write() {
    let stopped = stop_under_writers(libc::SIGTERM).await;
    let log = std::fs::read_to_string(&stopped.logs).unwrap();
    assert_eq!(stopped.status.code(), Some(0), "{log}");
    let line = log
        .lines()
        .find(|line| line.contains(" shed stopped: "))
        .unwrap_or_else(|| panic!("no stop logged: {log}"));
    assert!(line.contains(" in flight"), "{line}");
    assert!(
        line.ends_with("; every write is committed and the database closed"),
        "{line}"
    );
    let connection_errors = &stopped.connection_errors;
    eprintln!(
        "{line} ({} writes acknowledged, {} calls cut as connection errors: {connection_errors:?})",
        stopped.acknowledged.len(),
        connection_errors.len()
    );

    let runs = every_acknowledged_write_is_there(&stopped).await;
    for (who, error) in connection_errors {
        assert!(
            !runs.values().any(|written| written == who),
            "the call writing {who} was cut ({error}), yet its write landed: a retry would write it twice"
        );
    }
}

/// `kill -9` of shed under 4 writers: every write it acknowledged is there
/// after a restart (a call cut by the kill may have landed or not — its
/// caller was told nothing). On PostgreSQL an acknowledged write is a
/// group's commit, durable before any of its writers is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_four_writers_loses_no_acknowledged_write() {
    let stopped = stop_under_writers(libc::SIGKILL).await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&stopped.status),
        Some(libc::SIGKILL)
    );
    every_acknowledged_write_is_there(&stopped).await;
    eprintln!(
        "killed under 4 writers: {} writes acknowledged, {} calls cut, every acknowledged write there",
        stopped.acknowledged.len(),
        stopped.connection_errors.len()
    );
}

#[test]
fn sigint_stops_an_idle_shed_with_exit_0_and_the_drain_time() {
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let shed = Shed::up(&data, &logs, &[]);
    let (status, _) = shed.stop(libc::SIGINT);
    assert_eq!(status.code(), Some(0));
    let log = std::fs::read_to_string(&logs).unwrap();
    // The readiness probe's connection, idle, is no call: closed at once.
    assert!(
        log.lines().any(|line| line.ends_with(
            " shed stopped: no calls in flight; every write is committed and the database closed"
        )),
        "{log}"
    );
    // Closed: the WAL was copied into the database and removed with its index.
    if crate::data_place::on_sqlite(
        "sigint_stops_an_idle_shed_with_exit_0_and_the_drain_time (the WAL)",
    ) {
        assert!(data.join("shed.db").is_file());
        assert!(!data.join("shed.db-wal").exists());
    }
}
