//! Domain-name validation for the prober.
//!
//! Names arrive as untrusted text (command-line arguments, lines of a file), so
//! they are checked here, once, before any query is sent: a malformed name is
//! reported as data and never reaches the resolver. Every accepted name is made
//! fully qualified so the system's search list never rewrites it.

use hickory_resolver::proto::rr::Name;

/// Longest name in presentation form, without the trailing dot (RFC 1035 §2.3.4).
const MAX_NAME_LEN: usize = 253;
/// Longest single label (RFC 1035 §2.3.4).
const MAX_LABEL_LEN: usize = 63;

/// Why a piece of text is not a domain name that can be probed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Nothing but whitespace or a lone dot.
    #[error("empty name")]
    Empty,
    /// Longer than 253 characters in ASCII form.
    #[error("name is {len} characters long, the limit is {MAX_NAME_LEN}")]
    TooLong {
        /// Length of the ASCII form, without the trailing dot.
        len: usize,
    },
    /// Two dots in a row, or a leading dot.
    #[error("empty label")]
    EmptyLabel,
    /// A label longer than 63 characters.
    #[error("label of {len} characters, the limit is {MAX_LABEL_LEN}")]
    LabelTooLong {
        /// Length of the offending label.
        len: usize,
    },
    /// A character that no host name or service label may hold.
    #[error("invalid character {ch:?}")]
    InvalidChar {
        /// The first offending character.
        ch: char,
    },
    /// A non-ASCII name that IDNA cannot map to an ASCII (punycode) form.
    #[error("not a valid internationalised name: {reason}")]
    Idna {
        /// The IDNA library's explanation.
        reason: String,
    },
}

/// Checks `input` and returns it as a fully qualified DNS name.
///
/// Surrounding whitespace and one trailing dot are ignored; non-ASCII names are
/// converted to their punycode form. Labels may hold ASCII letters, digits,
/// `-` and `_` (the latter for names such as `_dmarc.example.com`).
pub fn parse_name(input: &str) -> Result<Name, NameError> {
    let trimmed = input.trim();
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Err(NameError::Empty);
    }
    let ascii = if trimmed.is_ascii() {
        trimmed.to_owned()
    } else {
        to_punycode(trimmed)?
    };
    check_ascii(&ascii)?;
    let mut name = Name::from_ascii(&ascii).map_err(|e| NameError::Idna {
        reason: e.to_string(),
    })?;
    name.set_fqdn(true);
    Ok(name)
}

/// Maps an internationalised name to ASCII, reporting characters (such as
/// spaces) that IDNA passes through but no DNS label may hold.
fn to_punycode(unicode: &str) -> Result<String, NameError> {
    if let Some(ch) = unicode
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        return Err(NameError::InvalidChar { ch });
    }
    let name = Name::from_utf8(unicode).map_err(|e| NameError::Idna {
        reason: e.to_string(),
    })?;
    let ascii = name.to_ascii();
    Ok(ascii.strip_suffix('.').unwrap_or(&ascii).to_owned())
}

/// Length and character rules on the ASCII form (without the trailing dot).
fn check_ascii(ascii: &str) -> Result<(), NameError> {
    if ascii.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong { len: ascii.len() });
    }
    for label in ascii.split('.') {
        if label.is_empty() {
            return Err(NameError::EmptyLabel);
        }
        if label.len() > MAX_LABEL_LEN {
            return Err(NameError::LabelTooLong { len: label.len() });
        }
        let bad = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'));
        if let Some(ch) = bad {
            return Err(NameError::InvalidChar { ch });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_qualifies() {
        let cases = [
            ("example.com", "example.com."),
            ("example.com.", "example.com."),
            ("  Example.COM \n", "Example.COM."),
            ("_dmarc.example.com", "_dmarc.example.com."),
            ("localhost", "localhost."),
            ("a-b.c0", "a-b.c0."),
            ("bücher.example", "xn--bcher-kva.example."),
        ];
        for (input, want) in cases {
            let got = parse_name(input).map(|n| n.to_ascii());
            assert_eq!(got.as_deref(), Ok(want), "input {input:?}");
        }
    }

    #[test]
    fn rejects_malformed() {
        let long_label = "a".repeat(64);
        let long_name = ["a".repeat(60).as_str(); 5].join(".");
        let cases: Vec<(&str, NameError)> = vec![
            ("", NameError::Empty),
            ("   ", NameError::Empty),
            (".", NameError::Empty),
            ("a..b", NameError::EmptyLabel),
            (".a", NameError::EmptyLabel),
            ("a.b..", NameError::EmptyLabel),
            ("foo bar.com", NameError::InvalidChar { ch: ' ' }),
            ("http://x.com", NameError::InvalidChar { ch: ':' }),
            ("*.example.com", NameError::InvalidChar { ch: '*' }),
            ("a/b", NameError::InvalidChar { ch: '/' }),
            ("bü cher.example", NameError::InvalidChar { ch: ' ' }),
            (&long_label, NameError::LabelTooLong { len: 64 }),
            (&long_name, NameError::TooLong { len: 304 }),
        ];
        for (input, want) in cases {
            assert_eq!(parse_name(input), Err(want), "input {input:?}");
        }
    }
}
