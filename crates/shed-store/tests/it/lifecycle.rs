//! An app's life after its deploys, in the store: versions with who made
//! them, the trash mark and the generation it moves, a purge that deletes
//! every row of the app in the shared tables, drops no table, and frees
//! its name — and nothing of another app — and the public URL a server
//! records. On SQLite, or on
//! the PostgreSQL server `SHED_TEST_DATABASE` names.

use std::path::Path;

use serde_json::json;
use shed_store::approvals::NewApproval;
use shed_store::lifecycle::Generation;
use shed_store::platform::NewDeploy;
use shed_store::{Actor, ColumnType, Vocabulary};

use crate::common::open_store;

/// A deploy of one page, `index.html`, to `jeff/<slug>`.
fn deploy(by: &str, slug: &str, page: &str, rolls_back_to: Option<i64>) -> NewDeploy {
    NewDeploy {
        rolls_back_to,
        ..crate::common::deploy(by, slug, &[("index.html", page.as_bytes())])
    }
}

/// The names of the tables and indexes of the store of the data folder
/// `dir`, sorted: the SQLite file's, or its database's on the test server.
async fn relations(dir: &Path) -> Vec<String> {
    let Some(url) = shed_test_database::for_folder(dir) else {
        let conn = rusqlite::Connection::open(dir.join("shed.db")).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY name",
            )
            .unwrap();
        return stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    };
    crate::common::server_client(&url)
        .await
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i') ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// The rows of the shared shape tables (`ec_rows_*`) and full text whose
/// app is `app`'s row id, or (`None`) whose group or entity no app has.
async fn rows_of(dir: &Path, app: Option<i64>) -> i64 {
    let tables: Vec<String> = relations(dir)
        .await
        .into_iter()
        .filter(|t| t.starts_with("ec_rows_") && !t.contains('.') && !t.ends_with("_pkey"))
        .collect();
    let groups = match app {
        Some(id) => format!("IN (SELECT id FROM ec_groups WHERE app = {id})"),
        None => "NOT IN (SELECT id FROM ec_groups)".into(),
    };
    let entities = match app {
        Some(id) => format!("IN (SELECT id FROM ec_entities WHERE app = {id})"),
        None => "NOT IN (SELECT id FROM ec_entities)".into(),
    };
    let postgres = shed_test_database::for_folder(dir);
    let fts_id = if postgres.is_some() { "id" } else { "rowid" };
    let mut counts: Vec<String> = tables
        .iter()
        .map(|t| format!("(SELECT COUNT(*) FROM {t} WHERE grp {groups})"))
        .collect();
    counts.push(format!(
        "(SELECT COUNT(*) FROM ec_fts WHERE {fts_id} {entities})"
    ));
    let sql = format!("SELECT {}", counts.join(" + "));
    match postgres {
        None => rusqlite::Connection::open(dir.join("shed.db"))
            .unwrap()
            .query_row(&sql, [], |r| r.get(0))
            .unwrap(),
        Some(url) => crate::common::server_client(&url)
            .await
            .query_one(&sql, &[])
            .await
            .unwrap()
            .get(0),
    }
}

#[tokio::test]
async fn a_trashed_app_is_purged_whole_and_its_name_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    store.add_space("jeff", &ada.eid).await.unwrap();
    let before = store.generation().await.unwrap();
    assert_eq!(before, Generation::default());

    store
        .record_deploy(deploy(&ada.eid, "runs", "one", None))
        .await
        .unwrap();
    store
        .record_deploy(deploy(&ada.eid, "runs", "two", None))
        .await
        .unwrap();
    store
        .record_deploy(deploy(&ada.eid, "runs", "one", Some(1)))
        .await
        .unwrap();
    store
        .record_deploy(deploy(&ada.eid, "keep", "kept", None))
        .await
        .unwrap();
    let vocab = Vocabulary {
        components: vec![("jog".into(), vec![("miles".into(), ColumnType::Number)])],
    };
    let actor = Actor {
        person: ada.eid.clone(),
        via: None,
        through: None,
    };
    for app in ["jeff/runs", "jeff/keep"] {
        store.declare(app, &vocab).await.unwrap();
        let bundle = json!([
            { "entity": { "eid": "$a", "alias": "first" }, "doc": { "title": "Run" },
              "jog": { "miles": 5 }, "edges": [{ "rel": "next", "to": "$b" }] },
            { "entity": { "eid": "$b" }, "jog": { "miles": 3 } } ]);
        store.apply(app, &actor, bundle, None).await.unwrap();
    }

    let versions = store.app_versions("jeff", "runs").await.unwrap();
    let said: Vec<(i64, &str, Option<i64>)> = versions
        .iter()
        .map(|v| (v.version, v.by.handle.as_str(), v.rolls_back_to))
        .collect();
    assert_eq!(
        said,
        [(1, "ada", None), (2, "ada", None), (3, "ada", Some(1))]
    );

    // Nothing but a trashed app is purged.
    assert_eq!(
        store.purge_app("jeff", "runs", &ada.eid).await.unwrap(),
        None
    );
    let deployed = store.generation().await.unwrap();
    assert!(store.trash_app("jeff", "runs", &ada.eid).await.unwrap());
    assert!(
        !store.trash_app("jeff", "runs", &ada.eid).await.unwrap(),
        "trashed twice"
    );
    let trashed = store.generation().await.unwrap();
    assert_eq!((trashed.deploy, trashed.change), (deployed.deploy, 1));
    let (_, apps) = store.platform_apps().await.unwrap();
    let runs = apps.iter().find(|a| a.slug == "runs").unwrap();
    assert_eq!(runs.trashed.as_ref().unwrap().by.handle, "ada");
    assert_eq!(runs.deployed_by.handle, "ada");
    assert!(store.restore_app("jeff", "runs", &ada.eid).await.unwrap());
    assert!(!store.restore_app("jeff", "runs", &ada.eid).await.unwrap());
    assert!(store.trash_app("jeff", "runs", &ada.eid).await.unwrap());

    let before_purge = relations(dir.path()).await;
    assert!(
        !before_purge.iter().any(|t| t.starts_with("ec_1_")),
        "no app has tables of its own: {before_purge:?}"
    );
    let (runs_rows, keep_rows) = (
        rows_of(dir.path(), Some(1)).await,
        rows_of(dir.path(), Some(2)).await,
    );
    assert!(runs_rows > 2 && keep_rows > 2, "{runs_rows}, {keep_rows}");
    // An approval waiting on it, and its owner's setting.
    store
        .set_agent_writes_need_approval("jeff/runs", true, &ada.eid)
        .await
        .unwrap();
    store
        .ask_approval(NewApproval {
            person: ada.eid.clone(),
            app: "jeff/runs".into(),
            command: "log_run".into(),
            args: "{}".into(),
            asker: "token:1".into(),
            via: None,
            door: "mcp".into(),
            client: None,
            created_at: 0,
            expires_at: i64::MAX,
        })
        .await
        .unwrap();
    let purged = store
        .purge_app("jeff", "runs", &ada.eid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((purged.versions, purged.entities), (3, 2));
    // Neither outlives it: a new app of its name inherits nothing.
    assert!(
        store
            .pending_approvals(&ada.eid, 0)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        relations(dir.path()).await,
        before_purge,
        "a purge drops no table"
    );
    assert_eq!(rows_of(dir.path(), None).await, 0, "no row of it is left");
    assert_eq!(rows_of(dir.path(), Some(2)).await, keep_rows);
    let changes = store.changes_since(deployed).await.unwrap();
    assert_eq!(changes.apps, ["jeff/runs"; 5], "and its setting");
    assert_eq!(changes.now.change, 5);
    let (_, apps) = store.platform_apps().await.unwrap();
    assert_eq!(
        apps.iter().map(|a| a.slug.as_str()).collect::<Vec<_>>(),
        ["keep"]
    );
    assert!(store.app_versions("jeff", "runs").await.unwrap().is_empty());
    // Its components are gone with its rows: the name reads as a new app's.
    let gone = store.query("jeff/runs", ".jog!").await.unwrap_err();
    assert_eq!(gone.to_string(), "no component jog in jeff/runs");
    assert!(
        store
            .query("jeff/runs", ".doc!")
            .await
            .unwrap()
            .rows
            .is_empty()
    );
    assert_eq!(store.data_version("jeff/runs").await.unwrap(), 0);
    // Its activity is gone with it; the other app's stays.
    let both = ["jeff/runs".to_string(), "jeff/keep".to_string()];
    let all = shed_store::activity::Narrow::default();
    let writes = store.writes("jeff", &both, &all, None, 100).await.unwrap();
    assert!(writes.len() == 1 && writes[0].app == "jeff/keep");
    // The other app keeps every row.
    assert_eq!(
        store.query("jeff/keep", ".jog!").await.unwrap().rows.len(),
        2
    );

    // The name is free: a new app under it starts at v1, with no data.
    let again = store
        .record_deploy(deploy(&ada.eid, "runs", "new", None))
        .await
        .unwrap();
    assert_eq!(again.version, 1);
    let (_, apps) = store.platform_apps().await.unwrap();
    let runs = apps.iter().find(|a| a.slug == "runs").unwrap();
    assert!(
        !runs.agent_writes_need_approval,
        "the setting is not inherited"
    );
    store.declare("jeff/runs", &vocab).await.unwrap();
    assert!(
        store
            .query("jeff/runs", ".jog!")
            .await
            .unwrap()
            .rows
            .is_empty()
    );
    let bundle = json!({ "entity": { "eid": "$a", "alias": "first" }, "jog": { "miles": 1 } });
    let applied = store
        .apply("jeff/runs", &actor, bundle, None)
        .await
        .unwrap();
    assert_eq!(
        applied.version, 1,
        "the alias and the data version start over"
    );
}

#[tokio::test]
async fn the_public_url_a_server_records_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    assert_eq!(store.recorded_public_url().await.unwrap(), None);
    store
        .record_public_url("http://localhost:7701")
        .await
        .unwrap();
    store
        .record_public_url("https://shed.example.org")
        .await
        .unwrap();
    assert_eq!(
        store.recorded_public_url().await.unwrap().as_deref(),
        Some("https://shed.example.org")
    );
}

#[tokio::test]
async fn a_person_s_memberships_and_the_generation_are_read_together() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let bob = store.add_person("bob", "Bob").await.unwrap();
    assert_eq!(
        store.memberships_and_generation(&ada.eid).await.unwrap(),
        (vec![], Generation::default()),
        "no space, no deploy"
    );
    store.add_space("jeff", &ada.eid).await.unwrap();
    store.add_space("club", &bob.eid).await.unwrap();
    store.set_member("club", &ada.eid, "viewer").await.unwrap();
    store
        .record_deploy(deploy(&ada.eid, "runs", "<p>1</p>", None))
        .await
        .unwrap();
    store.trash_app("jeff", "runs", &ada.eid).await.unwrap();

    let (memberships, generation) = store.memberships_and_generation(&ada.eid).await.unwrap();
    let roles: Vec<(&str, &str)> = memberships
        .iter()
        .map(|m| (m.space.as_str(), m.role.as_str()))
        .collect();
    assert_eq!(roles, [("club", "viewer"), ("jeff", "owner")], "by slug");
    assert_eq!(memberships, store.memberships(&ada.eid).await.unwrap());
    assert_eq!(generation, store.generation().await.unwrap());
    assert_ne!(generation, Generation::default());

    let nobody = store.add_person("cy", "Cy").await.unwrap();
    assert_eq!(
        store.memberships_and_generation(&nobody.eid).await.unwrap(),
        (vec![], generation),
        "a person in no space still reads the generation"
    );
}

/// Runs one statement on the store of the data folder `dir`, beside it.
async fn execute(dir: &Path, sql: &str) {
    match shed_test_database::for_folder(dir) {
        None => {
            rusqlite::Connection::open(dir.join("shed.db"))
                .unwrap()
                .execute_batch(sql)
                .unwrap();
        }
        Some(url) => {
            crate::common::server_client(&url)
                .await
                .batch_execute(sql)
                .await
                .unwrap();
        }
    }
}

// An app holding more rows than a purge deletes in one transaction is
// purged whole, batch after batch; a purge the process stopped in after
// its first transaction (the app's data renamed `purging <id>`, its rows
// left) is finished by the next purge.
#[tokio::test]
async fn a_large_purge_goes_in_batches_and_one_interrupted_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    store.add_space("jeff", &ada.eid).await.unwrap();
    let vocab = Vocabulary {
        components: vec![("jog".into(), vec![("miles".into(), ColumnType::Number)])],
    };
    let actor = Actor {
        person: ada.eid.clone(),
        via: None,
        through: None,
    };
    let many = shed_store::lifecycle::PURGE_BATCH_ROWS as usize + 150;
    for (slug, count) in [("big", many), ("stopped", 20), ("keep", 5)] {
        store
            .record_deploy(deploy(&ada.eid, slug, "page", None))
            .await
            .unwrap();
        let app = format!("jeff/{slug}");
        store.declare(&app, &vocab).await.unwrap();
        for start in (0..count).step_by(200) {
            let bundles: Vec<_> = (start..count.min(start + 200))
                .map(|i| json!({ "entity": { "eid": "$r" }, "jog": { "miles": i }, "doc": { "title": "run" } }))
                .map(|b| json!([b]))
                .collect();
            for b in bundles {
                store.apply(&app, &actor, b, None).await.unwrap();
            }
        }
    }
    let keep_rows = rows_of(dir.path(), Some(3)).await;
    // The process stopped after the purge's first transaction.
    execute(
        dir.path(),
        "UPDATE ec_apps SET name = 'purging 2' WHERE id = 2",
    )
    .await;

    assert!(store.trash_app("jeff", "big", &ada.eid).await.unwrap());
    let purged = store
        .purge_app("jeff", "big", &ada.eid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(purged.entities, many as i64);
    assert_eq!(
        rows_of(dir.path(), None).await,
        0,
        "no row of either is left"
    );
    assert_eq!(rows_of(dir.path(), Some(3)).await, keep_rows);
    assert_eq!(
        store.query("jeff/keep", ".jog!").await.unwrap().rows.len(),
        5
    );
    for app in ["jeff/big", "jeff/stopped"] {
        assert_eq!(store.data_version(app).await.unwrap(), 0, "{app}");
    }
}
