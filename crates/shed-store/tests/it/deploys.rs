//! A deploy's files read back: whole, or with the contents of only the files
//! a caller names (the host reads an app's manifest without its pages).

use std::collections::BTreeMap;

use shed_store::platform::NewDeploy;

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
            space: "jeff".into(),
            slug: "runs".into(),
            title: None,
            access: None,
            by: ada.eid.clone(),
            files: files.clone(),
            clear_drafts: false,
            rolls_back_to: None,
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
