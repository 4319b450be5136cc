//! The request options `crawl` and `fetch` share (retries, timeouts, headers,
//! proxy, TLS, grace), and how they map onto the library's fetch configuration
//! and retry policy: declared once, so the two commands cannot drift apart.

use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};
use skitter::fetch::FetchConfig;
use skitter::retry::RetryPolicy;

use crate::flags;

/// Request options of `crawl` and `fetch`. Serialisable, as part of the crawl
/// options a shared crawl stores in Redis.
#[derive(Args, Debug, Clone, Serialize, Deserialize)]
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
    /// Extra request header 'Name: value'; repeatable.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Send requests through this proxy (http://, https://, socks5://).
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,
    /// Accept invalid TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// After Ctrl-C, how long in-flight requests may take to finish.
    #[arg(long, value_parser = flags::duration, default_value = "5s", value_name = "DURATION")]
    pub grace: Duration,
}

impl RequestFlags {
    /// The fetch configuration these flags describe, with the given body cap.
    pub fn fetch_config(&self, max_body_size: u64) -> anyhow::Result<FetchConfig> {
        let mut fetch = FetchConfig {
            connect_timeout: self.connect_timeout,
            read_timeout: self.read_timeout,
            total_timeout: self.timeout,
            max_body_size,
            insecure: self.insecure,
            proxy: self.proxy.clone(),
            headers: flags::headers(&self.headers)?,
            ..FetchConfig::default()
        };
        if let Some(ua) = &self.user_agent {
            fetch.user_agent = ua.clone();
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
