//! The address a request came from, as an extractor: the server puts the
//! client's address on every request (`ConnectInfo`, the forwarded one
//! behind a trusted proxy); the doors pass it to shed-host, which caps what
//! one address may ask. `None` where no server said (a test's router).

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

/// The client's address, where the server knows it.
pub(crate) struct ClientAddress(pub(crate) Option<IpAddr>);

impl ClientAddress {
    /// The address on a request's parts.
    pub(crate) fn of(parts: &Parts) -> ClientAddress {
        ClientAddress(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(peer)| peer.ip()),
        )
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientAddress::of(parts))
    }
}
