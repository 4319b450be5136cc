//! A static file server on loopback (port 0) for the tests that open files in
//! a browser: `GET` and `HEAD`, one `Range: bytes=` span (ReplayWeb.page reads
//! a WACZ by ranges), one request per connection.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 16 << 10;

/// A served file: its media type and where it is.
#[derive(Clone, Debug)]
pub struct Served {
    pub mime: &'static str,
    pub path: PathBuf,
}

/// A running server; stops when dropped.
pub struct FileServer {
    pub origin: String,
    task: tokio::task::JoinHandle<()>,
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
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let files = files.clone();
                tokio::spawn(async move {
                    let _ = answer(stream, &files).await;
                });
            }
        });
        FileServer { origin, task }
    }
}

async fn answer(mut stream: TcpStream, files: &HashMap<String, Served>) -> std::io::Result<()> {
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
    let range = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("range"))
        .and_then(|(_, v)| parse_range(v.trim()));
    let send_body = method == "GET";
    let Some(file) = files.get(path).filter(|_| send_body || method == "HEAD") else {
        return reply(&mut stream, "404 Not Found", &[], b"", send_body).await;
    };
    let mut data = tokio::fs::File::open(&file.path).await?;
    let len = data.metadata().await?.len();
    let (status, start, end) = match range {
        Some((start, end)) if start < len => {
            let end = end.unwrap_or(len - 1).min(len - 1);
            ("206 Partial Content", start, end)
        }
        Some(_) => {
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
    write_head(&mut stream, status, &headers, count).await?;
    if send_body {
        data.seek(std::io::SeekFrom::Start(start)).await?;
        tokio::io::copy(&mut data.take(count), &mut stream).await?;
    }
    stream.shutdown().await
}

/// `bytes=START-[END]`, the one form a range reader sends here.
fn parse_range(value: &str) -> Option<(u64, Option<u64>)> {
    let (start, end) = value.strip_prefix("bytes=")?.split_once('-')?;
    let end = if end.is_empty() {
        None
    } else {
        Some(end.parse().ok()?)
    };
    Some((start.parse().ok()?, end))
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
