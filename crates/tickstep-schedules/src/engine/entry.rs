//! One schedule's in-memory entry, kept compact on purpose.
//!
//! A loaded server may hold a million schedules that are idle nearly all the time, so the entry is
//! a flat, fixed-size record (about 150 bytes): times and counters inline, the verb interned to a
//! `u32`, every bool a byte. Everything that is rare or variable-sized — arguments, state, the last
//! fault, running firings, the duration window, retirement — lives behind one optional box
//! ([`Extra`]) that an idle schedule without arguments never allocates.

use std::rc::Rc;

use crate::info::RetireReason;
use crate::{Catchup, Fault, ObjId, Overlap, RunId, Value};

pub(crate) use crate::info::ScheduleKind as Kind;

/// A schedule. Times are Unix nanoseconds (0 = never).
#[derive(Clone, Debug)]
#[allow(clippy::struct_excessive_bools)] // one byte each; packing them into bits would save ~4 bytes
pub(crate) struct Entry {
    pub(crate) id: u64,
    /// When the next firing is due (the cadence point plus jitter); meaningful while `armed`.
    pub(crate) fire_at: u64,
    /// The next cadence point (the nominal deadline the next firing serves).
    pub(crate) next_run: u64,
    /// Cadence for `Every` (after clamping to the tick); 0 for `At`.
    pub(crate) interval_ns: u64,
    pub(crate) jitter_ns: u64,
    pub(crate) created_at: u64,
    /// When the previous firing started (wall clock), for `elapsed` and `last_run`.
    pub(crate) last_run: u64,
    pub(crate) run_count: u64,
    pub(crate) fault_count: u64,
    pub(crate) missed_count: u64,
    pub(crate) overlap_count: u64,
    pub(crate) last_duration_ns: u64,
    pub(crate) target: ObjId,
    /// Owner and authority principal (the creating task's permissions).
    pub(crate) owner: ObjId,
    pub(crate) player: ObjId,
    /// Index into the engine's verb interner.
    pub(crate) verb: u32,
    pub(crate) max_faults: u32,
    pub(crate) consecutive_faults: u32,
    /// Missed cadence points still to fire under `catchup = "all"` (at most 1,000).
    pub(crate) backlog: u16,
    pub(crate) kind: Kind,
    pub(crate) catchup: Catchup,
    pub(crate) overlap: Overlap,
    pub(crate) adaptive: bool,
    pub(crate) pass_elapsed: bool,
    pub(crate) persist: bool,
    pub(crate) interval_clamped: bool,
    /// Whether `fire_at` is a live deadline in the timer heap.
    pub(crate) armed: bool,
    /// Whether the store has not seen this entry's latest cadence state yet.
    pub(crate) dirty: bool,
    pub(crate) extra: Option<Box<Extra>>,
}

/// The rare and variable-sized parts of an entry.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extra {
    pub(crate) args: Option<Rc<[Value]>>,
    pub(crate) state: Option<Rc<Value>>,
    pub(crate) last_fault: Option<Fault>,
    /// Firings started and not yet settled, oldest first.
    pub(crate) running: Vec<Running>,
    /// The nominal deadline of a firing waiting under `overlap = "queue"`.
    pub(crate) queued: Option<u64>,
    pub(crate) retired: Option<Retired>,
    pub(crate) window: DurationWindow,
}

/// A firing in flight.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Running {
    pub(crate) run: RunId,
    pub(crate) nominal: u64,
    pub(crate) started_unix: u64,
}

/// Why and when an entry retired.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Retired {
    pub(crate) reason: RetireReason,
    pub(crate) at: u64,
}

impl Entry {
    pub(crate) fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    pub(crate) fn running(&self) -> &[Running] {
        self.extra.as_deref().map_or(&[], |x| &x.running)
    }

    pub(crate) fn is_running(&self) -> bool {
        !self.running().is_empty()
    }

    pub(crate) fn retired(&self) -> Option<Retired> {
        self.extra.as_deref().and_then(|x| x.retired)
    }

    pub(crate) fn is_live(&self) -> bool {
        self.retired().is_none()
    }

    pub(crate) fn queued(&self) -> Option<u64> {
        self.extra.as_deref().and_then(|x| x.queued)
    }

    pub(crate) fn args(&self) -> Option<&Rc<[Value]>> {
        self.extra.as_deref().and_then(|x| x.args.as_ref())
    }

    pub(crate) fn state(&self) -> Option<&Rc<Value>> {
        self.extra.as_deref().and_then(|x| x.state.as_ref())
    }

    pub(crate) fn last_fault(&self) -> Option<&Fault> {
        self.extra.as_deref().and_then(|x| x.last_fault.as_ref())
    }

    /// Calls `f` on every object this entry keeps alive: target, player, args, state, fault value.
    pub(crate) fn for_each_object(&self, f: &mut dyn FnMut(ObjId)) {
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
pub(crate) struct DurationWindow {
    samples: Vec<u64>,
    next: usize,
}

impl DurationWindow {
    pub(crate) const LEN: usize = 64;

    pub(crate) fn push(&mut self, nanos: u64) {
        if self.samples.len() < Self::LEN {
            self.samples.push(nanos);
        } else {
            self.samples[self.next] = nanos;
        }
        self.next = (self.next + 1) % Self::LEN;
    }

    pub(crate) fn mean(&self) -> u64 {
        if self.samples.is_empty() {
            return 0;
        }
        let sum: u128 = self.samples.iter().map(|&n| u128::from(n)).sum();
        (sum / self.samples.len() as u128) as u64
    }

    /// The nearest-rank 99th percentile.
    pub(crate) fn p99(&self) -> u64 {
        if self.samples.is_empty() {
            return 0;
        }
        let mut sorted = self.samples.clone();
        sorted.sort_unstable();
        let rank = (sorted.len() * 99).div_ceil(100);
        sorted[rank.saturating_sub(1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_stays_compact() {
        // The bytes_per_schedule goal (300) needs the inline entry well under it.
        assert!(
            std::mem::size_of::<Entry>() <= 160,
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
