//! The person's pages' forms on the platform's host: the `Posted`
//! extractor's refusals (a form from another origin, a missing or garbled
//! cookie) and the sentences of a form that is not one or misses a field —
//! each refused before anything changes — and the `Visited` extractor's:
//! every page of the person, asked signed out, is the sign-in page.

use axum::http::StatusCode;

use crate::common::{PLATFORM, URL, form, get, world};

/// Where the home page's "Make a token" form posts.
const MAKE_TOKEN: &str = "/account/tokens";

#[tokio::test]
async fn a_form_from_another_origin_is_refused_with_its_sentence_and_changes_nothing() {
    let world = world().await;
    let session = world.signed_in("ada").await;
    let cookie = format!("shed_session={session}");
    for (origin, said) in [
        (Some("http://evil.example"), "a page of http://evil.example"),
        (
            Some("http://demo.localhost:7700"),
            "a page of http://demo.localhost:7700",
        ),
        (None, "a page that did not say where it is"),
    ] {
        let answer = world
            .ask(form(MAKE_TOKEN, Some(&cookie), origin, "name=laptop"))
            .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{origin:?}");
        assert!(
            answer.body.contains(&format!(
                "shed&#39;s pages take a form only from their own pages at {URL}, and this came \
                 from {said} — nothing was changed; open {URL}/ and use the form there"
            )),
            "{origin:?}: {}",
            answer.body
        );
        assert_eq!(world.tokens("ada").await, 0, "{origin:?} made a token");
    }
    let home = world.submit(MAKE_TOKEN, &cookie, "name=laptop").await;
    assert_eq!(home.status, StatusCode::OK, "{}", home.body);
    assert!(home.body.contains("Your token laptop"), "{}", home.body);
    assert_eq!(world.tokens("ada").await, 1);
}

#[tokio::test]
async fn a_missing_or_garbled_cookie_is_signed_out() {
    let world = world().await;
    let session = world.signed_in("ada").await;
    let signed_out = "Sign in to see your spaces, account and agents.";
    for cookie in [
        None,
        Some("shed_session=not-a-session"),
        Some("shed_session"),
        Some("shed_session=; =;;"),
        Some("shed_session=%ff%00\"\""),
        Some(&format!("other={session}")),
    ] {
        let page = world.ask(get(PLATFORM, "/account", cookie)).await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED, "{cookie:?}");
        assert!(page.body.contains(signed_out), "{cookie:?}: {}", page.body);
        let posted = world
            .ask(form(MAKE_TOKEN, cookie, Some(URL), "name=laptop"))
            .await;
        assert_eq!(posted.status, StatusCode::UNAUTHORIZED, "{cookie:?}");
        assert!(posted.body.contains(signed_out), "{cookie:?}");
    }
    assert_eq!(world.tokens("ada").await, 0);
    let cookie = format!("shed_session={session}");
    let page = world.ask(get(PLATFORM, "/account", Some(&cookie))).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("<h2>Tokens</h2>"), "{}", page.body);
}

#[tokio::test]
async fn a_form_that_is_not_one_or_misses_a_field_says_so_and_changes_nothing() {
    let world = world().await;
    let session = world.signed_in("ada").await;
    let cookie = format!("shed_session={session}");
    for body in ["", "name=", "name=%20%20", "other=laptop"] {
        let answer = world
            .ask(form(MAKE_TOKEN, Some(&cookie), Some(URL), body))
            .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{body:?}");
        assert!(
            answer
                .body
                .contains("the form is missing the token&#39;s name — fill it in"),
            "{body:?}: {}",
            answer.body
        );
    }
    let mut not_a_form = form(MAKE_TOKEN, Some(&cookie), Some(URL), "name=laptop");
    not_a_form.headers_mut().insert(
        "content-type",
        "text/plain".parse().expect("a header value"),
    );
    let answer = world.ask(not_a_form).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.body.contains("the form did not arrive as a form (")
            && answer.body.contains("— reload the page and send it again"),
        "{}",
        answer.body
    );
    assert_eq!(world.tokens("ada").await, 0);
}

#[tokio::test]
async fn every_page_of_the_person_asked_signed_out_is_the_sign_in_page() {
    let world = world().await;
    let session = world.signed_in("ada").await;
    world.host.add_space("demo", "ada").await.expect("demo");
    let signed_out = "Sign in to see your spaces, account and agents.";
    for path in [
        "/account",
        "/agents",
        "/spaces/demo",
        "/spaces/demo/apps/runs",
    ] {
        for cookie in [None, Some("shed_session=not-a-session")] {
            let page = world.ask(get(PLATFORM, path, cookie)).await;
            assert_eq!(page.status, StatusCode::UNAUTHORIZED, "{path} {cookie:?}");
            assert!(page.body.contains(signed_out), "{path}: {}", page.body);
        }
        let cookie = format!("shed_session={session}");
        let page = world.ask(get(PLATFORM, path, Some(&cookie))).await;
        assert_ne!(page.status, StatusCode::UNAUTHORIZED, "{path}");
        assert!(!page.body.contains(signed_out), "{path}: {}", page.body);
    }
}
