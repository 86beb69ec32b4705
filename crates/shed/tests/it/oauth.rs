//! OAuth 2.1's refusals, black-box: the real `shed serve`, asked over HTTP as
//! a client and a signed-in browser would, each refusal answered as the RFCs
//! say — PKCE missing or plain, a wrong verifier, a code used twice (and what
//! it gave revoked), a redirect URI not registered, client metadata documents
//! that do not name themselves or are too large or not JSON, a registration
//! with a redirect that is neither https nor loopback, a token for another
//! resource, a replayed refresh token, Deny, and a consent from another
//! origin; a malformed authorization request answered with a page, never a
//! redirect; registrations bounded in size and rate, so a flood of them
//! leaves the disk alone. (The whole flow through the official SDK is
//! tests/test_oauth.py.)

use std::collections::HashMap;

use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::data_place::on_sqlite;
use crate::web_door::{Jar, Shed, location, run};

/// A PKCE verifier and its S256 challenge (computed apart, in Python).
const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K3OdADkWJW-7gD3AVcgq3ivp8M";
const CHALLENGE: &str = "YpufkTFi3rca7K9heR3Rw4S55uX_EjflC3Rx4HCLc8c";
const REDIRECT: &str = "http://127.0.0.1:4321/callback";

/// `name=value&…`, form-encoded.
pub(crate) fn encoded<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    let mut url = reqwest::Url::parse("http://form.invalid/").unwrap();
    url.query_pairs_mut()
        .extend_pairs(pairs.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
    url.query().unwrap_or_default().to_string()
}

/// A request carrying `pairs` as a form.
fn as_form<K: AsRef<str>, V: AsRef<str>>(
    request: reqwest::RequestBuilder,
    pairs: &[(K, V)],
) -> reqwest::RequestBuilder {
    request
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(encoded(pairs))
}

/// The query of a redirect's address, by name.
fn query_of(url: &str) -> HashMap<String, String> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// An authorization request's parameters for `client`, with PKCE S256.
pub(crate) fn ask(client: &str) -> Vec<(&'static str, String)> {
    vec![
        ("response_type", "code".into()),
        ("client_id", client.into()),
        ("redirect_uri", REDIRECT.into()),
        ("code_challenge", CHALLENGE.into()),
        ("code_challenge_method", "S256".into()),
        ("state", "st-1".into()),
    ]
}

fn with(
    mut params: Vec<(&'static str, String)>,
    name: &'static str,
    value: &str,
) -> Vec<(&'static str, String)> {
    params.retain(|(n, _)| *n != name);
    params.push((name, value.to_string()));
    params
}

fn without(mut params: Vec<(&'static str, String)>, name: &str) -> Vec<(&'static str, String)> {
    params.retain(|(n, _)| *n != name);
    params
}

impl Shed {
    /// `POST /oauth/register`: the status and the JSON.
    async fn register(&self, body: Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}/oauth/register", self.url()))
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    /// A client registered with [`REDIRECT`]: its id.
    async fn client(&self) -> String {
        let (status, client) = self
            .register(json!({ "client_name": "Test client", "redirect_uris": [REDIRECT] }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{client}");
        client["client_id"].as_str().unwrap().to_string()
    }

    /// `GET /oauth/authorize?<params>` in the browser holding `jar`.
    pub(crate) async fn authorize(
        &self,
        jar: &Jar,
        params: &[(&str, String)],
    ) -> reqwest::Response {
        let url = format!("{}/oauth/authorize", self.url());
        let mut request = self.http.get(format!("{url}?{}", encoded(params)));
        if let Some(cookies) = jar.header(&url) {
            request = request.header(header::COOKIE, cookies);
        }
        request.send().await.unwrap()
    }

    /// The consent form posted with `decision` from the page of `origin`.
    async fn consent(
        &self,
        jar: &Jar,
        params: &[(&str, String)],
        decision: &str,
        origin: &str,
    ) -> reqwest::Response {
        let url = format!("{}/oauth/authorize", self.url());
        let mut form: Vec<(&str, String)> = params.to_vec();
        form.push(("decision", decision.to_string()));
        let mut request = as_form(self.http.post(&url).header(header::ORIGIN, origin), &form);
        if let Some(cookies) = jar.header(&url) {
            request = request.header(header::COOKIE, cookies);
        }
        request.send().await.unwrap()
    }

    /// ada allows `client` in a signed-in browser: the code.
    async fn code(&self, jar: &Jar, client: &str) -> String {
        let allowed = self.consent(jar, &ask(client), "allow", &self.url()).await;
        assert_eq!(allowed.status(), StatusCode::SEE_OTHER);
        let back = query_of(&location(&allowed));
        assert_eq!(back["state"], "st-1");
        back["code"].clone()
    }

    /// `POST /oauth/token` with `form`: the status, the headers and the JSON.
    async fn token_endpoint(&self, form: &[(&str, &str)]) -> (StatusCode, HeaderMap, Value) {
        let response = as_form(self.http.post(format!("{}/oauth/token", self.url())), form)
            .send()
            .await
            .unwrap();
        let (status, headers) = (response.status(), response.headers().clone());
        (status, headers, response.json().await.unwrap())
    }

    /// The code exchanged for tokens, as `client` with `verifier`.
    async fn exchange(&self, code: &str, client: &str, verifier: &str) -> (StatusCode, Value) {
        let (status, _, body) = self
            .token_endpoint(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", REDIRECT),
                ("client_id", client),
                ("code_verifier", verifier),
            ])
            .await;
        (status, body)
    }

    /// A refresh of `refresh` as `client`.
    async fn refresh(&self, refresh: &str, client: &str) -> (StatusCode, Value) {
        let (status, _, body) = self
            .token_endpoint(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", client),
            ])
            .await;
        (status, body)
    }

    /// `commands` at /mcp with `token`, as a 2026-07-28 client sends it
    /// (no session): the status and the `WWW-Authenticate`.
    async fn mcp_status(&self, token: Option<&str>) -> (StatusCode, String) {
        let params = json!({ "name": "commands", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} } });
        let mut request = self
            .http
            .post(format!("{}/mcp", self.url()))
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "commands")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        (response.status(), challenge)
    }
}

/// The RFC's `error` of a refusal answered to the redirect.
fn redirected_error(response: &reqwest::Response) -> (String, String) {
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let back = location(response);
    assert!(back.starts_with(REDIRECT), "{back}");
    let query = query_of(&back);
    (
        query["error"].clone(),
        query.get("state").cloned().unwrap_or_default(),
    )
}

#[tokio::test]
async fn the_authorization_request_is_refused_as_the_rfcs_say() {
    let shed = Shed::start().await;
    let client = shed.client().await;
    let jar = shed.sign_in("ada").await;

    // A redirect URI not registered, or an unknown client: a page, never a
    // redirect (a malformed request is too:
    // `a_malformed_authorization_request_is_a_page_never_a_redirect`).
    for params in [
        with(
            ask(&client),
            "redirect_uri",
            "http://127.0.0.1:4321/elsewhere",
        ),
        with(
            ask(&client),
            "redirect_uri",
            "https://evil.example/callback",
        ),
        with(ask(&client), "client_id", "shed_client_nobody"),
    ] {
        let refused = shed.authorize(&jar, &params).await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        assert!(refused.headers().get(header::LOCATION).is_none());
        let page = refused.text().await.unwrap();
        assert!(page.contains("Nothing was sent to the app"), "{page}");
    }

    // The consent page itself: who asks, where it sends you, as whom.
    let page = shed.authorize(&jar, &ask(&client)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let policy = page.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        policy.contains("form-action 'self' http://127.0.0.1:4321;")
            && policy.contains("frame-ancestors 'none'"),
        "{policy}"
    );
    let page = page.text().await.unwrap();
    assert!(
        page.contains("<strong>Test client</strong> (it sends you back to <code>127.0.0.1</code>"),
        "{page}"
    );
    assert!(
        page.contains("Ada (@ada)") && page.contains("demo — as owner (3 apps)"),
        "{page}"
    );
    // Deny is the quieter button; taking it back is on the account page.
    assert!(
        page.contains(
            "<button class=\"secondary\" type=\"submit\" name=\"decision\" value=\"deny\">"
        ) && page.contains("<a href=\"/account#clients\">Connected clients</a>"),
        "{page}"
    );

    // Deny: access_denied to the redirect, with state.
    let denied = shed.consent(&jar, &ask(&client), "deny", &shed.url()).await;
    assert_eq!(
        redirected_error(&denied),
        ("access_denied".into(), "st-1".into())
    );

    // A consent posted from another origin: 403, and nothing granted.
    let forged = shed
        .consent(&jar, &ask(&client), "allow", &shed.origin())
        .await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert!(forged.headers().get(header::LOCATION).is_none());
    assert!(forged.text().await.unwrap().contains("nothing was granted"));
    // Signed out: nothing granted either.
    let stranger = shed
        .consent(&Jar::default(), &ask(&client), "allow", &shed.url())
        .await;
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    assert!(!shed.shed(&["token", "list"]).contains("(OAuth)"));
}

/// A client's redirect on a stranger's site.
const STRANGER: &str = "https://evil.example/callback";

#[tokio::test]
async fn a_malformed_authorization_request_is_a_page_never_a_redirect() {
    let shed = Shed::start().await;
    let (status, body) = shed
        .register(json!({ "client_name": "Stranger", "redirect_uris": [STRANGER] }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let stranger = with(
        ask(body["client_id"].as_str().unwrap()),
        "redirect_uri",
        STRANGER,
    );
    let signed_in = shed.sign_in("ada").await;
    let malformed = [
        (
            with(stranger.clone(), "response_type", "x"),
            "shed answers response_type=code only",
        ),
        (
            without(stranger.clone(), "response_type"),
            "shed answers response_type=code only",
        ),
        (
            with(
                with(stranger.clone(), "code_challenge_method", "plain"),
                "code_challenge",
                VERIFIER,
            ),
            "no PKCE code_challenge made with code_challenge_method=S256 (it says plain)",
        ),
        (
            without(stranger.clone(), "code_challenge"),
            "no PKCE code_challenge made with code_challenge_method=S256",
        ),
        (
            without(
                without(stranger.clone(), "code_challenge"),
                "code_challenge_method",
            ),
            "no PKCE code_challenge made with code_challenge_method=S256",
        ),
        (
            with(stranger.clone(), "resource", "https://other.example/mcp"),
            "asks for the resource https://other.example/mcp, and this server grants access to",
        ),
    ];
    for (jar, who) in [(&Jar::default(), "signed out"), (&signed_in, "signed in")] {
        for (params, says) in &malformed {
            let refused = shed.authorize(jar, params).await;
            assert_eq!(
                refused.status(),
                StatusCode::BAD_REQUEST,
                "{who}: {params:?}"
            );
            assert!(refused.headers().get(header::LOCATION).is_none());
            let page = refused.text().await.unwrap();
            assert!(
                page.contains(says) && page.contains("Nothing was sent to the app"),
                "{who}: {page}"
            );
        }
        // shed grants one scope and says so: another asked is no error,
        // and no redirect either.
        let scoped = shed
            .authorize(jar, &with(stranger.clone(), "scope", "everything"))
            .await;
        assert_eq!(scoped.status(), StatusCode::OK, "{who}");
    }
    // The consent form posted malformed: a page too.
    for (params, says) in &malformed {
        let refused = shed.consent(&signed_in, params, "deny", &shed.url()).await;
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        assert!(refused.headers().get(header::LOCATION).is_none());
        assert!(refused.text().await.unwrap().contains(says));
    }
    // Sent back only once the person chose on the consent page.
    let denied = shed
        .consent(&signed_in, &stranger, "deny", &shed.url())
        .await;
    assert_eq!(denied.status(), StatusCode::SEE_OTHER);
    let back = location(&denied);
    assert!(back.starts_with(STRANGER), "{back}");
    assert_eq!(query_of(&back)["error"], "access_denied");
}

/// How much the database may grow while one address floods the
/// registration endpoint: ten clients taken, each a few KB, and the
/// write-ahead log's pages for them.
const MOST_FLOOD_GROWTH: u64 = 1024 * 1024;

/// The bytes of the data folder's SQLite database and its write-ahead log.
fn database_bytes(shed: &Shed) -> u64 {
    ["shed.db", "shed.db-wal"]
        .iter()
        .filter_map(|file| std::fs::metadata(shed.data.path().join(file)).ok())
        .map(|meta| meta.len())
        .sum()
}

#[tokio::test]
async fn registrations_are_bounded_in_size_and_rate_so_a_flood_leaves_the_disk_alone() {
    let shed = Shed::start().await;
    // One redirect URI too long; ten that are each short enough but too
    // much together.
    let long = format!("https://app.example/{}", "a".repeat(3000));
    let (status, body) = shed
        .register(json!({ "client_name": "Long", "redirect_uris": [long] }))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri"))
    );
    let said = body["error_description"].as_str().unwrap();
    assert!(
        said.contains("is 3020 bytes long, and shed takes redirect URIs of up to 2048 bytes"),
        "{said}"
    );
    let many: Vec<String> = (0..10)
        .map(|n| format!("https://app.example/{n}/{}", "b".repeat(1000)))
        .collect();
    let (status, body) = shed
        .register(json!({ "client_name": "Many", "redirect_uris": many }))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_client_metadata"))
    );
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("shed keeps up to 4096 bytes of a client"),
        "{body}"
    );

    // 300 registrations as large as may be, one after another from loopback.
    let before = database_bytes(&shed);
    let largest: Vec<String> = (0..2)
        .map(|n| format!("https://app.example/{n}/{}", "c".repeat(1900)))
        .collect();
    let mut taken = 0;
    let mut refusal = None;
    for _ in 0..300 {
        let response = shed
            .http
            .post(format!("{}/oauth/register", shed.url()))
            .json(&json!({ "client_name": "Flood", "redirect_uris": largest }))
            .send()
            .await
            .unwrap();
        match response.status() {
            StatusCode::CREATED => taken += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                let wait = response.headers()[header::RETRY_AFTER]
                    .to_str()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap();
                let body: Value = response.json().await.unwrap();
                refusal = Some((wait, body));
            }
            other => panic!("a registration answered {other}"),
        }
    }
    assert_eq!(taken, 10, "an address's burst, then one each six minutes");
    let (wait, body) = refusal.expect("the flood is refused");
    assert!((1..=360).contains(&wait), "Retry-After: {wait}");
    assert_eq!(body["error"], "temporarily_unavailable");
    let said = body["error_description"].as_str().unwrap();
    assert!(
        said.starts_with("too many clients were registered from your address lately")
            && said.ends_with(&format!("try again in {wait} seconds")),
        "{said}"
    );
    if on_sqlite("registrations_are_bounded… (the database's growth)") {
        let grown = database_bytes(&shed).saturating_sub(before);
        assert!(
            grown < MOST_FLOOD_GROWTH,
            "the database grew by {grown} bytes under the flood"
        );
    }
}

#[tokio::test]
async fn codes_verifiers_refresh_tokens_and_resources_are_refused_as_the_rfcs_say() {
    let shed = Shed::start().await;
    let client = shed.client().await;
    let jar = shed.sign_in("ada").await;

    // A wrong verifier: invalid_grant, and the code is spent.
    let code = shed.code(&jar, &client).await;
    let (status, body) = shed.exchange(&code, &client, &"x".repeat(43)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let (_, body) = shed.exchange(&code, &client, VERIFIER).await;
    assert_eq!(body["error"], "invalid_grant");
    // No verifier at all: invalid_request, and the code is left as it was.
    let code = shed.code(&jar, &client).await;
    let (status, _, body) = shed
        .token_endpoint(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client),
        ])
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );

    // The code once: tokens, never cached.
    let (status, headers, tokens) = shed
        .token_endpoint(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
            ("resource", &format!("{}/mcp", shed.url())),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(headers[header::CACHE_CONTROL], "no-store");
    assert_eq!(
        (tokens["token_type"].as_str(), tokens["scope"].as_str()),
        (Some("Bearer"), Some("mcp"))
    );
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(shed.mcp_status(Some(&access)).await.0, StatusCode::OK);
    // The code twice: invalid_grant, and the tokens it gave are revoked.
    let (_, again) = shed.exchange(&code, &client, VERIFIER).await;
    assert_eq!(again["error"], "invalid_grant");
    let (status, challenge) = shed.mcp_status(Some(&access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(
        shed.refresh(tokens["refresh_token"].as_str().unwrap(), &client)
            .await
            .0
            == StatusCode::BAD_REQUEST
    );

    // A code asked for another resource at the token endpoint.
    let code = shed.code(&jar, &client).await;
    let (_, _, body) = shed
        .token_endpoint(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
            ("resource", "https://other.example/mcp"),
        ])
        .await;
    assert_eq!(body["error"], "invalid_target");

    // A replayed refresh token ends the whole grant.
    let code = shed.code(&jar, &client).await;
    let (_, first) = shed.exchange(&code, &client, VERIFIER).await;
    let (status, second) = shed
        .refresh(first["refresh_token"].as_str().unwrap(), &client)
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let second_access = second["access_token"].as_str().unwrap();
    assert_eq!(shed.mcp_status(Some(second_access)).await.0, StatusCode::OK);
    // An OAuth access token is for /mcp only: the page api refuses it.
    let page_api = shed
        .http
        .post(shed.demo("/runs/api/apply"))
        .bearer_auth(second_access)
        .json(&run("Ada", 1.0))
        .send()
        .await
        .unwrap();
    assert_eq!(page_api.status(), StatusCode::UNAUTHORIZED);
    let (status, replay) = shed
        .refresh(first["refresh_token"].as_str().unwrap(), &client)
        .await;
    assert_eq!(
        (status, replay["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(
        shed.mcp_status(Some(second_access)).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        shed.refresh(second["refresh_token"].as_str().unwrap(), &client)
            .await
            .0,
        StatusCode::BAD_REQUEST
    );

    // Unknown grant types and tokens.
    let (_, _, body) = shed
        .token_endpoint(&[("grant_type", "password"), ("client_id", &client)])
        .await;
    assert_eq!(body["error"], "unsupported_grant_type");
    let revoked = as_form(
        shed.http.post(format!("{}/oauth/revoke", shed.url())),
        &[("token", "shed_oauth_made_up")],
    )
    .send()
    .await
    .unwrap();
    assert_eq!(
        revoked.status(),
        StatusCode::OK,
        "RFC 7009: an unknown token is no error"
    );

    // Signed out, a call beyond the handshake is a 401 naming the metadata.
    let (status, challenge) = shed.mcp_status(None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\"",
            shed.url()
        )
    );
}

#[tokio::test]
async fn a_person_removed_loses_their_grants() {
    let shed = Shed::start().await;
    let client = shed.client().await;
    let jar = shed.sign_in("ed").await;
    let code = shed.code(&jar, &client).await;
    let (_, tokens) = shed.exchange(&code, &client, VERIFIER).await;
    let listed = shed.shed(&["token", "list", "ed"]);
    let grant = &crate::cli_lists::rows(&listed)[0];
    assert!(
        grant[0].starts_with("oauth-") && grant[1..3] == ["Test client (OAuth)", "ed"],
        "{listed}"
    );
    shed.shed(&["person", "remove", "ed"]);
    assert_eq!(
        shed.mcp_status(tokens["access_token"].as_str()).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        shed.refresh(tokens["refresh_token"].as_str().unwrap(), &client)
            .await
            .0,
        StatusCode::BAD_REQUEST
    );
}

/// `shed serve`'s flag letting documents be fetched from loopback.
pub(crate) const LOOPBACK_DOCUMENTS: &str = "--oauth-allow-loopback-documents";

/// The sentence of a refused authorization request: a page, never a redirect.
pub(crate) async fn refusal_sentence(refused: reqwest::Response) -> String {
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(refused.headers().get(header::LOCATION).is_none());
    let page = refused.text().await.unwrap();
    page.split_once("<p>")
        .and_then(|(_, rest)| rest.split_once("</p>"))
        .map(|(sentence, _)| sentence.to_string())
        .unwrap_or_else(|| panic!("{page}"))
}

/// [`refusal_sentence`], with the document URL `url` it names written `<url>`.
pub(crate) async fn refusal_naming(refused: reqwest::Response, url: &str) -> String {
    let sentence = refusal_sentence(refused).await;
    assert!(sentence.contains(url), "{url}: {sentence}");
    sentence.replace(url, "<url>")
}

#[tokio::test]
async fn registrations_and_metadata_documents_are_refused_as_the_rfcs_say() {
    let shed = Shed::start_with(&[LOOPBACK_DOCUMENTS]).await;
    // A redirect that is neither https nor loopback; a client with a secret.
    let (status, body) = shed
        .register(json!({ "client_name": "Evil", "redirect_uris": ["http://evil.example/cb"] }))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri"))
    );
    let (_, body) = shed
        .register(json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic" }))
        .await;
    assert_eq!(body["error"], "invalid_client_metadata");
    let (_, body) = shed
        .register(json!({ "redirect_uris": "not a list" }))
        .await;
    assert_eq!(body["error"], "invalid_client_metadata");

    // Documents served on loopback (plain http is taken there only, and
    // only with the development flag).
    let documents = Documents::serve().await;
    let itself = documents.url("/itself.json");
    documents.put(
        "/itself.json",
        json!({ "client_id": itself, "client_name": "Doc client", "redirect_uris": [REDIRECT] })
            .to_string(),
    );
    documents.put(
        "/not-itself.json",
        json!({ "client_id": "https://other.example/c.json", "redirect_uris": [REDIRECT] })
            .to_string(),
    );
    documents.put("/too-large.json", json!({ "client_id": documents.url("/too-large.json"), "redirect_uris": [REDIRECT], "padding": "x".repeat(6000) }).to_string());
    documents.put("/not-json.json", "<html>a client</html>".to_string());
    let jar = shed.sign_in("ada").await;
    // Each is refused with the one sentence of a document not read.
    for path in [
        "/not-itself.json",
        "/too-large.json",
        "/not-json.json",
        "/missing.json",
    ] {
        let url = documents.url(path);
        let refused = shed.authorize(&jar, &ask(&url)).await;
        let sentence = refusal_naming(refused, &url).await;
        assert!(
            sentence.contains("the client metadata document at <url> could not be read")
                && sentence.contains("of at most 5120 bytes whose client_id is that very URL"),
            "{path}: {sentence}"
        );
    }
    // A document that names itself: its consent page, and its redirect URIs hold.
    let page = shed.authorize(&jar, &ask(&itself)).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("<strong>Doc client</strong>")
    );
    let elsewhere = shed
        .authorize(
            &jar,
            &with(ask(&itself), "redirect_uri", "http://127.0.0.1:9/other"),
        )
        .await;
    assert_eq!(elsewhere.status(), StatusCode::BAD_REQUEST);
    // Plain http is for loopback only.
    let refused = shed
        .authorize(&jar, &ask("http://app.example/client.json"))
        .await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("neither https nor http on a loopback address")
    );
}

/// A loopback HTTP server answering each path with the status and body put
/// there (`Cache-Control: no-store`), and 404 elsewhere.
pub(crate) struct Documents {
    port: u16,
    bodies: std::sync::Arc<std::sync::Mutex<HashMap<String, (&'static str, String)>>>,
}

impl Documents {
    pub(crate) async fn serve() -> Documents {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(HashMap::new()));
        let served = bodies.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let served = served.clone();
                tokio::spawn(async move {
                    let mut head = vec![0; 4096];
                    let read = stream.read(&mut head).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&head[..read]).to_string();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let (status, body) = served
                        .lock()
                        .unwrap()
                        .get(&path)
                        .cloned()
                        .unwrap_or(("404 Not Found", String::new()));
                    let answer = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        Documents { port, bodies }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub(crate) fn put(&self, path: &str, body: String) {
        self.answer(path, "200 OK", body);
    }

    /// Answers `path` with `status` (its line, as `500 Internal Server Error`).
    pub(crate) fn answer(&self, path: &str, status: &'static str, body: String) {
        self.bodies
            .lock()
            .unwrap()
            .insert(path.to_string(), (status, body));
    }
}
