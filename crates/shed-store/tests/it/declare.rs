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
