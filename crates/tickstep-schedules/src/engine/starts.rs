//! Starts that wait for their cadence update to be durable (docs/schedules.md §11.42).
//!
//! A tick that finds a persistent schedule due on a store does everything a start does to the
//! cadence at once — the next deadline, the counters, a place in the running list under the run
//! id the engine hands the firing — but the firing itself waits here. The group commit hands the
//! update to the store's writer (behind the tick, docs/schedules.md §11.35, docs/schedules.md
//! §11.15); a later tick, once the store reports that write durable, starts the firing. So the
//! promise of docs/schedules.md §11.5 holds after a crash — the point a firing served is never
//! fired again, and the run that served it is on disk under its id, because the row saying so is
//! written before the verb runs — and the frame never waits for the disk: it learns durability
//! from a counter the writer raises.
//!
//! A firing that needs no write — no store, a schedule that does not persist — starts in the
//! tick that plans it, as does one on a store that writes before `commit` returns (write, then
//! start). Under a virtual clock the tick waits for its own write and starts its firings at once:
//! virtual time treats the disk as instant, so a run on a `ManualClock` is deterministic and a
//! due point starts at its deadline.
//!
//! A waiting start whose schedule was stopped, dropped for another node or replaced meanwhile
//! (its place in the running list is gone) never starts. One whose schedule retired meanwhile
//! starts, as it would have had it started at once, and its outcome is ignored (docs/schedules.md §3.4).
//!
//! Restart: after a crash a place in the running list is a run that may or may not have started;
//! it is handed back to the host with its run id (`interrupted()`), which reattaches the task it
//! still has or abandons the run (docs/schedules.md §11.5: the point is not fired again). A clean
//! shutdown marks the ones it knows never started (`started_unix` 0), and the next open starts
//! those at its first tick under the same run id.

use std::collections::VecDeque;

use super::table::Later;
use crate::Firing;

/// A planned firing waiting for its cadence update to be durable.
pub(super) struct Pending {
    pub(super) firing: Firing,
    /// The store's grouped commit that carries its update, counted as the store counts
    /// ([`Backend::handed_behind`](crate::store::Backend)); `Some(0)` for a write made before
    /// `commit` returned, `None` until a group commit has carried it.
    pub(super) seq: Option<u64>,
    /// When it was planned (Unix nanoseconds): the host ticks again one engine tick later.
    pub(super) planned: u64,
}

/// The starts waiting for their update, oldest first, and the buffers a tick plans into.
#[derive(Default)]
pub(super) struct Starts {
    pending: VecDeque<Pending>,
    /// Reused across ticks so planning does not allocate.
    firing_buf: Vec<Firing>,
    /// Re-arms a tick leaves for its end (docs/schedules.md §10.2), reused across ticks.
    later_buf: Later,
}

impl Starts {
    /// Keeps `firing`, planned at `now`, until a group commit carries its update.
    #[inline]
    pub(super) fn wait(&mut self, firing: Firing, now: u64) {
        self.pending.push_back(Pending {
            firing,
            seq: None,
            planned: now,
        });
    }

    /// A group commit carried every waiting start not yet carried; the store counts it `seq`.
    #[inline]
    pub(super) fn carried(&mut self, seq: u64) {
        for p in self.pending.iter_mut().rev() {
            if p.seq.is_some() {
                break;
            }
            p.seq = Some(seq);
        }
    }

    /// Whether the oldest waiting start's update is durable by `durable`: a tick now would
    /// start it.
    #[inline]
    pub(super) fn startable(&self, durable: u64) -> bool {
        self.pending
            .front()
            .is_some_and(|p| p.seq.is_some_and(|seq| seq <= durable))
    }

    /// The oldest waiting start, taken off the list, if its update is durable by `durable`.
    #[inline]
    pub(super) fn pop_durable(&mut self, durable: u64) -> Option<Firing> {
        if !self.startable(durable) {
            return None;
        }
        self.pending.pop_front().map(|p| p.firing)
    }

    /// When the host should tick again for the waiting starts: one engine tick (`tick_ns`)
    /// after the oldest was planned.
    #[inline]
    pub(super) fn deadline(&self, tick_ns: u64) -> Option<u64> {
        self.pending
            .front()
            .map(|p| p.planned.saturating_add(tick_ns))
    }

    /// How many starts wait.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Every waiting start, taken off the list (a clean shutdown parks them).
    pub(super) fn take_all(&mut self) -> VecDeque<Pending> {
        std::mem::take(&mut self.pending)
    }

    /// The firing buffer, empty, for a plan to fill.
    #[inline]
    pub(super) fn take_firings(&mut self) -> Vec<Firing> {
        std::mem::take(&mut self.firing_buf)
    }

    /// Gives the firing buffer back for the next tick (keeping its capacity).
    #[inline]
    pub(super) fn recycle(&mut self, mut firings: Vec<Firing>) {
        firings.clear();
        self.firing_buf = firings;
    }

    /// The re-arm buffer, for a tick to fill.
    #[inline]
    pub(super) fn take_later(&mut self) -> Later {
        std::mem::take(&mut self.later_buf)
    }

    /// Gives the re-arm buffer back, drained.
    #[inline]
    pub(super) fn put_later(&mut self, later: Later) {
        self.later_buf = later;
    }
}
