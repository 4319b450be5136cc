//! Integration tests for `skitter::probe` against the scripted loopback
//! responder. Every prober here is pointed at `127.0.0.1:<port>` explicitly, so
//! no test ever asks the system resolver.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use futures_util::{StreamExt, stream};
use skitter::probe::{
    FailureKind, NameError, ProbeError, ProbeOutcome, Prober, Record, RecordData, RecordType,
};

use skitter_testsite::dns::{self, Reply, Responder};

const TIMEOUT: Duration = Duration::from_millis(200);

/// The responder answering with these records (the prober's own type, so
/// expectations and answers are written once).
fn served(records: &[RecordData]) -> Reply {
    Reply::Records(
        records
            .iter()
            .map(|r| match r.clone() {
                RecordData::A(ip) => dns::Record::A(ip),
                RecordData::Aaaa(ip) => dns::Record::Aaaa(ip),
                RecordData::Mx {
                    preference,
                    exchange,
                } => dns::Record::Mx {
                    preference,
                    exchange,
                },
                RecordData::Ns(ns) => dns::Record::Ns(ns),
                RecordData::Txt(t) => dns::Record::Txt(t),
            })
            .collect(),
    )
}

fn a(last: u8) -> RecordData {
    RecordData::A(Ipv4Addr::new(192, 0, 2, last))
}

fn aaaa() -> RecordData {
    RecordData::Aaaa(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1))
}

fn mx() -> RecordData {
    RecordData::Mx {
        preference: 10,
        exchange: "mail.example.test.".into(),
    }
}

/// One responder that knows every kind of answer.
async fn scripted() -> Responder {
    Responder::builder()
        .name("v4.test", served(&[a(1)]))
        .name("dual.test", served(&[a(2), aaaa()]))
        .name("mx.test", served(&[mx()]))
        .name("txt.test", served(&[RecordData::Txt("v=spf1 -all".into())]))
        .name(
            "ns.test",
            served(&[RecordData::Ns("ns1.example.test.".into())]),
        )
        .name("nx.test", Reply::NxDomain)
        .name("servfail.test", Reply::ServFail)
        .name("refused.test", Reply::Refused)
        .name("silent.test", Reply::Silent)
        .fallback(Reply::NxDomain)
        .bind()
        .await
        .expect("bind loopback responder")
}

fn prober(dns: &Responder, types: &[RecordType], retries: u32, concurrency: usize) -> Prober {
    Prober::builder()
        .concurrency(concurrency)
        .timeout(TIMEOUT)
        .retries(retries)
        .nameservers(vec![dns.addr()])
        .record_types(types.iter().copied())
        .build()
        .expect("valid prober settings")
}

async fn probe_all(prober: &Prober, names: &[&str]) -> BTreeMap<String, ProbeOutcome> {
    let names = stream::iter(names.iter().map(|n| n.to_string()));
    prober
        .probe_stream(names)
        .map(|r| (r.name, r.outcome))
        .collect()
        .await
}

fn resolved(data: &[RecordData]) -> ProbeOutcome {
    let records = data.iter().map(|d| Record {
        ttl: 60,
        data: d.clone(),
    });
    ProbeOutcome::Resolved(records.collect())
}

#[tokio::test]
async fn each_reply_maps_to_its_outcome() {
    let dns = scripted().await;
    let all_types = [
        RecordType::A,
        RecordType::Aaaa,
        RecordType::Mx,
        RecordType::Ns,
        RecordType::Txt,
    ];
    let prober = prober(&dns, &all_types, 1, 16);
    let cases = [
        ("v4.test", resolved(&[a(1)])),
        ("dual.test", resolved(&[a(2), aaaa()])),
        ("MX.test.", resolved(&[mx()])),
        (
            "txt.test",
            resolved(&[RecordData::Txt("v=spf1 -all".into())]),
        ),
        (
            "ns.test",
            resolved(&[RecordData::Ns("ns1.example.test.".into())]),
        ),
        ("nx.test", ProbeOutcome::NotFound),
        ("servfail.test", ProbeOutcome::Failed(FailureKind::ServFail)),
        ("refused.test", ProbeOutcome::Failed(FailureKind::Refused)),
        ("silent.test", ProbeOutcome::Failed(FailureKind::Timeout)),
        (
            "bad..name",
            ProbeOutcome::Failed(FailureKind::InvalidName(NameError::EmptyLabel)),
        ),
    ];
    let names: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
    let got = probe_all(&prober, &names).await;
    for (name, want) in cases {
        assert_eq!(got.get(name), Some(&want), "name {name}");
    }
    assert_eq!(got.len(), names.len());
}

#[tokio::test]
async fn name_without_requested_type_is_not_found() {
    let dns = scripted().await;
    let prober = prober(&dns, &RecordType::ADDRESSES, 0, 4);
    let got = probe_all(&prober, &["mx.test", "v4.test"]).await;
    assert_eq!(got["mx.test"], ProbeOutcome::NotFound);
    assert_eq!(got["v4.test"], resolved(&[a(1)]));
}

#[tokio::test]
async fn only_transient_failures_are_retried() {
    let dns = scripted().await;
    let prober = prober(&dns, &[RecordType::A], 2, 8);
    let names = [
        "servfail.test",
        "silent.test",
        "refused.test",
        "nx.test",
        "v4.test",
    ];
    probe_all(&prober, &names).await;
    let stats = dns.stats();
    let cases = [
        ("servfail.test", 3),
        ("silent.test", 3),
        ("refused.test", 1),
        ("nx.test", 1),
        ("v4.test", 1),
    ];
    for (name, want) in cases {
        assert_eq!(stats.per_name.get(name), Some(&want), "queries for {name}");
    }
}

#[tokio::test]
async fn concurrency_cap_is_honoured() {
    let dns = Responder::builder()
        .fallback(served(&[a(9)]))
        .delay(Duration::from_millis(20))
        .bind()
        .await
        .expect("bind loopback responder");
    let prober = prober(&dns, &[RecordType::A], 0, 5);
    let names: Vec<String> = (0..60).map(|i| format!("host{i}.test")).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let got = probe_all(&prober, &name_refs).await;

    assert!(got.values().all(|o| *o == resolved(&[a(9)])), "{got:?}");
    let stats = dns.stats();
    assert_eq!(stats.queries, 60);
    assert!(
        stats.peak_outstanding <= 5,
        "peak {}",
        stats.peak_outstanding
    );
    // Each answer is held 20 ms, so a prober that ran names one by one would
    // never have two outstanding; this shows the cap is also reached.
    assert!(
        stats.peak_outstanding >= 2,
        "peak {}",
        stats.peak_outstanding
    );
}

#[tokio::test]
async fn results_come_in_completion_order() {
    let dns = scripted().await;
    let prober = prober(&dns, &[RecordType::A], 0, 4);
    let names = stream::iter(["silent.test", "v4.test"].map(String::from));
    let order: Vec<String> = prober.probe_stream(names).map(|r| r.name).collect().await;
    assert_eq!(order, ["v4.test", "silent.test"]);
}

#[tokio::test]
async fn input_is_pulled_lazily() {
    let dns = Responder::builder()
        .fallback(served(&[a(3)]))
        .bind()
        .await
        .expect("bind loopback responder");
    let prober = prober(&dns, &[RecordType::A], 0, 4);
    // An endless input: only works if names are pulled as slots free up.
    let endless = stream::iter(0u64..).map(|i| format!("n{i}.test"));
    let first: Vec<_> = prober.probe_stream(endless).take(20).collect().await;
    assert_eq!(first.len(), 20);
    assert!(dns.stats().queries <= 24, "queries {}", dns.stats().queries);
}

#[tokio::test]
async fn builder_rejects_bad_settings() {
    let dns = scripted().await;
    let base = || Prober::builder().nameservers(vec![dns.addr()]);
    let cases: Vec<(Result<Prober, ProbeError>, &str)> = vec![
        (
            base().concurrency(0).build(),
            "concurrency must be at least 1",
        ),
        (
            base().timeout(Duration::ZERO).build(),
            "timeout must be greater than zero",
        ),
        (
            base().record_types([]).build(),
            "at least one record type is needed",
        ),
        (
            Prober::builder().nameservers(vec![]).build(),
            "at least one name server is needed",
        ),
    ];
    for (result, want) in cases {
        let err = result.expect_err(want);
        assert_eq!(err.to_string(), want);
    }
    assert!(base().build().is_ok());
}
