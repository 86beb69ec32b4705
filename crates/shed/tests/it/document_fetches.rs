//! The fetches of OAuth client metadata documents, black-box. A `client_id`
//! that is a URL makes `shed serve` fetch it on a stranger's say-so
//! (`GET /oauth/authorize` needs no sign-in), so: no address of this
//! machine or its networks is reached, however the URL writes it — a
//! listener the test runs on loopback records that nothing connected —
//! unless the development flag allows loopback; every failed fetch is
//! refused with one sentence, so shed tells no closed port from an erring
//! or a JSON-answering one; and past the cap on fetches at once, overall
//! and for one address, an ask is refused at once, not queued.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use shed_host::oauth::{MOST_DOCUMENT_FETCHES, MOST_DOCUMENT_FETCHES_PER_ADDRESS};
use tokio::net::{TcpListener, TcpStream};

use crate::oauth::{Documents, LOOPBACK_DOCUMENTS, ask, encoded, refusal_naming, refusal_sentence};
use crate::web_door::{Jar, Shed};

/// A listener on loopback (127.0.0.1, and [::1] at the same port when the
/// machine has it) that counts the connections reaching it and holds them,
/// unanswered, until let go.
struct Tripwire {
    port: u16,
    reached: Arc<AtomicUsize>,
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Tripwire {
    async fn set() -> Tripwire {
        let v4 = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = v4.local_addr().unwrap().port();
        let v6 = TcpListener::bind(("::1", port)).await.ok();
        let wire = Tripwire {
            port,
            reached: Arc::default(),
            held: Arc::default(),
        };
        for listener in std::iter::once(v4).chain(v6) {
            let (reached, held) = (wire.reached.clone(), wire.held.clone());
            tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    reached.fetch_add(1, Ordering::SeqCst);
                    held.lock().unwrap().push(stream);
                }
            });
        }
        wire
    }

    fn reached(&self) -> usize {
        self.reached.load(Ordering::SeqCst)
    }

    /// Closes the connections held: their fetches fail.
    fn let_go(&self) {
        self.held.lock().unwrap().clear();
    }

    /// Waits until `count` connections have reached it (at most 20 s).
    async fn until_reached(&self, count: usize) {
        for _ in 0..1000 {
            if self.reached() >= count {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!(
            "{} connections reached the listener, not {count}",
            self.reached()
        );
    }
}

/// The sentence refusing `GET /oauth/authorize` for the document at `url`,
/// with `url` written `<url>`.
async fn refused_for(shed: &Shed, url: &str) -> String {
    refusal_naming(shed.authorize(&Jar::default(), &ask(url)).await, url).await
}

#[tokio::test]
async fn no_document_is_fetched_from_this_machine_or_its_networks_however_written() {
    let shed = Shed::start().await;
    let wire = Tripwire::set().await;
    let port = wire.port;
    let on_loopback = [
        format!("https://127.0.0.1:{port}/c.json"),
        format!("https://localhost:{port}/c.json"),
        format!("https://0.0.0.0:{port}/c.json"),
        format!("https://[::ffff:127.0.0.1]:{port}/c.json"),
        format!("https://[::ffff:7f00:1]:{port}/c.json"),
        format!("https://[::127.0.0.1]:{port}/c.json"),
        format!("https://127.1:{port}/c.json"),
        format!("https://2130706433:{port}/c.json"),
        format!("https://0x7f000001:{port}/c.json"),
        format!("https://0177.0.0.1:{port}/c.json"),
        format!("https://127.0.0.1.:{port}/c.json"),
        format!("https://[::1]:{port}/c.json"),
        format!("https://[::]:{port}/c.json"),
    ];
    let elsewhere = [
        "https://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1/c.json",
        "https://172.16.0.1/c.json",
        "https://192.168.0.1/c.json",
        "https://100.64.0.1/c.json",
        "https://192.0.2.1/c.json",
        "https://224.0.0.1/c.json",
        "https://255.255.255.255/c.json",
        "https://[fe80::1]/c.json",
        "https://[fd00::1]/c.json",
        "https://[2001:db8::1]/c.json",
    ];
    let mut sentences = Vec::new();
    for url in on_loopback.iter().map(String::as_str).chain(elsewhere) {
        sentences.push(refused_for(&shed, url).await);
        assert_eq!(wire.reached(), 0, "{url} reached the listener");
    }
    assert!(
        sentences[0].starts_with("the client metadata document at <url> could not be read"),
        "{}",
        sentences[0]
    );
    assert!(
        sentences.iter().all(|sentence| *sentence == sentences[0]),
        "{sentences:#?}"
    );
    // Plain http is not taken at all without the development flag.
    let plain = format!("http://127.0.0.1:{port}/c.json");
    assert!(refused_for(&shed, &plain).await.contains("it is not https"));
    assert_eq!(wire.reached(), 0);
}

#[tokio::test]
async fn with_the_development_flag_every_failed_fetch_is_refused_alike() {
    let shed = Shed::start_with(&[LOOPBACK_DOCUMENTS]).await;
    let documents = Documents::serve().await;
    let not_a_document = json!({ "client_id": "https://other.example/c.json", "redirect_uris": ["http://127.0.0.1/cb"] });
    documents.answer(
        "/error.json",
        "500 Internal Server Error",
        json!({ "error": "down" }).to_string(),
    );
    documents.put("/other.json", not_a_document.to_string());
    documents.put("/array.json", "[1, 2, 3]".to_string());
    documents.put("/page.json", "<html>hello</html>".to_string());
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut sentences =
        vec![refused_for(&shed, &format!("http://127.0.0.1:{closed}/c.json")).await];
    for path in [
        "/error.json",
        "/other.json",
        "/array.json",
        "/page.json",
        "/missing.json",
    ] {
        sentences.push(refused_for(&shed, &documents.url(path)).await);
    }
    assert!(
        sentences.iter().all(|sentence| *sentence == sentences[0]),
        "{sentences:#?}"
    );

    // The flag lets loopback be reached, and nothing else that is not public.
    let wire = Tripwire::set().await;
    let port = wire.port;
    for url in [
        format!("https://0.0.0.0:{port}/c.json"),
        format!("https://[::ffff:127.0.0.1]:{port}/c.json"),
        format!("https://[::]:{port}/c.json"),
        format!("http://0.0.0.0:{port}/c.json"),
    ] {
        refused_for(&shed, &url).await;
        assert_eq!(wire.reached(), 0, "{url} reached the listener");
    }
    let loopback = format!("https://127.1:{port}/c.json");
    let asked = ask_in_task(&shed, &shed.http, loopback.clone());
    wire.until_reached(1).await;
    wire.let_go();
    let (refused, _) = asked.await.unwrap();
    assert_eq!(refusal_naming(refused, &loopback).await, sentences[0]);
}

/// An HTTP client of `shed` whose requests come from `address` (any of 127.0.0.0/8).
fn client_from(shed: &Shed, address: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(address))
        .resolve("localhost", SocketAddr::from(([127, 0, 0, 1], shed.port)))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `GET /oauth/authorize` for the document at `document`, from `client`, in a task.
fn ask_in_task(
    shed: &Shed,
    client: &reqwest::Client,
    document: String,
) -> tokio::task::JoinHandle<(reqwest::Response, String)> {
    let request = client.get(format!(
        "{}/oauth/authorize?{}",
        shed.url(),
        encoded(&ask(&document))
    ));
    tokio::spawn(async move { (request.send().await.unwrap(), document) })
}

/// Asks for `document` from `client`: refused with a sentence saying
/// `says`, and no more connections reach `wire` than before.
async fn refused_at_once(
    shed: &Shed,
    client: &reqwest::Client,
    document: String,
    wire: &Tripwire,
    says: &str,
) {
    let reached = wire.reached();
    let (refused, _) = ask_in_task(shed, client, document).await.unwrap();
    let sentence = refusal_sentence(refused).await;
    assert!(sentence.contains(says), "{sentence}");
    assert_eq!(wire.reached(), reached);
}

#[tokio::test]
async fn fetches_past_the_cap_are_refused_at_once() {
    let shed = Shed::start_with(&[LOOPBACK_DOCUMENTS]).await;
    let wire = Tripwire::set().await;
    let document =
        |from: usize, nth: usize| format!("http://127.0.0.1:{}/{from}-{nth}.json", wire.port);
    let addresses = MOST_DOCUMENT_FETCHES / MOST_DOCUMENT_FETCHES_PER_ADDRESS;
    let clients: Vec<reqwest::Client> = (0..=addresses)
        .map(|from| client_from(&shed, [127, 0, 0, 1 + from as u8]))
        .collect();

    // One address holds its most fetches; one more from it is refused, and
    // nothing more reaches the listener.
    let mut asked = Vec::new();
    for nth in 0..MOST_DOCUMENT_FETCHES_PER_ADDRESS {
        asked.push(ask_in_task(&shed, &clients[0], document(0, nth)));
    }
    wire.until_reached(MOST_DOCUMENT_FETCHES_PER_ADDRESS).await;
    let over = document(0, MOST_DOCUMENT_FETCHES_PER_ADDRESS);
    let says = format!(
        "your address already has {MOST_DOCUMENT_FETCHES_PER_ADDRESS} client metadata documents being read"
    );
    refused_at_once(&shed, &clients[0], over.clone(), &wire, &says).await;

    // Other addresses fill the rest; one more from a new address is refused.
    for (from, client) in clients.iter().enumerate().take(addresses).skip(1) {
        for nth in 0..MOST_DOCUMENT_FETCHES_PER_ADDRESS {
            asked.push(ask_in_task(&shed, client, document(from, nth)));
        }
    }
    wire.until_reached(MOST_DOCUMENT_FETCHES).await;
    let says = format!("shed is already reading {MOST_DOCUMENT_FETCHES} client metadata documents");
    let newcomer = document(addresses, 0);
    refused_at_once(&shed, &clients[addresses], newcomer, &wire, &says).await;
    assert!(
        asked.iter().all(|task| !task.is_finished()),
        "the fetches held are still waiting"
    );

    // Let go, the held fetches fail, and their places come back.
    wire.let_go();
    for task in asked {
        let (refused, url) = task.await.unwrap();
        let sentence = refusal_naming(refused, &url).await;
        assert!(sentence.contains("could not be read"), "{sentence}");
    }
    let again = ask_in_task(&shed, &clients[0], over);
    wire.until_reached(MOST_DOCUMENT_FETCHES + 1).await;
    wire.let_go();
    let (refused, url) = again.await.unwrap();
    assert!(
        refusal_naming(refused, &url)
            .await
            .contains("could not be read")
    );
}
