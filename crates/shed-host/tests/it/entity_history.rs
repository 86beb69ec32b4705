//! An entity's history is its space's to know, as the app's activity is
//! (#34, finding 4): a member of the space reads an entity's versions, who
//! wrote each through which client, its stamps and edges; anyone else —
//! somebody of another space, nobody signed in — reads its row now and
//! nothing of its history, and a tombstoned entity is absent to them, as
//! an eid nobody made is. A value shown is cut, and read whole one at a
//! time (#34, finding 1).

use crate::common;

use common::*;
use serde_json::{Value, json};
use shed_host::entity::Whole;
use shed_host::shown::SHOWN_VALUE_CHARS;
use shed_host::{Caller, Host};

use crate::access::cast;

/// Writes `bundle` to `app` as `caller`; answers the eids its `$name`s became.
async fn write(host: &Host, caller: &Caller, app: &str, bundle: Value) -> Value {
    let wrote = host.graph_apply(caller, app, bundle).await.unwrap();
    wrote.data_json()["aliases"].clone()
}

#[tokio::test]
async fn an_outsider_reads_an_entity_now_and_nothing_of_its_history() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    for app in ["jeff/public", "jeff/open"] {
        let made = write(
            host,
            &c.owner,
            app,
            json!({ "entity": { "eid": "$n", "alias": "kept" }, "note": { "text": "old secret" } }),
        )
        .await;
        let eid = made["$n"].as_str().unwrap().to_string();
        let edit = json!({ "entity": { "eid": eid }, "note": { "text": "said now" } });
        write(host, &c.editor, app, edit).await;
        let gone = write(
            host,
            &c.owner,
            app,
            json!({ "entity": { "eid": "$g", "alias": "gone" }, "note": { "text": "deleted secret" } }),
        )
        .await;
        let gone = gone["$g"].as_str().unwrap().to_string();
        write(
            host,
            &c.owner,
            app,
            json!({ "entity": { "eid": gone }, "tombstone": {} }),
        )
        .await;

        // A member reads it all, the tombstoned one too.
        let member = host.entity(&c.viewer, app, &eid).await.unwrap();
        let history = member.data.history.as_ref().unwrap();
        assert_eq!(history.versions.len(), 2);
        assert_eq!(history.created.by.handle, "jeff");
        assert!(member.text.contains("old secret"), "{}", member.text);
        assert!(member.data.now.as_ref().unwrap().get("created").is_some());
        let dead = host.entity(&c.viewer, app, &gone).await.unwrap();
        assert!(dead.data.history.unwrap().tombstoned);

        // Anyone else: the row now, by eid or alias, and no history.
        for caller in [&c.stranger, &Caller::Nobody] {
            for name in [eid.as_str(), "kept"] {
                let read = host.entity(caller, app, name).await.unwrap();
                let view = &read.data;
                assert!(view.history.is_none(), "{app} {name}");
                assert_eq!((view.eid.as_str(), view.version), (eid.as_str(), 2));
                assert_eq!(view.alias.as_deref(), Some("kept"));
                let now = view.now.as_ref().unwrap();
                assert_eq!(now["note"]["text"], "said now");
                assert!(now.get("created").is_none() && now.get("updated").is_none());
                assert_eq!(
                    read.text,
                    format!(
                        "{app}: {eid} at version 2 — its history is shown to the members of \
                         jeff\nnote.text \"said now\""
                    )
                );
                assert_eq!(
                    view.whole("note.text", None).unwrap(),
                    Whole::Now(&json!("said now"))
                );
                assert_eq!(
                    refusal(view.whole("note.text", Some(1))),
                    (
                        "not-found",
                        // Named by its alias, as a sentence names an entity.
                        "the history of kept is shown to the members of jeff — its value now \
                         is what you can read"
                            .to_string()
                    )
                );
            }
            // A tombstoned entity reads as one nobody made.
            for name in [gone.as_str(), "gone"] {
                assert_eq!(
                    refusal(host.entity(caller, app, name).await),
                    ("not-found", format!("no entity {name} in {app}"))
                );
            }
            let nobody = "0123456789abcdef0123456789abcdef";
            assert_eq!(
                refusal(host.entity(caller, app, nobody).await),
                ("not-found", format!("no entity {nobody} in {app}"))
            );
        }
    }
}

#[tokio::test]
async fn a_long_value_is_cut_where_it_is_listed_and_read_whole_alone() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let long = "ab".repeat(SHOWN_VALUE_CHARS);
    let made = write(
        host,
        &c.owner,
        "jeff/private",
        json!({ "entity": { "eid": "$n" }, "note": { "text": long } }),
    )
    .await;
    let eid = made["$n"].as_str().unwrap().to_string();
    let read = host.entity(&c.owner, "jeff/private", &eid).await.unwrap();
    let line = read.text.lines().nth(1).unwrap();
    let shown = format!(
        "note.text null → \"{}… ({} chars)",
        &long[..SHOWN_VALUE_CHARS - 1],
        long.len() + 2
    );
    assert!(line.ends_with(&shown), "{line}");
    let view = &read.data;
    assert_eq!(
        view.whole("note.text", None).unwrap(),
        Whole::Now(&json!(long))
    );
    let Whole::Changed(changed) = view.whole("note.text", Some(1)).unwrap() else {
        panic!("a version's change");
    };
    assert_eq!(
        (&changed.before, &changed.after),
        (&Value::Null, &json!(long))
    );
    assert_eq!(
        refusal(view.whole("note.nothing", Some(1))),
        (
            "not-found",
            format!(
                "version 1 of entity {} changed no field note.nothing — it changed note.text",
                &eid[..8]
            )
        )
    );
    assert_eq!(
        refusal(view.whole("note.text", Some(7))),
        (
            "not-found",
            format!(
                "no version 7 of entity {} shown — its history shows version 1",
                &eid[..8]
            )
        )
    );
}
