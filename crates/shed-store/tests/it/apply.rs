//! Every word of the apply wire and every refusal sentence, as a user sees them.

use crate::common;

use common::{eids, fixture};
use serde_json::json;
use shed_store::{Actor, StoreError};

#[tokio::test]
async fn minting_shares_a_name_across_bundles_and_answers_aliases() {
    let f = fixture().await;
    let a = f
        .apply(
            "jeff/runs",
            json!([
                { "entity": { "eid": "$run" }, "jog": { "who": "Ada", "miles": 5 } },
                { "entity": { "eid": "$note" }, "doc": { "body": "felt good" }, "comment": { "target": "$run" } },
                { "entity": { "eid": "$run" }, "doc": { "title": "Tuesday run" } }
            ]),
        )
        .await;
    assert_eq!(a.entities.len(), 2);
    assert_eq!(a.aliases["$run"], a.entities[0]);
    assert_eq!(a.aliases["$note"], a.entities[1]);
    assert_eq!(a.version, 1);
    let rows = f.rows("jeff/runs", ".comment!&.doc?").await;
    assert_eq!(
        rows[0]["comment"]["target"],
        json!({ "eid": a.entities[0], "name": "Tuesday run" })
    );
    let run = f
        .rows("jeff/runs", &format!("eid={}&.jog!&.doc?", a.entities[0]))
        .await;
    assert_eq!(run[0]["entity"]["num"], 1);
    assert_eq!(
        run[0]["entity"]["version"], 1,
        "one apply is one write of the entity"
    );
    assert_eq!(run[0]["doc"]["title"], "Tuesday run");
}

#[tokio::test]
async fn patching_by_eid_or_alias_merges_columns_and_nulls_clear() {
    let f = fixture().await;
    let a = f
        .apply("jeff/runs", json!({ "entity": { "eid": "$r", "alias": "tuesday" }, "jog": { "who": "Ada", "miles": 5 }, "doc": { "title": "t" } }))
        .await;
    let eid = a.entities[0].clone();
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "tuesday" }, "jog": { "miles": 6.5 } }),
    )
    .await;
    let row = &f.rows("jeff/runs", "eid=tuesday&.jog!").await[0];
    assert_eq!(row["jog"], json!({ "who": "Ada", "miles": 6.5 }));
    assert_eq!(row["entity"]["version"], 2);
    assert_eq!(row["entity"]["alias"], "tuesday");
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": eid }, "jog": { "who": null } }),
    )
    .await;
    assert_eq!(
        f.rows("jeff/runs", "eid=tuesday&.jog!").await[0]["jog"],
        json!({ "miles": 6.5 })
    );
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": eid }, "doc": null }),
    )
    .await;
    assert!(
        f.rows("jeff/runs", ".doc").await.is_empty(),
        "a null component removes it"
    );
    assert_eq!(f.rows("jeff/runs", ".jog").await.len(), 1);
    assert_eq!(f.store.data_version("jeff/runs").await.unwrap(), 4);
}

#[tokio::test]
async fn aliases_are_unique_in_an_app_and_can_be_cleared() {
    let f = fixture().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$a", "alias": "tuesday" }, "jog": {} }),
    )
    .await;
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$b", "alias": "tuesday" }, "jog": {} })
        )
        .await,
        "alias tuesday is taken in jeff/runs"
    );
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "tuesday", "alias": null } }),
    )
    .await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$b", "alias": "tuesday" }, "jog": {} }),
    )
    .await;
    assert_eq!(
        f.rows("jeff/runs", "eid=tuesday").await[0]["entity"]["num"],
        2
    );
}

#[tokio::test]
async fn edges_are_added_and_dropped() {
    let f = fixture().await;
    let a = f
        .apply("jeff/runs", json!([
            { "entity": { "eid": "$a", "alias": "first" }, "jog": {} },
            { "entity": { "eid": "$b" }, "jog": {}, "edges": [{ "rel": "follows", "to": "$a" }] }
        ]))
        .await;
    let (first, second) = (a.aliases["$a"].clone(), a.aliases["$b"].clone());
    assert_eq!(
        eids(&f.rows("jeff/runs", ".edges.follows=first").await),
        vec![second.clone()]
    );
    assert_eq!(
        eids(
            &f.rows("jeff/runs", &format!(".edges.follows={first}"))
                .await
        ),
        vec![second.clone()]
    );
    let row = &f.rows("jeff/runs", &format!("eid={second}&.edges?")).await[0];
    assert_eq!(row["edges"], json!([{ "rel": "follows", "to": first }]));
    f.apply("jeff/runs", json!({ "entity": { "eid": second }, "edges": [{ "rel": "follows", "to": "first", "drop": true }] })).await;
    assert!(f.rows("jeff/runs", ".edges.follows=first").await.is_empty());
}

#[tokio::test]
async fn tombstone_deletes_and_keeps_history() {
    let f = fixture().await;
    let a = f.apply("jeff/runs", json!({ "entity": { "eid": "$r", "alias": "gone" }, "jog": { "miles": 1 }, "doc": { "title": "findable" } })).await;
    let eid = a.entities[0].clone();
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "gone" }, "tombstone": {} }),
    )
    .await;
    assert!(f.rows("jeff/runs", ".jog").await.is_empty());
    assert!(f.rows("jeff/runs", "q=findable").await.is_empty());
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": eid }, "jog": { "miles": 2 } })
        )
        .await,
        format!("no entity {eid} in jeff/runs")
    );
    let history = f.store.history("jeff/runs", &eid).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].change["tombstone"], json!({}));
}

#[tokio::test]
async fn was_is_checked_against_the_version_read() {
    let f = fixture().await;
    let eid = f
        .apply(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "miles": 1 } }),
        )
        .await
        .entities[0]
        .clone();
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": eid }, "jog": { "miles": 2 }, "was": 1 }),
    )
    .await;
    let err = f
        .store
        .apply(
            "jeff/runs",
            &f.as_ada(),
            json!({ "entity": { "eid": eid }, "jog": { "miles": 3 }, "was": 1 }),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict(format!(
            "{eid} changed since you read it (version 2, you had 1)"
        ))
    );
    assert_eq!(f.rows("jeff/runs", ".jog!").await[0]["jog"]["miles"], 2);
}

#[tokio::test]
async fn expect_checks_the_app_data_version() {
    let f = fixture().await;
    f.apply("jeff/runs", json!({ "entity": { "eid": "$r" }, "jog": {} }))
        .await;
    let err = f
        .store
        .apply(
            "jeff/runs",
            &f.as_ada(),
            json!({ "entity": { "eid": "$r" }, "jog": {} }),
            Some(5),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StoreError::Conflict("jeff/runs is at version 1, you expected 5".into())
    );
    let ok = f
        .store
        .apply(
            "jeff/runs",
            &f.as_ada(),
            json!({ "entity": { "eid": "$r" }, "jog": {} }),
            Some(1),
        )
        .await
        .unwrap();
    assert_eq!(ok.version, 2);
}

#[tokio::test]
async fn refs_point_at_names_eids_aliases_and_people() {
    let f = fixture().await;
    let bob = f.store.add_person("bob", "Bob").await.unwrap();
    let a = f.apply("jeff/runs", json!([
        { "entity": { "eid": "$shoe", "alias": "shoe" }, "gear": { "owner": "@bob", "ready": true, "link": "https://example.com/shoe" } },
        { "entity": { "eid": "$sock" }, "gear": { "owner": bob.eid } },
        { "entity": { "eid": "$lace" }, "gear": { "owner": "shoe" } },
        { "entity": { "eid": "$tag" }, "gear": { "owner": "$shoe" } }
    ])).await;
    let rows = f.rows("jeff/runs", ".gear!").await;
    assert_eq!(
        rows[0]["gear"]["owner"],
        json!({ "eid": a.aliases["$shoe"], "name": "shoe" })
    );
    assert_eq!(
        rows[1]["gear"]["owner"],
        json!({ "eid": a.aliases["$shoe"], "name": "shoe" })
    );
    assert_eq!(
        rows[2]["gear"]["owner"],
        json!({ "eid": bob.eid, "name": "Bob" })
    );
    assert_eq!(
        rows[3]["gear"],
        json!({ "ready": true, "link": "https://example.com/shoe", "owner": { "eid": bob.eid, "name": "Bob" } })
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$x" }, "gear": { "owner": "@nobody" } })
        )
        .await,
        "no person @nobody"
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$x" }, "gear": { "owner": "$ghost" } })
        )
        .await,
        r#"$ghost names no entity in this apply — give it a bundle with {"entity": {"eid": "$ghost"}}"#
    );
}

#[tokio::test]
async fn every_refusal_is_its_sentence() {
    let f = fixture().await;
    let unknown = "4f3c0000000000000000000000000000";
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": unknown }, "jog": {} })
        )
        .await,
        format!("no entity {unknown} in jeff/runs")
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jogg": {} })
        )
        .await,
        "jogg is not a component of jeff/runs"
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "miles": "far" } })
        )
        .await,
        "jog.miles is a number"
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "who": 5 } })
        )
        .await,
        "jog.who is text"
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "gear": { "ready": "yes" } })
        )
        .await,
        "gear.ready is true or false"
    );
    assert!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "at": "soon" } })
        )
        .await
        .starts_with("jog.at is a time")
    );
    assert!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "gear": { "link": "not a url" } })
        )
        .await
        .starts_with("gear.link is a url")
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "mile": 1 } })
        )
        .await,
        "jog has no column mile — it has who, miles, at"
    );
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "nope" }, "jog": {} })
        )
        .await,
        "no entity nope in jeff/runs"
    );
    assert!(matches!(
        f.store
            .apply(
                "jeff/runs",
                &f.as_ada(),
                json!({ "entity": { "eid": unknown } }),
                None
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(
        f.store.data_version("jeff/runs").await.unwrap(),
        0,
        "no refusal wrote anything"
    );
}

#[tokio::test]
async fn a_list_whose_third_bundle_is_refused_writes_nothing() {
    let f = fixture().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$r", "alias": "keep" }, "jog": { "miles": 1 } }),
    )
    .await;
    let err = f
        .refusal("jeff/runs", json!([
            { "entity": { "eid": "$a", "alias": "new-one" }, "jog": { "miles": 2 }, "doc": { "title": "written?" } },
            { "entity": { "eid": "keep" }, "jog": { "miles": 9 }, "edges": [{ "rel": "r", "to": "$a" }] },
            { "entity": { "eid": "$c" }, "jog": { "miles": "three" } }
        ]))
        .await;
    assert_eq!(err, "jog.miles is a number");
    assert_eq!(f.store.data_version("jeff/runs").await.unwrap(), 1);
    let rows = f.rows("jeff/runs", ".jog!").await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["jog"]["miles"], 1);
    assert_eq!(rows[0]["entity"]["version"], 1);
    assert!(f.rows("jeff/runs", "q=written").await.is_empty());
    assert!(f.rows("jeff/runs", "eid=new-one").await.is_empty());
    assert!(f.rows("jeff/runs", ".edges.r=keep").await.is_empty());
    // The next entity still gets the next number.
    f.apply("jeff/runs", json!({ "entity": { "eid": "$n" }, "jog": {} }))
        .await;
    assert_eq!(f.rows("jeff/runs", ".jog").await[0]["entity"]["num"], 2);
}

#[tokio::test]
async fn created_updated_and_history_say_who_and_which_agent() {
    let f = fixture().await;
    let bob = f.store.add_person("bob", "Bob").await.unwrap();
    let eid = f
        .apply(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "miles": 1 } }),
        )
        .await
        .entities[0]
        .clone();
    let agent = Actor {
        person: bob.eid.clone(),
        via: Some("agent:job-7".into()),
        through: None,
    };
    f.store
        .apply(
            "jeff/runs",
            &agent,
            json!({ "entity": { "eid": eid }, "jog": { "miles": 2 } }),
            None,
        )
        .await
        .unwrap();
    let row = &f.rows("jeff/runs", ".jog!&.created!&.updated!").await[0];
    assert_eq!(
        row["created"]["by"],
        json!({ "eid": f.ada.eid, "name": "Ada Lovelace" })
    );
    assert!(row["created"].get("via").is_none());
    assert_eq!(
        row["updated"]["by"],
        json!({ "eid": bob.eid, "name": "Bob" })
    );
    assert_eq!(row["updated"]["via"], "agent:job-7");
    assert!(row["created"]["at"].as_str().unwrap().ends_with('Z'));
    let h = f.store.history("jeff/runs", &eid).await.unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(
        (h[0].version, h[0].by.as_str(), h[0].via.as_deref()),
        (1, f.ada.eid.as_str(), None)
    );
    assert_eq!(
        (h[1].version, h[1].by.as_str(), h[1].via.as_deref()),
        (2, bob.eid.as_str(), Some("agent:job-7"))
    );
    assert_eq!(h[1].change["jog"], json!({ "miles": 2 }));
    assert_eq!(
        f.store.history("jeff/runs", "nobody").await.unwrap_err(),
        StoreError::NotFound("no entity nobody in jeff/runs".into())
    );
}

#[tokio::test]
async fn platform_components_work_in_an_app_never_declared() {
    let f = fixture().await;
    let a = f
        .apply(
            "ada/notes",
            json!({ "entity": { "eid": "$n" }, "doc": { "title": "Hello", "body": "world" } }),
        )
        .await;
    assert_eq!(a.version, 1);
    assert_eq!(
        f.rows("ada/notes", ".doc!").await[0]["doc"],
        json!({ "title": "Hello", "body": "world" })
    );
    assert_eq!(
        f.refusal("ada/notes", json!({ "entity": { "eid": "$n" }, "jog": {} }))
            .await,
        "jog is not a component of ada/notes"
    );
    assert!(f.rows("nobody/never", ".doc!").await.is_empty());
    assert_eq!(
        f.query_error("nobody/never", ".jog!").await,
        "no component jog in nobody/never"
    );
}

#[tokio::test]
async fn two_apps_with_the_same_components_never_see_each_other() {
    let f = fixture().await;
    f.store
        .declare("club/runs", &common::run_club())
        .await
        .unwrap();
    f.apply("jeff/runs", json!({ "entity": { "eid": "$r", "alias": "mine" }, "jog": { "who": "Jeff" }, "doc": { "title": "jeff secret" } })).await;
    f.apply(
        "club/runs",
        json!({ "entity": { "eid": "$r" }, "jog": { "who": "Club" } }),
    )
    .await;
    let jeff = f.rows("jeff/runs", ".jog!").await;
    let club = f.rows("club/runs", ".jog!").await;
    assert_eq!((jeff.len(), club.len()), (1, 1));
    assert_eq!(club[0]["jog"]["who"], "Club");
    assert_eq!(club[0]["entity"]["num"], 1);
    assert!(f.rows("club/runs", "q=secret").await.is_empty());
    assert!(f.rows("club/runs", "eid=mine").await.is_empty());
    let jeff_eid = jeff[0]["entity"]["eid"].as_str().unwrap();
    assert!(
        f.rows("club/runs", &format!("eid={jeff_eid}"))
            .await
            .is_empty()
    );
    assert_eq!(
        f.refusal(
            "club/runs",
            json!({ "entity": { "eid": jeff_eid }, "jog": {} })
        )
        .await,
        format!("no entity {jeff_eid} in club/runs")
    );
    assert_eq!(
        f.refusal(
            "club/runs",
            json!({ "entity": { "eid": "mine" }, "jog": {} })
        )
        .await,
        "no entity mine in club/runs"
    );
    assert_eq!(f.store.data_version("club/runs").await.unwrap(), 1);
}

#[tokio::test]
async fn people_have_unique_handles() {
    let f = fixture().await;
    assert_eq!(
        f.store
            .add_person("ada", "Another")
            .await
            .unwrap_err()
            .to_string(),
        "the handle ada is taken — choose another"
    );
    assert!(
        f.store
            .add_person("Ada!", "x")
            .await
            .unwrap_err()
            .to_string()
            .starts_with("Ada! is not a handle")
    );
    assert_eq!(f.store.person("@ada").await.unwrap(), Some(f.ada.clone()));
    assert_eq!(
        f.store.person_by_eid(&f.ada.eid).await.unwrap(),
        Some(f.ada.clone())
    );
    assert_eq!(f.store.person("zed").await.unwrap(), None);
}

/// Round trips between the store and PostgreSQL: a loopback proxy in front
/// of the test server that counts, over every connection through it, each
/// time the store sends after it has received (one wait for the server).
struct TurnCounter {
    turns: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The test server's URL, pointing at the proxy instead.
    url: String,
}

impl TurnCounter {
    async fn start(url: &str) -> TurnCounter {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let config: tokio_postgres::Config = url.parse().unwrap();
        let port = config.get_ports()[0];
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxied = url.replacen(
            &format!(":{port}/"),
            &format!(":{}/", listener.local_addr().unwrap().port()),
            1,
        );
        assert_ne!(proxied, url, "the URL names the server's port: {url}");
        let turns = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = turns.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = server.into_split();
                // Whether the server spoke last on this connection.
                let answered = std::sync::Arc::new(AtomicBool::new(true));
                let (turns, heard) = (counted.clone(), answered.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0; 64 * 1024];
                    while let Ok(n @ 1..) = from_client.read(&mut buf).await {
                        if heard.swap(false, Ordering::SeqCst) {
                            turns.fetch_add(1, Ordering::SeqCst);
                        }
                        if to_server.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
                tokio::spawn(async move {
                    let mut buf = vec![0; 64 * 1024];
                    while let Ok(n @ 1..) = from_server.read(&mut buf).await {
                        answered.store(true, Ordering::SeqCst);
                        if to_client.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        TurnCounter {
            turns,
            url: proxied,
        }
    }

    fn take(&self) -> usize {
        self.turns.swap(0, std::sync::atomic::Ordering::SeqCst)
    }
}

/// A run logged on PostgreSQL (an entity minted with two components, to
/// an app already written to, its statements prepared) waits for the
/// server 3 times: the lock, the app's catalog and the entity's id sent
/// together behind `BEGIN`; the entity's rows and the app's version sent
/// together; the commit. (It waited 8 times before #25's write path:
/// `BEGIN`, the app made if missing, the lock, the catalog's two reads, the
/// entity's row id, its rows, the commit.)
#[tokio::test]
async fn a_run_logged_on_postgres_waits_for_the_server_three_times() {
    let f = fixture().await;
    let Some(url) = f.database_url() else {
        eprintln!("a test of PostgreSQL's round trips, skipped on SQLite");
        return;
    };
    let counter = TurnCounter::start(&url).await;
    let store = shed_store::Store::connect(&counter.url).await.unwrap();
    let run = json!({ "entity": { "eid": "$run" }, "jog": { "who": "Ada", "miles": 5 }, "doc": { "title": "Tuesday" } });
    for _ in 0..2 {
        store
            .apply("jeff/runs", &f.as_ada(), run.clone(), None)
            .await
            .unwrap();
    }
    counter.take();
    let applied = store
        .apply("jeff/runs", &f.as_ada(), run, None)
        .await
        .unwrap();
    assert_eq!(counter.take(), 3, "round trips of one run logged");
    assert_eq!(applied.version, 3);
    assert_eq!(f.rows("jeff/runs", ".jog!").await.len(), 3);
}

/// An entity's history answers its newest entries only, oldest first.
#[tokio::test]
async fn history_answers_the_newest_entries_oldest_first() {
    use shed_store::undo::VERSIONS_SHOWN;
    let f = fixture().await;
    let eid = f
        .apply(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "miles": 0 } }),
        )
        .await
        .entities[0]
        .clone();
    for miles in 1..VERSIONS_SHOWN + 5 {
        f.apply(
            "jeff/runs",
            json!({ "entity": { "eid": eid }, "jog": { "miles": miles } }),
        )
        .await;
    }
    let h = f.store.history("jeff/runs", &eid).await.unwrap();
    assert_eq!(h.len(), VERSIONS_SHOWN);
    assert_eq!(h[0].version, 6);
    assert_eq!(h[VERSIONS_SHOWN - 1].version, (VERSIONS_SHOWN + 5) as u64);
}
