//! Restoring a backup (SQLite only): a backup of apps with data — a column
//! re-typed among them — restores whole, and one holding a table, index,
//! view or trigger shed does not make, or a table unlike the one its
//! catalog describes (a shape table; or, in a backup an older shed made,
//! an app's table of its own), is refused with a sentence naming it,
//! nothing left where the database would have gone.

use std::path::{Path, PathBuf};

use serde_json::json;
use shed_store::{ColumnType, Store, Vocabulary};

use crate::common::{on_sqlite, run_club};

/// `jeff/runs` as the run club with a run, and `jeff/notes`, whose column
/// `note.mark` was declared a number and re-typed to text while empty (so
/// its table holds it last): backed up to `<dir>/clean.db` once the store
/// is closed. Answers the backup and the shape table of `jeff/runs`'s
/// `jog`.
async fn clean_backup(dir: &Path) -> (PathBuf, String) {
    let database = dir.join("shed.db");
    let store = Store::open(&database).await.unwrap();
    let ada = store.add_person("ada", "Ada").await.unwrap();
    store.declare("jeff/runs", &run_club()).await.unwrap();
    let actor = shed_store::Actor {
        person: ada.eid.clone(),
        via: None,
        through: None,
    };
    store
        .apply(
            "jeff/runs",
            &actor,
            json!({ "entity": { "eid": "$run" }, "jog": { "who": "Ada", "miles": 5 },
                    "doc": { "title": "Tuesday" } }),
            None,
        )
        .await
        .unwrap();
    let notes = |mark| Vocabulary {
        components: vec![(
            "note".into(),
            vec![("mark".into(), mark), ("said".into(), ColumnType::Text)],
        )],
    };
    store
        .declare("jeff/notes", &notes(ColumnType::Number))
        .await
        .unwrap();
    store
        .declare("jeff/notes", &notes(ColumnType::Text))
        .await
        .unwrap();
    store.close().await.unwrap();
    drop(store);
    let shape: String = rusqlite::Connection::open(&database)
        .unwrap()
        .query_row(
            "SELECT g.shape FROM ec_groups g JOIN ec_apps a ON a.id = g.app
             WHERE a.name = 'jeff/runs' AND g.component = 'jog'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let clean = dir.join("clean.db");
    shed_store::backup(&database, &clean, |_| {}).unwrap();
    (clean, format!("ec_rows_{shape}"))
}

/// A backup as the shed of schema version 16 made it, its apps in tables
/// of their own (`crate::upgrade::today`), at `<dir>/old.db`.
async fn old_backup(dir: &Path) -> PathBuf {
    let made = dir.join("made");
    std::fs::create_dir(&made).unwrap();
    crate::upgrade::make_today(&made, crate::upgrade::SMALL).await;
    let old = dir.join("old.db");
    shed_store::backup(&made.join("shed.db"), &old, |_| {}).unwrap();
    old
}

/// Restores each of `tampered` (SQL run on a copy of `clean`, and the
/// object the refusal names), checking each is refused naming it and
/// leaves nothing where it would have gone.
fn refused_naming(dir: &Path, clean: &Path, tampered: &[(String, String)]) {
    for (i, (sql, named)) in tampered.iter().enumerate() {
        let file = dir.join(format!("tampered-{i}.db"));
        std::fs::copy(clean, &file).unwrap();
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let into = dir.join(format!("restored-{i}.db"));
        let refused = shed_store::restore(&file, &into).unwrap_err().to_string();
        assert_eq!(
            refused,
            format!(
                "{} holds {named} — it was not restored; restore only files `shed backup` wrote",
                file.display()
            ),
            "{sql}"
        );
        assert!(!into.exists(), "{sql}: nothing is left where it would go");
        std::fs::remove_file(&file).unwrap();
    }
}

#[tokio::test]
async fn a_backup_holding_anything_shed_does_not_make_is_refused_naming_it() {
    if !on_sqlite("a_backup_holding_anything_shed_does_not_make_is_refused_naming_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (clean, jog) = clean_backup(dir.path()).await;
    let tampered: [(String, String); 8] = [
        (
            "CREATE TRIGGER tokens_spy AFTER DELETE ON tokens BEGIN SELECT 1; END".into(),
            "a trigger shed does not make (tokens_spy)".into(),
        ),
        (
            format!("CREATE TRIGGER jog_spy AFTER INSERT ON \"{jog}\" BEGIN SELECT 1; END"),
            "a trigger shed does not make (jog_spy)".into(),
        ),
        (
            "CREATE VIEW every_token AS SELECT * FROM tokens".into(),
            "a view shed does not make (every_token)".into(),
        ),
        (
            "CREATE TABLE stash(x)".into(),
            "a table shed does not make (stash)".into(),
        ),
        (
            "CREATE TABLE \"ec_1_ghost\"(id INTEGER PRIMARY KEY)".into(),
            "a table shed does not make (ec_1_ghost)".into(),
        ),
        (
            format!("CREATE INDEX \"{jog}.spare\" ON \"{jog}\"(id)"),
            format!("an index shed does not make ({jog}.spare)"),
        ),
        (
            format!("ALTER TABLE \"{jog}\" ADD COLUMN spare TEXT"),
            format!("a table {jog} unlike the one shed makes"),
        ),
        (
            format!("DROP INDEX \"{jog}.t0\""),
            format!("no index {jog}.t0, which shed makes"),
        ),
    ];
    refused_naming(dir.path(), &clean, &tampered);

    // Many at once: the first few named, the rest counted.
    let file = dir.path().join("tampered-many.db");
    std::fs::copy(&clean, &file).unwrap();
    let many: String = (0..8)
        .map(|i| format!("CREATE TABLE stash_{i}(x);"))
        .collect();
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(&many)
        .unwrap();
    let refused = shed_store::restore(&file, &dir.path().join("many.db"))
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("(stash_4) and 3 more — it was not restored"),
        "{refused}"
    );

    // The clean backup restores, and the store opened on it serves its data.
    let restored = dir.path().join("restored.db");
    shed_store::restore(&clean, &restored).unwrap();
    let store = Store::open(&restored).await.unwrap();
    let rows = store.query("jeff/runs", ".jog!&.doc?").await.unwrap().rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["jog"]["who"], "Ada");
    assert_eq!(rows[0]["doc"]["title"], "Tuesday");
    store.close().await.unwrap();
}

// A backup an older shed made, its apps in tables of their own, is checked
// as strictly: each app's tables must be what that shed made of its
// catalog (`jeff/runs` is app 1 there).
#[tokio::test]
async fn an_older_backup_holding_anything_that_shed_did_not_make_is_refused_naming_it() {
    if !on_sqlite("an_older_backup_holding_anything_that_shed_did_not_make_is_refused_naming_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let old = old_backup(dir.path()).await;
    let (jog, doc) = ("ec_1_jog", "ec_1_doc");
    let tampered: [(String, String); 5] = [
        (
            format!("CREATE TRIGGER jog_spy AFTER INSERT ON \"{jog}\" BEGIN SELECT 1; END"),
            "a trigger shed does not make (jog_spy)".into(),
        ),
        (
            "CREATE TABLE \"ec_1_ghost\"(id INTEGER PRIMARY KEY)".into(),
            "a table shed does not make (ec_1_ghost)".into(),
        ),
        (
            format!("CREATE INDEX \"{doc}.title\" ON \"{doc}\"(title)"),
            format!("an index shed does not make ({doc}.title)"),
        ),
        (
            format!("ALTER TABLE \"{jog}\" ADD COLUMN spare TEXT"),
            format!("a table {jog} unlike the one shed makes"),
        ),
        (
            format!("DROP INDEX \"{jog}.who\""),
            format!("no index {jog}.who, which shed makes"),
        ),
    ];
    refused_naming(dir.path(), &old, &tampered);
}

/// The tables of an app of its own a backup an older shed made holds are
/// expected in the very words those sheds made them: a restore compares a
/// backup's `sqlite_master` with what this shed expects, text for text, so
/// other words would refuse every backup an older shed wrote. (The words,
/// as the shed of schema version 16 wrote them, are pinned here; the store
/// `crate::upgrade::today` makes holds them, and its backup restores.)
#[tokio::test]
async fn app_tables_are_expected_in_the_words_older_sheds_wrote_them() {
    if !on_sqlite("app_tables_are_expected_in_the_words_older_sheds_wrote_them") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let old = old_backup(dir.path()).await;
    let conn = rusqlite::Connection::open(&old).unwrap();
    let notes: i64 = conn
        .query_row(
            "SELECT id FROM ec_apps WHERE name = 'jeff/notes'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let made: Vec<(String, String)> = conn
        .prepare(
            "SELECT name, sql FROM sqlite_master
             WHERE name LIKE ?1 ESCAPE '!' AND name NOT LIKE ?2 ESCAPE '!' AND sql IS NOT NULL
             ORDER BY name",
        )
        .unwrap()
        // The app's tables, not the ones FTS5 makes beside its own.
        .query_map(
            [format!("ec!_{notes}!_%"), format!("ec!_{notes}!_!_fts!_%")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let made: Vec<(&str, &str)> = made.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
    let table = |c: &str| format!("ec_{notes}_{c}");
    let (comment, doc, fts, note) = (table("comment"), table("doc"), table("_fts"), table("note"));
    let key = "(id INTEGER PRIMARY KEY REFERENCES ec_entities(id)";
    assert_eq!(
        made,
        [
            (fts.as_str(), format!("CREATE VIRTUAL TABLE \"{fts}\" USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')").as_str()),
            (comment.as_str(), format!("CREATE TABLE \"{comment}\"{key}, \"target\" TEXT)").as_str()),
            (&format!("{comment}.target"), &format!("CREATE INDEX \"{comment}.target\" ON \"{comment}\"(\"target\")")),
            (doc.as_str(), format!("CREATE TABLE \"{doc}\"{key}, \"title\" TEXT, \"body\" TEXT)").as_str()),
            (note.as_str(), format!("CREATE TABLE \"{note}\"{key}, \"said\" TEXT, \"mark\" TEXT)").as_str()),
            (&format!("{note}.mark"), &format!("CREATE INDEX \"{note}.mark\" ON \"{note}\"(\"mark\")")),
            (&format!("{note}.said"), &format!("CREATE INDEX \"{note}.said\" ON \"{note}\"(\"said\")")),
        ]
    );
    shed_store::restore(&old, &dir.path().join("restored.db")).unwrap();
}
