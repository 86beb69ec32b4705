//! `/healthz` and `/readyz`, black-box: the real `shed up` answers both on
//! the platform's host; when its database is moved out of the data folder
//! under it (SQLite) or refuses connections (PostgreSQL), `/readyz` is a
//! 503 with the sentence saying so while `/healthz` still answers, and it
//! is ready again once the database is back.

use reqwest::StatusCode;

use crate::data_place::{on_server, on_sqlite};
use crate::operating_support::{Shed, data_folder};

/// GET `url`: the status and the body.
async fn get(url: &str) -> (StatusCode, String) {
    let response = reqwest::get(url).await.unwrap();
    (response.status(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_with_a_sentence_while_the_database_is_gone_and_healthz_answers() {
    if !on_sqlite("readyz_fails_with_a_sentence_while_the_database_is_gone_and_healthz_answers") {
        return;
    }
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

/// Runs `sql` on the test server's own database, as its administrator.
async fn on_the_server(sql: &str) {
    let server = shed_test_database::server().expect("the tests run on a server");
    let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client.batch_execute(sql).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_fails_with_the_server_s_sentence_while_the_database_refuses_connections() {
    if !on_server() {
        eprintln!(
            "readyz_fails_with_the_server_s_sentence_while_the_database_refuses_connections: a test of a database server, skipped on SQLite"
        );
        return;
    }
    let (dir, data) = data_folder();
    let shed = Shed::up(&data, &dir.path().join("logs"), &[]);
    assert_eq!(
        get(&shed.url("/readyz")).await,
        (StatusCode::OK, "ready\n".to_string())
    );
    let url = shed_test_database::for_folder(&data).unwrap();
    let (_, database) = url.rsplit_once('/').unwrap();
    let address = url.split_once('@').unwrap().1.split_once('/').unwrap().0;

    on_the_server(&format!(
        "ALTER DATABASE {database} ALLOW_CONNECTIONS false;
         SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}';"
    ))
    .await;
    let refused = format!(
        "not ready: the database does not answer: PostgreSQL at {address} refused shed: database \"{database}\" is not currently accepting connections\n"
    );
    // A connection the pool held may first answer that it was ended.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, said) = get(&shed.url("/readyz")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{said}");
        if said == refused {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{said}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(get(&shed.url("/healthz")).await.0, StatusCode::OK);

    on_the_server(&format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true")).await;
    assert_eq!(
        get(&shed.url("/readyz")).await,
        (StatusCode::OK, "ready\n".to_string())
    );
}
