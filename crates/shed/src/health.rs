//! `/healthz` and `/readyz` on the platform's host, for a load balancer or
//! an orchestrator: `/healthz` answers whenever the process serves HTTP;
//! `/readyz` answers only when the database is in place, answers a read and
//! has every migration applied, else 503 with the sentence saying what is
//! wrong. Both are plain text and never cached.

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use shed_host::Host;

/// Answers while the process serves.
pub const HEALTH_PATH: &str = "/healthz";

/// Answers while the database can serve.
pub const READY_PATH: &str = "/readyz";

/// The two routes, for the platform's host.
pub fn routes(host: Host) -> Router {
    Router::new()
        .route(HEALTH_PATH, get(|| async { text(StatusCode::OK, "ok") }))
        .route(READY_PATH, get(ready))
        .with_state(host)
}

async fn ready(State(host): State<Host>) -> Response {
    match host.ready().await {
        Ok(()) => text(StatusCode::OK, "ready"),
        Err(why) => text(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("not ready: {why}"),
        ),
    }
}

/// A plain-text answer of one line, never cached.
fn text(status: StatusCode, line: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        format!("{line}\n"),
    )
        .into_response()
}
