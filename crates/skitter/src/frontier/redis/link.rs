//! The connection to Redis, and riding out outages: every frontier operation
//! goes through [`Link::run`], which retries transient failures with capped
//! back-off until the connection returns, so a Redis restart pauses the crawl
//! instead of failing it. Only an outage longer than the configured maximum,
//! or an error that retrying cannot fix, becomes a [`FrontierError`].

use std::time::{Duration, Instant};

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{
    Cmd, FromRedisValue, Pipeline, RedisError, RedisResult, RetryMethod, ScriptInvocation,
};
use futures_util::future::BoxFuture;

use super::super::FrontierError;

/// First pause after a failure; it doubles up to [`MAX_BACK_OFF`].
const MIN_BACK_OFF: Duration = Duration::from_millis(50);
const MAX_BACK_OFF: Duration = Duration::from_secs(2);
/// An outage this long is worth a warning even though the crawl carries on.
const WARN_AFTER: Duration = Duration::from_secs(5);

/// A shared, self-reconnecting connection plus the outage policy.
#[derive(Clone)]
pub(crate) struct Link {
    conn: ConnectionManager,
    max_outage: Duration,
}

impl Link {
    /// A link to `url`. It connects lazily: the first operation waits (within
    /// `max_outage`) for a server that is not up yet.
    pub(crate) fn new(url: &str, max_outage: Duration) -> Result<Link, FrontierError> {
        let client = ::redis::Client::open(url).map_err(|e| storage("bad Redis URL", &e))?;
        // The manager's own reconnect attempts are kept short: the patience lives
        // in `run`, which knows the outage budget and logs.
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(1)
            .set_min_delay(MIN_BACK_OFF)
            .set_max_delay(MAX_BACK_OFF)
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(30)));
        let conn = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| storage("Redis connection setup failed", &e))?;
        Ok(Link { conn, max_outage })
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
        mut op: impl FnMut(ConnectionManager) -> BoxFuture<'a, RedisResult<T>>,
    ) -> Result<T, FrontierError> {
        let mut outage: Option<Instant> = None;
        let mut warned = false;
        let mut pause = MIN_BACK_OFF;
        loop {
            let err = match op(self.conn.clone()).await {
                Ok(value) => {
                    if warned {
                        tracing::warn!("Redis is back; the crawl resumes ({what})");
                    }
                    return Ok(value);
                }
                Err(e) if is_transient(&e) => e,
                Err(e) => return Err(storage(what, &e)),
            };
            let since = *outage.get_or_insert_with(Instant::now);
            let down = since.elapsed();
            if down >= self.max_outage {
                return Err(storage(
                    &format!("{what}: Redis unreachable for {}s", down.as_secs()),
                    &err,
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

/// Whether waiting may fix the error: connection loss, time-outs and "busy"
/// answers (`LOADING` while a restarted server reads its data back, `TRYAGAIN`)
/// are transient; a script error or a wrong type is not.
fn is_transient(e: &RedisError) -> bool {
    e.is_timeout()
        || e.is_io_error()
        || matches!(
            e.retry_method(),
            RetryMethod::Reconnect | RetryMethod::RetryImmediately | RetryMethod::WaitAndRetry
        )
}

fn storage(what: &str, e: &RedisError) -> FrontierError {
    FrontierError::Storage(format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::redis::ErrorKind;

    #[test]
    fn transient_errors_are_told_apart() {
        let refused: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into();
        let reset: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset").into();
        let type_error: RedisError = (ErrorKind::UnexpectedReturnType, "wrong type").into();
        let client: RedisError = (ErrorKind::Client, "bad").into();
        let cases = [
            (refused, true),
            (reset, true),
            (type_error, false),
            (client, false),
        ];
        for (err, want) in cases {
            assert_eq!(is_transient(&err), want, "{err}");
        }
    }
}
