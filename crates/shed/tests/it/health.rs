//! `/healthz` and `/readyz`, black-box: the real `shed up` answers both on
//! the platform's host; when its database is moved out of the data folder
//! under it, `/readyz` is a 503 with the sentence saying so while
//! `/healthz` still answers, and it is ready again once the file is back.

use reqwest::StatusCode;

use crate::operating_support::{Shed, data_folder};

/// GET `url`: the status and the body.
async fn get(url: &str) -> (StatusCode, String) {
    let response = reqwest::get(url).await.unwrap();
    (response.status(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_with_a_sentence_while_the_database_is_gone_and_healthz_answers() {
    let (dir, data) = data_folder();
    let shed = Shed::up(&data, &dir.path().join("logs"), &[]);
    assert_eq!(
        get(&shed.url("/healthz")).await,
        (StatusCode::OK, "ok\n".to_string())
    );
    assert_eq!(
        get(&shed.url("/readyz")).await,
        (StatusCode::OK, "ready\n".to_string())
    );

    let database = data.join("shed.db");
    let moved = dir.path().join("moved.db");
    std::fs::rename(&database, &moved).unwrap();
    let (status, said) = get(&shed.url("/readyz")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{said}");
    assert_eq!(
        said,
        format!(
            "not ready: the database {} was moved, removed or replaced while shed was running — put it back; until then writes go to a file that is no longer in the data folder\n",
            database.display()
        )
    );
    assert_eq!(get(&shed.url("/healthz")).await.0, StatusCode::OK);

    // Another file in its place is not the database shed has open either.
    std::fs::copy(&moved, &database).unwrap();
    assert_eq!(
        get(&shed.url("/readyz")).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    std::fs::rename(&moved, &database).unwrap();
    assert_eq!(
        get(&shed.url("/readyz")).await,
        (StatusCode::OK, "ready\n".to_string())
    );
}
