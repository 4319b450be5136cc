//! The in-memory seen set: URL fingerprints at close to 16 bytes each.
//!
//! A `HashSet<u128>` costs 18–36 bytes per entry depending on its load factor and
//! doubles its allocation when it grows. Here most fingerprints sit in one sorted
//! array (exactly 16 bytes each, binary-searched) and new ones in a small hash set
//! that is merged into the array once it reaches an eighth of its size, so the
//! merges cost O(1) amortised copies per insert.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Fingerprints are already uniform hashes: hashing them again is wasted work.
#[derive(Default)]
struct FpHasher(u64);

impl Hasher for FpHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 ^= u64::from_le_bytes(word);
        }
    }

    fn write_u128(&mut self, fp: u128) {
        self.0 = fp as u64;
    }
}

/// Fewer new fingerprints than this are never merged: merging is a full pass.
const MIN_DELTA: usize = 4096;

/// A set of 128-bit fingerprints.
#[derive(Default)]
pub(crate) struct FpSet {
    sorted: Vec<u128>,
    delta: HashSet<u128, BuildHasherDefault<FpHasher>>,
}

impl FpSet {
    /// A set holding `sorted` (ascending; duplicates are dropped).
    pub(crate) fn from_sorted(mut sorted: Vec<u128>) -> FpSet {
        sorted.dedup();
        FpSet {
            sorted,
            delta: HashSet::default(),
        }
    }

    pub(crate) fn contains(&self, fp: u128) -> bool {
        self.delta.contains(&fp) || self.sorted.binary_search(&fp).is_ok()
    }

    /// Adds `fp`; false when it was already present.
    pub(crate) fn insert(&mut self, fp: u128) -> bool {
        if self.sorted.binary_search(&fp).is_ok() || !self.delta.insert(fp) {
            return false;
        }
        if self.delta.len() >= MIN_DELTA.max(self.sorted.len() / 8) {
            self.merge();
        }
        true
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.sorted.len() + self.delta.len()
    }

    /// Heap bytes held, counting a hash bucket as its 16 bytes plus a control byte.
    pub(crate) fn bytes(&self) -> usize {
        self.sorted.capacity() * 16 + self.delta.capacity() * 17
    }

    /// Empties the set, handing back its fingerprints in ascending order.
    pub(crate) fn take_sorted(&mut self) -> Vec<u128> {
        self.merge();
        self.delta = HashSet::default();
        std::mem::take(&mut self.sorted)
    }

    /// Moves the delta into the sorted array, merging from the back in place so
    /// the array never exists twice.
    fn merge(&mut self) {
        let mut add: Vec<u128> = self.delta.drain().collect();
        add.sort_unstable();
        let old = self.sorted.len();
        self.sorted.reserve_exact(add.len());
        self.sorted.resize(old + add.len(), 0);
        let (mut i, mut j) = (old, add.len());
        for k in (0..old + add.len()).rev() {
            if j == 0 {
                break; // The rest of the old prefix is already in place.
            }
            if i > 0 && self.sorted[i - 1] > add[j - 1] {
                self.sorted[k] = self.sorted[i - 1];
                i -= 1;
            } else {
                self.sorted[k] = add[j - 1];
                j -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_contains_and_merge() {
        let mut set = FpSet::default();
        // Enough values to force several merges, in scrambled order.
        let values: Vec<u128> = (0..50_000u128)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835))
            .collect();
        for &v in &values {
            assert!(set.insert(v));
        }
        for &v in &values {
            assert!(!set.insert(v), "duplicate accepted");
            assert!(set.contains(v));
        }
        assert!(!set.contains(12345));
        assert_eq!(set.len(), values.len());
        let sorted = set.take_sorted();
        assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sorted.len(), values.len());
        assert_eq!(set.len(), 0);
    }

    #[test]
    fn memory_is_close_to_sixteen_bytes_each() {
        let mut set = FpSet::default();
        for i in 0..200_000u128 {
            set.insert(i * 7919);
        }
        let per = set.bytes() as f64 / set.len() as f64;
        assert!(per < 24.0, "{per} bytes per fingerprint");
    }
}
