//! A minimal HTTP client for the test-site tests: hyper-util's legacy client
//! (no redirects followed, no decoding), so tests see exactly what was served.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::header::HeaderName;
use hyper::{HeaderMap, Request, StatusCode, Version};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use skitter_testsite::RunningSite;

/// One response, fully read.
pub struct Got {
    pub status: StatusCode,
    pub version: Version,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub type HttpClient = Client<HttpConnector, Empty<Bytes>>;

pub fn h1() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

pub fn h2c() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

/// GETs `url` with extra headers and reads the whole body.
pub async fn get_with(
    client: &HttpClient,
    url: &str,
    headers: &[(&str, &str)],
) -> Result<Got, String> {
    let mut req = Request::get(url);
    for (name, value) in headers {
        req = req.header(HeaderName::from_bytes(name.as_bytes()).unwrap(), *value);
    }
    let resp = client
        .request(req.body(Empty::new()).unwrap())
        .await
        .map_err(|e| e.to_string())?;
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok(Got {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        body,
    })
}

pub async fn get(client: &HttpClient, url: &str) -> Got {
    get_with(client, url, &[])
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

/// The `href` values of an HTML page, in order.
pub fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(String::from)
        .collect()
}

/// Waits until the site has received `n` requests (they are sent concurrently
/// by spawned tasks); gives up after a generous bound so a bug fails, not hangs.
pub async fn wait_for_requests(site: &RunningSite, n: u64) {
    for _ in 0..2000 {
        if site.stats().total_requests >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!(
        "site saw {} requests, expected {n}",
        site.stats().total_requests
    );
}
