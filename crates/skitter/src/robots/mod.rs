//! robots.txt parsing and matching (RFC 9309), as a pure function of the file's bytes.
//!
//! This module owns the rules only: fetching `/robots.txt`, caching it per origin and
//! choosing [`Robots::allow_all`] (4xx) or [`Robots::disallow_all`] (5xx, unreachable)
//! belong to the caller. Parsing follows RFC 9309 and, where the RFC is silent, Google's
//! reference parser, whose test suite is our conformance corpus
//! (`tests/robots_corpus.rs`): a `user-agent` line after rules starts a new group,
//! consecutive `user-agent` lines share one, and `sitemap` or unknown lines end
//! nothing. Every group naming the crawler's product token applies (merged), else
//! every `*` group; the longest matching pattern wins and `Allow` wins a tie.

mod cache;
mod pattern;

use std::time::Duration;

use url::Url;

pub use cache::{
    ENTRY_OVERHEAD, MAX_ROBOTS_BYTES, OriginRules, RobotsCache, RobotsPolicy, RobotsSource,
    RobotsStore, StoredRobots,
};
pub use pattern::Pattern;
use pattern::normalize_path;

/// RFC 9309 §2.5: crawlers must parse at least 500 KiB; we parse exactly that much.
const MAX_BYTES: usize = 500 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The parsed rules of one robots.txt file.
#[derive(Clone, Debug, Default)]
pub struct Robots {
    groups: Vec<Group>,
    sitemaps: Vec<String>,
}

/// One group: the agents named by consecutive `user-agent` lines and the rules
/// that follow them.
#[derive(Clone, Debug, Default)]
struct Group {
    /// Product tokens as they appear in the file; compared ASCII-case-insensitively.
    agents: Vec<String>,
    /// Whether one of the `user-agent` lines was `*`.
    global: bool,
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

#[derive(Clone, Debug)]
struct Rule {
    allow: bool,
    pattern: Pattern,
}

impl Group {
    fn names(&self, token: &str) -> bool {
        self.agents.iter().any(|a| a.eq_ignore_ascii_case(token))
    }
}

impl Robots {
    /// Parses a robots.txt body. Never fails: unparsable lines are ignored, as the
    /// RFC asks. Only the first 500 KiB are read (a line cut by that limit is
    /// dropped rather than half-applied); a UTF-8 BOM is skipped; invalid UTF-8 is
    /// tolerated; lines may end in CR, LF or CRLF.
    pub fn parse(body: &[u8]) -> Robots {
        let body = body.strip_prefix(UTF8_BOM).unwrap_or(body);
        let mut builder = Builder::default();
        for line in limit(body).split(|&b| b == b'\n' || b == b'\r') {
            builder.line(line);
        }
        builder.finish()
    }

    /// Rules that allow everything: for a robots.txt that is missing (4xx).
    pub fn allow_all() -> Robots {
        Robots::default()
    }

    /// Rules that disallow everything except `/robots.txt` itself: for a
    /// robots.txt that could not be fetched (5xx, network failure).
    pub fn disallow_all() -> Robots {
        let group = Group {
            global: true,
            rules: vec![Rule {
                allow: false,
                pattern: Pattern::new(b"/"),
            }],
            ..Group::default()
        };
        Robots {
            groups: vec![group],
            sitemaps: Vec::new(),
        }
    }

    /// Whether the crawler whose product token is `user_agent_token` (see
    /// [`product_token`]) may fetch `url`. Only the URL's path and query are
    /// matched (see [`path_and_query`]).
    pub fn allowed(&self, user_agent_token: &str, url: &Url) -> bool {
        self.allowed_path(user_agent_token, &path_and_query(url))
    }

    /// Like [`Robots::allowed`], for a path and query as sent on the wire
    /// (percent-encoded; an empty path means `/`). Non-ASCII characters in `path`
    /// are compared as they are, so they only match rules that spell them the same
    /// way; a path taken from a [`Url`] never has any.
    pub fn allowed_path(&self, user_agent_token: &str, path: &str) -> bool {
        let path = if path.is_empty() { "/" } else { path };
        // RFC 9309 §2.2.2: the robots.txt URI itself is implicitly allowed.
        if path == "/robots.txt" || path.starts_with("/robots.txt?") {
            return true;
        }
        let path = normalize_path(path);
        // (specificity, allow) of the best match so far.
        let mut best: Option<(usize, bool)> = None;
        for rule in self.groups_for(user_agent_token).flat_map(|g| &g.rules) {
            let len = rule.pattern.len();
            let better = match best {
                None => true,
                Some((best_len, best_allow)) => {
                    len > best_len || (len == best_len && rule.allow && !best_allow)
                }
            };
            if better && rule.pattern.matches(&path) {
                best = Some((len, rule.allow));
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }

    /// The `crawl-delay` that applies to `token`, if its groups set one (the
    /// largest, when merged groups disagree). Not part of RFC 9309, but widely
    /// used; the caller decides whether and how far to honour it.
    pub fn crawl_delay(&self, token: &str) -> Option<Duration> {
        self.groups_for(token).filter_map(|g| g.crawl_delay).max()
    }

    /// The `sitemap` URLs listed anywhere in the file, trimmed but otherwise as
    /// written (they may be relative; the caller resolves them against the
    /// robots.txt URL).
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// The groups that apply to `token`: all groups naming it, or else all `*`
    /// groups. A group that names the token but has no rules still counts, so its
    /// silence allows everything instead of falling back to `*`.
    fn groups_for<'a>(&'a self, token: &'a str) -> impl Iterator<Item = &'a Group> + 'a {
        let specific = self.groups.iter().any(|g| g.names(token));
        self.groups
            .iter()
            .filter(move |g| if specific { g.names(token) } else { g.global })
    }
}

/// The product token of a `User-Agent` header: its leading run of letters, `-`
/// and `_` (RFC 9309 §2.2.1), e.g. `"skitter"` for `"skitter/0.1.0 (+https://…)"`.
pub fn product_token(user_agent: &str) -> &str {
    let end = user_agent
        .find(|c: char| !is_token_char(c))
        .unwrap_or(user_agent.len());
    &user_agent[..end]
}

/// Whether `token` is a valid product token to match robots.txt groups with:
/// non-empty, and only ASCII letters, `-` and `_`.
pub fn is_valid_product_token(token: &str) -> bool {
    !token.is_empty() && token.chars().all(is_token_char)
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '-' || c == '_'
}

/// The part of `url` that robots rules are matched against: its path (`/` if
/// empty) and, when present, `?` and its query. The fragment is never included.
pub fn path_and_query(url: &Url) -> String {
    let path = url.path();
    let mut out = String::with_capacity(path.len() + 1);
    if !path.starts_with('/') {
        out.push('/');
    }
    out.push_str(path);
    if let Some(query) = url.query() {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// The first [`MAX_BYTES`] of `body`, without a final line the limit cut in two.
fn limit(body: &[u8]) -> &[u8] {
    if body.len() <= MAX_BYTES {
        return body;
    }
    let is_eol = |b: &u8| *b == b'\n' || *b == b'\r';
    if is_eol(&body[MAX_BYTES]) {
        return &body[..MAX_BYTES];
    }
    let head = &body[..MAX_BYTES];
    head.iter()
        .rposition(is_eol)
        .map_or(&[], |end| &head[..end])
}

/// Accumulates groups line by line.
#[derive(Default)]
struct Builder {
    groups: Vec<Group>,
    sitemaps: Vec<String>,
    /// The group being built, once a `user-agent` line has been seen.
    current: Option<Group>,
    /// Whether `current` already has an allow/disallow line, so that the next
    /// `user-agent` line starts a new group instead of joining this one.
    in_rules: bool,
}

impl Builder {
    fn line(&mut self, line: &[u8]) {
        let Some((key, value)) = split_line(line) else {
            return;
        };
        if key.eq_ignore_ascii_case(b"user-agent") {
            self.user_agent(value);
        } else if key.eq_ignore_ascii_case(b"allow") {
            self.rule(true, value);
        } else if key.eq_ignore_ascii_case(b"disallow") {
            self.rule(false, value);
        } else if key.eq_ignore_ascii_case(b"sitemap") {
            if !value.is_empty() {
                self.sitemaps
                    .push(String::from_utf8_lossy(value).into_owned());
            }
        } else if key.eq_ignore_ascii_case(b"crawl-delay")
            && let Some(group) = self.current.as_mut()
        {
            group.crawl_delay = parse_delay(value).or(group.crawl_delay);
        }
    }

    fn user_agent(&mut self, value: &[u8]) {
        if self.in_rules {
            self.groups.extend(self.current.take());
            self.in_rules = false;
        }
        let group = self.current.get_or_insert_with(Group::default);
        // As in Google's parser, `* anything` still means every crawler.
        if value.first() == Some(&b'*') && value.get(1).is_none_or(u8::is_ascii_whitespace) {
            group.global = true;
            return;
        }
        let end = value
            .iter()
            .position(|&b| !is_token_char(b as char))
            .unwrap_or(value.len());
        if end > 0 {
            // The run is ASCII, so this conversion cannot lose anything.
            group
                .agents
                .push(String::from_utf8_lossy(&value[..end]).into_owned());
        }
    }

    fn rule(&mut self, allow: bool, value: &[u8]) {
        // Rules before the first user-agent line belong to no group.
        let Some(group) = self.current.as_mut() else {
            return;
        };
        self.in_rules = true;
        // An empty pattern matches nothing: `Disallow:` alone allows everything.
        if !value.is_empty() {
            group.rules.push(Rule {
                allow,
                pattern: Pattern::new(value),
            });
        }
    }

    fn finish(mut self) -> Robots {
        self.groups.extend(self.current.take());
        Robots {
            groups: self.groups,
            sitemaps: self.sitemaps,
        }
    }
}

/// Splits a line into a trimmed key and value, after removing any `#` comment.
/// Like Google's parser, a line without `:` is accepted when it is exactly two
/// whitespace-separated words (`user-agent FooBot`).
fn split_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = match line.iter().position(|&b| b == b'#') {
        Some(hash) => &line[..hash],
        None => line,
    };
    let line = line.trim_ascii();
    if line.is_empty() {
        return None;
    }
    if let Some(colon) = line.iter().position(|&b| b == b':') {
        let key = line[..colon].trim_ascii();
        return Some((key, line[colon + 1..].trim_ascii()));
    }
    let space = line.iter().position(|&b| b == b' ' || b == b'\t')?;
    let value = line[space..].trim_ascii();
    if value.iter().any(|&b| b == b' ' || b == b'\t') {
        return None;
    }
    Some((&line[..space], value))
}

/// Parses a `crawl-delay` value in (possibly fractional) seconds.
fn parse_delay(value: &[u8]) -> Option<Duration> {
    let secs: f64 = std::str::from_utf8(value).ok()?.parse().ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests;
