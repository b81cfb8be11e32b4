//! Which addresses a fetch may reach: public ones, and those the application allows.
//!
//! One classification, from IANA's IPv4 and IPv6 special-purpose address registries: an
//! address is public only if no special-purpose block that is not globally reachable holds
//! it. IPv6 forms that carry an IPv4 address (mapped, compatible, translated, NAT64, 6to4)
//! are judged by the IPv4 address they lead to; Teredo, whose embedded address is obscured,
//! is refused.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// IPv4 blocks that are not globally reachable (IANA IPv4 Special-Purpose Address Registry,
/// plus multicast and the deprecated 6to4 relay anycast).
const SPECIAL_V4: &[(&str, &str)] = &[
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "private use"),
    ("100.64.0.0/10", "shared address space"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link local"),
    ("172.16.0.0/12", "private use"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    ("192.168.0.0/16", "private use"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "limited broadcast"),
    ("240.0.0.0/4", "reserved"),
];

/// IPv6 blocks that are not globally reachable (IANA IPv6 Special-Purpose Address Registry,
/// plus deprecated site-local and multicast). Blocks that embed an IPv4 address are handled
/// before this table.
const SPECIAL_V6: &[(&str, &str)] = &[
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
    ("100::/64", "discard-only"),
    ("100:0:0:1::/64", "dummy prefix"),
    ("2001::/32", "Teredo (obscured IPv4)"),
    ("2001::/23", "IETF protocol assignments"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing (SRv6) SIDs"),
    ("fc00::/7", "unique local"),
    ("fe80::/10", "link local"),
    ("fec0::/10", "site local (deprecated)"),
    ("ff00::/8", "multicast"),
];

/// Why an address is not public, or `None` for a public one.
pub(crate) fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => special_v4(v4),
            None => special_v6(v6),
        },
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    SPECIAL_V4.iter().find_map(|(block, reason)| {
        let block: Ipv4Net = block.parse().expect("the table holds valid blocks");
        block.contains(&ip).then_some(*reason)
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let special = SPECIAL_V6.iter().find_map(|(block, reason)| {
        let block: Ipv6Net = block.parse().expect("the table holds valid blocks");
        block.contains(&ip).then_some(*reason)
    });
    // Only 2000::/3 is allocated as global unicast; the rest is special or unassigned.
    let global_unicast = ip.segments()[0] & 0xe000 == 0x2000;
    special.or((!global_unicast).then_some("not in the global unicast space"))
}

/// The IPv4 address an IPv6 address leads to, for the forms that carry one: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated), IPv4-translated
/// (`::ffff:0:a.b.c.d`), NAT64 well-known prefix (`64:ff9b::a.b.c.d`) and 6to4
/// (`2002:aabb:ccdd::/48`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let zeros = |range: std::ops::Range<usize>| s[range].iter().all(|part| *part == 0);
    let mapped = zeros(0..5) && s[5] == 0xffff;
    // `::` and `::1` are IPv6's own; every other `::/96` address is IPv4-compatible.
    let compatible = zeros(0..6) && (s[6] != 0 || s[7] > 1);
    let translated = zeros(0..4) && s[4] == 0xffff && s[5] == 0;
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && zeros(2..6);
    if mapped || compatible || translated || nat64 {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

/// Whether the application's allowlist admits this address (an IPv6 form of an IPv4
/// address counts as that IPv4 address).
pub(crate) fn allowed(ip: IpAddr, networks: &[IpNet]) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    networks.iter().any(|network| network.contains(&ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_purpose_addresses_are_not_public() {
        let refused = [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private use"),
            ("172.16.0.1", "private use"),
            ("192.168.1.1", "private use"),
            ("169.254.169.254", "link local"),
            ("0.0.0.0", "this network"),
            ("100.64.0.1", "shared address space"),
            ("255.255.255.255", "limited broadcast"),
            ("224.0.0.1", "multicast"),
            ("192.0.2.1", "documentation (TEST-NET-1)"),
            ("198.51.100.7", "documentation (TEST-NET-2)"),
            ("203.0.113.9", "documentation (TEST-NET-3)"),
            ("198.18.0.1", "benchmarking"),
            ("192.0.0.8", "IETF protocol assignments"),
            ("192.88.99.1", "deprecated 6to4 relay anycast"),
            ("240.0.0.1", "reserved"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fe80::1", "link local"),
            ("fd00::1", "unique local"),
            ("fec0::1", "site local (deprecated)"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001:2::1", "IETF protocol assignments"),
            (
                "2001:0:4136:e378:8000:63bf:3fff:fdd2",
                "Teredo (obscured IPv4)",
            ),
            ("100::1", "discard-only"),
            ("64:ff9b:1::a00:1", "local-use IPv4/IPv6 translation"),
            ("5f00::1", "segment routing (SRv6) SIDs"),
            ("4000::1", "not in the global unicast space"),
            // IPv6 forms of private IPv4 addresses.
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private use"),
            ("::127.0.0.1", "loopback"),
            ("::ffff:0:7f00:1", "loopback"),
            ("::ffff:0:a00:1", "private use"),
            ("64:ff9b::a00:1", "private use"),
            ("64:ff9b::7f00:1", "loopback"),
            ("2002:7f00:1::1", "loopback"),
            ("2002:c0a8:101::", "private use"),
            ("::a9fe:a9fe", "link local"),
        ];
        for (ip, reason) in refused {
            assert_eq!(non_public_reason(ip.parse().unwrap()), Some(reason), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "64:ff9b::5db8:d822",
            "2002:5db8:d822::1",
            "::ffff:1.1.1.1",
        ] {
            assert_eq!(non_public_reason(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn the_allowlist_also_covers_ipv6_forms_of_ipv4_addresses() {
        let loopback: Vec<IpNet> = vec!["127.0.0.0/8".parse().unwrap()];
        for ip in [
            "127.0.0.1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "::ffff:0:7f00:1",
        ] {
            assert!(allowed(ip.parse().unwrap(), &loopback), "{ip}");
        }
        assert!(!allowed("10.0.0.1".parse().unwrap(), &loopback));
    }
}
