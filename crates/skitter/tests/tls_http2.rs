//! TLS and HTTP versions against a local HTTPS server (self-signed, ALPN h2 and
//! http/1.1): HTTP/2 is used where the server offers it, `http1_only` forces
//! HTTP/1.1, and an invalid certificate fails as `tls` unless `insecure`.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use skitter::fetch::{FetchConfig, Fetcher, Keep};
use skitter::outcome::ErrorKind;
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
