//! The request options `crawl` and `fetch` share (retries, timeouts, headers,
//! proxy, TLS, the address policy, grace), and how they map onto the library's
//! fetch configuration and retry policy: declared once, so the two commands
//! cannot drift apart.

use std::time::Duration;

use clap::Args;
use skitter::fetch::retry::RetryPolicy;
use skitter::fetch::{FetchConfig, PrivateAccess, Rotation};

use crate::flags;

/// Request options of `crawl` and `fetch`. Serialisable, as part of the crawl
/// options a shared crawl stores in Redis.
#[derive(Args, Debug, Clone)]
pub struct RequestFlags {
    /// Attempts per URL for transient failures (transport errors, 408, 429, 5xx).
    #[arg(long, alias = "max_tries", default_value_t = 4, value_name = "N")]
    pub max_tries: u32,
    /// First retry wait of a URL; four times as long per attempt after (with
    /// jitter), capped at 30s. Host-wide slow-downs (429, Retry-After, distress)
    /// are separate and protect the server.
    #[arg(long, value_parser = flags::duration, default_value = "100ms", value_name = "DURATION")]
    pub retry_delay: Duration,
    /// Longest Retry-After honoured; longer ones are cut to this.
    #[arg(long, value_parser = flags::duration, default_value = "60s", value_name = "DURATION")]
    pub max_retry_after: Duration,
    /// The User-Agent header [default: skitter/VERSION].
    #[arg(long, value_name = "STRING")]
    pub user_agent: Option<String>,
    /// Time allowed to connect (TCP and TLS).
    #[arg(long, value_parser = flags::duration, default_value = "10s", value_name = "DURATION")]
    pub connect_timeout: Duration,
    /// Longest silence while reading a response.
    #[arg(long, value_parser = flags::duration, default_value = "30s", value_name = "DURATION")]
    pub read_timeout: Duration,
    /// Longest time for one attempt, body included.
    #[arg(long, value_parser = flags::duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Slowest body accepted, in bytes per second, judged over each
    /// --read-timeout of the body: a body bringing less fails the attempt as a
    /// timeout (a tarpit sending a byte every few seconds is never silent long
    /// enough for --read-timeout). 0 turns it off.
    #[arg(long, default_value_t = skitter::fetch::DEFAULT_MIN_TRANSFER_RATE, value_name = "BYTES")]
    pub min_transfer_rate: u64,
    /// Extra request header 'Name: value'; repeatable. Sent only to the
    /// origins you named (scheme, host and port): a crawl's roots, a fetch
    /// input's own (not to other hosts a crawl spans, nor to a redirect
    /// elsewhere).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Send -H headers with every request: to every host a crawl spans and to
    /// redirect targets elsewhere.
    #[arg(long)]
    pub send_headers_everywhere: bool,
    /// Keep the Authorization, Proxy-Authorization and Cookie values of -H
    /// headers in WARC request records (by default they read [redacted]).
    #[arg(long)]
    pub keep_credentials: bool,
    /// Keep the value of the -H header NAME in WARC request records; every
    /// other -H value reads [redacted] there, as it may be a secret
    /// (X-Api-Key, PRIVATE-TOKEN). Repeatable; any case.
    #[arg(long = "archive-header", value_name = "NAME")]
    pub archive_headers: Vec<String>,
    /// Let every request reach loopback and private addresses (by default only
    /// requests to the hosts and ports you named do: crawl roots, fetch
    /// inputs, --resolve hosts).
    /// Link-local and cloud-metadata addresses are never reached.
    #[arg(long, conflicts_with = "deny_private")]
    pub allow_private: bool,
    /// Let no request reach loopback or private addresses, not even those of
    /// the hosts and ports you named.
    #[arg(long)]
    pub deny_private: bool,
    /// Send requests through this proxy (http://, https://, socks5://). An HTTP
    /// or socks5h:// proxy resolves names itself, so only IP-literal URLs are
    /// address-checked through it.
    #[arg(long, value_name = "URL", conflicts_with = "proxy_list")]
    pub proxy: Option<String>,
    /// Rotate requests over the proxies listed in FILE: one URL a line
    /// (http://, https://, socks5://, socks5h://, with user:pass@ if needed),
    /// # comments and blank lines ignored. A proxy that fails is benched (1s,
    /// doubling to 60s) and the request retried on another.
    #[arg(long, value_name = "FILE")]
    pub proxy_list: Option<std::path::PathBuf>,
    /// How requests spread over --proxy-list: round-robin (each request the
    /// next proxy: the whole pool works for one site) or sticky (each host
    /// keeps one proxy: a site sees one client address).
    #[arg(long, value_enum, default_value_t = ProxyRotation::RoundRobin, requires = "proxy_list")]
    pub proxy_rotation: ProxyRotation,
    /// The proxies of --proxy-list, read once (so workers of a shared crawl,
    /// which read these options from Redis, need not have the file).
    #[arg(skip)]
    pub proxies: Vec<String>,
    /// Accept invalid TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// Use HTTP/1.1 only (HTTP/2 is used when a server offers it by ALPN).
    #[arg(long)]
    pub http1_only: bool,
    /// Speak HTTP/2 from the first byte (h2c with prior knowledge over
    /// http://): only for servers known to, since any other fails every
    /// request. Many requests then share a connection, so --max-connections
    /// may be far below --max-tasks (--concurrency).
    #[arg(long, conflicts_with = "http1_only")]
    pub http2_prior_knowledge: bool,
    /// Resolve HOST to ADDR without asking DNS (curl's --resolve; the port is
    /// accepted for curl's syntax, the address serves every port of HOST);
    /// repeatable. A host given here counts as named: it may be on loopback.
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// Ask this name server (IP or IP:PORT, port 53 by default) instead of the
    /// system's; repeatable.
    #[arg(long, value_name = "IP[:PORT]")]
    pub dns_server: Vec<String>,
    /// Name lookups in flight at most; answers are cached for their TTL.
    #[arg(long, default_value_t = 64, value_parser = crate::flags::count, value_name = "N")]
    pub max_dns_lookups: usize,
    /// Most connections open at once, idle ones kept for reuse included
    /// [default: half the open-file limit, at most 16384, or --max-tasks
    /// (--concurrency) when that is more]. At the cap, a new connection
    /// closes those of the host idle longest, or waits (the wait counts in
    /// --connect-timeout). More than the open-file limit leaves room for (it
    /// less 512) is an error, as are more requests in flight than that with
    /// no cap given; a cap under --max-tasks is allowed (HTTP/2 runs many
    /// requests on one connection).
    #[arg(long, value_parser = crate::flags::count, value_name = "N")]
    pub max_connections: Option<usize>,
    /// After Ctrl-C, how long in-flight requests may take to finish.
    #[arg(long, value_parser = flags::duration, default_value = "5s", value_name = "DURATION")]
    pub grace: Duration,
}

/// `--proxy-rotation`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProxyRotation {
    /// Each request takes the next proxy.
    #[default]
    RoundRobin,
    /// Each host keeps one proxy.
    Sticky,
}

/// The largest proxy list read (a list is a few bytes a proxy).
const MAX_PROXY_LIST: u64 = 16 << 20;

/// Reads and checks a proxy list file; the error names the bad line.
pub fn read_proxy_list(path: &std::path::Path) -> anyhow::Result<Vec<String>> {
    use anyhow::Context as _;
    use std::io::Read as _;
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read proxy list {}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_PROXY_LIST + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read proxy list {}", path.display()))?;
    if text.len() as u64 > MAX_PROXY_LIST {
        anyhow::bail!("proxy list {} is larger than 16 MiB", path.display());
    }
    let proxies = skitter::fetch::proxy_pool::parse_proxy_list(&text)
        .with_context(|| format!("bad proxy list {}", path.display()))?;
    if proxies.is_empty() {
        anyhow::bail!("proxy list {} has no proxies", path.display());
    }
    Ok(proxies)
}

impl RequestFlags {
    /// Reads `--proxy-list` into [`RequestFlags::proxies`], unless that was
    /// done already (a worker's options come from Redis with the list in them).
    pub fn load_proxy_list(&mut self) -> anyhow::Result<()> {
        if let Some(path) = &self.proxy_list
            && self.proxies.is_empty()
        {
            self.proxies = read_proxy_list(path)?;
        }
        Ok(())
    }

    /// The fetch configuration these flags describe, with the given body cap.
    pub fn fetch_config(&self, max_body_size: u64) -> anyhow::Result<FetchConfig> {
        let mut fetch = FetchConfig {
            connect_timeout: self.connect_timeout,
            read_timeout: self.read_timeout,
            total_timeout: self.timeout,
            min_transfer_rate: self.min_transfer_rate,
            max_body_size,
            insecure: self.insecure,
            proxy: self.proxy.clone(),
            proxy_list: match (&self.proxy_list, self.proxies.is_empty()) {
                (Some(path), true) => read_proxy_list(path)?,
                _ => self.proxies.clone(),
            },
            proxy_rotation: match self.proxy_rotation {
                ProxyRotation::RoundRobin => Rotation::RoundRobin,
                ProxyRotation::Sticky => Rotation::Sticky,
            },
            headers: flags::headers(&self.headers)?,
            headers_everywhere: self.send_headers_everywhere,
            keep_credentials: self.keep_credentials,
            archive_headers: self.archive_headers.clone(),
            private_access: match (self.allow_private, self.deny_private) {
                (true, _) => PrivateAccess::Allow,
                (_, true) => PrivateAccess::Deny,
                _ => PrivateAccess::Named,
            },
            ..FetchConfig::default()
        };
        if let Some(ua) = &self.user_agent {
            fetch.user_agent = ua.clone();
        }
        fetch.dns.max_lookups = self.max_dns_lookups;
        fetch.max_connections = self.max_connections;
        fetch.http1_only = self.http1_only;
        fetch.http2_prior_knowledge = self.http2_prior_knowledge;
        for rule in &self.resolve {
            fetch.dns.overrides.push(flags::resolve_rule(rule)?);
        }
        if !self.dns_server.is_empty() {
            let servers = self
                .dns_server
                .iter()
                .map(|s| flags::dns_server(s))
                .collect::<anyhow::Result<Vec<_>>>()?;
            fetch.dns.servers = Some(servers);
        }
        Ok(fetch)
    }

    /// The retry policy these flags describe.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_tries: self.max_tries,
            base_delay: self.retry_delay,
            max_retry_after: self.max_retry_after,
            ..RetryPolicy::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        request: RequestFlags,
    }

    #[test]
    fn the_shown_request_settings_hide_secrets() {
        let cli = Cli::parse_from([
            "t",
            "-H",
            "Authorization: Bearer S3CRET",
            "--proxy",
            "http://user:S3CRET@proxy:3128",
        ]);
        let mut request = cli.request;
        request.proxies = vec!["socks5h://u:S3CRET@p2:1080".into()];
        let fetch = request.fetch_config(1 << 20).unwrap();
        let shown = serde_json::to_string(&fetch.redacted()).unwrap();
        assert!(!shown.contains("S3CRET"), "{shown}");
        assert!(
            shown.contains("[\"Authorization\",\"[redacted]\"]"),
            "{shown}"
        );
        assert!(
            shown.contains("proxy:3128") && shown.contains("p2:1080"),
            "{shown}"
        );
        // The settings themselves keep them: workers of a shared crawl need them.
        assert!(serde_json::to_string(&fetch).unwrap().contains("S3CRET"));
    }

    #[test]
    fn private_access_flags() {
        let access = |args: &[&str]| {
            let cli = Cli::parse_from(std::iter::once("t").chain(args.iter().copied()));
            cli.request.fetch_config(1).unwrap().private_access
        };
        assert_eq!(access(&[]), PrivateAccess::Named);
        assert_eq!(access(&["--allow-private"]), PrivateAccess::Allow);
        assert_eq!(access(&["--deny-private"]), PrivateAccess::Deny);
        assert!(Cli::try_parse_from(["t", "--allow-private", "--deny-private"]).is_err());
    }
}
