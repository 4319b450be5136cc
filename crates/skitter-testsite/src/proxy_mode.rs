//! [`ProxyMode`]: how a test proxy behaves, whether it speaks HTTP or SOCKS5.

use std::time::Duration;

/// How a test proxy behaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProxyMode {
    /// Forwards every request.
    #[default]
    Good,
    /// Waits this long before handling each request (a timeout for a client
    /// with a shorter one).
    Slow(Duration),
    /// Answers every request `403` with `Proxy-Status: …; error=…` (an HTTP
    /// proxy) or refuses the connection request (SOCKS5, reply 2).
    Refuse,
}
