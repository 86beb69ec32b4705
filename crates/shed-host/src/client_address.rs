//! A signed-out caller's address as the per-address caps count it: an IPv4
//! address as it is (also when seen through an IPv6 socket), an IPv6 one by
//! its first [`IPV6_ADDRESS_BITS`] — one machine is given a whole /64 — and
//! an unknown one as the unspecified address, one for all.

use std::net::{IpAddr, Ipv6Addr};

/// How much of an IPv6 address counts as one caller: a machine is given a
/// whole /64, so counting whole addresses would let it open 2^64 places.
pub const IPV6_ADDRESS_BITS: u32 = 64;

/// The address `peer` counts as.
pub fn counted(peer: Option<IpAddr>) -> IpAddr {
    match peer.map(|peer| peer.to_canonical()) {
        None => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        Some(IpAddr::V6(v6)) => {
            let host_bits = 128 - IPV6_ADDRESS_BITS;
            IpAddr::V6(Ipv6Addr::from_bits(
                (v6.to_bits() >> host_bits) << host_bits,
            ))
        }
        Some(v4) => v4,
    }
}
