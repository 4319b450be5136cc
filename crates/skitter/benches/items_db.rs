//! Items database throughput: records N items (20 per page, five fields of
//! every type) into SQLite and into a private PostgreSQL server (fsync on)
//! that the bench starts, and prints items/s, twice per target: batched (a
//! flush only at the end, so batches are size-bounded) and with a flush every
//! 64 pages (what a `--state` crawl asks for at most, see `handoff`).
//!
//! `cargo bench -p skitter --bench items_db [-- N]` (default 200,000 items).
//! With `SKITTER_BENCH_SMOKE` set, N defaults to 4,000 (a smoke run for
//! `scripts/smoke-benches.sh`).

use std::time::Instant;

use chrono::Utc;
use serde_json::json;
use skitter::base::outcome::PageRecord;
use skitter::output::{ItemsDbSink, Page, Sink};
use skitter::parse::items::{Column, ColumnType, Item, Items, TableSchema};
use skitter_testsite::postgres::{ClusterOptions, PrivateCluster};

const PER_PAGE: u64 = 20;
const FLUSH_EVERY: u64 = 64;

fn schemas() -> Vec<TableSchema> {
    let columns = [
        ("name", ColumnType::Text),
        ("price", ColumnType::Number),
        ("qty", ColumnType::Integer),
        ("link", ColumnType::Url),
        ("tags", ColumnType::Json),
    ];
    vec![TableSchema {
        name: "products".into(),
        columns: columns
            .iter()
            .map(|(n, ty)| Column {
                name: n.to_string(),
                ty: *ty,
            })
            .collect(),
    }]
}

fn page(p: u64) -> Page {
    let url = format!("http://shop{}.example/list/{p}", p % 50);
    let records = (0..PER_PAGE)
        .map(|i| Item {
            rule_set: "products".into(),
            index: i as u32,
            fields: vec![
                ("name".into(), json!(format!("Product {p}-{i} with a name"))),
                ("price".into(), json!(i as f64 * 1.25)),
                ("qty".into(), json!(i)),
                ("link".into(), json!(format!("{url}/item/{i}"))),
                ("tags".into(), json!(["new", i])),
            ],
        })
        .collect();
    Page {
        record: PageRecord::new(url::Url::parse(&url).unwrap(), 1, None),
        exchange: None,
        rendered: None,
        content: None,
        items: Some(Box::new(Items {
            fetched_at: Utc::now(),
            records,
            rule_sets: vec!["products".into()],
            errors: vec![],
        })),
        links: None,
        text: None,
    }
}

async fn run(label: &str, target: &str, items: u64, flush_every: Option<u64>) {
    let pages: Vec<Page> = (0..items / PER_PAGE).map(page).collect();
    let start = Instant::now();
    let mut sink = ItemsDbSink::open(target, schemas()).await.expect("open");
    for (i, p) in pages.iter().enumerate() {
        sink.record(p).await.expect("record");
        if flush_every.is_some_and(|n| (i as u64 + 1).is_multiple_of(n)) {
            sink.flush().await.expect("flush");
        }
    }
    let summary = sink.finish().await.expect("finish");
    let took = start.elapsed();
    let mode = match flush_every {
        Some(n) => format!("flush/{n} pages"),
        None => "batched".to_string(),
    };
    println!(
        "{label} {} items, {mode}: {:.0} items/s ({:.2} s)",
        summary.records,
        summary.records as f64 / took.as_secs_f64(),
        took.as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let smoke = std::env::var_os("SKITTER_BENCH_SMOKE").is_some();
    let items: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if smoke { 4_000 } else { 200_000 });
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, flush) in [("batched", None), ("flushed", Some(FLUSH_EVERY))] {
        let file = dir.path().join(format!("{name}.db"));
        run("sqlite", file.to_str().unwrap(), items, flush).await;
    }
    let Some(cluster) = PrivateCluster::start_with(ClusterOptions {
        fsync: true,
        ..ClusterOptions::default()
    }) else {
        return;
    };
    for (name, flush) in [("batched", None), ("flushed", Some(FLUSH_EVERY))] {
        let target = cluster.create_database(name).expect("createdb");
        run("postgres", &target, items, flush).await;
    }
}
