//! What a test site serves: the one configuration struct.
//!
//! Plain public fields plus `Default`, so a test states only what it cares
//! about: `SiteConfig { pages: 10, ..SiteConfig::default() }`.

use std::time::Duration;

/// Written in [`SiteConfig::robots_txt`], [`SiteConfig::sitemap_xml`] and
/// [`SiteConfig::extra_root_links`], replaced by the running site's origin
/// (`http://127.0.0.1:PORT`), because the port is only known once bound.
pub const ORIGIN_PLACEHOLDER: &str = "{origin}";

/// [`SiteConfig::h2_max_streams`] unless told otherwise.
pub const DEFAULT_H2_MAX_STREAMS: u32 = 200;

/// Configuration of one test-site instance.
#[derive(Clone, Debug)]
pub struct SiteConfig {
    /// Number of generated pages `/p/0` .. `/p/{pages-1}`.
    pub pages: usize,
    /// Child links per page; the pages form a tree of this fanout (0 acts as 1).
    pub fanout: usize,
    /// Minimum size in bytes of each generated page's HTML (padded with text).
    pub page_size: usize,
    /// Delay added before every response; counted as in flight.
    pub latency: Duration,
    /// Status and body for `/robots.txt`; `None` serves 404.
    pub robots_txt: Option<(u16, String)>,
    /// Body for `/sitemap.xml`; `None` serves 404.
    pub sitemap_xml: Option<String>,
    /// Extra links put on `/`, for example to another site instance.
    pub extra_root_links: Vec<String>,
    /// Serve HTML gzip-encoded when the request's `Accept-Encoding` allows it.
    pub gzip: bool,
    /// Link `/specials` (redirects, errors, assets, broken bodies) from `/`.
    pub specials: bool,
    /// Link the infinite crawler traps (`/cal/..`, `/loop/a/`, `/session`) from `/`.
    pub traps: bool,
    /// Record each request's arrival time, for [`crate::Stats::starts`].
    pub record_starts: bool,
    /// Fault modes: failing URLs, robots.txt outages, rate limits, outages.
    pub faults: crate::Faults,
    /// Name-based virtual hosts: many sites behind one port (see
    /// [`VirtualHosts`]); `None` serves one site whatever the `Host`.
    pub vhosts: Option<VirtualHosts>,
    /// Pages that change between crawl passes, with validators and `304`s
    /// (see [`crate::Versions`]); `None` serves the same pages always, with
    /// no validators.
    pub versions: Option<crate::Versions>,
    /// Bytes per second each response's body moves at, on top of `latency`
    /// (`None`: as fast as loopback): a body then costs time to transfer and
    /// a body-less answer (a `304`) does not, as over a real network.
    pub bandwidth: Option<u64>,
    /// Share (0 to 1) of the generated pages `/p/{i}` that build their links
    /// in script, for `--render` (see `script.rs`); every other page then
    /// carries a small script too. 0 (the default) serves plain pages only.
    pub script_share: f64,
    /// Most requests an HTTP/2 (h2c) connection may have open at once
    /// (`SETTINGS_MAX_CONCURRENT_STREAMS`; default 200, hyper's, and about
    /// what public servers allow: nginx 128). `None` sets no limit, so one
    /// connection can hold all of a crawl's requests in flight.
    pub h2_max_streams: Option<u32>,
}

/// Many sites behind one listener, told apart by the request's `Host`:
/// `h0.DOMAIN` … `h{hosts-1}.DOMAIN` each serve the generated site (`/` and
/// `/p/0` … of [`SiteConfig::pages`] pages), and every page also links to
/// other hosts: the next host's `/` (so a crawl from `h0` can reach them all)
/// and [`VirtualHosts::cross_links`] more, picked by a power law so a few
/// hosts are linked from everywhere and most from few places, as on the web.
/// Requests counted per host: [`crate::Stats::requests`] takes `h3.DOMAIN/p/1`.
/// Names resolve through a DNS server that answers every name with
/// `127.0.0.1` (see [`crate::dns`]), or `--resolve` rules.
#[derive(Clone, Debug)]
pub struct VirtualHosts {
    /// The domain the hosts are under (e.g. `sites.test`).
    pub domain: String,
    /// How many hosts.
    pub hosts: usize,
    /// Links to other hosts per page, besides the next host's root.
    pub cross_links: usize,
}

impl VirtualHosts {
    /// The name of host `k`.
    pub fn host(&self, k: usize) -> String {
        format!("h{k}.{}", self.domain)
    }

    /// Which host a `Host` header (port and case aside) names, if one of ours.
    pub(crate) fn index_of(&self, host_header: &str) -> Option<usize> {
        let name = host_header.rsplit_once(':').map_or(host_header, |(n, _)| n);
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let label = name.strip_suffix(&format!(".{}", self.domain.to_ascii_lowercase()))?;
        let k: usize = label.strip_prefix('h')?.parse().ok()?;
        (k < self.hosts && label == format!("h{k}")).then_some(k)
    }

    /// The other hosts page `page` (0 for `/`, i+1 for `/p/i`) of host `k`
    /// links to: the next host, then a power-law pick per cross link.
    pub(crate) fn targets(&self, k: usize, page: usize) -> Vec<usize> {
        if self.hosts < 2 {
            return Vec::new();
        }
        let mut out = vec![(k + 1) % self.hosts];
        for n in 0..self.cross_links {
            // A fixed hash, so every run links the same way; squaring the
            // uniform value skews the pick to low-numbered (popular) hosts.
            let mut x = (k as u64) << 40 ^ (page as u64) << 12 ^ n as u64;
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            x ^= x >> 29;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 32;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            out.push(((u * u) * self.hosts as f64) as usize % self.hosts);
        }
        out
    }
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            pages: 100,
            fanout: 10,
            page_size: 4096,
            latency: Duration::ZERO,
            robots_txt: None,
            sitemap_xml: None,
            extra_root_links: Vec::new(),
            gzip: false,
            specials: false,
            traps: false,
            record_starts: false,
            faults: crate::Faults::default(),
            vhosts: None,
            versions: None,
            bandwidth: None,
            script_share: 0.0,
            h2_max_streams: Some(DEFAULT_H2_MAX_STREAMS),
        }
    }
}

impl SiteConfig {
    /// The paths a complete crawl from `/` must fetch on the generated site:
    /// `/` and every `/p/{i}` (specials, traps and extra links excluded).
    pub fn page_paths(&self) -> Vec<String> {
        match &self.vhosts {
            None => page_paths(self.pages),
            Some(v) => (0..v.hosts)
                .flat_map(|k| {
                    let host = v.host(k);
                    page_paths(self.pages)
                        .into_iter()
                        .map(move |p| format!("{host}{p}"))
                })
                .collect(),
        }
    }

    /// A copy with [`ORIGIN_PLACEHOLDER`] replaced by `origin` everywhere.
    pub(crate) fn with_origin(&self, origin: &str) -> SiteConfig {
        let fill = |s: &String| s.replace(ORIGIN_PLACEHOLDER, origin);
        SiteConfig {
            robots_txt: self
                .robots_txt
                .as_ref()
                .map(|(code, body)| (*code, fill(body))),
            sitemap_xml: self.sitemap_xml.as_ref().map(fill),
            extra_root_links: self.extra_root_links.iter().map(fill).collect(),
            ..self.clone()
        }
    }
}

/// `/` followed by `/p/0` .. `/p/{pages-1}`.
pub(crate) fn page_paths(pages: usize) -> Vec<String> {
    std::iter::once("/".to_string())
        .chain((0..pages).map(|i| format!("/p/{i}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(hosts: usize) -> VirtualHosts {
        VirtualHosts {
            domain: "sites.test".into(),
            hosts,
            cross_links: 3,
        }
    }

    #[test]
    fn host_names_are_recognised_with_or_without_port() {
        let v = sites(10);
        assert_eq!(v.index_of("h3.sites.test:8080"), Some(3));
        assert_eq!(v.index_of("H9.Sites.Test."), Some(9));
        for other in [
            "h10.sites.test",
            "h03.sites.test",
            "x.sites.test",
            "h1.other.test",
            "127.0.0.1:80",
        ] {
            assert_eq!(v.index_of(other), None, "{other}");
        }
    }

    #[test]
    fn links_chain_every_host_and_favour_a_few() {
        let v = sites(1000);
        let mut linked = vec![0u32; 1000];
        for k in 0..1000 {
            let t = v.targets(k, 0);
            assert_eq!(t[0], (k + 1) % 1000, "the chain reaches every host");
            assert_eq!(t.len(), 4);
            for page in 0..10 {
                for &h in &v.targets(k, page)[1..] {
                    linked[h] += 1;
                }
            }
        }
        // The first tenth of hosts gets about a third of the cross links
        // (a power law: P(pick < x) = sqrt(x)), far more than a tenth.
        let top: u32 = linked[..100].iter().sum();
        let all: u32 = linked.iter().sum();
        assert!(top * 4 > all, "{top} of {all}");
        assert_eq!(v.targets(7, 3), v.targets(7, 3), "deterministic");
    }
}
