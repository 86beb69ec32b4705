//! The reads the web door relies on, for the plan tests of both backends
//! (`sqlite/query.rs`, `postgres/query.rs`): two apps of one vocabulary in
//! the shared shape tables, and the lines whose plans must stay walks of
//! an index inside one app — a filter, a range, `order=` both ways, a text
//! equal, a ref, `q=` words, and a keyset page (`after=`).

use serde_json::json;

use crate::{Actor, ColumnType, Store, Vocabulary};

/// The app whose reads are planned; `jeff/other` holds as many rows.
pub(crate) const APP: &str = "jeff/runs";

/// A line to plan, whether its order must come from an index (no sort),
/// and the slot (of `jog`'s home group) whose index must serve it (a
/// filter matching half the rows may rather walk the key, newest first).
pub(crate) struct Line {
    pub text: String,
    pub ordered: bool,
    pub slot: Option<&'static str>,
}

/// Fills both apps (30 runs each, a doc each, every third run pointing at
/// the first) and answers the lines to plan in [`APP`].
pub(crate) async fn fill(store: &Store) -> Vec<Line> {
    let vocab = Vocabulary {
        components: vec![(
            "jog".into(),
            vec![
                ("who".into(), ColumnType::Text),
                ("miles".into(), ColumnType::Number),
                ("at".into(), ColumnType::Time),
                ("done".into(), ColumnType::Bool),
                ("course".into(), ColumnType::Ref),
            ],
        )],
    };
    let actor = Actor {
        person: "p-ada".into(),
        via: None,
        through: None,
    };
    let mut first = String::new();
    for app in ["jeff/other", APP] {
        store.declare(app, &vocab).await.unwrap();
        let runs: Vec<_> = (0..30)
            .map(|i| {
                json!({ "entity": { "eid": "$r" },
                    "jog": { "who": format!("runner {}", i % 7), "miles": i, "at": "2026-09-01", "done": i % 2 == 0 },
                    "doc": { "title": format!("run {i}"), "body": "a morning loop by the river" } })
            })
            .map(|b| serde_json::Value::Array(vec![b]))
            .collect();
        for (i, bundle) in runs.into_iter().enumerate() {
            let mut bundle = bundle;
            if i % 3 == 2 {
                bundle[0]["jog"]["course"] = json!(first.clone());
            }
            let applied = store.apply(app, &actor, bundle, None).await.unwrap();
            if i == 0 {
                first = applied.entities[0].clone();
            }
        }
    }
    let page = store
        .query(APP, ".jog!&order=-.jog.miles&limit=5")
        .await
        .unwrap();
    let after = page.next.unwrap();
    [
        (".jog!".to_string(), true, None),
        (".jog!&.jog.miles>=5".into(), false, None),
        (".jog!&order=.jog.miles".into(), true, Some("n0")),
        (".jog!&order=-.jog.miles".into(), true, Some("n0")),
        (
            format!(".jog!&order=-.jog.miles&after={after}"),
            true,
            Some("n0"),
        ),
        (".jog!&order=.jog.at".into(), true, Some("d0")),
        (".jog!&.jog.who=runner%203".into(), false, Some("t0")),
        (".jog!&.jog.done=true".into(), false, None),
        (format!(".jog!&.jog.course={first}"), false, Some("r0")),
        (".doc!&q=morn".into(), false, None),
        (".jog!&.doc?&q=river loop".into(), false, None),
    ]
    .into_iter()
    .map(|(text, ordered, slot)| Line {
        text,
        ordered,
        slot,
    })
    .collect()
}
