//! The record types the prober asks for and the answers it reports.
//!
//! These are skitter's own small types rather than hickory's, so callers (the
//! CLI, sinks, tests) never depend on the resolver library and its version.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use hickory_resolver::proto::rr::rdata::{A, AAAA, NS};
use hickory_resolver::proto::rr::{self, RData};

/// A DNS record type that `probe` can query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordType {
    /// IPv4 address.
    A,
    /// IPv6 address.
    Aaaa,
    /// Mail exchanger.
    Mx,
    /// Authoritative name server.
    Ns,
    /// Free-form text.
    Txt,
}

impl RecordType {
    /// The default query set: the name's addresses.
    pub const ADDRESSES: [RecordType; 2] = [RecordType::A, RecordType::Aaaa];

    /// Whether answers of this type are IP addresses.
    pub fn is_address(self) -> bool {
        matches!(self, RecordType::A | RecordType::Aaaa)
    }

    pub(crate) fn to_hickory(self) -> rr::RecordType {
        match self {
            RecordType::A => rr::RecordType::A,
            RecordType::Aaaa => rr::RecordType::AAAA,
            RecordType::Mx => rr::RecordType::MX,
            RecordType::Ns => rr::RecordType::NS,
            RecordType::Txt => rr::RecordType::TXT,
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordType::A => "A",
            RecordType::Aaaa => "AAAA",
            RecordType::Mx => "MX",
            RecordType::Ns => "NS",
            RecordType::Txt => "TXT",
        })
    }
}

/// A record type name that `probe` does not support.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported record type {0:?} (expected A, AAAA, MX, NS or TXT)")]
pub struct UnknownRecordType(pub String);

impl FromStr for RecordType {
    type Err = UnknownRecordType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_uppercase().as_str() {
            "A" => Ok(RecordType::A),
            "AAAA" => Ok(RecordType::Aaaa),
            "MX" => Ok(RecordType::Mx),
            "NS" => Ok(RecordType::Ns),
            "TXT" => Ok(RecordType::Txt),
            _ => Err(UnknownRecordType(s.to_owned())),
        }
    }
}

/// One answer record: its time to live and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Time to live in seconds, as the server sent it.
    pub ttl: u32,
    /// The record's data.
    pub data: RecordData,
}

/// The data of an answer record, by type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordData {
    /// An IPv4 address.
    A(Ipv4Addr),
    /// An IPv6 address.
    Aaaa(Ipv6Addr),
    /// A mail exchanger and its preference (lower is preferred).
    Mx {
        /// Preference among the name's exchangers.
        preference: u16,
        /// The exchanger's host name, fully qualified.
        exchange: String,
    },
    /// A name server's host name, fully qualified.
    Ns(String),
    /// The record's character-strings, concatenated (as SPF and DKIM read them).
    Txt(String),
}

impl RecordData {
    /// The type of this record.
    pub fn record_type(&self) -> RecordType {
        match self {
            RecordData::A(_) => RecordType::A,
            RecordData::Aaaa(_) => RecordType::Aaaa,
            RecordData::Mx { .. } => RecordType::Mx,
            RecordData::Ns(_) => RecordType::Ns,
            RecordData::Txt(_) => RecordType::Txt,
        }
    }

    /// The address, for A and AAAA records.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            RecordData::A(ip) => Some(IpAddr::V4(*ip)),
            RecordData::Aaaa(ip) => Some(IpAddr::V6(*ip)),
            _ => None,
        }
    }

    /// Converts hickory's data, keeping only the types skitter reports; CNAMEs
    /// and other records met on the way are dropped.
    pub(crate) fn from_hickory(data: &RData) -> Option<RecordData> {
        Some(match data {
            RData::A(A(ip)) => RecordData::A(*ip),
            RData::AAAA(AAAA(ip)) => RecordData::Aaaa(*ip),
            RData::MX(mx) => RecordData::Mx {
                preference: mx.preference,
                exchange: mx.exchange.to_ascii(),
            },
            RData::NS(NS(name)) => RecordData::Ns(name.to_ascii()),
            RData::TXT(txt) => RecordData::Txt(
                txt.txt_data
                    .iter()
                    .map(|part| String::from_utf8_lossy(part))
                    .collect(),
            ),
            _ => return None,
        })
    }
}

/// Presentation form: addresses bare, `10 mx.example.` for MX, the host for NS,
/// and TXT quoted with `"` and `\` escaped.
impl fmt::Display for RecordData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordData::A(ip) => write!(f, "{ip}"),
            RecordData::Aaaa(ip) => write!(f, "{ip}"),
            RecordData::Mx {
                preference,
                exchange,
            } => write!(f, "{preference} {exchange}"),
            RecordData::Ns(ns) => f.write_str(ns),
            RecordData::Txt(text) => {
                f.write_str("\"")?;
                for c in text.chars() {
                    if c == '"' || c == '\\' {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hickory's form of `data`: the inverse of `RecordData::from_hickory`.
    fn to_hickory(data: &RecordData) -> RData {
        use hickory_resolver::proto::rr::rdata::{MX, TXT};
        let host = |name: &str| super::super::parse_name(name).expect("valid test name");
        match data {
            RecordData::A(ip) => RData::A(A(*ip)),
            RecordData::Aaaa(ip) => RData::AAAA(AAAA(*ip)),
            RecordData::Mx {
                preference,
                exchange,
            } => RData::MX(MX::new(*preference, host(exchange))),
            RecordData::Ns(ns) => RData::NS(NS(host(ns))),
            RecordData::Txt(text) => RData::TXT(TXT::new(vec![text.clone()])),
        }
    }

    #[test]
    fn parses_record_types() {
        let cases = [
            ("A", Ok(RecordType::A)),
            ("aaaa", Ok(RecordType::Aaaa)),
            (" Mx ", Ok(RecordType::Mx)),
            ("ns", Ok(RecordType::Ns)),
            ("TXT", Ok(RecordType::Txt)),
            ("CNAME", Err(UnknownRecordType("CNAME".into()))),
            ("", Err(UnknownRecordType(String::new()))),
        ];
        for (input, want) in cases {
            assert_eq!(input.parse::<RecordType>(), want, "input {input:?}");
        }
    }

    #[test]
    fn displays_presentation_form() {
        let cases = [
            (RecordData::A(Ipv4Addr::new(192, 0, 2, 1)), "192.0.2.1"),
            (RecordData::Aaaa(Ipv6Addr::LOCALHOST), "::1"),
            (
                RecordData::Mx {
                    preference: 10,
                    exchange: "mx.example.".into(),
                },
                "10 mx.example.",
            ),
            (RecordData::Ns("ns1.example.".into()), "ns1.example."),
            (
                RecordData::Txt(r#"say "hi" \o/"#.into()),
                r#""say \"hi\" \\o/""#,
            ),
        ];
        for (data, want) in cases {
            assert_eq!(data.to_string(), want);
        }
    }

    #[test]
    fn round_trips_through_hickory() {
        let all = [
            RecordData::A(Ipv4Addr::new(192, 0, 2, 1)),
            RecordData::Aaaa(Ipv6Addr::LOCALHOST),
            RecordData::Mx {
                preference: 5,
                exchange: "mx.example.".into(),
            },
            RecordData::Ns("ns.example.".into()),
            RecordData::Txt("v=spf1 -all".into()),
        ];
        for data in all {
            let hickory = to_hickory(&data);
            assert_eq!(RecordData::from_hickory(&hickory), Some(data));
        }
    }
}
