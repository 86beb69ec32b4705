//! The shared layout (`docs/decisions/hosted-store-layout.md`): a column
//! declared after the component's rows were written goes to a free slot
//! of its group or to a new group, no row moving, and the component reads
//! and writes as one; a declare of a new app of shapes in use makes no
//! table. On SQLite, or on the PostgreSQL server `SHED_TEST_DATABASE` names.

use serde_json::json;
use shed_store::{Actor, ColumnType, Vocabulary};

use crate::common::{eids, open_store};

fn jog(columns: &[(&str, ColumnType)]) -> Vocabulary {
    Vocabulary {
        components: vec![(
            "jog".into(),
            columns.iter().map(|(c, t)| (c.to_string(), *t)).collect(),
        )],
    }
}

/// How many tables and indexes the store of `dir` has.
async fn relations(dir: &std::path::Path) -> i64 {
    count(
        dir,
        "SELECT COUNT(*) FROM sqlite_schema WHERE type IN ('table', 'index')",
        "SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema()",
    )
    .await
}

/// The one number the store of `dir` answers to `sqlite` (SQLite) or
/// `postgres` (PostgreSQL).
async fn count(dir: &std::path::Path, sqlite: &str, postgres: &str) -> i64 {
    let Some(url) = shed_test_database::for_folder(dir) else {
        let conn = rusqlite::Connection::open(dir.join("shed.db")).unwrap();
        return conn.query_row(sqlite, [], |r| r.get(0)).unwrap();
    };
    crate::common::server_client(&url)
        .await
        .query_one(postgres, &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn columns_declared_later_take_new_groups_and_read_as_one_component() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let actor = Actor {
        person: "p-ada".into(),
        via: None,
        through: None,
    };
    let app = "jeff/runs";
    let apply = |body: serde_json::Value| {
        let (store, actor) = (&store, &actor);
        async move { store.apply(app, actor, body, None).await.unwrap().entities[0].clone() }
    };
    let rows = |line: &'static str| {
        let store = &store;
        async move { store.query(app, line).await.unwrap().rows }
    };
    store
        .declare(app, &jog(&[("miles", ColumnType::Number)]))
        .await
        .unwrap();
    let a = apply(json!({ "entity": { "eid": "$a" }, "jog": { "miles": 5 } })).await;
    // `miles` fills its group's one number slot: the two new columns go to
    // a group of their own.
    let more = jog(&[
        ("miles", ColumnType::Number),
        ("pace", ColumnType::Number),
        ("who", ColumnType::Text),
    ]);
    store.declare(app, &more).await.unwrap();
    apply(json!({ "entity": { "eid": a }, "jog": { "pace": 7 } })).await;
    let b =
        apply(json!({ "entity": { "eid": "$b" }, "jog": { "miles": 3, "pace": 9, "who": "bo" } }))
            .await;
    // Worn through its home group even when only a later group is written.
    let c = apply(json!({ "entity": { "eid": "$c" }, "jog": { "pace": 1 } })).await;
    let all = rows(".jog!").await;
    assert_eq!(eids(&all), [c.clone(), b.clone(), a.clone()]);
    assert_eq!(all[1]["jog"], json!({ "miles": 3, "pace": 9, "who": "bo" }));
    assert_eq!(all[2]["jog"], json!({ "miles": 5, "pace": 7 }));
    assert_eq!(all[0]["jog"], json!({ "pace": 1 }));
    assert_eq!(eids(&rows(".jog!&.jog.pace>8").await), [b.as_str()]);
    assert_eq!(eids(&rows(".jog!&.jog.who=bo").await), [b.as_str()]);
    assert_eq!(
        eids(&rows(".jog!&order=.jog.pace").await),
        [c.clone(), a.clone(), b.clone()]
    );
    assert_eq!(
        eids(&rows(".jog&.jog.miles<5&order=-.jog.pace").await),
        [b.as_str()]
    );
    // A line whose first component is optional still drives from the
    // required one's rows, every join kept.
    apply(json!({ "entity": { "eid": a }, "doc": { "title": "first" } })).await;
    let both = rows(".doc?&.jog!&order=.jog.pace").await;
    assert_eq!(eids(&both), [c.clone(), a.clone(), b.clone()]);
    assert_eq!(both[1]["doc"], json!({ "title": "first" }));
    assert_eq!(both[1]["jog"], json!({ "miles": 5, "pace": 7 }));
    assert!(both[0].get("doc").is_none());
    // Removing the component removes its rows in every group.
    apply(json!({ "entity": { "eid": b }, "jog": null })).await;
    assert_eq!(eids(&rows(".jog!").await), [c.clone(), a.clone()]);
    assert!(rows(".jog.pace>8").await.is_empty());
    let worn = apply(json!({ "entity": { "eid": b }, "jog": { "miles": 1 } })).await;
    assert_eq!(worn, b);
    let again = rows(".jog!&.jog.miles=1").await;
    assert_eq!(again[0]["jog"], json!({ "miles": 1 }), "nothing of before");

    // A column retyped while it holds nothing takes a new slot.
    let retyped = jog(&[
        ("miles", ColumnType::Number),
        ("pace", ColumnType::Number),
        ("who", ColumnType::Text),
        ("note", ColumnType::Text),
    ]);
    store.declare(app, &retyped).await.unwrap();
    let note = jog(&[("note", ColumnType::Bool)]);
    store.declare(app, &note).await.unwrap();
    apply(json!({ "entity": { "eid": a }, "jog": { "note": true } })).await;
    assert_eq!(eids(&rows(".jog!&.jog.note=true").await), [a.as_str()]);
    let refused = store
        .declare(app, &jog(&[("note", ColumnType::Text)]))
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "jog.note holds true/false values — add a new column rather than change its type"
    );
}

#[tokio::test]
async fn a_declare_of_a_new_app_of_shapes_in_use_makes_no_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let vocab = jog(&[("miles", ColumnType::Number), ("who", ColumnType::Text)]);
    store.declare("jeff/first", &vocab).await.unwrap();
    let made = relations(dir.path()).await;
    for i in 0..5 {
        store
            .declare(&format!("jeff/app{i}"), &vocab)
            .await
            .unwrap();
    }
    assert_eq!(relations(dir.path()).await, made);
}

// Two servers deploying apps of a shape no app has used yet, at once: one
// makes its table, the other waits on the shape's catalog row and finds it
// made — no deploy fails. (On SQLite the one writer takes them in turn.)
#[tokio::test]
async fn servers_making_the_same_new_shape_at_once_both_deploy() {
    let dir = tempfile::tempdir().unwrap();
    let first = open_store(dir.path()).await;
    let second = open_store(dir.path()).await;
    let vocab = jog(&[
        ("a", ColumnType::Number),
        ("b", ColumnType::Number),
        ("c", ColumnType::Number),
        ("d", ColumnType::Bool),
        ("e", ColumnType::Time),
    ]);
    for round in 0..4 {
        let mut wide = vocab.clone();
        // A shape of its own each round: `round + 5` numbers.
        for i in 0..=round {
            wide.components[0]
                .1
                .push((format!("x{i}"), ColumnType::Number));
        }
        let (a, b) = (format!("jeff/one{round}"), format!("jeff/two{round}"));
        let (one, two) = tokio::join!(first.declare(&a, &wide), second.declare(&b, &wide));
        one.unwrap();
        two.unwrap();
    }
}

// The full text is one table for every app, and a search reads only its
// app's words: a word another app holds is not found. On SQLite, whose
// words carry their app's id, they are still read as FTS5 reads words: a
// decomposed accent folds away, a Devanagari word is found whole.
#[tokio::test]
async fn words_are_searched_within_their_app() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let actor = Actor {
        person: "p-ada".into(),
        via: None,
        through: None,
    };
    for (app, title) in [
        ("jeff/a", "hello river e\u{301}cole हिन्दी"),
        ("jeff/b", "hello lake"),
    ] {
        let doc = json!({ "entity": { "eid": "$d" }, "doc": { "title": title } });
        store.apply(app, &actor, doc, None).await.unwrap();
    }
    let found = |app: &'static str, words: &'static str| {
        let store = &store;
        async move {
            let line = format!(".doc!&q={words}");
            store.query(app, &line).await.unwrap().rows.len()
        }
    };
    assert_eq!(found("jeff/a", "hello").await, 1);
    assert_eq!(found("jeff/b", "hello").await, 1);
    assert_eq!(found("jeff/b", "river").await, 0);
    assert_eq!(found("jeff/a", "lake").await, 0);
    assert_eq!(found("jeff/a", "riv").await, 1);
    // (PostgreSQL's `words` keep their own semantics, which differ here.)
    if shed_test_database::for_folder(dir.path()).is_none() {
        assert_eq!(found("jeff/a", "हिन्दी").await, 1);
        assert_eq!(found("jeff/a", "ecole").await, 1);
        assert_eq!(found("jeff/a", "école").await, 1);
    }
}

/// A vocabulary of one component `c` with these many columns of each kind
/// (text, ref, number, bool, time).
fn of_counts(name: &str, counts: [usize; 5]) -> (String, Vec<(String, ColumnType)>) {
    let kinds = [
        ("t", ColumnType::Text),
        ("r", ColumnType::Ref),
        ("n", ColumnType::Number),
        ("b", ColumnType::Bool),
        ("d", ColumnType::Time),
    ];
    let columns = kinds
        .iter()
        .zip(counts)
        .flat_map(|((k, ty), n)| (0..n).map(move |i| (format!("{k}{i}"), *ty)))
        .collect();
    (name.to_string(), columns)
}

/// How many shape tables the store of `dir` has made.
async fn shape_tables(dir: &std::path::Path) -> i64 {
    count(
        dir,
        "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name LIKE 'ec\\_rows\\_%' ESCAPE '\\'",
        "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'ec\\_rows\\_%'",
    )
    .await
}

/// Every combination of classes 0, 1, 2, 4 of the five kinds (text, ref,
/// number, bool, time), smallest first: more than MAX_SHAPES of them.
fn shapes_by_size() -> Vec<[usize; 5]> {
    let class = [0, 1, 2, 4];
    let mut shapes: Vec<[usize; 5]> = (1..1024usize)
        .map(|i| [0, 1, 2, 3, 4].map(|k| class[(i >> (2 * k)) & 3]))
        .collect();
    shapes.sort_by_key(|c| c.iter().sum::<usize>());
    shapes
}

// Two servers each deploying a new shape into a store one shape short of
// MAX_SHAPES, at once: they count the shapes made in turn, so one makes
// its table and the other's goes to shapes made — both deploy, and the
// store holds MAX_SHAPES tables. (On SQLite the one writer takes them in
// turn.)
#[tokio::test]
async fn servers_making_new_shapes_at_the_bound_at_once_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let first = open_store(dir.path()).await;
    let second = open_store(dir.path()).await;
    let mut shapes = shapes_by_size().into_iter();
    let mut n = 0;
    loop {
        let short = shed_store::MAX_SHAPES as i64 - 1 - shape_tables(dir.path()).await;
        if short <= 0 {
            break;
        }
        let components = shapes
            .by_ref()
            .take(short.min(40) as usize)
            .enumerate()
            .map(|(i, counts)| of_counts(&format!("c{i}"), counts))
            .collect();
        let vocab = Vocabulary { components };
        first
            .declare(&format!("jeff/fill{n}"), &vocab)
            .await
            .unwrap();
        n += 1;
    }
    assert_eq!(
        shape_tables(dir.path()).await,
        shed_store::MAX_SHAPES as i64 - 1
    );
    let one = Vocabulary {
        components: vec![of_counts("jog", [8, 0, 8, 0, 0])],
    };
    let two = Vocabulary {
        components: vec![of_counts("jog", [8, 0, 0, 0, 8])],
    };
    let (a, b) = tokio::join!(
        first.declare("jeff/one", &one),
        second.declare("jeff/two", &two)
    );
    a.unwrap();
    b.unwrap();
    assert_eq!(
        shape_tables(dir.path()).await,
        shed_store::MAX_SHAPES as i64
    );
}

// A store holding MAX_SHAPES shape tables makes no more: apps declaring
// ever other shapes (each component a shape of its own) fill it, then a
// component of a shape never made goes to groups of shapes made — and
// deploys, writes, reads, filters and orders as any other.
#[tokio::test]
async fn a_store_at_its_shapes_bound_places_a_new_shape_in_shapes_made() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let shapes = shapes_by_size();
    let over = shed_store::MAX_SHAPES + 20;
    assert!(shapes.len() > over);
    for (n, chunk) in shapes[..over].chunks(40).enumerate() {
        let vocab = Vocabulary {
            components: chunk
                .iter()
                .enumerate()
                .map(|(i, counts)| of_counts(&format!("c{i}"), *counts))
                .collect(),
        };
        store
            .declare(&format!("jeff/fill{n}"), &vocab)
            .await
            .unwrap();
    }
    assert_eq!(
        shape_tables(dir.path()).await,
        shed_store::MAX_SHAPES as i64
    );
    let made = relations(dir.path()).await;

    // Eight texts and eight numbers: no shape made holds them all (the
    // widest made holds four of a kind), so they go to several groups.
    let (_, mut columns) = of_counts("jog", [8, 0, 8, 1, 0]);
    columns.push(("who".into(), ColumnType::Text));
    let vocab = Vocabulary {
        components: vec![("jog".into(), columns)],
    };
    let app = "jeff/runs";
    store.declare(app, &vocab).await.unwrap();
    assert_eq!(relations(dir.path()).await, made, "no table made");
    let actor = Actor {
        person: "p-ada".into(),
        via: None,
        through: None,
    };
    let mut eids_written = Vec::new();
    for i in 0..3 {
        let body = json!({ "entity": { "eid": "$a" }, "jog": {
            "t0": format!("first {i}"), "t7": format!("last {i}"), "n0": i, "n7": 10 - i,
            "b0": i % 2 == 0, "who": format!("runner {i}")
        } });
        let written = store.apply(app, &actor, body, None).await.unwrap();
        eids_written.push(written.entities[0].clone());
    }
    let rows = |line: &'static str| {
        let store = &store;
        async move { store.query(app, line).await.unwrap().rows }
    };
    let all = rows(".jog!").await;
    assert_eq!(all.len(), 3);
    assert_eq!(all[0]["jog"]["t7"], json!("last 2"));
    assert_eq!(all[0]["jog"]["n7"], json!(8));
    assert_eq!(all[0]["jog"]["who"], json!("runner 2"));
    assert_eq!(
        eids(&rows(".jog!&.jog.who=runner 1").await),
        [eids_written[1].as_str()]
    );
    assert_eq!(
        eids(&rows(".jog!&.jog.n7>8").await),
        [eids_written[1].as_str(), eids_written[0].as_str()]
    );
    assert_eq!(
        eids(&rows(".jog!&order=.jog.n7").await),
        [
            eids_written[2].as_str(),
            eids_written[1].as_str(),
            eids_written[0].as_str()
        ]
    );
    assert_eq!(
        eids(&rows(".jog!&.jog.b0=true&order=-.jog.n0").await),
        [eids_written[2].as_str(), eids_written[0].as_str()]
    );
    // A later write of one column of a later group, then a column added.
    let update = json!({ "entity": { "eid": eids_written[0] }, "jog": { "t7": "changed" } });
    store.apply(app, &actor, update, None).await.unwrap();
    assert_eq!(
        eids(&rows(".jog.t7=changed").await),
        [eids_written[0].as_str()]
    );
    let mut more = vocab.clone();
    more.components[0]
        .1
        .extend((0..8).map(|i| (format!("d{i}"), ColumnType::Time)));
    store.declare(app, &more).await.unwrap();
    assert_eq!(relations(dir.path()).await, made, "no table made");
    let at =
        json!({ "entity": { "eid": eids_written[1] }, "jog": { "d7": "2026-01-02T03:04:05Z" } });
    store.apply(app, &actor, at, None).await.unwrap();
    assert_eq!(
        eids(&rows(".jog.d7>2026-01-01T00:00:00Z").await),
        [eids_written[1].as_str()]
    );
}

// A component of more than MAX_COLUMNS_PER_COMPONENT columns, or a
// vocabulary of more than MAX_COMPONENTS_PER_APP components, is refused
// with a sentence, and nothing is written.
#[tokio::test]
async fn a_declare_past_the_columns_or_components_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    store
        .declare("jeff/first", &jog(&[("miles", ColumnType::Number)]))
        .await
        .unwrap();
    let made = relations(dir.path()).await;
    let too_wide = Vocabulary {
        components: vec![of_counts("jog", [70, 0, 0, 0, 0])],
    };
    let refused = store.declare("jeff/runs", &too_wide).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "jog has 70 columns; a component may have at most 64 — split it into two components"
    );
    let too_many = Vocabulary {
        components: (0..65)
            .map(|i| of_counts(&format!("c{i}"), [1, 0, 0, 0, 0]))
            .collect(),
    };
    let refused = store.declare("jeff/runs", &too_many).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "jeff/runs declares 65 components; an app may have at most 64 — split it into two apps"
    );
    assert_eq!(relations(dir.path()).await, made, "nothing made");
    assert!(
        store.query("jeff/runs", ".jog").await.is_err(),
        "no component jog"
    );
    assert!(
        store.query("jeff/runs", ".c0").await.is_err(),
        "no component c0"
    );
}

#[tokio::test]
async fn what_earlier_declares_kept_counts_toward_the_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let texts = |from: usize, to: usize| -> Vec<(String, ColumnType)> {
        (from..to)
            .map(|i| (format!("c{i}"), ColumnType::Text))
            .collect()
    };
    let first = Vocabulary {
        components: vec![("jog".into(), texts(0, 40))],
    };
    store.declare("jeff/runs", &first).await.unwrap();
    let wider = Vocabulary {
        components: vec![("jog".into(), texts(40, 70))],
    };
    let refused = store.declare("jeff/runs", &wider).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "jog would have 70 columns, 40 of them kept from earlier deploys; a component may have at most 64 — split it into two components"
    );
    assert!(
        store.query("jeff/runs", ".jog.c40?").await.is_err(),
        "no column c40"
    );
    let named = |from: usize, to: usize| Vocabulary {
        components: (from..to)
            .map(|i| (format!("k{i}"), vec![("v".to_string(), ColumnType::Number)]))
            .collect(),
    };
    store.declare("jeff/many", &named(0, 40)).await.unwrap();
    let refused = store
        .declare("jeff/many", &named(40, 70))
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "jeff/many would have 70 components, 40 of them kept from earlier deploys; an app may have at most 64 — split it into two apps"
    );
    assert!(store.query("jeff/many", ".k40").await.is_err(), "no k40");
    store.declare("jeff/many", &named(40, 64)).await.unwrap();
}

// SQLite's full text is an FTS5 index of segments, one more a write
// transaction, merged by FTS5 a little at each write; a search reads every
// segment. Once writes pause the store merges what FTS5 left, so after a
// run of single writes (one transaction each, as a hosted store takes
// them) a search reads a few segments, not one a write's worth.
#[tokio::test]
async fn the_full_text_is_merged_once_writes_pause() {
    let dir = tempfile::tempdir().unwrap();
    if shed_test_database::for_folder(dir.path()).is_some() {
        return;
    }
    let store = open_store(dir.path()).await;
    let actor = Actor {
        person: "p-ada".into(),
        via: None,
        through: None,
    };
    for i in 0..300 {
        let doc = json!({ "entity": { "eid": "$d" }, "doc": { "title": format!("sunrise {i}") } });
        store
            .apply(&format!("jeff/w{i}"), &actor, doc, None)
            .await
            .unwrap();
    }
    let segments = || {
        count(
            dir.path(),
            "SELECT COUNT(DISTINCT segid) FROM ec_fts_idx",
            "",
        )
    };
    let written = segments().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut now = written;
    while now > 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        now = segments().await;
    }
    assert!(
        now <= 2,
        "{now} segments of full text once writes paused ({written} just after the writes)"
    );
    let found = store
        .query("jeff/w7", ".doc!&q=sunrise")
        .await
        .unwrap()
        .rows
        .len();
    assert_eq!(found, 1);
}

// An app that grows inside the shared tables has them analyzed as it
// grows, so the planner walks its rows rather than sorting all of them
// (`postgres/statistics.rs`): manual analyses, counted apart from
// autovacuum's.
#[tokio::test]
async fn on_postgres_an_app_s_tables_are_analyzed_as_it_grows() {
    let fixture = crate::common::fixture().await;
    let Some(url) = fixture.database_url() else {
        eprintln!("the analyses of a growing app's tables: PostgreSQL's, skipped on SQLite");
        return;
    };
    let db = crate::common::server_client(&url).await;
    let analyzed = async || -> i64 {
        db.query_one(
            "SELECT COALESCE(SUM(analyze_count), 0)::bigint FROM pg_stat_user_tables
             WHERE relname LIKE 'ec_rows_%'",
            &[],
        )
        .await
        .unwrap()
        .get(0)
    };
    // `ANALYZE_FIRST_ENTITIES`.
    let first = 100;
    let half = first / 2;
    let runs = |from: usize| {
        let bundles: Vec<_> = (from..from + half)
            .map(|i| json!({ "entity": { "eid": format!("$r{i}") }, "jog": { "who": "Ada", "miles": i } }))
            .collect();
        serde_json::Value::Array(bundles)
    };
    fixture.apply("jeff/runs", runs(0)).await;
    assert_eq!(analyzed().await, 0, "analyzed before {first} entities");
    fixture.apply("jeff/runs", runs(half)).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while analyzed().await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the app's tables not analyzed 10 s after {first} entities"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
