//! Restoring a backup (SQLite only): a backup of apps with data — a column
//! re-typed among them — restores whole, and one holding a table, index,
//! view or trigger shed does not make, or an app table unlike the one its
//! catalog describes, is refused with a sentence naming it, nothing left
//! where the database would have gone.

use std::path::{Path, PathBuf};

use serde_json::json;
use shed_store::{ColumnType, Store, Vocabulary};

use crate::common::{on_sqlite, run_club};

/// `jeff/runs` as the run club with a run, and `jeff/notes`, whose column
/// `note.mark` was declared a number and re-typed to text while empty (so
/// its table holds it last): backed up to `<dir>/clean.db` once the store
/// is closed. Answers the backup and `jeff/runs`'s app id.
async fn clean_backup(dir: &Path) -> (PathBuf, i64) {
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
    let app: i64 = rusqlite::Connection::open(&database)
        .unwrap()
        .query_row("SELECT id FROM ec_apps WHERE name = 'jeff/runs'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let clean = dir.join("clean.db");
    shed_store::backup(&database, &clean, |_| {}).unwrap();
    (clean, app)
}

#[tokio::test]
async fn a_backup_holding_anything_shed_does_not_make_is_refused_naming_it() {
    if !on_sqlite("a_backup_holding_anything_shed_does_not_make_is_refused_naming_it") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (clean, app) = clean_backup(dir.path()).await;
    let jog = format!("ec_{app}_jog");
    let doc = format!("ec_{app}_doc");
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
            format!("CREATE TABLE \"ec_{app}_ghost\"(id INTEGER PRIMARY KEY)"),
            format!("a table shed does not make (ec_{app}_ghost)"),
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
    for (i, (sql, named)) in tampered.iter().enumerate() {
        let file = dir.path().join(format!("tampered-{i}.db"));
        std::fs::copy(&clean, &file).unwrap();
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let into = dir.path().join(format!("restored-{i}.db"));
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
    }

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

/// The app tables are made in the very words the sheds before made them:
/// a restore compares a backup's `sqlite_master` with what this shed makes,
/// text for text, so other words would refuse every backup an older shed
/// wrote.
#[tokio::test]
async fn app_tables_are_made_in_the_words_older_sheds_wrote_them() {
    if !on_sqlite("app_tables_are_made_in_the_words_older_sheds_wrote_them") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (clean, _) = clean_backup(dir.path()).await;
    let conn = rusqlite::Connection::open(&clean).unwrap();
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
}
