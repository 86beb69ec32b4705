//! An address the platform's host does not have: shed's own not-found page,
//! naming the address and linking home — signed in or not — never an empty
//! 404.

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
