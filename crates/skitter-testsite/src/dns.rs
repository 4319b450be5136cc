//! A tiny scripted DNS server on loopback, for tests and benchmarks.
//!
//! Name resolution must be testable without touching a real resolver, so tests
//! start one of these on `127.0.0.1:0` and point the prober (or a crawl's
//! resolver) at it. Each name gets a
//! scripted [`Reply`]; an optional delay makes every answer slow, and counters
//! record how many queries arrived and how many were waiting at once, which is
//! how tests check the prober's concurrency cap.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use std::net::Ipv6Addr;
use std::str::FromStr;

use hickory_proto::op::{Message, MessageType, Query, ResponseCode};
use hickory_proto::rr::rdata::{A, AAAA, MX, NS, TXT};
use hickory_proto::rr::{Name, RData, Record as HickoryRecord};
use tokio::net::UdpSocket;
use tokio_util::task::AbortOnDropHandle;

/// One record the responder can answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// An IPv4 address.
    A(Ipv4Addr),
    /// An IPv6 address.
    Aaaa(Ipv6Addr),
    /// A mail exchanger and its preference.
    Mx {
        /// Preference among the name's exchangers.
        preference: u16,
        /// The exchanger's host name.
        exchange: String,
    },
    /// A name server's host name.
    Ns(String),
    /// One character-string.
    Txt(String),
}

impl Record {
    /// Hickory's form; `None` for a host name that does not parse.
    fn to_rdata(&self) -> Option<RData> {
        let name = |s: &str| Name::from_str(s).ok();
        Some(match self {
            Record::A(ip) => RData::A(A(*ip)),
            Record::Aaaa(ip) => RData::AAAA(AAAA(*ip)),
            Record::Mx {
                preference,
                exchange,
            } => RData::MX(MX::new(*preference, name(exchange)?)),
            Record::Ns(ns) => RData::NS(NS(name(ns)?)),
            Record::Txt(text) => RData::TXT(TXT::new(vec![text.clone()])),
        })
    }
}

/// How the responder answers a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answer with the records of the queried type (an empty NOERROR answer,
    /// "no data", when none match).
    Records(Vec<Record>),
    /// NXDOMAIN.
    NxDomain,
    /// SERVFAIL.
    ServFail,
    /// REFUSED.
    Refused,
    /// Never answer.
    Silent,
}

/// Configures a [`Responder`]; start from [`Responder::builder`].
#[derive(Debug, Clone)]
pub struct ResponderBuilder {
    names: HashMap<String, Reply>,
    /// Replies for a name's first queries: how many, and what.
    firsts: HashMap<String, (u64, Reply)>,
    fallback: Reply,
    delay: Duration,
    ttl: u32,
    faults: crate::Faults,
}

impl ResponderBuilder {
    /// Scripts the reply for one name (case-insensitive, trailing dot optional).
    pub fn name(mut self, name: &str, reply: Reply) -> Self {
        self.names.insert(key(name), reply);
        self
    }

    /// Answers the first `queries` queries for `name` with `reply`, and later
    /// ones as scripted: a name that appears, disappears or changes address
    /// (with [`ResponderBuilder::ttl`] 0, a rebinding server).
    pub fn first(mut self, name: &str, queries: u64, reply: Reply) -> Self {
        self.firsts.insert(key(name), (queries, reply));
        self
    }

    /// The time to live of every record answered, in seconds (default 60).
    pub fn ttl(mut self, seconds: u32) -> Self {
        self.ttl = seconds;
        self
    }

    /// The reply for names not scripted (default [`Reply::NxDomain`]).
    pub fn fallback(mut self, reply: Reply) -> Self {
        self.fallback = reply;
        self
    }

    /// Holds every answer back this long (default none).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Makes a share of names flaky, as `faults` says ([`crate::Faults::dns_fails`]):
    /// each such name's first [`crate::Faults::dns_times`] queries are answered
    /// SERVFAIL, then its scripted reply. Other fault modes do not apply here.
    pub fn faults(mut self, faults: crate::Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Binds `127.0.0.1` on a free port and starts answering.
    pub async fn bind(self) -> io::Result<Responder> {
        let socket = Arc::new(bind_loopback()?);
        let addr = socket.local_addr()?;
        let stats = Arc::new(Mutex::new(ResponderStats::default()));
        let server = Server {
            socket,
            script: Arc::new(self),
            stats: stats.clone(),
        };
        let task = AbortOnDropHandle::new(tokio::spawn(server.run()));
        Ok(Responder {
            addr,
            stats,
            _task: task,
        })
    }
}

/// A running responder; it stops when dropped.
#[derive(Debug)]
pub struct Responder {
    addr: SocketAddr,
    stats: Arc<Mutex<ResponderStats>>,
    _task: AbortOnDropHandle<()>,
}

/// What a [`Responder`] has seen so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponderStats {
    /// Queries received and decoded.
    pub queries: u64,
    /// Queries received, by lower-case name without the trailing dot.
    pub per_name: HashMap<String, u64>,
    /// Answers currently held back by the delay.
    pub outstanding: u64,
    /// The most answers ever held back at once. Silent names are not counted,
    /// since they never complete.
    pub peak_outstanding: u64,
    /// Datagrams that did not decode as a DNS query.
    pub malformed: u64,
}

impl Responder {
    /// Starts a builder: no names scripted, NXDOMAIN for all, no delay.
    pub fn builder() -> ResponderBuilder {
        ResponderBuilder {
            names: HashMap::new(),
            firsts: HashMap::new(),
            fallback: Reply::NxDomain,
            delay: Duration::ZERO,
            ttl: 60,
            faults: crate::Faults::default(),
        }
    }

    /// The address to send queries to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ResponderStats {
        lock(&self.stats).clone()
    }
}

/// Largest receive buffer asked for; the kernel caps it at `net.core.rmem_max`.
const RECV_BUFFER: usize = 8 << 20;

/// Binds `127.0.0.1:0` with a large receive buffer. A burst of a thousand
/// queries overflows the default buffer (about 200 KiB, a few hundred
/// datagrams); the dropped queries are then retransmitted only after the
/// client's retry interval, which would make a benchmark measure the
/// responder's socket instead of the prober.
fn bind_loopback() -> io::Result<UdpSocket> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
    // Best effort: a smaller buffer still works, only less well under bursts.
    let _ = socket.set_recv_buffer_size(RECV_BUFFER);
    socket.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())?;
    socket.set_nonblocking(true)?;
    UdpSocket::from_std(socket.into())
}

fn key(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    lower.strip_suffix('.').unwrap_or(&lower).to_owned()
}

/// The counters are plain data, so a panic elsewhere cannot leave them
/// inconsistent; a poisoned lock is simply taken over.
fn lock(stats: &Mutex<ResponderStats>) -> std::sync::MutexGuard<'_, ResponderStats> {
    stats.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Server {
    socket: Arc<UdpSocket>,
    script: Arc<ResponderBuilder>,
    stats: Arc<Mutex<ResponderStats>>,
}

impl Server {
    async fn run(self) {
        let mut buf = vec![0u8; 4096];
        loop {
            let (len, peer) = match self.socket.recv_from(&mut buf).await {
                Ok(got) => got,
                // ICMP errors from earlier replies surface here on some systems;
                // they concern one peer, not the server.
                Err(_) => continue,
            };
            let Some((request, query)) = decode(&buf[..len]) else {
                lock(&self.stats).malformed += 1;
                continue;
            };
            let name = key(&query.name().to_ascii());
            let mut reply = self
                .script
                .names
                .get(&name)
                .unwrap_or(&self.script.fallback);
            let asked = lock(&self.stats).per_name.get(&name).copied().unwrap_or(0);
            if let Some((queries, first)) = self.script.firsts.get(&name)
                && asked < *queries
            {
                reply = first;
            }
            let faults = &self.script.faults;
            if faults.dns_fails(&name) && asked < u64::from(faults.dns_times()) {
                reply = &Reply::ServFail;
            }
            self.count_query(name, reply);
            if *reply == Reply::Silent {
                continue;
            }
            let response = respond(&request, &query, reply, self.script.ttl);
            let (socket, stats, delay) =
                (self.socket.clone(), self.stats.clone(), self.script.delay);
            tokio::spawn(async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                if let Ok(bytes) = response.to_vec() {
                    // A lost reply is what a real network does too; the
                    // prober's timeout covers it.
                    let _ = socket.send_to(&bytes, peer).await;
                }
                let mut stats = lock(&stats);
                stats.outstanding = stats.outstanding.saturating_sub(1);
            });
        }
    }

    fn count_query(&self, name: String, reply: &Reply) {
        let mut stats = lock(&self.stats);
        stats.queries += 1;
        *stats.per_name.entry(name).or_default() += 1;
        if *reply != Reply::Silent {
            stats.outstanding += 1;
            stats.peak_outstanding = stats.peak_outstanding.max(stats.outstanding);
        }
    }
}

fn decode(datagram: &[u8]) -> Option<(Message, Query)> {
    let message = Message::from_vec(datagram).ok()?;
    if message.metadata.message_type != MessageType::Query {
        return None;
    }
    let query = message.queries.first()?.clone();
    Some((message, query))
}

fn respond(request: &Message, query: &Query, reply: &Reply, ttl: u32) -> Message {
    let code = match reply {
        Reply::Records(_) | Reply::Silent => ResponseCode::NoError,
        Reply::NxDomain => ResponseCode::NXDomain,
        Reply::ServFail => ResponseCode::ServFail,
        Reply::Refused => ResponseCode::Refused,
    };
    let mut response = Message::error_msg(request.metadata.id, request.metadata.op_code, code);
    response.metadata.recursion_desired = request.metadata.recursion_desired;
    response.metadata.recursion_available = true;
    response.add_query(query.clone());
    if let Reply::Records(records) = reply {
        let matching = records
            .iter()
            .filter_map(Record::to_rdata)
            .filter(|data| data.record_type() == query.query_type())
            .map(|data| HickoryRecord::from_rdata(query.name().clone(), ttl, data));
        response.add_answers(matching);
    }
    response
}
