//! A delay line in front of another server: a TCP relay on loopback that
//! holds every byte for a fixed time in each direction, as a network path of
//! that round-trip time would. Benchmarks put it in front of a real server
//! (nginx serving the Debian docs) to measure a crawl that waits on its site
//! the way a crawl over a network does; `tc netem` would do the same in the
//! kernel, but is not available in every container.
//!
//! Each direction is a reader and a writer joined by a bounded queue of
//! chunks stamped with the time they may leave: bytes keep flowing while
//! earlier ones wait (the line's throughput is a link's, not one chunk per
//! delay), nothing is reordered, and the queue's bound is the line's window
//! ([`WINDOW_CHUNKS`] × [`CHUNK`] bytes per direction), past which the reader
//! waits as a full TCP window would. A connection's handshake is not delayed
//! (the client's `connect` completes at once); its first bytes are.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The most bytes one read takes off a socket.
pub const CHUNK: usize = 16 * 1024;
/// Chunks in flight per direction (a window of 4 MiB: at a 10 ms one-way
/// delay, 400 MB/s per connection before the window binds).
pub const WINDOW_CHUNKS: usize = 256;

/// Relays every connection `listener` accepts to `to`, each direction's bytes
/// delayed by `one_way`, until `stop` completes. A connection whose upstream
/// cannot be reached is closed.
pub async fn relay(
    listener: TcpListener,
    to: SocketAddr,
    one_way: Duration,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    tokio::pin!(stop);
    loop {
        let (client, _) = tokio::select! {
            () = &mut stop => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                // Out of file descriptors and the like: the next accept may
                // succeed once connections close.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
            },
        };
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(to).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::join!(
                line(client_read, server_write, one_way),
                line(server_read, client_write, one_way),
            );
        });
    }
}

/// One direction: what `from` sends reaches `to` `delay` later. Ends when
/// `from` ends (then `to` is shut down for writing, as the peer's FIN would
/// arrive) or either side fails.
async fn line<R, W>(mut from: R, mut to: W, delay: Duration)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (tx, mut rx) = mpsc::channel::<(Instant, Option<Bytes>)>(WINDOW_CHUNKS);
    let reader = async move {
        loop {
            let mut buf = BytesMut::with_capacity(CHUNK);
            let chunk = match from.read_buf(&mut buf).await {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(buf.freeze()),
            };
            let end = chunk.is_none();
            if tx.send((Instant::now() + delay, chunk)).await.is_err() || end {
                return;
            }
        }
    };
    let writer = async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            let Some(chunk) = chunk else { break };
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server, the relay in front of it, and a client: a round trip
    /// through the line takes two delays, and a large payload arrives whole
    /// and in order.
    #[tokio::test(start_paused = true)]
    async fn a_round_trip_takes_both_delays_and_keeps_every_byte() {
        let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let echo_addr = echo.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = echo.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let front_addr = front.local_addr().unwrap();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let relaying = tokio::spawn(relay(
            front,
            echo_addr,
            Duration::from_millis(10),
            async move {
                let _ = stop_rx.await;
            },
        ));

        let mut client = TcpStream::connect(front_addr).await.unwrap();
        let started = Instant::now();
        client.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(20) && took < Duration::from_millis(25),
            "a round trip took {took:?}"
        );

        // More than the window: the reader waits for the writer, nothing is lost.
        let payload: Vec<u8> = (0..(WINDOW_CHUNKS * CHUNK * 2))
            .map(|i| (i % 251) as u8)
            .collect();
        let (mut r, mut w) = client.into_split();
        let sent = payload.clone();
        let writing = tokio::spawn(async move {
            w.write_all(&sent).await.unwrap();
            w.shutdown().await.unwrap();
        });
        let mut back = Vec::new();
        r.read_to_end(&mut back).await.unwrap();
        writing.await.unwrap();
        assert!(
            back == payload,
            "{} bytes came back of {}",
            back.len(),
            payload.len()
        );
        stop_tx.send(()).unwrap();
        relaying.await.unwrap().unwrap();
    }
}
