//! PostgreSQL over TLS, black-box: the real `shed` reads `sslmode` and
//! `sslrootcert` in the database URL as libpq does. Against the test server
//! speaking TLS with a certificate for `localhost` signed by a CA the test
//! set-up made (`scripts/postgres-cluster --tls`, which exports that CA as
//! `SHED_TEST_DATABASE_CA`): `verify-full` by the certificate's name
//! connects, shed serves and every connection it holds is encrypted;
//! `verify-full` by an address the certificate does not name, and by a
//! certificate no trusted authority signed, are refused with a sentence
//! (`verify-ca` and `require` by the address connect); `shed migrate --to`
//! copies over TLS and a shed serves the copy. Without such a server those
//! tests say they are skipped. `require` against a server without TLS —
//! a listener of the test answering the TLS request with `N`, as such a
//! server does — is refused with a sentence, on every backend.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::data_place::private_folder;
use crate::operating_support::{Shed, call, data_folder, every_run, log_run, shed_on, succeeded};

/// The environment variable naming the test server's CA certificate.
const CA: &str = "SHED_TEST_DATABASE_CA";

/// The CA certificate of the test server when it speaks TLS; `None`, said
/// on stderr naming `test`, when it does not.
fn tls_server(test: &str) -> Option<String> {
    match (shed_test_database::server(), std::env::var(CA)) {
        (Some(_), Ok(ca)) if !ca.is_empty() => Some(ca),
        _ => {
            eprintln!(
                "{test}: a test of PostgreSQL over TLS, skipped without a test server speaking TLS ({CA}, from scripts/postgres-cluster --tls)"
            );
            None
        }
    }
}

/// `url` (`postgres://user:password@127.0.0.1:port/database`) reaching the
/// server by `host`, with `parameters` as its query.
fn by(url: &str, host: &str, parameters: &str) -> String {
    let (credentials, place) = url.split_once('@').unwrap();
    let (_, port_and_database) = place.split_once(':').unwrap();
    format!("{credentials}@{host}:{port_and_database}?{parameters}")
}

/// `host:port` of the test server.
fn address(url: &str, host: &str) -> String {
    let port = url
        .split_once('@')
        .unwrap()
        .1
        .split([':', '/'])
        .nth(1)
        .unwrap();
    format!("{host}:{port}")
}

/// `shed person list` on the database `url` names: whether it
/// succeeded, and its stderr.
fn list_people(data: &Path, url: &str) -> (bool, String) {
    let (ok, _, said) = shed_on(data, Some(url), &["person", "list"]);
    (ok, said)
}

/// A private data folder holding a shed database of its own (SQLite), as
/// `shed migrate` copies from.
async fn a_folder_with_a_database() -> tempfile::TempDir {
    let folder = private_folder();
    shed_store::Store::open(&folder.path().join("shed.db"))
        .await
        .unwrap()
        .close()
        .await
        .unwrap();
    folder
}

/// A refusal is the one sentence `sentence`, with no password and no panic.
fn refused_with(answered: (bool, String), sentence: &str) {
    let (ok, said) = answered;
    assert!(!ok, "refused: {said}");
    assert!(said.contains(sentence), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "one sentence: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_full_by_the_certificate_s_name_connects_shed_serves_and_every_connection_is_encrypted()
 {
    let Some(ca) = tls_server(
        "verify_full_by_the_certificate_s_name_connects_shed_serves_and_every_connection_is_encrypted",
    ) else {
        return;
    };
    let (dir, data) = data_folder();
    let url = shed_test_database::for_folder(&data).unwrap();
    let checked = by(
        &url,
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let shed = Shed::up_on(&data, Some(&checked), &dir.path().join("logs"), &[]);
    let token = shed.token();
    let (http, mcp) = (reqwest::Client::new(), shed.url("/mcp"));
    succeeded(log_run(&http, &mcp, &token, "Ada").await.unwrap());
    let runs = every_run(&http, &mcp, &token).await;
    assert_eq!(runs.values().collect::<Vec<_>>(), ["Ada"]);
    let ready = reqwest::get(shed.url("/readyz")).await.unwrap();
    assert_eq!(ready.text().await.unwrap(), "ready\n");

    // Every connection shed holds to its database is encrypted.
    let server = shed_test_database::server().unwrap();
    let admin = shed_store::connect_to_server(&server).await.unwrap();
    let (_, database) = url.rsplit_once('/').unwrap();
    let connections: Vec<(bool, i64)> = admin
        .query(
            "SELECT s.ssl, COUNT(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.datname = $1 AND a.application_name = 'shed' GROUP BY s.ssl",
            &[&database],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert!(
        !connections.is_empty() && connections.iter().all(|(ssl, _)| *ssl),
        "{connections:?}"
    );
}

#[tokio::test]
async fn a_certificate_that_does_not_name_the_host_or_no_trusted_authority_signed_is_refused() {
    let Some(ca) = tls_server(
        "a_certificate_that_does_not_name_the_host_or_no_trusted_authority_signed_is_refused",
    ) else {
        return;
    };
    let folder = a_folder_with_a_database().await;
    let data = folder.path();
    let url = shed_test_database::for_folder(data).unwrap();
    let at_address = address(&url, "127.0.0.1");

    // The certificate names localhost, not 127.0.0.1.
    let by_address = by(
        &url,
        "127.0.0.1",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    refused_with(
        list_people(data, &by_address),
        &format!(
            "the certificate of the database server at {at_address} does not name 127.0.0.1, and sslmode=verify-full checks the name — connect by a name the certificate holds, or set sslmode=verify-ca to check only who signed it"
        ),
    );
    // The same over `shed migrate --to`.
    let (ok, _, said) = shed_on(data, None, &["migrate", "--to", &by_address]);
    refused_with(
        (ok, said),
        &format!("the certificate of the database server at {at_address} does not name 127.0.0.1"),
    );

    // The system's authorities did not sign it.
    let unknown = by(&url, "localhost", "sslmode=verify-full");
    refused_with(
        list_people(data, &unknown),
        &format!(
            "the certificate of the database server at {} is not signed by an authority shed trusts — name the server's CA certificate with sslrootcert=FILE in the URL, or set sslmode=require to encrypt without checking",
            address(&url, "localhost")
        ),
    );

    // A root certificate file that is not there.
    let missing = by(
        &url,
        "localhost",
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    refused_with(
        list_people(data, &missing),
        "sslrootcert=/nonexistent/ca.pem cannot be read",
    );

    // verify-ca checks the chain only; require, without sslrootcert,
    // encrypts without checking.
    for parameters in [
        format!("sslmode=verify-ca&sslrootcert={ca}"),
        "sslmode=require".to_string(),
    ] {
        let (ok, said) = list_people(data, &by(&url, "127.0.0.1", &parameters));
        assert!(ok, "{parameters}: {said}");
    }
}

/// A server without TLS, as the test's own listener on loopback: it
/// answers each TLS request with `N`, as PostgreSQL without `ssl` does,
/// until `stop` is set, and keeps what each connection sent first.
fn a_server_without_tls(stop: Arc<AtomicBool>) -> (u16, std::thread::JoinHandle<Vec<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let serving = std::thread::spawn(move || {
        let mut requests = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let mut stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            stream.set_nonblocking(false).unwrap();
            let mut request = vec![0; 8];
            stream.read_exact(&mut request).unwrap();
            stream.write_all(b"N").unwrap();
            // The client closes the connection rather than go on in the clear.
            let mut rest = Vec::new();
            let _ = stream.read_to_end(&mut rest);
            assert!(rest.is_empty(), "nothing sent in the clear: {rest:?}");
            requests.push(request);
        }
        requests
    });
    (port, serving)
}

#[tokio::test]
async fn require_against_a_server_without_tls_is_refused_with_a_sentence() {
    let folder = a_folder_with_a_database().await;
    let data = folder.path();
    let stop = Arc::new(AtomicBool::new(false));
    let (port, serving) = a_server_without_tls(stop.clone());
    let sentence = |mode: &str| {
        format!(
            "the database server at 127.0.0.1:{port} does not offer TLS, and sslmode={mode} asks for it — turn TLS on at the server (ssl = on, with ssl_cert_file and ssl_key_file), or set sslmode=prefer in the URL on a network you trust"
        )
    };
    for (mode, command) in [
        ("require", ["person", "list"].as_slice()),
        ("verify-full", ["person", "list"].as_slice()),
        ("require", ["migrate", "--to", "URL"].as_slice()),
    ] {
        let url = format!("postgres://shed:secret@127.0.0.1:{port}/shed?sslmode={mode}");
        let args: Vec<&str> = command
            .iter()
            .map(|a| if *a == "URL" { url.as_str() } else { a })
            .collect();
        let database = (command[0] != "migrate").then_some(url.as_str());
        let (ok, _, said) = shed_on(data, database, &args);
        refused_with((ok, said.clone()), &sentence(mode));
        assert!(!said.contains("secret"), "{said}");
    }
    // Each asked for TLS (PostgreSQL's SSLRequest) before anything else.
    stop.store(true, Ordering::Relaxed);
    let ssl_request = [0, 0, 0, 8, 4, 210, 22, 47];
    assert_eq!(serving.join().unwrap(), vec![ssl_request.to_vec(); 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_to_over_tls_copies_and_a_shed_serves_the_copy() {
    let Some(ca) = tls_server("migrate_to_over_tls_copies_and_a_shed_serves_the_copy") else {
        return;
    };
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let source = Shed::up_on(&data, None, &logs, &[]);
    let token = source.token();
    let http = reqwest::Client::new();
    succeeded(
        log_run(&http, &source.url("/mcp"), &token, "Grace")
            .await
            .unwrap(),
    );
    assert!(source.stop(libc::SIGTERM).0.success());

    let target = by(
        &shed_test_database::fresh().unwrap(),
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let (ok, printed, said) = shed_on(&data, None, &["migrate", "--to", &target]);
    assert!(ok, "{said}");
    assert!(printed.contains("copied "), "{printed}");

    let (_served_dir, served_data) = data_folder();
    let served = Shed::up_on(&served_data, Some(&target), &logs, &[]);
    let runs = every_run(&http, &served.url("/mcp"), &token).await;
    assert_eq!(runs.values().collect::<Vec<_>>(), ["Grace"]);
    let answer = succeeded(
        call(&http, &served.url("/mcp"), &token, "commands", json!({}))
            .await
            .unwrap(),
    );
    assert!(answer.to_string().contains("log_run"), "{answer}");
}
