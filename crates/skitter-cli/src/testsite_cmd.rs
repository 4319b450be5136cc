//! `skitter testsite`: serve the local test site (see the `skitter-testsite`
//! crate) on loopback, for trying skitter offline and for `skitter bench`, which
//! runs it as a child process so the crawler's CPU and memory are measured alone.
//!
//! It prints its base URL as the first line on stdout, then serves until Ctrl-C,
//! SIGTERM, or end of standard input (so a parent that dies takes it down too).

use std::net::Ipv4Addr;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use skitter_testsite::{Faults, SiteConfig};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::flags;

/// Options of `skitter testsite`.
#[derive(Args, Debug, Clone)]
pub struct TestsiteArgs {
    /// Generated pages (`/p/0` … `/p/N-1`, plus `/`).
    #[arg(long, default_value_t = 1000)]
    pub pages: usize,
    /// Links from each page to its children (the pages form a tree).
    #[arg(long, default_value_t = 10)]
    pub fanout: usize,
    /// Bytes of HTML per page.
    #[arg(long, value_parser = flags::size, default_value = "4096")]
    pub page_size: u64,
    /// Delay before every response, e.g. 50ms.
    #[arg(long, value_parser = flags::duration, default_value = "0s")]
    pub latency: Duration,
    /// Bytes per second each response body moves at, after --latency (e.g.
    /// 400K: a 4 KiB page takes 10 ms more; a 304 nothing). Default: no limit.
    #[arg(long, value_parser = flags::size, value_name = "BYTES")]
    pub bandwidth: Option<u64>,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Also serve and link the special cases (redirects, errors, broken bodies…).
    #[arg(long)]
    pub specials: bool,
    /// Also serve and link infinite crawler traps (calendar, deep loops, session IDs).
    #[arg(long)]
    pub traps: bool,
    /// Share (0 to 1) of the pages /p/{i} that build their links in
    /// JavaScript (inline, by fetching JSON, or after a delay), for --render.
    #[arg(long, default_value_t = 0.0, value_name = "SHARE")]
    pub script_share: f64,
    /// Serve pages gzip-encoded to clients that accept it.
    #[arg(long)]
    pub gzip: bool,
    /// Fault modes, e.g. `fail=0.1,times=1,status=503,robots=2,rate=500,seed=7`
    /// (see the skitter-testsite crate's `fault` module for every key).
    #[arg(long, value_parser = parse_faults, value_name = "SPEC")]
    pub faults: Option<Faults>,
    /// Keep serving when standard input closes.
    #[arg(long)]
    pub ignore_stdin: bool,
    /// Also start test proxies on loopback, e.g. `good=700,dead=100,slow=100,refuse=100`
    /// (HTTP forward proxies; `dead` ones are ports with nothing listening), in
    /// an interleaved order, and write their list to --proxy-list-out.
    #[arg(long, value_parser = parse_fleet, value_name = "SPEC", requires = "proxy_list_out")]
    pub proxies: Option<Fleet>,
    /// How long a `slow` proxy waits before handling a request.
    #[arg(long, value_parser = flags::duration, default_value = "60s", value_name = "DURATION")]
    pub proxy_slow: Duration,
    /// Where --proxies writes its list (one proxy URL a line).
    #[arg(long, value_name = "FILE")]
    pub proxy_list_out: Option<std::path::PathBuf>,
    /// Serve N name-based virtual hosts `h0.DOMAIN` … `h{N-1}.DOMAIN`, each a
    /// site of --pages pages that also links to other hosts (a power law), and
    /// start a DNS server on loopback answering every name with 127.0.0.1.
    /// Prints `dns IP:PORT` and the first host's URL after the origin, for
    /// `skitter crawl --span-hosts --dns-server IP:PORT URL`.
    #[arg(long, value_name = "N")]
    pub vhosts: Option<usize>,
    /// The domain of --vhosts.
    #[arg(long, default_value = "sites.test", value_name = "DOMAIN")]
    pub vhost_domain: String,
    /// Links to other hosts per page with --vhosts (besides the next host).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub cross_links: usize,
    /// Pages change between crawl passes: this share of the pages changes at
    /// each pass (body, `ETag`, `Last-Modified`), and a GET of
    /// `/_testsite/next-pass` moves to the next pass. For recrawl tests.
    #[arg(long, value_name = "SHARE")]
    pub change: Option<f64>,
    /// With --change: this share of the pages is gone (410) from each pass on.
    #[arg(long, default_value_t = 0.0, value_name = "SHARE", requires = "change")]
    pub gone: f64,
    /// With --change: `honour` answers conditional requests with 304,
    /// `ignore` always sends the body, `absent` sends no validators.
    #[arg(long, default_value = "honour", value_parser = parse_validator_mode, requires = "change")]
    pub validators: skitter_testsite::ValidatorMode,
    /// Most requests one h2c connection may have open at once (0: no limit,
    /// so one connection holds them all).
    #[arg(long, default_value_t = skitter_testsite::DEFAULT_H2_MAX_STREAMS, value_name = "N")]
    pub h2_max_streams: u32,
    /// Serve no site of its own: relay every connection to ADDR (a loopback
    /// host:port, e.g. nginx serving real pages), each direction's bytes held
    /// for half of --rtt, as a network path of that round-trip time would.
    /// For measuring a crawl of a real server that waits on the network; the
    /// handshake itself is not delayed.
    #[arg(long, value_name = "ADDR", requires = "rtt")]
    pub relay: Option<std::net::SocketAddr>,
    /// The round-trip time --relay adds, e.g. 20ms.
    #[arg(long, value_parser = flags::duration, requires = "relay", value_name = "DURATION")]
    pub rtt: Option<Duration>,
}

/// How many test proxies of each kind `--proxies` starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fleet {
    good: usize,
    dead: usize,
    slow: usize,
    refuse: usize,
}

/// Parses a `--proxies` spec.
fn parse_fleet(spec: &str) -> Result<Fleet, String> {
    let mut fleet = Fleet::default();
    for part in spec.split(',') {
        let (key, n) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?}: expected KIND=N"))?;
        let n: usize = n.parse().map_err(|_| format!("{part:?}: not a count"))?;
        match key {
            "good" => fleet.good = n,
            "dead" => fleet.dead = n,
            "slow" => fleet.slow = n,
            "refuse" => fleet.refuse = n,
            _ => return Err(format!("{key:?}: one of good, dead, slow, refuse")),
        }
    }
    Ok(fleet)
}

/// Starts the fleet and writes its list, kinds interleaved as evenly as their
/// counts allow (so no kind comes in one block).
fn start_fleet(
    fleet: Fleet,
    slow: Duration,
    out: &std::path::Path,
) -> anyhow::Result<Vec<skitter_testsite::TestProxy>> {
    use skitter_testsite::{ProxyMode, TestProxy, dead_proxy_url};
    let kinds = [
        (fleet.good, 0u8),
        (fleet.dead, 1),
        (fleet.slow, 2),
        (fleet.refuse, 3),
    ];
    let total: usize = kinds.iter().map(|(n, _)| n).sum();
    // Each proxy's place: its rank within its kind spread over the whole list.
    let mut order: Vec<(f64, u8)> = kinds
        .iter()
        .flat_map(|&(n, kind)| (0..n).map(move |i| ((i as f64 + 0.5) / n as f64, kind)))
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut running = Vec::with_capacity(total);
    let mut urls = Vec::with_capacity(total);
    for &(_, kind) in &order {
        let mode = match kind {
            0 => ProxyMode::Good,
            1 => {
                urls.push(None);
                continue;
            }
            2 => ProxyMode::Slow(slow),
            _ => ProxyMode::Refuse,
        };
        let proxy = TestProxy::http(mode, None)?;
        urls.push(Some(proxy.url()));
        running.push(proxy);
    }
    // Dead ones last: a port freed earlier could be taken by a later proxy.
    let mut list = String::new();
    for url in urls {
        let url = match url {
            Some(url) => url,
            None => dead_proxy_url()?,
        };
        list.push_str(&url);
        list.push('\n');
    }
    std::fs::write(out, list).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(running)
}

impl TestsiteArgs {
    /// The site configuration these flags describe.
    pub fn site_config(&self) -> SiteConfig {
        SiteConfig {
            pages: self.pages,
            fanout: self.fanout,
            page_size: self.page_size as usize,
            latency: self.latency,
            bandwidth: self.bandwidth,
            specials: self.specials,
            traps: self.traps,
            gzip: self.gzip,
            script_share: self.script_share,
            h2_max_streams: (self.h2_max_streams > 0).then_some(self.h2_max_streams),
            faults: self.faults.clone().unwrap_or_default(),
            vhosts: self.vhosts.map(|hosts| skitter_testsite::VirtualHosts {
                domain: self.vhost_domain.to_ascii_lowercase(),
                hosts,
                cross_links: self.cross_links,
            }),
            versions: self.change.map(|change| skitter_testsite::Versions {
                change,
                gone: self.gone,
                validators: self.validators,
                ..skitter_testsite::Versions::default()
            }),
            ..SiteConfig::default()
        }
    }
}

/// Serves until stopped.
pub async fn run(args: TestsiteArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    if let Some(to) = args.relay {
        // Like the test proxies: never a way off the machine.
        anyhow::ensure!(
            to.ip().is_loopback(),
            "--relay {to}: not a loopback address"
        );
    }
    let listener = skitter_testsite::listen(args.port)
        .and_then(tokio::net::TcpListener::from_std)
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let addr = listener.local_addr()?;
    println!("http://{addr}/");
    let stop = cancel.clone();
    if !args.ignore_stdin {
        tokio::spawn(async move {
            let mut stdin = tokio::io::stdin();
            let mut buf = [0u8; 256];
            while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
            stop.cancel();
        });
    }
    if let (Some(to), Some(rtt)) = (args.relay, args.rtt) {
        skitter_testsite::delay::relay(listener, to, rtt / 2, cancel.cancelled_owned())
            .await
            .context("relay failed")?;
        return Ok(0);
    }
    let _dns = match args.vhosts {
        Some(_) => {
            use skitter_testsite::dns::{Record, Reply, Responder};
            let dns = Responder::builder()
                .fallback(Reply::Records(vec![Record::A(Ipv4Addr::LOCALHOST)]))
                .faults(args.faults.clone().unwrap_or_default())
                .bind()
                .await
                .context("cannot start the test DNS server")?;
            println!("dns {}", dns.addr());
            println!("http://h0.{}:{}/", args.vhost_domain, addr.port());
            Some(dns)
        }
        None => None,
    };
    let _proxies = match (args.proxies, &args.proxy_list_out) {
        (Some(fleet), Some(out)) => start_fleet(fleet, args.proxy_slow, out)?,
        _ => Vec::new(),
    };
    skitter_testsite::serve(args.site_config(), listener, cancel.cancelled_owned())
        .await
        .context("test site failed")?;
    Ok(0)
}

/// Parses `--validators`.
fn parse_validator_mode(s: &str) -> Result<skitter_testsite::ValidatorMode, String> {
    use skitter_testsite::ValidatorMode;
    match s {
        "honour" | "honor" => Ok(ValidatorMode::Honour),
        "ignore" => Ok(ValidatorMode::Ignore),
        "absent" => Ok(ValidatorMode::Absent),
        _ => Err(format!("{s:?}: expected honour, ignore or absent")),
    }
}

/// Parses a `--faults` spec.
pub fn parse_faults(spec: &str) -> Result<Faults, String> {
    spec.parse()
}
