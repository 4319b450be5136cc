//! The caps on extraction work and output per page, and the budget that
//! enforces them.
//!
//! Every cap that is hit is recorded on the page as an
//! [`ExtractFailure`](super::ExtractFailure) whose message starts with
//! `limit:`, never silently.

/// Records one rule set makes on one page at most.
pub const MAX_RECORDS: usize = 10_000;
/// Bytes of one value (a string, or one element of an `all` array) at most;
/// a longer value is cut at a character boundary.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Values one `all` field collects at most.
pub const MAX_MATCHES: usize = 10_000;
/// Bytes of values one page yields at most, over all its records.
pub const MAX_PAGE_BYTES: usize = 16 * 1024 * 1024;
/// Document nodes the selectors of one page may visit at most (each field's
/// search within each record counts the nodes it walks), so repeated items on
/// a deep or huge page cannot make the work quadratic without bound.
pub const MAX_NODE_VISITS: u64 = 20_000_000;
/// Failures recorded per page at most; further ones are counted in one.
pub const MAX_FAILURES: usize = 100;

/// What one page may still spend.
#[derive(Debug)]
pub(crate) struct Budget {
    pub bytes_left: usize,
    pub visits_left: u64,
    /// A cap was hit: which one, for the page's failure.
    pub exhausted: Option<&'static str>,
}

impl Budget {
    pub fn new() -> Budget {
        Budget {
            bytes_left: MAX_PAGE_BYTES,
            visits_left: MAX_NODE_VISITS,
            exhausted: None,
        }
    }

    /// Counts one visited node; false once the page's work is used up.
    pub fn visit(&mut self) -> bool {
        if self.visits_left == 0 {
            self.exhausted.get_or_insert(
                "limit: selectors visited 20,000,000 nodes on this page; extraction stopped",
            );
            return false;
        }
        self.visits_left -= 1;
        true
    }

    /// Takes `n` bytes of output; false (and nothing taken) when they do not fit.
    pub fn take_bytes(&mut self, n: usize) -> bool {
        if n > self.bytes_left {
            self.exhausted
                .get_or_insert("limit: 16 MiB of values on this page; extraction stopped");
            return false;
        }
        self.bytes_left -= n;
        true
    }

    pub fn is_exhausted(&self) -> bool {
        self.exhausted.is_some()
    }
}

/// `s` cut to at most [`MAX_VALUE_BYTES`] at a character boundary, and
/// whether it was cut.
pub(crate) fn cut_value(mut s: String) -> (String, bool) {
    if s.len() <= MAX_VALUE_BYTES {
        return (s, false);
    }
    let mut end = MAX_VALUE_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    (s, true)
}
