//! Overlap `"cancel_other"` (docs/schedules.md §16.7): a cadence point that arrives while a
//! firing of its schedule runs ends that firing and starts its own.
//!
//! The engine does not own the host's tasks, so ending a firing is two halves. Here, under the
//! tick's borrow, each firing in flight is settled as a fault of kind `killed` whose value names
//! the point that replaced it — the outcome a kill reports, counted as one (`fault_count`,
//! `consecutive_faults`, `max_faults`, the history) — and its run joins `Core::cancelled`. The
//! tick then hands each such run to `Runner::cancel` with no borrow held (docs/schedules.md
//! §10.3), and the host stops the task; whatever it reports for the run later is ignored, since
//! the engine no longer waits for it (docs/schedules.md §7.9). A firing still waiting for its
//! durable start (docs/schedules.md §11.42) has no task yet: its place in the running list goes,
//! so it never starts, and it is counted as the same fault.

use super::core::Core;
use crate::{Fault, FaultKind, Outcome, Value};

impl Core {
    /// Ends every firing of `id` in flight because cadence point `point` arrived under overlap
    /// `"cancel_other"`. Returns whether the schedule is still live and unpaused, so the point
    /// may start: settling the killed firings may have retired or paused it (`max_faults`,
    /// docs/schedules.md §16.6).
    pub(super) fn cancel_running(&mut self, id: u64, point: u64, now: u64) -> bool {
        let Some(e) = self.table.get_mut(id) else {
            return false;
        };
        let why = || Fault {
            kind: FaultKind::Killed,
            value: Value::Str(format!(
                "killed: overlap \"cancel_other\" started the point at {}",
                crate::info::unix_seconds(point)
            )),
        };
        let waiting = e.running().iter().filter(|r| r.waiting).count();
        let runs: Vec<_> = e
            .running()
            .iter()
            .filter(|r| !r.waiting)
            .filter_map(|r| r.run)
            .collect();
        if waiting > 0 {
            e.extra_mut().running.retain(|r| !r.waiting);
            for _ in 0..waiting {
                self.fault(id, why(), now);
            }
            self.mark_dirty(id);
        }
        for run in runs {
            let Some(started) = self.runs.get(&run).map(|r| r.started) else {
                continue;
            };
            let mono = self.tick_mono.or(started);
            let Some(mono) = mono else {
                continue;
            };
            let Fault { kind, value } = why();
            self.settle(run, Outcome::Fault { kind, value }, now, mono);
            self.cancelled.push(run);
        }
        self.table
            .get(id)
            .is_some_and(|e| e.is_live() && !e.is_paused() && !e.is_spent())
    }
}
