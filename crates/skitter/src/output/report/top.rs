//! The busiest hosts of a crawl in bounded memory: a space-saving counter
//! (Metwally, Agrawal and El Abbadi, 2005) of [`TopCounts::CAPACITY`] slots.
//!
//! A crawl of a million hosts cannot keep a count per host for a dashboard
//! (nor a Prometheus label per host). Space-saving keeps a fixed number of
//! counters: a host already counted is counted up; a new one takes the slot
//! of the least counted, starting from that count plus one. Any host with
//! more than `1/CAPACITY` of the pages is certain to be held, and a held
//! host's count is over its true count by at most its `over` (the count
//! it inherited), so the top few of a crawl dominated by some hosts are
//! exact or nearly. A host already held costs one hash lookup; a new one a
//! scan of the slots for the least.

use std::collections::HashMap;

/// One host's count.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HostCount {
    /// The host name.
    pub host: String,
    /// Pages counted for it: its true count plus at most `over`.
    pub pages: u64,
    /// How much of `pages` may belong to hosts it displaced (0: exact).
    pub over: u64,
}

/// A space-saving counter of hosts (see the module header).
#[derive(Clone, Debug, Default)]
pub(crate) struct TopCounts {
    slots: Vec<HostCount>,
    index: HashMap<String, usize>,
}

impl TopCounts {
    /// Hosts held at most.
    pub(crate) const CAPACITY: usize = 64;

    /// Counts one page of `host`.
    pub(crate) fn observe(&mut self, host: &str) {
        if let Some(&i) = self.index.get(host) {
            self.slots[i].pages += 1;
            return;
        }
        if self.slots.len() < Self::CAPACITY {
            self.index.insert(host.to_owned(), self.slots.len());
            self.slots.push(HostCount {
                host: host.to_owned(),
                pages: 1,
                over: 0,
            });
            return;
        }
        let Some((i, least)) = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| s.pages)
            .map(|(i, s)| (i, s.pages))
        else {
            return;
        };
        let slot = &mut self.slots[i];
        self.index.remove(&slot.host);
        slot.host.clear();
        slot.host.push_str(host);
        slot.pages = least + 1;
        slot.over = least;
        self.index.insert(host.to_owned(), i);
    }

    /// The `n` most counted, most first (ties by name).
    pub(crate) fn top(&self, n: usize) -> Vec<HostCount> {
        let mut all = self.slots.clone();
        all.sort_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.host.cmp(&b.host)));
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_hosts_are_counted_exactly() {
        let mut t = TopCounts::default();
        for (host, n) in [("a", 5), ("b", 9), ("c", 1)] {
            for _ in 0..n {
                t.observe(host);
            }
        }
        let top = t.top(2);
        assert_eq!(
            top.iter()
                .map(|h| (h.host.as_str(), h.pages, h.over))
                .collect::<Vec<_>>(),
            [("b", 9, 0), ("a", 5, 0)]
        );
    }

    #[test]
    fn heavy_hosts_survive_a_stream_of_one_page_hosts() {
        let mut t = TopCounts::default();
        // Two hosts with a tenth of the pages each among 10,000 hosts of
        // one page: both are held, their counts within their bounds.
        for i in 0..10_000u32 {
            t.observe(&format!("h{i}"));
            if i % 5 == 0 {
                t.observe("big");
            }
            if i % 7 == 0 {
                t.observe("bigger-ish");
            }
        }
        assert!(t.slots.len() <= TopCounts::CAPACITY);
        assert_eq!(t.index.len(), t.slots.len());
        let top = t.top(2);
        assert_eq!(top[0].host, "big");
        assert_eq!(top[1].host, "bigger-ish");
        for (h, truth) in top.iter().zip([2000, 1429]) {
            assert!(h.pages >= truth && h.pages - h.over <= truth, "{h:?}");
        }
    }
}
