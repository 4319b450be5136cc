//! The cap on open connections: a fetcher's clients hold at most
//! [`FetchConfig::max_connections`](super::FetchConfig::max_connections)
//! sockets at once, idle pooled ones included, well below the open-file limit.
//!
//! reqwest's pool keeps connections per host and has no global limit, so a
//! broad crawl would otherwise hold one idle socket for each host it met in the
//! last idle timeout. Each new connection takes a permit before it connects (a
//! connector layer, [`CapLayer`]) and hands it to the connection's task, which
//! gives it back only after its socket is closed (the vendored hyper-util's
//! `guard_next_connection`). When no permit is left, the connect closes the
//! pooled connections of the host idle longest (a host with no request in
//! flight, counted by [`Sockets::busy`] around each request): closing only
//! whole idle hosts never cuts a request short. Without that, a crawl over more
//! hosts than the cap would stop with every socket idle on hosts it had left.
//!
//! A request that waits for a socket counts the wait in its connect timeout
//! (reqwest's timeout wraps the connector). Name lookups use their own sockets,
//! bounded by the resolver's lookup limit, not by this cap.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot};
use url::Url;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

mod limit;
pub use limit::{FILES_RESERVED, OpenFileLimit, OpenFilesError, Wanted};

/// The cap used when none is given and the requests in flight are few: half
/// the soft open-file limit, at most 16,384 and at least 16, leaving the
/// other half for output files, the crawl store, name lookups and the test
/// site of a bench; a crawl with more requests in flight gets a cap as large
/// as they are ([`OpenFileLimit::connection_cap`]). The ceiling was 1,024:
/// a broad crawl with more hosts in progress than that closed, at the cap,
/// the idle connections of hosts the frontier was about to come back to (it
/// serves hosts in turn), so nearly every request opened a connection
/// (measured: 21,297 connects for 2,000 hosts of 10 pages, and 4,292 pages/s
/// against 7,740 with the cap at 10,000).
pub fn default_max_connections() -> usize {
    OpenFileLimit::current().default_cap(0)
}

/// The connections of one fetcher, under one cap. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Sockets {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    cap: usize,
    permits: Arc<Semaphore>,
    table: Mutex<Table>,
    /// Woken when a host with connections has no request in flight any more.
    idle: Notify,
}

#[derive(Debug, Default)]
struct Table {
    hosts: HashMap<String, Host>,
    /// Hosts with connections and no request in flight, longest idle first.
    idle: BTreeMap<u64, String>,
    next_seq: u64,
    next_id: u64,
}

#[derive(Debug, Default)]
struct Host {
    /// Requests in flight.
    busy: u32,
    /// Open connections, each with the sender that closes it (taken once sent).
    conns: HashMap<u64, Option<oneshot::Sender<()>>>,
    /// Its key in [`Table::idle`] while idle.
    idle_seq: Option<u64>,
}

impl Table {
    fn host(&mut self, key: &str) -> &mut Host {
        if !self.hosts.contains_key(key) {
            self.hosts.insert(key.to_owned(), Host::default());
        }
        // Just inserted when missing.
        self.hosts.get_mut(key).unwrap_or_else(|| unreachable!())
    }

    /// Files `key` as idle if it has connections and nothing in flight, forgets
    /// it if it has neither; true when it became idle.
    fn settle(&mut self, key: &str) -> bool {
        let Some(host) = self.hosts.get_mut(key) else {
            return false;
        };
        if host.busy > 0 || host.idle_seq.is_some() {
            return false;
        }
        if host.conns.is_empty() {
            self.hosts.remove(key);
            return false;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        host.idle_seq = Some(seq);
        self.idle.insert(seq, key.to_owned());
        true
    }

    /// Closes the connections of the host idle longest; how many.
    fn close_idle(&mut self) -> usize {
        let Some((_, key)) = self.idle.pop_first() else {
            return 0;
        };
        let Some(host) = self.hosts.get_mut(&key) else {
            return 0;
        };
        host.idle_seq = None;
        let mut closed = 0;
        for close in host.conns.values_mut() {
            if let Some(tx) = close.take() {
                let _ = tx.send(());
                closed += 1;
            }
        }
        closed
    }
}

impl Sockets {
    /// At most `cap` connections (at least one).
    pub(crate) fn new(cap: usize) -> Sockets {
        let cap = cap.max(1);
        Sockets {
            shared: Arc::new(Shared {
                cap,
                permits: Arc::new(Semaphore::new(cap)),
                table: Mutex::new(Table::default()),
                idle: Notify::new(),
            }),
        }
    }

    /// The cap.
    #[cfg(test)]
    pub(crate) fn cap(&self) -> usize {
        self.shared.cap
    }

    /// Connections open now (or connecting).
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.shared.cap - self.shared.permits.available_permits()
    }

    /// Hosts this keeps state for now: those with a connection open or a
    /// request in flight.
    #[cfg(test)]
    pub(crate) fn hosts(&self) -> usize {
        self.lock().hosts.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // Plain data: a panic elsewhere leaves nothing half-done worth refusing.
        self.shared.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks a request to `url`'s host in flight until the guard is dropped:
    /// that host's connections are not closed to make room meanwhile.
    pub(crate) fn busy(&self, url: &Url) -> Busy {
        let key = key_of(url);
        let mut table = self.lock();
        let host = table.host(&key);
        host.busy += 1;
        if let Some(seq) = host.idle_seq.take() {
            table.idle.remove(&seq);
        }
        drop(table);
        Busy {
            sockets: self.clone(),
            key,
        }
    }

    /// A permit for one more connection: at once if one is free, else after
    /// closing idle hosts' connections, or once a connection closes.
    async fn permit(&self) -> Result<OwnedSemaphorePermit, BoxError> {
        loop {
            let notified = self.shared.idle.notified();
            tokio::pin!(notified);
            // Registered before looking, so an idle host filed meanwhile wakes us.
            notified.as_mut().enable();
            if let Ok(permit) = self.shared.permits.clone().try_acquire_owned() {
                return Ok(permit);
            }
            let closing = self.lock().close_idle();
            tracing::debug!(
                cap = self.shared.cap,
                closing,
                "all connections in use: closing an idle host's, or waiting"
            );
            tokio::select! {
                permit = self.shared.permits.clone().acquire_owned() => {
                    return permit.map_err(|e| Box::new(e) as BoxError);
                }
                () = &mut notified => {}
            }
        }
    }

    /// The guard of a new connection to `key`, holding `permit` for its life.
    fn register(&self, key: String, permit: OwnedSemaphorePermit) -> ConnGuard {
        let (tx, rx) = oneshot::channel();
        let mut table = self.lock();
        let id = table.next_id;
        table.next_id += 1;
        table.host(&key).conns.insert(id, Some(tx));
        // A connection made in the background, for a host with nothing in
        // flight, is idle from the start.
        let idle = table.settle(&key);
        drop(table);
        if idle {
            self.shared.idle.notify_waiters();
        }
        ConnGuard {
            sockets: self.clone(),
            key,
            id,
            close: rx,
            _permit: permit,
        }
    }
}

/// A request in flight (see [`Sockets::busy`]).
#[derive(Debug)]
pub(crate) struct Busy {
    sockets: Sockets,
    key: String,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut table = self.sockets.lock();
        let idle = match table.hosts.get_mut(&self.key) {
            Some(host) => {
                host.busy = host.busy.saturating_sub(1);
                table.settle(&self.key)
            }
            None => false,
        };
        drop(table);
        if idle {
            self.sockets.shared.idle.notify_waiters();
        }
    }
}

/// One open connection's place under the cap; completes when the connection
/// is to be closed.
struct ConnGuard {
    sockets: Sockets,
    key: String,
    id: u64,
    close: oneshot::Receiver<()>,
    /// Given back after the table no longer lists the connection.
    _permit: OwnedSemaphorePermit,
}

impl Future for ConnGuard {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A dropped sender (never, while listed) closes it too.
        Pin::new(&mut self.close).poll(cx).map(|_| ())
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        let mut table = self.sockets.lock();
        if let Some(host) = table.hosts.get_mut(&self.key) {
            host.conns.remove(&self.id);
            if host.conns.is_empty() && host.busy == 0 {
                if let Some(seq) = host.idle_seq {
                    table.idle.remove(&seq);
                }
                table.hosts.remove(&self.key);
            }
        }
    }
}

/// The host a connection or request is for: `scheme://host:port`, the port
/// always written, as reqwest's pool tells connections apart.
fn key_of(url: &Url) -> String {
    format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(0)
    )
}

/// The host of a connector request, read from its `Debug` form: reqwest hands
/// its layers the destination `Uri` in a type whose field is private, printed
/// as `Unnameable(http://host:port/)`.
fn key_of_debug(request: &impl std::fmt::Debug) -> String {
    let shown = format!("{request:?}");
    let inner = shown
        .strip_prefix("Unnameable(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(&shown);
    Url::parse(inner).map_or_else(|_| inner.to_owned(), |url| key_of(&url))
}

/// The connector layer that puts every new connection under the cap.
#[derive(Clone, Debug)]
pub(crate) struct CapLayer {
    sockets: Sockets,
}

impl CapLayer {
    pub(crate) fn new(sockets: Sockets) -> CapLayer {
        CapLayer { sockets }
    }
}

impl<S> tower_layer::Layer<S> for CapLayer {
    type Service = Capped<S>;

    fn layer(&self, inner: S) -> Capped<S> {
        Capped {
            inner,
            sockets: self.sockets.clone(),
        }
    }
}

/// A connector under the cap (see [`CapLayer`]).
#[derive(Clone, Debug)]
pub(crate) struct Capped<S> {
    inner: S,
    sockets: Sockets,
}

impl<S, R> tower_service::Service<R> for Capped<S>
where
    R: std::fmt::Debug,
    S: tower_service::Service<R>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let key = key_of_debug(&request);
        // Not polled until a permit is held: nothing connects before.
        let connect = self.inner.call(request);
        let sockets = self.sockets.clone();
        Box::pin(async move {
            let permit = sockets.permit().await?;
            let conn = connect.await.map_err(Into::into)?;
            // Taken by the client in this same poll, as the connect completes.
            hyper_util::client::legacy::guard_next_connection(Box::pin(
                sockets.register(key, permit),
            ));
            Ok(conn)
        })
    }
}

#[cfg(test)]
mod tests;
