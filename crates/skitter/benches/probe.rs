//! Speed check for `skitter::probe` (not a test): 10,000 names against a
//! loopback responder that holds every answer 50 ms, at concurrency 1000.
//! The ideal is 10,000 × 50 ms ÷ 1000 = 0.5 s; the target is within 2× of it.
//!
//! Run with `cargo bench -p skitter --bench probe`. The machine must be
//! otherwise idle: the figure is wall time on a 2-core box, and each query
//! costs a socket, a bind and two loopback datagrams on both sides.
//!
//! With `SKITTER_BENCH_SMOKE` set it probes 300 names at concurrency 50: a
//! second's run that CI makes (`scripts/smoke-benches.sh`) to check the bench
//! still runs and prints its figures.

use std::time::{Duration, Instant};

use futures_util::{StreamExt, stream};
use skitter::probe::{ProbeOutcome, Prober, RecordType};
use skitter_testsite::dns::{Record, Reply, Responder};

const NAMES: usize = 10_000;
const CONCURRENCY: usize = 1_000;
const DELAY: Duration = Duration::from_millis(50);

/// (names, concurrency): the measured run, or the smoke run's few.
fn size() -> (usize, usize) {
    if std::env::var_os("SKITTER_BENCH_SMOKE").is_some() {
        (300, 50)
    } else {
        (NAMES, CONCURRENCY)
    }
}

/// `PROBE_BENCH_DELAY_MS` overrides the answer delay, to separate the
/// prober's own cost (delay 0) from waiting.
fn delay() -> Duration {
    std::env::var("PROBE_BENCH_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}

/// Runs the responder on its own thread and runtime, so that the server's
/// scheduling does not count against the prober being measured.
fn start_responder() -> std::io::Result<(Responder, tokio::runtime::Runtime)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let dns = runtime.block_on(
        Responder::builder()
            .fallback(Reply::Records(vec![Record::A([127, 0, 0, 1].into())]))
            .delay(delay())
            .bind(),
    )?;
    Ok((dns, runtime))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (dns, server_rt) = start_responder()?;
    // Detached: the server thread serves until the process exits.
    std::thread::spawn(move || server_rt.block_on(std::future::pending::<()>()));
    tokio::runtime::Runtime::new()?.block_on(measure(&dns))
}

async fn measure(dns: &Responder) -> Result<(), Box<dyn std::error::Error>> {
    let (names, concurrency) = size();
    let ideal = delay().as_secs_f64() * names as f64 / concurrency as f64;
    for types in [&[RecordType::A][..], &RecordType::ADDRESSES] {
        let prober = Prober::builder()
            .concurrency(concurrency)
            .timeout(Duration::from_secs(5))
            .nameservers(vec![dns.addr()])
            .record_types(types.iter().copied())
            .build()?;
        let queries = stream::iter((0..names).map(|i| format!("host{i}.bench.test")));
        let start = Instant::now();
        let results: Vec<_> = prober.probe_stream(queries).collect().await;
        let resolved = results
            .iter()
            .filter(|r| matches!(r.outcome, ProbeOutcome::Resolved(_)))
            .count();
        let mut ms: Vec<u128> = results.iter().map(|r| r.elapsed.as_millis()).collect();
        ms.sort_unstable();
        let pct = |p: usize| ms.get(ms.len() * p / 100).copied().unwrap_or(0);
        println!(
            "per-name latency ms: p10 {} p50 {} p90 {} p99 {} max {}",
            pct(10),
            pct(50),
            pct(90),
            pct(99),
            ms.last().copied().unwrap_or(0)
        );
        let wall = start.elapsed().as_secs_f64();
        let label: Vec<String> = types.iter().map(ToString::to_string).collect();
        println!(
            "probe {names} names, types {}, concurrency {concurrency}, answer delay {} ms: \
             {resolved} resolved in {wall:.3} s; ideal {ideal:.3} s; ratio {:.2}",
            label.join(","),
            delay().as_millis(),
            wall / ideal,
        );
    }
    let stats = dns.stats();
    println!(
        "responder: {} queries, peak outstanding {}",
        stats.queries, stats.peak_outstanding
    );
    Ok(())
}
