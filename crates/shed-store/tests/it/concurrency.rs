//! Concurrent writers never lose an update: 8 tasks applying 1,000 new
//! entities each at once leave 8,000 entities numbered exactly 1…8000; a
//! write refused inside a group commit takes none of the others with it.

use crate::common;

use serde_json::json;
use shed_store::ColumnType;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_tasks_of_a_thousand_applies() {
    let fixture =
        common::with_jog(&[("miles", ColumnType::Number), ("task", ColumnType::Number)]).await;
    let (store, actor) = (&fixture.store, fixture.as_ada());
    let mut tasks = Vec::new();
    for t in 0..8 {
        let store = store.clone();
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut eids = Vec::new();
            for i in 0..1000 {
                let a = store
                    .apply(
                        "jeff/runs",
                        &actor,
                        json!({ "entity": { "eid": "$r" }, "jog": { "miles": i, "task": t } }),
                        None,
                    )
                    .await
                    .unwrap();
                eids.push(a.entities[0].clone());
            }
            eids
        }));
    }
    let mut written = Vec::new();
    for t in tasks {
        written.extend(t.await.unwrap());
    }
    assert_eq!(store.data_version("jeff/runs").await.unwrap(), 8000);
    let mut nums = Vec::new();
    let mut seen = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let line = match &next {
            Some(c) => format!(".jog!&limit=1000&after={c}"),
            None => ".jog!&limit=1000".to_string(),
        };
        let page = store.query("jeff/runs", &line).await.unwrap();
        for row in &page.rows {
            nums.push(row["entity"]["num"].as_u64().unwrap());
            seen.push(row["entity"]["eid"].as_str().unwrap().to_string());
        }
        match page.next {
            Some(c) => next = Some(c),
            None => break,
        }
    }
    nums.sort_unstable();
    assert_eq!(nums, (1..=8000).collect::<Vec<u64>>());
    seen.sort();
    written.sort();
    assert_eq!(seen, written);
    for t in 0..8 {
        assert_eq!(
            store
                .query("jeff/runs", &format!(".jog.task={t}&limit=1000"))
                .await
                .unwrap()
                .rows
                .len(),
            1000
        );
    }
}

/// Refused writes grouped with accepted ones take nothing down with them: 4
/// tasks each send 300 applies, every third one refused (an unknown
/// component, or a second bundle naming an alias another entity holds); each
/// refused apply answers its sentence and leaves nothing, every accepted one
/// is there with its history, and the app data version counts only them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_in_a_group_leave_the_others_whole() {
    let fixture = common::with_jog(&[("task", ColumnType::Number)]).await;
    let (store, actor) = (&fixture.store, fixture.as_ada());
    store
        .apply(
            "jeff/runs",
            &actor,
            json!({ "entity": { "eid": "$r", "alias": "held" }, "jog": { "task": -1 } }),
            None,
        )
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for t in 0..4 {
        let store = store.clone();
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut kept = Vec::new();
            for i in 0..300 {
                let body = match i % 6 {
                    2 => json!({ "entity": { "eid": "$r" }, "nope": { "x": 1 } }),
                    5 => json!([
                        { "entity": { "eid": "$a" }, "jog": { "task": t } },
                        { "entity": { "eid": "$b", "alias": "held" }, "jog": { "task": t } }
                    ]),
                    _ => json!({ "entity": { "eid": "$r" }, "jog": { "task": t } }),
                };
                match store.apply("jeff/runs", &actor, body, None).await {
                    Ok(a) => kept.push(a.entities[0].clone()),
                    Err(e) if i % 6 == 2 => {
                        assert_eq!(e.to_string(), "nope is not a component of jeff/runs")
                    }
                    Err(e) if i % 6 == 5 => {
                        assert_eq!(e.to_string(), "alias held is taken in jeff/runs")
                    }
                    Err(e) => panic!("apply {i} of task {t} was refused: {e}"),
                }
            }
            kept
        }));
    }
    let mut kept = Vec::new();
    for t in tasks {
        kept.extend(t.await.unwrap());
    }
    assert_eq!(kept.len(), 4 * 200);
    assert_eq!(store.data_version("jeff/runs").await.unwrap(), 1 + 800);
    let rows = store
        .query("jeff/runs", ".jog.task>=0&limit=1000")
        .await
        .unwrap()
        .rows;
    let mut seen: Vec<String> = rows
        .iter()
        .map(|r| r["entity"]["eid"].as_str().unwrap().to_string())
        .collect();
    let mut nums: Vec<u64> = rows
        .iter()
        .map(|r| r["entity"]["num"].as_u64().unwrap())
        .collect();
    seen.sort();
    kept.sort();
    assert_eq!(seen, kept);
    nums.sort_unstable();
    assert_eq!(nums, (2..=801).collect::<Vec<u64>>());
    for eid in kept.iter().take(20) {
        assert_eq!(store.history("jeff/runs", eid).await.unwrap().len(), 1);
    }
}

/// Applies `bodies` to `jeff/runs` all at once (so the writer takes them
/// together); their answers in order.
async fn at_once(
    store: &shed_store::Store,
    actor: &shed_store::Actor,
    bodies: impl Iterator<Item = serde_json::Value>,
) -> Vec<Result<shed_store::Applied, shed_store::StoreError>> {
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(AT_ONCE));
    let writes: Vec<_> = bodies
        .map(|body| {
            let (store, actor, start) = (store.clone(), actor.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                store.apply("jeff/runs", &actor, body, None).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for write in writes {
        answers.push(write.await.unwrap());
    }
    answers
}

/// Writes sent at once, each round.
const AT_ONCE: usize = 8;
/// Rounds of [`AT_ONCE`] writes.
const ROUNDS: usize = 20;

/// A group commit where one write is refused after it has written: each
/// round, 8 applies are sent at once (so the writer takes them together);
/// one moves a counter in its first bundle and is refused by a stale `was`
/// in its second. It answers the `was` sentence and leaves nothing (the
/// counter unmoved), and the 7 others land.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_refused_inside_a_group_refuses_only_itself() {
    let fixture = common::with_jog(&[("task", ColumnType::Number)]).await;
    let (store, actor) = (&fixture.store, fixture.as_ada());
    let made = fixture
        .apply(
            "jeff/runs",
            json!([
                { "entity": { "eid": "$c", "alias": "counter" }, "jog": { "task": 0 } },
                { "entity": { "eid": "$s", "alias": "stale" }, "jog": { "task": 0 } }
            ]),
        )
        .await;
    assert_eq!(made.version, 1);
    for round in 0..ROUNDS {
        let refused_at = round % AT_ONCE;
        let bodies = (0..AT_ONCE).map(|w| {
            if w == refused_at {
                json!([
                    { "entity": { "eid": "counter" }, "jog": { "task": 1000 } },
                    { "entity": { "eid": "stale" }, "was": 99, "jog": { "task": 1 } }
                ])
            } else {
                json!({ "entity": { "eid": "$r" }, "jog": { "task": round * AT_ONCE + w + 1 } })
            }
        });
        for (w, answered) in at_once(store, &actor, bodies).await.into_iter().enumerate() {
            if w == refused_at {
                assert_eq!(
                    answered.unwrap_err().to_string(),
                    "stale changed since you read it (version 1, you had 99)",
                    "round {round}"
                );
            } else {
                let applied = answered.unwrap_or_else(|e| panic!("round {round}, write {w}: {e}"));
                assert_eq!(applied.entities.len(), 1);
            }
        }
    }
    let landed = (AT_ONCE - 1) * ROUNDS;
    assert_eq!(
        store.data_version("jeff/runs").await.unwrap(),
        1 + landed as u64
    );
    let counter = fixture.rows("jeff/runs", "eid=counter&.jog!").await;
    assert_eq!(
        counter[0]["jog"]["task"].as_f64(),
        Some(0.0),
        "the refused writes left nothing"
    );
    assert_eq!(counter[0]["entity"]["version"], json!(1));
    let rows = fixture.rows("jeff/runs", ".jog.task>=1&limit=1000").await;
    assert_eq!(rows.len(), landed);
}

/// A group commit where one write is refused by the server itself after
/// its statements were sent (a text holding NUL, which PostgreSQL's text
/// cannot hold), so the write after it in the group ran in an aborted
/// transaction: each round, 8 applies sent at once, one of them that one.
/// It is refused, and the 7 others land whole. On SQLite, whose text holds
/// NUL, all 8 land.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_the_server_refuses_inside_a_group_refuses_only_itself() {
    let fixture =
        common::with_jog(&[("task", ColumnType::Number), ("who", ColumnType::Text)]).await;
    let (store, actor) = (&fixture.store, fixture.as_ada());
    let on_postgres = fixture.database_url().is_some();
    let mut landed = 0;
    for round in 0..ROUNDS {
        let refused_at = round % AT_ONCE;
        let bodies = (0..AT_ONCE).map(|w| {
            let who = if w == refused_at { "nul\u{0}here" } else { "ada" };
            json!({ "entity": { "eid": "$r" }, "jog": { "task": round * AT_ONCE + w + 1, "who": who } })
        });
        for (w, answered) in at_once(store, &actor, bodies).await.into_iter().enumerate() {
            match answered {
                Err(_) if w == refused_at && on_postgres => {}
                Ok(applied) if w != refused_at || !on_postgres => {
                    assert_eq!(applied.entities.len(), 1);
                    landed += 1;
                }
                other => panic!("round {round}, write {w}: {:?}", other.map(|a| a.version)),
            }
        }
    }
    assert_eq!(
        landed,
        if on_postgres {
            (AT_ONCE - 1) * ROUNDS
        } else {
            AT_ONCE * ROUNDS
        }
    );
    assert_eq!(
        store.data_version("jeff/runs").await.unwrap(),
        landed as u64
    );
    let rows = fixture.rows("jeff/runs", ".jog.task>=1&limit=1000").await;
    assert_eq!(rows.len(), landed);
    let mut nums: Vec<u64> = rows
        .iter()
        .map(|r| r["entity"]["num"].as_u64().unwrap())
        .collect();
    nums.sort_unstable();
    assert_eq!(nums, (1..=landed as u64).collect::<Vec<u64>>());
}
