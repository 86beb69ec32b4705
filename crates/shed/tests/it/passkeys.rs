//! Passkeys' endpoints as a browser (or another site) posts to them: a step
//! from another origin, or saying none, is refused with 403 and keeps
//! nothing; a body that is not JSON is 415; a bearer token adds no passkey;
//! a name empty or too long gets its sentence. (The ceremonies themselves,
//! with a real authenticator, are `tests/browser/passkeys.test.mjs`.)

use reqwest::StatusCode;
use reqwest::header;
use serde_json::{Value, json};

use crate::data_place::rows;
use crate::web_door::Shed;

/// Posts `body` (JSON) to `path` on the platform host with `cookie` (or a
/// bearer token), from the page of `origin`: status and answer.
async fn post(
    shed: &Shed,
    path: &str,
    body: &Value,
    credential: (&str, &str),
    origin: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = shed
        .http
        .post(format!("{}{path}", shed.url()))
        .header(header::CONTENT_TYPE, "application/json")
        .header(credential.0, credential.1)
        .body(body.to_string());
    if let Some(origin) = origin {
        request = request.header(header::ORIGIN, origin);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn platform_cookie(shed: &Shed, handle: &str) -> String {
    let jar = shed.sign_in(handle).await;
    jar.header(&format!("{}/", shed.url()))
        .expect("a cookie for the platform's host")
}

#[tokio::test]
async fn a_passkey_step_from_another_origin_is_refused_and_keeps_nothing() {
    let shed = Shed::start().await;
    let ada = platform_cookie(&shed, "ada").await;
    let cookie = (header::COOKIE.as_str(), ada.as_str());
    let finish = json!({ "ceremony": "0123", "credential": { "id": "x" } });
    for origin in [
        Some("http://evil.localhost:1"),
        Some(shed.origin().as_str()),
        Some("null"),
        None,
    ] {
        for (path, body) in [
            ("/_shed/passkeys/add/start", json!({ "name": "laptop" })),
            ("/_shed/passkeys/add/finish", finish.clone()),
            ("/_shed/passkeys/sign-in/start", json!({})),
            ("/_shed/passkeys/sign-in/finish", finish.clone()),
        ] {
            let (status, said) = post(&shed, path, &body, cookie, origin).await;
            assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "{path} from {origin:?}: {said}"
            );
            let sentence = said["error"].as_str().unwrap_or_default();
            assert!(
                sentence.contains("taken only from shed's own pages")
                    && sentence.contains("nothing was kept"),
                "{sentence}"
            );
        }
    }
    // The remove form goes by the pages' rule.
    let removed = shed
        .http
        .post(format!("{}/account/passkeys/remove", shed.url()))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, &ada)
        .header(header::ORIGIN, "http://evil.localhost:1")
        .body("id=1")
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), StatusCode::FORBIDDEN);
    let (status, _, account) = shed
        .get(&format!("{}/account", shed.url()), Some(&ada))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(account.contains("No passkeys yet"), "{account}");
}

#[tokio::test]
async fn a_passkey_step_is_json_from_a_person_signed_in_on_the_web() {
    let shed = Shed::start().await;
    let own = shed.url();
    let ada = platform_cookie(&shed, "ada").await;
    let cookie = (header::COOKIE.as_str(), ada.as_str());

    // Not JSON: 415, as a form another site could send.
    let form = shed
        .http
        .post(format!("{own}/_shed/passkeys/add/start"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, &ada)
        .header(header::ORIGIN, &own)
        .body("name=laptop")
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    for (name, said) in [
        (json!(""), "a passkey needs a name"),
        (
            json!("x".repeat(61)),
            "at most 60 characters, and this one has 61",
        ),
    ] {
        let (status, answer) = post(
            &shed,
            "/_shed/passkeys/add/start",
            &json!({ "name": name }),
            cookie,
            Some(&own),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains(said), "{answer}");
    }
    let (status, started) = post(
        &shed,
        "/_shed/passkeys/add/start",
        &json!({ "name": "laptop" }),
        cookie,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(started["options"]["publicKey"]["rp"]["id"], "localhost");
    assert!(
        started["ceremony"]
            .as_str()
            .is_some_and(|id| id.len() == 32)
    );

    // A token is a program's: it adds no passkey.
    let bearer = format!("Bearer {}", shed.token("ada"));
    let (status, refused) = post(
        &shed,
        "/_shed/passkeys/add/start",
        &json!({ "name": "laptop" }),
        (header::AUTHORIZATION.as_str(), &bearer),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("a token or an agent cannot change them"),
        "{refused}"
    );

    // Signed out, a sign-in starts; a made-up ceremony is refused with its sentence.
    let nobody = (header::USER_AGENT.as_str(), "test");
    let (status, _) = post(
        &shed,
        "/_shed/passkeys/sign-in/start",
        &json!({}),
        nobody,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = post(
        &shed,
        "/_shed/passkeys/sign-in/finish",
        &json!({ "ceremony": "0123", "credential": { "id": "x" } }),
        nobody,
        Some(&own),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .starts_with("this passkey sign-in was finished already or is older than two minutes"),
        "{refused}"
    );
}

// Anyone may start a sign-in, and each start keeps a state: a bounded flood
// of starts from one address keeps no more than one address's cap, the
// rest refused with 429 and the sentence saying why.
#[tokio::test]
async fn a_flood_of_sign_in_starts_from_one_address_keeps_at_most_its_cap() {
    use shed_host::passkeys::MAX_LIVE_SIGN_INS_PER_ADDRESS;
    /// The starts sent, one after another.
    const FLOOD: usize = 200;
    let shed = Shed::start().await;
    let own = shed.url();
    let nobody = (header::USER_AGENT.as_str(), "test");
    let mut started = 0;
    let mut refusal = None;
    for _ in 0..FLOOD {
        let (status, said) = post(
            &shed,
            "/_shed/passkeys/sign-in/start",
            &json!({}),
            nobody,
            Some(&own),
        )
        .await;
        match status {
            StatusCode::OK => started += 1,
            StatusCode::TOO_MANY_REQUESTS => refusal = Some(said),
            other => panic!("{other}: {said}"),
        }
    }
    assert_eq!(started, MAX_LIVE_SIGN_INS_PER_ADDRESS);
    let refusal = refusal.expect("starts past the cap are refused");
    assert_eq!(
        refusal["error"].as_str().unwrap(),
        format!(
            "your address has {MAX_LIVE_SIGN_INS_PER_ADDRESS} passkey sign-ins started and not \
             finished, the most shed keeps for one address — finish one, or press Sign in with a \
             passkey again in two minutes"
        )
    );
    assert_eq!(
        rows(shed.data.path(), "passkey_ceremonies"),
        MAX_LIVE_SIGN_INS_PER_ADDRESS,
        "the states kept after {FLOOD} starts"
    );
}
