//! Request handling: count the request, wait the configured latency, pick
//! the page for the path, gzip it if asked, and attach the in-flight guard.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use hyper::body::Incoming;
use hyper::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, HeaderValue, VARY};
use hyper::{HeaderMap, Request, Response, StatusCode};
use tokio_util::sync::CancellationToken;

use crate::body::{Aborted, SiteBody};
use crate::config::SiteConfig;
use crate::fault::Fault;
use crate::number::page_index;
use crate::reply::{HTML, reply};
use crate::stats::Counters;
use crate::{page, special, trap};

/// How long `/hang` waits before it finally answers (shutdown ends it sooner).
const HANG: Duration = Duration::from_secs(3600);

/// Everything a request handler needs, shared by all connections.
pub(crate) struct Site {
    /// The configuration, with the origin placeholder filled in.
    pub(crate) config: SiteConfig,
    /// `http://127.0.0.1:PORT`.
    pub(crate) origin: String,
    pub(crate) counters: Arc<Counters>,
    /// Which URLs fail, and how (see `fault`).
    pub(crate) faults: crate::fault::FaultState,
    /// Cancelled when the site shuts down: ends hangs, stalls and latency waits.
    pub(crate) shutdown: CancellationToken,
    /// The current pass, when pages change between passes (see `versions`).
    pub(crate) pass: crate::versions::Pass,
}

impl Site {
    /// The port the site listens on (from its origin).
    fn origin_port(&self) -> u16 {
        self.origin
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or(80)
    }
}

/// Serves one request.
pub(crate) async fn handle(
    site: Arc<Site>,
    req: Request<Incoming>,
) -> Result<Response<SiteBody>, Aborted> {
    let uri = req.uri();
    let vhost = site.config.vhosts.as_ref().and_then(|v| {
        // HTTP/2 names the host in the request's authority (`:authority`),
        // HTTP/1.1 in its `Host` header.
        let host = match uri.authority() {
            Some(authority) => authority.as_str(),
            None => req.headers().get(hyper::header::HOST)?.to_str().ok()?,
        };
        Some((v, v.index_of(host)?))
    });
    let path_and_query = uri.path_and_query().map_or("/", |pq| pq.as_str());
    let name = vhost.map(|(v, k)| v.host(k)).unwrap_or_default();
    let (count, in_flight) = site.counters.arrive(&format!("{name}{path_and_query}"));
    if req.version() == hyper::Version::HTTP_2 {
        site.counters.http2();
    }
    if !site.config.latency.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(site.config.latency) => {}
            () = site.shutdown.cancelled() => return Err(Aborted("shutdown")),
        }
    }
    let target = crate::fault::Target {
        host: vhost.map_or(0, |(_, k)| k),
        name: &name,
        path: uri.path(),
    };
    if let Some(fault) = site.faults.judge(target, site.pass.get()) {
        return serve_fault(&site, fault).await;
    }
    if site.config.versions.is_some() && uri.path() == crate::versions::NEXT_PASS_PATH {
        let pass = site.pass.advance();
        return Ok(reply(
            StatusCode::OK,
            Some("text/plain; charset=utf-8"),
            format!("{pass}\n"),
        ));
    }
    let checked = crate::check::route(
        req.method(),
        uri.path(),
        count,
        site.origin_port(),
        &site.shutdown,
    );
    if let Some(resp) = checked.await {
        let mut resp = resp?;
        resp.body_mut().hold(in_flight);
        return Ok(resp);
    }
    let mut resp = match uri.path() {
        "/hang" => hang(&site.shutdown).await?,
        path => route(&site, path, uri.query(), count),
    };
    if let Some((v, k)) = vhost {
        link_hosts(&mut resp, v, k, uri.path(), site.origin_port());
    }
    if let Some(versions) = &site.config.versions
        && resp.status() == StatusCode::OK
        && let Some(slot) = crate::versions::slot_of(uri.path(), site.config.pages)
        && crate::versions::apply(versions, site.pass.get(), slot, req.headers(), &mut resp)
    {
        site.counters.not_modified();
    }
    if site.config.gzip {
        gzip(&mut resp, req.headers());
    }
    if let Some(rate) = site.config.bandwidth.filter(|r| *r > 0)
        && let Some(body) = resp.body().full_bytes()
        && !body.is_empty()
    {
        let transfer = std::time::Duration::from_secs_f64(body.len() as f64 / rate as f64);
        tokio::select! {
            () = tokio::time::sleep(transfer) => {}
            () = site.shutdown.cancelled() => return Err(Aborted("shutdown")),
        }
    }
    resp.body_mut().hold(in_flight);
    Ok(resp)
}

/// Serves a fault: a stall first (if configured), then a status or a reset.
async fn serve_fault(site: &Site, fault: Fault) -> Result<Response<SiteBody>, Aborted> {
    let stall = site.faults.stall();
    if !stall.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(stall) => {}
            () = site.shutdown.cancelled() => return Err(Aborted("shutdown")),
        }
    }
    match fault {
        Fault::Reset => Err(Aborted("fault: reset")),
        Fault::Status(code, retry_after) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            let mut resp = reply(status, Some(HTML), "<p>try again later</p>");
            if let Some(secs) = retry_after {
                resp.headers_mut()
                    .insert(hyper::header::RETRY_AFTER, HeaderValue::from(secs));
            }
            Ok(resp)
        }
    }
}

async fn hang(shutdown: &CancellationToken) -> Result<Response<SiteBody>, Aborted> {
    tokio::select! {
        () = tokio::time::sleep(HANG) => Ok(reply(StatusCode::OK, Some(HTML), "<p>finally</p>")),
        () = shutdown.cancelled() => Err(Aborted("shutdown")),
    }
}

fn route(site: &Site, path: &str, query: Option<&str>, count: u64) -> Response<SiteBody> {
    let config = &site.config;
    let found = match path {
        "/" => Some(reply(StatusCode::OK, Some(HTML), page::root(config))),
        "/robots.txt" => config.robots_txt.as_ref().map(|(code, body)| {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            reply(status, Some("text/plain; charset=utf-8"), body.clone())
        }),
        "/sitemap.xml" => config
            .sitemap_xml
            .as_ref()
            .map(|body| reply(StatusCode::OK, Some("application/xml"), body.clone())),
        _ => match path.strip_prefix("/p/").and_then(page_index) {
            Some(i) => page::page(config, &site.origin, i)
                .map(|html| reply(StatusCode::OK, Some(HTML), html)),
            None => crate::script::route(config, path)
                .or_else(|| special::route(path, count, &site.shutdown))
                .or_else(|| trap::route(path, query))
                .or_else(|| crate::listing::route(path))
                .or_else(|| crate::items::route(path))
                .or_else(|| crate::docs::route(path))
                .or_else(|| crate::flags::route(path))
                .or_else(|| crate::paged::route(path, query))
                .or_else(|| {
                    config.versions.as_ref()?;
                    crate::versions::new_page(path, config.pages)
                }),
        },
    };
    found.unwrap_or_else(|| reply(StatusCode::NOT_FOUND, Some(HTML), "<h1>Not found</h1>"))
}

/// Adds the links to other virtual hosts to a generated page of host `k`.
fn link_hosts(
    resp: &mut Response<SiteBody>,
    v: &crate::config::VirtualHosts,
    k: usize,
    path: &str,
    port: u16,
) {
    let page = match path {
        "/" => 0,
        p => match p.strip_prefix("/p/").and_then(page_index) {
            Some(i) => i + 1,
            None => return,
        },
    };
    let Some(html) = resp.body().full_bytes() else {
        return;
    };
    // Spliced as bytes: the page is ours and ASCII, and a broad bench serves a
    // million of these, so neither a UTF-8 check nor a reformat of the page.
    const END: &[u8] = b"</body>";
    let at = html
        .windows(END.len())
        .rposition(|w| w == END)
        .unwrap_or(html.len());
    let mut out = Vec::with_capacity(html.len() + 64 * (v.cross_links + 1));
    out.extend_from_slice(&html[..at]);
    for t in v.targets(k, page) {
        // Writing into a Vec cannot fail.
        let _ = writeln!(out, "<a href=\"http://{}:{port}/\">Site {t}</a>", v.host(t));
    }
    out.extend_from_slice(&html[at..]);
    *resp.body_mut() = SiteBody::full(out);
}

/// Gzips a successful whole-buffer HTML response when the client accepts it.
fn gzip(resp: &mut Response<SiteBody>, req_headers: &HeaderMap) {
    // Pages and robots.txt (text/plain) are compressed, as real servers do.
    let is_html = resp.headers().get(CONTENT_TYPE).is_some_and(|ct| {
        ct.as_bytes().starts_with(b"text/html") || ct.as_bytes().starts_with(b"text/plain")
    });
    if resp.status() != StatusCode::OK || !is_html {
        return;
    }
    resp.headers_mut()
        .insert(VARY, HeaderValue::from_static("accept-encoding"));
    let accepted = req_headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .any(|v| v.to_str().is_ok_and(accepts_gzip));
    let Some(plain) = resp.body().full_bytes().filter(|_| accepted) else {
        return;
    };
    let mut encoder = GzEncoder::new(
        Vec::with_capacity(plain.len() / 2 + 64),
        Compression::fast(),
    );
    if encoder.write_all(plain).is_err() {
        return;
    }
    if let Ok(zipped) = encoder.finish() {
        *resp.body_mut() = SiteBody::full(zipped);
        resp.headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
}

/// Whether an `Accept-Encoding` value allows gzip: listed (or `*`) with a
/// non-zero quality, and not refused by name.
pub(crate) fn accepts_gzip(value: &str) -> bool {
    let mut gzip = None;
    let mut star = None;
    for item in value.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .or_else(|| p.trim().strip_prefix("Q="))
            })
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
            gzip = Some(q > 0.0);
        } else if name == "*" {
            star = Some(q > 0.0);
        }
    }
    gzip.or(star).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_to_other_hosts_go_before_the_end_of_the_body() {
        let v = crate::config::VirtualHosts {
            domain: "sites.test".into(),
            hosts: 10,
            cross_links: 2,
        };
        let links = |html: &'static str, path: &str| {
            let mut resp = reply(StatusCode::OK, Some(HTML), html);
            link_hosts(&mut resp, &v, 3, path, 8080);
            String::from_utf8(resp.body().full_bytes().unwrap().to_vec()).unwrap()
        };
        let page = links("<body><p>x</p></body></html>", "/p/0");
        assert!(
            page.starts_with("<body><p>x</p><a href=\"http://h4.sites.test:8080/\">Site 4</a>\n"),
            "{page}"
        );
        assert!(page.ends_with("</a>\n</body></html>"), "{page}");
        assert_eq!(page.matches("<a href=\"http://h").count(), 3, "{page}");
        // No `</body>`: appended; a path that is not a page: untouched.
        assert!(links("<p>x</p>", "/").starts_with("<p>x</p><a href=\"http://h4."));
        assert_eq!(links("<p>x</p>", "/other"), "<p>x</p>");
    }

    #[test]
    fn accept_encoding_table() {
        let cases = [
            ("gzip", true),
            ("GZip", true),
            ("deflate, gzip;q=0.5", true),
            ("gzip;q=0", false),
            ("gzip; q=0.0, *", false),
            ("br, *", true),
            ("*;q=0", false),
            ("identity", false),
            ("", false),
            ("x-gzip", true),
        ];
        for (value, want) in cases {
            assert_eq!(accepts_gzip(value), want, "{value:?}");
        }
    }
}
