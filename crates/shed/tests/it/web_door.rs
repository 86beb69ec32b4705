//! The web door, black-box: the real `shed` binary set up with its own
//! commands (`person add`, `space add`, `member add`, `deploy`, `token
//! create`, `login`, `logout`), then `shed serve`, asked over HTTP as a
//! browser would — by host name (`demo.localhost:<port>`), with cookies.
//! Traversal attempts go over a raw socket, since an HTTP client would
//! tidy `..` away before sending.

use crate::access_matrix;
use crate::listening::{free_port, wait_until_listening};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::data_place::{DataIn, private_folder};
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use serde_json::{Value, json};

const SHED: &str = env!("CARGO_BIN_EXE_shed");
const VIEWER: &str = "you can read this app but not change it — its owner can make you an editor";

/// A served data folder: ada owns demo (apps runs private, pub public, open
/// open); ed edits demo, vic views it, sam belongs to no space of theirs.
pub(crate) struct Shed {
    child: Child,
    pub(crate) port: u16,
    pub(crate) data: tempfile::TempDir,
    pub(crate) http: reqwest::Client,
}

impl Drop for Shed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The run club example's folder.
pub(crate) fn run_club() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club")
}

impl Shed {
    pub(crate) fn url(&self) -> String {
        format!("http://localhost:{}", self.port)
    }

    /// `http://demo.localhost:<port>` + `path`
    pub(crate) fn demo(&self, path: &str) -> String {
        format!("http://demo.localhost:{}{path}", self.port)
    }

    pub(crate) fn origin(&self) -> String {
        self.demo("")
    }

    /// Runs `shed <args>` on the data folder; its stdout, or a panic with its stderr.
    pub(crate) fn shed(&self, args: &[&str]) -> String {
        shed_on(self.data.path(), self.port, args)
    }

    /// `shed deploy <folder> --to demo/<app> --as ada --access public`: its
    /// answer, or the sentence of its refusal.
    fn deploy_public(&self, folder: &Path, app: &str) -> Result<String, String> {
        let args = [
            "deploy",
            folder.to_str().unwrap(),
            "--to",
            &format!("demo/{app}"),
            "--as",
            "ada",
            "--access",
            "public",
        ];
        let output = shed_output(self.data.path(), self.port, &args);
        let said = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap().trim().to_string();
        if output.status.success() {
            Ok(said(output.stdout))
        } else {
            Err(said(output.stderr))
        }
    }

    pub(crate) fn token(&self, handle: &str) -> String {
        self.shed(&["token", "create", handle]).trim().to_string()
    }

    pub(crate) async fn start() -> Shed {
        Shed::start_with(&[]).await
    }

    /// [`Shed::start`], with `flags` given to `shed serve` too.
    pub(crate) async fn start_with(flags: &[&str]) -> Shed {
        let data = private_folder();
        let port = free_port();
        let on = |args: &[&str]| shed_on(data.path(), port, args);
        for (handle, name) in [("ada", "Ada"), ("ed", "Ed"), ("vic", "Vic"), ("sam", "Sam")] {
            on(&["person", "add", handle, "--name", name]);
        }
        on(&["space", "add", "demo", "--owner", "ada"]);
        on(&["space", "add", "club", "--owner", "sam"]);
        on(&["member", "add", "demo", "ed", "--role", "editor"]);
        on(&["member", "add", "demo", "vic", "--role", "viewer"]);
        on(&["member", "add", "club", "ada", "--role", "viewer"]);
        let club = run_club();
        let club = club.to_str().unwrap();
        for (app, access) in [
            ("demo/runs", "private"),
            ("demo/pub", "public"),
            ("demo/open", "open"),
            ("club/runs", "private"),
        ] {
            let owner = if app.starts_with("club") {
                "sam"
            } else {
                "ada"
            };
            on(&[
                "deploy", club, "--to", app, "--as", owner, "--title", "Run club", "--access",
                access,
            ]);
        }
        Shed::serve(data, port, None, flags)
    }

    /// A second `shed serve` on this one's database (PostgreSQL only: two
    /// data folders share no SQLite file), with a data folder — its own
    /// queue socket and lock — and a port of its own.
    pub(crate) fn beside(&self) -> Shed {
        let database = shed_test_database::for_folder(self.data.path())
            .expect("two servers share a database only on a database server");
        Shed::serve(private_folder(), free_port(), Some(&database), &[])
    }

    /// `shed serve` on `data` at `port` with `flags` — on `database` when
    /// given, else where the data folder keeps its data — once it listens,
    /// with a client that reaches its host names.
    fn serve(data: tempfile::TempDir, port: u16, database: Option<&str>, flags: &[&str]) -> Shed {
        let mut command = Command::new(SHED);
        command
            .args([
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--public-url",
                &format!("http://localhost:{port}"),
            ])
            .args(flags)
            .data_in(data.path())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null());
        if let Some(database) = database {
            command.env("SHED_DATABASE_URL", database);
        }
        let child = command.spawn().unwrap();
        wait_until_listening(port);
        let at = SocketAddr::from(([127, 0, 0, 1], port));
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .resolve("localhost", at)
            .resolve("demo.localhost", at)
            .resolve("club.localhost", at)
            .resolve("evil.localhost", at)
            .build()
            .unwrap();
        Shed {
            child,
            port,
            data,
            http,
        }
    }

    /// A fresh one-time sign-in link for `handle`.
    pub(crate) fn login_link(&self, handle: &str) -> String {
        self.shed(&["login", handle, "--public-url", &self.url()])
            .trim()
            .to_string()
    }

    /// Presses the sign-in page's button in the browser holding `jar`:
    /// posts the link's key as its form does, from the page of `origin`
    /// (`None`: a request saying no origin), and keeps what it sets.
    async fn post_link(
        &self,
        link: &str,
        origin: Option<&str>,
        jar: &mut Jar,
    ) -> reqwest::Response {
        let key = link.split_once("?key=").unwrap().1;
        let at = format!("{}/_shed/login", self.url());
        let mut request = self
            .http
            .post(&at)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(format!("key={key}"));
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        if let Some(cookies) = jar.header(&at) {
            request = request.header(header::COOKIE, cookies);
        }
        let response = request.send().await.unwrap();
        jar.keep(&at, response.headers());
        response
    }

    /// The page a form's answer lands on, as a browser sending `cookie`
    /// sees it: a `303` followed to its page with the notice it set (what
    /// the form did, shown there once); any other answer as it is.
    pub(crate) async fn landed(
        &self,
        response: reqwest::Response,
        cookie: &str,
    ) -> (StatusCode, String) {
        if response.status() != StatusCode::SEE_OTHER {
            return (response.status(), response.text().await.unwrap());
        }
        let mut jar = Jar::default();
        let at = response.url().to_string();
        jar.keep(&at, response.headers());
        let to = format!("{}{}", self.url(), location(&response));
        let cookie = match jar.header(&to) {
            Some(notice) => format!("{cookie}; {notice}"),
            None => cookie.to_string(),
        };
        let (status, _, page) = self.get(&to, Some(&cookie)).await;
        (status, page)
    }

    /// `GET url` in the browser holding `jar`, keeping what it sets.
    async fn visit(&self, jar: &mut Jar, url: &str) -> reqwest::Response {
        let mut request = self.http.get(url);
        if let Some(cookies) = jar.header(url) {
            request = request.header(header::COOKIE, cookies);
        }
        let response = request.send().await.unwrap();
        jar.keep(url, response.headers());
        response
    }

    /// Follows `response`'s 303s as the browser holding `jar` does (at most
    /// 20): the last answer's status, address and page.
    async fn follow(
        &self,
        jar: &mut Jar,
        mut response: reqwest::Response,
    ) -> (StatusCode, String, String) {
        let mut at = response.url().to_string();
        for _ in 0..20 {
            if response.status() != StatusCode::SEE_OTHER {
                return (response.status(), at, response.text().await.unwrap());
            }
            at = location(&response);
            response = self.visit(jar, &at).await;
        }
        panic!("the sign-in hops did not end");
    }

    /// Signs `handle` in with `shed login` in the browser holding `jar`:
    /// opens the link, presses its button, and follows the hops, which end
    /// on the front page.
    async fn sign_in_to(&self, jar: &mut Jar, handle: &str) {
        let link = self.login_link(handle);
        let (status, _, page) = self.get(&link, None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let pressed = self.post_link(&link, Some(&self.url()), jar).await;
        let (status, at, page) = self.follow(jar, pressed).await;
        assert_eq!(status, StatusCode::OK, "{at}: {page}");
        assert_eq!(at, format!("{}/", self.url()), "{page}");
    }

    /// Signs `handle` in on a browser of its own: its cookies.
    pub(crate) async fn sign_in(&self, handle: &str) -> Jar {
        let mut jar = Jar::default();
        self.sign_in_to(&mut jar, handle).await;
        jar
    }

    /// The `Cookie` header for demo's host after signing `handle` in.
    pub(crate) async fn demo_cookie(&self, handle: &str) -> String {
        let jar = self.sign_in(handle).await;
        jar.header(&self.demo("/"))
            .expect("a cookie for demo.localhost")
    }

    pub(crate) async fn get(
        &self,
        url: &str,
        cookie: Option<&str>,
    ) -> (StatusCode, HeaderMap, String) {
        let mut request = self.http.get(url);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        let response = request.send().await.unwrap();
        let (status, headers) = (response.status(), response.headers().clone());
        (status, headers, response.text().await.unwrap())
    }

    /// `./api/query` of `app` in demo: the status and the JSON.
    pub(crate) async fn query(
        &self,
        app: &str,
        line: &str,
        cookie: Option<&str>,
    ) -> (StatusCode, Value) {
        let (status, headers, body) = self
            .get(&self.demo(&format!("/{app}/api/query?{line}")), cookie)
            .await;
        assert_eq!(headers[header::CONTENT_TYPE], "application/json", "{body}");
        (status, serde_json::from_str(&body).unwrap())
    }

    /// `./api/apply` of `app` in demo from the app's own page, with `cookie`.
    pub(crate) async fn apply(
        &self,
        app: &str,
        bundle: Value,
        cookie: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .http
            .post(self.demo(&format!("/{app}/api/apply")))
            .header(header::ORIGIN, self.origin())
            .json(&bundle);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        let response = request.send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }

    /// One MCP request as `token`, as a 2026-07-28 client sends it: the whole answer.
    pub(crate) async fn mcp_request(
        &self,
        token: &str,
        method: &str,
        name: &str,
        params: Value,
    ) -> Value {
        self.mcp_request_as(Some(token), method, name, params).await
    }

    /// One MCP request as `token`, or signed out: the JSON-RPC answer, or
    /// for an HTTP 401 (a token refused, or signed out beyond the lists)
    /// `{"unauthorized": <WWW-Authenticate>, "said": <body>}`.
    async fn mcp_request_as(
        &self,
        token: Option<&str>,
        method: &str,
        name: &str,
        mut params: Value,
    ) -> Value {
        // What every 2026-07-28 request carries, beside what the test gave.
        if !params["_meta"].is_object() {
            params["_meta"] = json!({});
        }
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let mut request = self.http.post(format!("{}/mcp", self.url()));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("mcp-name", name)
            .json(&call)
            .send()
            .await
            .unwrap();
        if response.status() == StatusCode::UNAUTHORIZED {
            let challenge = response.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .to_string();
            let said = response.text().await.unwrap();
            return json!({ "unauthorized": challenge, "said": said });
        }
        response.json().await.unwrap()
    }

    /// One MCP `tools/call` as `token`: (isError, structuredContent or the text).
    pub(crate) async fn mcp(&self, token: &str, tool: &str, arguments: Value) -> (bool, Value) {
        self.mcp_as(Some(token), tool, arguments).await
    }

    /// One MCP `tools/call` as `token`, or signed out: (refused, what was
    /// answered) — an HTTP 401 is refused with its `{"unauthorized", "said"}`.
    pub(crate) async fn mcp_as(
        &self,
        token: Option<&str>,
        tool: &str,
        arguments: Value,
    ) -> (bool, Value) {
        let body = self
            .mcp_request_as(
                token,
                "tools/call",
                tool,
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        if body.get("unauthorized").is_some() {
            return (true, body);
        }
        let result = &body["result"];
        assert!(result.is_object(), "MCP answered {body}");
        let error = result["isError"] == json!(true);
        if error {
            (true, result["content"][0]["text"].clone())
        } else {
            (false, result["structuredContent"].clone())
        }
    }

    /// A raw `GET <path>` to demo's host: the status and the whole answer.
    fn raw_get(&self, path: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: demo.localhost:{}\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        let answer = String::from_utf8_lossy(&answer).to_string();
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, answer)
    }
}

/// A browser's cookies: every `Set-Cookie` it was given, with the host that
/// gave it, in order (shed's cookies are host-only).
#[derive(Default)]
pub(crate) struct Jar(Vec<(String, String)>);

impl Jar {
    /// Keeps the cookies an answer from `url` sets.
    fn keep(&mut self, url: &str, headers: &HeaderMap) {
        let host = host_of(url);
        for set in headers.get_all(header::SET_COOKIE) {
            self.0
                .push((host.clone(), set.to_str().unwrap().to_string()));
        }
    }

    /// The `Cookie` header this browser sends to `url`: the last value of
    /// each cookie its host set.
    pub(crate) fn header(&self, url: &str) -> Option<String> {
        let host = host_of(url);
        let mut sent: Vec<(&str, &str)> = Vec::new();
        for (_, set) in self.0.iter().filter(|(from, _)| *from == host) {
            let (name, value) = set.split(';').next().unwrap().split_once('=').unwrap();
            sent.retain(|(kept, _)| *kept != name);
            sent.push((name, value));
        }
        let pairs: Vec<String> = sent.iter().map(|(n, v)| format!("{n}={v}")).collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }

    /// The sessions this browser was given: (host, `Set-Cookie`), in order.
    fn sessions(&self) -> Vec<&(String, String)> {
        self.0
            .iter()
            .filter(|(_, set)| set.starts_with("shed_session="))
            .collect()
    }
}

fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .unwrap()
        .host_str()
        .unwrap()
        .to_string()
}

/// Where a 303 sends the browser.
pub(crate) fn location(response: &reqwest::Response) -> String {
    response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_string()
}

/// `shed <args>` on `data`, answered whether it succeeds or not.
pub(crate) fn shed_output(data: &Path, port: u16, args: &[&str]) -> std::process::Output {
    Command::new(SHED)
        .args(args)
        .data_in(data)
        .env("SHED_PUBLIC_URL", format!("http://localhost:{port}"))
        .output()
        .unwrap()
}

fn shed_on(data: &Path, port: u16, args: &[&str]) -> String {
    let output = shed_output(data, port, args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "shed {args:?} failed: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

pub(crate) fn run(who: &str, miles: f64) -> Value {
    json!({ "entity": { "eid": "$run" }, "doc": { "title": format!("Run by {who}") },
            "jog": { "who": who, "miles": miles, "at": "2026-09-01T07:00:00Z" } })
}

#[tokio::test]
async fn pages_carry_their_kind_base_policy_and_etag() {
    let shed = Shed::start().await;
    let (status, headers, body) = shed.get(&shed.demo("/pub/"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(
        body.starts_with(&format!(
            "<!doctype html><base href=\"{}\">",
            shed.demo("/pub/")
        )),
        "{body}"
    );
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'self'; script-src 'self' 'sha256-"),
        "{csp}"
    );
    assert!(
        csp.contains("connect-src 'self'")
            && csp.contains("object-src 'none'")
            && csp.contains("base-uri 'self'")
    );

    let etag = headers[header::ETAG].to_str().unwrap().to_string();
    let again = shed
        .http
        .get(shed.demo("/pub/index.html"))
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()[header::ETAG].to_str().unwrap(), etag);
    assert!(again.text().await.unwrap().is_empty());

    let (status, headers, css) = shed.get(&shed.demo("/pub/style.css"), None).await;
    assert_eq!(
        (status, headers[header::CONTENT_TYPE].to_str().unwrap()),
        (StatusCode::OK, "text/css; charset=utf-8")
    );
    assert_eq!(
        css,
        std::fs::read_to_string(run_club().join("style.css")).unwrap()
    );
    assert!(
        headers.get(header::CONTENT_SECURITY_POLICY).is_none(),
        "a style sheet is no page"
    );

    let (status, headers, script) = shed.get(&shed.demo("/_shed/app.js"), None).await;
    assert_eq!(
        (status, headers[header::CONTENT_TYPE].to_str().unwrap()),
        (StatusCode::OK, "text/javascript; charset=utf-8")
    );
    assert_eq!(script, shed_web::APP_JS);
    assert_eq!(
        shed.get(&format!("{}/_shed/app.js", shed.url()), None)
            .await
            .0,
        StatusCode::OK
    );

    let (status, headers, _) = shed.get(&shed.demo("/pub"), None).await;
    assert_eq!(
        (status, headers[header::LOCATION].to_str().unwrap()),
        (StatusCode::PERMANENT_REDIRECT, "/pub/")
    );
    assert_eq!(
        shed.get(&shed.demo("/pub/leaderboard.html"), None).await.0,
        StatusCode::OK
    );
    let (status, _, body) = shed.get(&shed.demo("/pub/nothing.html"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no file nothing.html in demo/pub"), "{body}");
    // An app nobody deployed: signed out, the same as a private one (sign in); signed in, no app.
    assert_eq!(
        shed.get(&shed.demo("/nope/"), None).await.0,
        StatusCode::UNAUTHORIZED
    );
    let ada = shed.demo_cookie("ada").await;
    let (status, _, body) = shed.get(&shed.demo("/nope/"), Some(&ada)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no app demo/nope"), "{body}");
}

#[tokio::test]
async fn the_inside_and_every_step_outside_the_app_are_404() {
    let shed = Shed::start().await;
    let ada = shed.demo_cookie("ada").await;
    for inside in [
        "tools.json",
        "tools.yml",
        "vocab.json",
        "worker.js",
        "%76ocab.json",
        "./vocab.json",
    ] {
        let (status, _, body) = shed
            .get(&shed.demo(&format!("/pub/{inside}")), Some(&ada))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{inside}");
        assert!(
            !body.contains("log_run") && !body.contains("\"jog\""),
            "{inside} leaked: {body}"
        );
    }
    for path in [
        "/pub/../runs/index.html",
        "/pub/%2e%2e/runs/index.html",
        "/pub/%2E%2E/runs/",
        "/pub/..%2fruns%2findex.html",
        "/pub/%2e%2e%2fvocab.json",
        "/pub/.%2e/.%2e/etc/passwd",
        "/pub/..\\runs\\index.html",
        "/pub/%5c..%5cvocab.json",
        "/pub//etc/passwd",
        "/pub/./vocab.json",
        "/../etc/passwd",
        "/%2e%2e/etc/passwd",
        "/pub/style.css%00.html",
        "/pub/%ff.html",
        "/runs/../pub/vocab.json",
    ] {
        let (status, answer) = shed.raw_get(path);
        assert!(status == 404 || status == 400, "{path}: {status}\n{answer}");
        assert!(
            !answer.contains("root:") && !answer.contains("\"jog\"") && !answer.contains("<form"),
            "{path} leaked:\n{answer}"
        );
    }
}

#[tokio::test]
async fn access_for_the_signed_out_a_stranger_a_viewer_and_an_editor() {
    let shed = Shed::start().await;
    let (vic, ed, sam) = (
        shed.demo_cookie("vic").await,
        shed.demo_cookie("ed").await,
        shed.sign_in("sam").await,
    );
    // sam belongs to club only, so has no cookie for demo; his club cookie means nothing here.
    assert_eq!(sam.header(&shed.demo("/")), None);
    let sam = sam
        .header(&format!("http://club.localhost:{}/", shed.port))
        .unwrap();

    // A private app's pages: the sign-in page for nobody, no app for a stranger, the page for a member.
    let (status, _, body) = shed.get(&shed.demo("/runs/"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("shed login &lt;your handle&gt;"), "{body}");
    assert_eq!(
        shed.get(&shed.demo("/runs/"), Some(&sam)).await.0,
        StatusCode::UNAUTHORIZED,
        "a club cookie is nobody on demo"
    );
    assert_eq!(
        shed.get(&shed.demo("/runs/"), Some(&vic)).await.0,
        StatusCode::OK
    );
    assert_eq!(
        shed.get(&shed.demo("/runs/leaderboard.html"), Some(&ed))
            .await
            .0,
        StatusCode::OK
    );
    // Its other files too: nobody is asked to sign in, the member reads them.
    assert_eq!(
        shed.get(&shed.demo("/runs/style.css"), None).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, headers, _) = shed.get(&shed.demo("/runs/style.css"), Some(&vic)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CACHE_CONTROL], "private, no-cache");
    // Public and open apps' pages are anyone's.
    assert_eq!(shed.get(&shed.demo("/pub/"), None).await.0, StatusCode::OK);
    assert_eq!(shed.get(&shed.demo("/open/"), None).await.0, StatusCode::OK);

    // The page api decides as the access table says, in the MCP door's words.
    let (status, said) = shed.query("runs", ".jog!", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        said["error"]
            .as_str()
            .unwrap()
            .starts_with("sign in first — "),
        "{said}"
    );
    assert_eq!(
        shed.query("runs", ".jog!", Some(&vic)).await.0,
        StatusCode::OK
    );
    assert_eq!(shed.query("pub", ".jog!", None).await.0, StatusCode::OK);

    assert_eq!(
        shed.apply("runs", run("Vic", 3.0), Some(&vic)).await,
        (StatusCode::FORBIDDEN, json!({ "error": VIEWER }))
    );
    let (status, wrote) = shed.apply("runs", run("Ed", 4.0), Some(&ed)).await;
    assert_eq!(status, StatusCode::OK, "{wrote}");
    assert_eq!(wrote["entities"].as_array().unwrap().len(), 1);
    let (status, rows) = shed.query("runs", ".jog!&.created!", Some(&vic)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rows["rows"][0]["created"]["by"]["name"], "Ed");

    let (status, said) = shed.apply("pub", run("Nobody", 1.0), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{said}");
    assert_eq!(
        shed.apply("pub", run("Vic", 1.0), Some(&vic)).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        shed.apply("open", run("Vic", 1.0), Some(&vic)).await.0,
        StatusCode::OK
    );
    assert_eq!(
        shed.apply("open", run("Nobody", 1.0), None).await.0,
        StatusCode::UNAUTHORIZED,
        "a write is somebody's"
    );
    let (status, said) = shed.apply("nope", run("Ed", 1.0), Some(&ed)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{said}");
}

/// `GET url` with a bearer token (or nobody): the status and the body.
async fn get_as(shed: &Shed, url: &str, token: Option<&str>) -> (StatusCode, String) {
    let mut request = shed.http.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status(), response.text().await.unwrap())
}

#[tokio::test]
async fn an_outsider_cannot_tell_a_private_app_or_a_space_from_one_nobody_made() {
    let shed = Shed::start().await;
    let sam = shed.token("sam");
    // Signed out, then as somebody outside demo: a private app's file reads
    // as a file of an app nobody made, with the app's name in its place.
    for token in [None, Some(sam.as_str())] {
        let (status, body) = get_as(&shed, &shed.demo("/runs/x.css"), token).await;
        let (made_up, made_up_body) = get_as(&shed, &shed.demo("/nosuch/x.css"), token).await;
        assert_eq!(status, made_up, "{body}");
        assert_eq!(body.replace("demo/runs", "demo/nosuch"), made_up_body);
        assert!(status == StatusCode::UNAUTHORIZED || status == StatusCode::NOT_FOUND);
    }
    // Deploying or drafting into a space of somebody else's reads as a space nobody made.
    let ed = shed.token("ed");
    for (tool, arguments) in [
        ("app_deploy", json!({"app": "<space>/x"})),
        (
            "app_files",
            json!({"app": "<space>/x", "write": {"index.html": "<p>hi"}}),
        ),
    ] {
        let mut said = Vec::new();
        for space in ["club", "nosuch"] {
            let arguments =
                serde_json::from_str(&arguments.to_string().replace("<space>", space)).unwrap();
            let (error, text) = shed.mcp(&ed, tool, arguments).await;
            assert!(error, "{tool}: {text}");
            said.push(text.as_str().unwrap().replace(space, "<space>"));
        }
        assert_eq!(said[0], said[1], "{tool}");
        assert!(
            said[0].starts_with("<space> is not a space you own or edit"),
            "{}",
            said[0]
        );
    }
}

#[tokio::test]
async fn a_space_s_root_lists_the_apps_the_caller_may_read() {
    let shed = Shed::start().await;
    let link = |app: &str| format!("href=\"{}\"", shed.demo(&format!("/{app}/")));
    let sign_in = format!("href=\"{}/_shed/signin\"", shed.url());
    // A member sees every app of the space, each linked to its pages.
    let vic = shed.token("vic");
    let (status, page) = get_as(&shed, &shed.demo("/"), Some(&vic)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    for app in ["runs", "pub", "open"] {
        assert!(page.contains(&link(app)), "{app}: {page}");
    }
    assert!(!page.contains(&sign_in), "{page}");
    // Somebody outside demo, and nobody signed in: its public and open apps
    // only; signed out, how to sign in.
    let sam = shed.token("sam");
    for token in [Some(sam.as_str()), None] {
        let (status, page) = get_as(&shed, &shed.demo("/"), token).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert!(
            page.contains(&link("pub")) && page.contains(&link("open")),
            "{page}"
        );
        assert!(
            !page.contains(&link("runs")),
            "a private app listed: {page}"
        );
        assert_eq!(page.contains(&sign_in), token.is_none(), "{page}");
    }
    // A space with nothing the caller may read answers as a space nobody
    // made: a 404, the same page (signed out, with how to sign in).
    for token in [Some(shed.token("ed")), None] {
        let club = format!("http://club.localhost:{}/", shed.port);
        let nosuch = format!("http://evil.localhost:{}/", shed.port);
        let (status, page) = get_as(&shed, &club, token.as_deref()).await;
        let (made_up, made_up_page) = get_as(&shed, &nosuch, token.as_deref()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{page}");
        assert_eq!(made_up, StatusCode::NOT_FOUND, "{made_up_page}");
        assert_eq!(page.replace("club", "evil"), made_up_page);
        assert_eq!(page.contains(&sign_in), token.is_none(), "{page}");
    }
}

#[tokio::test]
async fn an_app_without_index_html_has_no_open_link_and_its_deploy_says_so() {
    let shed = Shed::start().await;
    let folder = tempfile::tempdir().unwrap();
    let vocab = folder.path().join("vocab.json");
    std::fs::copy(run_club().join("vocab.json"), vocab).unwrap();
    let said = shed.deploy_public(folder.path(), "bare").unwrap();
    assert!(
        said.starts_with(&format!(
            "deployed demo/bare v1: no pages — add an index.html to open it at {}\n",
            shed.demo("/bare/")
        )),
        "{said}"
    );
    // The run club deployed again as it was: unchanged, its page the link.
    let with_pages = shed.deploy_public(&run_club(), "pub").unwrap();
    assert!(
        with_pages.starts_with(&format!(
            "demo/pub unchanged — still v1: {}\n",
            shed.demo("/pub/")
        )),
        "{with_pages}"
    );
    // No Open link on home, the space's page, the app's page, the space's root.
    let jar = shed.sign_in("ada").await;
    let platform = jar.header(&format!("{}/", shed.url())).unwrap();
    let demo = jar.header(&shed.demo("/")).unwrap();
    // (Those that list the space's apps link to the others' pages.)
    for (url, cookie, lists) in [
        (format!("{}/", shed.url()), &platform, true),
        (format!("{}/spaces/demo", shed.url()), &platform, true),
        (
            format!("{}/spaces/demo/apps/bare", shed.url()),
            &platform,
            false,
        ),
        (shed.demo("/"), &demo, true),
    ] {
        let (status, _, page) = shed.get(&url, Some(cookie)).await;
        assert_eq!(status, StatusCode::OK, "{url}: {page}");
        assert!(page.contains("demo/bare"), "{url}: {page}");
        let link = |app: &str| format!("href=\"{}\"", shed.demo(&format!("/{app}/")));
        assert!(!page.contains(&link("bare")), "{url}: {page}");
        assert_eq!(page.contains(&link("pub")), lists, "{url}: {page}");
        assert!(page.contains("no pages"), "{url}: {page}");
    }
}

#[tokio::test]
async fn every_host_answers_favicon_ico_with_shed_s_icon() {
    let shed = Shed::start().await;
    for url in [
        shed.demo("/favicon.ico"),
        format!("{}/favicon.ico", shed.url()),
    ] {
        let response = shed.http.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "image/x-icon",
            "{url}"
        );
        let icon = response.bytes().await.unwrap();
        assert_eq!(
            icon.get(..4),
            Some(&[0u8, 0, 1, 0][..]),
            "{url}: not an icon"
        );
    }
}

/// The `<base href>` of the view `uri` as `token`'s person reads it over MCP.
async fn view_base(shed: &Shed, token: &str, uri: &str) -> String {
    let read = shed
        .mcp_request(token, "resources/read", uri, json!({ "uri": uri }))
        .await;
    let html = read["result"]["contents"][0]["text"].as_str().unwrap();
    html.split_once("<base href=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(base, _)| base.to_string())
        .unwrap_or_else(|| panic!("no <base href> in {html}"))
}

#[tokio::test]
async fn a_private_apps_view_loads_its_files_through_a_key_of_the_member_who_read_it() {
    let shed = Shed::start().await;
    let vic = shed.token("vic");
    let leaderboard = "ui://demo/runs/leaderboard.html";
    let base = view_base(&shed, &vic, leaderboard).await;
    let keyed = base
        .strip_prefix(&shed.demo("/_shed/view/"))
        .and_then(|rest| rest.strip_suffix("/runs/"))
        .unwrap_or_else(|| panic!("not a keyed address of demo/runs: {base}"));
    assert_eq!(keyed.len(), 32);
    // With no cookie, as a view's frame asks: the app's files, and nothing else.
    let (status, css) = get_as(&shed, &format!("{base}style.css"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        css,
        std::fs::read_to_string(run_club().join("style.css")).unwrap()
    );
    for elsewhere in [
        format!("{base}api/query?.jog!"),
        shed.demo(&format!("/_shed/view/{keyed}/pub/style.css")),
        shed.demo(&format!("/_shed/view/{keyed}/runs/vocab.json")),
        shed.demo("/_shed/view/0123456789abcdef0123456789abcdef/runs/style.css"),
        format!(
            "http://club.localhost:{}/_shed/view/{keyed}/runs/style.css",
            shed.port
        ),
    ] {
        let (status, body) = get_as(&shed, &elsewhere, None).await;
        assert!(status.is_client_error(), "{elsewhere}: {status} {body}");
    }
    let (status, _) = get_as(&shed, &format!("{base}style.css"), None).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a key works as often as the view loads"
    );
    // Read again and again, the view is drawn with the same key: no read
    // mints a new one.
    for _ in 0..20 {
        assert_eq!(view_base(&shed, &vic, leaderboard).await, base);
    }
    assert_eq!(crate::data_place::rows(shed.data.path(), "view_keys"), 1);
    let (status, _) = get_as(&shed, &format!("{base}style.css"), None).await;
    assert_eq!(status, StatusCode::OK, "the view still loads its style");
    // A public app's view keeps the app's plain address.
    assert_eq!(
        view_base(&shed, &vic, "ui://demo/pub/leaderboard.html").await,
        shed.demo("/pub/")
    );
}

#[tokio::test]
async fn only_an_owner_changes_who_may_read_an_app_from_the_cli_and_mcp() {
    let shed = Shed::start().await;
    let club = run_club();
    let output = Command::new(SHED)
        .args([
            "deploy",
            club.to_str().unwrap(),
            "--to",
            "demo/runs",
            "--as",
            "ed",
            "--access",
            "public",
        ])
        .data_in(shed.data.path())
        .env("SHED_PUBLIC_URL", shed.url())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    let sentence = "only an owner of demo changes who may read demo/runs (it is private) — deploy \
                    without an access to keep it private, or ask an owner of demo";
    assert!(said.contains(sentence), "{said}");
    let (error, text) = shed
        .mcp(
            &shed.token("ed"),
            "app_deploy",
            json!({"app": "demo/runs", "access": "open"}),
        )
        .await;
    assert!(error);
    assert_eq!(text, sentence.replace("public", "open"));
    // Still private: nobody signed out reads it.
    assert_eq!(
        shed.get(&shed.demo("/runs/"), None).await.0,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn the_page_api_answers_as_the_mcp_door_does() {
    let shed = Shed::start().await;
    let (ed, vic) = (shed.demo_cookie("ed").await, shed.demo_cookie("vic").await);
    let (ed_token, vic_token) = (shed.token("ed"), shed.token("vic"));
    for who in ["Ada", "A&B", "Grace"] {
        assert_eq!(
            shed.apply("runs", run(who, 5.0), Some(&ed)).await.0,
            StatusCode::OK
        );
    }
    // The same line read through both doors: the same rows.
    for (web, mcp) in [
        (".jog!&.created!", ".jog!&.created!"),
        (
            ".jog!&.doc?&.created.at%3E=2020-01-01",
            ".jog!&.doc?&.created.at>=2020-01-01",
        ),
        (".jog!&.jog.who=A%26B", ".jog!&.jog.who=A%26B"),
        (
            ".jog!&.jog.miles%3C=5&limit=2",
            ".jog!&.jog.miles<=5&limit=2",
        ),
    ] {
        let (status, through_web) = shed.query("runs", web, Some(&vic)).await;
        assert_eq!(status, StatusCode::OK, "{web}: {through_web}");
        let (error, through_mcp) = shed
            .mcp(
                &vic_token,
                "graph_query",
                json!({ "app": "demo/runs", "filter": mcp }),
            )
            .await;
        assert!(!error, "{through_mcp}");
        assert_eq!(through_web, through_mcp, "{web}");
    }
    let (_, one) = shed.query("runs", ".jog!&.jog.who=A%26B", Some(&vic)).await;
    assert_eq!(
        one["rows"].as_array().unwrap().len(),
        1,
        "an encoded & stays in its value"
    );

    // The same refusals, word for word.
    let (status, web) = shed.query("runs", ".jogg!", Some(&vic)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, mcp) = shed
        .mcp(
            &vic_token,
            "graph_query",
            json!({ "app": "demo/runs", "filter": ".jogg!" }),
        )
        .await;
    assert_eq!(web["error"], mcp);
    let bad = json!({ "entity": { "eid": "$x" }, "jogg": { "who": "x" } });
    let (status, web) = shed.apply("runs", bad.clone(), Some(&ed)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, mcp) = shed
        .mcp(
            &ed_token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": bad }),
        )
        .await;
    assert_eq!(web["error"], mcp);
    let (_, web) = shed.apply("runs", run("Vic", 1.0), Some(&vic)).await;
    let (_, mcp) = shed
        .mcp(
            &vic_token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": run("Vic", 1.0) }),
        )
        .await;
    assert_eq!(
        (web["error"].as_str(), mcp.as_str()),
        (Some(VIEWER), Some(VIEWER))
    );
    let (_, rows) = shed.query("runs", ".jog!", Some(&vic)).await;
    let eid = rows["rows"][0]["entity"]["eid"]
        .as_str()
        .unwrap()
        .to_string();
    let stale = json!({ "entity": { "eid": eid }, "jog": { "miles": 6 }, "was": 0 });
    let (status, web) = shed.apply("runs", stale.clone(), Some(&ed)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, mcp) = shed
        .mcp(
            &ed_token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": stale }),
        )
        .await;
    assert_eq!(web["error"], mcp);

    // A write answers as graph_apply does: its entities, aliases and version.
    let (_, web) = shed.apply("runs", run("Linus", 2.0), Some(&ed)).await;
    let (_, mcp) = shed
        .mcp(
            &ed_token,
            "graph_apply",
            json!({ "app": "demo/runs", "bundle": run("Linus", 2.0) }),
        )
        .await;
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&web), keys(&mcp));
    assert_eq!(
        web["version"].as_u64().unwrap() + 1,
        mcp["version"].as_u64().unwrap()
    );

    // Unknown apis and wrong methods are sentences too.
    let (status, _, body) = shed.get(&shed.demo("/runs/api/delete"), Some(&vic)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no page api delete"), "{body}");
    let (status, _, body) = shed.get(&shed.demo("/runs/api/apply"), Some(&vic)).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(body.contains("./api/apply answers POST only"), "{body}");
}

#[tokio::test]
async fn a_write_from_elsewhere_is_refused_and_writes_nothing() {
    let shed = Shed::start().await;
    let ed = shed.demo_cookie("ed").await;
    let count = || async {
        shed.query("runs", ".jog!", Some(&ed)).await.1["rows"]
            .as_array()
            .unwrap()
            .len()
    };
    let post = |origin: Option<String>, kind: &'static str, body: String| {
        let mut request = shed
            .http
            .post(shed.demo("/runs/api/apply"))
            .header(header::COOKIE, ed.clone())
            .header(header::CONTENT_TYPE, kind)
            .body(body);
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        request.send()
    };
    let bundle = run("Mallory", 9.0).to_string();
    for origin in [
        Some(format!("http://evil.localhost:{}", shed.port)),
        Some(format!("http://club.localhost:{}", shed.port)),
        Some("null".into()),
        None,
    ] {
        let response = post(origin.clone(), "application/json", bundle.clone())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{origin:?}");
        let said: Value = response.json().await.unwrap();
        assert!(
            said["error"]
                .as_str()
                .unwrap()
                .starts_with("demo/runs takes writes from its own pages at "),
            "{said}"
        );
    }
    // The form a cross-site page can post without asking: refused, even from the right origin.
    let form = post(
        Some(shed.origin()),
        "application/x-www-form-urlencoded",
        format!("bundle={bundle}"),
    )
    .await
    .unwrap();
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let not_json = post(Some(shed.origin()), "application/json", "{not json".into())
        .await
        .unwrap();
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);
    assert_eq!(count().await, 0, "nothing was written");
    assert_eq!(
        post(Some(shed.origin()), "application/json", bundle.clone())
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    // A bearer token is no ambient credential: it needs no Origin.
    let token = shed.token("ed");
    let response = shed
        .http
        .post(shed.demo("/runs/api/apply"))
        .bearer_auth(token)
        .json(&run("Ed", 1.0))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(count().await, 2);
}

#[tokio::test]
async fn a_link_signs_in_once_on_every_space_and_logout_ends_it() {
    let shed = Shed::start().await;
    let link = shed.login_link("ada");
    assert!(
        link.starts_with(&format!("{}/_shed/login?key=", shed.url())),
        "{link}"
    );
    // Opening the link (a preview, a scanner) only asks, and spends nothing.
    for _ in 0..2 {
        let (status, headers, page) = shed.get(&link, None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert!(
            page.contains("Sign in to shed as Ada (@ada) on this browser?")
                && page.contains("<form method=\"post\" action=\"/_shed/login\">")
                && page.contains("<button type=\"submit\">Sign in</button>"),
            "{page}"
        );
        assert!(headers.get(header::SET_COOKIE).is_none());
        assert_eq!(headers[header::CACHE_CONTROL], "no-store");
        assert_eq!(headers[header::REFERRER_POLICY], "same-origin");
        let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(
            policy.contains(&format!(
                "form-action 'self' http://*.localhost:{};",
                shed.port
            )) && !policy.contains("script-src"),
            "{policy}"
        );
    }
    // Another site's page, or a request that says no origin, cannot press it.
    for origin in [Some("http://evil.localhost:1"), Some("null"), None] {
        let refused = shed.post_link(&link, origin, &mut Jar::default()).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{origin:?}");
        assert!(refused.headers().get(header::SET_COOKIE).is_none());
        let sentence = refused.text().await.unwrap();
        assert!(
            sentence.contains(&format!("from its own page at {}", shed.url())),
            "{sentence}"
        );
    }
    let first = shed
        .post_link(&link, Some(&shed.url()), &mut Jar::default())
        .await;
    assert_eq!(first.status(), StatusCode::SEE_OTHER);
    assert_eq!(first.headers()[header::CACHE_CONTROL], "no-store");
    assert_eq!(first.headers()[header::REFERRER_POLICY], "no-referrer");
    let set: Vec<&str> = first
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|set| set.to_str().unwrap().split_once('=').unwrap().0)
        .collect();
    assert_eq!(set, ["shed_session", "shed_signin"]);
    assert!(
        first.headers()[header::LOCATION]
            .to_str()
            .unwrap()
            .starts_with(&shed.url().replace("localhost", "club.localhost")),
        "the hops start at ada's first space"
    );
    let again = shed
        .post_link(&link, Some(&shed.url()), &mut Jar::default())
        .await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST, "a link works once");
    assert!(again.headers().get(header::SET_COOKIE).is_none());
    assert!(
        again
            .text()
            .await
            .unwrap()
            .contains("was used already, is older than ten minutes, or was never made")
    );
    // Once used, opening it says so straight away; so does a made-up key.
    for spent in [link.clone(), format!("{}/_shed/login?key=0123", shed.url())] {
        let (status, _, page) = shed.get(&spent, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            page.contains("shed login &lt;handle&gt;") && !page.contains("<form"),
            "{page}"
        );
    }
    // A name is shown as text, never as markup.
    shed.shed(&["person", "add", "mal", "--name", "<b>Mal</b>"]);
    let (_, _, page) = shed.get(&shed.login_link("mal"), None).await;
    assert!(page.contains("as &lt;b&gt;Mal&lt;/b&gt; (@mal)"), "{page}");

    let jar = shed.sign_in("ada").await;
    let cookies = jar.sessions();
    let hosts: Vec<&str> = cookies.iter().map(|(host, _)| host.as_str()).collect();
    assert_eq!(hosts, ["localhost", "club.localhost", "demo.localhost"]);
    for (host, set) in &jar.0 {
        for attribute in ["Path=/", "HttpOnly", "SameSite=Lax", "Max-Age="] {
            assert!(set.contains(attribute), "{host}: {set} lacks {attribute}");
        }
        assert!(
            !set.contains("Domain") && !set.contains("Secure"),
            "{host}: {set}"
        );
    }
    let platform = cookies[0].1.split(';').next().unwrap();
    let (status, _, front) = shed.get(&format!("{}/", shed.url()), Some(platform)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        front.contains("You are signed in as @ada.") && front.contains(&shed.demo("/runs/")),
        "{front}"
    );
    let demo = cookies[2].1.split(';').next().unwrap();
    assert_eq!(
        shed.get(&shed.demo("/runs/"), Some(demo)).await.0,
        StatusCode::OK
    );
    // A hop cannot be replayed, nor used on another space.
    let (status, _, _) = shed
        .get(&shed.demo("/_shed/hop?hops=demo:0123"), None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    assert!(
        shed.shed(&["logout", "ada"]).contains("ended 4 sessions"),
        "two sign-ins of ada: 2 × (platform + demo)… counted"
    );
    assert_eq!(
        shed.get(&shed.demo("/runs/"), Some(demo)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (_, _, front) = shed.get(&format!("{}/", shed.url()), Some(platform)).await;
    assert!(front.contains("shed login"), "{front}");
}

#[tokio::test]
async fn a_link_out_of_the_app_s_folder_is_refused_at_deploy_and_nothing_is_served() {
    let shed = Shed::start().await;
    let ada = shed.demo_cookie("ada").await;
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "the secret key").unwrap();
    let app = outside.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("index.html"), "<p>leaky</p>").unwrap();
    let secret = secret.to_str().unwrap();
    for (name, target) in [
        ("leak.css", secret),
        ("logo.png", "../secret.txt"),
        ("etc", "/etc"),
    ] {
        let link = app.join(name);
        std::os::unix::fs::symlink(target, &link).unwrap();
        assert_eq!(
            shed.deploy_public(&app, "leak"),
            Err(format!(
                "{name} links to {target}, outside the app's folder — copy the file in, or remove the link"
            ))
        );
        std::fs::remove_file(&link).unwrap();
        for path in [
            format!("/leak/{name}"),
            "/leak/etc/hostname".into(),
            "/leak/".into(),
        ] {
            // Nothing was deployed: no app to read, signed in or out.
            let (status, _, answer) = shed.get(&shed.demo(&path), Some(&ada)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {answer}");
            let (status, _, answer) = shed.get(&shed.demo(&path), None).await;
            assert_ne!(status, StatusCode::OK, "{path}: {answer}");
            assert!(!answer.contains("the secret key"), "{path} leaked");
        }
    }
}

#[tokio::test]
async fn links_inside_the_app_s_folder_are_followed_and_a_looping_one_is_refused() {
    let shed = Shed::start().await;
    let app = tempfile::tempdir().unwrap();
    let app = app.path();
    std::fs::write(app.join("index.html"), "<p>linked</p>").unwrap();
    std::fs::create_dir(app.join("real")).unwrap();
    std::fs::write(app.join("real/note.txt"), "a note").unwrap();
    std::os::unix::fs::symlink("index.html", app.join("home.html")).unwrap();
    std::os::unix::fs::symlink(app.join("real"), app.join("assets")).unwrap();
    std::os::unix::fs::symlink("../real/note.txt", app.join("real/again.txt")).unwrap();
    let deployed = shed.deploy_public(app, "linked").unwrap();
    assert!(
        deployed.starts_with("deployed demo/linked v1"),
        "{deployed}"
    );
    let (status, _, answer) = shed.get(&shed.demo("/linked/home.html"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(answer.ends_with("<p>linked</p>"), "{answer}");
    for (path, body) in [
        ("/linked/real/note.txt", "a note"),
        ("/linked/assets/note.txt", "a note"),
        ("/linked/real/again.txt", "a note"),
    ] {
        let (status, _, answer) = shed.get(&shed.demo(path), None).await;
        assert_eq!((status, answer.as_str()), (StatusCode::OK, body), "{path}");
    }

    // A link to a folder it is in would repeat that folder forever.
    std::os::unix::fs::symlink("..", app.join("real/up")).unwrap();
    assert_eq!(
        shed.deploy_public(app, "linked"),
        Err(
            "assets/up links to .., a folder it is in, so it would go on forever — remove the link"
                .into()
        )
    );
    let (status, _, answer) = shed.get(&shed.demo("/linked/home.html"), None).await;
    assert_eq!(status, StatusCode::OK, "v1 still answers");
    assert!(answer.ends_with("<p>linked</p>"), "{answer}");
}

#[tokio::test]
async fn a_column_named_as_the_store_s_own_key_is_refused_at_deploy_and_nothing_changes() {
    let shed = Shed::start().await;
    let app = tempfile::tempdir().unwrap();
    for file in std::fs::read_dir(run_club()).unwrap() {
        let file = file.unwrap();
        std::fs::copy(file.path(), app.path().join(file.file_name())).unwrap();
    }
    std::fs::write(
        app.path().join("vocab.json"),
        r#"{ "jog": { "who": "text", "miles": "number", "at": "time", "id": "text" },
             "shoe": { "rowid": "number", "oid": "ref" } }"#,
    )
    .unwrap();
    assert_eq!(
        shed.deploy_public(app.path(), "pub"),
        Err("vocab.json: jog.id is kept by the store on every row — name your column something else; \
             shoe.rowid is kept by the store on every row — name your column something else; \
             shoe.oid is kept by the store on every row — name your column something else"
            .into())
    );
    // Nothing changed: the app still answers, and the folder put back as it
    // was deploys as the v1 it is.
    let (status, found) = shed.query("pub", ".jog", None).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    std::fs::copy(run_club().join("vocab.json"), app.path().join("vocab.json")).unwrap();
    let deployed = shed.deploy_public(app.path(), "pub").unwrap();
    assert!(
        deployed.starts_with("demo/pub unchanged — still v1"),
        "{deployed}"
    );
}

// PostgreSQL's system columns: refused with the same sentence on both
// backends, before any database sees them (on a server they used to reach
// the caller as PostgreSQL's own error).
#[tokio::test]
async fn a_column_named_as_a_postgres_system_column_is_refused_at_deploy_on_every_backend() {
    let shed = Shed::start().await;
    let app = tempfile::tempdir().unwrap();
    for file in std::fs::read_dir(run_club()).unwrap() {
        let file = file.unwrap();
        std::fs::copy(file.path(), app.path().join(file.file_name())).unwrap();
    }
    let system = ["xmin", "xmax", "cmin", "cmax", "ctid", "tableoid"];
    let columns: Vec<String> = system.iter().map(|c| format!(r#""{c}": "text""#)).collect();
    std::fs::write(
        app.path().join("vocab.json"),
        format!(
            r#"{{ "jog": {{ "who": "text", "miles": "number", "at": "time" }},
                 "shoe": {{ {} }} }}"#,
            columns.join(", ")
        ),
    )
    .unwrap();
    let sentence: Vec<String> = system
        .iter()
        .map(|c| {
            format!("shoe.{c} is kept by the store on every row — name your column something else")
        })
        .collect();
    assert_eq!(
        shed.deploy_public(app.path(), "pub"),
        Err(format!("vocab.json: {}", sentence.join("; ")))
    );
    let (status, found) = shed.query("pub", ".jog", None).await;
    assert_eq!(status, StatusCode::OK, "the app still answers: {found}");
}

#[tokio::test]
async fn a_sign_in_step_sent_to_another_browser_signs_nobody_in() {
    let shed = Shed::start().await;
    // Ada, signed in on her browser.
    let mut ada = shed.sign_in("ada").await;
    // Ed presses his own link's button himself (from the right page) and
    // sends on, as a link, an address the hops took him to: the first, or
    // the last step's, once his browser took the first two.
    for steps in [0, 2] {
        let mut ed = Jar::default();
        let pressed = shed
            .post_link(&shed.login_link("ed"), Some(&shed.url()), &mut ed)
            .await;
        let mut sent = location(&pressed);
        assert!(
            sent.starts_with(&shed.demo("/_shed/hop?hops=demo:")),
            "{sent}"
        );
        for _ in 0..steps {
            let response = shed.visit(&mut ed, &sent).await;
            assert_eq!(response.status(), StatusCode::SEE_OTHER, "{sent}");
            sent = location(&response);
        }
        // Ada opens it: a sentence, and she is still herself on demo.
        let opened = shed.visit(&mut ada, &sent).await;
        let (status, at, page) = shed.follow(&mut ada, opened).await;
        assert!(status.is_client_error(), "{status} at {at}: {page}");
        assert!(
            page.contains("started on another browser")
                && page.contains("open your sign-in link in the browser you want to sign in on"),
            "{page}"
        );
        let cookie = ada.header(&shed.demo("/")).unwrap();
        let (status, wrote) = shed.apply("runs", run("Ada", 2.0), Some(&cookie)).await;
        assert_eq!(status, StatusCode::OK, "{wrote}");
        let (_, rows) = shed.query("runs", ".jog!&.created!", Some(&cookie)).await;
        for row in rows["rows"].as_array().unwrap() {
            assert_eq!(row["created"]["by"]["name"], "Ada", "{rows}");
        }
    }
}

/// A bearer token for each person of the access matrix.
fn matrix_tokens(shed: &Shed) -> std::collections::HashMap<&'static str, String> {
    access_matrix::STANDINGS
        .iter()
        .filter_map(|(handle, _)| *handle)
        .map(|handle| (handle, shed.token(handle)))
        .collect()
}

#[tokio::test]
async fn the_access_matrix_through_the_mcp_door() {
    let shed = Shed::start().await;
    let tokens = matrix_tokens(&shed);
    let mut cells = 0;
    for (app, access) in access_matrix::APPS {
        for (handle, standing) in access_matrix::STANDINGS {
            let token = handle.map(|h| tokens[h].as_str());
            for act in access_matrix::ACTS {
                let (tool, arguments) = match act {
                    shed_host::access::Act::Read => (
                        "graph_query",
                        json!({"app": format!("demo/{app}"), "filter": ".jog!"}),
                    ),
                    _ => (
                        "graph_apply",
                        json!({"app": format!("demo/{app}"), "bundle": run("M", 1.0)}),
                    ),
                };
                let (error, said) = shed.mcp_as(token, tool, arguments).await;
                let expected = access_matrix::verdict(app, access, standing, act);
                let cell = format!("{tool} on demo/{app} as {handle:?}");
                match expected {
                    // Signed out, every call is a 401 that starts the
                    // client's OAuth sign-in, before the rule book is asked
                    // (a public app is read signed out on the web, not here).
                    _ if handle.is_none() => {
                        let challenge = said["unauthorized"].as_str().unwrap_or_default();
                        assert!(
                            challenge.starts_with("Bearer resource_metadata=")
                                && !challenge.contains("invalid_token"),
                            "{cell}: {said}"
                        );
                    }
                    None => assert!(!error, "{cell}: {said}"),
                    Some((_, sentence)) => {
                        assert!(error, "{cell} went ahead: {said}");
                        assert_eq!(said, sentence, "{cell}");
                    }
                }
                cells += 1;
            }
        }
    }
    assert_eq!(cells, 3 * 5 * 2);
}

#[tokio::test]
async fn the_access_matrix_through_the_page_api() {
    let shed = Shed::start().await;
    let tokens = matrix_tokens(&shed);
    for (app, access) in access_matrix::APPS {
        for (handle, standing) in access_matrix::STANDINGS {
            for act in access_matrix::ACTS {
                let request = match act {
                    shed_host::access::Act::Read => {
                        shed.http.get(shed.demo(&format!("/{app}/api/query?.jog!")))
                    }
                    _ => shed
                        .http
                        .post(shed.demo(&format!("/{app}/api/apply")))
                        .json(&run("W", 1.0)),
                };
                let request = match handle {
                    Some(handle) => request.bearer_auth(&tokens[handle]),
                    None => request,
                };
                let response = request.send().await.unwrap();
                let status = response.status();
                let body: Value = response.json().await.unwrap();
                let cell = format!("{act:?} on demo/{app} as {handle:?}");
                match access_matrix::verdict(app, access, standing, act) {
                    None => assert_eq!(status, StatusCode::OK, "{cell}: {body}"),
                    Some((kind, sentence)) => {
                        let wanted = match kind {
                            "sign-in" => StatusCode::UNAUTHORIZED,
                            "not-found" => StatusCode::NOT_FOUND,
                            _ => StatusCode::FORBIDDEN,
                        };
                        assert_eq!(
                            (status, &body["error"]),
                            (wanted, &json!(sentence)),
                            "{cell}"
                        );
                    }
                }
            }
        }
    }
}
