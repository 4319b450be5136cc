//! The test proxies' one way out: a connection to the requested address only
//! if it is on loopback, so neither the HTTP nor the SOCKS5 side can carry a
//! test off the machine.

use tokio::net::TcpStream;

/// Connects to `host:port` if it resolves to a loopback address.
pub(crate) async fn connect_loopback(authority: &str) -> Option<TcpStream> {
    let addr = tokio::net::lookup_host(authority)
        .await
        .ok()?
        .find(|a| a.ip().is_loopback())?;
    TcpStream::connect(addr).await.ok()
}
