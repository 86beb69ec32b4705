//! What an operator watches a running shed by, both off by default:
//!
//! - Prometheus metrics on their own listener (`--metrics-listen`, loopback
//!   unless told otherwise, never the public address): every door's requests
//!   and their time (`shed_requests_total`, `shed_request_duration_seconds`,
//!   by `door`), and the series the libraries record — the MCP door's by
//!   method and tool, command calls by app and outcome, the store's write
//!   groups, commit time and WAL pages, open MCP sessions, the broker's
//!   queue depth and job outcomes.
//! - OpenTelemetry traces over OTLP/HTTP in JSON (`--otlp-endpoint`): a span
//!   per request (`request`, with its door, method and status — never its
//!   path, which may hold a view key, nor a header), per MCP call, per
//!   command run and per store write, with the app and command as attributes
//!   and never an argument's value.

use std::net::SocketAddr;
use std::time::Instant;

use anyhow::Context;
use std::future::Future;

use axum::extract::Request;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::{Resource, trace::SdkTracerProvider};
use tracing::Instrument;

/// Where `--metrics-listen` with no address listens: Prometheus exporters'
/// customary port, on loopback.
pub const DEFAULT_METRICS_LISTEN: &str = "127.0.0.1:9464";

/// The most scrapes served at once: a scraper or two, and someone's curl.
/// Taken from the files `shed::http` keeps in reserve, not from the public
/// server's connections.
const METRICS_CONNECTIONS: u64 = 4;

/// The path the metrics listener answers at (and the public one does not).
pub const METRICS_PATH: &str = "/metrics";

/// The path OTLP/HTTP receivers take traces at, appended to `--otlp-endpoint`.
const OTLP_TRACES_PATH: &str = "/v1/traces";

/// Every door's requests, and their time, by `door`.
const REQUESTS: &str = "shed_requests_total";
const REQUEST_SECONDS: &str = "shed_request_duration_seconds";

/// Histogram buckets of times in seconds: from half a millisecond to 10 s.
const SECONDS_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Histogram buckets of a write group's size, up to the writer's largest.
const GROUP_SIZE_BUCKETS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

/// The operator's flags of `shed up` and `shed serve`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TelemetryArgs {
    /// Serve Prometheus metrics at /metrics on this address — its own
    /// listener, never the public one. Alone, the flag means
    /// 127.0.0.1:9464. Off when not given.
    #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = DEFAULT_METRICS_LISTEN)]
    pub metrics_listen: Option<SocketAddr>,
    /// Export traces over OTLP/HTTP (JSON) to this collector, e.g.
    /// http://localhost:4318 (shed posts to <URL>/v1/traces). Off when not given.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// The metrics listener, running until dropped.
pub struct MetricsServer {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Installs the process's metrics recorder and serves what it holds at
/// [`METRICS_PATH`] on `listen`. Refused when `listen` is the public
/// address: metrics are for the operator, not for the people shed serves.
pub async fn serve_metrics(
    listen: SocketAddr,
    public: SocketAddr,
) -> anyhow::Result<MetricsServer> {
    if listen == public
        || (listen.port() == public.port()
            && (listen.ip().is_unspecified() || public.ip().is_unspecified()))
    {
        anyhow::bail!(
            "--metrics-listen {listen} is the address shed serves people on — give metrics an address of their own, such as {DEFAULT_METRICS_LISTEN}"
        );
    }
    let handle = recorder()?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| {
            format!(
                "could not listen for metrics on {listen} — pass --metrics-listen with a free port"
            )
        })?;
    let address = listener
        .local_addr()
        .context("could not read the metrics listener's address")?;
    if !address.ip().is_loopback() {
        tracing::warn!(%address, "metrics are served beyond this machine — keep the address behind a firewall");
    }
    tracing::info!("shed's metrics are at http://{address}{METRICS_PATH}");
    let routes = axum::Router::new().route(
        METRICS_PATH,
        axum::routing::get(move || std::future::ready(handle.render())),
    );
    let task = tokio::spawn(async move {
        let served = crate::http::serve_at_most(
            listener,
            routes,
            crate::forwarded::TrustedProxies::default(),
            METRICS_CONNECTIONS,
            crate::http::Stop::never(),
            std::time::Duration::ZERO,
        );
        if let Err(error) = served.await {
            tracing::error!(error = %format!("{error:#}"), "the metrics listener stopped");
        }
    });
    Ok(MetricsServer { task })
}

/// The Prometheus recorder, installed for the whole process.
fn recorder() -> anyhow::Result<PrometheusHandle> {
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &SECONDS_BUCKETS)
        .and_then(|builder| {
            builder.set_buckets_for_metric(
                Matcher::Full("shed_store_write_group_size".into()),
                &GROUP_SIZE_BUCKETS,
            )
        })
        .context("could not set the metrics' buckets")?
        .install_recorder()
        .context("could not install the metrics recorder")
}

/// Every request of the public server, counted and timed by door inside a
/// `request` span: a plain tower service, not axum's `from_fn`, which cost
/// ≈8–15 µs of server CPU a call in the MCP door's bench (see its README);
/// this costs nothing the bench can tell from its noise.
#[derive(Clone)]
pub struct Measured<S>(pub S);

impl<S> tower::Service<Request> for Measured<S>
where
    S: tower::Service<Request, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.0.poll_ready(context)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let door = if request.uri().path() == shed_mcp::MCP_PATH {
            "mcp"
        } else {
            "web"
        };
        let span = tracing::debug_span!(
            "request",
            door,
            method = %request.method(),
            status = tracing::field::Empty
        );
        let started = Instant::now();
        let answering = self.0.call(request).instrument(span.clone());
        Box::pin(async move {
            let answered = answering.await;
            if let Ok(response) = &answered {
                span.record("status", response.status().as_u16());
            }
            metrics::counter!(REQUESTS, "door" => door).increment(1);
            metrics::histogram!(REQUEST_SECONDS, "door" => door).record(started.elapsed());
            answered
        })
    }
}

/// The trace exporter, when `--otlp-endpoint` names a collector: its
/// provider (shut down at exit, which sends what is left) and the layer that
/// turns `tracing`'s spans into OpenTelemetry's. Built before the async
/// runtime starts: the exporter's HTTP client is a blocking one, driven by
/// the exporter's own thread.
pub fn otlp(
    endpoint: &str,
) -> anyhow::Result<(SdkTracerProvider, opentelemetry_sdk::trace::Tracer)> {
    let url = traces_url(endpoint)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(url)
        .build()
        .with_context(|| {
            format!("could not make the trace exporter for --otlp-endpoint {endpoint}")
        })?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("shed").build())
        .build();
    let tracer = provider.tracer("shed");
    Ok((provider, tracer))
}

/// `<endpoint>/v1/traces`, as OTLP/HTTP's base-URL convention has it (kept
/// as given when it already ends so).
fn traces_url(endpoint: &str) -> anyhow::Result<String> {
    let trimmed = endpoint.trim().trim_end_matches('/');
    if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
        anyhow::bail!(
            "--otlp-endpoint {endpoint} is not an http:// or https:// address — give the collector's OTLP/HTTP address, such as http://localhost:4318"
        );
    }
    Ok(if trimmed.ends_with(OTLP_TRACES_PATH) {
        trimmed.to_string()
    } else {
        format!("{trimmed}{OTLP_TRACES_PATH}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_appended_once_and_a_bad_scheme_is_a_sentence() {
        assert_eq!(
            traces_url("http://localhost:4318").unwrap(),
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://localhost:4318/").unwrap(),
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(
            traces_url("https://otel.example.org/v1/traces").unwrap(),
            "https://otel.example.org/v1/traces"
        );
        let refused = traces_url("localhost:4318").unwrap_err().to_string();
        assert!(
            refused.starts_with(
                "--otlp-endpoint localhost:4318 is not an http:// or https:// address"
            )
        );
    }
}
