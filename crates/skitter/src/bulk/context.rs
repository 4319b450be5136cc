//! What every task of a bulk fetch shares: the settings, the HTTP client,
//! the global and per-host caps, the channel to the collector, the CPU pool
//! and the stop signals.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::Config;
use super::collector::Event;
use super::index::Update;
use super::summary::ItemReport;
use crate::crawl::body::CpuPool;
use crate::fetch::Fetcher;
use crate::host::slots::HostLimits;

/// What every item task shares.
pub(super) struct Ctx {
    pub(super) config: Config,
    pub(super) fetcher: Fetcher,
    pub(super) global: Arc<Semaphore>,
    pub(super) hosts: Arc<HostLimits>,
    pub(super) events: mpsc::Sender<Event>,
    /// Where extraction runs, off the async workers.
    pub(super) cpu: CpuPool,
    /// Stop starting requests.
    pub(super) stop: CancellationToken,
    /// Drop requests in flight (the grace period is over).
    pub(super) abort: CancellationToken,
}

/// An item's report and its fetch index row.
pub(super) type Finished = (ItemReport, Option<Update>);
