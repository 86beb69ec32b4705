//! `shed migrate --to postgres://…`, black-box: a data folder holding every
//! kind of record — the run club deployed by `shed up`, runs written with
//! history, an alias, a ref and an edge, a tombstone, and through the store
//! a job, tokens, sign-in links, hops and sessions, an OAuth client with a
//! code and a grant refreshed once, drafts, a view key, a removed person —
//! is copied by the real binary into an empty database on the test server.
//! Every table holds the same rows on both sides, value for value (histories
//! and deploy files byte for byte), and `shed up --database` on the copy
//! answers `commands` and the reads as the SQLite shed did, to the same
//! token. A target holding rows or another program's tables is refused with
//! nothing written; a bad URL, an unreachable server, a missing database
//! and a database of another schema version answer one sentence.
//!
//! The copy needs a server: without `SHED_TEST_DATABASE` those tests say
//! they are skipped. The sentences before any connection run everywhere.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use shed_store::Store;
use tokio_postgres::NoTls;
use tokio_postgres::types::Type;

use crate::operating_support::{Shed, call, data_folder, log_run, shed_on, succeeded, written_eid};

/// A value as both databases are compared: SQLite's 0/1 and microseconds
/// read as PostgreSQL's bools and times are.
#[derive(Debug, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
}

/// A table's rows, each rendered, sorted.
type Rows = Vec<String>;

/// `shed migrate --to <to>` on the SQLite file of `data`: whether it
/// succeeded, its stdout and stderr.
fn migrate(data: &Path, to: &str) -> (bool, String, String) {
    shed_on(data, None, &["migrate", "--to", to])
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// Every table of the PostgreSQL database but the migration record and its
/// own full text `ec_fts`, with its columns (generated ones left out) and
/// their types.
async fn target_tables(db: &tokio_postgres::Client) -> BTreeMap<String, Vec<(String, Type)>> {
    let mut tables: BTreeMap<String, Vec<(String, Type)>> = BTreeMap::new();
    for r in db
        .query(
            "SELECT c.relname::text, a.attname::text, a.atttypid
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_attribute a ON a.attrelid = c.oid
             WHERE n.nspname = current_schema() AND c.relkind = 'r'
               AND c.relname NOT IN ('schema_migrations', 'ec_fts')
               AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
             ORDER BY c.relname, a.attnum",
            &[],
        )
        .await
        .unwrap()
    {
        let ty = Type::from_oid(r.get(2)).unwrap();
        tables.entry(r.get(0)).or_default().push((r.get(1), ty));
    }
    tables
}

/// Every table of the SQLite file but the migration record and the FTS5
/// index `ec_fts` (PostgreSQL keeps its own, computed by the copy; a
/// search on the copy reads it: [`answers`]).
fn source_tables(db: &rusqlite::Connection) -> Vec<String> {
    db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
         AND name <> 'schema_migrations' AND name NOT LIKE 'ec!_fts%' ESCAPE '!' ORDER BY name",
    )
    .unwrap()
    .query_map([], |r| r.get(0))
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

fn sorted(mut rows: Vec<Vec<Cell>>) -> Rows {
    let mut rendered: Rows = rows.drain(..).map(|r| format!("{r:?}")).collect();
    rendered.sort();
    rendered
}

/// `table`'s rows in SQLite, each value read as PostgreSQL's column of
/// the type in `columns` keeps it.
fn sqlite_rows(db: &rusqlite::Connection, table: &str, columns: &[(String, Type)]) -> Rows {
    use rusqlite::types::Value as V;
    let names: Vec<String> = columns.iter().map(|(c, _)| quoted(c)).collect();
    let mut stmt = db
        .prepare(&format!(
            "SELECT {} FROM {}",
            names.join(", "),
            quoted(table)
        ))
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(columns
                .iter()
                .enumerate()
                .map(|(i, (_, ty))| match (r.get::<_, V>(i).unwrap(), ty) {
                    (V::Null, _) => Cell::Null,
                    (V::Integer(n), &Type::FLOAT8) => Cell::Real(n as f64),
                    (V::Integer(n), _) => Cell::Int(n),
                    (V::Real(f), _) => Cell::Real(f),
                    (V::Text(s), &Type::BYTEA) => Cell::Bytes(s.into_bytes()),
                    (V::Text(s), _) => Cell::Text(s),
                    (V::Blob(b), _) => Cell::Bytes(b),
                })
                .collect())
        })
        .unwrap()
        .collect::<Result<Vec<Vec<Cell>>, _>>()
        .unwrap();
    sorted(rows)
}

/// `table`'s rows on PostgreSQL.
async fn postgres_rows(
    db: &tokio_postgres::Client,
    table: &str,
    columns: &[(String, Type)],
) -> Rows {
    let names: Vec<String> = columns.iter().map(|(c, _)| quoted(c)).collect();
    let rows = db
        .query(
            &format!("SELECT {} FROM {}", names.join(", "), quoted(table)),
            &[],
        )
        .await
        .unwrap();
    let cells = rows
        .iter()
        .map(|r| {
            columns
                .iter()
                .enumerate()
                .map(|(i, (_, ty))| {
                    let cell = match *ty {
                        Type::INT8 => r.get::<_, Option<i64>>(i).map(Cell::Int),
                        Type::INT4 => r.get::<_, Option<i32>>(i).map(|n| Cell::Int(n.into())),
                        Type::BOOL => r.get::<_, Option<bool>>(i).map(|b| Cell::Int(b.into())),
                        Type::FLOAT8 => r.get::<_, Option<f64>>(i).map(Cell::Real),
                        Type::TEXT => r.get::<_, Option<String>>(i).map(Cell::Text),
                        Type::BYTEA => r.get::<_, Option<Vec<u8>>>(i).map(Cell::Bytes),
                        Type::TIMESTAMPTZ => {
                            r.get::<_, Option<std::time::SystemTime>>(i).map(|t| {
                                match t.duration_since(std::time::UNIX_EPOCH) {
                                    Ok(d) => Cell::Int(d.as_micros() as i64),
                                    Err(e) => Cell::Int(-(e.duration().as_micros() as i64)),
                                }
                            })
                        }
                        ref other => panic!("{table} has a column of type {other}"),
                    };
                    cell.unwrap_or(Cell::Null)
                })
                .collect()
        })
        .collect();
    sorted(cells)
}

/// The rows of every table of the PostgreSQL database `url` names.
async fn every_row(url: &str) -> BTreeMap<String, Rows> {
    let db = connect(url).await;
    let mut all = BTreeMap::new();
    for (table, columns) in target_tables(&db).await {
        let rows = postgres_rows(&db, &table, &columns).await;
        all.insert(table, rows);
    }
    all
}

/// Runs and a comment written through the MCP door of `shed`: three runs,
/// the first given an alias and its miles patched twice (three history
/// entries), a comment whose `target` refers to it and an edge to it, the
/// third tombstoned.
async fn write_entities(shed: &Shed, token: &str) {
    let (http, url) = (reqwest::Client::new(), shed.url("/mcp"));
    let mut runs = Vec::new();
    for who in ["Ada", "Grace", "Edsger"] {
        runs.push(written_eid(&succeeded(
            log_run(&http, &url, token, who).await.unwrap(),
        )));
    }
    let apply = async |bundle: Value| {
        succeeded(
            call(
                &http,
                &url,
                token,
                "graph_apply",
                json!({ "app": "demo/runs", "bundle": bundle }),
            )
            .await
            .unwrap(),
        )
    };
    apply(
        json!({ "entity": { "eid": runs[0], "alias": "first" }, "jog": { "miles": 7 }, "was": 1 }),
    )
    .await;
    apply(json!({ "entity": { "eid": "first" }, "jog": { "miles": 7.5 }, "was": 2 })).await;
    apply(json!({
        "entity": { "eid": "$c" },
        "doc": { "title": "Well run", "body": "Ada's fastest — ünïcode too" },
        "comment": { "target": runs[0] },
        "edges": [{ "rel": "about", "to": runs[0] }]
    }))
    .await;
    apply(json!({ "entity": { "eid": runs[2] }, "tombstone": {} })).await;
}

/// What `shed` answers to the same token: `commands`, the leaderboard, a
/// listing with refs and a full-text search.
async fn answers(shed: &Shed, token: &str) -> Vec<String> {
    let (http, url) = (reqwest::Client::new(), shed.url("/mcp"));
    let mut said = Vec::new();
    for (tool, arguments) in [
        ("commands", json!({})),
        ("command", json!({ "name": "leaderboard", "args": {} })),
        (
            "graph_query",
            json!({ "app": "demo/runs", "filter": ".comment!&.edges.about=first" }),
        ),
        (
            "graph_query",
            json!({ "app": "demo/runs", "filter": ".jog!&eid=first" }),
        ),
        (
            "graph_query",
            json!({ "app": "demo/runs", "filter": "q=fast&.doc!" }),
        ),
    ] {
        let answer = succeeded(call(&http, &url, token, tool, arguments).await.unwrap());
        // The two sheds listen on two ports.
        said.push(
            answer
                .to_string()
                .replace(&format!(":{}", shed.port), ":PORT"),
        );
    }
    said
}

/// The records no door makes in a few calls, written through the store.
async fn write_records(store: &Store) {
    use shed_store::oauth::{ClientRecord, CodeRecord, NewCode};
    use shed_store::revocable::NewToken;
    let now = jiff::Timestamp::now().as_second();
    let you = store.person("you").await.unwrap().unwrap().eid;
    let token = |hash: &str| NewToken {
        person: you.clone(),
        hash: hash.into(),
        name: Some(format!("token {hash}")),
        expires_at: Some(now + 3600),
    };
    store.add_token(token("named")).await.unwrap();
    store
        .record_refusal(shed_store::activity::NewRefusal {
            app: "demo/runs".into(),
            by: you.clone(),
            via: Some("agent:job-1".into()),
            through: shed_store::Through {
                door: "broker".into(),
                command: Some("log_run".into()),
                client: Some("job-1".into()),
            },
            sentence: "demo/runs.log_run is outside job job-1's scope".into(),
        })
        .await
        .unwrap();
    store
        .add_job(
            shed_store::secret_hash("job secret"),
            shed_store::JobTerms {
                person: you.clone(),
                allow: vec!["demo/runs".into()],
                read_only: vec![],
                created_at: now,
                expires_at: Some(now + 600),
            },
        )
        .await
        .unwrap();
    store
        .add_login_link(&you, "link", now + 600, now)
        .await
        .unwrap();
    // An approval waiting, an app whose agents' writes wait (another than
    // the run club, whose writes the test makes after the copy), the key.
    store
        .ask_approval(shed_store::approvals::NewApproval {
            person: you.clone(),
            app: "demo/runs".into(),
            command: "log_run".into(),
            args: r#"{"who":"Ada","miles":3}"#.into(),
            asker: "job:job-1".into(),
            via: Some("agent:job-1".into()),
            door: "broker".into(),
            client: Some("job-1".into()),
            created_at: now,
            expires_at: now + 3600,
        })
        .await
        .unwrap();
    store
        .set_agent_writes_need_approval("demo/asks", true, &you)
        .await
        .unwrap();
    store.approval_key(vec![7; 32]).await.unwrap();
    store
        .add_web_hop(&you, "demo", "hop", "handoff", "sign-in-1", now + 600)
        .await
        .unwrap();
    store
        .add_web_session(shed_store::web_sessions::NewWebSession {
            person: you.clone(),
            space: "demo".into(),
            hash: "session".into(),
            sign_in: "sign-in-1".into(),
            user_agent: Some("Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0".into()),
            at: now,
            expires_at: now + 3600,
        })
        .await
        .unwrap();
    store
        .add_passkey(shed_store::passkeys::NewPasskey {
            person: you.clone(),
            credential: "Y3JlZGVudGlhbA".into(),
            passkey: "{\"cred\":{}}".into(),
            name: "laptop".into(),
            created_at: now,
        })
        .await
        .unwrap();
    store
        .add_ceremony(
            shed_store::passkeys::NewCeremony {
                hash: "ceremony".into(),
                kind: shed_store::passkeys::CeremonyKind::SignIn,
                person: None,
                name: None,
                state: "{}".into(),
                expires_at: now + 300,
                address: Some("192.0.2.1".into()),
            },
            now,
            None,
        )
        .await
        .unwrap();
    let client = ClientRecord {
        id: "client-1".into(),
        name: "An MCP client".into(),
        redirect_uris: vec!["http://127.0.0.1:9/callback".into()],
    };
    store.register_client(client, now).await.unwrap();
    let code = CodeRecord {
        client: "client-1".into(),
        person: you.clone(),
        redirect_uri: "http://127.0.0.1:9/callback".into(),
        challenge: "challenge".into(),
        resource: "http://localhost/mcp".into(),
    };
    store
        .add_code(NewCode {
            hash: "code".into(),
            client: code.client.clone(),
            person: code.person.clone(),
            redirect_uri: code.redirect_uri.clone(),
            challenge: code.challenge.clone(),
            resource: code.resource.clone(),
            expires_at: now + 60,
        })
        .await
        .unwrap();
    store
        .open_grant("code", code, token("access"), "refresh", now)
        .await
        .unwrap();
    store
        .refresh_grant("refresh", "client-1", token("access-2"), "refresh-2", now)
        .await
        .unwrap();
    store
        .write_drafts(
            "demo",
            "runs",
            BTreeMap::from([
                ("index.html".to_string(), Some(b"<p>draft</p>".to_vec())),
                ("old.html".to_string(), None),
            ]),
        )
        .await
        .unwrap();
    store
        .add_view_key(
            shed_store::ViewKey {
                hash: "view",
                person: &you,
                space: "demo",
                slug: "runs",
            },
            now + 600,
            now,
        )
        .await
        .unwrap();
    store
        .record_listed_tools("agent:job-1", "fingerprint")
        .await
        .unwrap();
    let gone = store.add_person("gone", "Gone Away").await.unwrap();
    store.remove_person(&gone.eid, now).await.unwrap();
    // The app's life after its deploys (app_changes): trashed, then back.
    assert!(store.trash_app("demo", "runs", &you).await.unwrap());
    assert!(store.restore_app("demo", "runs", &you).await.unwrap());
}

// The acceptance test of `shed migrate`: a folder holding every kind of
// record copies whole, and a shed on the copy answers as the SQLite one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_holding_every_kind_of_record_is_copied_whole() {
    if shed_test_database::server().is_none() {
        eprintln!(
            "a_folder_holding_every_kind_of_record_is_copied_whole: needs a PostgreSQL server, skipped without SHED_TEST_DATABASE"
        );
        return;
    }
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let source = Shed::up_on(&data, None, &logs, &[]);
    let token = source.token();
    write_entities(&source, &token).await;
    let before = answers(&source, &token).await;
    for (read, holds) in [(1, "Grace"), (2, "Run by Ada"), (3, "7.5"), (4, "Well run")] {
        assert!(before[read].contains(holds), "{}", before[read]);
    }
    let (status, _) = source.stop(libc::SIGTERM);
    assert!(status.success());
    let store = Store::open(&data.join("shed.db")).await.unwrap();
    write_records(&store).await;
    store.close().await.unwrap();

    let sqlite = rusqlite::Connection::open(data.join("shed.db")).unwrap();
    for table in source_tables(&sqlite) {
        let rows: i64 = sqlite
            .query_row(
                &format!("SELECT COUNT(*) FROM {}", quoted(&table)),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            rows > 0,
            "the folder holds no row of {table}: write one in this test, so its copy is checked"
        );
    }

    let target = shed_test_database::fresh().unwrap();
    let (ok, printed, said) = migrate(&data, &target);
    assert!(ok, "{said}");
    assert!(!said.contains('\u{1b}'), "piped, no bar: {said:?}");
    assert!(printed.contains("copied "), "{printed}");
    let password = target
        .split('@')
        .next()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap();
    assert!(
        !printed.contains(password),
        "no password printed: {printed}"
    );

    // The same tables, every row the same, value for value.
    let db = connect(&target).await;
    let tables = target_tables(&db).await;
    assert_eq!(
        tables.keys().cloned().collect::<Vec<_>>(),
        source_tables(&sqlite),
        "the same tables"
    );
    for (table, columns) in &tables {
        let copied = postgres_rows(&db, table, columns).await;
        assert_eq!(copied, sqlite_rows(&sqlite, table, columns), "{table}");
        let count = copied.len().to_string();
        assert!(
            printed
                .lines()
                .any(|line| line.split_whitespace().take(2).eq([table.as_str(), &count])),
            "{table}'s count printed: {printed}"
        );
    }

    // A shed on the copy answers as the SQLite one did, to the same token,
    // and makes new rows past the copied ids.
    let (_served_dir, served_data) = data_folder();
    let served = Shed::up_on(&served_data, Some(&target), &logs, &[]);
    assert_eq!(answers(&served, &token).await, before);
    let http = reqwest::Client::new();
    let new = written_eid(&succeeded(
        log_run(&http, &served.url("/mcp"), &token, "Barbara")
            .await
            .unwrap(),
    ));
    let num: i64 = db
        .query_one("SELECT num FROM ec_entities WHERE eid = $1", &[&new])
        .await
        .unwrap()
        .get(0);
    assert_eq!(num, 5, "numbered on from the copied entities");
    drop(served);

    // Copying again into the copy is refused, and nothing is written.
    let rows_before = every_row(&target).await;
    let (ok, _, said) = migrate(&data, &target);
    assert!(!ok);
    assert!(
        said.contains("is not empty (its table") && said.contains("nothing was written"),
        "{said}"
    );
    assert_eq!(every_row(&target).await, rows_before);
}

// A database holding another program's tables is refused, and nothing of
// shed's is made in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_holding_another_program_s_tables_is_refused() {
    let Some(target) = shed_test_database::fresh() else {
        eprintln!(
            "a_database_holding_another_program_s_tables_is_refused: needs a PostgreSQL server, skipped without SHED_TEST_DATABASE"
        );
        return;
    };
    let db = connect(&target).await;
    db.batch_execute("CREATE TABLE invoices(id INTEGER); INSERT INTO invoices VALUES (1);")
        .await
        .unwrap();
    let (dir, data) = data_folder();
    let store = Store::open(&{
        std::fs::create_dir_all(&data).unwrap();
        data.join("shed.db")
    })
    .await
    .unwrap();
    store.add_person("ada", "Ada").await.unwrap();
    store.close().await.unwrap();
    let (ok, _, said) = migrate(&data, &target);
    assert!(!ok);
    assert!(
        said.contains("holds tables shed did not make (invoices)"),
        "{said}"
    );
    let tables: Vec<String> = db
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(tables, ["invoices"], "nothing written");
    drop(dir);
}

// Sentences before anything is copied, on every backend: a URL that does
// not parse, a server not reached, a folder without a database, a database
// of another schema version, and --database beside --to.
#[tokio::test]
async fn bad_input_answers_one_sentence() {
    let (_dir, data) = data_folder();
    let (ok, _, said) = migrate(&data, "postgres://u:p@127.0.0.1:1/db");
    assert!(!ok);
    assert!(said.contains("there is no shed database at"), "{said}");

    std::fs::create_dir_all(&data).unwrap();
    let store = Store::open(&data.join("shed.db")).await.unwrap();
    store.close().await.unwrap();
    for (url, sentence) in [
        ("mysql://u@h/db", "is not a database URL"),
        (
            "postgres://u:secret@127.0.0.1:1/db",
            "could not reach PostgreSQL at 127.0.0.1:1",
        ),
    ] {
        let (ok, printed, said) = migrate(&data, url);
        assert!(!ok && printed.is_empty(), "{printed}");
        assert!(said.contains(sentence), "{url}: {said}");
        assert!(
            !said.contains("secret") && !said.contains("panicked"),
            "{said}"
        );
        assert_eq!(said.trim().lines().count(), 1, "one sentence: {said}");
    }

    let (ok, _, said) = shed_on(
        &data,
        Some("postgres://u@127.0.0.1:1/other"),
        &["migrate", "--to", "postgres://u@127.0.0.1:1/db"],
    );
    assert!(!ok);
    assert!(said.contains("leave out --database"));

    let sqlite = rusqlite::Connection::open(data.join("shed.db")).unwrap();
    sqlite
        .execute(
            "DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)",
            [],
        )
        .unwrap();
    drop(sqlite);
    let (ok, _, said) = migrate(&data, "postgres://u@127.0.0.1:1/db");
    assert!(!ok);
    assert!(
        said.contains("is at schema version") && said.contains("and this shed's is"),
        "{said}"
    );
}
