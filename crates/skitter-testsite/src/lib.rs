//! A local HTTP test site for skitter's tests, benchmarks and `skitter bench`.
//!
//! It serves a generated site (`/` → `/p/0` → a tree of `/p/{i}` pages) plus
//! optional special cases and crawler traps, over HTTP/1.1 and h2c, and
//! counts every request so tests can assert what a crawler fetched, how often
//! and how concurrently. Pages are rendered on the fly, so it stays far from
//! being the bottleneck of a crawl.
//!
//! ```
//! use skitter_testsite::{SiteConfig, TestSite};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let site = TestSite::start(SiteConfig { pages: 5, ..SiteConfig::default() })?;
//! assert!(site.url("/p/3").starts_with("http://127.0.0.1:"));
//! // ... crawl site.url("/") ...
//! let stats = site.stats();
//! assert_eq!(stats.page_paths().len(), 6); // `/` and five pages
//! assert_eq!(stats.total_requests, 0);
//! site.shutdown().await;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod body;
pub mod check;
mod config;
pub mod delay;
pub mod dns;
pub mod docs;
mod fault;
pub mod flags;
mod hostile;
pub mod items;
mod listing;
mod loopback;
mod number;
mod page;
pub mod paged;
pub mod postgres;
mod proxy;
mod proxy_mode;
mod reply;
mod route;
mod script;
mod server;
pub mod skip;
mod socks;
mod special;
mod stats;
mod trap;
mod tree;
pub mod validators;
mod versions;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use config::{DEFAULT_H2_MAX_STREAMS, ORIGIN_PLACEHOLDER, SiteConfig, VirtualHosts};
pub use fault::Faults;
pub use listing::LISTING_PAGES;
pub use page::{SiteLink, page_links};
pub use proxy::{TestProxy, dead_proxy_url};
pub use proxy_mode::ProxyMode;
pub use script::{PARTS, WORKER_WORD};
pub use server::serve;
pub use special::{BIG_BIN_LEN, SPECIALS};
pub use stats::{MAX_RECORDED_STARTS, Stats};
pub use versions::{NEXT_PASS_PATH, ValidatorMode, Versions};

use route::Site;

/// The accept queue asked of the kernel for the site's listening socket
/// (Linux caps it at `net.core.somaxconn`, 4,096 by default).
///
/// A crawl of thousands of requests in flight opens thousands of connections
/// in the same millisecond. With std's backlog of 128 (tokio's 1,024) the
/// queue overflowed, the kernel dropped the handshakes past it, and each such
/// connection waited out TCP's one-second SYN retransmission: a bench at
/// 10,000 in flight counted 2,150 dropped connections and ran 40% over its
/// ideal time. A real server is tuned for its load; so is this one.
pub const LISTEN_BACKLOG: i32 = 65_535;

/// A non-blocking listening socket on `127.0.0.1:port` (0: any free port)
/// with an accept queue of [`LISTEN_BACKLOG`], for [`serve`] or
/// [`TestSite::start`] (convert it with `tokio::net::TcpListener::from_std`
/// inside a runtime).
pub fn listen(port: u16) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())?;
    socket.listen(LISTEN_BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Starts test sites; see [`TestSite::start`].
#[derive(Debug)]
pub struct TestSite;

impl TestSite {
    /// Binds `127.0.0.1:0` and serves `config` on the current tokio runtime
    /// until the returned [`RunningSite`] is shut down or dropped.
    ///
    /// Fails if binding fails or if called outside a tokio runtime.
    pub fn start(config: SiteConfig) -> io::Result<RunningSite> {
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        let std_listener = listen(0)?;
        let addr = std_listener.local_addr()?;
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(std_listener)?
        };
        let site = server::site(&config, addr);
        let task = runtime.spawn(server::run(
            Arc::clone(&site),
            listener,
            std::future::pending(),
        ));
        Ok(RunningSite {
            site,
            addr,
            task: Some(task),
        })
    }
}

/// A test site serving in the background; stops when shut down or dropped.
pub struct RunningSite {
    site: Arc<Site>,
    addr: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl RunningSite {
    /// The address the site listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn origin(&self) -> &str {
        &self.site.origin
    }

    /// The absolute URL of `path`, e.g. `url("/p/3")` is `http://127.0.0.1:PORT/p/3`.
    pub fn url(&self, path: &str) -> String {
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("{}{slash}{path}", self.site.origin)
    }

    /// Moves a site with [`SiteConfig::versions`] to its next pass (see
    /// [`Versions`]); returns the new pass number.
    pub fn next_pass(&self) -> u32 {
        self.site.pass.advance()
    }

    /// A snapshot of the request counters.
    pub fn stats(&self) -> Stats {
        self.site.counters.snapshot(&self.site.config)
    }

    /// Stops accepting, ends hanging and stalled responses, closes every
    /// connection and waits until the server task has finished.
    pub async fn shutdown(mut self) {
        self.site.shutdown.cancel();
        if let Some(task) = self.task.take()
            && let Err(err) = task.await
        {
            tracing::warn!(%err, "test site: server task failed");
        }
    }
}

impl Drop for RunningSite {
    fn drop(&mut self) {
        // The server task sees the token and winds itself down.
        self.site.shutdown.cancel();
    }
}

impl std::fmt::Debug for RunningSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningSite")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}
