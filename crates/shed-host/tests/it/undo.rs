//! An entity read through the host (under the rule book: an outsider of a
//! private app is told what a made-up app's name gets), and undoing a write
//! as the rule book lets: owners and editors undo, a viewer is refused with
//! the viewer's sentence, an outsider as for a made-up app; an undo is a
//! write of its own, attributed, and itself undoable; an entity changed
//! since refuses it, changing nothing.

use crate::common;

use common::*;
use serde_json::{Value, json};
use shed_host::{Caller, Host, VIEWER_SENTENCE};

use crate::access::{Cast, cast};

/// Writes `bundle` to `app` as `caller`; answers the eids its `$name`s became.
async fn write(host: &Host, caller: &Caller, app: &str, bundle: Value) -> Value {
    let wrote = host.graph_apply(caller, app, bundle).await.unwrap();
    wrote.data_json()["aliases"].clone()
}

/// A note written "hi" by the owner (jeff/private@1), then `then` by the
/// editor (jeff/private@2): its eid.
async fn noted(host: &Host, c: &Cast, then: &str) -> String {
    let made = write(
        host,
        &c.owner,
        "jeff/private",
        json!({ "entity": { "eid": "$n" }, "note": { "text": "hi" } }),
    )
    .await;
    let eid = made["$n"].as_str().unwrap().to_string();
    let edit = json!({ "entity": { "eid": eid }, "note": { "text": then } });
    write(host, &c.editor, "jeff/private", edit).await;
    eid
}

async fn text_of(host: &Host, caller: &Caller, app: &str, eid: &str) -> Value {
    let read = host.entity(caller, app, eid).await.unwrap();
    read.data
        .now
        .map_or(Value::Null, |now| now["note"]["text"].clone())
}

#[tokio::test]
async fn an_entity_reads_with_its_history_under_the_rule_book() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let eid = &noted(host, &c, "hello").await;

    let read = host.entity(&c.viewer, "jeff/private", eid).await.unwrap();
    let lines: Vec<&str> = read.text.lines().collect();
    assert_eq!(
        lines[0],
        format!("jeff/private: {eid} at version 2 — 2 versions, 0 edges out, 0 in")
    );
    let at = &read.data.history.as_ref().unwrap().versions[0].stamp.at;
    assert_eq!(
        lines[1],
        format!(
            r#"version 2 — jeff/private@2 at {at} by @ed through mcp graph_apply: note.text "hi" → "hello""#
        )
    );
    assert_eq!(lines.len(), 3);
    let view = read.data;
    assert!(!view.may_undo, "a viewer reads, and may not undo");
    assert_eq!(view.now.as_ref().unwrap()["note"]["text"], "hello");
    assert_eq!(view.history.as_ref().unwrap().created.by.handle, "jeff");
    assert_eq!(view.history.as_ref().unwrap().updated.by.handle, "ed");
    let newest = &view.history.as_ref().unwrap().versions[0];
    assert_eq!(newest.write, "jeff/private@2");
    assert_eq!(newest.stamp.by.handle, "ed");
    let through = newest.through.as_ref().unwrap();
    assert_eq!(
        (through.door.as_str(), through.command.as_deref()),
        ("mcp", Some("graph_apply"))
    );
    assert_eq!(
        (
            newest.changed[0].field.as_str(),
            &newest.changed[0].before,
            &newest.changed[0].after
        ),
        ("note.text", &json!("hi"), &json!("hello"))
    );
    assert!(
        host.entity(&c.editor, "jeff/private", eid)
            .await
            .unwrap()
            .data
            .may_undo
    );

    // The Undo button's question, for each of them.
    for (caller, may) in [
        (&c.owner, true),
        (&c.editor, true),
        (&c.viewer, false),
        (&c.stranger, false),
    ] {
        assert_eq!(host.may_undo(caller, "jeff/private").await, may);
    }
    assert!(!host.may_undo(&Caller::Nobody, "jeff/public").await);

    // An outsider is told what a made-up app's name gets.
    let hidden = refusal(host.entity(&c.stranger, "jeff/private", eid).await);
    let made_up = refusal(host.entity(&c.stranger, "jeff/nothing", eid).await);
    assert_eq!(hidden, ("not-found", "no app jeff/private".into()));
    assert_eq!(made_up, ("not-found", "no app jeff/nothing".into()));
    // An entity nobody made has a sentence.
    let none = refusal(host.entity(&c.owner, "jeff/private", "gone").await);
    assert_eq!(none, ("not-found", "no entity gone in jeff/private".into()));
}

#[tokio::test]
async fn owners_and_editors_undo_a_write_viewers_and_outsiders_do_not() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let eid = &noted(host, &c, "oops").await;

    let viewer = refusal(host.undo(&c.viewer, "jeff/private@2").await);
    assert_eq!(viewer, ("refused", VIEWER_SENTENCE.to_string()));
    let outsider = refusal(host.undo(&c.stranger, "jeff/private@2").await);
    let made_up = refusal(host.undo(&c.stranger, "jeff/nothing@2").await);
    assert_eq!(outsider, ("not-found", "no app jeff/private".into()));
    assert_eq!(made_up, ("not-found", "no app jeff/nothing".into()));
    let public = refusal(host.undo(&c.stranger, "jeff/public@1").await);
    assert_eq!(
        public,
        ("not-found", "jeff is not a space you own or edit".into())
    );
    let nobody = refusal(host.undo(&Caller::Nobody, "jeff/private@2").await);
    assert_eq!(nobody.0, "sign-in");
    let bad = refusal(host.undo(&c.owner, "jeff/private").await);
    assert_eq!(bad.0, "bad-input");
    assert_eq!(
        text_of(host, &c.owner, "jeff/private", eid).await,
        "oops",
        "nothing undone"
    );

    let undone = host.undo(&c.owner, "jeff/private@2").await.unwrap();
    assert_eq!(
        undone.text,
        "undid jeff/private@2: 1 entity back as they were (jeff/private@3)"
    );
    assert_eq!(undone.data.undo, "jeff/private@3");
    assert_eq!(undone.data.entities, [eid.as_str()]);
    assert_eq!(text_of(host, &c.owner, "jeff/private", eid).await, "hi");
    let read = host
        .entity(&c.owner, "jeff/private", eid)
        .await
        .unwrap()
        .data;
    let undo = &read.history.as_ref().unwrap().versions[0];
    assert_eq!(undo.write, "jeff/private@3");
    assert_eq!(undo.stamp.by.handle, "jeff");
    assert_eq!(undo.stamp.via.as_deref(), Some("undo of jeff/private@2"));
    assert_eq!(
        undo.through.as_ref().unwrap().command.as_deref(),
        Some("undo")
    );

    // The undo undone, by an editor.
    host.undo(&c.editor, "jeff/private@3").await.unwrap();
    assert_eq!(text_of(host, &c.owner, "jeff/private", eid).await, "oops");
}

#[tokio::test]
async fn undo_after_a_later_change_is_refused_with_who_and_changes_nothing() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let eid = &noted(host, &c, "two").await;
    let three = json!({ "entity": { "eid": eid }, "note": { "text": "three" } });
    write(host, &c.owner, "jeff/private", three).await;
    let refused = refusal(host.undo(&c.owner, "jeff/private@2").await);
    // Named by its short eid (it has no title or alias), the time relative
    // to now.
    assert_eq!(
        refused,
        (
            "conflict",
            format!(
                "cannot undo jeff/private@2: entity {} changed since — @jeff wrote it just now \
                 (jeff/private@3); undo that first",
                &eid[..8]
            )
        )
    );
    assert_eq!(text_of(host, &c.owner, "jeff/private", eid).await, "three");
    let read = host
        .entity(&c.owner, "jeff/private", eid)
        .await
        .unwrap()
        .data;
    assert_eq!(read.history.as_ref().unwrap().version, 3, "nothing written");
}
