//! Jobs: named `job-<n>`, found by their secret's hash (never the secret),
//! ended once, listed oldest first — on either backend.

use shed_store::{JobRecord, JobTerms, Store, StoreError, secret_hash};

use crate::common::open_store;

async fn store() -> (tempfile::TempDir, Store, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    (dir, store, ada.eid)
}

fn terms(person: &str) -> JobTerms {
    JobTerms {
        person: person.to_string(),
        allow: vec!["demo/runs.*".into()],
        read_only: vec!["demo/runs.leaderboard".into()],
        created_at: 10,
        expires_at: Some(20),
    }
}

async fn add(store: &Store, secret: &str, person: &str) -> Result<JobRecord, StoreError> {
    store.add_job(secret_hash(secret), terms(person)).await
}

#[tokio::test]
async fn a_job_is_named_found_by_its_secret_s_hash_ended_once_and_listed() {
    let (_dir, store, ada) = store().await;
    let job = add(&store, "s1", &ada).await.unwrap();
    assert_eq!(job.name, "job-1");
    let second = add(&store, "s2", &ada).await.unwrap();
    assert_eq!(second.name, "job-2");
    let hash = secret_hash("s1");
    assert_eq!(
        store.job_by_secret_hash(&hash).await.unwrap(),
        Some(job.clone())
    );
    assert_eq!(
        store.job_by_secret_hash("s1").await.unwrap(),
        None,
        "the secret itself is not kept"
    );
    assert_eq!(store.job_named("job-1").await.unwrap(), Some(job.clone()));
    for not_a_name in ["job-01", "job-0", "job-", "job-x", "1", "job--1", "job-+1"] {
        assert_eq!(
            store.job_named(not_a_name).await.unwrap(),
            None,
            "{not_a_name}"
        );
    }
    let ended = store.end_job("job-1", 15).await.unwrap().unwrap();
    assert_eq!(ended.ended_at, Some(15));
    let again = store.end_job("job-1", 99).await.unwrap().unwrap();
    assert_eq!(again.ended_at, Some(15), "the first end stands");
    assert_eq!(store.end_job("job-9", 1).await.unwrap(), None);
    let names: Vec<String> = store
        .jobs()
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.name)
        .collect();
    assert_eq!(names, ["job-1", "job-2"]);
}

#[tokio::test]
async fn a_secret_is_kept_once() {
    let (_dir, store, ada) = store().await;
    add(&store, "s1", &ada).await.unwrap();
    assert!(add(&store, "s1", &ada).await.is_err());
}
