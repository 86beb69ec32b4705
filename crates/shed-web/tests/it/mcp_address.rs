//! The MCP address on the platform's host: a browser asking for a page
//! there gets one saying what the address is for; an MCP client's requests
//! (a stream, a session, a POST) pass on to the MCP door (none here, so
//! not found).

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::common::{PLATFORM, URL, world};

/// A request of the MCP address with these `Accept` and extra headers.
fn to_mcp(method: &str, accept: &str, session: Option<&str>) -> Request<Body> {
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", PLATFORM)
        .header("accept", accept);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(Body::empty()).expect("a request")
}

#[tokio::test]
async fn a_browser_at_the_mcp_address_gets_a_page_and_a_client_the_mcp_door() {
    let world = world().await;
    let page = world.ask(to_mcp("GET", "text/html", None)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains(&format!("<code id=\"mcp-url\">{URL}/mcp</code>")),
        "{}",
        page.body
    );
    for (method, accept, session) in [
        ("GET", "text/html, text/event-stream", None),
        ("GET", "text/html", Some("a-session")),
        ("POST", "text/html", None),
    ] {
        let answer = world.ask(to_mcp(method, accept, session)).await;
        assert_eq!(
            answer.status,
            StatusCode::NOT_FOUND,
            "{method} {accept} {session:?}: {}",
            answer.body
        );
    }
}
