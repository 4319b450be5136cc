//! Crawl scope: which hosts and ports a crawl may enter, decided from its roots.
//!
//! Scope is checked for every discovered link before it reaches the frontier, so it
//! is a pure, allocation-light predicate over already-normalised URLs
//! (see [`crate::base::urlnorm`]). The rules live on [`Scope`].

use std::net::IpAddr;

use url::{Host, Url};

use crate::base::urlnorm::is_crawlable_scheme;

/// How far beyond the roots' own hosts a crawl may go.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ScopeMode {
    /// Only a root's own host, with or without a leading `www.`.
    #[default]
    Strict,
    /// Any host under the same registrable domain as a root (Public Suffix List).
    Lenient,
    /// Any host, on any port (wget's `--span-hosts`): a broad crawl, bounded by
    /// the domain lists ([`Scope::with_domains`]), depth, page and per-host
    /// limits and the trap rules.
    AnyHost,
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
/// - **Any host** ([`ScopeMode::AnyHost`]): every http(s) URL, whatever its host
///   and port.
/// - **Domain lists** ([`Scope::with_domains`], in every mode, after the rules
///   above): with a non-empty allow list, the host must be one of its domains or
///   under one (`example.com` allows `example.com` and `a.example.com`, not
///   `badexample.com`); a host equal to or under a denied domain is out, even if
///   allowed. IP literals match only a listed literal.
///
/// Roots that are not http/https, or have no host, contribute nothing; a scope
/// without usable roots allows nothing (in every mode).
#[derive(Debug, Clone)]
pub struct Scope {
    mode: ScopeMode,
    roots: Vec<RootRule>,
    /// Lowercase domains without a trailing dot.
    domains: Vec<String>,
    exclude_domains: Vec<String>,
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
        Scope {
            mode,
            roots,
            domains: Vec::new(),
            exclude_domains: Vec::new(),
        }
    }

    /// Restricts the scope to hosts under `domains` (when not empty) and not
    /// under `exclude` (see [`Scope`]).
    pub fn with_domains<A, D>(mut self, domains: A, exclude: D) -> Scope
    where
        A: IntoIterator,
        A::Item: AsRef<str>,
        D: IntoIterator,
        D::Item: AsRef<str>,
    {
        let clean = |d: &str| {
            let d = d.trim().trim_start_matches('.').to_ascii_lowercase();
            d.strip_suffix('.').unwrap_or(&d).to_owned()
        };
        self.domains = domains
            .into_iter()
            .map(|d| clean(d.as_ref()))
            .filter(|d| !d.is_empty())
            .collect();
        self.exclude_domains = exclude
            .into_iter()
            .map(|d| clean(d.as_ref()))
            .filter(|d| !d.is_empty())
            .collect();
        self
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
        let by_roots = match self.mode {
            ScopeMode::AnyHost => !self.roots.is_empty(),
            mode => self
                .roots
                .iter()
                .any(|root| root.port_matches(url) && root.host.matches(&host, mode)),
        };
        by_roots && self.domains_allow(url)
    }

    fn domains_allow(&self, url: &Url) -> bool {
        if self.domains.is_empty() && self.exclude_domains.is_empty() {
            return true;
        }
        let Some(name) = url.host_str() else {
            return false;
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        let under = |domain: &String| {
            name == *domain
                || name
                    .strip_suffix(domain.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        };
        (self.domains.is_empty() || self.domains.iter().any(under))
            && !self.exclude_domains.iter().any(under)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::urlnorm::parse_root;

    fn scope(roots: &[&str], mode: ScopeMode) -> Scope {
        let roots: Vec<Url> = roots
            .iter()
            .map(|r| parse_root(r).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        Scope::new(&roots, mode)
    }

    /// (roots, candidate, allowed) checked under one mode.
    fn check(mode: ScopeMode, cases: &[(&[&str], &str, bool)]) {
        for (roots, candidate, want) in cases {
            let url = Url::parse(candidate).unwrap_or_else(|e| panic!("{candidate}: {e}"));
            let got = scope(roots, mode).allows(&url);
            assert_eq!(got, *want, "{mode:?} roots {roots:?} allows {candidate}");
        }
    }

    #[test]
    fn default_mode_is_strict() {
        assert_eq!(ScopeMode::default(), ScopeMode::Strict);
        assert_eq!(
            scope(&["example.com"], ScopeMode::default()).mode(),
            ScopeMode::Strict
        );
    }

    #[test]
    fn strict_hosts() {
        let ex: &[&str] = &["https://example.com/docs/"];
        let www: &[&str] = &["http://www.example.com"];
        check(
            ScopeMode::Strict,
            &[
                (ex, "https://example.com/anything", true),
                (ex, "https://EXAMPLE.com/", true),
                (ex, "https://example.com./", true),
                (ex, "https://www.example.com/", true),
                (www, "http://example.com/", true),
                (www, "http://www.example.com/", true),
                (www, "http://WWW.Example.COM/", true),
                (ex, "https://www.www.example.com/", false),
                (ex, "https://blog.example.com/", false),
                (ex, "https://example.org/", false),
                (ex, "https://notexample.com/", false),
                (ex, "https://example.com.evil.test/", false),
                (ex, "https://user:pw@example.com/", true),
                // Several roots: any one may admit the URL.
                (&["a.test", "b.test"], "http://b.test/x", true),
                (&["a.test", "b.test"], "http://c.test/x", false),
                // IDN roots compare in punycode.
                (&["bücher.example"], "http://xn--bcher-kva.example/", true),
            ],
        );
    }

    #[test]
    fn only_http_and_https() {
        let ex: &[&str] = &["example.com"];
        for mode in [ScopeMode::Strict, ScopeMode::Lenient] {
            check(
                mode,
                &[
                    (ex, "http://example.com/", true),
                    (ex, "https://example.com/", true),
                    (ex, "ftp://example.com/", false),
                    (ex, "ws://example.com/", false),
                    (ex, "mailto:me@example.com", false),
                    (ex, "file:///example.com", false),
                ],
            );
        }
        let roots = [Url::parse("ftp://example.com/").expect("valid")];
        let ftp_only = Scope::new(&roots, ScopeMode::Strict);
        assert!(!ftp_only.allows(&Url::parse("http://example.com/").expect("valid")));
        assert!(!Scope::new(&[], ScopeMode::Lenient).allows(&roots[0]));
    }

    #[test]
    fn ip_literals_match_exactly() {
        let v4: &[&str] = &["127.0.0.1:8080"];
        let v6: &[&str] = &["http://[::1]:8080/"];
        for mode in [ScopeMode::Strict, ScopeMode::Lenient] {
            check(
                mode,
                &[
                    (v4, "http://127.0.0.1:8080/a", true),
                    (v4, "http://0x7f.0.0.1:8080/a", true),
                    (v4, "http://127.0.0.2:8080/a", false),
                    (v4, "http://127.0.0.1.nip.test:8080/", false),
                    (v4, "http://localhost:8080/", false),
                    (v4, "http://[::ffff:127.0.0.1]:8080/", false),
                    (v6, "http://[0:0::1]:8080/", true),
                    (v6, "http://[::2]:8080/", false),
                    (v6, "http://127.0.0.1:8080/", false),
                ],
            );
        }
    }

    #[test]
    fn ports() {
        let default: &[&str] = &["http://h.test/"];
        let explicit: &[&str] = &["http://h.test:8080/"];
        let loopback: &[&str] = &["127.0.0.1:8080"];
        for mode in [ScopeMode::Strict, ScopeMode::Lenient] {
            check(
                mode,
                &[
                    (default, "http://h.test/", true),
                    (default, "https://h.test/", true),
                    (default, "http://h.test:80/", true),
                    (default, "https://h.test:443/", true),
                    (default, "http://h.test:8080/", false),
                    (default, "http://h.test:443/", false),
                    (default, "https://h.test:80/", false),
                    (explicit, "http://h.test:8080/", true),
                    (explicit, "https://h.test:8080/", true),
                    (explicit, "http://h.test/", false),
                    (explicit, "https://h.test/", false),
                    (explicit, "http://h.test:9090/", false),
                    (loopback, "http://127.0.0.1:9090/", false),
                    (loopback, "http://127.0.0.1/", false),
                    // A root on the *other* scheme's default port names it explicitly.
                    (&["http://h.test:443/"], "https://h.test/", true),
                    (&["http://h.test:443/"], "http://h.test/", false),
                ],
            );
        }
    }

    #[test]
    fn lenient_uses_registrable_domain() {
        let uk: &[&str] = &["a.example.co.uk"];
        let com: &[&str] = &["https://www.example.com/"];
        let gh: &[&str] = &["alice.github.io"];
        check(
            ScopeMode::Lenient,
            &[
                (uk, "http://b.example.co.uk/", true),
                (uk, "http://example.co.uk/", true),
                (uk, "http://deep.er.example.co.uk/", true),
                (uk, "http://other.co.uk/", false),
                (uk, "http://co.uk/", false),
                (com, "https://example.com/", true),
                (com, "https://api.example.com/", true),
                (com, "https://example.com./", true),
                (com, "https://example.org/", false),
                (com, "https://example.com.evil.test/", false),
                // The private section makes github.io users separate sites.
                (gh, "http://alice.github.io/", true),
                (gh, "http://www.alice.github.io/", true),
                (gh, "http://bob.github.io/", false),
                (gh, "http://github.io/", false),
                // IDN suffixes are looked up in punycode.
                (&["a.пример.рф"], "http://b.xn--e1afmkfd.xn--p1ai/", true),
            ],
        );
    }

    #[test]
    fn lenient_falls_back_to_strict_without_registrable_domain() {
        let local: &[&str] = &["localhost:3000"];
        let suffix: &[&str] = &["co.uk"];
        let gh: &[&str] = &["github.io"];
        check(
            ScopeMode::Lenient,
            &[
                (local, "http://localhost:3000/", true),
                (local, "http://www.localhost:3000/", true),
                (local, "http://app.localhost:3000/", false),
                (suffix, "http://co.uk/", true),
                (suffix, "http://example.co.uk/", false),
                (suffix, "http://other.co.uk/", false),
                (gh, "http://github.io/", true),
                (gh, "http://www.github.io/", true),
                (gh, "http://alice.github.io/", false),
            ],
        );
    }

    #[test]
    fn strict_is_narrower_than_lenient() {
        let uk: &[&str] = &["a.example.co.uk"];
        check(
            ScopeMode::Strict,
            &[
                (uk, "http://a.example.co.uk/", true),
                (uk, "http://b.example.co.uk/", false),
                (uk, "http://example.co.uk/", false),
            ],
        );
    }

    #[test]
    fn any_host_spans_hosts_and_ports_within_the_domain_lists() {
        let roots = [parse_root("http://a.test:8080/").unwrap()];
        let any = Scope::new(&roots, ScopeMode::AnyHost);
        for url in [
            "http://other.example/",
            "https://b.test:9/x",
            "http://10.0.0.1/",
        ] {
            assert!(any.allows(&Url::parse(url).unwrap()), "{url}");
        }
        assert!(!any.allows(&Url::parse("ftp://b.test/").unwrap()));
        assert!(!Scope::new(&[], ScopeMode::AnyHost).allows(&roots[0]));

        let listed = Scope::new(&roots, ScopeMode::AnyHost)
            .with_domains([".Example.com.", "test"], ["bad.example.com"]);
        let cases = [
            ("http://example.com/", true),
            ("http://www.EXAMPLE.com/", true),
            ("http://a.b.example.com:81/", true),
            ("http://c.test/", true),
            ("http://badexample.com/", false),
            ("http://example.org/", false),
            ("http://bad.example.com/", false),
            ("http://x.bad.example.com/", false),
            ("http://127.0.0.1/", false),
        ];
        for (url, want) in cases {
            assert_eq!(listed.allows(&Url::parse(url).unwrap()), want, "{url}");
        }
        // The lists narrow the other modes too.
        let strict =
            Scope::new(&roots, ScopeMode::Strict).with_domains(Vec::<&str>::new(), ["a.test"]);
        assert!(!strict.allows(&roots[0]));
    }
}
