//! Backups, black-box: `shed backup` while the real `shed up` takes a
//! steady stream of writes from two MCP clients, then `shed restore` into a
//! new folder. Every write acknowledged before the backup started is in the
//! copy, SQLite's integrity check says `ok`, the restored folder is private
//! as a data folder is (0700, its database 0600), and a shed started on it
//! serves the data and the app's files with the same token. A non-empty
//! folder, an existing backup file and a file that is no backup are
//! refused with a sentence. On a database server both commands answer that
//! `pg_dump` and `pg_restore` do this, and the data round-trips through
//! them, dumped under the same writes.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::data_place::{on_server, on_sqlite};
use crate::operating_support::{
    Shed, call, data_folder, every_run, log_run, shed, succeeded, written_eid,
};

/// The writing clients.
const WRITERS: usize = 2;

/// How long the writers write before the backup starts.
const WRITING_BEFORE: Duration = Duration::from_secs(1);

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Writes runs until `stop`; each acknowledged write with when it was.
async fn writer(
    writer: usize,
    url: String,
    token: String,
    stop: Arc<AtomicBool>,
) -> Vec<(Instant, String, String)> {
    let http = reqwest::Client::new();
    let mut acknowledged = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let who = format!("w{writer}-{i}");
        let answer = succeeded(log_run(&http, &url, &token, &who).await.unwrap());
        acknowledged.push((Instant::now(), written_eid(&answer), who));
    }
    acknowledged
}

/// Runs `copy` on a blocking thread while [`WRITERS`] clients write runs
/// through `serving` (from [`WRITING_BEFORE`] before it until a moment
/// after): what `copy` answered, the writes acknowledged before it began
/// (eid → who), and how many were acknowledged after.
async fn under_writes<T: Send + 'static>(
    serving: &Shed,
    token: &str,
    copy: impl FnOnce() -> T + Send + 'static,
) -> (T, HashMap<String, String>, usize) {
    let url = serving.url("/mcp");
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| tokio::spawn(writer(w, url.clone(), token.to_string(), stop.clone())))
        .collect();
    tokio::time::sleep(WRITING_BEFORE).await;
    let started = Instant::now();
    let copied = tokio::task::spawn_blocking(copy).await.unwrap();
    // The writers go on a moment after the copy, then stop.
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    let mut before = HashMap::new();
    let mut after = 0;
    for writer in writers {
        for (when, eid, who) in writer.await.unwrap() {
            if when < started {
                before.insert(eid, who);
            } else {
                after += 1;
            }
        }
    }
    (copied, before, after)
}

/// A shed serving a restored copy holds every write in `before`, and the
/// app's files (its deploy is in the database): how many runs it holds.
async fn serves_every_write(shed: &Shed, token: &str, before: &HashMap<String, String>) -> usize {
    let http = reqwest::Client::new();
    let runs = every_run(&http, &shed.url("/mcp"), token).await;
    for (eid, who) in before {
        assert_eq!(
            runs.get(eid),
            Some(who),
            "the write {who} ({eid}) acknowledged before the copy"
        );
    }
    let files = succeeded(
        call(
            &http,
            &shed.url("/mcp"),
            token,
            "app_files",
            json!({ "app": "demo/runs", "read": ["tools.json"] }),
        )
        .await
        .unwrap(),
    );
    assert!(files.to_string().contains("log_run"), "{files}");
    runs.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_writes_restores_every_write_acknowledged_before_it() {
    if !on_sqlite("a_backup_under_writes_restores_every_write_acknowledged_before_it") {
        return;
    }
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let serving = Shed::up(&data, &logs, &[]);
    let token = serving.token();
    let file = dir.path().join("backup.db");
    let (backed_up, before, after) = {
        let (data, file) = (data.clone(), file.clone());
        under_writes(&serving, &token, move || {
            shed(&data, &["backup", file.to_str().unwrap()])
        })
        .await
    };
    let (ok, printed, said) = backed_up;
    assert!(ok, "{said}");
    assert!(printed.starts_with("backed up "), "{printed}");
    assert!(
        !said.contains('\u{1b}'),
        "piped, the backup draws no bar: {said:?}"
    );
    assert!(
        !before.is_empty() && after > 0,
        "writes before and after the backup"
    );
    assert_eq!(mode(&file), 0o600, "the backup holds secrets");

    // The same file again is refused, and so is restoring over a data folder.
    let (ok, _, said) = shed(&data, &["backup", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        said.contains(&format!(
            "{} is already there — name a new file for the backup, or remove that one first",
            file.display()
        )),
        "{said}"
    );
    let (ok, _, said) = shed(&data, &["restore", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        said.contains(&format!(
            "{} is not empty — restore into a new or empty folder (pass --data with one); nothing was changed",
            data.display()
        )),
        "{said}"
    );
    let (ok, _, said) = shed(
        &dir.path().join("other"),
        &["restore", logs.to_str().unwrap()],
    );
    assert!(!ok);
    assert!(said.contains("is not a shed backup"), "{said}");
    assert!(
        !dir.path().join("other").exists(),
        "a refused restore leaves nothing behind"
    );
    drop(serving);

    let restored = dir.path().join("restored");
    let (ok, printed, said) = shed(&restored, &["restore", file.to_str().unwrap()]);
    assert!(ok, "{said}");
    assert!(printed.starts_with("restored "), "{printed}");
    for beside in ["-wal", "-shm", "-journal", ".partial"] {
        let mut name = file.clone().into_os_string();
        name.push(beside);
        assert!(!Path::new(&name).exists(), "{beside} beside the backup");
    }
    assert_eq!(mode(&restored), 0o700);
    assert_eq!(mode(&restored.join("shed.db")), 0o600);
    let database = rusqlite::Connection::open(restored.join("shed.db")).unwrap();
    let verdict: String = database
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(verdict, "ok");
    drop(database);

    let runs = serves_every_write(&Shed::up(&restored, &logs, &[]), &token, &before).await;
    eprintln!(
        "{} writes before the backup, {after} during or after it; the copy holds {runs} runs",
        before.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_holding_objects_shed_does_not_make_is_refused_naming_them() {
    if !on_sqlite("a_backup_holding_objects_shed_does_not_make_is_refused_naming_them") {
        return;
    }
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let serving = Shed::up(&data, &logs, &[]);
    let token = serving.token();
    let http = reqwest::Client::new();
    let run = written_eid(&succeeded(
        log_run(&http, &serving.url("/mcp"), &token, "Ada")
            .await
            .unwrap(),
    ));
    let clean = dir.path().join("clean.db");
    let (ok, _, said) = shed(&data, &["backup", clean.to_str().unwrap()]);
    assert!(ok, "{said}");
    drop(serving);

    for (i, (sql, named)) in [
        (
            "CREATE TRIGGER tokens_spy AFTER DELETE ON tokens BEGIN SELECT 1; END",
            "a trigger shed does not make (tokens_spy)",
        ),
        (
            "CREATE VIEW every_token AS SELECT * FROM tokens",
            "a view shed does not make (every_token)",
        ),
        (
            "CREATE TABLE stash(x)",
            "a table shed does not make (stash)",
        ),
        (
            "CREATE INDEX people_by_name ON people(name)",
            "an index shed does not make (people_by_name)",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.path().join(format!("tampered-{i}.db"));
        std::fs::copy(&clean, &file).unwrap();
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        // Into a new folder, which is not made; into an empty one, left empty.
        let new = dir.path().join(format!("new-{i}"));
        let empty = dir.path().join(format!("empty-{i}"));
        std::fs::create_dir(&empty).unwrap();
        for into in [&new, &empty] {
            let (ok, _, said) = shed(into, &["restore", file.to_str().unwrap()]);
            assert!(!ok, "{sql}");
            assert!(
                said.contains(&format!(
                    "{} holds {named} — it was not restored; restore only files `shed backup` wrote",
                    file.display()
                )),
                "{sql}: {said}"
            );
        }
        assert!(!new.exists(), "{sql}: the new folder is not made");
        assert_eq!(
            std::fs::read_dir(&empty).unwrap().count(),
            0,
            "{sql}: the empty folder is left empty"
        );
    }

    // The clean backup, with its deployed app and data, still restores.
    let restored = dir.path().join("restored");
    let (ok, _, said) = shed(&restored, &["restore", clean.to_str().unwrap()]);
    assert!(ok, "{said}");
    let runs = every_run(&http, &Shed::up(&restored, &logs, &[]).url("/mcp"), &token).await;
    assert_eq!(runs.get(&run).map(String::as_str), Some("Ada"));
}

/// Runs a PostgreSQL client program (`pg_dump`, `pg_restore`), which must succeed.
fn client_program(program: &str, args: &[&str]) {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_server_backup_names_pg_dump_and_the_data_round_trips_through_it() {
    if !on_server() {
        eprintln!(
            "on_a_server_backup_names_pg_dump_and_the_data_round_trips_through_it: a test of a database server, skipped on SQLite"
        );
        return;
    }
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let serving = Shed::up(&data, &logs, &[]);
    let token = serving.token();
    let database = shed_test_database::for_folder(&data).unwrap();
    let password = database.split_once("://").unwrap().1;
    let password = password
        .split_once('@')
        .unwrap()
        .0
        .split_once(':')
        .unwrap()
        .1;

    // `shed backup` and `shed restore` say what does it, and change nothing.
    let file = dir.path().join("backup.db");
    let (ok, _, said) = shed(&data, &["backup", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        said.contains("not in a file of the data folder — back it up with `pg_dump --format=custom --file=FILE postgres://"),
        "{said}"
    );
    assert!(!said.contains(password), "the password in {said}");
    assert!(!file.exists());
    let other = dir.path().join("other");
    let (ok, _, said) = shed(&other, &["restore", file.to_str().unwrap()]);
    assert!(!ok);
    assert!(said.contains("pg_restore --dbname=URL FILE"), "{said}");
    assert!(!other.exists(), "a refused restore makes no folder");

    let dump = dir.path().join("shed.dump");
    let ((), before, after) = {
        let (database, dump) = (database.clone(), dump.clone());
        under_writes(&serving, &token, move || {
            let file = format!("--file={}", dump.display());
            client_program("pg_dump", &["--format=custom", &file, &database]);
        })
        .await
    };
    assert!(
        !before.is_empty() && after > 0,
        "writes before and after the dump"
    );
    drop(serving);

    // Restored into the (empty) database of a new data folder, it serves.
    let restored = dir.path().join("restored");
    let target = shed_test_database::for_folder(&restored).unwrap();
    let into = format!("--dbname={target}");
    client_program("pg_restore", &["--no-owner", &into, dump.to_str().unwrap()]);
    let runs = serves_every_write(&Shed::up(&restored, &logs, &[]), &token, &before).await;
    eprintln!(
        "{} writes before the dump, {after} during or after it; the restored database holds {runs} runs",
        before.len()
    );
}
