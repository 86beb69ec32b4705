//! Upgrading in place a store made by the shed of schema version 16, the
//! last that kept each app's components in tables of their own
//! ([`today`] makes one as that shed's migrations and its declare and
//! apply made it): opened by this shed, every app, version, row, history
//! entry, activity row, refusal and token reads back as that shed read
//! them (the snapshot checked in, `today.txt`, was read by it), and no
//! per-app table is left. On both backends: the folder's SQLite file, or
//! under `SHED_TEST_DATABASE` the folder's database on the server.

pub mod today;

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shed_store::activity::Narrow;
use shed_store::{ColumnType, Store};

use crate::common::server_client;
use today::{App, Engine, NOW, Size, VERSION};

/// The store the snapshot checked in is of.
pub const SMALL: Size = Size { apps: 4, runs: 8 };

/// A store whose upgrade takes long enough to be killed in the middle.
const LARGE: Size = Size {
    apps: 60,
    runs: 150,
};

/// The data folder the child upgrading a store opens.
const CHILD_DIR: &str = "SHED_STORE_UPGRADE_CHILD_DIR";

/// The snapshot of [`SMALL`] as the shed of [`VERSION`] read it.
const SNAPSHOT: &str = "tests/it/upgrade/today.txt";

/// The engine the tests run on, and the database of `dir`: its SQLite file
/// or its URL on the test server.
fn place(dir: &Path) -> (Engine, String) {
    match shed_test_database::for_folder(dir) {
        Some(url) => (Engine::Postgres, url),
        None => (
            Engine::Sqlite,
            dir.join("shed.db").to_string_lossy().into_owned(),
        ),
    }
}

/// Makes in `dir` the store of `size` as the shed of [`VERSION`] made it;
/// answers its apps.
pub async fn make_today(dir: &Path, size: Size) -> Vec<App> {
    let (engine, at) = place(dir);
    make_today_at(engine, &at, size).await
}

/// Makes the store of `size` as the shed of [`VERSION`] made it, on
/// `engine`, at `at` (its SQLite file or its URL); answers its apps.
async fn make_today_at(engine: Engine, at: &str, size: Size) -> Vec<App> {
    let (sql, apps) = today::script(engine, size);
    match engine {
        Engine::Sqlite => {
            let file = PathBuf::from(at);
            shed_store::at_schema_version::sqlite(&file, VERSION).unwrap();
            let conn = rusqlite::Connection::open(&file).unwrap();
            conn.execute_batch("BEGIN").unwrap();
            for chunk in &sql {
                conn.execute_batch(chunk).unwrap();
            }
            conn.execute_batch("COMMIT").unwrap();
        }
        Engine::Postgres => {
            shed_store::at_schema_version::postgres(at, VERSION)
                .await
                .unwrap();
            let db = server_client(at).await;
            db.batch_execute("BEGIN").await.unwrap();
            for chunk in &sql {
                db.batch_execute(chunk).await.unwrap();
            }
            db.batch_execute("COMMIT").await.unwrap();
        }
    }
    apps
}

/// Opens the store in `dir` (applying every migration it lacks).
pub async fn open(dir: &Path) -> Store {
    match place(dir) {
        (Engine::Sqlite, file) => Store::open(Path::new(&file)).await.unwrap(),
        (Engine::Postgres, url) => Store::connect(&url).await.unwrap(),
    }
}

/// Asserts the store in `dir` is past schema version 16 and holds no
/// table of one app's own.
async fn assert_upgraded(dir: &Path) {
    let (version, tables) = version_and_app_tables(dir).await;
    assert!(
        version > VERSION as i64,
        "still at schema version {version}"
    );
    assert!(
        tables.is_empty(),
        "tables of one app's own are left: {tables:?}"
    );
}

/// The schema version of the store in `dir`, and the names of the tables
/// it holds that are one app's own (`ec_<app id>_…`).
pub async fn version_and_app_tables(dir: &Path) -> (i64, Vec<String>) {
    let version = "SELECT MAX(version) FROM schema_migrations";
    match place(dir) {
        (Engine::Sqlite, file) => {
            let conn = rusqlite::Connection::open(file).unwrap();
            let tables = conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .unwrap()
                .query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            let version = conn.query_row(version, [], |r| r.get(0)).unwrap();
            (
                version,
                tables.into_iter().filter(|t| app_table(t)).collect(),
            )
        }
        (Engine::Postgres, url) => {
            let db = server_client(&url).await;
            let tables = db
                .query(
                    "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| r.get::<_, String>(0))
                .filter(|t| app_table(t))
                .collect();
            let version = db.query_one(version, &[]).await.unwrap().get(0);
            (version, tables)
        }
    }
}

/// Whether a table's name is one app's own: `ec_<digits>_…`.
fn app_table(name: &str) -> bool {
    name.strip_prefix("ec_")
        .and_then(|rest| rest.split_once('_'))
        .is_some_and(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// What the store answers about everything [`today`] wrote, as text:
/// people, spaces and members, the deployed apps with their versions and
/// files, live tokens at [`NOW`], refusals, every activity row; per app
/// its data version, every live row (paged, each with its components,
/// stamps and edges), the reads by each kind of index, and (with
/// `histories`) each entity's history.
pub async fn snapshot(store: &Store, apps: &[App], histories: bool) -> String {
    let mut out = String::new();
    let names: Vec<String> = apps.iter().map(|a| a.name.clone()).collect();
    writeln!(out, "people {:#?}", store.people().await.unwrap()).unwrap();
    writeln!(out, "spaces {:#?}", store.spaces().await.unwrap()).unwrap();
    writeln!(out, "members {:#?}", store.members("jeff").await.unwrap()).unwrap();
    writeln!(out, "apps {:#?}", store.platform_apps().await.unwrap().1).unwrap();
    for slug in ["runs", "notes"] {
        let versions = store.app_versions("jeff", slug).await.unwrap();
        writeln!(out, "versions of {slug} {versions:#?}").unwrap();
    }
    for deploy in 1..=3 {
        let files = store.deploy_files(deploy).await.unwrap();
        writeln!(out, "files of deploy {deploy} {files:?}").unwrap();
    }
    writeln!(out, "tokens {:#?}", store.tokens(None, NOW).await.unwrap()).unwrap();
    let refusals = store.refusals("jeff", &names, None, 1000).await.unwrap();
    writeln!(out, "refusals {refusals:#?}").unwrap();
    let mut before = None;
    loop {
        let page = store
            .writes("jeff", &names, &Narrow::default(), before, 100)
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        before = Some(last.id);
        for write in &page {
            writeln!(out, "write {write:?}").unwrap();
        }
    }
    for app in apps {
        let name = &app.name;
        let version = store.data_version(name).await.unwrap();
        writeln!(out, "== {name} at version {version}").unwrap();
        let carried: Vec<String> = app
            .components
            .iter()
            .map(|(c, _)| format!(".{c}?"))
            .collect();
        let every = format!("{}&.created!&.updated!&.edges?&limit=7", carried.join("&"));
        let mut line = every.clone();
        loop {
            let listing = store.query(name, &line).await.unwrap();
            for row in &listing.rows {
                writeln!(out, "row {row}").unwrap();
            }
            let Some(next) = listing.next else { break };
            line = format!("{every}&after={next}");
        }
        for line in reads(app) {
            let rows = store.query(name, &line).await.unwrap().rows;
            let eids: Vec<&str> = rows
                .iter()
                .map(|r| r["entity"]["eid"].as_str().unwrap())
                .collect();
            writeln!(out, "{line} -> {eids:?}").unwrap();
        }
        if histories {
            for eid in &app.eids {
                let history = store.history(name, eid).await.unwrap();
                let history = serde_json::to_string(&history).unwrap();
                writeln!(out, "history of {eid} {history}").unwrap();
            }
        }
    }
    out
}

/// Lines that read an app by each kind of index its layout keeps: text,
/// number, time, bool, url and ref columns, ranges, orders, edges, the
/// full text, an alias.
fn reads(app: &App) -> Vec<String> {
    let mut lines = vec!["q=hills".to_string(), "q=hil".into(), "q=note".into()];
    let has = |c: &str| app.components.iter().any(|(name, _)| name == c);
    if has("note") {
        lines.push(".note!&.note.mark=A".into());
        lines.push(".note!&.note.said~hills".into());
    }
    if has("jog") && app.eids.len() > 6 {
        let (first, fifth) = (&app.eids[0], &app.eids[4]);
        lines.extend([
            ".jog!&.jog.who=Bo&order=.jog.at".into(),
            ".jog!&order=-.jog.miles&limit=5".into(),
            ".jog!&.jog.at>=2026-05-28T02:00:00Z&.jog.miles<6".into(),
            ".gear!&.gear.owner=@ada".into(),
            ".gear!&.gear.ready=true".into(),
            ".gear!&.gear.link=https://example.com/shoes/5".into(),
            format!(".edges.paced_by={fifth}"),
            format!(".comment!&.comment.target={first}"),
            "eid=first".into(),
            "q=hills&.jog.who=Ada".into(),
        ]);
    }
    lines
}

/// Whether the column types the store keeps are all exercised here.
#[test]
fn the_small_store_holds_every_column_type() {
    let (_, apps) = today::script(Engine::Sqlite, SMALL);
    for ty in ColumnType::ALL {
        assert!(
            apps.iter()
                .flat_map(|a| &a.components)
                .flat_map(|(_, c)| c)
                .any(|(_, t)| *t == ty),
            "{ty:?}"
        );
    }
}

// A store made by the shed of schema version 16 comes up on this shed's
// layout at its first start: everything it held reads back as that shed
// read it, and no table of one app's own is left.
#[tokio::test]
async fn a_store_of_version_16_is_upgraded_in_place_at_its_first_start() {
    let dir = tempfile::tempdir().unwrap();
    let apps = make_today(dir.path(), SMALL).await;
    let store = open(dir.path()).await;
    let read = snapshot(&store, &apps, true).await;
    store.close().await.unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    if std::env::var_os("SHED_WRITE_UPGRADE_SNAPSHOT").is_some() {
        std::fs::write(&path, &read).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_same(&expected, &read);
    assert_upgraded(dir.path()).await;
}

/// Asserts two snapshots are the same, naming the first line unlike.
pub fn assert_same(expected: &str, read: &str) {
    if expected == read {
        return;
    }
    let line = expected
        .lines()
        .zip(read.lines())
        .position(|(e, r)| e != r)
        .unwrap_or(expected.lines().count().min(read.lines().count()));
    panic!(
        "the snapshots differ from line {}: expected {:?}, read {:?}",
        line + 1,
        expected.lines().nth(line),
        read.lines().nth(line)
    );
}

/// The child: opens the store in its folder, which upgrades it, saying
/// when it starts. Runs only when the parent starts it.
#[tokio::test]
#[ignore = "the child process of an_upgrade_killed_midway_is_done_again_at_the_next_start"]
async fn upgrade_child() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    println!("OPENING");
    let store = open(Path::new(&dir)).await;
    store.close().await.unwrap();
    println!("OPENED");
}

/// Attempts at killing the child in the middle of its upgrade, each with
/// half the wait of the one before.
const KILL_ATTEMPTS: u32 = 5;

/// Starts the child upgrading the store in `dir` and kills it `after` it
/// says it starts: whether it was killed in the middle of the upgrade (it
/// had not said it was done, and tables of one app's own are left).
fn killed_midway(runtime: &tokio::runtime::Runtime, dir: &Path, after: Duration) -> bool {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "upgrade::upgrade_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // libtest prints the test's name before its output, on the same line.
    assert!(lines.any(|l| l.unwrap().ends_with("OPENING")));
    std::thread::sleep(after);
    child.kill().unwrap(); // SIGKILL
    let said: Vec<String> = lines.map_while(Result::ok).collect();
    child.wait().unwrap();
    let (_, left) = runtime.block_on(version_and_app_tables(dir));
    !said.iter().any(|l| l.ends_with("OPENED")) && !left.is_empty()
}

// kill -9 in the middle of an upgrade, then a start again: the store is
// upgraded whole, and reads as the same store upgraded without a stop.
// The child is this test binary, re-run; it is killed half the time an
// upgrade of the same store took here after it says it is starting (or,
// when it finished first on a machine busier before, half that, on a
// store made again), and the upgrade must have been under way (the child
// had not finished, and per-app tables are left).
#[test]
fn an_upgrade_killed_midway_is_done_again_at_the_next_start() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let whole = tempfile::tempdir().unwrap();
    let (expected, took) = runtime.block_on(async {
        let apps = make_today(whole.path(), LARGE).await;
        let started = Instant::now();
        let store = open(whole.path()).await;
        let took = started.elapsed();
        let read = snapshot(&store, &apps[..4], true).await + &snapshot(&store, &apps, false).await;
        store.close().await.unwrap();
        (read, took)
    });
    assert!(
        took > Duration::from_millis(200),
        "the upgrade took {took:?}: too little to be killed in the middle — make LARGE larger"
    );
    let mut after = took / 2;
    let killed = (0..KILL_ATTEMPTS)
        .find_map(|_| {
            let dir = tempfile::tempdir().unwrap();
            runtime.block_on(make_today(dir.path(), LARGE));
            let midway = killed_midway(&runtime, dir.path(), after);
            after /= 2;
            midway.then_some(dir)
        })
        .expect("the child finished its upgrade before every kill");
    runtime.block_on(async {
        let apps = today::script(Engine::Sqlite, LARGE).1;
        let store = open(killed.path()).await;
        let read = snapshot(&store, &apps[..4], true).await + &snapshot(&store, &apps, false).await;
        store.close().await.unwrap();
        assert_same(&expected, &read);
        assert_upgraded(killed.path()).await;
    });
}

// A backup the shed of schema version 16 made (a copy of its file, its
// apps in tables of their own) restores — its tables are what that shed
// made — and the store restored opens upgraded, reading as that shed read
// it. SQLite only: a backup is a SQLite file.
#[tokio::test]
async fn a_backup_made_at_version_16_restores_and_opens_upgraded() {
    if !crate::common::on_sqlite("a_backup_made_at_version_16_restores_and_opens_upgraded") {
        return;
    }
    let (made, restored) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let apps = make_today(made.path(), SMALL).await;
    let backup = made.path().join("backup.db");
    let copied = shed_store::backup(&made.path().join("shed.db"), &backup, |_| {}).unwrap();
    assert_eq!(copied.schema_version, VERSION as u64);
    let restored_at = shed_store::restore(&backup, &restored.path().join("shed.db")).unwrap();
    assert_eq!(restored_at.schema_version, VERSION as u64);
    let store = open(restored.path()).await;
    let read = snapshot(&store, &apps, true).await;
    store.close().await.unwrap();
    let expected =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT)).unwrap();
    assert_same(&expected, &read);
    assert_upgraded(restored.path()).await;
}

// A data folder the shed of schema version 16 made, upgraded at its first
// start, then copied to PostgreSQL by `shed migrate --to`
// (`copy_to_server`): the copy reads as that shed read the folder. Needs
// a PostgreSQL server: without `SHED_TEST_DATABASE` it says so and passes.
#[tokio::test]
async fn a_folder_of_version_16_upgraded_then_copied_to_postgresql_reads_the_same() {
    let Some(url) = crate::common::fresh_database() else {
        eprintln!(
            "a_folder_of_version_16_upgraded_then_copied_to_postgresql_reads_the_same: needs a PostgreSQL server, skipped without SHED_TEST_DATABASE"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shed.db");
    let apps = make_today_at(Engine::Sqlite, &file.to_string_lossy(), SMALL).await;
    Store::open(&file).await.unwrap().close().await.unwrap();
    shed_store::copy_to_server(&file, &url, |_| {})
        .await
        .unwrap();
    let store = Store::connect(&url).await.unwrap();
    let read = snapshot(&store, &apps, true).await;
    store.close().await.unwrap();
    let expected =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT)).unwrap();
    assert_same(&expected, &read);
}
