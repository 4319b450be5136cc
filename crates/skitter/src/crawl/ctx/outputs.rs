//! The way from the workers to the outputs: the bounded channel to the task
//! that feeds the sinks and the report tally (see `handoff`), and whether a
//! page must be written before its lease completes.

use tokio::sync::mpsc;

use crate::crawl::handoff::ToSinks;

/// The outputs' channel, as the workers see it.
pub(crate) struct Outputs {
    pub(crate) pages: mpsc::Sender<ToSinks>,
    /// Outputs write a page before its lease completes (see `handoff`).
    pub(crate) first: bool,
}
