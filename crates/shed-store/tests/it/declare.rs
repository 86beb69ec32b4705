//! Declaring vocabularies: create, extend, and never re-type a column that holds values.

use crate::common;

use common::fixture;
use serde_json::json;
use shed_store::{ColumnType, Vocabulary};

fn vocab(columns: &[(&str, ColumnType)]) -> Vocabulary {
    Vocabulary {
        components: vec![(
            "jog".into(),
            columns.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
        )],
    }
}

#[tokio::test]
async fn declare_extends_and_keeps_types_that_hold_values() {
    let f = fixture().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "miles": 5 } }),
    )
    .await;
    // a new column is added, data kept
    f.store
        .declare(
            "jeff/runs",
            &vocab(&[
                ("who", ColumnType::Text),
                ("miles", ColumnType::Number),
                ("pace", ColumnType::Number),
            ]),
        )
        .await
        .unwrap();
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "pace": 7.5 } }),
    )
    .await;
    assert_eq!(f.rows("jeff/runs", ".jog.pace>7").await.len(), 1);
    assert_eq!(f.rows("jeff/runs", ".jog.miles=5").await.len(), 1);
    // a column holding values keeps its type
    let err = f
        .store
        .declare("jeff/runs", &vocab(&[("miles", ColumnType::Text)]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "jog.miles holds numbers — add a new column rather than change its type"
    );
    // an empty column may change type
    f.store
        .declare("jeff/runs", &vocab(&[("at", ColumnType::Text)]))
        .await
        .unwrap();
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "at": "whenever" } }),
    )
    .await;
    assert_eq!(f.rows("jeff/runs", ".jog.at=whenever").await.len(), 1);
    // a refused declare changes nothing
    let err = f
        .store
        .declare(
            "jeff/runs",
            &Vocabulary {
                components: vec![
                    ("extra".into(), vec![]),
                    ("jog".into(), vec![("miles".into(), ColumnType::Bool)]),
                ],
            },
        )
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("jog.miles holds numbers"));
    assert_eq!(
        f.query_error("jeff/runs", ".extra").await,
        "no component extra in jeff/runs"
    );
}

#[tokio::test]
async fn declare_refuses_bad_names_with_sentences() {
    let f = fixture().await;
    let one = |name: &str, cols: Vec<(String, ColumnType)>| Vocabulary {
        components: vec![(name.to_string(), cols)],
    };
    let err = |v: Vocabulary| {
        let s = f.store.clone();
        async move { s.declare("jeff/runs", &v).await.unwrap_err().to_string() }
    };
    assert!(
        err(one("Jog", vec![]))
            .await
            .starts_with("Jog is not a component name")
    );
    assert!(
        err(one("entity", vec![]))
            .await
            .starts_with("entity is a word the store uses itself")
    );
    assert!(
        err(one("doc", vec![("title".into(), ColumnType::Number)]))
            .await
            .starts_with("doc is the platform's own component")
    );
    assert!(
        err(one("jog", vec![("Miles".into(), ColumnType::Number)]))
            .await
            .starts_with("jog.Miles is not a column name")
    );
    for key in shed_words::STORE_COLUMNS {
        assert_eq!(
            err(one("jog", vec![(key.into(), ColumnType::Text)])).await,
            format!("jog.{key} is kept by the store on every row — name the column otherwise")
        );
    }
    assert!(
        f.store
            .declare("Jeff", &Vocabulary::default())
            .await
            .unwrap_err()
            .to_string()
            .starts_with("Jeff is not an app name")
    );
    // declaring the platform's own components as they are is fine
    f.store
        .declare(
            "jeff/runs",
            &one("doc", vec![("title".into(), ColumnType::Text)]),
        )
        .await
        .unwrap();
}

/// A catalog changed by another server (a second store on the same
/// database) is the one the next write of this store is checked and
/// written with: a column added, a component added and a column retyped,
/// each written by the very next apply. PostgreSQL only: SQLite's file has
/// one server.
#[tokio::test]
async fn a_declare_on_another_server_is_seen_by_the_next_write() {
    let f = fixture().await;
    let Some(url) = f.database_url() else {
        eprintln!("a test of two stores on one database, skipped on SQLite");
        return;
    };
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "miles": 3 } }),
    )
    .await;
    let other = shed_store::Store::connect(&url).await.unwrap();
    let mut club = common::run_club();
    club.components[0]
        .1
        .push(("pace".into(), ColumnType::Number));
    club.components[1].1[1].1 = ColumnType::Number;
    club.components
        .push(("shoe".into(), vec![("brand".into(), ColumnType::Text)]));
    other.declare("jeff/runs", &club).await.unwrap();
    let a = f
        .apply(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "miles": 4, "pace": 5.5 }, "gear": { "link": 7 }, "shoe": { "brand": "Asics" } }),
        )
        .await;
    let row = &f
        .rows(
            "jeff/runs",
            &format!("eid={}&.jog!&.gear!&.shoe!", a.entities[0]),
        )
        .await[0];
    assert_eq!(row["jog"], json!({ "miles": 4, "pace": 5.5 }));
    assert_eq!(row["gear"]["link"], 7);
    assert_eq!(row["shoe"]["brand"], "Asics");
}
