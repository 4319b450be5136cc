//! What can go wrong with the items database, and the target's name as errors
//! show it: a PostgreSQL URL's password never appears in a message.

/// The items database could not be opened, prepared or written.
///
/// Every variant names the target as `redact` shows it. `Display` says what
/// failed; the database's own error is the [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
pub enum ItemsDbError {
    /// The SQLite file could not be opened, prepared or written.
    #[error("{target}: {doing}")]
    Sqlite {
        /// The database file.
        target: String,
        /// What was being done.
        doing: &'static str,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// The PostgreSQL server could not be reached, prepared or written.
    #[error("{target}: {doing}")]
    Postgres {
        /// The URL, password redacted.
        target: String,
        /// What was being done.
        doing: &'static str,
        /// The cause.
        #[source]
        source: tokio_postgres::Error,
    },
    /// The URL's TLS settings cannot be honoured (an unknown `sslmode`, client
    /// certificates, an unreadable `sslrootcert`): refused rather than
    /// connecting with less protection than asked for.
    #[error("{target}: {message}")]
    Tls {
        /// The URL, password redacted.
        target: String,
        /// What is wrong.
        message: String,
    },
    /// The `sslrootcert` file could not be read as PEM certificates.
    #[error("{target}: cannot read sslrootcert {}", path.display())]
    RootCert {
        /// The URL, password redacted.
        target: String,
        /// The file, as the URL names it.
        path: std::path::PathBuf,
        /// Why it could not be read.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The server's TLS certificate was refused (`sslmode=verify-ca`,
    /// `verify-full`, or `require` with `sslrootcert`).
    #[error(
        "{target}: the server's certificate failed sslmode={mode} verification against {roots}"
    )]
    Certificate {
        /// The URL, password redacted.
        target: String,
        /// The `sslmode` asked for.
        mode: &'static str,
        /// The trusted roots, as they were given.
        roots: String,
        /// The cause, naming what was wrong with the certificate.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A table exists with a column whose type is not the one the rules need.
    #[error(
        "{target}: table {table} has column {column} of type {found}, but the rules need {wanted}; \
         drop or rename the table, or rename the field"
    )]
    ColumnType {
        /// The database.
        target: String,
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// Its type in the database.
        found: String,
        /// The type the rules need.
        wanted: &'static str,
    },
    /// The schemas or the target are unusable (a clashing name, a table that is
    /// not an items table, an unsupported option).
    #[error("{target}: {message}")]
    Schema {
        /// The database.
        target: String,
        /// What is wrong.
        message: String,
    },
    /// The writer went away without saying why (its thread panicked).
    #[error("{target}: the database writer stopped unexpectedly")]
    WriterGone {
        /// The database.
        target: String,
    },
}

impl ItemsDbError {
    /// The message with its causes, `: `-separated, for a [`crate::output::SinkError`].
    pub(crate) fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(e) = cause {
            text.push_str(": ");
            text.push_str(&e.to_string());
            cause = e.source();
        }
        text
    }
}

/// `target` as messages show it: in a `postgres://` URL the password (in the
/// user info or a `password=` parameter) becomes `***`. Errs on the side of
/// hiding: everything between the first `:` of the user info and its last `@`.
pub(crate) fn redact(target: &str) -> String {
    let Some(scheme_end) = target.find("://") else {
        return target.to_string();
    };
    let (head, rest) = target.split_at(scheme_end + 3);
    let (before_query, query) = match rest.find('?') {
        Some(q) => rest.split_at(q),
        None => (rest, ""),
    };
    let mut out = head.to_string();
    match before_query.rfind('@') {
        Some(at) => {
            let userinfo = &before_query[..at];
            match userinfo.find(':') {
                Some(colon) => {
                    out.push_str(&userinfo[..colon]);
                    out.push_str(":***");
                }
                None => out.push_str(userinfo),
            }
            out.push_str(&before_query[at..]);
        }
        None => out.push_str(before_query),
    }
    if let Some(params) = query.strip_prefix('?') {
        out.push('?');
        let params: Vec<String> = params
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_string(),
            })
            .collect();
        out.push_str(&params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_are_hidden() {
        let cases = [
            ("items.db", "items.db"),
            ("postgres://h/db", "postgres://h/db"),
            ("postgres://u@h:5/db", "postgres://u@h:5/db"),
            ("postgres://u:s3cret@h:5/db", "postgres://u:***@h:5/db"),
            ("postgresql://u:p@ss:w@h/db", "postgresql://u:***@h/db"),
            (
                "postgres://u:pw@h/db?sslmode=disable&password=x&user=u",
                "postgres://u:***@h/db?sslmode=disable&password=***&user=u",
            ),
            ("postgres://u:a/b@h/db", "postgres://u:***@h/db"),
        ];
        for (target, want) in cases {
            assert_eq!(redact(target), want, "{target}");
        }
    }
}
