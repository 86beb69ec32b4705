//! What can be taken back — tokens, memberships, people — and OAuth's codes
//! and grants, as the store keeps them, on either backend: what is revoked
//! or removed is not found by the next lookup.

use shed_store::oauth::{ClientRecord, CodeRecord, NewCode, Redeemed, Refreshed};
use shed_store::revocable::{MemberChange, NewToken, PersonRemoval, Removed, TokenId};
use shed_store::{JobTerms, Person, Store, secret_hash};

use crate::common::open_store;

async fn store_with_ada() -> (tempfile::TempDir, Store, Person) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    (dir, store, ada)
}

fn token(person: &Person, secret: &str, expires_at: Option<i64>) -> NewToken {
    NewToken {
        person: person.eid.clone(),
        hash: secret_hash(secret),
        name: Some(format!("{secret}'s token")),
        expires_at,
    }
}

#[tokio::test]
async fn tokens_expire_are_used_listed_and_revoked() {
    let (_dir, store, ada) = store_with_ada().await;
    let bob = store.add_person("bob", "Bob").await.unwrap();
    let lasting = store.add_token(token(&ada, "a", None)).await.unwrap();
    let brief = store.add_token(token(&ada, "b", Some(100))).await.unwrap();
    store.add_token(token(&bob, "c", None)).await.unwrap();

    let found = store.live_token(&secret_hash("b"), 50).await.unwrap();
    let found = found.expect("a live token is found");
    assert_eq!((found.id, &found.person), (brief, &ada));
    assert_eq!((found.last_used_at, found.resource), (None, None));
    assert_eq!(
        store.live_token(&secret_hash("b"), 100).await.unwrap(),
        None,
        "expired at its time"
    );

    store.token_used(lasting, 60).await.unwrap();
    let used = store.live_token(&secret_hash("a"), 70).await.unwrap();
    assert_eq!(used.unwrap().last_used_at, Some(60));

    let everyone: Vec<TokenId> = store
        .tokens(None, 50)
        .await
        .unwrap()
        .iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(everyone.len(), 3);
    let adas = store.tokens(Some(&ada.eid), 150).await.unwrap();
    assert_eq!(adas.len(), 1, "the expired one is not listed");
    assert_eq!(adas[0].id, TokenId::Pasted(lasting));
    assert_eq!(adas[0].name.as_deref(), Some("a's token"));
    assert_eq!(adas[0].person, ada);

    assert!(store.revoke_token(lasting, 80).await.unwrap());
    assert!(!store.revoke_token(lasting, 81).await.unwrap(), "once");
    assert_eq!(store.live_token(&secret_hash("a"), 90).await.unwrap(), None);
}

#[tokio::test]
async fn members_are_listed_owners_first_and_removed() {
    let (_dir, store, ada) = store_with_ada().await;
    let bob = store.add_person("bob", "Bob").await.unwrap();
    let cy = store.add_person("cy", "Cy").await.unwrap();
    store.add_space("club", &ada.eid).await.unwrap();
    store.set_member("club", &cy.eid, "viewer").await.unwrap();
    store.set_member("club", &bob.eid, "editor").await.unwrap();

    let members = store.members("club").await.unwrap().unwrap();
    let listed: Vec<(&str, &str)> = members
        .iter()
        .map(|m| (m.person.handle.as_str(), m.role.as_str()))
        .collect();
    assert_eq!(
        listed,
        [("ada", "owner"), ("bob", "editor"), ("cy", "viewer")]
    );
    assert_eq!(store.members("nowhere").await.unwrap(), None);
    let spaces = store.spaces().await.unwrap();
    assert_eq!((spaces[0].slug.as_str(), spaces[0].members), ("club", 3));

    assert_eq!(
        store.remove_member("club", &bob.eid).await.unwrap(),
        MemberChange::Done
    );
    assert_eq!(
        store.remove_member("club", &bob.eid).await.unwrap(),
        MemberChange::NotAMember
    );
    assert_eq!(store.members("club").await.unwrap().unwrap().len(), 2);

    // The one owner is neither taken out nor made less; with a second
    // owner, either may go.
    assert_eq!(
        store.remove_member("club", &ada.eid).await.unwrap(),
        MemberChange::LastOwner
    );
    assert_eq!(
        store.set_member("club", &ada.eid, "viewer").await.unwrap(),
        MemberChange::LastOwner
    );
    assert_eq!(
        store.set_member("club", &ada.eid, "owner").await.unwrap(),
        MemberChange::Done
    );
    assert_eq!(
        store.set_member("club", &cy.eid, "owner").await.unwrap(),
        MemberChange::Done
    );
    assert_eq!(
        store.set_member("club", &ada.eid, "editor").await.unwrap(),
        MemberChange::Done
    );
    assert_eq!(
        store.remove_member("club", &cy.eid).await.unwrap(),
        MemberChange::LastOwner
    );
    let roles: Vec<String> = store
        .members("club")
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|m| m.role)
        .collect();
    assert_eq!(roles, ["owner", "editor"]);

    // Nor is a space's one owner removed from the platform: the removal
    // names the spaces and changes nothing. Another owner frees them.
    store.add_space("band", &cy.eid).await.unwrap();
    store.add_space("aero", &cy.eid).await.unwrap();
    store.set_member("band", &ada.eid, "owner").await.unwrap();
    assert_eq!(
        store.remove_person(&cy.eid, 500).await.unwrap(),
        PersonRemoval::LastOwnerOf(vec!["aero".into(), "club".into()])
    );
    assert!(store.present_person("cy").await.unwrap().is_some());
    assert_eq!(store.members("club").await.unwrap().unwrap().len(), 2);
    store.set_member("club", &ada.eid, "owner").await.unwrap();
    store.set_member("aero", &ada.eid, "owner").await.unwrap();
    assert!(matches!(
        store.remove_person(&cy.eid, 600).await.unwrap(),
        PersonRemoval::Done(Removed { memberships: 3, .. })
    ));
    assert_eq!(store.present_person("cy").await.unwrap(), None);
}

#[tokio::test]
async fn a_removed_person_keeps_their_row_and_loses_every_way_in() {
    let (_dir, store, ada) = store_with_ada().await;
    let bob = store.add_person("bob", "Bob").await.unwrap();
    store.add_space("club", &ada.eid).await.unwrap();
    store.set_member("club", &bob.eid, "editor").await.unwrap();
    store.add_token(token(&bob, "t", None)).await.unwrap();
    store
        .add_web_session(shed_store::web_sessions::NewWebSession {
            person: bob.eid.clone(),
            space: String::new(),
            hash: secret_hash("cookie"),
            sign_in: "in-1".into(),
            user_agent: None,
            at: 1,
            expires_at: 10_000,
        })
        .await
        .unwrap();
    let job = JobTerms {
        person: bob.eid.clone(),
        allow: vec!["*".into()],
        read_only: vec![],
        created_at: 1,
        expires_at: None,
    };
    let job = store.add_job(secret_hash("job"), job).await.unwrap();

    let removed = store.remove_person(&bob.eid, 500).await.unwrap();
    assert_eq!(
        removed,
        PersonRemoval::Done(Removed {
            tokens: 1,
            memberships: 1,
            sessions: 1,
            jobs: 1,
        })
    );
    assert_eq!(
        store.live_token(&secret_hash("t"), 600).await.unwrap(),
        None
    );
    assert_eq!(
        store
            .web_session("", &secret_hash("cookie"), 600)
            .await
            .unwrap(),
        None
    );
    let ended = store.job_named(&job.name).await.unwrap().unwrap();
    assert_eq!(
        ended.ended_at,
        Some(500_000),
        "ended at `now` in milliseconds"
    );
    assert_eq!(store.present_person("bob").await.unwrap(), None);
    assert_eq!(
        store.present_person("@ada").await.unwrap(),
        Some(ada.clone())
    );
    assert_eq!(store.people().await.unwrap(), [ada]);
    assert_eq!(
        store.person("bob").await.unwrap(),
        Some(bob),
        "the row stays, for what they wrote"
    );
}

fn code(ada: &Person, secret: &str, expires_at: i64) -> NewCode {
    NewCode {
        hash: secret_hash(secret),
        client: "client-1".into(),
        person: ada.eid.clone(),
        redirect_uri: "http://127.0.0.1:9/back".into(),
        challenge: "challenge".into(),
        resource: "http://localhost:7700/mcp".into(),
        expires_at,
    }
}

#[tokio::test]
async fn a_code_opens_a_grant_once_and_its_refresh_token_rotates_once() {
    let (_dir, store, ada) = store_with_ada().await;
    let client = ClientRecord {
        id: "client-1".into(),
        name: "An agent".into(),
        redirect_uris: vec!["http://127.0.0.1:9/back".into()],
    };
    store.register_client(client.clone(), 1).await.unwrap();
    assert_eq!(store.oauth_client("client-1").await.unwrap(), Some(client));
    assert_eq!(store.oauth_client("client-2").await.unwrap(), None);

    store.add_code(code(&ada, "code", 100)).await.unwrap();
    store.add_code(code(&ada, "late", 100)).await.unwrap();
    assert_eq!(
        store.redeem_code(&secret_hash("nope"), 10).await.unwrap(),
        Redeemed::Unknown
    );
    assert_eq!(
        store.redeem_code(&secret_hash("late"), 100).await.unwrap(),
        Redeemed::Expired
    );
    let Redeemed::Fresh(redeemed) = store.redeem_code(&secret_hash("code"), 10).await.unwrap()
    else {
        panic!("a fresh code is redeemed");
    };
    let expected = CodeRecord {
        client: "client-1".into(),
        person: ada.eid.clone(),
        redirect_uri: "http://127.0.0.1:9/back".into(),
        challenge: "challenge".into(),
        resource: "http://localhost:7700/mcp".into(),
    };
    assert_eq!(redeemed, expected);

    store
        .open_grant(
            &secret_hash("code"),
            redeemed,
            token(&ada, "access-1", Some(1000)),
            &secret_hash("refresh-1"),
            10,
        )
        .await
        .unwrap();
    let access = store
        .live_token(&secret_hash("access-1"), 20)
        .await
        .unwrap();
    assert_eq!(
        access.unwrap().resource.as_deref(),
        Some("http://localhost:7700/mcp")
    );
    assert_eq!(
        store
            .refresh_person(&secret_hash("refresh-1"))
            .await
            .unwrap(),
        Some(ada.eid.clone())
    );

    let refresh = |presented: &'static str, client: &'static str, access: &'static str| {
        let (store, ada) = (store.clone(), ada.clone());
        async move {
            store
                .refresh_grant(
                    &secret_hash(presented),
                    client,
                    token(&ada, access, Some(1000)),
                    &secret_hash(&format!("{presented}+")),
                    30,
                )
                .await
                .unwrap()
        }
    };
    assert_eq!(
        refresh("refresh-1", "client-2", "access-x").await,
        Refreshed::Unknown,
        "another client's refresh is not this grant's"
    );
    assert_eq!(
        refresh("refresh-1", "client-1", "access-2").await,
        Refreshed::Rotated {
            client: "client-1".into(),
            resource: "http://localhost:7700/mcp".into(),
        }
    );
    assert!(
        store
            .live_token(&secret_hash("access-2"), 40)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        refresh("refresh-1", "client-1", "access-3").await,
        Refreshed::Reused,
        "a spent refresh token presented again"
    );
    for revoked in ["access-1", "access-2", "access-3"] {
        assert_eq!(
            store.live_token(&secret_hash(revoked), 40).await.unwrap(),
            None,
            "{revoked}: the whole grant is revoked"
        );
    }
    assert_eq!(
        store.redeem_code(&secret_hash("code"), 50).await.unwrap(),
        Redeemed::Reused
    );
}

#[tokio::test]
async fn revoking_by_either_token_ends_the_grant() {
    let (_dir, store, ada) = store_with_ada().await;
    store.add_code(code(&ada, "code", 100)).await.unwrap();
    let Redeemed::Fresh(redeemed) = store.redeem_code(&secret_hash("code"), 10).await.unwrap()
    else {
        panic!("a fresh code is redeemed");
    };
    store
        .open_grant(
            &secret_hash("code"),
            redeemed,
            token(&ada, "access", None),
            &secret_hash("refresh"),
            10,
        )
        .await
        .unwrap();
    assert!(
        !store
            .revoke_grant_of(&secret_hash("other"), 20)
            .await
            .unwrap()
    );
    assert!(
        store
            .revoke_grant_of(&secret_hash("access"), 20)
            .await
            .unwrap()
    );
    assert_eq!(
        store.live_token(&secret_hash("access"), 30).await.unwrap(),
        None
    );
    assert_eq!(
        store.refresh_person(&secret_hash("refresh")).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn a_grant_is_listed_as_its_client_and_revoked_by_its_id_not_as_a_pasted_token() {
    let (_dir, store, ada) = store_with_ada().await;
    store
        .register_client(
            ClientRecord {
                id: "client-1".to_string(),
                name: "Notes app".to_string(),
                redirect_uris: vec!["https://notes.example/back".to_string()],
            },
            5,
        )
        .await
        .unwrap();
    store.add_code(code(&ada, "code", 100)).await.unwrap();
    let Redeemed::Fresh(redeemed) = store.redeem_code(&secret_hash("code"), 10).await.unwrap()
    else {
        panic!("a fresh code is redeemed");
    };
    let grant = store
        .open_grant(
            &secret_hash("code"),
            redeemed,
            token(&ada, "access", None),
            &secret_hash("refresh"),
            10,
        )
        .await
        .unwrap();
    let access = store
        .live_token(&secret_hash("access"), 20)
        .await
        .unwrap()
        .expect("the grant's access token is live");
    assert!(
        store.tokens(None, 20).await.unwrap().is_empty(),
        "a grant's access token is not listed as a pasted token"
    );
    assert!(
        !store.revoke_token(access.id, 20).await.unwrap(),
        "a grant's access token is not revoked as a pasted token"
    );
    let grants = store.grants(Some(&ada.eid)).await.unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].id, TokenId::Grant(grant));
    assert_eq!(grants[0].name.as_deref(), Some("Notes app (OAuth)"));
    assert_eq!(grants[0].person, ada);
    assert!(store.grants(Some("nobody")).await.unwrap().is_empty());

    assert!(store.revoke_grant(grant, 30).await.unwrap());
    assert!(!store.revoke_grant(grant, 40).await.unwrap(), "once");
    assert!(store.grants(None).await.unwrap().is_empty());
    assert_eq!(
        store.live_token(&secret_hash("access"), 50).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn clients_without_a_grant_are_forgotten_and_a_granted_one_lives_as_long_as_its_grant() {
    const DAY: i64 = 86_400;
    let (_dir, store, ada) = store_with_ada().await;
    for id in ["unused", "granted", "revoked", "coded"] {
        let client = ClientRecord {
            id: id.into(),
            name: format!("The {id} client"),
            redirect_uris: vec!["http://127.0.0.1:9/back".into()],
        };
        store.register_client(client, 0).await.unwrap();
    }
    let recent = ClientRecord {
        id: "recent".into(),
        name: "A client registered just now".into(),
        redirect_uris: vec!["https://recent.example/back".into()],
    };
    store.register_client(recent, DAY).await.unwrap();
    // granted and revoked each open a grant; revoked's ends.
    for client in ["granted", "revoked"] {
        let issued = NewCode {
            client: client.into(),
            ..code(&ada, client, 100)
        };
        store.add_code(issued).await.unwrap();
        let Redeemed::Fresh(redeemed) = store.redeem_code(&secret_hash(client), 10).await.unwrap()
        else {
            panic!("a fresh code is redeemed");
        };
        store
            .open_grant(
                &secret_hash(client),
                redeemed,
                token(&ada, &format!("{client}-access"), None),
                &secret_hash(&format!("{client}-refresh")),
                10,
            )
            .await
            .unwrap();
    }
    assert!(
        store
            .revoke_grant_of(&secret_hash("revoked-refresh"), 20)
            .await
            .unwrap()
    );
    // coded holds a code still waiting for its exchange.
    let waiting = NewCode {
        client: "coded".into(),
        ..code(&ada, "waiting", DAY + 60)
    };
    store.add_code(waiting).await.unwrap();

    assert_eq!(
        store.forget_unused_clients(0, DAY).await.unwrap(),
        0,
        "nothing registered before the first is forgotten"
    );
    assert_eq!(store.forget_unused_clients(DAY, DAY + 30).await.unwrap(), 2);
    for (id, kept) in [
        ("unused", false),
        ("revoked", false),
        ("granted", true),
        ("coded", true),
        ("recent", true),
    ] {
        assert_eq!(
            store.oauth_client(id).await.unwrap().is_some(),
            kept,
            "{id}"
        );
    }
    // Once its code has expired, coded is forgotten too; granted stays
    // until its grant ends.
    assert_eq!(store.forget_unused_clients(DAY, DAY + 60).await.unwrap(), 1);
    assert!(store.oauth_client("granted").await.unwrap().is_some());
    assert!(
        store
            .revoke_grant_of(&secret_hash("granted-refresh"), DAY + 70)
            .await
            .unwrap()
    );
    assert_eq!(store.forget_unused_clients(DAY, DAY + 80).await.unwrap(), 1);
    assert_eq!(store.oauth_client("granted").await.unwrap(), None);
    assert!(store.oauth_client("recent").await.unwrap().is_some());
}

#[tokio::test]
async fn a_live_token_carries_its_persons_spaces_and_the_generation_as_one_read_of_them_would() {
    let (_dir, store, ada) = store_with_ada().await;
    store.add_token(token(&ada, "a", None)).await.unwrap();
    let nowhere = store
        .live_token(&secret_hash("a"), 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(nowhere.memberships, vec![], "a person in no space");
    assert_eq!(
        nowhere.generation,
        store.memberships_and_generation(&ada.eid).await.unwrap().1
    );

    let bob = store.add_person("bob", "Bob").await.unwrap();
    store.add_space("zed", &ada.eid).await.unwrap();
    store.add_space("Zed", &ada.eid).await.unwrap();
    store.add_space("bobs", &bob.eid).await.unwrap();
    let live = store
        .live_token(&secret_hash("a"), 10)
        .await
        .unwrap()
        .unwrap();
    let (memberships, generation) = store.memberships_and_generation(&ada.eid).await.unwrap();
    assert_eq!(live.person, ada);
    assert_eq!(
        live.memberships
            .iter()
            .map(|m| m.space.as_str())
            .collect::<Vec<_>>(),
        ["Zed", "zed"],
        "ada's spaces only, by bytes on either backend"
    );
    assert_eq!(
        (live.memberships, live.generation),
        (memberships, generation)
    );
}
