//! Approvals as the store keeps them, on either backend: bounded per
//! person and per agent, expiring, decided once, only by their person;
//! and the apps whose writes by agents need approval.

use shed_store::approvals::{
    ApprovalState, Asked, NewApproval, PENDING_PER_AGENT, PENDING_PER_PERSON,
};

use crate::common::open_store;

fn asked(person: &str, asker: &str, now: i64) -> NewApproval {
    NewApproval {
        person: person.to_string(),
        app: "demo/runs".into(),
        command: "log_run".into(),
        args: r#"{"miles":3,"runner":"Ada"}"#.into(),
        asker: asker.into(),
        via: None,
        door: "mcp".into(),
        client: Some("Claude (claimed)".into()),
        created_at: now,
        expires_at: now + 60,
    }
}

#[tokio::test]
async fn an_approval_is_decided_once_by_its_person_and_expires_unanswered() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let bob = store.add_person("bob", "Bob").await.unwrap();
    let Asked::Kept(first) = store
        .ask_approval(asked(&ada.eid, "token:1", 0))
        .await
        .unwrap()
    else {
        panic!("not kept");
    };
    let Asked::Kept(second) = store
        .ask_approval(asked(&ada.eid, "token:1", 0))
        .await
        .unwrap()
    else {
        panic!("not kept");
    };
    let pending = store.pending_approvals(&ada.eid, 10).await.unwrap();
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0].args, r#"{"miles":3,"runner":"Ada"}"#);
    assert_eq!(pending[0].person.handle, "ada");
    assert_eq!(
        store.count_pending_approvals(&ada.eid, 10).await.unwrap(),
        2
    );
    assert!(
        store
            .pending_approvals(&bob.eid, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Bob cannot decide Ada's; Ada approves once, the second click gets nothing.
    assert_eq!(
        store
            .decide_approval(first, &bob.eid, true, 10)
            .await
            .unwrap(),
        None
    );
    let approved = store
        .decide_approval(first, &ada.eid, true, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approved.state, ApprovalState::Approved);
    assert_eq!(
        store
            .decide_approval(first, &ada.eid, true, 11)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .decide_approval(first, &ada.eid, false, 11)
            .await
            .unwrap(),
        None
    );
    store
        .approval_ran(first, "log_run: wrote 1 entity".into(), Some(4))
        .await
        .unwrap();
    let ran = store.approval(first, 12).await.unwrap().unwrap();
    assert_eq!(
        (ran.outcome.as_deref(), ran.version),
        (Some("log_run: wrote 1 entity"), Some(4))
    );

    // The second expires unanswered: it reads expired, and cannot be decided.
    let late = store.approval(second, 60).await.unwrap().unwrap();
    assert_eq!(late.state, ApprovalState::Expired);
    assert_eq!(
        store
            .decide_approval(second, &ada.eid, true, 60)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.count_pending_approvals(&ada.eid, 60).await.unwrap(),
        0
    );
    assert_eq!(store.approval(999, 0).await.unwrap(), None);
    // It is kept expired for the first to look (its activity's row), once;
    // another app's look finds none.
    let apps = ["demo/runs".to_string()];
    assert!(store.expire_approvals(&apps, 59).await.unwrap().is_empty());
    assert!(
        store
            .expire_approvals(&["demo/other".to_string()], 60)
            .await
            .unwrap()
            .is_empty()
    );
    let expired = store.expire_approvals(&apps, 60).await.unwrap();
    assert_eq!(
        expired.iter().map(|a| (a.id, a.state)).collect::<Vec<_>>(),
        [(second, ApprovalState::Expired)]
    );
    assert!(store.expire_approvals(&apps, 61).await.unwrap().is_empty());

    // Denied is denied.
    let Asked::Kept(third) = store
        .ask_approval(asked(&ada.eid, "token:1", 100))
        .await
        .unwrap()
    else {
        panic!("not kept");
    };
    let denied = store
        .decide_approval(third, &ada.eid, false, 101)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(denied.state, ApprovalState::Denied);
}

#[tokio::test]
async fn pending_approvals_are_bounded_per_agent_and_per_person() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    for _ in 0..PENDING_PER_AGENT {
        let kept = store
            .ask_approval(asked(&ada.eid, "job:job-1", 0))
            .await
            .unwrap();
        assert!(matches!(kept, Asked::Kept(_)));
    }
    let full = store
        .ask_approval(asked(&ada.eid, "job:job-1", 0))
        .await
        .unwrap();
    assert_eq!(full, Asked::AgentFull);
    let mut agent = 0;
    while store.count_pending_approvals(&ada.eid, 0).await.unwrap() < PENDING_PER_PERSON {
        let asker = format!("job:other-{}", agent / PENDING_PER_AGENT);
        assert!(matches!(
            store
                .ask_approval(asked(&ada.eid, &asker, 0))
                .await
                .unwrap(),
            Asked::Kept(_)
        ));
        agent += 1;
    }
    let full = store
        .ask_approval(asked(&ada.eid, "token:9", 0))
        .await
        .unwrap();
    assert_eq!(full, Asked::PersonFull);
    // Once they expire, there is room again.
    let kept = store
        .ask_approval(asked(&ada.eid, "token:9", 60))
        .await
        .unwrap();
    assert!(matches!(kept, Asked::Kept(_)));
}

// The setting is read from the app's record, and each change of it moves
// the generation (so every server reads it again before its next call);
// saying it again changes nothing, and moves nothing.
#[tokio::test]
async fn writes_by_agents_need_approval_is_set_per_app_and_moves_the_generation() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    store.add_space("jeff", &ada.eid).await.unwrap();
    for slug in ["runs", "other"] {
        let files = [("index.html", b"<p>hi</p>".as_slice())];
        store
            .record_deploy(crate::common::deploy(&ada.eid, slug, &files))
            .await
            .unwrap();
    }
    let needs = async |slug: &str| {
        let (_, apps) = store.platform_apps().await.unwrap();
        let app = apps.iter().find(|a| a.slug == slug).unwrap();
        app.agent_writes_need_approval
    };
    let before = store.generation().await.unwrap();
    assert!(!needs("runs").await);
    store
        .set_agent_writes_need_approval("jeff/runs", true, &ada.eid)
        .await
        .unwrap();
    let set = store.generation().await.unwrap();
    assert_eq!((set.deploy, set.change), (before.deploy, before.change + 1));
    store
        .set_agent_writes_need_approval("jeff/runs", true, &ada.eid)
        .await
        .unwrap();
    assert_eq!(store.generation().await.unwrap(), set, "said again");
    assert!(needs("runs").await);
    assert!(!needs("other").await);
    store
        .set_agent_writes_need_approval("jeff/runs", false, &ada.eid)
        .await
        .unwrap();
    assert!(!needs("runs").await);
    assert_eq!(store.generation().await.unwrap().change, set.change + 1);
}

#[tokio::test]
async fn the_signing_key_is_made_once_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let first = store.approval_key(vec![1; 32]).await.unwrap();
    assert_eq!(first, vec![1; 32]);
    let again = store.approval_key(vec![2; 32]).await.unwrap();
    assert_eq!(again, vec![1; 32], "the first key stays");
}
