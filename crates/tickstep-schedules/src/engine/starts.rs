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

/// Consecutive waiting starts planned at one time and carried by one write: a tick's. What a
/// start waits for is its batch's, so a firing is kept as it is and moved as little as it can be
/// (docs/schedules.md §17.11).
struct Batch {
    /// How many of the waiting firings, from the oldest not in an older batch, are this batch's.
    len: usize,
    /// The store's grouped commit that carries their updates, counted as the store counts
    /// ([`Backend::handed_behind`](crate::store::Backend)); `Some(0)` for a write made before
    /// `commit` returned, `None` until a group commit has carried them.
    seq: Option<u64>,
    /// When they were planned (Unix nanoseconds): the host ticks again one engine tick later.
    planned: u64,
}

/// The starts waiting for their update, oldest first, and the buffers a tick plans into.
#[derive(Default)]
pub(super) struct Starts {
    pending: VecDeque<Firing>,
    /// `pending` in batches, oldest first; their lengths add up to its length.
    batches: VecDeque<Batch>,
    /// Reused across ticks so planning does not allocate.
    firing_buf: Vec<Firing>,
    /// Re-arms a tick leaves for its end (docs/schedules.md §10.2), reused across ticks.
    later_buf: Later,
}

impl Starts {
    /// Keeps `firing`, planned at `now`, until a group commit carries its update.
    #[inline]
    pub(super) fn wait(&mut self, firing: Firing, now: u64) {
        self.pending.push_back(firing);
        match self.batches.back_mut() {
            Some(b) if b.seq.is_none() && b.planned == now => b.len += 1,
            _ => self.batches.push_back(Batch {
                len: 1,
                seq: None,
                planned: now,
            }),
        }
    }

    /// A group commit carried every waiting start not yet carried; the store counts it `seq`.
    #[inline]
    pub(super) fn carried(&mut self, seq: u64) {
        for b in self.batches.iter_mut().rev() {
            if b.seq.is_some() {
                break;
            }
            b.seq = Some(seq);
        }
    }

    /// Whether the oldest waiting start's update is durable by `durable`: a tick now would
    /// start it.
    #[inline]
    pub(super) fn startable(&self, durable: u64) -> bool {
        self.batches
            .front()
            .is_some_and(|b| b.seq.is_some_and(|seq| seq <= durable))
    }

    /// The oldest waiting start, taken off the list, if its update is durable by `durable`.
    #[inline]
    pub(super) fn pop_durable(&mut self, durable: u64) -> Option<Firing> {
        if !self.startable(durable) {
            return None;
        }
        let batch = self.batches.front_mut()?;
        batch.len -= 1;
        if batch.len == 0 {
            self.batches.pop_front();
        }
        self.pending.pop_front()
    }

    /// When the host should tick again for the waiting starts: one engine tick (`tick_ns`)
    /// after the oldest was planned.
    #[inline]
    pub(super) fn deadline(&self, tick_ns: u64) -> Option<u64> {
        self.batches
            .front()
            .map(|b| b.planned.saturating_add(tick_ns))
    }

    /// How many starts wait.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Every waiting start, taken off the list (a clean shutdown parks them).
    pub(super) fn take_all(&mut self) -> VecDeque<Firing> {
        self.batches.clear();
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

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::Starts;
    use crate::{Firing, ObjId, RunId, ScheduleId};

    fn firing(run: u64) -> Firing {
        Firing {
            schedule: ScheduleId::from_raw(run),
            run: RunId(run),
            target: ObjId(1),
            verb: Rc::from("tick"),
            args: Rc::from([]),
            state: None,
            elapsed: None,
            player: ObjId(1),
            authority: ObjId(1),
            nominal_unix_nanos: run,
            time_limit: None,
            tick_limit: None,
        }
    }

    fn pop_all(starts: &mut Starts, durable: u64) -> Vec<u64> {
        std::iter::from_fn(|| starts.pop_durable(durable))
            .map(|f| f.run.0)
            .collect()
    }

    #[test]
    fn a_start_waits_for_the_write_that_carries_it_whatever_batch_it_shares_a_time_with() {
        let mut starts = Starts::default();
        starts.wait(firing(1), 100);
        starts.wait(firing(2), 100);
        assert!(!starts.startable(u64::MAX), "no write carries them yet");
        assert_eq!(starts.deadline(10), Some(110));
        starts.carried(1);
        // Planned at the same time but after that write: the next write carries it.
        starts.wait(firing(3), 100);
        starts.wait(firing(4), 200);
        starts.carried(2);
        starts.wait(firing(5), 200);
        assert_eq!(starts.len(), 5);
        assert!(pop_all(&mut starts, 0).is_empty(), "nothing durable yet");
        assert_eq!(pop_all(&mut starts, 1), [1, 2]);
        assert_eq!(starts.deadline(10), Some(110), "3 was planned at 100");
        assert_eq!(pop_all(&mut starts, 1), Vec::<u64>::new());
        assert_eq!(pop_all(&mut starts, 2), [3, 4], "5 waits for a write");
        assert_eq!(starts.deadline(10), Some(210));
        starts.carried(3);
        assert!(starts.startable(3));
        assert_eq!(pop_all(&mut starts, 3), [5]);
        assert_eq!((starts.len(), starts.deadline(10)), (0, None));
    }

    #[test]
    fn taking_every_start_leaves_none_waiting() {
        let mut starts = Starts::default();
        starts.wait(firing(1), 100);
        starts.carried(1);
        starts.wait(firing(2), 100);
        let taken: Vec<u64> = starts.take_all().iter().map(|f| f.run.0).collect();
        assert_eq!(taken, [1, 2]);
        assert!(!starts.startable(u64::MAX));
        assert_eq!(starts.deadline(10), None);
        starts.wait(firing(3), 300);
        starts.carried(4);
        assert_eq!(pop_all(&mut starts, 4), [3], "a new batch after the take");
    }
}
