//! The proxy verifier behind `skitter proxies check`: every proxy of a list
//! tried against a test URL, at most N at once, each under a timeout, the
//! results streamed as they complete.
//!
//! A proxy is good when the test URL answered 2xx through it within the
//! timeout; its latency is the whole request, body included. Anything else is
//! bad, with the reason: the proxy's refusal, a timeout, a connect error, or
//! the test URL's own answer through it. Messages never carry the proxy's
//! credentials; [`CheckResult::proxy`] keeps them, since a list of good
//! proxies is useless without them.
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use skitter::fetch::proxy_check::{CheckConfig, check};
//!
//! # async fn demo() {
//! let config = CheckConfig::new("http://127.0.0.1:8080/".parse().unwrap());
//! let proxies = vec!["http://127.0.0.1:3128".to_string()];
//! let mut results = std::pin::pin!(check(proxies, config));
//! while let Some(r) = results.next().await {
//!     println!("{} {:?}", r.shown, r.outcome);
//! }
//! # }
//! ```

use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use serde::Serialize;
use url::Url;

use crate::base::outcome::{ErrorKind, FetchFailure};
use crate::fetch::client::SharedTls;
use crate::fetch::proxy_pool::{scrub, shown_proxy};
use crate::fetch::{FetchConfig, Fetcher, Keep};

/// How proxies are checked.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// The URL fetched through each proxy.
    pub test_url: Url,
    /// Proxies tried at once (default 100).
    pub concurrency: usize,
    /// Time allowed per proxy, connect to last body byte (default 10 s).
    pub timeout: Duration,
    /// Other request settings (user agent, TLS, address policy); its proxy
    /// fields and timeouts are set per check.
    pub fetch: FetchConfig,
}

impl CheckConfig {
    /// Defaults for checking against `test_url` (whose host counts as named
    /// by the user, for the address policy and for the user's headers).
    pub fn new(test_url: Url) -> CheckConfig {
        let mut fetch = FetchConfig::default();
        fetch
            .named_hosts
            .extend(test_url.host_str().map(str::to_owned));
        fetch
            .named_origins
            .push(test_url.origin().ascii_serialization());
        CheckConfig {
            test_url,
            concurrency: 100,
            timeout: Duration::from_secs(10),
            fetch,
        }
    }
}

/// `text` as a test URL: an absolute `http` or `https` URL with a host.
pub fn parse_test_url(text: &str) -> Option<Url> {
    Url::parse(text)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// The result of checking one proxy.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// The proxy as given, credentials included: not for printing.
    #[serde(skip)]
    pub proxy: String,
    /// The proxy as shown, credentials removed.
    pub shown: String,
    /// Its position in the list (0-based).
    pub index: usize,
    /// The latency of a good proxy, or why it is bad.
    #[serde(skip)]
    pub outcome: Result<Duration, FetchFailure>,
}

impl CheckResult {
    /// Whether the proxy is good.
    pub fn is_good(&self) -> bool {
        self.outcome.is_ok()
    }

    /// One JSON object: `{"proxy":…,"ok":true,"latency_ms":…}` or
    /// `{"proxy":…,"ok":false,"error_kind":…,"error":…}`.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.outcome {
            Ok(latency) => serde_json::json!({
                "proxy": self.shown,
                "ok": true,
                "latency_ms": latency.as_secs_f64() * 1000.0,
            }),
            Err(f) => serde_json::json!({
                "proxy": self.shown,
                "ok": false,
                "error_kind": f.kind.as_str(),
                "error": f.message,
            }),
        }
    }
}

/// Checks every proxy of `proxies` (at most [`CheckConfig::concurrency`] at
/// once); results come in the order they complete.
pub fn check(proxies: Vec<String>, config: CheckConfig) -> impl Stream<Item = CheckResult> {
    let concurrency = config.concurrency.max(1);
    // Built once for every proxy's client; a failure shows in each result.
    let tls = SharedTls::new(&config.fetch).map_err(|e| e.to_string());
    stream::iter(proxies.into_iter().enumerate())
        .map(move |(index, proxy)| {
            let (config, tls) = (config.clone(), tls.clone());
            async move { check_one(index, proxy, &config, tls).await }
        })
        .buffer_unordered(concurrency)
}

/// Checks one proxy.
async fn check_one(
    index: usize,
    proxy: String,
    config: &CheckConfig,
    tls: Result<Option<SharedTls>, String>,
) -> CheckResult {
    let fetch = FetchConfig {
        proxy: Some(proxy.clone()),
        proxy_list: Vec::new(),
        connect_timeout: config.timeout,
        read_timeout: config.timeout,
        total_timeout: config.timeout,
        ..config.fetch.clone()
    };
    let started = tokio::time::Instant::now();
    let attempt = async {
        let setup = |message: String| FetchFailure {
            kind: ErrorKind::Other,
            message,
        };
        let fetcher =
            Fetcher::with_tls(fetch, tls.map_err(setup)?).map_err(|e| setup(e.to_string()))?;
        fetcher.get(&config.test_url, Keep::Html).await
    };
    let outcome = match tokio::time::timeout(config.timeout, attempt).await {
        Err(_) => Err(FetchFailure {
            kind: ErrorKind::Timeout,
            message: format!("no answer within {:?}", config.timeout),
        }),
        Ok(Err(mut f)) => {
            f.message = scrub(&f.message, &proxy);
            Err(f)
        }
        Ok(Ok(resp)) if (200..300).contains(&resp.status) => Ok(started.elapsed()),
        Ok(Ok(resp)) => Err(FetchFailure {
            kind: ErrorKind::Proxy,
            message: format!("answered {} through it", resp.status),
        }),
    };
    CheckResult {
        shown: shown_proxy(&proxy),
        proxy,
        index,
        outcome,
    }
}

/// The figures of a finished check.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CheckSummary {
    /// Proxies that passed.
    pub good: u64,
    /// Proxies that failed.
    pub bad: u64,
    /// Latency percentiles of the good ones, in milliseconds (0 when none).
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

impl CheckSummary {
    /// The summary of `results`.
    pub fn of(results: &[CheckResult]) -> CheckSummary {
        let mut latencies: Vec<Duration> = results
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok().copied())
            .collect();
        latencies.sort();
        let pct = |q: f64| {
            if latencies.is_empty() {
                return 0.0;
            }
            let rank = ((q * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
            latencies[rank - 1].as_secs_f64() * 1000.0
        };
        CheckSummary {
            good: latencies.len() as u64,
            bad: (results.len() - latencies.len()) as u64,
            p50_ms: pct(0.5),
            p90_ms: pct(0.9),
            p99_ms: pct(0.99),
        }
    }
}

/// The good proxies of `results`, fastest first, as a list `--proxy-list`
/// reads (credentials kept: the file is for the user).
pub fn good_list(results: &[CheckResult]) -> String {
    let mut good: Vec<(&Duration, &str)> = results
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok().map(|d| (d, r.proxy.as_str())))
        .collect();
    good.sort();
    let mut out = String::from("# good proxies, fastest first (skitter proxies check)\n");
    for (latency, proxy) in good {
        out.push_str(&format!(
            "{proxy}  # {:.1} ms\n",
            latency.as_secs_f64() * 1000.0
        ));
    }
    out
}
