//! Logs, black-box. A full run of the real `shed up` at the most verbose
//! level (RUST_LOG=trace, every crate): a sign-in link opened and its
//! button pressed with the hops followed, a signed-in page, a second token
//! made, MCP calls with a token (a write, a query, a private view read, its
//! view key's page), and a broker job that runs a command. Afterwards the
//! logs hold none of the secrets that passed — tokens, the sign-in key, hop
//! codes, cookies, the view key, the job id — and no terminal escape code
//! (stderr was a file); a line logged while a request was answered names
//! its request id. `--log-format json` writes one JSON object a line, each
//! request's lines carrying its span.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use reqwest::{StatusCode, header};
use serde_json::{Value, json};

use crate::data_place::{DataIn, make_private};
use crate::operating_support::{SHED, Shed, call, data_folder, log_run, shed, succeeded};

/// A browser's cookies, per host name, and every value it was ever given.
#[derive(Default)]
struct Browser {
    jar: HashMap<String, Vec<(String, String)>>,
    given: Vec<String>,
}

impl Browser {
    fn keep(&mut self, url: &reqwest::Url, headers: &header::HeaderMap) {
        let host = url.host_str().unwrap().to_string();
        for set in headers.get_all(header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            let cookies = self.jar.entry(host.clone()).or_default();
            cookies.retain(|(kept, _)| kept != name);
            if !value.is_empty() {
                cookies.push((name.to_string(), value.to_string()));
                self.given.push(value.to_string());
            }
        }
    }

    fn cookie(&self, url: &reqwest::Url) -> Option<String> {
        let cookies = self.jar.get(url.host_str()?)?;
        let pairs: Vec<String> = cookies.iter().map(|(n, v)| format!("{n}={v}")).collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }
}

/// Every value of a query string: the hop codes a sign-in's 303s carry.
fn query_values(url: &reqwest::Url) -> Vec<String> {
    url.query_pairs()
        .flat_map(|(_, value)| {
            value
                .split([',', ':'])
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|value| value.len() >= 16)
        .collect()
}

/// Opens the sign-in `link`, presses its button and follows the hops to
/// the front page: every secret the browser was handed on the way.
async fn sign_in(
    http: &reqwest::Client,
    shed: &Shed,
    link: &str,
    browser: &mut Browser,
) -> Vec<String> {
    let opened = http.get(link).send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::OK);
    let key = link.split_once("?key=").unwrap().1.to_string();
    let mut secrets = vec![key.clone()];
    let mut response = http
        .post(shed.url("/_shed/login"))
        .header(header::ORIGIN, shed.url(""))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("key={key}"))
        .send()
        .await
        .unwrap();
    for _ in 0..20 {
        browser.keep(response.url(), response.headers());
        if response.status() != StatusCode::SEE_OTHER {
            assert_eq!(response.status(), StatusCode::OK);
            return secrets;
        }
        let next = response
            .url()
            .join(response.headers()[header::LOCATION].to_str().unwrap())
            .unwrap();
        secrets.extend(query_values(&next));
        let mut request = http.get(next.clone());
        if let Some(cookie) = browser.cookie(&next) {
            request = request.header(header::COOKIE, cookie);
        }
        response = request.send().await.unwrap();
    }
    panic!("the sign-in hops did not end");
}

/// A client that reaches the server's space hosts too.
fn client(shed: &Shed) -> reqwest::Client {
    let at = SocketAddr::from(([127, 0, 0, 1], shed.port));
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .resolve("localhost", at)
        .resolve("demo.localhost", at)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_run_at_trace_level_logs_no_secret_and_no_escape_code() {
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let served = Shed::up(&data, &logs, &[("RUST_LOG", "trace")]);
    let http = client(&served);
    let token = served.token();
    let mut secrets = vec![token.clone()];

    // The web: a sign-in link, its button, the hops, a signed-in page.
    let (ok, link, said) = shed(&data, &["login", "you", "--public-url", &served.url("")]);
    assert!(ok, "{said}");
    let mut browser = Browser::default();
    secrets.extend(sign_in(&http, &served, link.trim(), &mut browser).await);
    let front = reqwest::Url::parse(&served.url("/")).unwrap();
    let page = http
        .get(front.clone())
        .header(header::COOKIE, browser.cookie(&front).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    secrets.extend(browser.given.iter().cloned());

    // MCP with a second token: a write, a query, a private view and its key.
    let (ok, second, said) = shed(&data, &["token", "create", "you"]);
    assert!(ok, "{said}");
    let second = second.trim().to_string();
    secrets.push(second.clone());
    let mcp = served.url("/mcp");
    succeeded(log_run(&http, &mcp, &second, "Ada").await.unwrap());
    succeeded(
        call(
            &http,
            &mcp,
            &second,
            "graph_query",
            json!({ "app": "demo/runs", "filter": ".jog!" }),
        )
        .await
        .unwrap(),
    );
    let view = read_view(&http, &mcp, &second).await;
    let key_at = view
        .find("/_shed/view/")
        .expect("a private view's key in its base href");
    let key = view[key_at + "/_shed/view/".len()..]
        .split('/')
        .next()
        .unwrap()
        .to_string();
    secrets.push(key.clone());
    let keyed = http
        .get(format!(
            "http://demo.localhost:{}/_shed/view/{key}/runs/style.css",
            served.port
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(keyed.status(), StatusCode::OK);

    // The broker: a job runs a command.
    let (ok, job, said) = shed(
        &data,
        &["job", "create", "--person", "you", "--allow", "demo/runs.*"],
    );
    assert!(ok, "{said}");
    let job = job.trim().to_string();
    secrets.push(job.clone());
    let ran = Command::new(SHED)
        .args([
            "command",
            "run",
            "demo/runs.log_run",
            "--json",
            "--args-json",
        ])
        .arg(json!({ "who": "Bo", "miles": 3, "at": "2026-09-02" }).to_string())
        .env_clear()
        .env("LOOM_PAGE_RPC_QUEUE", data.join("command-queue.sock"))
        .env("LOOM_COMMAND_JOB_ID", &job)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let outcome: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(outcome["ok"], json!(true), "{outcome}");

    let (status, _) = served.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0));
    let log = std::fs::read_to_string(&logs).unwrap();
    assert!(log.contains(" DEBUG "), "logged past info: {log}");
    for secret in &secrets {
        assert!(secret.len() >= 16, "a secret, not a word: {secret}");
        assert!(
            !log.contains(secret.as_str()),
            "the log holds the secret {secret}"
        );
    }
    assert!(
        !log.contains('\u{1b}'),
        "a log written to a file holds an escape code"
    );
    let signed_in = log
        .lines()
        .find(|line| line.contains("signed in with a link"))
        .expect("the sign-in is logged");
    assert!(signed_in.contains("request{id="), "{signed_in}");
    assert!(signed_in.contains("path=/_shed/login"), "{signed_in}");
    assert!(
        log.contains("path=/_shed/view/}"),
        "a view key's path is cut at the key"
    );
}

/// `resources/read` of demo/runs' leaderboard view: its page.
async fn read_view(http: &reqwest::Client, mcp: &str, token: &str) -> String {
    let message = json!({
        "jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": { "uri": "ui://demo/runs/leaderboard.html", "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} } }
    });
    let answer: Value = http
        .post(mcp)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "resources/read")
        .header("mcp-name", "ui://demo/runs/leaderboard.html")
        .json(&message)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no page in {answer}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_a_line_with_the_request_span() {
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let served = Shed::up(
        &data,
        &logs,
        &[("RUST_LOG", "shed=debug,info"), ("SHED_LOG_FORMAT", "json")],
    );
    let health = reqwest::get(served.url("/healthz")).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let (status, _) = served.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0));
    let log = std::fs::read_to_string(&logs).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let answered = lines
        .iter()
        .find(|line| line["fields"]["message"] == json!("answered"))
        .unwrap_or_else(|| panic!("no request logged: {log}"));
    assert_eq!(answered["span"]["name"], json!("request"), "{answered}");
    assert_eq!(answered["span"]["path"], json!("/healthz"), "{answered}");
    assert!(answered["span"]["id"].is_u64(), "{answered}");
    assert_eq!(answered["fields"]["status"], json!(200), "{answered}");
}

#[test]
fn piped_logs_carry_no_escape_codes() {
    let (_dir, data) = data_folder();
    make_private(&data);
    let output = Command::new(SHED)
        .args(["person", "add", "ada"])
        .data_in(&data)
        .env("RUST_LOG", "debug")
        .env_remove("NO_COLOR")
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success());
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(said.contains("applied store migration"), "{said}");
    assert!(!said.contains('\u{1b}'), "{said:?}");
}

#[test]
fn a_new_data_folder_logs_one_line_for_its_store_and_none_per_migration() {
    let (dir, data) = data_folder();
    let logs = dir.path().join("logs");
    let served = Shed::up(&data, &logs, &[]);
    let (status, _) = served.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0));
    let log = std::fs::read_to_string(&logs).unwrap();
    let store: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("migration") || line.contains("schema version"))
        .collect();
    assert_eq!(store.len(), 1, "{log}");
    assert!(
        store[0].contains("made the store at schema version "),
        "{}",
        store[0]
    );
}

/// A data folder `shed up` made (and stopped): what `shed serve` serves.
fn made_folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, data) = data_folder();
    let made = Shed::up(&data, &dir.path().join("made"), &[]);
    let (status, _) = made.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0));
    (dir, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_line_shed_serve_writes_in_json_mode_is_json() {
    let (dir, data) = made_folder();
    let logs = dir.path().join("logs");
    let served = Shed::serve(&data, &logs, &[("SHED_LOG_FORMAT", "json")]);
    let health = reqwest::get(served.url("/healthz")).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let (status, printed) = served.stop(libc::SIGINT);
    assert_eq!(status.code(), Some(0));
    let log = std::fs::read_to_string(&logs).unwrap();
    let mut stopped = None;
    for line in printed.iter().map(String::as_str).chain(log.lines()) {
        let line: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        let message = line["fields"]["message"].as_str().unwrap_or_default();
        if message.starts_with("shed stopped") {
            stopped = Some(line.clone());
        }
    }
    let stopped = stopped.unwrap_or_else(|| panic!("no stop logged: {log}"));
    assert_eq!(stopped["level"], json!("INFO"), "{stopped}");
}

#[test]
fn a_serve_that_cannot_start_says_why_in_json_in_json_mode() {
    let (_dir, data) = made_folder();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let output = Command::new(SHED)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .data_in(&data)
        .env("SHED_LOG_FORMAT", "json")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<Value> = said
        .lines()
        .chain(std::str::from_utf8(&output.stdout).unwrap().lines())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    let why = lines
        .iter()
        .find(|line| line["level"] == json!("ERROR"))
        .unwrap_or_else(|| panic!("no error logged: {said}"));
    assert!(
        why["fields"]["message"]
            .as_str()
            .is_some_and(|message| message.contains(&port.to_string())),
        "{why}"
    );
}
