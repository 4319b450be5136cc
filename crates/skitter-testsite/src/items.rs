//! Pages for structured extraction under `/items/`, with deterministic
//! content so tests can assert exact values.
//!
//! - `/items/list/N` (1 ≤ N ≤ [`LIST_PAGES`]): a proxy list, the case the
//!   extraction issue starts from: a heading, a `table.proxies` with a header
//!   row and [`ROWS`] rows (`td.address`, `td.port`, `td.protocol`, `td.speed`
//!   such as `123 ms`, a relative link to the row's detail page), and a link to
//!   the next list page.
//! - `/items/detail/K`: one proxy: `h1`, a `div.notes` with markup inside,
//!   `ul.tags` items, a relative link back.
//! - `/items/broken`: the same rows in broken markup (unclosed and misnested
//!   tags, stray end tags, unquoted attributes).
//! - `/items/api/N.json` (1 ≤ N ≤ [`API_PAGES`]): a JSON document
//!   `{"page":N,"items":[{"id","name","price","tags"}…],"next":…}`.
//!
//! None is linked from the generated site; a crawl starts at one.

use std::fmt::Write as _;

use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply};

/// Number of `/items/list/N` pages (each links the next).
pub const LIST_PAGES: u32 = 5;
/// Data rows per list page.
pub const ROWS: u32 = 10;
/// Number of `/items/api/N.json` pages.
pub const API_PAGES: u32 = 3;
/// Items per API page.
pub const API_ITEMS: u32 = 3;

/// The values of proxy `k` (numbered from 0 over all list pages):
/// address, port, protocol, speed in ms.
pub fn proxy(k: u32) -> (String, u32, &'static str, u32) {
    let page = k / ROWS + 1;
    let row = k % ROWS + 1;
    let protocol = ["http", "https", "socks5"][(k % 3) as usize];
    (
        format!("10.0.{page}.{row}"),
        8000 + k,
        protocol,
        50 + (k * 37) % 900,
    )
}

/// Answers an `/items/` path, or `None` if `path` is not one.
pub(crate) fn route(path: &str) -> Option<Response<SiteBody>> {
    let rest = path.strip_prefix("/items/")?;
    let html = |body: String| reply(StatusCode::OK, Some(HTML), body);
    if rest == "broken" {
        return Some(html(broken()));
    }
    let (kind, arg) = rest.split_once('/')?;
    Some(match kind {
        "list" => {
            let n = canonical_u32(arg).filter(|n| (1..=LIST_PAGES).contains(n))?;
            html(list(n))
        }
        "detail" => {
            let k = canonical_u32(arg).filter(|k| *k < LIST_PAGES * ROWS)?;
            html(detail(k))
        }
        "api" => {
            let n = canonical_u32(arg.strip_suffix(".json")?)
                .filter(|n| (1..=API_PAGES).contains(n))?;
            reply(StatusCode::OK, Some("application/json"), api(n))
        }
        _ => return None,
    })
}

/// The body of `/items/list/N`.
pub fn list(n: u32) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><title>Proxies {n}</title></head><body>\n\
         <h1>Proxy list, page {n}</h1>\n<p class=\"updated\">Updated: 2026-01-0{n}</p>\n\
         <table class=\"proxies\">\n<thead><tr><th>Address</th><th>Port</th>\
         <th>Protocol</th><th>Speed</th><th></th></tr></thead>\n<tbody>\n"
    );
    for r in 0..ROWS {
        let k = (n - 1) * ROWS + r;
        let (address, port, protocol, speed) = proxy(k);
        let _ = writeln!(
            out,
            "<tr><td class=\"address\">{address}</td><td class=\"port\"> {port} </td>\
             <td class=\"protocol\">{protocol}</td><td class=\"speed\">{speed} ms</td>\
             <td><a href=\"../detail/{k}\">details</a></td></tr>"
        );
    }
    out.push_str("</tbody>\n</table>\n");
    if n < LIST_PAGES {
        let _ = writeln!(
            out,
            "<a class=\"next\" href=\"/items/list/{}\">next</a>",
            n + 1
        );
    }
    out.push_str("</body></html>\n");
    out
}

/// The body of `/items/detail/K`.
pub fn detail(k: u32) -> String {
    let (address, port, protocol, _) = proxy(k);
    format!(
        "<!DOCTYPE html>\n<html><head><title>Proxy {k}</title></head><body>\n\
         <h1>Proxy {k}</h1>\n<div class=\"notes\"><p>Checked <b>daily</b> &amp; kept</p></div>\n\
         <p class=\"endpoint\">Endpoint: {protocol}://{address}:{port}</p>\n\
         <ul class=\"tags\"><li>fast</li><li>anonymous</li><li>{protocol}</li></ul>\n\
         <a class=\"back\" href=\"../list/{}\">back</a>\n</body></html>\n",
        k / ROWS + 1
    )
}

/// The body of `/items/broken`: three rows of list page 1 in broken markup: end tags missing or stray,
/// inline tags misnested, attributes unquoted, the table never closed.
pub fn broken() -> String {
    "<!DOCTYPE html>\n<html><body><h1>Broken <b>list</h1></b>\n\
     <table class=proxies><tr><th>Address<th>Port\n\
     <tr><td class=address>10.0.1.1<td class=port>8000</td></i><td class=protocol>http\n\
     <tr><td class=address><b><i>10.0.1.2</b></i><td class=port>8001<td class=protocol>https</span>\n\
     <tr><td class=address>10.0.1.3</td><td class=port>8002<td class=protocol>socks5<p>\n\
     <div class=\"note\"><p>unclosed <em>note\n"
        .to_string()
}

/// The body of `/items/api/N.json`.
pub fn api(n: u32) -> String {
    let items: Vec<String> = (0..API_ITEMS)
        .map(|i| {
            let id = (n - 1) * API_ITEMS + i;
            let parity = if id.is_multiple_of(2) { "even" } else { "odd" };
            format!(
                "{{\"id\":{id},\"name\":\"item {id}\",\"price\":{id}.5,\"tags\":[\"api\",\"{parity}\"]}}"
            )
        })
        .collect();
    let next = if n < API_PAGES {
        format!("\"/items/api/{}.json\"", n + 1)
    } else {
        "null".to_string()
    };
    format!(
        "{{\"page\":{n},\"items\":[{}],\"next\":{next}}}",
        items.join(",")
    )
}
