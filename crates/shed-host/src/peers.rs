//! One address per caller, for the caps counted by address (the MCP door's
//! signed-out sessions, the OAuth metadata documents' fetches): a peer's IP
//! as a canonical address (an IPv4-mapped IPv6 one is its IPv4), an IPv6
//! one by its first [`IPV6_ADDRESS_BITS`]; no peer known is the
//! unspecified address, one for all.

use std::net::{IpAddr, Ipv6Addr};

/// The leading bits that make one IPv6 address: a host is handed a whole /64.
pub const IPV6_ADDRESS_BITS: u32 = 64;

/// The address `peer` is counted as.
pub fn address_of(peer: Option<IpAddr>) -> IpAddr {
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
