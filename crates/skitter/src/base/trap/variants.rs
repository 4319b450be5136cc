//! The one stateful trap rule: distinct query strings per path, kept as 64-bit
//! hashes in sharded maps under a fixed memory budget.
//!
//! Budget unit: one path entry or one stored query hash. When a shard is full, the
//! path with the fewest stored variants among a small sample is forgotten: one-off
//! paths (the vast majority) make room, while a trap path, which by then holds many
//! variants, stays tracked. A forgotten path that comes back starts from zero.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard};

/// About two million hashes in all: with hash-table overhead, at most ≈ 40 MB.
pub(super) const DEFAULT_BUDGET: usize = 1 << 21;

/// Independent locks, so workers checking different paths rarely wait.
const SHARDS: usize = 16;

/// How many entries are looked at to pick one to forget.
const EVICTION_SAMPLE: usize = 8;

/// Keys are already xxh3 hashes: hashing them again would only cost time, and a
/// fixed hasher keeps iteration (and so eviction) deterministic.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used for our keys; fold anything else in anyway.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Build = BuildHasherDefault<Prehashed>;

#[derive(Default)]
struct Shard {
    paths: HashMap<u64, HashSet<u64, Build>, Build>,
    /// Path entries plus stored query hashes.
    units: usize,
}

impl Shard {
    /// Forgets the least-varied sampled path other than `keep`; `false` if there
    /// is none.
    fn evict(&mut self, keep: u64) -> bool {
        let victim = self
            .paths
            .iter()
            .filter(|(path, _)| **path != keep)
            .take(EVICTION_SAMPLE)
            .min_by_key(|(_, queries)| queries.len())
            .map(|(path, _)| *path);
        let Some(victim) = victim else {
            return false;
        };
        if let Some(queries) = self.paths.remove(&victim) {
            self.units -= 1 + queries.len();
        }
        true
    }
}

/// Distinct query-string hashes per path hash.
pub(super) struct QueryVariants {
    shards: [Mutex<Shard>; SHARDS],
    shard_budget: usize,
}

impl QueryVariants {
    pub(super) fn new(budget: usize) -> Self {
        QueryVariants {
            shards: Default::default(),
            shard_budget: (budget / SHARDS).max(2),
        }
    }

    fn shard(&self, path: u64) -> MutexGuard<'_, Shard> {
        // Middle bits pick the shard: the table inside uses the low bits for the
        // bucket and the top seven as a tag, which should stay varied.
        let index = (path >> 32) as usize % SHARDS;
        // Nothing panics while a shard is locked, but a poisoned lock must not
        // take the crawl down either: the data is consistent after every step.
        self.shards[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records `query` for `path` and says whether it may be followed: a query
    /// already recorded always may, a new one only while the path has fewer than
    /// `max` variants.
    pub(super) fn admit(&self, path: u64, query: u64, max: usize) -> bool {
        let mut shard = self.shard(path);
        let known = match shard.paths.get(&path) {
            Some(queries) if queries.contains(&query) => return true,
            Some(queries) if queries.len() >= max => return false,
            Some(_) => true,
            None => false,
        };
        let cost = if known { 1 } else { 2 };
        while shard.units + cost > self.shard_budget {
            if !shard.evict(path) {
                // Only this path is left and it alone fills the shard (a limit
                // above the budget): follow without recording, memory stays bounded.
                return true;
            }
        }
        shard.paths.entry(path).or_default().insert(query);
        shard.units += cost;
        true
    }

    #[cfg(test)]
    fn units(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map_or(0, |s| s.units))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path hash that lands in shard 0, so small budgets are easy to reason about.
    fn path(n: u64) -> u64 {
        n
    }

    #[test]
    fn counts_distinct_queries_and_repeats_pass() {
        let v = QueryVariants::new(DEFAULT_BUDGET);
        for q in 0..5 {
            assert!(v.admit(path(1), q, 5), "variant {q}");
            assert!(v.admit(path(1), q, 5), "variant {q} again");
        }
        assert!(!v.admit(path(1), 99, 5), "sixth variant");
        assert!(v.admit(path(1), 3, 5), "a known variant still passes");
        assert!(v.admit(path(2), 99, 5), "other paths are separate");
    }

    #[test]
    fn budget_is_never_exceeded_and_trap_paths_survive() {
        // 16 shards × 64 units; everything below goes to shard 0.
        let v = QueryVariants::new(SHARDS * 64);
        let trap = path(7);
        for q in 0..40 {
            assert!(v.admit(trap, q, 1000));
        }
        for p in 100..1100 {
            assert!(v.admit(path(p), 1, 1000), "one-off path {p}");
            assert!(v.units() <= 64, "after path {p}: {} units", v.units());
        }
        // The trap path kept its 40 variants: a known one passes without new units.
        let before = v.units();
        assert!(v.admit(trap, 39, 1000));
        assert_eq!(v.units(), before);
    }

    #[test]
    fn a_path_larger_than_the_budget_fails_open_without_growing() {
        let v = QueryVariants::new(SHARDS * 8);
        for q in 0..100 {
            assert!(v.admit(path(3), q, 1000));
        }
        assert!(v.units() <= 8);
    }
}
