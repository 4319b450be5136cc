//! The items database sink against real databases: SQLite files, and a private
//! PostgreSQL server the test starts (skipped loudly when PostgreSQL is not
//! installed, failed under CI). Every scenario runs on both.

use serde_json::json;
use skitter::output::{ItemsDbSink, Sink};
use skitter::parse::items::ColumnType::{Integer, Json, Number, Text, Url};

use crate::support::items_db::{Backend, page, schema};

fn products() -> Vec<skitter::parse::items::TableSchema> {
    vec![schema(
        "products",
        &[
            ("name", Text),
            ("price", Number),
            ("qty", Integer),
            ("link", Url),
            ("tags", Json),
        ],
    )]
}

/// Tables and typed columns are created; values of every type round-trip; a
/// value that does not fit is NULL and counted; nothing is visible before the
/// flush, everything after.
async fn round_trip(db: &Backend) {
    let target = db.fresh("round_trip");
    let mut sink = ItemsDbSink::open(&target, products()).await.unwrap();
    let p = page(
        "http://shop.test/p/1",
        "products",
        vec![
            vec![
                ("name", json!("Tea \"green\" 緑茶")),
                ("price", json!(4.5)),
                ("qty", json!(12)),
                ("link", json!("http://shop.test/tea")),
                ("tags", json!(["a", 1, null])),
            ],
            vec![
                ("name", json!(null)),
                ("price", json!(3)),
                ("qty", json!("many")),
                ("link", json!(null)),
                ("tags", json!(null)),
            ],
        ],
    );
    sink.record(&p).await.unwrap();
    let count = "SELECT count(*) FROM products";
    assert_eq!(
        db.rows(&target, count).await,
        ["0"],
        "written before the flush"
    );
    sink.flush().await.unwrap();
    assert_eq!(db.rows(&target, count).await, ["2"]);
    let rows = db
        .rows(
            &target,
            "SELECT page_url, item_index, name, price, qty, link FROM products ORDER BY item_index",
        )
        .await;
    assert_eq!(
        rows,
        [
            "http://shop.test/p/1|0|Tea \"green\" 緑茶|4.5|12|http://shop.test/tea",
            "http://shop.test/p/1|1|NULL|3|NULL|NULL",
        ]
    );
    let tags = db
        .rows(&target, "SELECT tags FROM products ORDER BY item_index")
        .await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&tags[0]).unwrap(),
        json!(["a", 1, null])
    );
    assert_eq!(tags[1], "NULL");
    // 2026-05-01T12:30:00Z, whatever the server's time zone.
    let fetched = if db.is_postgres() {
        db.rows(
            &target,
            "SELECT extract(epoch FROM fetched_at)::bigint FROM products",
        )
        .await
    } else {
        db.rows(&target, "SELECT unixepoch(fetched_at) FROM products")
            .await
    };
    assert_eq!(fetched, ["1777638600", "1777638600"]);
    let want_columns: &[&str] = if db.is_postgres() {
        &[
            "page_url text",
            "item_index bigint",
            "fetched_at timestamp with time zone",
            "name text",
            "price double precision",
            "qty bigint",
            "link text",
            "tags jsonb",
        ]
    } else {
        &[
            "page_url TEXT",
            "item_index INTEGER",
            "fetched_at TEXT",
            "name TEXT",
            "price REAL",
            "qty INTEGER",
            "link TEXT",
            "tags TEXT",
        ]
    };
    assert_eq!(db.columns(&target, "products").await, want_columns);
    assert_eq!(sink.mismatched(), 1);
    let summary = sink.finish().await.unwrap();
    assert_eq!((summary.name.as_str(), summary.records), ("items", 2));
}

/// A page recorded again by a second sink (the crawl killed before `finish`,
/// the page fetched again) leaves one set of rows; fewer items now remove the
/// stale ones; no items at all remove them all; other pages are untouched.
async fn idempotent(db: &Backend) {
    let target = db.fresh("idempotent");
    let three = || {
        page(
            "http://shop.test/p/1",
            "products",
            (0..3)
                .map(|i| vec![("name", json!(format!("n{i}")))])
                .collect(),
        )
    };
    let other = page(
        "http://shop.test/p/2",
        "products",
        vec![vec![("qty", json!(7))]],
    );
    let mut first = ItemsDbSink::open(&target, products()).await.unwrap();
    first.record(&three()).await.unwrap();
    first.record(&other).await.unwrap();
    first.flush().await.unwrap();
    drop(first); // killed: no finish
    let mut second = ItemsDbSink::open(&target, products()).await.unwrap();
    second.record(&three()).await.unwrap();
    second.flush().await.unwrap();
    let per_page = "SELECT page_url, count(*) FROM products GROUP BY page_url ORDER BY page_url";
    assert_eq!(
        db.rows(&target, per_page).await,
        ["http://shop.test/p/1|3", "http://shop.test/p/2|1"]
    );
    let one = page(
        "http://shop.test/p/1",
        "products",
        vec![vec![("name", json!("only"))]],
    );
    second.record(&one).await.unwrap();
    second.flush().await.unwrap();
    assert_eq!(
        db.rows(
            &target,
            "SELECT item_index, name FROM products WHERE qty IS NULL"
        )
        .await,
        ["0|only"]
    );
    second
        .record(&page("http://shop.test/p/1", "products", vec![]))
        .await
        .unwrap();
    let mut no_items = page("http://shop.test/p/2", "products", vec![]);
    no_items.items = None; // no rule matched: nothing happens to its rows
    second.record(&no_items).await.unwrap();
    second.finish().await.unwrap();
    assert_eq!(db.rows(&target, per_page).await, ["http://shop.test/p/2|1"]);
}

/// Rules that grew a field add its column (old rows have NULL there); a field
/// whose type changed is refused at open, naming the table and column.
async fn schema_growth(db: &Backend) {
    let target = db.fresh("growth");
    let small = vec![schema("products", &[("name", Text)])];
    let mut sink = ItemsDbSink::open(&target, small).await.unwrap();
    sink.record(&page(
        "http://h/1",
        "products",
        vec![vec![("name", json!("a"))]],
    ))
    .await
    .unwrap();
    sink.finish().await.unwrap();
    let grown = vec![schema("products", &[("name", Text), ("price", Number)])];
    let mut sink = ItemsDbSink::open(&target, grown).await.unwrap();
    sink.record(&page(
        "http://h/2",
        "products",
        vec![vec![("name", json!("b")), ("price", json!(2.5))]],
    ))
    .await
    .unwrap();
    sink.finish().await.unwrap();
    assert_eq!(
        db.rows(&target, "SELECT name, price FROM products ORDER BY name")
            .await,
        ["a|NULL", "b|2.5"]
    );
    let changed = vec![schema("products", &[("name", Integer)])];
    let err = ItemsDbSink::open(&target, changed).await.unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("products") && message.contains("name"),
        "{message}"
    );
}

/// Two sinks (two crawl processes) write to one database at once, partly the
/// same pages: no error, and each page has exactly its items.
async fn concurrent_writers(db: &Backend) {
    let target = db.fresh("concurrent");
    let mut tasks = Vec::new();
    for writer in 0..2 {
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            let mut sink = ItemsDbSink::open(&target, products()).await.unwrap();
            // Writer 0 takes pages 0..300, writer 1 pages 200..500.
            for p in writer * 200..writer * 200 + 300 {
                let items = (0..10).map(|i| vec![("qty", json!(i))]).collect();
                sink.record(&page(&format!("http://h/{p}"), "products", items))
                    .await
                    .unwrap();
                if p % 50 == 0 {
                    sink.flush().await.unwrap();
                }
            }
            sink.finish().await.unwrap().records
        }));
    }
    let mut written = 0;
    for task in tasks {
        written += task.await.unwrap();
    }
    assert_eq!(written, 6_000);
    let stats = "SELECT count(*), count(DISTINCT page_url), sum(qty) FROM products";
    assert_eq!(db.rows(&target, stats).await, ["5000|500|22500"]);
}

/// A NUL character, which PostgreSQL refuses in `TEXT` and `JSONB`, is stored
/// as U+FFFD in text and JSON alike, on both databases.
async fn nul_values(db: &Backend) {
    let target = db.fresh("nul_values");
    let mut sink = ItemsDbSink::open(&target, products()).await.unwrap();
    let p = page(
        "http://shop.test/nul",
        "products",
        vec![vec![
            ("name", json!("a\u{0}b")),
            ("link", json!(["\u{0}"])),
            ("tags", json!({"k\u{0}": ["v\u{0}", 1]})),
        ]],
    );
    sink.record(&p).await.unwrap();
    sink.flush().await.unwrap();
    let rows = db.rows(&target, "SELECT name, link FROM products").await;
    assert_eq!(rows, ["a\u{FFFD}b|[\"\u{FFFD}\"]"]);
    let tags = db.rows(&target, "SELECT tags FROM products").await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&tags[0]).unwrap(),
        json!({"k\u{FFFD}": ["v\u{FFFD}", 1]})
    );
    assert_eq!(sink.finish().await.unwrap().refused, 0);
}

/// A page whose data PostgreSQL refuses (here a URL too long for the primary
/// key's index) is left out and counted; the other pages of its batch are
/// written and the sink goes on.
async fn refused_page(db: &Backend) {
    let target = db.fresh("refused_page");
    let mut sink = ItemsDbSink::open(&target, products()).await.unwrap();
    // Letters that do not repeat, so the index cannot compress the key small.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: String = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'a' + (x % 26) as u8)
        })
        .collect();
    let item = |q: i64| vec![vec![("qty", json!(q))], vec![("qty", json!(q + 1))]];
    sink.record(&page("http://h/1", "products", item(1)))
        .await
        .unwrap();
    sink.record(&page(&format!("http://h/{noise}"), "products", item(10)))
        .await
        .unwrap();
    sink.record(&page("http://h/3", "products", item(3)))
        .await
        .unwrap();
    sink.flush()
        .await
        .expect("a refused page does not fail the flush");
    assert_eq!((sink.written(), sink.refused()), (4, 2));
    sink.record(&page("http://h/4", "products", item(4)))
        .await
        .unwrap();
    let summary = sink.finish().await.unwrap();
    assert_eq!((summary.records, summary.refused), (6, 2));
    assert_eq!(
        db.rows(&target, "SELECT qty FROM products ORDER BY qty")
            .await,
        ["1", "2", "3", "4", "4", "5"]
    );
}

macro_rules! on_sqlite {
    ($($scenario:ident),*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $scenario() {
            super::$scenario(&Backend::sqlite()).await;
        }
    )*};
}

mod sqlite {
    use super::*;
    on_sqlite!(
        round_trip,
        idempotent,
        schema_growth,
        concurrent_writers,
        nul_values
    );
}

/// Every scenario on one private server (starting one costs seconds), each in
/// its own database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_scenarios() {
    let Some(db) = Backend::postgres() else {
        return;
    };
    round_trip(&db).await;
    idempotent(&db).await;
    schema_growth(&db).await;
    concurrent_writers(&db).await;
    unix_socket(&db).await;
    nul_values(&db).await;
    refused_page(&db).await;
}

/// A URL naming a Unix socket directory (`?host=/dir`, the socket being
/// `.s.PGSQL.PORT` there) reaches the server too.
async fn unix_socket(db: &Backend) {
    let Backend::Postgres(cluster) = db else {
        return;
    };
    let tcp = db.fresh("socket");
    let target = format!(
        "postgres://postgres@/socket?host={}&port={}",
        cluster.socket_dir().display(),
        cluster.port()
    );
    let mut sink = ItemsDbSink::open(&target, products()).await.unwrap();
    sink.record(&page(
        "http://h/",
        "products",
        vec![vec![("qty", json!(1))]],
    ))
    .await
    .unwrap();
    assert_eq!(sink.finish().await.unwrap().records, 1);
    assert_eq!(db.rows(&tcp, "SELECT qty FROM products").await, ["1"]);
}

#[tokio::test]
async fn unusable_targets_fail_clearly_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/items.db");
    let err = ItemsDbSink::open(missing.to_str().unwrap(), products())
        .await
        .unwrap_err();
    let chain = format!("{}: {}", err, std::error::Error::source(&err).unwrap());
    assert!(
        chain.contains("no/such/dir/items.db") && chain.contains("cannot open"),
        "{chain}"
    );

    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for target in [
        format!("postgres://crawler:s3cret@127.0.0.1:{port}/items"),
        format!("postgresql://127.0.0.1:{port}/items?user=crawler&password=s3cret"),
        format!("postgres://crawler:s3cret@127.0.0.1:{port}/items?sslmode=require"),
        format!("postgres://crawler:s3cret@127.0.0.1:{port}/items?nonsense=1"),
    ] {
        let err = ItemsDbSink::open(&target, products()).await.unwrap_err();
        let mut chain = err.to_string();
        let mut cause = std::error::Error::source(&err);
        while let Some(e) = cause {
            chain = format!("{chain}: {e}");
            cause = e.source();
        }
        let debug = format!("{err:?}");
        assert!(
            !chain.contains("s3cret") && !debug.contains("s3cret"),
            "{chain} / {debug}"
        );
        assert!(chain.contains(&format!("127.0.0.1:{port}")), "{chain}");
        assert!(chain.contains("***"), "{chain}");
    }
}
