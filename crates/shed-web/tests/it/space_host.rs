//! A space's host, `<space>.localhost:7700`: a space nobody made answers as
//! one the asker may read nothing of, a path that could step out of its app
//! is not here, and the page api's bundle is held to its bound.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Request, StatusCode, request};
use shed_host::Access;

use crate::common::{World, get, world};

/// The space `demo`'s host, as a browser sends it in `Host`.
const DEMO: &str = "demo.localhost:7700";

/// `request` to `demo`'s host with `body`, `token` its bearer.
fn bearing(request: request::Builder, token: &str, body: Body) -> Request<Body> {
    request
        .header("host", DEMO)
        .header("authorization", format!("Bearer {token}"))
        .body(body)
        .expect("a request")
}

/// A world with `ada`'s space `demo` and its private app `demo/runs`:
/// ada's bearer token.
async fn demo(world: &World) -> String {
    let host = &world.host;
    host.add_person("ada", Some("Ada")).await.expect("ada");
    host.add_space("demo", "ada").await.expect("demo");
    let ada = host.caller_for_handle("ada").await.expect("ada");
    let files = BTreeMap::from([("index.html".to_string(), b"<p>runs</p>".to_vec())]);
    host.deploy_folder(
        &ada,
        "demo/runs",
        files,
        Some("Runs".into()),
        Some(Access::Private),
    )
    .await
    .expect("demo/runs deploys");
    host.create_token("ada", Default::default())
        .await
        .expect("ada's token")
}

#[tokio::test]
async fn a_space_nobody_made_answers_as_one_the_asker_may_read_nothing_of() {
    let world = world().await;
    demo(&world).await;
    let ghost = world.ask(get("ghost.localhost:7700", "/", None)).await;
    assert_eq!(ghost.status, StatusCode::NOT_FOUND);
    assert!(
        ghost.body.contains("This is the space ghost."),
        "{}",
        ghost.body
    );
    let private = world.ask(get(DEMO, "/", None)).await;
    assert_eq!(private.status, StatusCode::NOT_FOUND);
    assert_eq!(
        private.body.replace("demo", "ghost"),
        ghost.body,
        "a space with only a private app tells a stranger more than one nobody made"
    );
}

#[tokio::test]
async fn a_path_that_could_step_out_of_its_app_is_not_here() {
    let world = world().await;
    let token = demo(&world).await;
    for path in [
        "/runs/%2e%2e/secret",
        "/runs/a%2Fb",
        "/runs/a%5Cb",
        "/runs/./index.html",
        "/runs/%ff",
        "/%2e%2e/runs/index.html",
    ] {
        let answer = world
            .ask(bearing(Request::get(path), &token, Body::empty()))
            .await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert!(
            answer.body.contains(
                "No file of an app has this address — a path may not step out of its app."
            ),
            "{path}: {}",
            answer.body
        );
    }
    let index = bearing(Request::get("/runs/index.html"), &token, Body::empty());
    let answer = world.ask(index).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.body.contains("<p>runs</p>"), "{}", answer.body);
}

#[tokio::test]
async fn a_bundle_over_its_bound_is_refused_unread() {
    let world = world().await;
    let token = demo(&world).await;
    let apply = |bytes: usize| {
        let post = Request::post("/runs/api/apply").header("content-type", "application/json");
        bearing(post, &token, Body::from(vec![b' '; bytes]))
    };
    let over = world.ask(apply(1024 * 1024 + 1)).await;
    assert_eq!(over.status, StatusCode::PAYLOAD_TOO_LARGE);
    let said: serde_json::Value = serde_json::from_str(&over.body).expect("JSON");
    assert_eq!(
        said["error"],
        "the bundle is larger than 1 MiB — send fewer entities at a time"
    );
    let at_bound = world.ask(apply(1024 * 1024)).await;
    assert_eq!(
        at_bound.status,
        StatusCode::BAD_REQUEST,
        "{}",
        at_bound.body
    );
    assert!(
        at_bound
            .body
            .contains("the body of ./api/apply is not JSON"),
        "{}",
        at_bound.body
    );
}
