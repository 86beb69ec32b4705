//! The client's address behind a reverse proxy. Served behind a
//! TLS-terminating proxy, every connection comes from the proxy, which names
//! the client in the one forwarding header it maintains: `X-Forwarded-For`
//! (nginx's `$proxy_add_x_forwarded_for`, Caddy) or `Forwarded` (RFC 7239,
//! its `for=`) — the operator says which (`--trusted-proxy-header`,
//! [`ProxyHeader`]). Only that header is read, the other ignored whole: a
//! proxy that appends to one passes a client's own other header on
//! untouched, so reading it would let any client name the address it is
//! counted as. The header is believed only when the TCP peer is a proxy
//! named by `--trusted-proxy`, never otherwise: anyone else could write it.
//!
//! The client is the right-most address of the chain that is not itself a
//! trusted proxy: each proxy appends the address it was reached from, so
//! what stands left of that was said by the client and may be made up — it
//! is never read. A chain of trusted proxies only gives its left-most
//! address. A hop that must be read and cannot be — an element with no
//! `for=` or two, `unknown`, an obfuscated name, anything not an address —
//! gives the peer: the proxy's own address, which counts all its clients as
//! one, never an address a client chose; so does a `Forwarded` line whose
//! quotes do not close.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use axum::http::{HeaderMap, header};
use ipnet::IpNet;

/// The `X-Forwarded-For` header (not in `http`'s list of standard names).
const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The forwarding header the trusted proxies maintain: the only one read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ProxyHeader {
    /// `X-Forwarded-For`, which Caddy, and nginx with `proxy_set_header
    /// X-Forwarded-For $proxy_add_x_forwarded_for;`, append the client to.
    #[default]
    #[value(name = "x-forwarded-for")]
    XForwardedFor,
    /// `Forwarded` (RFC 7239), only for a proxy that appends its `for=` to
    /// it.
    #[value(name = "forwarded")]
    Forwarded,
}

impl ProxyHeader {
    fn name(self) -> &'static str {
        match self {
            ProxyHeader::XForwardedFor => X_FORWARDED_FOR,
            ProxyHeader::Forwarded => header::FORWARDED.as_str(),
        }
    }

    /// The hops of every line of this header, the first hop first, each as
    /// written; `None` when a line cannot be cut into hops.
    fn hops(self, headers: &HeaderMap) -> Option<Vec<String>> {
        let mut hops = Vec::new();
        for value in headers.get_all(self.name()) {
            let value = String::from_utf8_lossy(value.as_bytes());
            let separated = match self {
                ProxyHeader::XForwardedFor => value.split(',').collect(),
                ProxyHeader::Forwarded => split_outside_quotes(&value, ',')?,
            };
            hops.extend(
                separated
                    .into_iter()
                    .map(str::trim)
                    .filter(|hop| !hop.is_empty())
                    .map(str::to_string),
            );
        }
        Some(hops)
    }

    /// The address one hop names; `None` when it names none.
    fn address(self, hop: &str) -> Option<SocketAddr> {
        match self {
            ProxyHeader::XForwardedFor => x_forwarded_for(hop),
            ProxyHeader::Forwarded => forwarded(hop),
        }
    }
}

/// The proxies whose forwarding header is believed — none by default — and
/// which header that is.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies {
    proxies: Vec<IpNet>,
    header: ProxyHeader,
}

impl TrustedProxies {
    /// Believes `header` from the proxies at these addresses and blocks.
    pub fn new(proxies: Vec<IpNet>, header: ProxyHeader) -> TrustedProxies {
        TrustedProxies { proxies, header }
    }

    /// The client of a request `peer` sent with `headers`: the address the
    /// forwarding header names when `peer` is a trusted proxy, else `peer`.
    /// The hops are read from the right, up to the first that is not a
    /// trusted proxy; those left of it are never read.
    pub fn client(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.trusts(peer.ip()) {
            return peer;
        }
        let Some(hops) = self.header.hops(headers) else {
            return peer;
        };
        let mut left_most = peer;
        for hop in hops.iter().rev() {
            let Some(address) = self.header.address(hop) else {
                return peer;
            };
            if !self.trusts(address.ip()) {
                return address;
            }
            left_most = address;
        }
        left_most
    }

    /// What is believed, said once as the server starts: `None` when no
    /// proxy is trusted.
    pub fn believed(&self) -> Option<String> {
        let (read, ignored) = match self.header {
            ProxyHeader::XForwardedFor => ("X-Forwarded-For", "Forwarded"),
            ProxyHeader::Forwarded => ("Forwarded", "X-Forwarded-For"),
        };
        let proxies: Vec<String> = self.proxies.iter().map(IpNet::to_string).collect();
        (!proxies.is_empty()).then(|| {
            format!(
                "behind the trusted proxies {}, a client is the right-most address of {read} that is not one of them ({ignored} is ignored)",
                proxies.join(", ")
            )
        })
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.proxies.iter().any(|proxy| proxy.contains(&address))
    }
}

/// A `--trusted-proxy` value: an address (`127.0.0.1`, `::1`) or a CIDR
/// block (`10.0.0.0/8`, `fd00::/8`).
pub fn trusted_proxy(given: &str) -> Result<IpNet, String> {
    let given = given.trim();
    IpAddr::from_str(given)
        .map(IpNet::from)
        .or_else(|_| IpNet::from_str(given))
        .map_err(|_| {
            format!(
                "{given} is not an address nor a CIDR block — name the proxy as 127.0.0.1, ::1 or 10.0.0.0/8"
            )
        })
}

/// The `for=` of one element of a `Forwarded` value (RFC 7239 §4): `None`
/// when it has none, or two, or one that is no address.
fn forwarded(element: &str) -> Option<SocketAddr> {
    let mut node = None;
    for pair in split_outside_quotes(element, ';')? {
        let (name, value) = pair.split_once('=')?;
        if name.trim().eq_ignore_ascii_case("for") {
            if node.is_some() {
                return None;
            }
            node = Some(node_address(&unquoted(value.trim())?)?);
        }
    }
    node
}

/// The address of one hop of an `X-Forwarded-For` value: bare, or with a
/// port.
fn x_forwarded_for(hop: &str) -> Option<SocketAddr> {
    let bracketed = hop.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    IpAddr::from_str(bracketed.unwrap_or(hop))
        .map(|ip| SocketAddr::new(ip, 0))
        .or_else(|_| SocketAddr::from_str(hop))
        .ok()
        .map(canonical)
}

/// A `for=` node: an IPv4 address or a bracketed IPv6 one, with an optional
/// port (an obfuscated port counts as none); `unknown` and obfuscated names
/// are no address.
fn node_address(node: &str) -> Option<SocketAddr> {
    let (ip, port) = match node.strip_prefix('[') {
        Some(rest) => {
            let (ip, after) = rest.split_once(']')?;
            let ip = std::net::Ipv6Addr::from_str(ip).ok()?;
            let port = match after {
                "" => None,
                after => Some(after.strip_prefix(':')?),
            };
            (IpAddr::V6(ip), port)
        }
        None => {
            let (ip, port) = match node.split_once(':') {
                Some((ip, port)) => (ip, Some(port)),
                None => (node, None),
            };
            (IpAddr::V4(std::net::Ipv4Addr::from_str(ip).ok()?), port)
        }
    };
    let port = match port {
        None => 0,
        Some(obfuscated) if obfuscated.starts_with('_') => 0,
        Some(port) if port.bytes().all(|b| b.is_ascii_digit()) => port.parse().ok()?,
        Some(_) => return None,
    };
    Some(canonical(SocketAddr::new(ip, port)))
}

/// An IPv4 client seen through an IPv6 socket as the IPv4 address it is.
fn canonical(address: SocketAddr) -> SocketAddr {
    SocketAddr::new(address.ip().to_canonical(), address.port())
}

/// `text` cut at each `separator` outside a quoted string; `None` when a
/// quoted string is not closed.
fn split_outside_quotes(text: &str, separator: char) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => {
                parts.push(&text[start..at]);
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    if quoted {
        return None;
    }
    parts.push(&text[start..]);
    Some(parts)
}

/// A token as it is, or a quoted string's text with its escapes undone;
/// `None` for a quoted string with anything after its closing quote.
fn unquoted(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        return (!value.contains('"')).then(|| value.to_string());
    };
    let mut text = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?),
            '"' => return chars.next().is_none().then_some(text),
            c => text.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderName, HeaderValue};
    use proptest::prelude::*;

    const PEER: &str = "127.0.0.1:50000";

    fn proxies(named: &[&str], header: ProxyHeader) -> TrustedProxies {
        let named = named.iter().map(|n| trusted_proxy(n).unwrap()).collect();
        TrustedProxies::new(named, header)
    }

    /// The client `peer` is taken for with `headers` when `trusted` maintain `header`.
    fn client_by(
        header: ProxyHeader,
        trusted: &[&str],
        peer: &str,
        headers: &[(&str, &[u8])],
    ) -> String {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        proxies(trusted, header)
            .client(peer.parse().unwrap(), &map)
            .to_string()
    }

    /// As [`client_by`], reading the header read by default.
    fn client_of(trusted: &[&str], peer: &str, headers: &[(&str, &str)]) -> String {
        let headers: Vec<_> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
        client_by(ProxyHeader::default(), trusted, peer, &headers)
    }

    /// As [`client_by`], reading `Forwarded`.
    fn forwarded_client(trusted: &[&str], headers: &[(&str, &str)]) -> String {
        let headers: Vec<_> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
        client_by(ProxyHeader::Forwarded, trusted, PEER, &headers)
    }

    #[test]
    fn without_a_trusted_proxy_the_headers_are_ignored() {
        let headers = [
            ("x-forwarded-for", "203.0.113.7"),
            ("forwarded", "for=203.0.113.8"),
        ];
        assert_eq!(client_of(&[], PEER, &headers), PEER);
        assert_eq!(client_of(&["10.0.0.0/8"], PEER, &headers), PEER);
        assert_eq!(forwarded_client(&[], &headers), PEER);
    }

    #[test]
    fn a_trusted_proxy_names_the_right_most_untrusted_address() {
        let trusted = ["127.0.0.1", "10.0.0.0/8"];
        let xff = |value| client_of(&trusted, PEER, &[("x-forwarded-for", value)]);
        assert_eq!(xff("203.0.113.7"), "203.0.113.7:0");
        assert_eq!(xff("198.51.100.1, 203.0.113.7, 10.1.2.3"), "203.0.113.7:0");
        assert_eq!(xff("2001:db8::1"), "[2001:db8::1]:0");
        assert_eq!(xff("[2001:db8::1]:4711"), "[2001:db8::1]:4711");
        assert_eq!(xff("::ffff:203.0.113.7"), "203.0.113.7:0");
        assert_eq!(xff("10.0.0.1, 10.0.0.2"), "10.0.0.1:0");
        let fwd = |value| forwarded_client(&trusted, &[("forwarded", value)]);
        assert_eq!(
            fwd("for=192.0.2.60;proto=http;by=203.0.113.43"),
            "192.0.2.60:0"
        );
        assert_eq!(
            fwd("For=\"[2001:db8:cafe::17]:4711\""),
            "[2001:db8:cafe::17]:4711"
        );
        assert_eq!(fwd("for=192.0.2.43, for=198.51.100.17"), "198.51.100.17:0");
        assert_eq!(fwd("for=192.0.2.43, for=\"10.0.0.9:80\""), "192.0.2.43:0");
        assert_eq!(fwd("for=\"192.0.2.43:_hidden\""), "192.0.2.43:0");
        // Several lines are one list.
        for (name, first, second, read) in [
            (
                "forwarded",
                "for=192.0.2.60",
                "for=192.0.2.61",
                ProxyHeader::Forwarded,
            ),
            (
                "x-forwarded-for",
                "192.0.2.60",
                "192.0.2.61",
                ProxyHeader::XForwardedFor,
            ),
        ] {
            let lines = [(name, first.as_bytes()), (name, second.as_bytes())];
            assert_eq!(client_by(read, &trusted, PEER, &lines), "192.0.2.61:0");
        }
        // An IPv4 peer seen through an IPv6 socket is still the proxy.
        let mapped = client_of(
            &trusted,
            "[::ffff:127.0.0.1]:1",
            &[("x-forwarded-for", "192.0.2.1")],
        );
        assert_eq!(mapped, "192.0.2.1:0");
    }

    // A proxy that appends to one header passes a client's own other one on
    // untouched: only the header the operator named is ever read.
    #[test]
    fn only_the_header_the_proxy_maintains_is_read() {
        let trusted = ["127.0.0.1"];
        let both = [
            ("forwarded", "for=198.51.100.1"),
            ("x-forwarded-for", "203.0.113.7"),
        ];
        assert_eq!(client_of(&trusted, PEER, &both), "203.0.113.7:0");
        assert_eq!(forwarded_client(&trusted, &both), "198.51.100.1:0");
        // The other header alone names nobody: the request is the proxy's.
        assert_eq!(client_of(&trusted, PEER, &both[..1]), PEER);
        assert_eq!(forwarded_client(&trusted, &both[1..]), PEER);
        assert_eq!(ProxyHeader::default(), ProxyHeader::XForwardedFor);
    }

    // What a client wrote left of the hop its proxy appended is never read:
    // not even to be refused, so no client makes itself the proxy with it.
    #[test]
    fn what_stands_left_of_the_client_is_never_read() {
        let trusted = ["127.0.0.1"];
        for made_up in ["evil", "unknown", "for=", "\"", "203.0.113.9:x"] {
            let appended = format!("{made_up}, 192.0.2.7");
            assert_eq!(
                client_of(&trusted, PEER, &[("x-forwarded-for", &appended)]),
                "192.0.2.7:0",
                "{appended}"
            );
        }
        let not_text = [("x-forwarded-for", &b"\xff\xfe, 192.0.2.7"[..])];
        assert_eq!(
            client_by(ProxyHeader::XForwardedFor, &trusted, PEER, &not_text),
            "192.0.2.7:0"
        );
        for made_up in ["for=unknown", "proto=https", "for=_hidden;for=x"] {
            let appended = format!("{made_up}, for=192.0.2.7");
            assert_eq!(
                forwarded_client(&trusted, &[("forwarded", &appended)]),
                "192.0.2.7:0",
                "{appended}"
            );
        }
    }

    #[test]
    fn a_hop_that_cannot_be_read_gives_the_peer() {
        let trusted = ["127.0.0.1"];
        for value in [
            "for=unknown",
            "for=_hidden",
            "proto=https",
            "for=192.0.2.1;for=192.0.2.2",
            "for=\"[2001:db8::1]",
            "for=2001:db8::1",
            "for=\"192.0.2.1\"x",
            "for=192.0.2.1:http",
            "for",
            "for=\"203.0.113.7, for=192.0.2.7",
            "for=192.0.2.7, for=unknown",
        ] {
            assert_eq!(
                forwarded_client(&trusted, &[("forwarded", value)]),
                PEER,
                "forwarded: {value}"
            );
        }
        for value in ["203.0.113.7, evil", "localhost", "", " , "] {
            assert_eq!(
                client_of(&trusted, PEER, &[("x-forwarded-for", value)]),
                PEER,
                "x-forwarded-for: {value}"
            );
        }
    }

    #[test]
    fn a_trusted_proxy_is_an_address_or_a_block() {
        assert_eq!(
            trusted_proxy("127.0.0.1").unwrap().to_string(),
            "127.0.0.1/32"
        );
        assert_eq!(trusted_proxy("fd00::/8").unwrap().to_string(), "fd00::/8");
        assert_eq!(
            trusted_proxy("proxy.local").unwrap_err(),
            "proxy.local is not an address nor a CIDR block — name the proxy as 127.0.0.1, ::1 or 10.0.0.0/8"
        );
    }

    proptest! {
        #[test]
        fn any_header_is_read_without_panic_and_only_from_a_trusted_proxy(
            value in proptest::collection::vec(any::<u8>().prop_filter("a header value", |b| *b >= 0x20 && *b != 0x7f), 0..80),
            xff in any::<bool>(),
            read_forwarded in any::<bool>(),
        ) {
            let name = if xff { "x-forwarded-for" } else { "forwarded" };
            let read = if read_forwarded { ProxyHeader::Forwarded } else { ProxyHeader::XForwardedFor };
            let _ = client_by(read, &["127.0.0.1"], PEER, &[(name, &value)]);
            prop_assert_eq!(client_by(read, &[], PEER, &[(name, &value)]), PEER);
        }

        // Whatever a client sends, behind a proxy that appends its address
        // to the header shed reads, shed counts the client's own address.
        #[test]
        fn behind_an_appending_proxy_the_client_is_who_it_is(
            own_xff in proptest::option::of("[ -~]{0,60}"),
            own_forwarded in proptest::option::of("[ -~]{0,60}"),
            client in any::<[u8; 4]>().prop_filter("not the proxy", |a| a[0] != 127),
        ) {
            let client = IpAddr::from(client);
            let mut headers = Vec::new();
            if let Some(forwarded) = &own_forwarded {
                headers.push(("forwarded", forwarded.clone()));
            }
            // nginx's $proxy_add_x_forwarded_for: the client's own, then its address.
            let appended = match &own_xff {
                Some(own) => format!("{own}, {client}"),
                None => client.to_string(),
            };
            headers.push(("x-forwarded-for", appended));
            let headers: Vec<_> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
            prop_assert_eq!(
                client_by(ProxyHeader::XForwardedFor, &["127.0.0.1"], PEER, &headers),
                SocketAddr::new(client, 0).to_string()
            );
        }

        #[test]
        fn forwarded_looking_headers_never_panic(value in "((for|by|proto)=(\"?[0-9a-f:.\\[\\]_]{0,20}\"?)[;,] ?){0,6}") {
            let _ = forwarded_client(&["127.0.0.1"], &[("forwarded", &value)]);
        }
    }
}
