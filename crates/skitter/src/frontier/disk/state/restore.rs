//! Rebuilding the working state when a state directory is opened, and moving
//! the seen set to disk when it outgrows its budget: the two places where what
//! is in memory is squared with what a crash may have left in the database.

use std::collections::{HashMap, HashSet, VecDeque};
use tokio::time::Instant;

use super::{Host, HostQueue, HostSlots, Limits, Place, Rota, State};
use crate::host::LivePolicy;
use crate::state::store::StoreError;
use crate::state::store::batch::Batch;
use crate::state::store::counters::Progress;
use crate::state::store::fpset::FpSet;
use crate::state::store::records::Records;

impl State {
    /// Rebuilds the working state from the last commit: every queued request is
    /// waiting again (with its tries, one lost lease more if the run that
    /// died held it), completed ones are cut out of their chunks, and the
    /// in-memory seen set is reloaded.
    pub(in crate::frontier::disk) fn load(
        records: &mut Records,
        policy: LivePolicy,
        limits: Limits,
    ) -> Result<State, StoreError> {
        let mut progress = records.load_progress()?;
        let done = records.done_fps()?;
        let attempts = records.restore_attempts()?;
        let mut state = State {
            policy: policy.clone(),
            limits,
            seen: FpSet::default(),
            progress: Progress::default(),
            hosts: Vec::new(),
            by_key: HashMap::new(),
            forgotten: super::hosts::Forgotten::default(),
            rota: Rota::default(),
            leases: HashMap::new(),
            attempts,
            retrying: 0,
            next_lease: 0,
            failed: None,
            dirty: Vec::new(),
            committed: Progress::default(),
            batch: Batch::default(),
            generation: 1,
            open_hosts: Vec::new(),
            open_entries: 0,
            kept_order: VecDeque::new(),
            kept_bytes: 0,
            key_buf: String::new(),
            waiting: false,
            nudged: false,
            stop: false,
        };
        let mut index = HashMap::new();
        for mut row in records.load_hosts()? {
            row.pending = 0;
            index.insert(row.id, state.hosts.len());
            state.by_key.insert(row.key.clone(), state.hosts.len());
            let mut slots = HostSlots::new(policy.clone());
            slots.set_delay_floor(row.delay_floor);
            state.hosts.push(Host {
                row,
                slots,
                place: Place::Idle,
                queue: HostQueue::default(),
                waiting: 0,
                retries: super::RetryQueue::default(),
                dirty: false,
                watched: false,
                written: 0,
            });
        }
        let is_done = |fp: &u128| done.binary_search(fp).is_ok();
        let mut partial = Vec::new();
        let mut queued_fps = Vec::new();
        records.for_each_chunk(|id, host, fps| {
            let &idx = index
                .get(&host)
                .ok_or_else(|| StoreError::Corrupt(format!("chunk {id} of unknown host {host}")))?;
            let live = fps.iter().filter(|fp| !is_done(fp)).count() as u64;
            if live < fps.len() as u64 {
                partial.push(id);
            }
            let h = &mut state.hosts[idx];
            h.row.pending += live;
            h.queue.on_disk += u64::from(live > 0);
            queued_fps.extend(fps);
            Ok(())
        })?;
        let mut rewrites = Vec::new();
        for id in partial {
            if let Some(chunk) = records.chunk(id)? {
                rewrites.push(chunk.retain(|fp| !is_done(&fp))?);
            }
        }
        records.rewrite_chunks(&rewrites)?;
        state.seen = FpSet::from_sorted(done);
        for fp in queued_fps {
            state.seen.insert(fp);
        }
        let now = Instant::now();
        progress.queued = 0;
        for idx in 0..state.hosts.len() {
            let h = &mut state.hosts[idx];
            h.waiting = h.row.pending;
            progress.queued += h.row.pending;
            state.mark(idx);
            state.place(idx, now);
            state.watch(idx);
        }
        progress.leased = 0;
        state.committed = progress.clone();
        state.progress = progress;
        Ok(state)
    }

    /// Moves the seen set to disk. Everything pending must be committed first
    /// (so no fingerprint reaches the on-disk set before its queued request);
    /// partly completed chunks are cut down, since the `done` rows go.
    pub(in crate::frontier::disk) fn spill(
        &mut self,
        records: &mut Records,
    ) -> Result<(), StoreError> {
        let mut leased: HashMap<usize, Vec<(i64, u128)>> = HashMap::new();
        for l in self.leases.values() {
            leased.entry(l.host).or_default().push((l.chunk, l.fp));
        }
        let mut rewrites = Vec::new();
        for (idx, host) in self.hosts.iter().enumerate() {
            let leased = leased.get(&idx).map_or(&[][..], Vec::as_slice);
            for (id, fps) in host.queue.partial(leased) {
                let keep: HashSet<u128> = fps.into_iter().collect();
                if let Some(chunk) = records.chunk(id)? {
                    rewrites.push(chunk.retain(|fp| keep.contains(&fp))?);
                }
            }
        }
        let sorted = self.seen.take_sorted();
        records.spill(&sorted, &rewrites)?;
        for chunk in &rewrites {
            // Their totals shrink to what is left; the unfinished counts stand.
            if let Some(host) = self.by_id(chunk.host)
                && let Some(live) = self.hosts[host].queue.live.get_mut(&chunk.id)
            {
                live.total = live.unfinished;
            }
        }
        self.progress.spilled = true;
        self.committed.spilled = true;
        Ok(())
    }

    fn by_id(&self, id: i64) -> Option<usize> {
        self.hosts.iter().position(|h| h.row.id == id)
    }
}
