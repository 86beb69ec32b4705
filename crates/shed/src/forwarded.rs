//! The client's address behind a reverse proxy. Served behind a
//! TLS-terminating proxy, every connection comes from the proxy, which names
//! the client in `Forwarded` (RFC 7239, its `for=`) or `X-Forwarded-For`.
//! Those headers are believed only when the TCP peer is a proxy named by
//! `--trusted-proxy`, never otherwise: anyone else could write them.
//!
//! The client is the right-most address of the chain that is not itself a
//! trusted proxy: each proxy appends the address it was reached from, so
//! what stands left of that was said by the client and may be made up. A
//! chain of trusted proxies only gives its left-most address. A header a
//! trusted proxy passed on that cannot be read whole — an element with no
//! `for=` or two, `unknown`, an obfuscated name, anything not an address —
//! gives the peer: the proxy's own address, which counts all its clients as
//! one, never an address a client chose. `Forwarded` is read when a request
//! has it, else `X-Forwarded-For`.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use axum::http::{HeaderMap, header};
use ipnet::IpNet;

/// The `X-Forwarded-For` header (not in `http`'s list of standard names).
const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The proxies whose forwarding headers are believed: none by default.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Believes the proxies at these addresses and blocks.
    pub fn new(proxies: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(proxies)
    }

    /// The client of a request `peer` sent with `headers`: the address its
    /// forwarding headers name when `peer` is a trusted proxy, else `peer`.
    pub fn client(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.trusts(peer.ip()) {
            return peer;
        }
        let Some(chain) = chain(headers) else {
            return peer;
        };
        chain
            .iter()
            .rev()
            .find(|hop| !self.trusts(hop.ip()))
            .or_else(|| chain.first())
            .copied()
            .unwrap_or(peer)
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|proxy| proxy.contains(&address))
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

/// The addresses the request's forwarding headers name, the first hop
/// first; `None` when it has none, or one that cannot be read whole.
fn chain(headers: &HeaderMap) -> Option<Vec<SocketAddr>> {
    let standard = headers.contains_key(header::FORWARDED);
    let name = if standard {
        header::FORWARDED.as_str()
    } else {
        X_FORWARDED_FOR
    };
    let mut chain = Vec::new();
    for value in headers.get_all(name) {
        let value = value.to_str().ok()?;
        let hops = if standard {
            forwarded(value)?
        } else {
            x_forwarded_for(value)?
        };
        chain.extend(hops);
    }
    (!chain.is_empty()).then_some(chain)
}

/// The `for=` of each element of a `Forwarded` value (RFC 7239 §4).
fn forwarded(value: &str) -> Option<Vec<SocketAddr>> {
    let mut hops = Vec::new();
    for element in split_outside_quotes(value, ',')? {
        if element.trim().is_empty() {
            continue;
        }
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
        hops.push(node?);
    }
    Some(hops)
}

/// The addresses of an `X-Forwarded-For` value: bare, or with a port.
fn x_forwarded_for(value: &str) -> Option<Vec<SocketAddr>> {
    value
        .split(',')
        .map(str::trim)
        .filter(|hop| !hop.is_empty())
        .map(|hop| {
            let bracketed = hop.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
            IpAddr::from_str(bracketed.unwrap_or(hop))
                .map(|ip| SocketAddr::new(ip, 0))
                .or_else(|_| SocketAddr::from_str(hop))
                .ok()
                .map(canonical)
        })
        .collect()
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

    fn proxies(named: &[&str]) -> TrustedProxies {
        TrustedProxies::new(named.iter().map(|n| trusted_proxy(n).unwrap()).collect())
    }

    fn client_of(trusted: &[&str], peer: &str, headers: &[(&str, &str)]) -> String {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        proxies(trusted)
            .client(peer.parse().unwrap(), &map)
            .to_string()
    }

    #[test]
    fn without_a_trusted_proxy_the_headers_are_ignored() {
        let headers = [
            ("x-forwarded-for", "203.0.113.7"),
            ("forwarded", "for=203.0.113.8"),
        ];
        assert_eq!(client_of(&[], PEER, &headers), PEER);
        assert_eq!(client_of(&["10.0.0.0/8"], PEER, &headers), PEER);
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
        let fwd = |value| client_of(&trusted, PEER, &[("forwarded", value)]);
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
        // Forwarded wins over X-Forwarded-For; several lines are one list.
        let both = [
            ("x-forwarded-for", "198.51.100.1"),
            ("forwarded", "for=192.0.2.60"),
        ];
        assert_eq!(client_of(&trusted, PEER, &both), "192.0.2.60:0");
        let lines = [
            ("forwarded", "for=192.0.2.60"),
            ("forwarded", "for=192.0.2.61"),
        ];
        assert_eq!(client_of(&trusted, PEER, &lines), "192.0.2.61:0");
        // An IPv4 peer seen through an IPv6 socket is still the proxy.
        let mapped = client_of(
            &trusted,
            "[::ffff:127.0.0.1]:1",
            &[("x-forwarded-for", "192.0.2.1")],
        );
        assert_eq!(mapped, "192.0.2.1:0");
    }

    #[test]
    fn a_header_that_cannot_be_read_gives_the_peer() {
        let trusted = ["127.0.0.1"];
        for (name, value) in [
            ("forwarded", "for=unknown"),
            ("forwarded", "for=_hidden"),
            ("forwarded", "proto=https"),
            ("forwarded", "for=192.0.2.1;for=192.0.2.2"),
            ("forwarded", "for=\"[2001:db8::1]"),
            ("forwarded", "for=2001:db8::1"),
            ("forwarded", "for=\"192.0.2.1\"x"),
            ("forwarded", "for=192.0.2.1:http"),
            ("forwarded", "for"),
            ("x-forwarded-for", "203.0.113.7, evil"),
            ("x-forwarded-for", "localhost"),
            ("x-forwarded-for", ""),
        ] {
            assert_eq!(
                client_of(&trusted, PEER, &[(name, value)]),
                PEER,
                "{name}: {value}"
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
            value in "[ -~]{0,80}",
            xff in any::<bool>(),
        ) {
            let name = if xff { "x-forwarded-for" } else { "forwarded" };
            let _ = client_of(&["127.0.0.1"], PEER, &[(name, &value)]);
            prop_assert_eq!(client_of(&[], PEER, &[(name, &value)]), PEER);
        }

        #[test]
        fn forwarded_looking_headers_never_panic(value in "((for|by|proto)=(\"?[0-9a-f:.\\[\\]_]{0,20}\"?)[;,] ?){0,6}") {
            let _ = client_of(&["127.0.0.1"], PEER, &[("forwarded", &value)]);
        }
    }
}
