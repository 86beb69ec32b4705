//! A space's activity: each write to an app's data is one row, with who,
//! via, door, command and client and the entities it wrote, read newest
//! first by a keyset, narrowed, and only for the apps asked; refusals kept
//! bounded per space.

use serde_json::json;
use shed_store::activity::{
    Narrow, NewRefusal, REFUSAL_RATE_WINDOW, REFUSALS_KEPT_FOR, REFUSALS_KEPT_PER_CALLER,
    REFUSALS_PER_SPACE,
};
use shed_store::{Actor, Through};

use crate::common::{Fixture, fixture};

fn through(door: &str, command: &str, client: Option<&str>) -> Through {
    Through {
        door: door.into(),
        command: Some(command.into()),
        client: client.map(str::to_string),
    }
}

// One write of two entities is one row, saying who, via whom, through
// which door, command and client, and which entities, by the version it
// committed as.
#[tokio::test]
async fn a_write_of_two_entities_is_one_row_of_activity_saying_how_it_came() {
    let f = fixture().await;
    let agent = Actor {
        person: f.ada.eid.clone(),
        via: Some("agent:job-3".into()),
        through: Some(through("broker", "log_run", Some("job-3"))),
    };
    let applied = f
        .store
        .apply(
            "jeff/runs",
            &agent,
            json!([
                { "entity": { "eid": "$a" }, "jog": { "miles": 1 } },
                { "entity": { "eid": "$b" }, "jog": { "miles": 2 } }
            ]),
            None,
        )
        .await
        .unwrap();
    let apps = vec!["jeff/runs".to_string()];
    let writes = f
        .store
        .writes("jeff", &apps, &Narrow::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(writes.len(), 1);
    let w = &writes[0];
    assert_eq!((w.app.as_str(), w.version), ("jeff/runs", applied.version));
    assert_eq!(w.by, f.ada);
    assert_eq!(w.via.as_deref(), Some("agent:job-3"));
    assert_eq!(w.through, through("broker", "log_run", Some("job-3")));
    assert_eq!(w.entities, applied.entities);
    assert!(w.at.ends_with('Z'));
    assert_eq!(
        f.store
            .write_of("jeff/runs", applied.version)
            .await
            .unwrap(),
        Some(w.clone())
    );
    // A refused write keeps no row.
    f.refusal(
        "jeff/runs",
        json!({ "entity": { "eid": "$c" }, "nope": {} }),
    )
    .await;
    let all = Narrow::default();
    let after = f.store.writes("jeff", &apps, &all, None, 10).await.unwrap();
    assert_eq!(after.len(), 1);
}

// Newest first, paged by id; narrowed by app, person, via and command;
// only the apps asked for, only the space asked for.
#[tokio::test]
async fn writes_page_newest_first_and_narrow_to_what_was_asked() {
    let f = fixture().await;
    let bob = f.store.add_person("bob", "Bob").await.unwrap();
    let runs = vec!["jeff/runs".to_string()];
    for app in ["jeff/keep", "other/runs"] {
        f.store
            .declare(app, &crate::common::run_club())
            .await
            .unwrap();
    }
    let by_bob = Actor {
        person: bob.eid.clone(),
        via: None,
        through: Some(through("mcp", "graph_apply", Some("Claude (claimed)"))),
    };
    for i in 0..5 {
        let actor = if i % 2 == 0 {
            f.as_ada()
        } else {
            by_bob.clone()
        };
        let body = json!({ "entity": { "eid": "$r" }, "jog": { "miles": i } });
        f.store
            .apply("jeff/runs", &actor, body.clone(), None)
            .await
            .unwrap();
        f.store
            .apply("jeff/keep", &actor, body.clone(), None)
            .await
            .unwrap();
        f.store
            .apply("other/runs", &actor, body, None)
            .await
            .unwrap();
    }
    let all = Narrow::default();
    let first = f.store.writes("jeff", &runs, &all, None, 3).await.unwrap();
    let versions: Vec<u64> = first.iter().map(|w| w.version).collect();
    assert_eq!(versions, [5, 4, 3]);
    let next = f.store.writes("jeff", &runs, &all, Some(first[2].id), 3);
    let versions: Vec<u64> = next.await.unwrap().iter().map(|w| w.version).collect();
    assert_eq!(versions, [2, 1]);

    let both = vec!["jeff/runs".to_string(), "jeff/keep".to_string()];
    assert_eq!(
        f.store
            .writes("jeff", &both, &all, None, 100)
            .await
            .unwrap()
            .len(),
        10
    );
    let keep_only = Narrow {
        app: Some("jeff/keep".into()),
        ..Narrow::default()
    };
    let keep = f
        .store
        .writes("jeff", &both, &keep_only, None, 100)
        .await
        .unwrap();
    assert!(keep.len() == 5 && keep.iter().all(|w| w.app == "jeff/keep"));
    let bobs = Narrow {
        by: Some(bob.eid.clone()),
        command: Some("graph_apply".into()),
        ..Narrow::default()
    };
    let bob_wrote = f
        .store
        .writes("jeff", &both, &bobs, None, 100)
        .await
        .unwrap();
    assert!(bob_wrote.len() == 4 && bob_wrote.iter().all(|w| w.by == bob));
    let by_agent = Narrow {
        via: Some("agent:job-1".into()),
        ..Narrow::default()
    };
    assert!(
        f.store
            .writes("jeff", &both, &by_agent, None, 100)
            .await
            .unwrap()
            .is_empty()
    );
    // No app asked for, none answered; another space's apps are not this one's.
    assert!(
        f.store
            .writes("jeff", &[], &all, None, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let elsewhere = vec!["other/runs".to_string()];
    assert!(
        f.store
            .writes("jeff", &elsewhere, &all, None, 100)
            .await
            .unwrap()
            .is_empty()
    );
}

// A space keeps at most REFUSALS_PER_SPACE refusals, the oldest forgotten
// first; another space's are its own.
#[tokio::test]
async fn refusals_are_kept_bounded_per_space_the_oldest_forgotten_first() {
    let f = fixture().await;
    // Each of many agents, so no caller's rate is reached.
    let refusal = |app: &str, n: i64| NewRefusal {
        app: app.into(),
        by: f.ada.eid.clone(),
        via: Some(format!("agent:job-{}", n / REFUSALS_KEPT_PER_CALLER)),
        through: through("broker", "log_run", Some("job-3")),
        sentence: format!("refusal {n}"),
    };
    f.store
        .record_refusal(refusal("other/runs", 0))
        .await
        .unwrap();
    for n in 1..=REFUSALS_PER_SPACE + 5 {
        f.store
            .record_refusal(refusal("jeff/runs", n))
            .await
            .unwrap();
    }
    let apps = vec!["jeff/runs".to_string()];
    let mut kept = Vec::new();
    let mut before = None;
    loop {
        let page = f.store.refusals("jeff", &apps, before, 400).await.unwrap();
        let Some(last) = page.last() else { break };
        before = Some(last.id);
        kept.extend(page);
    }
    assert_eq!(kept.len() as i64, REFUSALS_PER_SPACE);
    assert_eq!(
        kept[0].sentence,
        format!("refusal {}", REFUSALS_PER_SPACE + 5)
    );
    assert_eq!(kept.last().unwrap().sentence, "refusal 6");
    assert_eq!(kept[0].by, f.ada);
    assert_eq!(kept[0].through, through("broker", "log_run", Some("job-3")));
    let other = vec!["other/runs".to_string()];
    let theirs = f.store.refusals("other", &other, None, 10).await.unwrap();
    assert_eq!(theirs.len(), 1);
}

/// Makes every kept refusal a second older than `by`, behind the store's
/// back.
async fn age_refusals(f: &Fixture, by: std::time::Duration) {
    let aged = format!(
        "UPDATE refusals SET at = at - {}",
        by.as_micros() + 1_000_000
    );
    match f.database_url() {
        None => {
            rusqlite::Connection::open(f._dir.path().join("shed.db"))
                .unwrap()
                .execute(&aged, [])
                .unwrap();
        }
        Some(url) => {
            crate::common::server_client(&url)
                .await
                .batch_execute(&aged)
                .await
                .unwrap();
        }
    }
}

// A refusal past REFUSALS_KEPT_FOR is not shown, though no later refusal in
// its space has yet forgotten it; a fresh one beside it is.
#[tokio::test]
async fn a_refusal_older_than_it_is_kept_for_is_not_shown() {
    let f = fixture().await;
    let refusal = |sentence: &str| NewRefusal {
        app: "jeff/runs".into(),
        by: f.ada.eid.clone(),
        via: None,
        through: through("mcp", "log_run", None),
        sentence: sentence.into(),
    };
    f.store.record_refusal(refusal("old")).await.unwrap();
    age_refusals(&f, REFUSALS_KEPT_FOR).await;
    let apps = vec!["jeff/runs".to_string()];
    let shown = f.store.refusals("jeff", &apps, None, 10).await.unwrap();
    assert!(shown.is_empty(), "{shown:?}");
    f.store.record_refusal(refusal("new")).await.unwrap();
    let shown = f.store.refusals("jeff", &apps, None, 10).await.unwrap();
    let sentences: Vec<&str> = shown.iter().map(|r| r.sentence.as_str()).collect();
    assert_eq!(sentences, ["new"]);
}

// One caller — a person, or one agent of theirs — keeps at most
// REFUSALS_KEPT_PER_CALLER refusals in a space within REFUSAL_RATE_WINDOW;
// past it a refusal is not kept, so a flood of its refused calls cannot
// push out what was kept before it. Another caller's, and the same
// caller's in another space, are kept still.
#[tokio::test]
async fn a_caller_keeps_at_most_its_rate_of_refusals_and_the_rest_are_not_kept() {
    let f = fixture().await;
    let refusal = |app: &str, via: Option<&str>, sentence: String| NewRefusal {
        app: app.into(),
        by: f.ada.eid.clone(),
        via: via.map(str::to_string),
        through: through("mcp", "log_run", Some("flood")),
        sentence,
    };
    f.store
        .record_refusal(refusal("jeff/runs", None, "ada's own".into()))
        .await
        .unwrap();
    let flood = REFUSALS_KEPT_PER_CALLER + 50;
    let mut kept = 0;
    for n in 0..flood {
        let agent = refusal("jeff/runs", Some("agent:job-3"), format!("agent {n}"));
        if f.store.record_refusal(agent).await.unwrap() {
            kept += 1;
        }
    }
    assert_eq!(kept, REFUSALS_KEPT_PER_CALLER);
    let other_agent = refusal("jeff/runs", Some("agent:job-4"), "job-4's".into());
    assert!(f.store.record_refusal(other_agent).await.unwrap());
    let elsewhere = refusal("other/runs", Some("agent:job-3"), "elsewhere".into());
    assert!(f.store.record_refusal(elsewhere).await.unwrap());
    let apps = vec!["jeff/runs".to_string()];
    let shown = f.store.refusals("jeff", &apps, None, 1_000).await.unwrap();
    let sentences: Vec<&str> = shown.iter().map(|r| r.sentence.as_str()).collect();
    assert_eq!(shown.len() as i64, REFUSALS_KEPT_PER_CALLER + 2);
    assert_eq!(sentences[0], "job-4's");
    assert_eq!(
        sentences[1],
        format!("agent {}", REFUSALS_KEPT_PER_CALLER - 1)
    );
    assert_eq!(*sentences.last().unwrap(), "ada's own");
    // A window later, the caller's refusals are kept again.
    age_refusals(&f, REFUSAL_RATE_WINDOW).await;
    let later = refusal("jeff/runs", Some("agent:job-3"), "later".into());
    assert!(f.store.record_refusal(later).await.unwrap());
}
