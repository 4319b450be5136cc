//! A static file server on loopback (port 0) for the tests that open files in
//! a browser: `GET` and `HEAD`, one `Range: bytes=` span (`START-END`,
//! `START-` or a suffix `-LENGTH`: ReplayWeb.page reads a WACZ by ranges, its
//! central directory from the end), one request per connection, and a log of
//! what it was asked, for a failing test to print.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 16 << 10;

/// The most requests logged; later ones are counted, not kept.
const MAX_LOG: usize = 2000;

/// A served file: its media type and where it is.
#[derive(Clone, Debug)]
pub struct Served {
    pub mime: &'static str,
    pub path: PathBuf,
}

/// A running server; stops when dropped.
pub struct FileServer {
    pub origin: String,
    log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

/// One line per request answered (method, target, `Range`, status).
#[derive(Default)]
struct Log {
    lines: Vec<String>,
    dropped: usize,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FileServer {
    /// Serves `files` (URL path → file) on a new loopback port.
    pub async fn start(files: HashMap<String, Served>) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let files = Arc::new(files);
        let log = Arc::new(Mutex::new(Log::default()));
        let task = tokio::spawn({
            let log = log.clone();
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    let (files, log) = (files.clone(), log.clone());
                    tokio::spawn(async move {
                        let _ = answer(stream, &files, &log).await;
                    });
                }
            }
        });
        FileServer { origin, log, task }
    }

    /// What the server was asked so far, a line a request, in the order
    /// answered.
    pub fn requests(&self) -> String {
        let log = self.log.lock().unwrap();
        let mut text = log.lines.join("\n");
        if log.dropped > 0 {
            text.push_str(&format!("\n(and {} more)", log.dropped));
        }
        text
    }
}

fn record(log: &Mutex<Log>, method: &str, target: &str, range: Option<&str>, status: &str) {
    let mut log = log.lock().unwrap();
    if log.lines.len() < MAX_LOG {
        let range = range.map(|r| format!(" Range: {r}")).unwrap_or_default();
        let line = format!("{method} {target}{range} -> {status}");
        log.lines.push(line);
    } else {
        log.dropped += 1;
    }
}

async fn answer(
    mut stream: TcpStream,
    files: &HashMap<String, Served>,
    log: &Mutex<Log>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return reply(&mut stream, "431 Too Large", &[], b"", true).await;
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let mut request = lines.next().unwrap_or("").split(' ');
    let (method, target) = (request.next().unwrap_or(""), request.next().unwrap_or(""));
    let path = target.split(['?', '#']).next().unwrap_or("");
    let range_header = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("range"))
        .map(|(_, v)| v.trim());
    let range = range_header.and_then(parse_range);
    let send_body = method == "GET";
    let Some(file) = files.get(path).filter(|_| send_body || method == "HEAD") else {
        record(log, method, target, range_header, "404");
        return reply(&mut stream, "404 Not Found", &[], b"", send_body).await;
    };
    let mut data = tokio::fs::File::open(&file.path).await?;
    let len = data.metadata().await?.len();
    let (status, start, end) = match range.and_then(|r| r.span(len)) {
        Some((start, end)) => ("206 Partial Content", start, end),
        None if range.is_some() => {
            record(log, method, target, range_header, "416");
            let unsatisfied = format!("bytes */{len}");
            let headers = [("Content-Range", unsatisfied.as_str())];
            return reply(
                &mut stream,
                "416 Range Not Satisfiable",
                &headers,
                b"",
                true,
            )
            .await;
        }
        None => ("200 OK", 0, len.saturating_sub(1)),
    };
    let count = if len == 0 { 0 } else { end + 1 - start };
    let content_range = format!("bytes {start}-{end}/{len}");
    let mut headers = vec![("Content-Type", file.mime), ("Accept-Ranges", "bytes")];
    if status.starts_with("206") {
        headers.push(("Content-Range", content_range.as_str()));
    }
    record(log, method, target, range_header, &status[..3]);
    write_head(&mut stream, status, &headers, count).await?;
    if send_body {
        data.seek(std::io::SeekFrom::Start(start)).await?;
        tokio::io::copy(&mut data.take(count), &mut stream).await?;
    }
    stream.shutdown().await
}

/// One span of a `Range: bytes=` header.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Range {
    /// `START-` or `START-END` (END inclusive).
    From(u64, Option<u64>),
    /// `-LENGTH`: the last LENGTH bytes.
    Last(u64),
}

impl Range {
    /// The first and last byte it asks of a file of `len` bytes; `None` when
    /// it asks for none of them (416).
    fn span(self, len: u64) -> Option<(u64, u64)> {
        match self {
            Range::From(start, end) if start < len => {
                Some((start, end.unwrap_or(len - 1).min(len - 1)))
            }
            Range::Last(count) if count > 0 && len > 0 => {
                Some((len.saturating_sub(count), len - 1))
            }
            _ => None,
        }
    }
}

/// `bytes=START-[END]` or `bytes=-LENGTH`; anything else (several spans,
/// another unit) is not a range here, and the whole file is sent.
fn parse_range(value: &str) -> Option<Range> {
    let (start, end) = value.strip_prefix("bytes=")?.split_once('-')?;
    if start.is_empty() {
        return Some(Range::Last(end.parse().ok()?));
    }
    let end = if end.is_empty() {
        None
    } else {
        Some(end.parse().ok()?)
    };
    Some(Range::From(start.parse().ok()?, end))
}

#[test]
fn ranges_are_read_in_each_form_a_range_reader_sends() {
    assert_eq!(parse_range("bytes=0-"), Some(Range::From(0, None)));
    assert_eq!(parse_range("bytes=5-9"), Some(Range::From(5, Some(9))));
    assert_eq!(parse_range("bytes=-4"), Some(Range::Last(4)));
    assert_eq!(parse_range("bytes=1-2,4-5"), None);
    assert_eq!(parse_range("items=0-1"), None);
    assert_eq!(Range::From(5, Some(99)).span(10), Some((5, 9)));
    assert_eq!(Range::From(10, None).span(10), None);
    assert_eq!(Range::Last(4).span(10), Some((6, 9)));
    assert_eq!(Range::Last(40).span(10), Some((0, 9)));
    assert_eq!(Range::Last(0).span(10), None);
}

async fn write_head(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, &str)],
    len: u64,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {len}\r\nConnection: close\r\nCache-Control: no-store\r\n"
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await
}

async fn reply(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    send_body: bool,
) -> std::io::Result<()> {
    write_head(stream, status, headers, body.len() as u64).await?;
    if send_body {
        stream.write_all(body).await?;
    }
    stream.shutdown().await
}
