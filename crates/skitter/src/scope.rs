//! Crawl scope: which hosts and ports a crawl may enter, decided from its roots.
//!
//! Scope is checked for every discovered link before it reaches the frontier, so it
//! is a pure, allocation-light predicate over already-normalised URLs
//! (see [`crate::urlnorm`]). The rules live on [`Scope`].

use std::net::IpAddr;

use url::{Host, Url};

use crate::urlnorm::is_crawlable_scheme;

/// How far beyond the roots' own hosts a crawl may go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ScopeMode {
    /// Only a root's own host, with or without a leading `www.`.
    #[default]
    Strict,
    /// Any host under the same registrable domain as a root (Public Suffix List).
    Lenient,
}

/// The set of URLs a crawl may enter, built from its root URLs.
///
/// A URL is in scope when it is `http` or `https` and, for at least one root, both
/// its host and its port match that root:
///
/// - **Host, strict mode** ([`ScopeMode::Strict`], the default): the host equals the
///   root's host, ignoring ASCII case, a single trailing dot, and one leading `www.`
///   on either side (`example.com` ⇄ `www.example.com`). IP literals (IPv4 and IPv6)
///   must be the same address; `www.` is never toggled on them.
/// - **Host, lenient mode** ([`ScopeMode::Lenient`]): the host has the same
///   registrable domain as the root by the Public Suffix List, so
///   `a.example.co.uk` and `b.example.co.uk` match but `example.co.uk` and
///   `other.co.uk` do not. The list's *private* section is included (as browsers do
///   for cookies and site isolation), so `alice.github.io` and `bob.github.io` are
///   different sites. When either host has no registrable domain (an IP literal,
///   `localhost`, a bare public suffix such as `co.uk`), strict matching applies.
/// - **Port**: if the root is on its scheme's default port, a URL must be on *its
///   own* scheme's default port (so `http://h/` and `https://h/` are both in scope,
///   `http://h:8080/` is not). If the root names a non-default port P, the URL must
///   use port P, over http or https. A root on `127.0.0.1:8080` therefore does not
///   bring `127.0.0.1:9090` into scope.
///
/// Roots that are not http/https, or have no host, contribute nothing; a scope
/// without usable roots allows nothing.
#[derive(Debug, Clone)]
pub struct Scope {
    mode: ScopeMode,
    roots: Vec<RootRule>,
}

/// One root, reduced to what matching needs.
#[derive(Debug, Clone)]
struct RootRule {
    host: HostKey,
    /// `None` when the root is on its scheme's default port.
    explicit_port: Option<u16>,
}

/// A host in the form the matching rules compare.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostKey {
    Ip(IpAddr),
    Name {
        /// Lowercased, without trailing dot or one leading `www.`.
        bare: String,
        /// Registrable domain (lowercased, no trailing dot), if the PSL gives one.
        site: Option<String>,
    },
}

impl Scope {
    /// Builds the scope of a crawl from its root URLs and the chosen mode.
    pub fn new(roots: &[Url], mode: ScopeMode) -> Scope {
        let roots = roots
            .iter()
            .filter(|root| is_crawlable_scheme(root))
            .filter_map(|root| {
                Some(RootRule {
                    host: HostKey::of(root)?,
                    explicit_port: root.port(),
                })
            })
            .collect();
        Scope { mode, roots }
    }

    /// The mode this scope was built with.
    pub fn mode(&self) -> ScopeMode {
        self.mode
    }

    /// Whether the crawl may fetch `url`; see [`Scope`] for the rules.
    pub fn allows(&self, url: &Url) -> bool {
        if !is_crawlable_scheme(url) {
            return false;
        }
        let Some(host) = HostKey::of(url) else {
            return false;
        };
        self.roots
            .iter()
            .any(|root| root.port_matches(url) && root.host.matches(&host, self.mode))
    }
}

impl RootRule {
    fn port_matches(&self, url: &Url) -> bool {
        match self.explicit_port {
            // The `url` crate stores a default port as `None`, whatever was written.
            None => url.port().is_none(),
            Some(port) => url.port_or_known_default() == Some(port),
        }
    }
}

impl HostKey {
    fn of(url: &Url) -> Option<HostKey> {
        match url.host()? {
            Host::Ipv4(ip) => Some(HostKey::Ip(IpAddr::V4(ip))),
            Host::Ipv6(ip) => Some(HostKey::Ip(IpAddr::V6(ip))),
            Host::Domain(name) => {
                let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
                if name.is_empty() {
                    return None;
                }
                let site = psl::domain_str(&name).map(str::to_owned);
                let bare = name.strip_prefix("www.").unwrap_or(&name).to_owned();
                Some(HostKey::Name { bare, site })
            }
        }
    }

    fn matches(&self, other: &HostKey, mode: ScopeMode) -> bool {
        match (self, other) {
            (HostKey::Ip(a), HostKey::Ip(b)) => a == b,
            (
                HostKey::Name { bare, site },
                HostKey::Name {
                    bare: other_bare,
                    site: other_site,
                },
            ) => {
                let same_site = mode == ScopeMode::Lenient
                    && site.is_some()
                    && other_site.is_some()
                    && site == other_site;
                same_site || bare == other_bare
            }
            _ => false,
        }
    }
}
