//! The SOCKS5 side of the test proxies (RFC 1928 `CONNECT` only, with no
//! authentication or user/password per RFC 1929), forwarding to loopback only.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::loopback::connect_loopback;
use crate::proxy_mode::ProxyMode;

const NO_AUTH: u8 = 0x00;
const USER_PASS: u8 = 0x02;
const NO_METHOD: u8 = 0xff;

/// Serves one SOCKS5 client connection.
pub(crate) async fn serve(
    mut client: TcpStream,
    credentials: &Option<(String, String)>,
    mode: ProxyMode,
    served: &AtomicU64,
) -> io::Result<()> {
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting).await?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    client.read_exact(&mut methods).await?;
    let wanted = if credentials.is_some() {
        USER_PASS
    } else {
        NO_AUTH
    };
    if greeting[0] != 5 || !methods.contains(&wanted) {
        return client.write_all(&[5, NO_METHOD]).await;
    }
    client.write_all(&[5, wanted]).await?;
    if let Some((user, pass)) = credentials {
        let given_user = read_field(&mut client, true).await?;
        let given_pass = read_field(&mut client, false).await?;
        let ok = given_user == user.as_bytes() && given_pass == pass.as_bytes();
        client.write_all(&[1, if ok { 0 } else { 1 }]).await?;
        if !ok {
            return Ok(());
        }
    }
    let mut req = [0u8; 4];
    client.read_exact(&mut req).await?;
    let host = match req[3] {
        1 => {
            let mut ip = [0u8; 4];
            client.read_exact(&mut ip).await?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => String::from_utf8_lossy(&read_field(&mut client, false).await?).into_owned(),
        4 => {
            let mut ip = [0u8; 16];
            client.read_exact(&mut ip).await?;
            format!("[{}]", std::net::Ipv6Addr::from(ip))
        }
        _ => return reply(&mut client, 8).await,
    };
    let port = client.read_u16().await?;
    if req[1] != 1 {
        // Only CONNECT.
        return reply(&mut client, 7).await;
    }
    if mode == ProxyMode::Refuse {
        return reply(&mut client, 2).await;
    }
    let Some(mut upstream) = connect_loopback(&format!("{host}:{port}")).await else {
        return reply(&mut client, 5).await;
    };
    served.fetch_add(1, Ordering::Relaxed);
    reply(&mut client, 0).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// A length-prefixed field (after the sub-negotiation version byte when `versioned`).
async fn read_field(client: &mut TcpStream, versioned: bool) -> io::Result<Vec<u8>> {
    if versioned {
        client.read_u8().await?;
    }
    let len = client.read_u8().await?;
    let mut field = vec![0u8; usize::from(len)];
    client.read_exact(&mut field).await?;
    Ok(field)
}

/// A reply with status `rep` and an unspecified bound address.
async fn reply(client: &mut TcpStream, rep: u8) -> io::Result<()> {
    client.write_all(&[5, rep, 0, 1, 0, 0, 0, 0, 0, 0]).await
}
