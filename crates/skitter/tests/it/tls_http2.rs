//! TLS and HTTP versions against a local HTTPS server (self-signed, ALPN h2 and
//! http/1.1): HTTP/2 is used where the server offers it, `http1_only` forces
//! HTTP/1.1, an invalid certificate fails as `tls` unless `insecure`, and https
//! goes through a proxy pool's CONNECT tunnels.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use skitter::base::outcome::ErrorKind;
use skitter::fetch::{FetchConfig, Fetcher, Keep};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// Serves `hello` over HTTPS on 127.0.0.1, answering with the HTTP version used.
async fn https_server() -> String {
    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert = key.cert.der().clone();
    let private = rustls::pki_types::PrivateKeyDer::Pkcs8(key.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], private)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let body = format!("<html>{:?}</html>", req.version());
                    let resp = hyper::Response::builder()
                        .header("content-type", "text/html")
                        .body(Full::new(Bytes::from(body)))
                        .unwrap();
                    Ok::<_, std::convert::Infallible>(resp)
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    format!("https://localhost:{port}/")
}

fn fetcher(insecure: bool, http1_only: bool) -> Fetcher {
    Fetcher::new(FetchConfig {
        insecure,
        http1_only,
        // The server's host, so its loopback address may be reached.
        named_hosts: vec!["localhost".into()],
        ..FetchConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn http2_by_alpn_http1_only_and_certificate_checks() {
    let url = url::Url::parse(&https_server().await).unwrap();

    let h2 = fetcher(true, false)
        .get(&url, Keep::Everything)
        .await
        .unwrap();
    assert_eq!(h2.exchange.as_ref().unwrap().http_version, "HTTP/2");
    assert_eq!(h2.body.as_deref(), Some(&b"<html>HTTP/2.0</html>"[..]));

    let h1 = fetcher(true, true)
        .get(&url, Keep::Everything)
        .await
        .unwrap();
    assert_eq!(h1.exchange.as_ref().unwrap().http_version, "HTTP/1.1");

    let refused = fetcher(false, false)
        .get(&url, Keep::Html)
        .await
        .unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Tls, "{}", refused.message);
}

/// An https site through a pool of HTTP proxies takes CONNECT tunnels: a
/// proxy refusing the tunnel with 407 (wrong credentials) fails the request as
/// the proxy's (`proxy`, credentials not shown) and is benched; the next
/// request goes through the good one, whose tunnel carries it.
#[tokio::test]
async fn https_through_connect_tunnels_of_a_proxy_pool() {
    use skitter_testsite::{ProxyMode, TestProxy};
    let url = url::Url::parse(&https_server().await).unwrap();
    let locked = TestProxy::http(ProxyMode::Good, Some(("user", "right"))).unwrap();
    let good = TestProxy::http(ProxyMode::Good, Some(("user", "G00DPASS"))).unwrap();
    let fetcher = Fetcher::new(FetchConfig {
        insecure: true,
        named_hosts: vec!["localhost".into()],
        proxy_list: vec![
            format!("http://user:WR0NGPASS@{}", locked.addr()),
            good.url(),
        ],
        ..FetchConfig::default()
    })
    .unwrap();
    let refused = fetcher.get(&url, Keep::Html).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Proxy, "{}", refused.message);
    assert!(
        refused.message.contains(&locked.addr().to_string()),
        "{}",
        refused.message
    );
    assert!(
        !refused.message.contains("WR0NGPASS"),
        "{}",
        refused.message
    );
    for _ in 0..2 {
        let ok = fetcher.get(&url, Keep::Html).await.unwrap();
        assert_eq!(ok.status, 200);
        assert_eq!(ok.proxy, Some(format!("http://{}", good.addr())));
    }
    assert_eq!((locked.served(), good.served()), (0, 1));
    let stats = fetcher.proxy_stats();
    assert_eq!((stats[0].failures, stats[0].benchings), (1, 1));
    assert_eq!(stats[1].successes, 2);
}
