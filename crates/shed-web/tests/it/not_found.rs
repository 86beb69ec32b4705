//! Addresses that lead nowhere, answered with pages of the product's look
//! (its header, a sentence starting with a capital, commands as code, a
//! link home): an address the platform's host does not have — never an
//! empty 404 — and a sign-in link used, expired or never made.

use axum::http::StatusCode;

use crate::common::{PLATFORM, get, world};

#[tokio::test]
async fn an_unknown_platform_address_is_shed_s_not_found_page() {
    let world = world().await;
    let session = format!("shed_session={}", world.signed_in("ada").await);
    for cookie in [None, Some(session.as_str())] {
        for path in ["/nope", "/spaces/demo/apps/runs/nope/deeper", "/%3Cb%3E"] {
            let answer = world.ask(get(PLATFORM, path, cookie)).await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
            assert!(
                answer.body.contains("shed has no page at <code>")
                    && answer.body.contains("<a href=\"/\">Home</a>"),
                "{path}: {}",
                answer.body
            );
            assert!(!answer.body.contains("<b>"), "{path}: escaped");
        }
    }
}

#[tokio::test]
async fn a_spent_sign_in_link_is_a_page_with_the_header_the_command_and_a_way_home() {
    let world = world().await;
    let answer = world
        .ask(get(PLATFORM, "/_shed/login?key=never-made", None))
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    for said in [
        "<header><a class=\"brand\" href=\"/\">shed</a></header>",
        "<p>This sign-in link was used already, is older than ten minutes, or was never made",
        "<code>shed login &lt;handle&gt;</code>",
        "<a href=\"/\">shed's front page</a>",
    ] {
        assert!(answer.body.contains(said), "{said}: {}", answer.body);
    }
}
