//! The Streamable HTTP door at `/mcp`: an axum router other doors' routes
//! can be merged into, refusing with 403 a request whose `Host` or `Origin`
//! is not the public URL's (or loopback, when serving on loopback) — a DNS
//! rebinding page cannot reach a local shed.

use std::{net::SocketAddr, sync::Arc};

use axum::Router;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use shed_host::Host;

use crate::door::{Door, ListedTools};

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Why the HTTP door could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HttpDoorError {
    /// The host's public URL is not an absolute http(s) URL.
    #[error(
        "the public URL {0} is not an http:// or https:// address such as http://localhost:7700"
    )]
    PublicUrl(String),
}

/// Which `Host` and `Origin` values the endpoint answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedCallers {
    /// `Host` header values: `host` or `host:port`.
    pub hosts: Vec<String>,
    /// `Origin` values: `scheme://host:port`.
    pub origins: Vec<String>,
}

impl AllowedCallers {
    /// The public URL's host and origin, and the loopback names at the
    /// listening port when `listen` is a loopback address.
    pub fn for_server(public_url: &str, listen: SocketAddr) -> Result<Self, HttpDoorError> {
        let bad = || HttpDoorError::PublicUrl(public_url.to_string());
        let uri: http::Uri = public_url.parse().map_err(|_| bad())?;
        let scheme = uri.scheme_str().ok_or_else(bad)?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(bad()),
        };
        let authority = uri.authority().ok_or_else(bad)?;
        let host = authority.host().to_ascii_lowercase();
        let port = authority.port_u16().unwrap_or(default_port);
        let mut hosts = vec![match authority.port_u16() {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        }];
        let mut origins = vec![format!("{scheme}://{host}:{port}")];
        if listen.ip().is_loopback() {
            let port = listen.port();
            for name in ["localhost", "127.0.0.1", "[::1]"] {
                let host = format!("{name}:{port}");
                if !hosts.contains(&host) {
                    hosts.push(host);
                }
                let origin = format!("http://{name}:{port}");
                if !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
        }
        Ok(AllowedCallers { hosts, origins })
    }
}

/// The router serving the MCP door at [`MCP_PATH`] for a server listening on `listen`.
pub fn router(host: Host, listen: SocketAddr) -> Result<Router, HttpDoorError> {
    let allowed = AllowedCallers::for_server(host.public_url(), listen)?;
    tracing::debug!(?allowed, "the MCP door answers these hosts and origins");
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed.hosts)
        .with_allowed_origins(allowed.origins)
        .enforce_origin_validation()
        .with_json_response(true);
    let listed = ListedTools::default();
    let service = StreamableHttpService::new(
        move || Ok(Door::over_http(host.clone(), listed.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Ok(Router::new().route_service(MCP_PATH, service))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_serving_answers_its_public_url_and_the_loopback_names() {
        let allowed =
            AllowedCallers::for_server("http://localhost:7700", "127.0.0.1:7700".parse().unwrap())
                .unwrap();
        assert_eq!(
            allowed.hosts,
            ["localhost:7700", "127.0.0.1:7700", "[::1]:7700"]
        );
        assert_eq!(
            allowed.origins,
            [
                "http://localhost:7700",
                "http://127.0.0.1:7700",
                "http://[::1]:7700"
            ]
        );
    }

    #[test]
    fn a_public_server_answers_only_its_public_url() {
        let allowed =
            AllowedCallers::for_server("https://shed.example.org", "0.0.0.0:7700".parse().unwrap())
                .unwrap();
        assert_eq!(allowed.hosts, ["shed.example.org"]);
        assert_eq!(allowed.origins, ["https://shed.example.org:443"]);
    }

    #[test]
    fn a_public_url_without_a_scheme_is_a_sentence() {
        let error = AllowedCallers::for_server("localhost:7700", "127.0.0.1:7700".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the public URL localhost:7700 is not an http:// or https:// address such as http://localhost:7700"
        );
    }
}
