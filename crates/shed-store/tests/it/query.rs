//! Every clause of the filter line, typed values, pages and error sentences.

use crate::common;

use common::{Fixture, eids, fixture};
use serde_json::json;
use shed_store::filter::CLAUSE_FORMS;

/// Four runs (oldest first): Ada 5 on 09-01, Bob 12 on 09-03, ada 3.5 on 09-02, Cy 20 on 08-30.
async fn club() -> (Fixture, Vec<String>) {
    let f = fixture().await;
    let mut out = Vec::new();
    for (who, miles, at, title) in [
        ("Ada", 5.0, "2026-09-01", "Morning loop by the river"),
        ("Bob", 12.0, "2026-09-03T10:00:00Z", "Long run, hills"),
        ("ada", 3.5, "2026-09-02T23:59:59+00:00", "Recovery jog"),
        ("Cy", 20.0, "2026-08-30", "Riverside marathon practice"),
    ] {
        let a = f
            .apply("jeff/runs", json!({ "entity": { "eid": "$r" }, "jog": { "who": who, "miles": miles, "at": at }, "doc": { "title": title, "body": format!("{who} ran") } }))
            .await;
        out.push(a.entities[0].clone());
    }
    (f, out)
}

fn picks(all: &[String], idx: &[usize]) -> Vec<String> {
    idx.iter().map(|i| all[*i].clone()).collect()
}

#[tokio::test]
async fn component_wear_forms() {
    let (f, e) = club().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$g" }, "gear": { "ready": true } }),
    )
    .await;
    let jog = f.rows("jeff/runs", ".jog!").await;
    assert_eq!(
        eids(&jog),
        picks(&e, &[3, 2, 1, 0]),
        "newest first by default"
    );
    assert_eq!(jog[0]["kind"], "jog");
    assert_eq!(
        jog[0]["jog"],
        json!({ "who": "Cy", "miles": 20, "at": "2026-08-30T00:00:00Z" })
    );
    assert!(
        jog[0].get("doc").is_none(),
        "a row carries only what its line names"
    );
    let plain = f.rows("jeff/runs", ".jog").await;
    assert_eq!(plain.len(), 4);
    assert!(
        plain[0].get("jog").is_none(),
        ".C requires without carrying"
    );
    let maybe = f.rows("jeff/runs", ".gear?").await;
    assert_eq!(maybe.len(), 5, ".C? requires nothing");
    assert_eq!(maybe[0]["gear"], json!({ "ready": true }));
    assert!(maybe[1].get("gear").is_none());
    assert!(maybe[0].get("kind").is_none());
    assert_eq!(maybe[0]["entity"]["num"], 5);
}

#[tokio::test]
async fn comparisons_read_values_under_the_column_type() {
    let (f, e) = club().await;
    let q = |line: &'static str| {
        let f = &f;
        async move { eids(&f.rows("jeff/runs", line).await) }
    };
    // numbers numerically: "12" > "5" as numbers, not as text
    assert_eq!(q(".jog.miles>=5").await, picks(&e, &[3, 1, 0]));
    assert_eq!(q(".jog.miles>5").await, picks(&e, &[3, 1]));
    assert_eq!(q(".jog.miles<5").await, picks(&e, &[2]));
    assert_eq!(q(".jog.miles<=5").await, picks(&e, &[2, 0]));
    assert_eq!(q(".jog.miles=3.5").await, picks(&e, &[2]));
    assert_eq!(q(".jog.miles!=3.5").await, picks(&e, &[3, 1, 0]));
    // times chronologically, a bare date as midnight UTC
    assert_eq!(q(".jog.at>=2026-09-01").await, picks(&e, &[2, 1, 0]));
    assert_eq!(q(".jog.at=2026-09-01T00:00:00Z").await, picks(&e, &[0]));
    assert_eq!(
        q(".jog.at<2026-09-02T12:00:00%2B02:00").await,
        picks(&e, &[3, 0])
    );
    // text: = is exact, ~ contains case-insensitively
    assert_eq!(q(".jog.who=Ada").await, picks(&e, &[0]));
    assert_eq!(q(".jog.who~AD").await, picks(&e, &[2, 0]));
    assert_eq!(
        q(".jog.who~a%25").await,
        Vec::<String>::new(),
        "% is a character, not a wildcard"
    );
    // bools true|false
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$g" }, "gear": { "ready": false } }),
    )
    .await;
    assert_eq!(f.rows("jeff/runs", ".gear.ready=false").await.len(), 1);
    assert_eq!(f.rows("jeff/runs", ".gear.ready=true").await.len(), 0);
    assert_eq!(
        f.query_error("jeff/runs", ".gear.ready=yes").await,
        "gear.ready is true or false"
    );
    assert_eq!(
        f.query_error("jeff/runs", ".jog.miles>=far").await,
        "jog.miles is a number"
    );
    assert!(
        f.query_error("jeff/runs", ".jog.at>=someday")
            .await
            .starts_with("jog.at is a time")
    );
    assert_eq!(
        f.query_error("jeff/runs", ".jog.miles~5").await,
        "jog.miles is a number — ~ (contains) is for text"
    );
}

#[tokio::test]
async fn values_are_bound_never_spliced() {
    let (f, _) = club().await;
    let evil = "x' OR 1=1 --";
    let a = f
        .apply(
            "jeff/runs",
            json!({ "entity": { "eid": "$r" }, "jog": { "who": evil } }),
        )
        .await;
    let line = format!(".jog.who={}", "x'%20OR%201=1%20--");
    assert_eq!(eids(&f.rows("jeff/runs", &line).await), a.entities);
    assert!(
        f.rows("jeff/runs", ".jog.who=x' OR '1'='1")
            .await
            .is_empty()
    );
    assert!(f.rows("jeff/runs", "eid=x' OR 1=1 --").await.is_empty());
    assert!(f.rows("jeff/runs", "q=x\" OR 1=1 --").await.is_empty());
    assert!(
        f.query_error("jeff/runs", ".jog~' OR 1=1")
            .await
            .starts_with("can't read the clause")
    );
    assert_eq!(
        f.rows("jeff/runs", ".jog!").await.len(),
        5,
        "the table is still whole"
    );
}

#[tokio::test]
async fn stamps_created_and_updated() {
    let (f, e) = club().await;
    let bob = f.store.add_person("bob", "Bob").await.unwrap();
    let agent = shed_store::Actor {
        person: bob.eid.clone(),
        via: Some("agent:j1".into()),
        through: None,
    };
    f.store
        .apply(
            "jeff/runs",
            &agent,
            json!({ "entity": { "eid": e[0] }, "jog": { "miles": 6 } }),
            None,
        )
        .await
        .unwrap();
    let rows = f.rows("jeff/runs", ".created!").await;
    assert_eq!(rows.len(), 4);
    assert_eq!(
        rows[0]["created"]["by"],
        json!({ "eid": f.ada.eid, "name": "Ada Lovelace" })
    );
    assert!(rows[0].get("updated").is_none());
    assert_eq!(
        eids(&f.rows("jeff/runs", ".updated.by=@bob").await),
        picks(&e, &[0])
    );
    assert_eq!(
        eids(
            &f.rows("jeff/runs", &format!(".updated.by={}", bob.eid))
                .await
        ),
        picks(&e, &[0])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", ".created.by=bob").await),
        Vec::<String>::new()
    );
    assert_eq!(f.rows("jeff/runs", ".created.by!=@bob").await.len(), 4);
    assert_eq!(
        eids(&f.rows("jeff/runs", ".updated.via=agent:j1").await),
        picks(&e, &[0])
    );
    assert_eq!(
        f.rows("jeff/runs", ".created.at>=2000-01-01").await.len(),
        4
    );
    assert_eq!(f.rows("jeff/runs", ".created.at<2000-01-01").await.len(), 0);
    let row = &f
        .rows("jeff/runs", &format!("eid={}&.updated?", e[0]))
        .await[0];
    assert_eq!(row["updated"]["via"], "agent:j1");
    assert_eq!(
        f.query_error("jeff/runs", ".created.by>x").await,
        "created.by compares with = or != — give a person's @handle or eid"
    );
}

#[tokio::test]
async fn full_text_every_word_the_last_a_prefix() {
    let (f, e) = club().await;
    assert_eq!(
        eids(&f.rows("jeff/runs", ".doc!&q=loop").await),
        picks(&e, &[0])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "q=river").await),
        picks(&e, &[3, 0])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "q=river%20morning").await),
        picks(&e, &[0])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "q=rive").await),
        picks(&e, &[3, 0]),
        "the last word is a prefix"
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "q=loop%20rive").await),
        picks(&e, &[0])
    );
    assert!(
        f.rows("jeff/runs", "q=rive%20loop").await.is_empty(),
        "only the last word is a prefix"
    );
    assert!(
        f.rows("jeff/runs", "q=rive%20hills").await.is_empty(),
        "every word must match"
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "q=bob%20ran").await),
        picks(&e, &[1]),
        "the body is searched"
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "q=MORNING").await),
        picks(&e, &[0])
    );
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": e[0] }, "doc": { "title": "Evening loop" } }),
    )
    .await;
    assert!(
        f.rows("jeff/runs", "q=morning").await.is_empty(),
        "the index follows the doc"
    );
    assert_eq!(f.rows("jeff/runs", "q=evening").await.len(), 1);
}

#[tokio::test]
async fn eid_by_eid_or_alias() {
    let (f, e) = club().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": e[1], "alias": "hills" } }),
    )
    .await;
    assert_eq!(
        eids(&f.rows("jeff/runs", &format!("eid={}", e[1])).await),
        picks(&e, &[1])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", "eid=hills").await),
        picks(&e, &[1])
    );
    assert!(f.rows("jeff/runs", "eid=nothing").await.is_empty());
}

#[tokio::test]
async fn order_limit_and_pages() {
    let (f, e) = club().await;
    assert_eq!(
        eids(&f.rows("jeff/runs", ".jog!&order=.jog.miles").await),
        picks(&e, &[2, 0, 1, 3])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", ".jog!&order=-.jog.miles").await),
        picks(&e, &[3, 1, 0, 2])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", ".jog!&order=.jog.at").await),
        picks(&e, &[3, 0, 2, 1])
    );
    assert_eq!(
        eids(&f.rows("jeff/runs", ".jog!&order=.created.at").await).len(),
        4
    );
    // pages through every order, with ties and missing values
    f.apply(
        "jeff/runs",
        json!([
            { "entity": { "eid": "$a" }, "jog": { "who": "Tie", "miles": 5 } },
            { "entity": { "eid": "$b" }, "jog": { "who": "None" } }
        ]),
    )
    .await;
    for line in [
        ".jog!",
        ".jog!&order=.jog.miles",
        ".jog!&order=-.jog.miles",
        ".jog!&order=.jog.who",
        ".jog!&order=-.created.at",
    ] {
        let all = eids(&f.rows("jeff/runs", line).await);
        assert_eq!(all.len(), 6);
        let mut paged = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let l = match &next {
                Some(c) => format!("{line}&limit=2&after={c}"),
                None => format!("{line}&limit=2"),
            };
            let page = f.store.query("jeff/runs", &l).await.unwrap();
            assert!(page.rows.len() <= 2);
            paged.extend(eids(&page.rows));
            match page.next {
                Some(c) => next = Some(c),
                None => break,
            }
        }
        assert_eq!(paged, all, "pages of {line}");
    }
    let one = f.store.query("jeff/runs", ".jog!&limit=6").await.unwrap();
    assert!(
        one.next.is_none(),
        "no next when every row is in the answer"
    );
    for bad in ["limit=0", "limit=1001", "limit=-1", "limit=two"] {
        assert_eq!(
            f.query_error("jeff/runs", bad).await,
            "limit is a whole number from 1 to 1000"
        );
    }
    let first = f
        .store
        .query("jeff/runs", ".jog!&limit=2")
        .await
        .unwrap()
        .next
        .unwrap();
    assert!(
        f.query_error(
            "jeff/runs",
            &format!(".jog!&order=.jog.miles&after={first}")
        )
        .await
        .starts_with("after takes the next of an earlier answer")
    );
    assert!(
        f.query_error("jeff/runs", "after=zzz")
            .await
            .starts_with("after takes the next of an earlier answer")
    );
}

#[tokio::test]
async fn default_limit_is_fifty() {
    let f = fixture().await;
    let bundles: Vec<_> = (0..60)
        .map(|i| json!({ "entity": { "eid": format!("$r{i}") }, "jog": { "miles": i } }))
        .collect();
    f.apply("jeff/runs", json!(bundles)).await;
    let page = f.store.query("jeff/runs", ".jog!").await.unwrap();
    assert_eq!(page.rows.len(), 50);
    assert_eq!(page.rows[0]["entity"]["num"], 60);
    assert!(page.next.is_some());
    assert_eq!(f.rows("jeff/runs", ".jog!&limit=1000").await.len(), 60);
}

#[tokio::test]
async fn error_sentences() {
    let (f, _) = club().await;
    assert_eq!(
        f.query_error("jeff/runs", ".jogg!").await,
        "no component jogg in jeff/runs"
    );
    assert_eq!(
        f.query_error("jeff/runs", ".jogg.who=x").await,
        "no component jogg in jeff/runs"
    );
    assert_eq!(
        f.query_error("jeff/runs", ".jog.mile>=5").await,
        "jog has no column mile — it has who, miles, at"
    );
    assert_eq!(
        f.query_error("jeff/runs", "order=.jog.mile").await,
        "jog has no column mile — it has who, miles, at"
    );
    assert_eq!(
        f.query_error("jeff/runs", "colour=red").await,
        format!("can't read the clause colour=red — a clause is one of {CLAUSE_FORMS}")
    );
}

#[tokio::test]
async fn ref_columns_filter_by_eid_alias_or_person() {
    let (f, e) = club().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": e[0], "alias": "loop" } }),
    )
    .await;
    f.apply("jeff/runs", json!([
        { "entity": { "eid": "$c" }, "comment": { "target": "loop" }, "doc": { "body": "nice" } },
        { "entity": { "eid": "$g" }, "gear": { "owner": "@ada" } }
    ])).await;
    let c = f.rows("jeff/runs", ".comment.target=loop&.comment!").await;
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0]["comment"]["target"],
        json!({ "eid": e[0], "name": "Morning loop by the river" })
    );
    assert_eq!(
        f.rows("jeff/runs", &format!(".comment.target={}", e[0]))
            .await
            .len(),
        1
    );
    assert_eq!(f.rows("jeff/runs", ".gear.owner=@ada").await.len(), 1);
    assert_eq!(
        f.rows("jeff/runs", &format!(".gear.owner={}", f.ada.eid))
            .await
            .len(),
        1
    );
}

/// A handle is read once, without its one `@`: `@@ada` names no one, on
/// both backends alike — in a line, which then matches nothing, and in an
/// apply, which is refused (SQLite took a second `@` off and found Ada).
#[tokio::test]
async fn a_handle_with_a_second_at_names_no_one_on_either_backend() {
    let (f, _) = club().await;
    f.apply(
        "jeff/runs",
        json!({ "entity": { "eid": "$g" }, "gear": { "owner": "@ada" } }),
    )
    .await;
    assert_eq!(f.rows("jeff/runs", ".gear.owner=@ada").await.len(), 1);
    assert_eq!(f.rows("jeff/runs", ".gear.owner=@@ada").await.len(), 0);
    assert_eq!(f.rows("jeff/runs", ".created.by=@@ada").await.len(), 0);
    assert_eq!(
        f.refusal(
            "jeff/runs",
            json!({ "entity": { "eid": "$x" }, "gear": { "owner": "@@ada" } })
        )
        .await,
        "no person @@ada"
    );
}

/// On PostgreSQL a page is one statement on a read-only session of the
/// reads' own pool: after a read of rows whose stamps show names, the
/// connection that read ran the page's SELECT last — which also read the
/// names — with no `BEGIN … COMMIT` around it and no second statement,
/// once the app's catalog is kept.
#[tokio::test]
async fn a_page_on_postgres_is_one_statement() {
    let fixture = fixture().await;
    let Some(url) = fixture.database_url() else {
        eprintln!("a test of PostgreSQL's reads, skipped on SQLite");
        return;
    };
    let store = &fixture.store;
    for miles in [3, 5] {
        fixture
            .apply(
                "jeff/runs",
                json!({ "entity": { "eid": "$r" }, "jog": { "miles": miles } }),
            )
            .await;
    }
    // The first read also reads the app's catalog (in a snapshot); the
    // second finds it kept.
    store.query("jeff/runs", ".jog!").await.unwrap();
    let listing = store.query("jeff/runs", ".jog!&.created!").await.unwrap();
    assert_eq!(listing.rows[0]["created"]["by"]["name"], "Ada Lovelace");
    let own = common::server_client(&url).await;
    let last: Vec<String> = own
        .query(
            "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
            &[&shed_store::POSTGRES_READS_APPLICATION],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(last.len(), 1, "one connection read: {last:?}");
    assert!(
        last[0].starts_with("SELECT") && last[0].contains("people p"),
        "the read's last statement is the page, names and all: {}",
        last[0]
    );
    assert!(
        store
            .query("jeff/runs", ".jog!&.jog.miles>=4")
            .await
            .unwrap()
            .rows
            .len()
            == 1,
        "a second read on the same session"
    );
}
