//! A value's and a write's size bounds at the store's one write path
//! (every door's apply, and undo's): a value past
//! [`MAX_VALUE_BYTES`](shed_store::wire::MAX_VALUE_BYTES) is refused naming
//! its `<component>.<column>`, a write keeping more than
//! [`MAX_WRITE_BYTES`](shed_store::wire::MAX_WRITE_BYTES) naming the bound,
//! each with what to do; nothing is written.

use crate::common::{self, fixture};
use serde_json::{Value, json};
use shed_store::StoreError;
use shed_store::wire::{MAX_VALUE_BYTES, MAX_WRITE_BYTES};

const APP: &str = "jeff/runs";

#[tokio::test]
async fn a_value_past_its_bound_is_refused_naming_its_field_and_nothing_is_written() {
    let f = fixture().await;
    // A text's bytes, not its characters: é is two.
    let refused = f
        .refusal(
            APP,
            json!({ "entity": { "eid": "$a" }, "jog": { "miles": 1, "who": "é".repeat(MAX_VALUE_BYTES / 2 + 1) } }),
        )
        .await;
    assert_eq!(
        refused,
        "jog.who is 65,538 bytes; a value may be at most 65,536 bytes — shorten it"
    );
    let link = format!("https://runs.example/{}", "a".repeat(MAX_VALUE_BYTES));
    let refused = f
        .refusal(
            APP,
            json!([{ "entity": { "eid": "$a" }, "jog": { "miles": 1 } },
                   { "entity": { "eid": "$a" }, "gear": { "link": link } }]),
        )
        .await;
    assert!(
        refused.starts_with("gear.link is 65,557 bytes; a value may be at most 65,536 bytes"),
        "{refused}"
    );
    assert_eq!(
        f.store.data_version(APP).await.unwrap(),
        0,
        "nothing written"
    );
    // At the bound, taken.
    let made = f
        .apply(
            APP,
            json!({ "entity": { "eid": "$a" }, "jog": { "who": "x".repeat(MAX_VALUE_BYTES) } }),
        )
        .await;
    assert_eq!(made.version, 1);
}

/// `n` new entities each with a `who` of `bytes` bytes, as one write.
fn whos(n: usize, bytes: usize) -> Value {
    (0..n)
        .map(|i| json!({ "entity": { "eid": format!("$r{i}") }, "jog": { "who": "y".repeat(bytes) } }))
        .collect()
}

#[tokio::test]
async fn a_write_past_its_bound_is_refused_and_nothing_is_written() {
    let f = fixture().await;
    let each = MAX_VALUE_BYTES - 10;
    let refused = f.refusal(APP, whos(MAX_WRITE_BYTES / each + 1, each)).await;
    assert!(
        refused.starts_with("this write is ")
            && refused.ends_with(
                " bytes; a write may be at most 262,144 bytes — split it into smaller writes"
            ),
        "{refused}"
    );
    assert_eq!(
        f.store.data_version(APP).await.unwrap(),
        0,
        "nothing written"
    );
    assert!(f.rows(APP, "").await.is_empty());
    // Under it, taken.
    let made = f.apply(APP, whos(MAX_WRITE_BYTES / each - 1, each)).await;
    assert_eq!(made.version, 1);
}

/// An undo is a write too: one putting back more than a write may keep is
/// refused as the undo's, changing nothing.
#[tokio::test]
async fn an_undo_past_the_write_bound_is_refused_and_changes_nothing() {
    let f = fixture().await;
    let each = MAX_VALUE_BYTES - 10;
    let mut eids = Vec::new();
    for _ in 0..MAX_WRITE_BYTES / each + 1 {
        eids.extend(f.apply(APP, whos(1, each)).await.entities);
    }
    // One small write removes every who; its undo would write them all back.
    let removal: Value = eids
        .iter()
        .map(|eid| json!({ "entity": { "eid": eid }, "jog": null }))
        .collect();
    let removed = f.apply(APP, removal).await;
    let undoer = f.as_ada();
    let refused = f
        .store
        .undo(APP, removed.version, &undoer)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, StoreError::Refused(s)
            if s.starts_with(&format!("cannot undo jeff/runs@{}: this write is ", removed.version))
                && s.ends_with("a write may be at most 262,144 bytes — split it into smaller writes")),
        "{refused}"
    );
    assert_eq!(
        f.store.data_version(APP).await.unwrap(),
        removed.version,
        "nothing written"
    );
    assert!(common::eids(&f.rows(APP, ".jog!").await).is_empty());
}
