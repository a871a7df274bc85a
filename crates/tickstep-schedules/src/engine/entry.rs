//! One schedule's in-memory entry, kept compact on purpose.
//!
//! A loaded server may hold a million schedules that are idle nearly all the time, so the entry is
//! a flat, fixed-size record (about 150 bytes): times and counters inline, the verb interned to a
//! `u32`, every bool a byte. Everything that is rare or variable-sized — arguments, state, the last
//! fault, running firings, the duration window, retirement, firing limits — lives behind one optional box
//! ([`Extra`]) that an idle schedule without arguments never allocates.

use std::rc::Rc;
use std::sync::Arc;

use crate::info::RetireReason;
use crate::policies::Policies;
use crate::row_actions::backfill_points;
use crate::store_rows::{OpsRow, PausedRow};
use crate::{Calendar, Catchup, Error, Fault, ObjId, Overlap, RunId, ScheduleId, Value};

pub(super) use crate::info::ScheduleKind as Kind;

/// A schedule. Times are Unix nanoseconds (0 = never).
#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)] // one byte each; packing them into bits would save ~4 bytes
pub(crate) struct Entry {
    pub(super) id: u64,
    /// When the next firing is due (the cadence point plus jitter); meaningful while `armed`.
    pub(super) fire_at: u64,
    /// The next cadence point (the nominal deadline the next firing serves).
    pub(super) next_run: u64,
    /// Cadence for `Every` (after clamping to the tick); 0 for `At`.
    pub(super) interval_ns: u64,
    pub(super) jitter_ns: u64,
    pub(super) created_at: u64,
    /// When the previous firing started (wall clock), for `elapsed` and `last_run`.
    pub(super) last_run: u64,
    pub(super) run_count: u64,
    pub(super) fault_count: u64,
    pub(super) missed_count: u64,
    pub(super) overlap_count: u64,
    pub(super) last_duration_ns: u64,
    pub(super) target: ObjId,
    /// Owner and authority principal (the creating task's permissions).
    pub(super) owner: ObjId,
    pub(super) player: ObjId,
    /// Index into the engine's verb interner.
    pub(super) verb: u32,
    pub(super) max_faults: u32,
    pub(super) consecutive_faults: u32,
    /// The firings the schedule's catch-up may still make (at most 1,000); above 0 while it is
    /// catching up, its next point being `next_run` (docs/schedules.md §4.5, §13.66).
    pub(super) backlog: u16,
    pub(super) kind: Kind,
    pub(super) catchup: Catchup,
    pub(super) overlap: Overlap,
    pub(super) adaptive: bool,
    pub(super) pass_elapsed: bool,
    pub(super) persist: bool,
    pub(super) interval_clamped: bool,
    /// Whether `fire_at` is a live deadline in the timer heap.
    pub(super) armed: bool,
    /// Whether the store has not seen this entry's latest cadence state yet.
    pub(super) dirty: bool,
    pub(super) extra: Option<Box<Extra>>,
    /// A `Cron` schedule's calendar (docs/schedules.md §14.12): shared with the row that saves
    /// it, so a commit or a load does not copy it.
    pub(super) calendar: Option<Arc<Calendar>>,
}

/// The rare and variable-sized parts of an entry.
#[derive(Clone, Debug, Default)]
pub(super) struct Extra {
    pub(super) args: Option<Rc<[Value]>>,
    pub(super) state: Option<Rc<Value>>,
    pub(super) last_fault: Option<Fault>,
    /// Firings started and not yet settled, oldest first.
    pub(super) running: Vec<Running>,
    /// The nominal deadline of a firing waiting under `overlap = "queue"`.
    pub(super) queued: Option<u64>,
    pub(super) retired: Option<Retired>,
    pub(super) window: DurationWindow,
    /// The `seconds` and `ticks` options, for the runner (nanoseconds, polls).
    pub(super) limits: Limits,
    /// The schedule's key, unique per owner among live schedules (docs/schedules.md §5.12).
    pub(super) key: Option<Rc<str>>,
    /// What operators did to it: pause, a pending trigger, a backfill (docs/schedules.md §9.4–§9.10).
    pub(super) ops: OpsRow,
    /// The policies of docs/schedules.md §16.
    pub(super) policies: Policies,
}

/// A schedule's per-firing limits (docs/schedules.md §5.10): kept, stored and handed to the
/// runner, never enforced by the engine.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(super) struct Limits {
    pub(super) time_limit_ns: Option<u64>,
    pub(super) tick_limit: Option<u64>,
}

impl Limits {
    pub(super) fn is_none(self) -> bool {
        self.time_limit_ns.is_none() && self.tick_limit.is_none()
    }
}

/// A firing in flight, under the run id the engine gave it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Running {
    /// `None` only in a row written before run ids were written ahead of the start
    /// (docs/schedules.md §11.42).
    pub(super) run: Option<RunId>,
    pub(super) nominal: u64,
    pub(super) started_unix: u64,
    /// Not started yet: its start waits for the cadence update carrying it to be durable
    /// (docs/schedules.md §11.42). It counts as running for overlap. Not stored: on disk a
    /// waiting run and a started one are alike, except a parked one (`started_unix` 0).
    pub(super) waiting: bool,
}

impl Running {
    /// A waiting start a clean shutdown parked: it is known never to have started
    /// (docs/schedules.md §11.42).
    pub(super) fn is_parked(&self) -> bool {
        self.started_unix == 0
    }
}

/// Why and when an entry retired.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Retired {
    pub(super) reason: RetireReason,
    pub(super) at: u64,
}

impl Entry {
    pub(super) fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    pub(super) fn running(&self) -> &[Running] {
        self.extra.as_deref().map_or(&[], |x| &x.running)
    }

    pub(super) fn is_running(&self) -> bool {
        !self.running().is_empty()
    }

    /// How many of its firings have settled: the started ones no longer running. The history
    /// numbers its records by it (docs/schedules.md §9.11).
    pub(super) fn settled(&self) -> u64 {
        self.run_count.saturating_sub(self.running().len() as u64)
    }

    /// Where run `run` waits for its update in the running list (docs/schedules.md §11.42).
    pub(super) fn waiting_start(&self, run: RunId) -> Option<usize> {
        self.running()
            .iter()
            .position(|r| r.waiting && r.run == Some(run))
    }

    pub(super) fn retired(&self) -> Option<Retired> {
        self.extra.as_deref().and_then(|x| x.retired)
    }

    pub(super) fn is_live(&self) -> bool {
        self.retired().is_none()
    }

    pub(super) fn queued(&self) -> Option<u64> {
        self.extra.as_deref().and_then(|x| x.queued)
    }

    pub(super) fn args(&self) -> Option<&Rc<[Value]>> {
        self.extra.as_deref().and_then(|x| x.args.as_ref())
    }

    pub(super) fn state(&self) -> Option<&Rc<Value>> {
        self.extra.as_deref().and_then(|x| x.state.as_ref())
    }

    pub(super) fn limits(&self) -> Limits {
        self.extra
            .as_deref()
            .map_or(Limits::default(), |x| x.limits)
    }

    /// The policies of docs/schedules.md §16; the defaults for a schedule without its rare part.
    pub(super) fn policies(&self) -> Policies {
        self.extra
            .as_deref()
            .map_or(Policies::default(), |x| x.policies)
    }

    /// The firings its `remaining_runs` still allow, `None` without a limit
    /// (docs/schedules.md §16.5).
    pub(super) fn runs_left(&self) -> Option<u64> {
        self.policies()
            .run_limit
            .map(|n| n.saturating_sub(self.run_count))
    }

    /// Whether its `remaining_runs` have all started: it fires no more, and retires once none
    /// of them runs (docs/schedules.md §16.5).
    pub(super) fn is_spent(&self) -> bool {
        self.runs_left() == Some(0)
    }

    pub(super) fn key(&self) -> Option<&Rc<str>> {
        self.extra.as_deref().and_then(|x| x.key.as_ref())
    }

    /// The operator state (docs/schedules.md §9.4–§9.10); the default for a schedule nobody touched.
    pub(super) fn ops(&self) -> Option<&OpsRow> {
        self.extra.as_deref().map(|x| &x.ops)
    }

    /// Whether an operator paused it (docs/schedules.md §9.4).
    pub(super) fn is_paused(&self) -> bool {
        self.ops().is_some_and(|o| o.paused.is_some())
    }

    /// Whether a trigger or a backfill waits for the tick (docs/schedules.md §9.6, §9.7).
    pub(super) fn has_operator_firings(&self) -> bool {
        self.ops()
            .is_some_and(|o| o.trigger || o.backfill.is_some())
    }

    pub(super) fn last_fault(&self) -> Option<&Fault> {
        self.extra.as_deref().and_then(|x| x.last_fault.as_ref())
    }

    /// Calls `f` on every object this entry keeps alive: target, player, args, state, fault value.
    pub(super) fn for_each_object(&self, f: &mut dyn FnMut(ObjId)) {
        f(self.target);
        f(self.player);
        if let Some(x) = self.extra.as_deref() {
            x.args
                .iter()
                .flat_map(|a| a.iter())
                .for_each(|v| v.for_each_object(f));
            if let Some(s) = &x.state {
                s.for_each_object(f);
            }
            if let Some(fault) = &x.last_fault {
                fault.value.for_each_object(f);
            }
        }
    }
}

/// Durations of the most recent firings, for `mean_duration_ns` and `p99_duration_ns`.
///
/// The window holds the last [`DurationWindow::LEN`] settled firings of this server run (it is not
/// persisted; `last_duration_ns` is). With 64 samples, p99 is the largest of them.
#[derive(Clone, Debug, Default)]
pub(super) struct DurationWindow {
    samples: Vec<u64>,
    next: usize,
}

impl DurationWindow {
    pub(super) const LEN: usize = 64;

    pub(super) fn push(&mut self, nanos: u64) {
        if self.samples.len() < Self::LEN {
            self.samples.push(nanos);
        } else {
            self.samples[self.next] = nanos;
        }
        self.next = (self.next + 1) % Self::LEN;
    }

    pub(super) fn mean(&self) -> u64 {
        if self.samples.is_empty() {
            return 0;
        }
        let sum: u128 = self.samples.iter().map(|&n| u128::from(n)).sum();
        (sum / self.samples.len() as u128) as u64
    }

    /// The nearest-rank 99th percentile.
    pub(super) fn p99(&self) -> u64 {
        if self.samples.is_empty() {
            return 0;
        }
        let mut sorted = self.samples.clone();
        sorted.sort_unstable();
        let rank = (sorted.len() * 99).div_ceil(100);
        sorted[rank.saturating_sub(1)]
    }
}

impl Entry {
    /// Pauses this schedule by `by` at `now` with `note` (docs/schedules.md §9.4); whether it
    /// was not paused already.
    pub(super) fn pause(&mut self, by: ObjId, note: &str, now: u64) -> bool {
        if self.is_paused() {
            return false;
        }
        let armed = self.armed;
        self.armed = false;
        self.extra_mut().ops.paused = Some(PausedRow {
            by,
            at: now,
            note: note.to_owned(),
            armed,
        });
        true
    }

    /// Asks for one firing of this schedule at the next tick (docs/schedules.md §9.6); whether
    /// none was waiting already.
    pub(super) fn trigger(&mut self) -> bool {
        if self.ops().is_some_and(|o| o.trigger) {
            return false;
        }
        self.extra_mut().ops.trigger = true;
        true
    }

    /// Starts a backfill of this schedule over `[from, to]` (Unix ns; `typed` as the caller
    /// gave them, for errors): how many points (docs/schedules.md §9.7).
    pub(super) fn backfill(
        &mut self,
        (from, to): (u64, u64),
        typed: (f64, f64),
    ) -> Result<u64, Error> {
        let name = ScheduleId::from_raw(self.id);
        let e = self;
        let under_way = e.ops().is_some_and(|o| o.backfill.is_some());
        let (first, last, count) = backfill_points(
            (e.step().as_ref(), e.next_run, under_way),
            (from, to),
            typed,
            name,
        )?;
        e.extra_mut().ops.backfill = Some((first, last));
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_stays_compact() {
        // The bytes_per_schedule goal (300) needs the inline entry well under it; a calendar
        // costs an `every` schedule one pointer (docs/schedules.md §14.16).
        assert!(
            std::mem::size_of::<Entry>() <= 168,
            "{}",
            std::mem::size_of::<Entry>()
        );
        assert_eq!(
            std::mem::size_of::<Option<Entry>>(),
            std::mem::size_of::<Entry>()
        );
    }

    #[test]
    fn duration_window_keeps_the_last_64() {
        let mut w = DurationWindow::default();
        for n in 1..=100 {
            w.push(n);
        }
        assert_eq!(w.mean(), (37..=100).sum::<u64>() / 64);
        assert_eq!(w.p99(), 100);
    }
}
