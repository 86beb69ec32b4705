//! The web's sign-in records as the store keeps them, on either backend: a
//! link works once and only while it lives, a hop once on its own space in
//! the browser it was bound to and confirmed for, a session on its own host
//! until it expires or its sign-in or person is ended.

use shed_store::Store;
use shed_store::web_sessions::{HopUsed, NewWebSession, SessionSeen};

use crate::common::open_store;

async fn store_with_ada() -> (tempfile::TempDir, Store, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    (dir, store, ada.eid)
}

#[tokio::test]
async fn a_link_works_once_and_only_while_it_lives() {
    let (_dir, store, ada) = store_with_ada().await;
    store.add_login_link(&ada, "h1", 100, 0).await.unwrap();
    store.add_login_link(&ada, "h2", 100, 0).await.unwrap();
    for _ in 0..2 {
        assert_eq!(
            store.live_login_link("h1", 50).await.unwrap(),
            Some(ada.clone()),
            "looking does not use it"
        );
    }
    assert_eq!(
        store.use_login_link("h1", 50).await.unwrap(),
        Some(ada.clone())
    );
    assert_eq!(
        store.use_login_link("h1", 51).await.unwrap(),
        None,
        "used twice"
    );
    assert_eq!(
        store.use_login_link("h2", 100).await.unwrap(),
        None,
        "expired"
    );
    assert_eq!(store.use_login_link("nope", 0).await.unwrap(), None);
    assert_eq!(store.live_login_link("h1", 51).await.unwrap(), None);
    assert_eq!(store.live_login_link("h2", 100).await.unwrap(), None);
}

#[tokio::test]
async fn a_hop_works_once_on_its_own_space_in_its_own_browser() {
    let (_dir, store, ada) = store_with_ada().await;
    store
        .add_web_hop(&ada, "demo", "h", "hand", "in-1", 100)
        .await
        .unwrap();
    assert!(
        !store.bind_web_hop("club", "h", "b", "br", 1).await.unwrap(),
        "another space"
    );
    assert!(
        !store
            .confirm_web_hop("demo", "h", Some("hand"), 1)
            .await
            .unwrap(),
        "not seen by its space's host yet"
    );
    assert!(store.bind_web_hop("demo", "h", "b", "br", 1).await.unwrap());
    assert!(
        !store
            .bind_web_hop("demo", "h", "b2", "br2", 1)
            .await
            .unwrap(),
        "its code is seen once"
    );
    assert_eq!(
        store.use_web_hop("demo", "b", Some("br"), 2).await.unwrap(),
        None,
        "not confirmed: used up all the same"
    );

    store
        .add_web_hop(&ada, "demo", "h", "hand", "in-1", 100)
        .await
        .unwrap();
    store.bind_web_hop("demo", "h", "b", "br", 1).await.unwrap();
    assert!(
        store
            .confirm_web_hop("demo", "b", Some("hand"), 2)
            .await
            .unwrap()
    );
    assert!(
        !store
            .confirm_web_hop("demo", "b", Some("hand"), 2)
            .await
            .unwrap(),
        "confirmed once"
    );
    assert_eq!(
        store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
        Some(HopUsed {
            person: ada.clone(),
            sign_in: Some("in-1".into())
        })
    );
    assert_eq!(
        store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
        None
    );

    // Another browser's hand-off cookie, or none, lets the hop go;
    // another browser's cookie at the end uses it up.
    for (handoff, browser) in [(Some("other"), "br"), (None, "br"), (Some("hand"), "other")] {
        store
            .add_web_hop(&ada, "demo", "h", "hand", "in-1", 100)
            .await
            .unwrap();
        store.bind_web_hop("demo", "h", "b", "br", 1).await.unwrap();
        if store
            .confirm_web_hop("demo", "b", handoff, 2)
            .await
            .unwrap()
        {
            assert_eq!(
                store
                    .use_web_hop("demo", "b", Some(browser), 3)
                    .await
                    .unwrap(),
                None
            );
        }
        assert!(
            !store
                .confirm_web_hop("demo", "b", Some("hand"), 2)
                .await
                .unwrap()
        );
        assert_eq!(
            store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
            None
        );
    }
}

fn session(ada: &str, space: &str, hash: &str, sign_in: &str, at: i64) -> NewWebSession {
    NewWebSession {
        person: ada.to_string(),
        space: space.to_string(),
        hash: hash.to_string(),
        sign_in: sign_in.to_string(),
        user_agent: Some("Mozilla/5.0 (X11; Linux x86_64)".to_string()),
        at,
        expires_at: 100,
    }
}

#[tokio::test]
async fn a_session_answers_on_its_host_until_it_ends() {
    let (_dir, store, ada) = store_with_ada().await;
    store
        .add_web_session(session(&ada, "demo", "s", "in-1", 1))
        .await
        .unwrap();
    store
        .add_web_session(session(&ada, "", "p", "in-1", 1))
        .await
        .unwrap();
    let seen = SessionSeen {
        person: ada.clone(),
        sign_in: "in-1".into(),
        last_seen: 1,
    };
    assert_eq!(
        store.web_session("demo", "s", 1).await.unwrap(),
        Some(seen.clone())
    );
    assert_eq!(store.web_session("club", "s", 1).await.unwrap(), None);
    assert_eq!(
        store.web_session("demo", "s", 100).await.unwrap(),
        None,
        "expired"
    );
    assert_eq!(store.end_web_sessions(&ada).await.unwrap(), 2);
    assert_eq!(store.web_session("demo", "s", 1).await.unwrap(), None);
}

#[tokio::test]
async fn a_sign_in_is_listed_seen_and_ended_on_every_host_by_its_person_only() {
    let (_dir, store, ada) = store_with_ada().await;
    let bob = store.add_person("bob", "Bob").await.unwrap().eid;
    for (space, hash, sign_in, at) in [
        ("", "p1", "in-1", 1),
        ("demo", "d1", "in-1", 1),
        ("", "p2", "in-2", 5),
    ] {
        store
            .add_web_session(session(&ada, space, hash, sign_in, at))
            .await
            .unwrap();
    }
    store.touch_web_session("d1", 40).await.unwrap();
    assert_eq!(
        store
            .web_session("demo", "d1", 41)
            .await
            .unwrap()
            .map(|s| s.last_seen),
        Some(40)
    );
    let listed = store.web_sessions_of(&ada, 50).await.unwrap();
    let rows: Vec<(&str, &str, i64, i64)> = listed
        .iter()
        .map(|r| {
            (
                r.sign_in.as_str(),
                r.space.as_str(),
                r.signed_in_at,
                r.last_seen,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("in-2", "", 5, 5),
            ("in-1", "", 1, 1),
            ("in-1", "demo", 1, 40)
        ],
        "newest sign-in first"
    );
    assert_eq!(
        listed[0].user_agent.as_deref(),
        Some("Mozilla/5.0 (X11; Linux x86_64)")
    );
    assert!(
        store.web_sessions_of(&ada, 100).await.unwrap().is_empty(),
        "expired"
    );
    assert_eq!(
        store.end_web_sign_in(&bob, "in-1").await.unwrap(),
        0,
        "not bob's"
    );
    assert_eq!(store.end_web_sign_in(&ada, "in-1").await.unwrap(), 2);
    assert_eq!(store.web_session("", "p1", 2).await.unwrap(), None);
    assert_eq!(store.web_session("demo", "d1", 2).await.unwrap(), None);
    assert!(
        store.web_session("", "p2", 6).await.unwrap().is_some(),
        "the other stays"
    );
}
