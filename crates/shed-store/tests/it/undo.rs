//! An entity read with its versions (each field before → after), and
//! undoing a write: every entity it changed back as it was, what it made
//! tombstoned, what it tombstoned revived — as a new write, itself undoable
//! — and refused, changing nothing, when an entity changed since.

use crate::common;

use common::fixture;
use serde_json::{Value, json};
use shed_store::{Actor, StoreError, Through};

const APP: &str = "jeff/runs";

/// Ada through the terminal's `undo`, as the host writes an undo.
fn undoer(f: &common::Fixture) -> Actor {
    Actor::person(
        f.ada.eid.clone(),
        Through {
            door: "terminal".into(),
            command: Some("undo".into()),
            client: None,
        },
    )
}

/// The row of `eid` carrying jog, gear, doc and edges; `None` once tombstoned.
async fn row(f: &common::Fixture, eid: &str) -> Option<Value> {
    f.rows(APP, &format!("eid={eid}&.jog?&.gear?&.doc?&.edges?"))
        .await
        .into_iter()
        .next()
}

/// A new entity wearing jog with `miles`: its eid.
async fn jog(f: &common::Fixture, miles: u32) -> String {
    let made = f
        .apply(
            APP,
            json!({ "entity": { "eid": "$a" }, "jog": { "miles": miles } }),
        )
        .await;
    made.entities[0].clone()
}

#[tokio::test]
async fn an_entity_reads_with_each_version_field_by_field_newest_first() {
    let f = fixture().await;
    let made = f
        .apply(
            APP,
            json!([
                { "entity": { "eid": "$b" }, "jog": { "miles": 1 } },
                { "entity": { "eid": "$a", "alias": "tue" }, "jog": { "who": "Ada", "miles": 5 },
                  "edges": [{ "rel": "next", "to": "$b" }] }
            ]),
        )
        .await;
    let (a, b) = (made.aliases["$a"].clone(), made.aliases["$b"].clone());
    let agent = Actor {
        via: Some("agent:job-3".into()),
        through: Some(Through {
            door: "broker".into(),
            command: Some("log_run".into()),
            client: Some("job-3".into()),
        }),
        ..f.as_ada()
    };
    f.store
        .apply(
            APP,
            &agent,
            json!({ "entity": { "eid": "tue", "alias": null }, "jog": { "miles": 6 }, "gear": { "ready": true } }),
            None,
        )
        .await
        .unwrap();
    let read = f.store.entity(APP, &a).await.unwrap();
    assert_eq!(
        (read.version, read.alias.as_deref(), read.tombstoned),
        (2, None, false)
    );
    assert_eq!(read.created.by.handle, "ada");
    assert_eq!(read.updated.via.as_deref(), Some("agent:job-3"));
    assert_eq!(read.edges_out.len(), 1);
    assert_eq!(
        (
            read.edges_out[0].rel.as_str(),
            read.edges_out[0].eid.as_str()
        ),
        ("next", b.as_str())
    );
    let newest = &read.versions[0];
    assert_eq!((newest.version, newest.write.as_str()), (2, "jeff/runs@2"));
    assert_eq!(newest.stamp.via.as_deref(), Some("agent:job-3"));
    assert_eq!(
        newest.through.as_ref().unwrap().command.as_deref(),
        Some("log_run")
    );
    let said: Vec<String> = newest
        .changed
        .iter()
        .map(|c| format!("{}: {} → {}", c.field, c.before, c.after))
        .collect();
    assert_eq!(
        said,
        [
            r#"alias: "tue" → null"#,
            "gear.ready: null → true",
            "jog.miles: 5 → 6"
        ]
    );
    let first = &read.versions[1];
    assert_eq!((first.version, first.write.as_str()), (1, "jeff/runs@1"));
    assert!(
        first
            .changed
            .iter()
            .any(|c| c.field == "jog.who" && c.after == "Ada")
    );
    // The edge in, read from the other end.
    let other = f.store.entity(APP, &b).await.unwrap();
    assert_eq!(
        (
            other.edges_in[0].rel.as_str(),
            other.edges_in[0].eid.as_str()
        ),
        ("next", a.as_str())
    );
    assert!(other.edges_out.is_empty());
    let missing = f.store.entity(APP, "nobody-here").await.unwrap_err();
    assert_eq!(missing.to_string(), "no entity nobody-here in jeff/runs");
}

#[tokio::test]
async fn undo_puts_every_entity_back_tombstones_what_it_made_revives_what_it_deleted() {
    let f = fixture().await;
    let setup = f
        .apply(
            APP,
            json!([
                { "entity": { "eid": "$b" }, "jog": { "miles": 1 } },
                { "entity": { "eid": "$c" }, "doc": { "title": "Cedar loop" } },
                { "entity": { "eid": "$a", "alias": "tue" },
                  "jog": { "who": "Ada", "miles": 5, "at": "2026-09-01" },
                  "doc": { "title": "Tuesday" }, "edges": [{ "rel": "next", "to": "$b" }] }
            ]),
        )
        .await;
    let (a, b, c) = (
        &setup.aliases["$a"],
        &setup.aliases["$b"],
        &setup.aliases["$c"],
    );
    let write = f
        .apply(
            APP,
            json!([
                { "entity": { "eid": "$d" }, "jog": { "miles": 9 } },
                { "entity": { "eid": a, "alias": "wed" }, "jog": { "miles": 6, "at": "2026-10-01" },
                  "doc": null, "gear": { "ready": true, "owner": "$d" },
                  "edges": [{ "rel": "next", "to": b, "drop": true }, { "rel": "next", "to": "$d" }] },
                { "entity": { "eid": c }, "tombstone": {} }
            ]),
        )
        .await;
    let d = write.aliases["$d"].clone();
    let after_a = row(&f, a).await.unwrap();
    assert!(f.rows(APP, "q=cedar").await.is_empty());

    let undone = f.store.undo(APP, write.version, &undoer(&f)).await.unwrap();
    assert_eq!(undone.write, "jeff/runs@2");
    assert_eq!(undone.applied.version, 3);
    let mut written = undone.applied.entities.clone();
    written.sort();
    let mut expected = vec![a.clone(), c.clone(), d.clone()];
    expected.sort();
    assert_eq!(written, expected);
    let back = row(&f, a).await.unwrap();
    assert_eq!(back["jog"]["miles"], 5);
    assert_eq!(back["jog"]["at"], "2026-09-01T00:00:00Z");
    assert_eq!(
        back["doc"]["title"], "Tuesday",
        "a removed component comes back"
    );
    assert!(
        back.get("gear").is_none(),
        "a component the write added is removed"
    );
    assert_eq!(back["entity"]["alias"], "tue");
    assert_eq!(back["edges"], json!([{ "rel": "next", "to": b }]));
    assert_eq!(row(&f, &d).await, None, "what the write made is tombstoned");
    assert_eq!(
        row(&f, c).await.unwrap()["doc"]["title"],
        "Cedar loop",
        "revived"
    );
    assert_eq!(
        common::eids(&f.rows(APP, "q=cedar").await),
        [c.as_str()],
        "found by its text again"
    );

    // One write of activity and one version of each entity, attributed.
    let kept = f.store.write_of(APP, 3).await.unwrap().unwrap();
    assert_eq!(kept.via.as_deref(), Some("undo of jeff/runs@2"));
    assert_eq!(kept.through.command.as_deref(), Some("undo"));
    assert_eq!(kept.by.handle, "ada");
    let read = f.store.entity(APP, a).await.unwrap();
    assert_eq!(read.versions[0].write, "jeff/runs@3");
    assert_eq!(
        read.versions[0].stamp.via.as_deref(),
        Some("undo of jeff/runs@2")
    );
    let revived = f.store.entity(APP, c).await.unwrap();
    assert_eq!(revived.versions[0].changed[0].field, "tombstoned");
    assert_eq!(revived.versions[0].changed[0].after, json!(false));

    // The undo undone: the write's result again.
    let again = f.store.undo(APP, 3, &undoer(&f)).await.unwrap();
    assert_eq!(again.applied.version, 4);
    let redone = row(&f, a).await.unwrap();
    assert_eq!(redone["jog"], after_a["jog"]);
    assert_eq!(
        redone["gear"], after_a["gear"],
        "a ref to what the undo revived"
    );
    assert_eq!(redone["gear"]["owner"]["eid"], json!(d));
    assert!(redone.get("doc").is_none());
    assert_eq!(redone["entity"]["alias"], "wed");
    assert_eq!(redone["edges"], json!([{ "rel": "next", "to": d }]));
    assert_eq!(row(&f, &d).await.unwrap()["jog"]["miles"], 9, "revived");
    assert_eq!(row(&f, c).await, None, "tombstoned again");
}

#[tokio::test]
async fn undo_after_a_later_change_is_refused_and_changes_nothing() {
    let f = fixture().await;
    let a = jog(&f, 5).await;
    f.apply(
        APP,
        json!({ "entity": { "eid": a }, "jog": { "miles": 6 } }),
    )
    .await;
    let bob = f.store.add_person("bob", "Bob").await.unwrap();
    let agent = Actor {
        person: bob.eid.clone(),
        via: Some("agent:job-7".into()),
        through: None,
    };
    f.store
        .apply(
            APP,
            &agent,
            json!({ "entity": { "eid": a }, "jog": { "miles": 7 } }),
            None,
        )
        .await
        .unwrap();
    let at = f.store.entity(APP, &a).await.unwrap().versions[0]
        .stamp
        .at
        .clone();
    let refused = f.store.undo(APP, 2, &undoer(&f)).await.unwrap_err();
    assert!(
        matches!(refused, StoreError::ChangedSince(_)),
        "{refused:?}"
    );
    assert_eq!(
        refused.to_string(),
        format!(
            "cannot undo jeff/runs@2: {a} changed since — @bob (agent:job-7) wrote it at {at} \
             (jeff/runs@3); undo that first"
        )
    );
    assert_eq!(
        f.store.data_version(APP).await.unwrap(),
        3,
        "nothing written"
    );
    assert_eq!(row(&f, &a).await.unwrap()["jog"]["miles"], 7);
    // The latest write undoes, then the one before it.
    f.store.undo(APP, 3, &undoer(&f)).await.unwrap();
    f.store.undo(APP, 2, &undoer(&f)).await.unwrap();
    assert_eq!(row(&f, &a).await.unwrap()["jog"]["miles"], 5);
    let none = f.store.undo(APP, 40, &undoer(&f)).await.unwrap_err();
    assert!(
        matches!(none, StoreError::NotFound(ref s) if s.starts_with("no write jeff/runs@40 — ")),
        "{none}"
    );
}

#[tokio::test]
async fn the_wire_has_no_way_to_revive_a_tombstone() {
    let f = fixture().await;
    let a = jog(&f, 5).await;
    f.apply(APP, json!({ "entity": { "eid": a }, "tombstone": {} }))
        .await;
    assert_eq!(
        f.refusal(APP, json!({ "entity": { "eid": a }, "tombstone": false }))
            .await,
        "tombstone is {} — it deletes the entity, keeping its history"
    );
    assert_eq!(
        f.refusal(
            APP,
            json!({ "entity": { "eid": a }, "jog": { "miles": 6 } })
        )
        .await,
        format!("no entity {a} in jeff/runs")
    );
    assert_eq!(row(&f, &a).await, None);
    // Its page still reads, tombstoned, with its history.
    let read = f.store.entity(APP, &a).await.unwrap();
    assert!(read.tombstoned);
    assert_eq!(read.versions[0].changed[0].field, "tombstoned");
}

#[tokio::test]
async fn an_alias_the_write_moved_goes_back_once_its_new_holder_is_gone() {
    let f = fixture().await;
    let setup = f
        .apply(
            APP,
            json!({ "entity": { "eid": "$a", "alias": "tue" }, "jog": { "miles": 5 } }),
        )
        .await;
    let a = &setup.entities[0];
    // The write moves tue from a to a new entity.
    let write = f
        .apply(
            APP,
            json!([
                { "entity": { "eid": a, "alias": null } },
                { "entity": { "eid": "$b", "alias": "tue" }, "jog": { "miles": 6 } }
            ]),
        )
        .await;
    let b = &write.aliases["$b"];
    f.store.undo(APP, write.version, &undoer(&f)).await.unwrap();
    assert_eq!(row(&f, "tue").await.unwrap()["entity"]["eid"], json!(a));
    assert_eq!(row(&f, b).await, None);
    // And undone again: tue is the new entity's once more.
    f.store.undo(APP, 3, &undoer(&f)).await.unwrap();
    assert_eq!(row(&f, "tue").await.unwrap()["entity"]["eid"], json!(b));
    let read = f.store.entity(APP, a).await.unwrap();
    assert_eq!(read.alias, None);
    assert_eq!(
        read.versions.len(),
        4,
        "one version per write, however many bundles"
    );
}

#[tokio::test]
async fn what_the_apply_refuses_of_an_undo_is_said_as_the_undo_s() {
    let f = fixture().await;
    let (a, x) = (jog(&f, 5).await, jog(&f, 6).await);
    let linked = f
        .apply(
            APP,
            json!({ "entity": { "eid": a }, "edges": [{ "rel": "next", "to": x }] }),
        )
        .await;
    f.apply(APP, json!({ "entity": { "eid": x }, "tombstone": {} }))
        .await;
    let refused = f
        .store
        .undo(APP, linked.version, &undoer(&f))
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        StoreError::NotFound(format!(
            "cannot undo jeff/runs@3: no entity {x} in jeff/runs"
        ))
    );
    assert_eq!(
        f.store.data_version(APP).await.unwrap(),
        4,
        "nothing written"
    );
}

/// Issue 34, finding 6: of many undos of a write that made an entity, sent
/// at once, one tombstones it and every other reads the conflict's
/// sentence naming that undo — never "no entity", though the entity is
/// tombstoned between their read and their write.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_concurrent_undos_of_one_write_one_wins_and_the_others_read_the_conflict() {
    const UNDOS: usize = 24;
    let f = fixture().await;
    jog(&f, 5).await;
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(UNDOS));
    let mut undos = tokio::task::JoinSet::new();
    for _ in 0..UNDOS {
        let (store, actor, start) = (f.store.clone(), undoer(&f), start.clone());
        undos.spawn(async move {
            start.wait().await;
            store.undo(APP, 1, &actor).await
        });
    }
    let answers = undos.join_all().await;
    let won = answers.iter().filter(|a| a.is_ok()).count();
    assert_eq!(won, 1, "{answers:?}");
    for answer in answers.iter().filter_map(|a| a.as_ref().err()) {
        assert!(
            matches!(answer, StoreError::Conflict(s)
                if s == "cannot undo jeff/runs@1: already undone by jeff/runs@2 — undo jeff/runs@2 \
                          to bring it back"),
            "{answer:?}"
        );
    }
    assert_eq!(f.store.data_version(APP).await.unwrap(), 2);
}

/// Writes `versions` versions of entity `eid`, each `who` the version's
/// number padded to `bytes` bytes, sent `at_once` at a time.
async fn versions_of(f: &common::Fixture, eid: &str, versions: usize, bytes: usize) {
    const AT_ONCE: usize = 64;
    for first in (0..versions).step_by(AT_ONCE) {
        let mut writes = tokio::task::JoinSet::new();
        for n in first..versions.min(first + AT_ONCE) {
            let (store, actor) = (f.store.clone(), f.as_ada());
            let body = json!({ "entity": { "eid": eid }, "jog": { "who": format!("{n:06}{}", "x".repeat(bytes - 6)) } });
            writes.spawn(async move { store.apply(APP, &actor, body, None).await.unwrap() });
        }
        writes.join_all().await;
    }
}

/// Issue 34, finding 1: an entity written 10,000 times reads its newest
/// [`VERSIONS_SHOWN`] versions only, counting the older ones, its record
/// within the bound `bounds.md` states for it; its newest write undoes. Its
/// newest versions, all a read or an undo of them reads back to, hold
/// values at the value's bound; the older ones 1 KiB values, so the seeding
/// stays quick (640 MB of history took 50 s on SQLite).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_entity_written_ten_thousand_times_reads_a_bounded_record_and_undoes() {
    use shed_store::undo::{HISTORY_LOOKBACK, VERSIONS_SHOWN};
    use shed_store::wire::MAX_VALUE_BYTES;
    const VERSIONS: usize = 10_000;
    const RECORD_BOUND: usize = 8 * 1024 * 1024;
    let f = fixture().await;
    let a = jog(&f, 5).await;
    let largest = VERSIONS_SHOWN + HISTORY_LOOKBACK;
    versions_of(&f, &a, VERSIONS - 1 - largest, 1024).await;
    versions_of(&f, &a, largest, MAX_VALUE_BYTES).await;
    let read = f.store.entity(APP, &a).await.unwrap();
    assert_eq!(read.version, VERSIONS as u64);
    assert_eq!(read.versions.len(), VERSIONS_SHOWN);
    assert_eq!(read.older_versions, VERSIONS - VERSIONS_SHOWN);
    assert_eq!(read.versions[0].version, VERSIONS as u64);
    let newest = &read.versions[0].changed;
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].field, "jog.who");
    assert_eq!(newest[0].before.as_str().unwrap().len(), MAX_VALUE_BYTES);
    // Each shown version's value before and after, and little else: the
    // bound `bounds.md` states for an entity written by single values.
    let bytes = serde_json::to_vec(&read).unwrap().len();
    assert!(
        bytes < RECORD_BOUND,
        "{bytes} bytes, more than {RECORD_BOUND}"
    );

    let newest_write = f.store.data_version(APP).await.unwrap();
    let before = read.versions[0].changed[0].before.clone();
    f.store.undo(APP, newest_write, &undoer(&f)).await.unwrap();
    assert_eq!(row(&f, &a).await.unwrap()["jog"]["who"], before);
}

/// A field set when the entity was made and untouched until a shown
/// version changes it reads its right value before, found walking back
/// through older versions; past [`HISTORY_LOOKBACK`] entries it is said
/// unread, never guessed, and an undo needing it is refused with a
/// sentence naming the write and the bound, changing nothing.
#[tokio::test]
async fn a_value_before_the_shown_versions_is_found_within_the_lookback_and_said_unread_past_it() {
    use shed_store::undo::{HISTORY_LOOKBACK, VERSIONS_SHOWN};
    let f = fixture().await;
    for (eid, writes_between) in [
        ("near", HISTORY_LOOKBACK - 10),
        ("far", VERSIONS_SHOWN + HISTORY_LOOKBACK + 5),
    ] {
        let made = f
            .apply(
                APP,
                json!({ "entity": { "eid": "$a", "alias": eid }, "jog": { "who": "Ada", "miles": 0 } }),
            )
            .await;
        let a = made.entities[0].clone();
        for miles in 1..=writes_between {
            f.apply(
                APP,
                json!({ "entity": { "eid": a }, "jog": { "miles": miles } }),
            )
            .await;
        }
        let renamed = f
            .apply(
                APP,
                json!({ "entity": { "eid": a }, "jog": { "who": "Bob" } }),
            )
            .await;
        let read = f.store.entity(APP, &a).await.unwrap();
        let who = &read.versions[0].changed[0];
        assert_eq!((who.field.as_str(), &who.after), ("jog.who", &json!("Bob")));
        if eid == "near" {
            assert_eq!((&who.before, who.before_unread), (&json!("Ada"), false));
            f.store
                .undo(APP, renamed.version, &undoer(&f))
                .await
                .unwrap();
            assert_eq!(row(&f, &a).await.unwrap()["jog"]["who"], "Ada");
        } else {
            assert_eq!((&who.before, who.before_unread), (&Value::Null, true));
            let refused = f
                .store
                .undo(APP, renamed.version, &undoer(&f))
                .await
                .unwrap_err();
            assert_eq!(
                refused,
                StoreError::Refused(format!(
                    "cannot undo jeff/runs@{}: what {a} was before it is older than the \
                     {HISTORY_LOOKBACK} entries of its history an undo reads back — write its \
                     fields back by hand instead",
                    renamed.version
                ))
            );
            assert_eq!(
                row(&f, &a).await.unwrap()["jog"]["who"],
                "Bob",
                "nothing written"
            );
        }
    }
}

/// Past [`UNDO_LATER_VERSIONS`] later versions an entity counts as changed
/// since, though they left it as the write did (each a field set and its
/// undo): an undo reads no more of them; the sentence names the newest.
#[tokio::test]
async fn past_the_later_versions_an_undo_reads_an_entity_counts_as_changed_since() {
    use shed_store::undo::UNDO_LATER_VERSIONS;
    let f = fixture().await;
    let a = jog(&f, 5).await;
    let write = f
        .apply(
            APP,
            json!({ "entity": { "eid": a }, "jog": { "miles": 6 } }),
        )
        .await;
    let mut last = write.version;
    for _ in 0..UNDO_LATER_VERSIONS / 2 + 1 {
        let set = f
            .apply(
                APP,
                json!({ "entity": { "eid": a }, "gear": { "ready": true } }),
            )
            .await;
        last = f
            .store
            .undo(APP, set.version, &undoer(&f))
            .await
            .unwrap()
            .applied
            .version;
    }
    let refused = f
        .store
        .undo(APP, write.version, &undoer(&f))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, StoreError::ChangedSince(c)
            if c.to_string().starts_with(&format!("cannot undo jeff/runs@2: {a} changed since — @ada (undo of jeff/runs@"))
                && c.to_string().ends_with(&format!(" (jeff/runs@{last}); undo that first"))),
        "{refused}"
    );
    assert_eq!(
        row(&f, &a).await.unwrap()["jog"]["miles"],
        6,
        "nothing written"
    );
}

/// Issue 39: a write undone already says so, naming the undo that stands —
/// not "changed since … undo that first", which would redo it; undoing that
/// undo brings the write back, and it may be undone again.
#[tokio::test]
async fn a_write_undone_already_says_by_which_undo_and_its_undo_brings_it_back() {
    let f = fixture().await;
    jog(&f, 5).await;
    f.store.undo(APP, 1, &undoer(&f)).await.unwrap();
    let already = |by: u64| {
        StoreError::Conflict(format!(
            "cannot undo jeff/runs@1: already undone by jeff/runs@{by} — undo jeff/runs@{by} to \
             bring it back"
        ))
    };
    assert_eq!(
        f.store.undo(APP, 1, &undoer(&f)).await.unwrap_err(),
        already(2)
    );
    assert_eq!(
        f.store.data_version(APP).await.unwrap(),
        2,
        "nothing written"
    );
    // The undo undone (v3): the write stands again, and undoes again (v4).
    f.store.undo(APP, 2, &undoer(&f)).await.unwrap();
    f.store.undo(APP, 1, &undoer(&f)).await.unwrap();
    assert_eq!(
        f.store.undo(APP, 1, &undoer(&f)).await.unwrap_err(),
        already(4)
    );
    assert_eq!(f.store.data_version(APP).await.unwrap(), 4);
}
