//! TLS for the PostgreSQL items database: libpq's `sslmode` and `sslrootcert`
//! read from the URL and turned into the rustls configuration the connection
//! uses (through `tokio-postgres-rustls`).
//!
//! tokio-postgres itself knows only `disable`, `prefer` and `require`, and
//! rejects `sslrootcert`; so both are taken out of the URL here and the
//! stronger modes are implemented by the certificate verifier:
//!
//! | `sslmode`     | TLS                        | certificate checked                  |
//! |---------------|----------------------------|--------------------------------------|
//! | `disable`     | never                      | —                                    |
//! | `prefer`      | if the server offers it    | no (as libpq)                        |
//! | `require`     | always                     | no; with `sslrootcert`, as verify-ca |
//! | `verify-ca`   | always                     | chain to a trusted root              |
//! | `verify-full` | always                     | chain, and the host name it names    |
//!
//! Trusted roots are the PEM certificates of `sslrootcert`, or the system's
//! (`sslrootcert=system`, or no `sslrootcert`; libpq would read
//! `~/.postgresql/root.crt` there, which skitter does not). Client
//! certificates (`sslcert`, `sslkey`) and revocation lists are refused rather
//! than ignored, so a URL never connects with less than it asks for.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;

use super::ItemsDbError;

/// libpq's `sslmode`, all five of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Option<Mode> {
        Some(match value {
            "disable" => Mode::Disable,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => return None,
        })
    }

    /// The name libpq gives it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }

    /// What tokio-postgres is told: whether TLS is optional or required.
    pub(super) fn negotiation(self) -> SslMode {
        match self {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }
}

/// Where trusted root certificates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Roots {
    /// The system's store.
    System,
    /// The PEM certificates in this file.
    File(PathBuf),
}

impl std::fmt::Display for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Roots::System => f.write_str("the system's root certificates"),
            Roots::File(path) => write!(f, "the certificates in {}", path.display()),
        }
    }
}

/// A PostgreSQL URL split into what tokio-postgres reads and the TLS settings
/// read here.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Settings {
    /// The URL without `sslmode` and `sslrootcert`.
    pub url: String,
    pub mode: Mode,
    /// The roots the certificate is checked against; `None` when it is not.
    pub roots: Option<Roots>,
}

/// Parameters that ask for something skitter does not do; refused.
const UNSUPPORTED: [&str; 5] = ["sslcert", "sslkey", "sslpassword", "sslcrl", "sslcrldir"];

/// Reads `sslmode` (default `prefer`) and `sslrootcert` from `target`'s query.
pub(super) fn settings(target: &str, shown: &str) -> Result<Settings, ItemsDbError> {
    let refuse = |message: String| ItemsDbError::Tls {
        target: shown.to_string(),
        message,
    };
    let (base, query) = target.split_once('?').unwrap_or((target, ""));
    let mut kept = Vec::new();
    let (mut mode, mut root) = (Mode::Prefer, None);
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
        match key {
            "sslmode" => {
                mode = Mode::parse(&value).ok_or_else(|| {
                    refuse(format!(
                        "sslmode={value} is not one of disable, prefer, require, verify-ca, verify-full"
                    ))
                })?;
            }
            "sslrootcert" => root = Some(value.into_owned()),
            key if UNSUPPORTED.contains(&key) => {
                return Err(refuse(format!(
                    "{key} is not supported: the items database connects without client \
                     certificates or revocation lists"
                )));
            }
            _ => kept.push(param),
        }
    }
    let roots = root.map(|r| match r.as_str() {
        "system" => Roots::System,
        _ => Roots::File(PathBuf::from(r)),
    });
    let roots = match mode {
        Mode::Disable | Mode::Prefer => None,
        // libpq's rule, kept for URLs written for it: require with a root
        // certificate given checks the chain.
        Mode::Require => roots,
        Mode::VerifyCa | Mode::VerifyFull => Some(roots.unwrap_or(Roots::System)),
    };
    let mut url = base.to_string();
    if !kept.is_empty() {
        url.push('?');
        url.push_str(&kept.join("&"));
    }
    Ok(Settings { url, mode, roots })
}

/// The rustls configuration for `settings`, with its trusted roots loaded.
pub(super) fn client_config(
    settings: &Settings,
    shown: &str,
) -> Result<rustls::ClientConfig, ItemsDbError> {
    let refuse = |message: String| ItemsDbError::Tls {
        target: shown.to_string(),
        message,
    };
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let verifier: Arc<dyn ServerCertVerifier> = match &settings.roots {
        None => Arc::new(Unchecked(provider.clone())),
        Some(roots) => {
            let store = Arc::new(load_roots(roots, shown)?);
            if settings.mode == Mode::VerifyFull {
                rustls::client::WebPkiServerVerifier::builder_with_provider(store, provider.clone())
                    .build()
                    .map_err(|e| refuse(format!("cannot use {roots}: {e}")))?
            } else {
                Arc::new(ChainOnly {
                    roots: store,
                    signatures: Unchecked(provider.clone()),
                })
            }
        }
    };
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| refuse(format!("no usable TLS versions: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

fn load_roots(roots: &Roots, shown: &str) -> Result<RootCertStore, ItemsDbError> {
    let refuse = |message: String| ItemsDbError::Tls {
        target: shown.to_string(),
        message,
    };
    let mut store = RootCertStore::empty();
    match roots {
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(refuse(format!(
                    "no system root certificates found ({} errors); give sslrootcert=FILE",
                    found.errors.len()
                )));
            }
        }
        Roots::File(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|source| ItemsDbError::RootCert {
                    target: shown.to_string(),
                    path: path.clone(),
                    source,
                })?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(refuse(format!(
                    "sslrootcert {} holds no usable certificate",
                    path.display()
                )));
            }
        }
    }
    Ok(store)
}

/// `prefer` and `require` without roots: encrypted, the certificate not
/// checked (libpq's meaning), but the handshake's signatures still are.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

/// `verify-ca`: the chain must end at a trusted root; the name is not checked.
#[derive(Debug)]
struct ChainOnly {
    roots: Arc<RootCertStore>,
    /// The signature checks, which are the same as without a chain check.
    signatures: Unchecked,
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &cert,
            &self.roots,
            intermediates,
            now,
            self.signatures.0.signature_verification_algorithms.all,
        )?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signatures.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signatures.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.signatures.supported_verify_schemes()
    }
}

/// Whether `error` (a failed connection) is the server's certificate being
/// refused, looking through the causes (and inside I/O errors, whose
/// `source` skips the error they wrap).
pub(super) fn is_certificate_refused(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    // Bounded: a cause chain is a handful of links, but never trust it to end.
    for _ in 0..16 {
        let Some(e) = cause else { return false };
        let inner = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        for candidate in [Some(e), inner].into_iter().flatten() {
            if let Some(rustls::Error::InvalidCertificate(_)) = candidate.downcast_ref() {
                return true;
            }
        }
        cause = inner.or_else(|| e.source());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_read_and_removed() {
        let cases: [(&str, &str, Mode, Option<Roots>); 7] = [
            ("postgres://h/db", "postgres://h/db", Mode::Prefer, None),
            (
                "postgres://h/db?sslmode=disable&user=u",
                "postgres://h/db?user=u",
                Mode::Disable,
                None,
            ),
            (
                "postgres://h/db?sslmode=require",
                "postgres://h/db",
                Mode::Require,
                None,
            ),
            (
                "postgres://h/db?sslmode=require&sslrootcert=/ca.pem",
                "postgres://h/db",
                Mode::Require,
                Some(Roots::File("/ca.pem".into())),
            ),
            (
                "postgres://h/db?sslrootcert=%2Fa%20b.pem&sslmode=verify-ca",
                "postgres://h/db",
                Mode::VerifyCa,
                Some(Roots::File("/a b.pem".into())),
            ),
            (
                "postgres://h/db?sslmode=verify-full&connect_timeout=3",
                "postgres://h/db?connect_timeout=3",
                Mode::VerifyFull,
                Some(Roots::System),
            ),
            (
                "postgres://h/db?sslmode=prefer&sslrootcert=system",
                "postgres://h/db",
                Mode::Prefer,
                None,
            ),
        ];
        for (target, url, mode, roots) in cases {
            let got = settings(target, "shown").unwrap();
            assert_eq!(
                got,
                Settings {
                    url: url.into(),
                    mode,
                    roots
                },
                "{target}"
            );
        }
    }

    #[test]
    fn unknown_modes_and_client_certificates_are_refused() {
        for target in [
            "postgres://h/db?sslmode=allow",
            "postgres://h/db?sslmode=verify_full",
            "postgres://h/db?sslcert=c.pem&sslkey=k.pem",
            "postgres://h/db?sslcrl=x",
        ] {
            let err = settings(target, "shown").unwrap_err();
            assert!(
                matches!(&err, ItemsDbError::Tls { target, .. } if target == "shown"),
                "{target}: {err}"
            );
        }
    }

    #[test]
    fn a_missing_root_file_is_a_clear_error() {
        let s = settings(
            "postgres://h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            "shown",
        )
        .unwrap();
        let err = client_config(&s, "shown").unwrap_err();
        assert!(
            matches!(
                &err,
                ItemsDbError::RootCert { source: rustls::pki_types::pem::Error::Io(e), .. }
                    if e.kind() == std::io::ErrorKind::NotFound
            ),
            "{err:?}"
        );
        let err = err.chain();
        assert!(
            err.contains("cannot read sslrootcert /nonexistent/ca.pem: "),
            "{err}"
        );
    }
}
