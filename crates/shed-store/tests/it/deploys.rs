//! Spaces and their members, apps and their deploys, drafts and listed
//! tools (`records/platform.rs`), on either backend. A deploy's files read
//! back whole, or with the contents of only the files a caller names (the
//! host reads an app's manifest without its pages).

use std::collections::BTreeMap;

use shed_store::platform::NewDeploy;

use crate::common::deploy;

#[tokio::test]
async fn a_deploy_reads_back_whole_or_with_only_the_named_contents() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    store.add_space("jeff", &ada.eid).await.unwrap();
    let files: BTreeMap<String, Vec<u8>> = [
        ("tools.json", b"{}".to_vec()),
        ("vocab.json", br#"{"jog": {"miles": "number"}}"#.to_vec()),
        ("index.html", vec![b'x'; 200_000]),
        ("img/logo.png", vec![0u8; 70_000]),
    ]
    .into_iter()
    .map(|(path, content)| (path.to_string(), content))
    .collect();
    let record = store
        .record_deploy(NewDeploy {
            files: files.clone(),
            ..deploy(&ada.eid, "runs", &[])
        })
        .await
        .unwrap();

    assert_eq!(store.deploy_files(record.deploy).await.unwrap(), files);

    let manifest = store
        .deploy_files_with_contents_of(record.deploy, &["vocab.json", "tools.json", "tools.yml"])
        .await
        .unwrap();
    let paths: Vec<&str> = manifest.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        ["img/logo.png", "index.html", "tools.json", "vocab.json"]
    );
    assert_eq!(manifest["vocab.json"], files["vocab.json"]);
    assert_eq!(manifest["tools.json"], b"{}");
    assert!(manifest["index.html"].is_empty() && manifest["img/logo.png"].is_empty());
}

#[tokio::test]
async fn deploys_count_versions_and_keep_what_they_do_not_say() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    assert_eq!(
        store
            .record_deploy(deploy(&ada.eid, "runs", &[]))
            .await
            .unwrap_err()
            .to_string(),
        "no space jeff"
    );
    store.add_space("jeff", &ada.eid).await.unwrap();
    assert!(store.space_exists("jeff").await.unwrap());
    assert!(!store.space_exists("club").await.unwrap());

    let first = store
        .record_deploy(deploy(&ada.eid, "runs", &[("index.html", b"one")]))
        .await
        .unwrap();
    assert_eq!(
        (first.version, first.title.as_str(), first.access.as_str()),
        (1, "runs", "private")
    );
    assert_eq!(first.deployed_by, ada);
    assert_eq!(first.trashed, None);
    let second = store
        .record_deploy(NewDeploy {
            title: Some("Runs".into()),
            access: Some("public".into()),
            ..deploy(&ada.eid, "runs", &[("index.html", b"two")])
        })
        .await
        .unwrap();
    assert!(second.deploy > first.deploy);
    let third = store
        .record_deploy(NewDeploy {
            rolls_back_to: Some(1),
            ..deploy(&ada.eid, "runs", &[("index.html", b"one")])
        })
        .await
        .unwrap();
    assert_eq!(
        (third.version, third.title.as_str(), third.access.as_str()),
        (3, "Runs", "public")
    );
    assert_eq!(
        store.platform_app("jeff", "runs").await.unwrap(),
        Some(third.clone())
    );
    assert_eq!(store.platform_app("jeff", "walks").await.unwrap(), None);
    assert_eq!(
        store
            .deploy_file(second.deploy, "index.html")
            .await
            .unwrap(),
        Some(b"two".to_vec())
    );
    assert_eq!(
        store.deploy_file(second.deploy, "app.js").await.unwrap(),
        None
    );
    let none_wanted = store
        .deploy_files_with_contents_of(third.deploy, &[])
        .await
        .unwrap();
    assert_eq!(
        none_wanted.into_iter().collect::<Vec<_>>(),
        [("index.html".to_string(), Vec::new())]
    );
}

#[tokio::test]
async fn drafts_are_kept_until_a_deploy_clears_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let drafts = |pairs: &[(&str, Option<&[u8]>)]| -> BTreeMap<String, Option<Vec<u8>>> {
        pairs
            .iter()
            .map(|(path, content)| (path.to_string(), content.map(<[u8]>::to_vec)))
            .collect()
    };
    assert_eq!(
        store
            .write_drafts("jeff", "runs", drafts(&[("a.html", Some(b"a"))]))
            .await
            .unwrap_err()
            .to_string(),
        "no space jeff"
    );
    assert!(store.drafts("jeff", "runs").await.unwrap().is_empty());
    store.add_space("jeff", &ada.eid).await.unwrap();
    // An app need not be deployed for its drafts; a draft is written again
    // in place, and `None` marks a file the next deploy deletes.
    store
        .write_drafts("jeff", "runs", drafts(&[("a.html", Some(b"a"))]))
        .await
        .unwrap();
    let written = drafts(&[("a.html", Some(b"b")), ("old.html", None)]);
    store
        .write_drafts("jeff", "runs", written.clone())
        .await
        .unwrap();
    assert_eq!(store.drafts("jeff", "runs").await.unwrap(), written);
    assert!(store.drafts("jeff", "walks").await.unwrap().is_empty());

    store
        .record_deploy(deploy(&ada.eid, "runs", &[("a.html", b"b")]))
        .await
        .unwrap();
    assert_eq!(store.drafts("jeff", "runs").await.unwrap(), written);
    store
        .record_deploy(NewDeploy {
            clear_drafts: true,
            ..deploy(&ada.eid, "runs", &[("a.html", b"b")])
        })
        .await
        .unwrap();
    assert!(store.drafts("jeff", "runs").await.unwrap().is_empty());
}

#[tokio::test]
async fn spaces_members_and_listed_tools() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::common::open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let bob = store.add_person("bob", "Bob").await.unwrap();
    store.add_space("jeff", &ada.eid).await.unwrap();
    assert_eq!(
        store
            .add_space("jeff", &bob.eid)
            .await
            .unwrap_err()
            .to_string(),
        "space jeff is taken — pick another slug"
    );
    assert_eq!(
        store
            .set_member("club", &bob.eid, "viewer")
            .await
            .unwrap_err()
            .to_string(),
        "no space club"
    );
    store.add_space("club", &bob.eid).await.unwrap();
    store.set_member("club", &ada.eid, "viewer").await.unwrap();
    store.set_member("club", &ada.eid, "editor").await.unwrap();
    let roles: Vec<(String, String)> = store
        .memberships(&ada.eid)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.space, m.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("club".to_string(), "editor".to_string()),
            ("jeff".to_string(), "owner".to_string())
        ]
    );

    assert_eq!(store.listed_tools("agent:job-1").await.unwrap(), None);
    for fingerprint in ["f1", "f2"] {
        store
            .record_listed_tools("agent:job-1", fingerprint)
            .await
            .unwrap();
    }
    assert_eq!(
        store.listed_tools("agent:job-1").await.unwrap().as_deref(),
        Some("f2")
    );
}
