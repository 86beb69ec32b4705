//! shed behind a reverse proxy that appends the client's address to
//! `X-Forwarded-For` and passes everything else on untouched — a client's
//! own `Forwarded` and the `X-Forwarded-For` it made up included — as
//! nginx with `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`
//! does, and Caddy with its `X-Forwarded-For`. The proxy is the test's own
//! ([`AppendingProxy`]), on 127.0.0.1 and trusted (`--trusted-proxy
//! 127.0.0.1`); each client connects to it from an address of its own in
//! 127.0.0.0/8. Whatever a client writes in its headers, shed counts it as
//! the address it connected from: one client flooding every door anyone
//! may knock on without signing in is refused at its own cap, and another
//! client still gets in. And a handful of addresses flooding OAuth client
//! registrations spend all but the reserve of everyone's budget, and are
//! then refused themselves while a newcomer still registers.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Child;

use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use shed_host::oauth::{REGISTRATIONS_OVERALL, REGISTRATIONS_PER_ADDRESS, REGISTRATIONS_RESERVE};
use shed_host::passkeys::{MAX_LIVE_SIGN_INS, MAX_LIVE_SIGN_INS_PER_ADDRESS};
use shed_mcp::{MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS, SessionRefusal};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::listening::shed_up;

/// The most bytes of a request head the proxy reads.
const MOST_HEAD_BYTES: usize = 64 * 1024;

/// A reverse proxy on 127.0.0.1, nginx-like: to each request it adds its
/// peer's address to `X-Forwarded-For` (after the client's own, joined in
/// one line) and `Connection: close`, and passes the rest on as it came.
struct AppendingProxy {
    listener: Option<TcpListener>,
    port: u16,
}

impl AppendingProxy {
    async fn bind() -> AppendingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        AppendingProxy {
            listener: Some(listener),
            port,
        }
    }

    /// Starts passing what it accepts on to 127.0.0.1:`upstream`.
    fn forward_to(&mut self, upstream: u16) {
        let listener = self.listener.take().expect("forwarding once");
        tokio::spawn(async move {
            while let Ok((client, peer)) = listener.accept().await {
                tokio::spawn(pass_on(client, peer, upstream));
            }
        });
    }
}

/// One connection through the proxy: its request head, rewritten, then
/// everything else both ways as it comes.
async fn pass_on(mut client: TcpStream, peer: SocketAddr, upstream: u16) {
    let mut head = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let Ok(read @ 1..) = client.read(&mut chunk).await else {
            return;
        };
        head.extend_from_slice(&chunk[..read]);
        if head.len() > MOST_HEAD_BYTES {
            return;
        }
    };
    let rest = head.split_off(end + 4);
    let text = String::from_utf8_lossy(&head[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let mut rewritten = format!("{}\r\n", lines.next().unwrap());
    let mut forwarded_for = Vec::new();
    for line in lines {
        let name = line.split(':').next().unwrap_or_default().trim();
        if name.eq_ignore_ascii_case("x-forwarded-for") {
            forwarded_for.push(line[name.len() + 1..].trim().to_string());
        } else if !name.eq_ignore_ascii_case("connection") {
            rewritten.push_str(line);
            rewritten.push_str("\r\n");
        }
    }
    forwarded_for.push(peer.ip().to_string());
    rewritten.push_str(&format!(
        "X-Forwarded-For: {}\r\nConnection: close\r\n\r\n",
        forwarded_for.join(", ")
    ));
    let mut shed = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
    shed.write_all(rewritten.as_bytes()).await.unwrap();
    shed.write_all(&rest).await.unwrap();
    let _ = tokio::io::copy_bidirectional(&mut client, &mut shed).await;
}

/// `shed up` behind an [`AppendingProxy`] it trusts, its public URL the
/// proxy's (`http://localhost:<proxy port>`).
struct Proxied {
    child: Child,
    proxy: u16,
    _data: tempfile::TempDir,
}

impl Drop for Proxied {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proxied {
    async fn start() -> Proxied {
        let mut proxy = AppendingProxy::bind().await;
        let data = tempfile::tempdir().unwrap();
        let public_url = format!("http://localhost:{}", proxy.port);
        let flags = ["--public-url", &public_url, "--trusted-proxy", "127.0.0.1"];
        let (child, port, _token) = shed_up(data.path(), &flags, &[]);
        proxy.forward_to(port);
        Proxied {
            child,
            proxy: proxy.port,
            _data: data,
        }
    }

    fn url(&self) -> String {
        format!("http://localhost:{}", self.proxy)
    }

    /// A client that reaches the proxy from 127.0.0.`last`.
    fn client(&self, last: u8) -> Client {
        let http = reqwest::Client::builder()
            .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)))
            .resolve("localhost", SocketAddr::from(([127, 0, 0, 1], self.proxy)))
            .build()
            .unwrap();
        Client {
            http,
            url: self.url(),
        }
    }
}

/// One client of the proxied shed.
struct Client {
    http: reqwest::Client,
    url: String,
}

/// Which door a request knocks on without signing in.
#[derive(Debug, Clone, Copy)]
enum Door {
    /// `initialize` on /mcp: an MCP session opened signed out.
    McpSession,
    /// Starting a passkey sign-in.
    PasskeySignIn,
    /// Registering an OAuth client.
    Registration,
}

impl Client {
    /// Knocks on `door`, with `headers` of the client's own: the status and
    /// the body.
    async fn knock(&self, door: Door, headers: &[(&str, String)]) -> (StatusCode, String) {
        let request = match door {
            Door::McpSession => self
                .http
                .post(format!("{}/mcp", self.url))
                .header(header::ACCEPT, "application/json, text/event-stream")
                .json(
                    &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "behind_a_proxy", "version": "0" } } }),
                ),
            Door::PasskeySignIn => self
                .http
                .post(format!("{}/_shed/passkeys/sign-in/start", self.url))
                .header(header::ORIGIN, &self.url)
                .json(&json!({})),
            Door::Registration => self.http.post(format!("{}/oauth/register", self.url)).json(
                &json!({ "client_name": "Proxied", "redirect_uris": ["http://127.0.0.1:9/cb"] }),
            ),
        };
        let request = headers.iter().fold(request, |request, (name, value)| {
            request.header(*name, value)
        });
        let response = request.send().await.expect("the proxy answers");
        let status = response.status();
        (status, response.text().await.unwrap())
    }
}

/// The `n`th set of headers a client makes up, each naming another address.
fn made_up(n: usize) -> [(&'static str, String); 2] {
    let (high, low) = (n / 250, n % 250 + 1);
    [
        ("forwarded", format!("for=198.51.{high}.{low};proto=https")),
        ("x-forwarded-for", format!("203.0.{high}.{low}")),
    ]
}

// The review's reproduction: behind an appending proxy, a client that
// writes its own `Forwarded` (and its own X-Forwarded-For) took every
// per-address and then the global budgets. Now it is counted as itself.
#[tokio::test]
async fn behind_an_appending_proxy_a_client_is_counted_as_itself_whatever_it_writes() {
    let shed = Proxied::start().await;
    let (flooder, other) = (shed.client(2), shed.client(3));
    for (door, cap, flood, refused) in [
        (
            Door::McpSession,
            MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS,
            // Quick, well within the ten seconds an unused session lives.
            MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS + 8,
            StatusCode::SERVICE_UNAVAILABLE,
        ),
        (
            Door::PasskeySignIn,
            usize::try_from(MAX_LIVE_SIGN_INS_PER_ADDRESS).unwrap(),
            // Past every address's cap together.
            usize::try_from(MAX_LIVE_SIGN_INS).unwrap() + 8,
            StatusCode::TOO_MANY_REQUESTS,
        ),
        (
            Door::Registration,
            usize::try_from(REGISTRATIONS_PER_ADDRESS.burst()).unwrap(),
            usize::try_from(REGISTRATIONS_OVERALL.burst()).unwrap() + 8,
            StatusCode::TOO_MANY_REQUESTS,
        ),
    ] {
        let mut taken = 0;
        let mut refusal = None;
        for n in 0..flood {
            match flooder.knock(door, &made_up(n)).await {
                (status, _) if status.is_success() => taken += 1,
                (status, body) if status == refused => refusal = Some(body),
                (status, body) => panic!("{door:?}: {status} {body}"),
            }
        }
        assert_eq!(
            taken, cap,
            "{door:?}: the flooder's own cap, whatever it wrote"
        );
        let refusal = refusal.expect("past its cap the flooder is refused");
        match door {
            Door::McpSession => assert_eq!(refusal, SessionRefusal::AddressFull.to_string()),
            Door::PasskeySignIn => assert!(refusal.contains("your address has"), "{refusal}"),
            Door::Registration => assert!(
                refusal.contains("too many clients were registered from your address lately"),
                "{refusal}"
            ),
        }
        // Another client behind the same proxy still gets in — and so does
        // one that names the flooder's made-up addresses itself.
        for headers in [&[][..], &made_up(0)[..]] {
            let (status, body) = other.knock(door, headers).await;
            assert!(status.is_success(), "{door:?}: {status} {body}");
        }
    }
}

// A handful of addresses flooding registrations spend all of everyone's
// budget but the reserve, and are then refused themselves, with the
// sentence saying which budget and when to try again; a newcomer still
// registers.
#[tokio::test]
async fn flooders_of_registrations_are_refused_and_a_newcomer_still_registers() {
    /// The flooders' addresses: 127.0.0.2 to .7.
    const FLOODERS: std::ops::RangeInclusive<u8> = 2..=7;
    let shed = Proxied::start().await;
    let share = REGISTRATIONS_OVERALL.burst() - REGISTRATIONS_RESERVE.held();
    assert!(
        u32::from(FLOODERS.end() - FLOODERS.start() + 1) * REGISTRATIONS_PER_ADDRESS.burst()
            > share,
        "the flooders together may take more than everyone's share"
    );
    let flooders: Vec<Client> = FLOODERS.map(|last| shed.client(last)).collect();
    let mut refused: Vec<Option<(StatusCode, String)>> = vec![None; flooders.len()];
    let mut taken = 0;
    // Round after round, each flooder not yet refused registers once more.
    for round in 0..REGISTRATIONS_PER_ADDRESS.burst() as usize {
        for (flooder, refusal) in flooders.iter().zip(refused.iter_mut()) {
            if refusal.is_some() {
                continue;
            }
            match flooder.knock(Door::Registration, &made_up(round)).await {
                (StatusCode::CREATED, _) => taken += 1,
                answer => *refusal = Some(answer),
            }
        }
    }
    assert_eq!(taken, share, "all of everyone's budget but the reserve");
    for refusal in refused {
        let (status, body) = refusal.expect("each flooder is refused at last");
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        let said = body["error_description"].as_str().unwrap();
        assert!(
            said.starts_with(
                "too many clients were registered here lately, and one from your address within the hour"
            ) && said.contains("try again in "),
            "{said}"
        );
    }
    let (status, body) = shed.client(20).knock(Door::Registration, &[]).await;
    assert_eq!(status, StatusCode::CREATED, "a newcomer registers: {body}");
}
