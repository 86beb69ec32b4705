//! Which refused calls a space keeps (issue #34, finding 3): its members'
//! and their agents', never those of a person outside it (kept as little
//! as a signed-out caller's); and so few of one caller's within an hour
//! that a flood of them pushes out nobody's earlier refusals, its own
//! included.

use crate::access::cast;
use crate::common::*;
use serde_json::{Value, json};
use shed_host::activity::{ActivityNarrow, ActivityScope};
use shed_host::{Caller, Host, Role};

/// More refused calls than a space keeps
/// (`shed_store::activity::REFUSALS_PER_SPACE`).
const FLOOD: usize = 1_100;

fn bundle() -> Value {
    json!({ "entity": { "eid": "$n" }, "note": { "text": "hi" } })
}

/// The handles of those whose refusals `owner` sees on jeff's activity,
/// narrowed to `person`'s.
async fn refused_by(host: &Host, owner: &Caller, person: &str) -> Vec<String> {
    let narrow = ActivityNarrow {
        person: Some(person.to_string()),
        ..ActivityNarrow::default()
    };
    let page = host
        .activity(owner, ActivityScope::Space("jeff"), &narrow, None)
        .await
        .unwrap();
    page.data
        .refusals
        .iter()
        .map(|r| r.by.handle.clone())
        .collect()
}

#[tokio::test]
async fn a_space_keeps_its_members_refusals_never_an_outsider_s_nor_a_flood_of_one_caller_s() {
    let w = world().await;
    let host = &w.host;
    let c = cast(host).await;
    let other_viewer = member(host, "jeff", "vo", Role::Viewer).await;
    host.graph_apply(&other_viewer, "jeff/public", bundle())
        .await
        .unwrap_err();
    assert_eq!(refused_by(host, &c.owner, "vo").await, ["vo"]);
    for _ in 0..FLOOD {
        host.graph_apply(&c.stranger, "jeff/public", bundle())
            .await
            .unwrap_err();
    }
    assert!(refused_by(host, &c.owner, "stranger").await.is_empty());
    assert_eq!(refused_by(host, &c.owner, "vo").await, ["vo"]);
    for _ in 0..FLOOD {
        host.graph_apply(&c.viewer, "jeff/public", bundle())
            .await
            .unwrap_err();
    }
    assert!(!refused_by(host, &c.owner, "vi").await.is_empty());
    assert_eq!(refused_by(host, &c.owner, "vo").await, ["vo"]);
}
