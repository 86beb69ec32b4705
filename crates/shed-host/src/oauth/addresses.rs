//! Which network addresses shed may fetch a client's metadata document from.
//! The fetch is made on a stranger's say-so (an anonymous
//! `/oauth/authorize?client_id=<url>`), so it may reach only addresses
//! anyone on the internet reaches: never this machine, its networks, or any
//! other special-purpose address (IANA's registries), however the URL writes
//! it. `127.1`, `2130706433`, `0x7f000001` and `0177.0.0.1` are all
//! 127.0.0.1 once the URL parser has read them, and that parsed address is
//! what is judged ([`literal_of`]); a host name is judged by every address
//! it resolves to, and only those that pass are handed to the connection
//! ([`PublicOnly`]), so a name cannot resolve to one address when checked and
//! another when connected. Loopback is reached only when the server says so
//! (`shed serve --oauth-allow-loopback-documents`, for development).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Where an address leads, for a fetch a stranger asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Reached by anyone on the internet.
    Global,
    /// This machine's loopback: 127.0.0.0/8, `::1`.
    Loopback,
    /// Anything else: unspecified, private, shared (CGNAT), link-local,
    /// unique-local, IPv4-mapped or -compatible, NAT64, 6to4, Teredo,
    /// multicast, broadcast, documentation, benchmarking, reserved.
    Special,
}

/// IPv4's special-purpose blocks besides loopback (IANA's IPv4
/// Special-Purpose Address Registry, and multicast and the reserved
/// 240.0.0.0/4 with the broadcast address): `(network, prefix length)`.
const SPECIAL_V4: [(Ipv4Addr, u32); 14] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),     // "this network", 0.0.0.0 among it
    (Ipv4Addr::new(10, 0, 0, 0), 8),    // private
    (Ipv4Addr::new(100, 64, 0, 0), 10), // shared address space (CGNAT)
    (Ipv4Addr::new(169, 254, 0, 0), 16), // link-local (cloud metadata)
    (Ipv4Addr::new(172, 16, 0, 0), 12), // private
    (Ipv4Addr::new(192, 0, 0, 0), 24),  // IETF protocol assignments
    (Ipv4Addr::new(192, 0, 2, 0), 24),  // documentation (TEST-NET-1)
    (Ipv4Addr::new(192, 88, 99, 0), 24), // 6to4 relay anycast
    (Ipv4Addr::new(192, 168, 0, 0), 16), // private
    (Ipv4Addr::new(198, 18, 0, 0), 15), // benchmarking
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation (TEST-NET-2)
    (Ipv4Addr::new(203, 0, 113, 0), 24), // documentation (TEST-NET-3)
    (Ipv4Addr::new(224, 0, 0, 0), 4),   // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4),   // reserved, and the broadcast address
];

/// IPv6's global unicast block, 2000::/3: every other address is special.
const GLOBAL_V6: (Ipv6Addr, u32) = (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

/// The special-purpose blocks inside [`GLOBAL_V6`]: `(network, prefix length)`.
const SPECIAL_IN_GLOBAL_V6: [(Ipv6Addr, u32); 4] = [
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23), // IETF protocol assignments, Teredo
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16), // 6to4
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20), // documentation
];

fn in_v4(address: Ipv4Addr, (network, bits): (Ipv4Addr, u32)) -> bool {
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    address.to_bits() & mask == network.to_bits() & mask
}

fn in_v6(address: Ipv6Addr, (network, bits): (Ipv6Addr, u32)) -> bool {
    let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
    address.to_bits() & mask == network.to_bits() & mask
}

/// Where `address` leads. An IPv4 address inside IPv6 (mapped,
/// compatible, NAT64, 6to4) is special whatever it embeds.
pub(crate) fn reach(address: IpAddr) -> Reach {
    match address {
        IpAddr::V4(v4) if v4.is_loopback() => Reach::Loopback,
        IpAddr::V4(v4) if SPECIAL_V4.iter().any(|&block| in_v4(v4, block)) => Reach::Special,
        IpAddr::V4(_) => Reach::Global,
        IpAddr::V6(v6) if v6 == Ipv6Addr::LOCALHOST => Reach::Loopback,
        IpAddr::V6(v6)
            if in_v6(v6, GLOBAL_V6)
                && !SPECIAL_IN_GLOBAL_V6.iter().any(|&block| in_v6(v6, block)) =>
        {
            Reach::Global
        }
        IpAddr::V6(_) => Reach::Special,
    }
}

/// Whether a document may be fetched from `address`: a global one, or a
/// loopback one when `loopback` allows it.
pub(crate) fn fetchable(address: IpAddr, loopback: bool) -> bool {
    match reach(address) {
        Reach::Global => true,
        Reach::Loopback => loopback,
        Reach::Special => false,
    }
}

/// The address a URL's host is, when it is written as one: as the URL
/// parser reads it, and as the connection then reads its host — an address
/// is dialled as it stands, with no name resolved.
pub(crate) fn literal_of(url: &reqwest::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    let host = host
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(host);
    host.parse().ok()
}

/// The resolver of the metadata documents' fetches: a name's addresses,
/// only those [`fetchable`]; none left is a failure, so nothing is dialled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PublicOnly {
    /// Whether loopback addresses are kept too.
    pub loopback: bool,
}

/// A name that resolved to no address a document may be fetched from.
#[derive(Debug, thiserror::Error)]
#[error("{0} resolves to no public address")]
struct NoPublicAddress(String);

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let loopback = self.loopback;
        let name = name.as_str().to_string();
        Box::pin(async move {
            let kept: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0))
                .await?
                .filter(|found| fetchable(found.ip(), loopback))
                .collect();
            if kept.is_empty() {
                return Err(NoPublicAddress(name).into());
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use reqwest::dns::Resolve;

    fn of(text: &str) -> Reach {
        reach(text.parse().unwrap())
    }

    #[test]
    fn only_public_unicast_is_global() {
        for global in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "2001:4860:4860::8888",
        ] {
            assert_eq!(of(global), Reach::Global, "{global}");
        }
        for loopback in ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1"] {
            assert_eq!(of(loopback), Reach::Loopback, "{loopback}");
        }
        for special in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::7f00:1",
            "64:ff9b:1::a00:1",
            "100::1",
            "2001::1",
            "2001:db8::1",
            "2002:7f00:1::1",
            "3fff::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
        ] {
            assert_eq!(of(special), Reach::Special, "{special}");
        }
    }

    #[test]
    fn loopback_is_fetched_only_when_allowed_and_special_never() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let private: IpAddr = "10.1.2.3".parse().unwrap();
        let public: IpAddr = "8.8.8.8".parse().unwrap();
        assert!(!fetchable(loopback, false) && fetchable(loopback, true));
        assert!(!fetchable(private, false) && !fetchable(private, true));
        assert!(fetchable(public, false) && fetchable(public, true));
    }

    #[tokio::test]
    async fn a_name_resolving_only_to_loopback_resolves_to_nothing_unless_allowed() {
        let name = || "localhost".parse::<reqwest::dns::Name>().unwrap();
        let refused = PublicOnly { loopback: false }.resolve(name()).await;
        assert!(refused.is_err_and(|e| e.to_string().contains("no public address")));
        let allowed = PublicOnly { loopback: true }.resolve(name()).await.unwrap();
        assert!(allowed.into_iter().all(|found| found.ip().is_loopback()));
    }

    fn url_host(host: &str) -> Option<IpAddr> {
        literal_of(&reqwest::Url::parse(&format!("https://{host}:8443/c.json")).unwrap())
    }

    proptest! {
        #[test]
        fn every_address_in_a_special_v4_block_is_special(
            block in 0..SPECIAL_V4.len(),
            host_bits in any::<u32>(),
        ) {
            let (network, bits) = SPECIAL_V4[block];
            let host_mask = u32::MAX.checked_shr(bits).unwrap_or(0);
            let address = Ipv4Addr::from_bits(network.to_bits() | (host_bits & host_mask));
            prop_assert_eq!(reach(IpAddr::V4(address)), Reach::Special);
        }

        #[test]
        fn an_ipv4_address_inside_ipv6_is_never_global(v4 in any::<u32>()) {
            let v4 = Ipv4Addr::from_bits(v4);
            prop_assert_eq!(reach(IpAddr::V6(v4.to_ipv6_mapped())), Reach::Special);
            prop_assert_ne!(reach(IpAddr::V6(v4.to_ipv6_compatible())), Reach::Global);
            let nat64 = Ipv6Addr::from_bits((0x64_ff9b_u128 << 96) | u128::from(v4.to_bits()));
            prop_assert_eq!(reach(IpAddr::V6(nat64)), Reach::Special);
            let six_to_four = Ipv6Addr::from_bits((0x2002_u128 << 112) | (u128::from(v4.to_bits()) << 80));
            prop_assert_eq!(reach(IpAddr::V6(six_to_four)), Reach::Special);
        }

        #[test]
        fn ipv6_outside_global_unicast_is_never_global(bits in any::<u128>()) {
            let address = Ipv6Addr::from_bits(bits);
            if !in_v6(address, GLOBAL_V6) {
                prop_assert_ne!(reach(IpAddr::V6(address)), Reach::Global);
            }
        }

        #[test]
        fn an_ipv4_address_however_written_is_the_address_judged(v4 in any::<u32>()) {
            let address = Ipv4Addr::from_bits(v4);
            let [a, b, c, d] = address.octets();
            let expected = Some(IpAddr::V4(address));
            prop_assert_eq!(url_host(&address.to_string()), expected);
            prop_assert_eq!(url_host(&v4.to_string()), expected);
            prop_assert_eq!(url_host(&format!("{v4:#x}")), expected);
            prop_assert_eq!(url_host(&format!("0{v4:o}")), expected);
            prop_assert_eq!(url_host(&format!("0{a:o}.0{b:o}.0{c:o}.0{d:o}")), expected);
            prop_assert_eq!(url_host(&format!("{a:#x}.{b:#x}.{c:#x}.{d:#x}")), expected);
            prop_assert_eq!(url_host(&format!("{a}.{}", u32::from_be_bytes([0, b, c, d]))), expected);
            prop_assert_eq!(url_host(&format!("[::ffff:{address}]")), Some(IpAddr::V6(address.to_ipv6_mapped())));
        }
    }
}
