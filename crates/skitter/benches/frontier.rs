//! Frontier throughput and memory: pushes N distinct URLs over 1,000 hosts through
//! a frontier (offered in page-sized batches with some duplicates), then drains it
//! in politeness order, and prints URLs/s and peak RSS.
//!
//! `cargo bench -p skitter --bench frontier -- disk 10000000 [commit_interval_ms]`
//! (or `memory 10000000 [budget_mib]`, default 256, spilling to the temp dir).
//!
//! `-- hosts 100000`: what the memory frontier keeps per known host and per
//! queued URL: heap bytes in use (counted by the allocator) after offering one
//! URL to each of N hosts, then N more URLs to one host (budget 1 GiB, so
//! nothing spills), then after draining it.
//! Run each frontier in its own process: peak RSS is per process.
//!
//! With `SKITTER_BENCH_SMOKE` set, N defaults to 2,000: a run of a second or two
//! that CI makes (`scripts/smoke-benches.sh`) to check the bench still runs and
//! prints its figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use skitter::frontier::{
    Claim, DiskFrontier, DiskOptions, Frontier, MemoryFrontier, MemoryOptions, Request, RequestKind,
};
use skitter::host::{HostFeedback, HostPolicy};
use skitter::state::store::CrawlMeta;
use url::Url;

const HOSTS: u64 = 1_000;
/// Links per simulated page, and how many of them were seen before.
const BATCH: u64 = 100;
const DUPLICATES: u64 = 10;

fn url(i: u64) -> Url {
    let text = format!(
        "http://host{}.example.com/section/{}/page-{i}.html",
        i % HOSTS,
        i / HOSTS % 97
    );
    Url::parse(&text).expect("valid benchmark URL")
}

fn request(i: u64) -> Request {
    Request {
        url: url(i),
        depth: 1,
        redirects_left: 10,
        parent: None,
        kind: RequestKind::Page,
    }
}

/// Peak resident memory, from `VmHWM` in /proc/self/status.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// The system allocator, counting the bytes allocated and not freed, so the
/// `hosts` mode measures exactly what the frontier holds (resident memory
/// moves by whole pages and keeps what the allocator keeps).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes straight to `System` with the caller's arguments;
// the counter only adds and subtracts the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Heap bytes in use now.
fn live_bytes() -> f64 {
    LIVE.load(Ordering::Relaxed) as f64
}

/// Bytes per known host and per queued URL of the memory frontier.
async fn per_host(n: u64, policy: HostPolicy) -> Result<(), Box<dyn std::error::Error>> {
    let options = MemoryOptions {
        policy,
        memory_budget: 1 << 30,
        spill_dir: None,
    };
    let f = MemoryFrontier::with_options(options)?;
    let one = |u: String| Request {
        url: Url::parse(&u).expect("valid benchmark URL"),
        depth: 1,
        redirects_left: 10,
        parent: None,
        kind: RequestKind::Page,
    };
    // Each batch is built just before it is offered, so the count holds only
    // what the frontier keeps of it.
    let batch = |from: u64, make: &dyn Fn(u64) -> String| -> Vec<Request> {
        (from..(from + 1000).min(n)).map(|i| one(make(i))).collect()
    };
    let host_url = |i: u64| format!("http://host{i}.example.com/");
    let page_url = |i: u64| format!("http://one.example.com/section/{}/page-{i}.html", i % 97);
    let before = live_bytes();
    for from in (0..n).step_by(1000) {
        f.offer(batch(from, &host_url)).await?;
    }
    let with_hosts = live_bytes();
    for from in (0..n).step_by(1000) {
        f.offer(batch(from, &page_url)).await?;
    }
    let with_urls = live_bytes();
    let per_url = (with_urls - with_hosts) / n as f64;
    let per_host = (with_hosts - before) / n as f64;
    println!(
        "memory frontier: {per_host:.0} B per known host with one queued URL \
         ({:.0} B for the host alone), {per_url:.0} B per queued URL (seen set and queue)",
        per_host - per_url
    );
    let start = Instant::now();
    let mut popped = 0;
    while let Claim::Ready(lease) = f.claim().await? {
        f.complete(lease, HostFeedback::default()).await?;
        popped += 1;
    }
    println!(
        "pop+complete {popped} URLs: {}",
        rate(popped, start.elapsed())
    );
    println!(
        "after the drain: {:.0} B per host met ({f:?})",
        (live_bytes() - before) / n as f64
    );
    Ok(())
}

fn rate(n: u64, took: Duration) -> String {
    format!("{:.0}/s", n as f64 / took.as_secs_f64())
}

/// Bytes in a state directory.
fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

async fn run(
    f: &dyn Frontier,
    n: u64,
    state: Option<&std::path::Path>,
) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let mut next = 0;
    while next < n {
        let end = (next + BATCH).min(n);
        let mut batch: Vec<Request> = (next..end).map(request).collect();
        // Links to pages seen before, as real pages have (nav bars, footers).
        batch.extend((0..DUPLICATES.min(next)).map(|k| request(next - 1 - k * 7 % next)));
        f.offer(batch).await?;
        next = end;
    }
    let inserted = start.elapsed();
    println!(
        "insert {n} URLs: {:.1}s, {}",
        inserted.as_secs_f64(),
        rate(n, inserted)
    );
    let counts = f.counts().await?;
    assert_eq!(counts.seen, n, "every distinct URL queued once");
    if let Some(dir) = state {
        let bytes = dir_size(dir);
        println!(
            "state directory with {n} queued: {} MiB, {} bytes per queued URL",
            bytes >> 20,
            bytes / n.max(1)
        );
    }

    let start = Instant::now();
    let mut popped = 0;
    loop {
        match f.claim().await? {
            Claim::Ready(lease) => {
                f.complete(lease, HostFeedback::default()).await?;
                popped += 1;
            }
            Claim::Wait(_) => tokio::task::yield_now().await,
            Claim::Exhausted => break,
        }
    }
    let drained = start.elapsed();
    println!(
        "pop+complete {popped} URLs: {:.1}s, {}",
        drained.as_secs_f64(),
        rate(popped, drained)
    );
    println!("peak RSS (VmHWM): {:.0} MiB", peak_rss_mib());
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` appends `--bench`; everything else is ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let which = args.first().map_or("disk", String::as_str).to_owned();
    let n: u64 = match args.get(1) {
        Some(v) => v.parse()?,
        None if std::env::var_os("SKITTER_BENCH_SMOKE").is_some() => 2_000,
        None => 10_000_000,
    };
    let policy = HostPolicy {
        max_in_flight: 1_000_000,
        ..HostPolicy::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        match which.as_str() {
            "hosts" => per_host(n, policy).await,
            "memory" => {
                let mib: usize = args.get(2).map_or(Ok(256), |v| v.parse())?;
                println!("MemoryFrontier, {n} URLs, {HOSTS} hosts, budget {mib} MiB");
                let options = MemoryOptions {
                    policy,
                    memory_budget: mib << 20,
                    spill_dir: None,
                };
                run(&MemoryFrontier::with_options(options)?, n, None).await
            }
            _ => {
                let dir = tempfile::tempdir()?;
                let mut options = DiskOptions {
                    policy,
                    ..DiskOptions::default()
                };
                if let Some(ms) = args.get(2) {
                    options.commit_interval = Duration::from_millis(ms.parse()?);
                }
                println!(
                    "DiskFrontier, {n} URLs, {HOSTS} hosts, budget {} MiB, durable {}, commit every {:?}",
                    options.memory_budget >> 20,
                    options.durable,
                    options.commit_interval
                );
                let f = DiskFrontier::open(dir.path(), &CrawlMeta::default(), options)?;
                run(&f, n, Some(dir.path())).await?;
                drop(f);
                println!("state directory after the run: {} MiB", dir_size(dir.path()) >> 20);
                Ok(())
            }
        }
    })
}
