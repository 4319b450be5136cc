//! The connection to Redis, and riding out outages: every frontier operation
//! goes through [`Link::run`], which retries transient failures with capped
//! back-off until the connection returns, so a Redis restart pauses the crawl
//! instead of failing it. Only an outage longer than the configured maximum,
//! or an error that retrying cannot fix, becomes a [`FrontierError`].
//!
//! A URL `redis+cluster://HOST:PORT[,HOST:PORT…]` names a Redis Cluster by any
//! of its nodes: commands then go through the redis crate's cluster client,
//! which routes each to the master of its key's slot and follows the cluster
//! when slots move.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ::redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use ::redis::cluster::{ClusterClient, ClusterClientBuilder};
use ::redis::cluster_async::ClusterConnection;
use ::redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use ::redis::{
    Cmd, ErrorKind, FromRedisValue, Pipeline, RedisError, RedisFuture, RedisResult, RetryMethod,
    ScriptInvocation, ServerErrorKind, Value,
};
use futures_util::future::BoxFuture;

use super::super::FrontierError;

/// First pause after a failure; it doubles up to [`MAX_BACK_OFF`].
const MIN_BACK_OFF: Duration = Duration::from_millis(50);
const MAX_BACK_OFF: Duration = Duration::from_secs(2);
/// An outage this long is worth a warning even though the crawl carries on.
const WARN_AFTER: Duration = Duration::from_secs(5);

/// The scheme that names a Redis Cluster.
const CLUSTER_SCHEME: &str = "redis+cluster://";

/// A shared, self-reconnecting connection plus the outage policy.
#[derive(Clone)]
pub(crate) struct Link {
    conn: Conn,
    max_outage: Duration,
}

/// Where commands go: one server, or a cluster (connected on first use, so a
/// cluster that is not up yet is waited for like a server).
#[derive(Clone)]
enum Conn {
    Single(ConnectionManager),
    Cluster(Arc<ClusterLink>),
}

struct ClusterLink {
    client: ClusterClient,
    conn: tokio::sync::OnceCell<ClusterConnection>,
}

/// A connection ready for one operation.
#[derive(Clone)]
enum Live {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Live {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Live::Single(c) => c.req_packed_command(cmd),
            Live::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Live::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Live::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Live::Single(c) => c.get_db(),
            Live::Cluster(c) => c.get_db(),
        }
    }
}

impl Link {
    /// A link to `url`. It connects lazily: the first operation waits (within
    /// `max_outage`) for a server that is not up yet.
    pub(crate) fn new(url: &str, max_outage: Duration) -> Result<Link, FrontierError> {
        if let Some(nodes) = cluster_nodes(url) {
            let client = ClusterClientBuilder::new(nodes)
                .connection_timeout(Duration::from_secs(2))
                .response_timeout(Duration::from_secs(30))
                // Few quick retries inside the client: the patience lives in `run`.
                .retries(2)
                .min_retry_wait(50)
                .max_retry_wait(500)
                .build()
                .map_err(|e| storage("bad Redis Cluster URL", e))?;
            let conn = Conn::Cluster(Arc::new(ClusterLink {
                client,
                conn: tokio::sync::OnceCell::new(),
            }));
            return Ok(Link { conn, max_outage });
        }
        let client = ::redis::Client::open(url).map_err(|e| storage("bad Redis URL", e))?;
        // The manager's own reconnect attempts are kept short: the patience lives
        // in `run`, which knows the outage budget and logs.
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(1)
            .set_min_delay(MIN_BACK_OFF)
            .set_max_delay(MAX_BACK_OFF)
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(30)));
        let conn = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| storage("Redis connection setup failed", e))?;
        Ok(Link {
            conn: Conn::Single(conn),
            max_outage,
        })
    }

    /// Whether this is a link to a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.conn, Conn::Cluster(_))
    }

    /// A connection for one operation; a cluster's is made on first use.
    async fn live(&self) -> RedisResult<Live> {
        match &self.conn {
            Conn::Single(c) => Ok(Live::Single(c.clone())),
            Conn::Cluster(link) => {
                let conn = link
                    .conn
                    .get_or_try_init(|| link.client.get_async_connection())
                    .await?;
                Ok(Live::Cluster(conn.clone()))
            }
        }
    }

    /// Sends a command without a key (such as SCAN) to the server holding
    /// `key`: on a cluster, the master of the key's slot (see [`Link::run`]).
    pub(crate) async fn query_at<T: FromRedisValue>(
        &self,
        what: &str,
        key: &str,
        cmd: &Cmd,
    ) -> Result<T, FrontierError> {
        if !self.is_cluster() {
            return self.query(what, cmd).await;
        }
        let slot: u16 = self
            .query(what, ::redis::cmd("CLUSTER").arg("KEYSLOT").arg(key))
            .await?;
        let value: Value = self
            .run(what, |c| {
                Box::pin(async move {
                    let Live::Cluster(mut c) = c else {
                        return Err((ErrorKind::Client, "not a cluster connection").into());
                    };
                    let route = Route::new(slot, SlotAddr::Master);
                    let routing =
                        RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                    c.route_command(cmd.clone(), routing).await
                })
            })
            .await?;
        T::from_redis_value(value).map_err(|e| storage(what, e.into()))
    }

    /// Sends one command (see [`Link::run`]).
    pub(crate) async fn query<T: FromRedisValue>(
        &self,
        what: &str,
        cmd: &Cmd,
    ) -> Result<T, FrontierError> {
        self.run(what, |mut c| {
            Box::pin(async move { cmd.query_async(&mut c).await })
        })
        .await
    }

    /// Sends a pipeline (see [`Link::run`]).
    pub(crate) async fn query_pipe<T: FromRedisValue>(
        &self,
        what: &str,
        pipe: &Pipeline,
    ) -> Result<T, FrontierError> {
        self.run(what, |mut c| {
            Box::pin(async move { pipe.query_async(&mut c).await })
        })
        .await
    }

    /// Runs a script by its hash, loading it first if the server lacks it (e.g.
    /// after a restart); see [`Link::run`].
    pub(crate) async fn invoke<T: FromRedisValue + Send>(
        &self,
        what: &str,
        call: &ScriptInvocation<'_>,
    ) -> Result<T, FrontierError> {
        self.run(what, |mut c| {
            Box::pin(async move { call.invoke_async(&mut c).await })
        })
        .await
    }

    /// Runs `op` until it succeeds, retrying transient failures.
    ///
    /// A retried operation may have taken effect before its reply was lost, so
    /// the frontier's scripts are written to be safe to run twice (an offer
    /// dedups, an ack of an acked lease is a no-op, a lost claim's lease expires
    /// and is requeued): delivery is at least once.
    async fn run<'a, T>(
        &self,
        what: &str,
        mut op: impl FnMut(Live) -> BoxFuture<'a, RedisResult<T>>,
    ) -> Result<T, FrontierError> {
        let mut outage: Option<Instant> = None;
        let mut warned = false;
        let mut pause = MIN_BACK_OFF;
        loop {
            let attempt = match self.live().await {
                Ok(conn) => op(conn).await,
                Err(e) => Err(e),
            };
            let err = match attempt {
                Ok(value) => {
                    if warned {
                        tracing::warn!("Redis is back; the crawl resumes ({what})");
                    }
                    return Ok(value);
                }
                Err(e) if is_transient(&e) => e,
                Err(e) => return Err(storage(what, e)),
            };
            let since = *outage.get_or_insert_with(Instant::now);
            let down = since.elapsed();
            if down >= self.max_outage {
                return Err(storage(
                    &format!("{what}: Redis unreachable for {}s", down.as_secs()),
                    err,
                ));
            }
            if !warned && down >= WARN_AFTER {
                warned = true;
                tracing::warn!(error = %err, "Redis unreachable; the crawl is paused until it returns ({what})");
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACK_OFF);
        }
    }
}

/// The nodes named by a `redis+cluster://[USER:PASS@]HOST:PORT[,HOST:PORT…][/]`
/// URL, as `redis://` URLs; `None` for any other URL.
fn cluster_nodes(url: &str) -> Option<Vec<String>> {
    let rest = url.strip_prefix(CLUSTER_SCHEME)?;
    let authority = rest.split('/').next().unwrap_or_default();
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (format!("{user}@"), hosts),
        None => (String::new(), authority),
    };
    Some(
        hosts
            .split(',')
            .filter(|h| !h.is_empty())
            .map(|h| format!("redis://{userinfo}{h}/"))
            .collect(),
    )
}

/// Whether waiting may fix the error: connection loss, time-outs, a cluster
/// that is re-forming (`CLUSTERDOWN`, `TRYAGAIN`, a node the client cannot
/// reach yet, slots answered as moved), a server reading its data back after
/// a restart (`LOADING`) and a script it lost in that restart (`NOSCRIPT` that
/// outlived the client's own reload) are transient; a script error or a wrong
/// type is not.
///
/// A transaction (`MULTI` … `EXEC`) one of whose commands met such an answer
/// is refused whole with `EXECABORT`, so nothing of it was applied: it is
/// transient when every refusal inside it is.
fn is_transient(e: &RedisError) -> bool {
    if e.is_timeout() || e.is_io_error() {
        return true;
    }
    match e.kind() {
        ErrorKind::Server(ServerErrorKind::ExecAbort) => {
            let refusals = e.clone().into_server_errors().unwrap_or_default();
            let mut inner = refusals
                .iter()
                .filter_map(|(_, refusal)| refusal.kind())
                .filter(|kind| *kind != ServerErrorKind::ExecAbort)
                .peekable();
            inner.peek().is_some()
                && inner.all(|kind| is_transient(&(ErrorKind::Server(kind), "refused").into()))
        }
        // The client reloads a missing script itself; one still missing was
        // lost in a restart between that load and the call.
        ErrorKind::Server(ServerErrorKind::NoScript) => true,
        // The crate's own table of what each error calls for.
        _ => !matches!(e.retry_method(), RetryMethod::NoRetry),
    }
}

fn storage(what: &str, e: RedisError) -> FrontierError {
    FrontierError::Redis {
        what: what.to_owned(),
        source: e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_urls_name_their_nodes() {
        let cases: [(&str, Option<Vec<&str>>); 4] = [
            ("redis://a:1/0", None),
            ("redis+cluster://a:1", Some(vec!["redis://a:1/"])),
            (
                "redis+cluster://a:1,b:2/",
                Some(vec!["redis://a:1/", "redis://b:2/"]),
            ),
            (
                "redis+cluster://u:p@a:1,b:2",
                Some(vec!["redis://u:p@a:1/", "redis://u:p@b:2/"]),
            ),
        ];
        for (url, want) in cases {
            let want = want.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(cluster_nodes(url), want, "{url}");
        }
    }

    #[test]
    fn transient_errors_are_told_apart() {
        let refused: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into();
        let reset: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset").into();
        let type_error: RedisError = (ErrorKind::UnexpectedReturnType, "wrong type").into();
        let client: RedisError = (ErrorKind::Client, "bad").into();
        let unreachable: RedisError =
            (ErrorKind::ClusterConnectionNotFound, "No connections found").into();
        let server = |kind| RedisError::from((ErrorKind::Server(kind), "refused"));
        let cases = [
            (refused, true),
            (reset, true),
            (type_error, false),
            (client, false),
            (unreachable, true),
            (server(ServerErrorKind::ClusterDown), true),
            (server(ServerErrorKind::BusyLoading), true),
            (server(ServerErrorKind::TryAgain), true),
            (server(ServerErrorKind::Moved), true),
            (server(ServerErrorKind::NoScript), true),
            (server(ServerErrorKind::ResponseError), false),
            (server(ServerErrorKind::NoPerm), false),
            // An abort that names no refusal inside it tells nothing to wait for.
            (server(ServerErrorKind::ExecAbort), false),
        ];
        for (err, want) in cases {
            assert_eq!(is_transient(&err), want, "{err}");
        }
    }
}
