//! The runs the engine waits to hear about: each run id it handed out and the schedule it
//! serves, the restored ones a host has not decided on yet, and the runs a tick killed.
//!
//! Keeps docs/schedules.md §7.9 (a run id is the engine's, fresh above every one handed out or
//! restored), docs/schedules.md §11.5 (runs in flight at a crash are handed back under their
//! ids) and docs/schedules.md §16.7 (the runs overlap `"cancel_other"` killed go to
//! `Runner::cancel` with no borrow held).

use tickstep_kernel::clock::Instant;

use super::entry::Entry;
use super::table::IdMap;
use crate::{InFlight, RunId};

/// A run the engine is waiting to hear about.
#[derive(Clone, Copy, Debug)]
pub(super) struct RunRecord {
    pub(super) schedule: u64,
    /// Monotonic start, for durations; `None` for runs restored from the store.
    pub(super) started: Option<Instant>,
}

/// The engine's runs.
#[derive(Default)]
pub(super) struct Runs {
    /// Every run whose outcome the engine waits for, by run id.
    pub(super) awaited: IdMap<RunId, RunRecord>,
    /// The last run id handed out; a restored run raises it (docs/schedules.md §11.5).
    pub(super) last: u64,
    /// Runs restored at open that the host has neither reattached nor abandoned.
    pub(super) interrupted: Vec<InFlight>,
    /// Runs settled as killed by overlap `"cancel_other"` this tick, for the tick to hand to
    /// `Runner::cancel` with no borrow held (docs/schedules.md §16.7).
    pub(super) cancelled: Vec<RunId>,
    /// The tick's monotonic time, for the duration of a run the tick cancels.
    pub(super) tick_mono: Option<Instant>,
}

impl Runs {
    /// A fresh run id: one above every id this engine handed out or restored, so a run is never
    /// confused with another it still waits for, restored ones included (docs/schedules.md §7.9).
    #[inline]
    pub(super) fn next_id(&mut self) -> RunId {
        self.last += 1;
        RunId(self.last)
    }

    /// Remembers `run` as a run of schedule `id` started at `mono`.
    #[inline]
    pub(super) fn await_run(&mut self, run: RunId, id: u64, mono: Instant) {
        let earlier = self.awaited.insert(
            run,
            RunRecord {
                schedule: id,
                started: Some(mono),
            },
        );
        if let Some(earlier) = earlier {
            tracing::warn!(
                run = run.0,
                schedule = earlier.schedule,
                "runner reused the id of a run still awaiting its outcome; the earlier run's outcome will be attributed to the new one"
            );
        }
    }

    /// The run `run` is over: its record, if the engine was waiting for it.
    #[inline]
    pub(super) fn finish(&mut self, run: RunId) -> Option<RunRecord> {
        let record = self.awaited.remove(&run)?;
        self.interrupted.retain(|f| f.run != run);
        Some(record)
    }

    /// Forgets the runs of `e`, which leaves the engine: only while a run id is still this
    /// schedule's, since a runner that reused it for a run still awaited gave it to that newer
    /// run (see `record` in outcome.rs), which goes on.
    pub(super) fn forget(&mut self, e: &Entry) {
        for run in e.running().iter().filter_map(|r| r.run) {
            if self
                .awaited
                .get(&run)
                .is_some_and(|rec| rec.schedule == e.id)
            {
                self.awaited.remove(&run);
            }
        }
    }

    /// Keeps a restored run as its schedule's running firing; whether `run` was awaiting a
    /// decision.
    pub(super) fn reattach(&mut self, run: RunId) -> bool {
        let before = self.interrupted.len();
        self.interrupted.retain(|f| f.run != run);
        self.interrupted.len() != before
    }
}
