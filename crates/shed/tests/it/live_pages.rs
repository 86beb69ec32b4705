//! Live pages, black-box: `GET <app>/api/watch?filter=<line>` of the real
//! `shed serve` as a page's `EventSource` reads it — an event for each
//! write through the page api or MCP, nothing for a write the line does not
//! read, exactly the missed writes replayed on `Last-Event-ID`, a closing
//! event once the caller is removed from the space, a private app's stream
//! refused to an outsider and to nobody signed in as a missing app's is,
//! the bounds refusing with a sentence, SIGTERM ending 100 open streams at
//! once, and (PostgreSQL) a write on one server reaching a stream on
//! another.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use reqwest::{StatusCode, header};
use serde_json::{Value, json};

use crate::data_place::{on_server, private_folder};
use crate::listening::free_port;
use crate::operating_support;
use crate::web_door::{Shed, run, run_club};

/// How soon a write reaches a stream: well inside the second a page's
/// reader waits.
const SOON: Duration = Duration::from_secs(3);

/// One open event stream, read as an `EventSource` reads it.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

/// One event: its name, id and data.
#[derive(Debug)]
struct Event {
    name: String,
    id: Option<String>,
    data: Value,
}

impl Events {
    /// The next event within `bound` (comments skipped), or `None` when
    /// none came or the stream ended.
    async fn next(&mut self, bound: Duration) -> Option<Event> {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut name, mut id, mut data) = ("message".to_string(), None, String::new());
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("id:") {
                        id = Some(value.trim().to_string());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some(Event {
                    name,
                    id,
                    data: serde_json::from_str(&data).unwrap(),
                });
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            match tokio::time::timeout(left, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }

    /// Whether the stream ended (the server closed it) within `bound`.
    async fn ended(&mut self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            match tokio::time::timeout(left, self.response.chunk()).await {
                Ok(Ok(Some(_))) => {}
                Ok(_) => return true,
                Err(_) => return false,
            }
        }
    }
}

/// The watch address of demo's `app` with `line`.
fn watch_url(shed: &Shed, app: &str, line: &str) -> String {
    shed.demo(&format!(
        "/{app}/api/watch?filter={}",
        line.replace('&', "%26").replace('!', "%21")
    ))
}

/// Opens a watch as `cookie` (a session cookie, or `Bearer <token>`), with
/// `Last-Event-ID` when given: the stream, or the refusal's status and JSON.
async fn open(
    shed: &Shed,
    app: &str,
    line: &str,
    cookie: Option<&str>,
    last: Option<&str>,
) -> Result<Events, (StatusCode, Value)> {
    let mut request = shed
        .http
        .get(watch_url(shed, app, line))
        .header(header::ACCEPT, "text/event-stream");
    request = match cookie {
        Some(bearer) if bearer.starts_with("Bearer ") => {
            request.header(header::AUTHORIZATION, bearer)
        }
        Some(cookie) => request.header(header::COOKIE, cookie),
        None => request,
    };
    if let Some(last) = last {
        request = request.header("last-event-id", last);
    }
    let response = request.send().await.unwrap();
    if response.status() != StatusCode::OK {
        let status = response.status();
        return Err((status, response.json().await.unwrap()));
    }
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    Ok(Events {
        response,
        buffer: String::new(),
    })
}

async fn watch(shed: &Shed, app: &str, line: &str, cookie: Option<&str>) -> Events {
    open(shed, app, line, cookie, None).await.unwrap()
}

/// The version a write through the page api committed as.
async fn write(shed: &Shed, app: &str, bundle: Value, cookie: &str) -> u64 {
    let (status, answer) = shed.apply(app, bundle, Some(cookie)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["version"].as_u64().unwrap()
}

#[tokio::test]
async fn writes_through_the_page_and_mcp_reach_the_stream() {
    let shed = Shed::start().await;
    let ada = shed.demo_cookie("ada").await;
    let mut events = watch(&shed, "runs", ".jog!", Some(&ada)).await;
    let version = write(&shed, "runs", run("Ada", 5.0), &ada).await;
    let event = events
        .next(SOON)
        .await
        .expect("the page's write as an event");
    assert_eq!(event.name, "write");
    assert_eq!(event.id, Some(version.to_string()));
    assert_eq!(event.data["version"], json!(version));
    assert_eq!(event.data["rows"][0]["jog"]["who"], "Ada");
    assert_eq!(event.data["by"]["handle"], "ada");
    assert_eq!(event.data["command"], "apply");
    assert_eq!(event.data["door"], "web");

    let token = shed.token("ed");
    let (refused, answer) = shed
        .mcp(
            &token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": run("Ed", 3.0) }),
        )
        .await;
    assert!(!refused, "{answer}");
    let event = events.next(SOON).await.expect("the MCP write as an event");
    assert_eq!(event.id, Some((version + 1).to_string()));
    assert_eq!(event.data["rows"][0]["jog"]["who"], "Ed");
    assert_eq!(event.data["by"]["handle"], "ed");
    assert_eq!(event.data["command"], "graph_apply");
    assert_eq!(event.data["door"], "mcp");

    // Somebody outside the space watching a public app sees what changed,
    // not who changed it: that is the space's to know.
    let sam = format!("Bearer {}", shed.token("sam"));
    let mut outside = watch(&shed, "pub", ".jog!", Some(&sam)).await;
    write(&shed, "pub", run("Ada", 1.0), &ada).await;
    let event = outside.next(SOON).await.expect("the public app's write");
    assert_eq!(event.data["rows"][0]["jog"]["who"], "Ada");
    assert!(event.data.get("by").is_none(), "{}", event.data);
}

#[tokio::test]
async fn a_line_that_excludes_a_kind_sends_nothing_for_its_writes() {
    let shed = Shed::start().await;
    let ada = shed.demo_cookie("ada").await;
    let mut jogs = watch(&shed, "runs", ".jog!", Some(&ada)).await;
    let mut everything = watch(&shed, "runs", "", Some(&ada)).await;
    let note = json!({ "entity": { "eid": "$note" }, "doc": { "title": "Rain tomorrow" } });
    let noted = write(&shed, "runs", note, &ada).await;
    let seen = everything.next(SOON).await.expect("the note, unfiltered");
    assert_eq!(seen.id, Some(noted.to_string()));
    let ran = write(&shed, "runs", run("Ada", 2.0), &ada).await;
    let event = jogs.next(SOON).await.expect("the run");
    assert_eq!(
        event.id,
        Some(ran.to_string()),
        "the note was sent: {event:?}"
    );
    assert!(jogs.next(Duration::from_millis(500)).await.is_none());
}

#[tokio::test]
async fn last_event_id_replays_exactly_the_missed_writes() {
    let shed = Shed::start().await;
    let ada = shed.demo_cookie("ada").await;
    let mut events = watch(&shed, "runs", ".jog!", Some(&ada)).await;
    let first = write(&shed, "runs", run("Ada", 1.0), &ada).await;
    let seen = events.next(SOON).await.unwrap();
    assert_eq!(seen.id, Some(first.to_string()));
    drop(events);
    let mut missed = Vec::new();
    for miles in [2.0, 3.0, 4.0] {
        missed.push(write(&shed, "runs", run("Ada", miles), &ada).await);
    }
    let mut again = open(&shed, "runs", ".jog!", Some(&ada), Some(&first.to_string()))
        .await
        .unwrap();
    let mut replayed = Vec::new();
    while let Some(event) = again.next(Duration::from_millis(800)).await {
        assert_eq!(event.name, "write");
        replayed.push(event.data["version"].as_u64().unwrap());
    }
    assert_eq!(replayed, missed);
    // What is not kept is not guessed: a page told to read afresh.
    let mut ahead = open(&shed, "runs", ".jog!", Some(&ada), Some("999999"))
        .await
        .unwrap();
    let event = ahead.next(SOON).await.expect("a reload");
    assert_eq!(event.name, "reload");
    assert_eq!(event.data["version"], json!(missed[2]));
}

#[tokio::test]
async fn a_caller_removed_from_the_space_is_closed_out() {
    let shed = Shed::start().await;
    let ed = shed.demo_cookie("ed").await;
    let mut events = watch(&shed, "runs", ".jog!", Some(&ed)).await;
    shed.shed(&["member", "remove", "demo", "ed"]);
    let event = events.next(SOON).await.expect("a closing event");
    assert_eq!(event.name, "closed");
    assert!(
        event.data["error"].as_str().unwrap().contains("demo/runs"),
        "{}",
        event.data
    );
    assert!(events.ended(SOON).await, "the stream stays open");
}

// A revocation announces itself nowhere: the stream asks again every
// WATCH_RECHECK (10 s), the stated time within which it ends.
#[tokio::test]
async fn a_revoked_token_s_stream_ends_within_the_recheck() {
    let shed = Shed::start().await;
    let ed = format!("Bearer {}", shed.token("ed"));
    let mut events = watch(&shed, "runs", ".jog!", Some(&ed)).await;
    let listed = shed.shed(&["token", "list", "ed"]);
    let id = listed
        .lines()
        .last()
        .and_then(|line| line.split_whitespace().next())
        .expect("ed's token listed")
        .to_string();
    shed.shed(&["token", "revoke", &id]);
    let within = shed_web::WATCH_RECHECK + SOON;
    let event = events.next(within).await.expect("a closing event");
    assert_eq!(event.name, "closed", "{event:?}");
    assert!(events.ended(SOON).await, "the stream stays open");
}

#[tokio::test]
async fn a_trashed_app_or_one_made_private_closes_its_streams() {
    let shed = Shed::start().await;
    let ed = shed.demo_cookie("ed").await;
    let mut member = watch(&shed, "runs", ".jog!", Some(&ed)).await;
    let sam = format!("Bearer {}", shed.token("sam"));
    let mut outsider = watch(&shed, "pub", ".jog!", Some(&sam)).await;
    shed.shed(&["app", "trash", "demo/runs", "--as", "ada"]);
    let event = member.next(SOON).await.expect("a closing event");
    assert_eq!(event.name, "closed", "{event:?}");
    assert!(member.ended(SOON).await);
    let club = run_club();
    shed.shed(&[
        "deploy",
        club.to_str().unwrap(),
        "--to",
        "demo/pub",
        "--as",
        "ada",
        "--access",
        "private",
    ]);
    let event = outsider.next(SOON).await.expect("a closing event");
    assert_eq!(event.name, "closed", "{event:?}");
    assert!(outsider.ended(SOON).await);
}

#[tokio::test]
async fn a_private_app_is_watched_by_nobody_outside_as_if_missing() {
    let shed = Shed::start().await;
    // The space's own may watch it…
    let ada = format!("Bearer {}", shed.token("ada"));
    watch(&shed, "runs", ".jog!", Some(&ada)).await;
    // …and nobody else learns it is there.
    let sam = format!("Bearer {}", shed.token("sam"));
    for cookie in [Some(sam.as_str()), None] {
        let private = open(&shed, "runs", ".jog!", cookie, None)
            .await
            .err()
            .unwrap();
        let missing = open(&shed, "nope", ".jog!", cookie, None)
            .await
            .err()
            .unwrap();
        assert_eq!(
            private.0, missing.0,
            "{cookie:?}: {} vs {}",
            private.1, missing.1
        );
        assert_eq!(
            private.1["error"]
                .as_str()
                .map(|s| s.replace("runs", "nope")),
            missing.1["error"].as_str().map(str::to_string)
        );
    }
}

#[tokio::test]
async fn the_bounds_refuse_with_a_sentence() {
    let shed = Shed::start().await;
    let mut open_ones = Vec::new();
    for _ in 0..shed_web::MOST_WATCHES_PER_ADDRESS {
        open_ones.push(watch(&shed, "pub", ".jog!", None).await);
    }
    let (status, refused) = open(&shed, "pub", ".jog!", None, None).await.err().unwrap();
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let sentence = refused["error"].as_str().unwrap();
    assert!(sentence.contains("sign in"), "{sentence}");
    // Signed in, a person has a bound of their own.
    let vic = shed.demo_cookie("vic").await;
    for _ in 0..shed_web::MOST_WATCHES_PER_PERSON {
        open_ones.push(watch(&shed, "pub", ".jog!", Some(&vic)).await);
    }
    let (status, refused) = open(&shed, "pub", ".jog!", Some(&vic), None)
        .await
        .err()
        .unwrap();
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(refused["error"].as_str().unwrap().contains("close a tab"));
    // A stream closed frees its place.
    open_ones.pop();
    tokio::time::sleep(Duration::from_millis(300)).await;
    watch(&shed, "pub", ".jog!", Some(&vic)).await;
}

#[tokio::test]
async fn sigterm_ends_a_hundred_streams_at_once() {
    let data = private_folder();
    let database = shed_test_database::for_folder(data.path());
    let on = |args: &[&str]| {
        let (ok, out, err) = operating_support::shed_on(data.path(), database.as_deref(), args);
        assert!(ok, "shed {args:?}: {err}");
        out
    };
    on(&["person", "add", "ada", "--name", "Ada"]);
    on(&["space", "add", "demo", "--owner", "ada"]);
    let club = run_club();
    on(&[
        "deploy",
        club.to_str().unwrap(),
        "--to",
        "demo/runs",
        "--as",
        "ada",
    ]);
    let mut tokens = Vec::new();
    for handle in ["bo", "cy", "di", "eve"] {
        on(&["person", "add", handle, "--name", handle]);
        on(&["member", "add", "demo", handle, "--role", "viewer"]);
        tokens.push(on(&["token", "create", handle]).trim().to_string());
    }
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let url = format!("http://localhost:{port}");
    let logs = data.path().join("serve.log");
    let server = operating_support::Shed::start(
        data.path(),
        database.as_deref(),
        &["serve", "--listen", &listen, "--public-url", &url],
        port,
        &logs,
        &[],
    );
    let at: SocketAddr = listen.parse().unwrap();
    let http = reqwest::Client::builder()
        .resolve("demo.localhost", at)
        .build()
        .unwrap();
    let mut streams = Vec::new();
    for n in 0..100 {
        let response = http
            .get(format!(
                "http://demo.localhost:{port}/runs/api/watch?filter=.jog%21"
            ))
            .bearer_auth(&tokens[n % tokens.len()])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "stream {n}");
        streams.push(response);
    }
    let stopping = Instant::now();
    let (status, _) = tokio::task::spawn_blocking(move || server.stop(libc::SIGTERM))
        .await
        .unwrap();
    let took = stopping.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        took < Duration::from_secs(3),
        "shed took {took:?} to stop with 100 streams open"
    );
    let log = std::fs::read_to_string(&logs).unwrap();
    assert!(log.contains("no calls in flight"), "{log}");
}

#[tokio::test]
async fn a_write_on_one_server_reaches_a_stream_on_another() {
    if !on_server() {
        eprintln!("two servers share a database only on PostgreSQL (SHED_TEST_DATABASE): skipped");
        return;
    }
    let one = Shed::start().await;
    let other = one.beside();
    let ada_one = one.demo_cookie("ada").await;
    let ada_other = format!("Bearer {}", one.token("ada"));
    let mut events = watch(&other, "runs", ".jog!", Some(&ada_other)).await;
    let written = Instant::now();
    let version = write(&one, "runs", run("Ada", 7.0), &ada_one).await;
    let event = events.next(SOON).await.expect("the other server's write");
    let took = written.elapsed();
    assert_eq!(event.id, Some(version.to_string()));
    assert_eq!(event.data["rows"][0]["jog"]["who"], "Ada");
    assert!(took < Duration::from_secs(1), "took {took:?}");
}
