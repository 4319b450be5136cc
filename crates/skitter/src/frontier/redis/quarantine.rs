//! The URLs workers quarantined (see `Lease::lost`): the complete script
//! keeps each in its shard's `quarantine` hash (URL → times its lease was
//! lost) when the worker hands it back as quarantined; `skitter status` lists
//! them from here.

use super::RedisFrontier;
use crate::frontier::FrontierError;

impl RedisFrontier {
    /// The URLs workers quarantined, their leases lost too often (see
    /// [`Lease::lost`](crate::frontier::Lease::lost)), with the times each
    /// was lost, over all shards in URL order; at most `max` of them (a
    /// sample of the first shards' when there are more), and how many there
    /// are in all.
    pub async fn quarantined(
        &self,
        max: usize,
    ) -> Result<(Vec<(String, u32)>, u64), FrontierError> {
        let mut all = Vec::new();
        let mut total = 0;
        for (_, keys) in self.shared.shards.all() {
            let key = keys.key("quarantine");
            let len: u64 = self
                .shared
                .link
                .query("quarantined", ::redis::cmd("HLEN").arg(&key))
                .await?;
            total += len;
            if all.len() < max && len > 0 {
                let mut scan = ::redis::cmd("HSCAN");
                scan.arg(&key).arg(0).arg("COUNT").arg(max);
                let (_, found): (u64, Vec<(String, u32)>) =
                    self.shared.link.query("quarantined", &scan).await?;
                all.extend(found);
            }
        }
        all.sort();
        all.truncate(max);
        Ok((all, total))
    }
}
