//! Which network addresses requests may reach: the address policy, checked on
//! the address actually connected to.
//!
//! Two checks cover every connection the client makes itself: an IP-literal URL
//! is checked before the request starts ([`check_url`]), and a host name is
//! checked after resolution by `GuardedResolver`, which hands the connector
//! only the addresses the policy allows. The connector never resolves a name a
//! second time, so a name that answers "public" to one lookup and "private" to
//! the next (DNS rebinding) cannot get round the check.
//!
//! Link-local and cloud-metadata addresses are never reached, whatever the
//! settings: a crawler has no business there, and a redirect or robots.txt
//! pointing at `169.254.169.254` is the classic way to steal cloud credentials.
//! Loopback and private addresses ([`Class::Internal`]) follow
//! [`PrivateAccess`].

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

/// Who may reach loopback and private addresses (127.0.0.0/8, 10.0.0.0/8,
/// 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, 0.0.0.0/8, ::1, fc00::/7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PrivateAccess {
    /// Only requests to a host and port the user named (a crawl root's, a
    /// fetch input's) may reach them; links, redirects and robots.txt
    /// redirects to other hosts, or to another port of a named host, may not. The default: a crawl of a site on loopback works,
    /// a public site cannot lead the crawler into the local network.
    #[default]
    Named,
    /// Every request may reach them.
    Allow,
    /// No request may reach them, named hosts included.
    Deny,
}

/// What kind of address an IP is, for the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A public address: always allowed.
    Public,
    /// Loopback or private: allowed per [`PrivateAccess`].
    Internal,
    /// Link-local, cloud metadata, multicast or reserved: never allowed.
    Forbidden,
}

/// A request the address policy refused; no connection was made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{addr} is a {what} address, refused by the address policy{hint}")]
pub struct Blocked {
    /// The refused address.
    pub addr: IpAddr,
    what: &'static str,
    hint: &'static str,
}

impl Blocked {
    fn new(addr: IpAddr, class: Class) -> Blocked {
        let (what, hint) = match class {
            Class::Forbidden => ("link-local, metadata or reserved", ""),
            _ => ("loopback or private", " (--allow-private allows it)"),
        };
        Blocked { addr, what, hint }
    }
}

/// The class of `ip`. IPv4 addresses embedded in IPv6 ones (mapped, NAT64,
/// 6to4, compatible) are classed as the IPv4 address they carry.
pub fn class_of(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => class_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => class_v4(v4),
            None => class_v6(v6),
        },
    }
}

fn class_v4(ip: Ipv4Addr) -> Class {
    let [a, b, ..] = ip.octets();
    if ip.is_link_local()
        || ip == Ipv4Addr::new(100, 100, 100, 200) // Alibaba Cloud metadata
        || ip == Ipv4Addr::new(168, 63, 129, 16) // Azure's wire server and metadata
        || ip.is_multicast()
        || ip.is_broadcast()
        || a >= 240
    {
        Class::Forbidden
    } else if ip.is_loopback() || ip.is_private() || a == 0 || (a == 100 && (64..128).contains(&b))
    {
        Class::Internal
    } else {
        Class::Public
    }
}

fn class_v6(ip: Ipv6Addr) -> Class {
    let first = ip.segments()[0];
    // fd00:ec2::254: the AWS instance metadata service over IPv6.
    let aws_metadata = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
    if (first & 0xffc0) == 0xfe80 || ip.is_multicast() || ip == aws_metadata {
        Class::Forbidden
    } else if ip.is_loopback()
        || ip.is_unspecified()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfec0
    {
        Class::Internal
    } else {
        Class::Public
    }
}

/// The IPv4 address an IPv6 address carries, if it is one of the forms that
/// route to it: `::ffff:a.b.c.d`, `64:ff9b::a.b.c.d` (NAT64), the local-use
/// NAT64 prefix `64:ff9b:1::/48` (RFC 8215, read as its `/96` form, the
/// address in the last 32 bits), `2002:ab:cd::` (6to4) and the deprecated
/// `::a.b.c.d` (other than `::` and `::1`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let low = || Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32);
    match s {
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] | [0x64, 0xff9b, 1, ..] => Some(low()),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from(((hi as u32) << 16) | lo as u32)),
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_loopback() && !ip.is_unspecified() => Some(low()),
        _ => None,
    }
}

/// Whether `ip` may be reached, with loopback and private addresses allowed
/// or not.
pub fn check(ip: IpAddr, allow_internal: bool) -> Result<(), Blocked> {
    match class_of(ip) {
        Class::Public => Ok(()),
        Class::Internal if allow_internal => Ok(()),
        class => Err(Blocked::new(ip, class)),
    }
}

/// Checks a URL whose host is an IP literal (the client connects to it without
/// resolving anything, so the resolver never sees it). Names pass here: the
/// resolver checks what they resolve to.
pub fn check_url(url: &Url, allow_internal: bool) -> Result<(), Blocked> {
    match url.host() {
        Some(Host::Ipv4(ip)) => check(IpAddr::V4(ip), allow_internal),
        Some(Host::Ipv6(ip)) => check(IpAddr::V6(ip), allow_internal),
        _ => Ok(()),
    }
}

/// A resolver that resolves as the system does (`getaddrinfo`, on the blocking
/// pool, like reqwest's default) and keeps only the addresses the policy
/// allows. When it keeps none, the error is a [`Blocked`], which
/// [`classify`](super::classify) reports as `blocked`.
#[derive(Clone, Debug)]
pub(crate) struct GuardedResolver {
    allow_internal: bool,
    /// The proxies' hosts: the user chose them, wherever they are.
    proxy_hosts: Vec<String>,
    dns: std::sync::Arc<crate::fetch::dns::Dns>,
}

impl GuardedResolver {
    pub(crate) fn new(
        allow_internal: bool,
        proxy_hosts: Vec<String>,
        dns: std::sync::Arc<crate::fetch::dns::Dns>,
    ) -> Self {
        GuardedResolver {
            allow_internal,
            proxy_hosts,
            dns,
        }
    }
}

/// The hosts of the proxies requests may go through: `given` and those of the
/// environment variables the client honours.
pub(crate) fn proxy_hosts<'a>(given: impl Iterator<Item = &'a str>) -> Vec<String> {
    const VARS: [&str; 6] = [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ];
    let from_env = VARS.iter().filter_map(|v| std::env::var(v).ok());
    given
        .map(str::to_owned)
        .chain(from_env)
        .filter_map(|p| {
            // A proxy may be given without a scheme ("host:3128").
            let url = Url::parse(&p)
                .ok()
                .filter(Url::has_host)
                .or_else(|| Url::parse(&format!("http://{p}")).ok())?;
            url.host_str().map(str::to_owned)
        })
        .collect()
}

impl GuardedResolver {
    /// `host`'s addresses the policy allows (port 0), or why there are none.
    /// reqwest's resolver and the direct path's ([`super::direct`]) both ask
    /// this.
    pub(crate) fn lookup(
        &self,
        host: &str,
    ) -> impl std::future::Future<Output = Result<Vec<SocketAddr>, BoxError>> + Send + 'static {
        let allow_internal = self.allow_internal
            || self
                .proxy_hosts
                .iter()
                .any(|p| p.eq_ignore_ascii_case(host));
        let host = host.to_owned();
        let dns = self.dns.clone();
        async move {
            let resolved = dns.lookup(&host).await?;
            let mut kept: Vec<SocketAddr> = Vec::new();
            let mut refused = None;
            for ip in resolved {
                match check(ip, allow_internal) {
                    Ok(()) => kept.push(SocketAddr::new(ip, 0)),
                    Err(blocked) => refused = Some(blocked),
                }
            }
            match (kept.is_empty(), refused) {
                (true, Some(blocked)) => Err(Box::new(blocked) as _),
                (true, None) => Err(Box::new(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host} has no address"),
                )) as _),
                (false, _) => Ok(kept),
            }
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let lookup = self.lookup(name.as_str());
        Box::pin(async move {
            let kept = lookup.await?;
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let cases: &[(&str, Class)] = &[
            ("93.184.216.34", Class::Public),
            ("8.8.8.8", Class::Public),
            ("2606:4700::1111", Class::Public),
            ("127.0.0.1", Class::Internal),
            ("127.0.0.2", Class::Internal),
            ("10.1.2.3", Class::Internal),
            ("172.16.0.1", Class::Internal),
            ("172.32.0.1", Class::Public),
            ("192.168.1.1", Class::Internal),
            ("100.64.0.1", Class::Internal),
            ("100.128.0.1", Class::Public),
            ("0.0.0.0", Class::Internal),
            ("::1", Class::Internal),
            ("::", Class::Internal),
            ("fd12:3456::1", Class::Internal),
            ("169.254.169.254", Class::Forbidden),
            ("169.254.0.1", Class::Forbidden),
            ("100.100.100.200", Class::Forbidden),
            ("224.0.0.1", Class::Forbidden),
            ("255.255.255.255", Class::Forbidden),
            ("fe80::1", Class::Forbidden),
            ("febf::1", Class::Forbidden),
            ("fd00:ec2::254", Class::Forbidden),
            ("ff02::1", Class::Forbidden),
            ("::ffff:169.254.169.254", Class::Forbidden),
            ("::ffff:127.0.0.1", Class::Internal),
            ("64:ff9b::a9fe:a9fe", Class::Forbidden),
            ("2002:a9fe:a9fe::", Class::Forbidden),
            ("2002:0a00:0001::", Class::Internal),
            ("::a9fe:a9fe", Class::Forbidden),
            ("168.63.129.16", Class::Forbidden),
            ("168.63.129.17", Class::Public),
            ("::ffff:168.63.129.16", Class::Forbidden),
            ("64:ff9b:1::a9fe:a9fe", Class::Forbidden),
            ("64:ff9b:1::7f00:1", Class::Internal),
            ("64:ff9b:1:ffff::a00:1", Class::Internal),
            ("64:ff9b:1::5db8:d822", Class::Public),
            ("64:ff9b:2::7f00:1", Class::Public),
        ];
        for (ip, class) in cases {
            let parsed: IpAddr = ip.parse().unwrap();
            assert_eq!(class_of(parsed), *class, "{ip}");
        }
    }

    #[test]
    fn checks_literals_only() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert!(check_url(&url("http://169.254.169.254/latest/"), true).is_err());
        assert!(check_url(&url("http://[fe80::1]/"), true).is_err());
        assert!(check_url(&url("http://127.0.0.1:80/"), false).is_err());
        assert!(check_url(&url("http://127.0.0.1:80/"), true).is_ok());
        // Decimal and short forms are normalised to the address by the URL parser.
        assert!(check_url(&url("http://2852039166/"), true).is_err());
        assert!(check_url(&url("http://127.1/"), false).is_err());
        assert!(check_url(&url("http://localhost/"), false).is_ok());
    }

    #[tokio::test]
    async fn resolver_refuses_what_names_resolve_to() {
        use reqwest::dns::Resolve as _;
        use std::str::FromStr as _;
        let name = || reqwest::dns::Name::from_str("localhost").unwrap();
        let dns = std::sync::Arc::new(crate::fetch::dns::Dns::new(&Default::default()).unwrap());
        let err = match GuardedResolver::new(false, Vec::new(), dns.clone())
            .resolve(name())
            .await
        {
            Ok(_) => panic!("localhost must be refused without private access"),
            Err(e) => e,
        };
        assert!(err.is::<Blocked>(), "{err}");
        let proxy = GuardedResolver::new(false, vec!["LOCALHOST".into()], dns.clone());
        assert!(proxy.resolve(name()).await.is_ok());
        let addrs: Vec<_> = GuardedResolver::new(true, Vec::new(), dns)
            .resolve(name())
            .await
            .unwrap()
            .collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    #[test]
    fn proxy_hosts_with_or_without_scheme() {
        assert_eq!(
            proxy_hosts(["http://u:p@Proxy.local:3128"].into_iter())[0],
            "proxy.local"
        );
        assert_eq!(
            proxy_hosts(["proxy.local:3128"].into_iter())[0],
            "proxy.local"
        );
    }
}
