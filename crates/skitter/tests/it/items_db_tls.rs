//! The PostgreSQL items database over TLS, against a private server with
//! `ssl=on` and a certificate made here (a test CA signing a leaf for
//! 127.0.0.1). Skipped loudly when PostgreSQL is not installed, failed under CI.

use serde_json::json;
use skitter::output::{ItemsDbError, ItemsDbSink, Sink};
use skitter::parse::items::ColumnType::Integer;
use skitter_testsite::postgres::{ClusterOptions, PrivateCluster, ServerTls};

use crate::support::items_db::{Backend, page, schema};

/// A CA and the PEM of its certificate.
struct TestCa {
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
    pem: String,
}

impl TestCa {
    fn new(name: &str) -> TestCa {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let key = rcgen::KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        TestCa { params, key, pem }
    }

    /// A server certificate for `names` (IP addresses or DNS names).
    fn issue(&self, names: &[&str]) -> ServerTls {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let params = rcgen::CertificateParams::new(names).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let issuer = rcgen::Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        ServerTls {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

fn items() -> Vec<skitter::parse::items::TableSchema> {
    vec![schema("products", &[("qty", Integer)])]
}

/// The error's message and causes, `: `-separated, and its `Debug`.
fn chain(err: &ItemsDbError) -> String {
    let mut text = err.to_string();
    let mut cause = std::error::Error::source(err);
    while let Some(e) = cause {
        text = format!("{text}: {e}");
        cause = e.source();
    }
    format!("{text} / {err:?}")
}

/// Opens a sink on `target`, stores one item, and checks it arrived over TLS
/// (the server's view of the sink's connection, read while it is open).
async fn stores_over_tls(db: &Backend, plain: &str, target: &str) {
    let mut sink = ItemsDbSink::open(target, items())
        .await
        .unwrap_or_else(|e| panic!("{target}: {}", chain(&e)));
    let database = plain.rsplit('/').next().unwrap().split('?').next().unwrap();
    let over_tls = format!(
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
         WHERE s.ssl AND a.datname = '{database}'"
    );
    assert_eq!(db.rows(plain, &over_tls).await, ["1"], "{target}");
    sink.record(&page(
        "http://h/",
        "products",
        vec![vec![("qty", json!(7))]],
    ))
    .await
    .unwrap();
    assert_eq!(sink.finish().await.unwrap().records, 1, "{target}");
    assert_eq!(db.rows(plain, "SELECT qty FROM products").await, ["7"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_over_tls() {
    let ca = TestCa::new("skitter test CA");
    let stranger = TestCa::new("someone else's CA");
    let options = ClusterOptions {
        tls: Some(ca.issue(&["127.0.0.1"])),
        ..ClusterOptions::default()
    };
    let Some(cluster) = PrivateCluster::start_with(options) else {
        return;
    };
    let port = cluster.port();
    let dir = tempfile::tempdir().unwrap();
    let (root, wrong) = (dir.path().join("root.pem"), dir.path().join("wrong.pem"));
    std::fs::write(&root, &ca.pem).unwrap();
    std::fs::write(&wrong, &stranger.pem).unwrap();
    let (root, wrong) = (root.display(), wrong.display());
    let db = Backend::Postgres(cluster);

    // require: encrypted, the certificate not checked (libpq's meaning).
    let plain = db.fresh("require");
    let url = format!("postgres://postgres:s3cret@127.0.0.1:{port}/require?sslmode=require");
    stores_over_tls(&db, &plain, &url).await;

    // verify-full: the chain and the address the certificate names.
    let plain = db.fresh("full");
    let url = format!(
        "postgres://postgres:s3cret@127.0.0.1:{port}/full?sslmode=verify-full&sslrootcert={root}"
    );
    stores_over_tls(&db, &plain, &url).await;

    // verify-ca checks no name: reached under a name the certificate lacks.
    let plain = db.fresh("ca");
    let renamed = format!("postgres://postgres:s3cret@db.invalid:{port}/ca?hostaddr=127.0.0.1");
    stores_over_tls(
        &db,
        &plain,
        &format!("{renamed}&sslmode=verify-ca&sslrootcert={root}"),
    )
    .await;

    // Refusals: each a typed error that says why, and never the password.
    let refused = [
        (
            format!("{renamed}&sslmode=verify-full&sslrootcert={root}"),
            "not valid for name \"db.invalid\"",
        ),
        (
            format!(
                "postgres://postgres:s3cret@127.0.0.1:{port}/full?sslmode=verify-full&sslrootcert={wrong}"
            ),
            "UnknownIssuer",
        ),
        (
            format!(
                "postgres://postgres:s3cret@127.0.0.1:{port}/full?sslmode=require&sslrootcert={wrong}"
            ),
            "UnknownIssuer",
        ),
    ];
    for (target, why) in &refused {
        let err = ItemsDbSink::open(target, items()).await.unwrap_err();
        let text = chain(&err);
        assert!(matches!(err, ItemsDbError::Certificate { .. }), "{text}");
        assert!(text.contains("failed sslmode="), "{text}");
        assert!(text.contains(why), "{why} in {text}");
        assert!(
            text.contains(&wrong.to_string()) || why.contains("db.invalid"),
            "{text}"
        );
        assert!(!text.contains("s3cret") && text.contains("***"), "{text}");
    }

    // A Unix socket has no TLS: require there fails rather than going plain.
    let Backend::Postgres(cluster) = &db else {
        unreachable!()
    };
    let socket = format!(
        "postgres://postgres:s3cret@/full?host={}&port={port}&sslmode=require",
        cluster.socket_dir().display()
    );
    let err = ItemsDbSink::open(&socket, items()).await.unwrap_err();
    let text = chain(&err);
    assert!(text.contains("does not support TLS"), "{text}");
    assert!(!text.contains("s3cret"), "{text}");
}
