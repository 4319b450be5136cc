//! The per-host cap: at most `per_host` requests in flight to one host:port.
//!
//! One semaphore per host, created on first use and removed when its last user
//! lets go, so a list spanning millions of hosts does not grow a million entries.
//! The map's mutex is held only to look up or remove an entry, never across an
//! `.await`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::frontier::HostKey;

/// The per-host semaphores.
#[derive(Debug)]
pub(crate) struct HostLimits {
    per_host: usize,
    map: Mutex<HashMap<HostKey, Arc<Semaphore>>>,
}

/// A held per-host slot; dropping it frees the slot.
#[derive(Debug)]
pub(crate) struct HostSlot {
    limits: Arc<HostLimits>,
    key: HostKey,
    permit: Option<OwnedSemaphorePermit>,
}

impl HostLimits {
    pub(crate) fn new(per_host: usize) -> Arc<HostLimits> {
        Arc::new(HostLimits {
            per_host: per_host.max(1),
            map: Mutex::new(HashMap::new()),
        })
    }

    /// Waits for a slot on `key`'s host.
    pub(crate) async fn acquire(self: &Arc<Self>, key: HostKey) -> HostSlot {
        let semaphore = self
            .lock()
            .entry(key.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(self.per_host)))
            .clone();
        let permit = semaphore.acquire_owned().await.ok();
        HostSlot {
            limits: self.clone(),
            key,
            permit,
        }
    }

    /// Hosts with an entry (in use, or waited for), for tests.
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<HostKey, Arc<Semaphore>>> {
        // The map is consistent after any panic (every change is one call).
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for HostSlot {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut map = self.limits.lock();
        // Waiters and permit holders each keep a clone: one left means the map's own.
        if map
            .get(&self.key)
            .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            map.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;

    fn key(s: &str) -> HostKey {
        HostKey::of(&Url::parse(s).unwrap())
    }

    #[tokio::test]
    async fn caps_per_host_and_forgets_idle_hosts() {
        let limits = HostLimits::new(2);
        let a1 = limits.acquire(key("http://a/")).await;
        let a2 = limits.acquire(key("http://a:80/x")).await;
        let b = limits.acquire(key("http://b/")).await;
        let third = limits.acquire(key("http://a/"));
        tokio::pin!(third);
        assert!(futures_util::poll!(third.as_mut()).is_pending());
        drop(a1);
        let a3 = third.await;
        assert_eq!(limits.tracked(), 2);
        drop((a2, a3, b));
        assert_eq!(limits.tracked(), 0);
    }
}
