//! Whose request it is: the origins the user named (a crawl's roots, a fetch
//! input) and what only requests to them get — the user's `-H` headers and a
//! URL's own `user:pass@`. "Same" is the web's origin (scheme, host, port, as
//! [`Url::origin`] computes it), as curl drops credentials on a redirect that
//! changes any of the three: an `https` root's secrets never go out over
//! `http` on the same host and port.

use reqwest::header::{self, HeaderValue};
use url::{Origin, Url};

use super::FetchSetupError;

/// The origins the user named, parsed once.
#[derive(Clone, Debug, Default)]
pub(super) struct NamedOrigins {
    origins: Vec<Origin>,
}

impl NamedOrigins {
    /// Parses [`FetchConfig::named_origins`](super::FetchConfig::named_origins):
    /// each an absolute URL whose origin is taken (its path, if any, ignored).
    pub(super) fn parse(list: &[String]) -> Result<NamedOrigins, FetchSetupError> {
        let mut origins = Vec::with_capacity(list.len());
        for text in list {
            let origin = Url::parse(text)
                .ok()
                .map(|u| u.origin())
                .filter(Origin::is_tuple)
                .ok_or_else(|| FetchSetupError::Origin(text.clone()))?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(NamedOrigins { origins })
    }

    /// Whether `url` is on the host and port of a named origin, whatever its
    /// scheme: the service the user named, which may be on a private address.
    pub(super) fn has_socket(&self, url: &Url) -> bool {
        let port = url.port_or_known_default();
        self.origins.iter().any(|o| match o {
            Origin::Tuple(_, host, p) => {
                url.host().is_some_and(|h| h.to_owned() == *host) && Some(*p) == port
            }
            Origin::Opaque(_) => false,
        })
    }

    /// Whether `url` has one of the named origins (scheme, host and port).
    pub(super) fn contains(&self, url: &Url) -> bool {
        let origin = url.origin();
        self.origins.contains(&origin)
    }
}

/// `url`'s origin as text (`https://host:8443`, the port left out when it is
/// the scheme's default): what credentials are bound to.
pub(super) fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Removes `user:pass@` from `url`: `(origin, "user:pass")`, decoded, when it
/// had any (the origin as [`origin_key`] writes it). Credentials never stay in a URL that reports,
/// outputs or logs could print; they travel as an `Authorization` header
/// instead.
pub(crate) fn take_credentials(url: &mut Url) -> Option<(String, String)> {
    let found = credentials_of(url)?;
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Some(found)
}

/// `url`'s `user:pass@` as `(origin, "user:pass")`, decoded.
pub(super) fn credentials_of(url: &Url) -> Option<(String, String)> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let userpass = format!(
        "{}:{}",
        decode(url.username()),
        decode(url.password().unwrap_or(""))
    );
    Some((origin_key(url), userpass))
}

/// A sensitive (never logged) Basic `Authorization` value.
pub(super) fn basic_auth(userpass: &str) -> Result<HeaderValue, header::InvalidHeaderValue> {
    let encoded = data_encoding::BASE64.encode(userpass.as_bytes());
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_scheme_host_and_port() {
        let named = NamedOrigins::parse(&[
            "https://a.test/".into(),
            "http://127.0.0.1:8080/start".into(),
        ])
        .unwrap();
        let cases = [
            ("https://a.test/page", true),
            ("https://a.test:443/x", true),
            ("https://A.TEST/x", true),
            ("http://a.test/x", false),
            ("http://a.test:443/x", false),
            ("https://a.test:8443/x", false),
            ("https://www.a.test/x", false),
            ("http://127.0.0.1:8080/other", true),
            ("http://127.0.0.1:8081/", false),
            ("https://127.0.0.1:8080/", false),
            ("http://localhost:8080/", false),
        ];
        for (url, same) in cases {
            let url = Url::parse(url).unwrap();
            assert_eq!(named.contains(&url), same, "{url}");
        }
        // Private access is per host and port, not scheme.
        let sockets = [
            ("http://127.0.0.1:8080/x", true),
            ("https://127.0.0.1:8080/x", true),
            ("http://127.0.0.1:2375/", false),
            ("http://a.test:443/", true),
            ("http://a.test/", false),
            ("http://localhost:8080/", false),
        ];
        for (url, same) in sockets {
            let url = Url::parse(url).unwrap();
            assert_eq!(named.has_socket(&url), same, "{url}");
        }
    }

    #[test]
    fn credentials_are_keyed_by_origin() {
        let mut url = Url::parse("https://u%40x:p%3Aw@Example.COM:443/a").unwrap();
        let found = take_credentials(&mut url);
        assert_eq!(
            found,
            Some(("https://example.com".into(), "u@x:p:w".into()))
        );
        assert_eq!(url.as_str(), "https://example.com/a");
        let url = Url::parse("http://u:p@127.0.0.1:8443/").unwrap();
        assert_eq!(credentials_of(&url).unwrap().0, "http://127.0.0.1:8443");
    }

    #[test]
    fn a_named_origin_must_be_a_web_origin() {
        for bad in ["a.test", "data:text/plain,x", ""] {
            assert!(
                matches!(
                    NamedOrigins::parse(&[bad.into()]),
                    Err(FetchSetupError::Origin(_))
                ),
                "{bad}"
            );
        }
    }
}
