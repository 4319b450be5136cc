//! What several test modules share. `redis_server` and `redis_cluster` are also
//! compiled into the CLI's tests and the Redis benchmark example (by `#[path]`),
//! so they use nothing from this crate's tests.

pub mod frontier_contract;
pub mod items_db;
pub mod redis_cluster;
pub mod redis_server;

/// Reads one HTTP request head (through its blank line) from `sock`, for the
/// raw servers tests write to see exactly what skitter sent; `None` when the
/// peer closes or fails first.
pub async fn read_request_head(sock: &mut tokio::net::TcpStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}
