//! The response body type: whole buffers, repeated chunks, and the
//! deliberately broken bodies (stalling, trickling, truncated).
//!
//! One enum instead of boxed trait objects keeps the hot path allocation-free,
//! and every body carries the in-flight guard so a request stays counted
//! until its last byte is handed to hyper.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::future::Future as _;
use std::time::Duration;

use tokio::time::Sleep;
use tokio_util::sync::WaitForCancellationFutureOwned;

use crate::stats::InFlight;

/// Why a body ended early; hyper closes the connection (or resets the stream).
#[derive(Debug)]
pub(crate) struct Aborted(pub(crate) &'static str);

impl fmt::Display for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "test site aborted the response: {}", self.0)
    }
}

impl std::error::Error for Aborted {}

enum Kind {
    /// The whole body at once (`None` once sent).
    Full(Option<Bytes>),
    /// `chunk` sent until `remaining` bytes went out; one shared buffer, so a
    /// large download costs no large allocation.
    Repeat { chunk: Bytes, remaining: u64 },
    /// `head`, then nothing until the site shuts down.
    Stall {
        head: Option<Bytes>,
        until: Pin<Box<WaitForCancellationFutureOwned>>,
    },
    /// `head`, then one space every `every`, without end (a tarpit that never
    /// goes silent long enough for a read timeout); ends when the site shuts down.
    Trickle {
        head: Option<Bytes>,
        every: Duration,
        next: Pin<Box<Sleep>>,
        until: Pin<Box<WaitForCancellationFutureOwned>>,
    },
    /// `head`, one yield (so hyper flushes it), then an error that drops the
    /// connection short of its announced `Content-Length`.
    Truncate { head: Option<Bytes>, yielded: bool },
}

/// A response body served by the test site.
pub(crate) struct SiteBody {
    kind: Kind,
    in_flight: Option<InFlight>,
}

impl SiteBody {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Self::of(Kind::Full(Some(bytes.into())))
    }

    pub(crate) fn repeat(chunk: Bytes, len: u64) -> Self {
        Self::of(Kind::Repeat {
            chunk,
            remaining: len,
        })
    }

    pub(crate) fn stall(head: Bytes, until: WaitForCancellationFutureOwned) -> Self {
        Self::of(Kind::Stall {
            head: Some(head),
            until: Box::pin(until),
        })
    }

    pub(crate) fn trickle(
        head: Bytes,
        every: Duration,
        until: WaitForCancellationFutureOwned,
    ) -> Self {
        Self::of(Kind::Trickle {
            head: Some(head),
            every,
            next: Box::pin(tokio::time::sleep(every)),
            until: Box::pin(until),
        })
    }

    pub(crate) fn truncate(head: Bytes) -> Self {
        Self::of(Kind::Truncate {
            head: Some(head),
            yielded: false,
        })
    }

    fn of(kind: Kind) -> Self {
        SiteBody {
            kind,
            in_flight: None,
        }
    }

    /// Keeps `guard` alive until the body is finished or dropped.
    pub(crate) fn hold(&mut self, guard: InFlight) {
        self.in_flight = Some(guard);
    }

    /// The whole body if this is a not-yet-sent buffer (so it can be recoded).
    pub(crate) fn full_bytes(&self) -> Option<&Bytes> {
        match &self.kind {
            Kind::Full(bytes) => bytes.as_ref(),
            _ => None,
        }
    }

    fn next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Aborted>>> {
        match &mut self.kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(Ok)),
            Kind::Repeat { chunk, remaining } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                let n = usize::try_from(*remaining).map_or(chunk.len(), |r| r.min(chunk.len()));
                *remaining -= n as u64;
                Poll::Ready(Some(Ok(chunk.slice(..n))))
            }
            Kind::Stall { head, until } => match head.take() {
                Some(head) => Poll::Ready(Some(Ok(head))),
                None => until
                    .as_mut()
                    .poll(cx)
                    .map(|()| Some(Err(Aborted("shutdown")))),
            },
            Kind::Trickle {
                head,
                every,
                next,
                until,
            } => {
                if let Some(head) = head.take() {
                    return Poll::Ready(Some(Ok(head)));
                }
                if until.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err(Aborted("shutdown"))));
                }
                match next.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        let at = next.deadline() + *every;
                        next.as_mut().reset(at);
                        Poll::Ready(Some(Ok(Bytes::from_static(b" "))))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
            Kind::Truncate { head, yielded } => match head.take() {
                Some(head) => Poll::Ready(Some(Ok(head))),
                None if !*yielded => {
                    *yielded = true;
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                None => Poll::Ready(Some(Err(Aborted("truncated")))),
            },
        }
    }
}

impl Body for SiteBody {
    type Data = Bytes;
    type Error = Aborted;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Aborted>>> {
        let this = self.get_mut();
        let next = this.next(cx);
        if let Poll::Ready(None | Some(Err(_))) = next {
            // Handed over completely (or given up): no longer in flight.
            this.in_flight = None;
        }
        next.map(|item| item.map(|res| res.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Repeat { remaining, .. } => *remaining == 0,
            Kind::Stall { .. } | Kind::Trickle { .. } | Kind::Truncate { .. } => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Repeat { remaining, .. } => SizeHint::with_exact(*remaining),
            Kind::Stall { .. } | Kind::Trickle { .. } | Kind::Truncate { .. } => {
                SizeHint::default()
            }
        }
    }
}
