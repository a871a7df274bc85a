//! One scheduler tick.
//!
//! 0. **Durable starts**: the firings earlier ticks planned whose cadence update the store now
//!    reports written start first ([`starts`](super::starts), docs/schedules.md §11.42).
//! 1. **Plan** (engine borrowed): drop expired retired entries, then pop due entries from the
//!    deadline heap — at most [`Config::max_firings_per_tick`](crate::Config) of them — and let
//!    [`cadence`](super::cadence) decide each one's firing and next deadline. Entries re-armed to a
//!    deadline that is already due wait for the next tick, so one tick visits an entry once.
//! 2. **Start** (no borrow): for each firing, ask the world whether the target is still valid and
//!    the verb still callable, then hand it to the runner. A persistent schedule's firing on a
//!    store does not start here: it waits for its update (step 0 of a later tick).
//! 3. **Record** (short borrows): remember each run id, or count the fault, or retire the entry.
//! 4. **Group commit**: one SQLite transaction writes every schedule whose cadence changed,
//!    behind the tick. Under a virtual clock the tick then waits for that write and starts what
//!    it planned at once; a store that wrote in place needs no wait.
//!
//! The bound in step 1 keeps a tick's work proportional to the bound, not to the backlog: 10,000
//! schedules due at once fire over ten ticks of 1,024, each tick costing about 0.3 ms of engine
//! time in memory or 2–4 ms with the SQLite group commit (measured by `tickstep-bench`), plus the
//! host's start cost. [`TickReport::more_due`] tells a driver to tick again soon.
//!
//! With [`Config::max_tick_time`](crate::Config) set, steps 1–3 run one firing at a time and
//! the tick reads the engine clock after each start: once the slice has passed it plans no
//! more (docs/schedules.md §10.5). The entries it did not pop stay on the heap at their
//! deadlines, so the next tick resumes in deadline order; entries re-armed to a due deadline are
//! put back only when the whole tick ends, as in the unsliced tick. The group commit after a
//! slice writes only what the slice started, so a host that bounds the slice bounds the commit
//! with it. One extra clock read per firing is the slice's whole cost.
//!
//! Per firing the engine does a heap pop and push, a few id-hash lookups, reference-count bumps
//! for verb and arguments, and no allocation beyond amortised growth of its reusable buffers. It
//! reads each clock timeline once per tick, not per firing.

use tickstep_kernel::clock::Instant;

use super::core::Core;
use super::entry::Running;
use super::handle::Schedules;
use super::storage::Committed;
use super::table::Later;
use crate::info::RetireReason;
use crate::{Error, Fault, FaultKind, Firing, RunId, Value};

/// What one [`Schedules::tick`] did.
///
/// ```
/// let r = tickstep_schedules::TickReport::default();
/// assert_eq!(r.started, 0);
/// assert!(!r.more_due);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct TickReport {
    /// Firings the runner accepted.
    pub started: usize,
    /// Firings that could not start (counted as faults) or found their target gone (retired).
    pub not_started: usize,
    /// Whether due work was left for the next tick by the per-tick bound.
    pub more_due: bool,
    /// Firings planned and waiting for their cadence update to be durable before they start
    /// (docs/schedules.md §11.42): a later tick starts them, and
    /// [`Schedules::next_deadline`] asks for one.
    pub starts_waiting: usize,
    /// Whether this tick waited for the store to write: under a virtual clock, which treats the
    /// disk as instant (docs/schedules.md §11.42), or on a store that could not write behind the
    /// tick. Never on a real clock with a store that writes behind.
    pub waited_for_store: bool,
}

impl TickReport {
    /// Counts one start.
    pub(super) fn count(&mut self, verdict: &Verdict) {
        if matches!(verdict, Verdict::Started(_)) {
            self.started += 1;
        } else {
            self.not_started += 1;
        }
    }
}

impl Core {
    /// Counts one start attempt and, when it started, its lateness (docs/observability.md §1.1,
    /// §1.5): immediate starts and those that waited for a durable write alike.
    pub(super) fn count_start(&self, firing: &Firing, verdict: &Verdict, now: u64) {
        match verdict {
            Verdict::Started(_) => {
                self.metrics
                    .started(now.saturating_sub(firing.nominal_unix_nanos));
            }
            Verdict::TargetGone => self.metrics.target_gone(),
            Verdict::Failed(_) => self.metrics.start_failed(),
        }
    }
}

/// What happened when the engine tried to start a firing.
pub(super) enum Verdict {
    Started(RunId),
    TargetGone,
    Failed(Fault),
}

impl Schedules {
    /// Fires every due schedule (up to the per-tick bound), applies overlap and catch-up, and
    /// group-commits cadence changes to the store.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the group commit fails. The firings have started; their cadence
    /// updates stay pending and are written by the next tick.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Options, Schedules};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "ping");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(clock.clone(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// txn.schedule_every(wiz, "ping", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// clock.advance(Duration::from_secs(1));
    /// assert_eq!(engine.tick().unwrap().started, 1);
    /// ```
    pub fn tick(&self) -> Result<TickReport, Error> {
        let shared = &*self.shared;
        let now = shared.clock.unix_nanos();
        let mono = shared.clock.now();
        let (mut later, slice_end, durable) = {
            let mut core = shared.core.borrow_mut();
            // Read before the claims: a schedule lost with a write this count includes is
            // dropped by them before its start is looked at.
            let durable = core.durable_through();
            if let Err(error) = core.apply_operator_stops(mono, now) {
                // The next tick polls again; firing goes on meanwhile.
                tracing::warn!(%error, "could not poll the store for operator stops");
            }
            if let Err(error) = core.apply_claims(now) {
                tracing::error!(%error, "a schedule claimed from another node could not be applied");
            }
            core.sweep_retired(now);
            core.tick_mono = Some(mono);
            let later = std::mem::take(&mut core.later_buf);
            (
                later,
                core.max_tick_time.map(|slice| mono.saturating_add(slice)),
                durable,
            )
        };
        let mut report = TickReport::default();
        // First the firings earlier ticks planned whose update is now durable (docs/schedules.md §11.42); a
        // slice they use up leaves the planning to the next tick.
        let virtual_time = shared.clock.is_virtual();
        let mut out_of_time = self.start_durable(durable, (now, mono), slice_end, &mut report);
        // Operator firings (a trigger, a backfill's next point) first, one per schedule
        // (docs/schedules.md §9.6, §9.7); a slice they use up leaves the heap to the next tick.
        if !out_of_time {
            let mut firings = shared.core.borrow_mut().plan_operator(now);
            self.hand_over_cancels();
            for firing in firings.drain(..) {
                let verdict = self.try_start(&firing);
                report.count(&verdict);
                shared.core.borrow_mut().record(&firing, verdict, now, mono);
            }
        }
        // Unsliced, one plan covers the whole tick; sliced, the tick plans one firing at a time
        // and looks at the clock before each next one (docs/schedules.md §10.5).
        let chunk = if slice_end.is_some() { 1 } else { usize::MAX };
        let mut visits = 0;
        while !out_of_time {
            let (mut firings, planned) =
                shared
                    .core
                    .borrow_mut()
                    .plan(now, chunk, &mut visits, &mut later);
            self.hand_over_cancels();
            for firing in firings.drain(..) {
                let verdict = self.try_start(&firing);
                report.count(&verdict);
                shared.core.borrow_mut().record(&firing, verdict, now, mono);
            }
            let core = &mut *shared.core.borrow_mut();
            core.recycle(firings);
            out_of_time = slice_end.is_some_and(|end| shared.clock.now() >= end);
            if planned < chunk || visits >= core.max_per_tick {
                break;
            }
        }
        let committed = {
            let mut core = shared.core.borrow_mut();
            // Re-armed only now, so one tick visits an entry once (docs/schedules.md §10.2).
            for (id, at) in later.drain(..) {
                core.table.arm(id, at);
            }
            core.later_buf = later;
            core.group_commit()?
        };
        report.waited_for_store = committed == Committed::InPlace;
        // What this tick planned starts now if its update is already durable: written before
        // the commit returned (counted 0), or, under a virtual clock, once the tick has waited
        // for the store (docs/schedules.md §11.42). On a real clock a later tick starts it.
        let durable = if committed == Committed::Behind && virtual_time {
            let mut core = shared.core.borrow_mut();
            if let Some(Err(error)) = core.store.as_mut().map(|store| store.flush()) {
                // As on real time: the write stays queued and is retried, the firings wait
                // for it, and `flush` / `wait_for_writes` report the failure.
                tracing::warn!(%error, "firings wait for a cadence update the store could not write");
            }
            report.waited_for_store = true;
            core.durable_through()
        } else {
            0
        };
        let before = report.started + report.not_started;
        // A slice always starts at least one firing (docs/schedules.md §10.5).
        if !out_of_time || before == 0 {
            self.start_durable(durable, (now, mono), slice_end, &mut report);
        }
        let mut core = shared.core.borrow_mut();
        if report.started + report.not_started > before {
            // What those starts changed is handed over too: faults, retirements, and under a
            // virtual clock the runs, so the tick commits what it did.
            core.group_commit()?;
        }
        report.starts_waiting = core.pending.len();
        let live = core.table.len() - core.retired.len();
        core.metrics.tick(live, core.runs.len());
        let durable_now = core.durable_through();
        report.more_due =
            core.table.next_deadline().is_some_and(|at| at <= now) || core.startable(durable_now);
        Ok(report)
    }

    /// Hands the runs the plan killed under overlap `"cancel_other"` to the runner to stop,
    /// with no engine borrow held (docs/schedules.md §16.7, §10.3).
    fn hand_over_cancels(&self) {
        let shared = &*self.shared;
        let runs = {
            let mut core = shared.core.borrow_mut();
            if core.cancelled.is_empty() {
                return;
            }
            std::mem::take(&mut core.cancelled)
        };
        for run in runs {
            shared.runner.cancel(run);
        }
    }

    /// Asks the world and the runner, with no engine borrow held.
    pub(super) fn try_start(&self, firing: &Firing) -> Verdict {
        let shared = &*self.shared;
        if !shared.world.valid(firing.target) {
            return Verdict::TargetGone;
        }
        if !shared
            .world
            .verb_callable(firing.authority, firing.target, &firing.verb)
        {
            return Verdict::Failed(Fault {
                kind: FaultKind::StartFailed,
                value: Value::Str(format!(
                    "verb {}:{} is not callable by {}",
                    firing.target, firing.verb, firing.authority
                )),
            });
        }
        match shared.runner.start(firing) {
            Ok(()) => Verdict::Started(firing.run),
            Err(refused) => Verdict::Failed(Fault {
                kind: FaultKind::StartFailed,
                value: Value::Str(refused.0),
            }),
        }
    }
}

impl Core {
    /// Step 1: up to `want` of the firings this tick starts, visiting due entries while the
    /// tick has visited fewer than the per-tick bound (`visits` counts across a tick's plans).
    /// Entries re-armed to a deadline already due go to `later`, re-armed when the tick ends.
    /// A firing that must wait for its cadence update (docs/schedules.md §11.42) is kept
    /// waiting here, under the same borrow; the others are returned to start now. Returns them
    /// with how many firings were planned in all.
    fn plan(
        &mut self,
        now: u64,
        want: usize,
        visits: &mut usize,
        later: &mut Later,
    ) -> (Vec<Firing>, usize) {
        let mut firings = std::mem::take(&mut self.firing_buf);
        let mut planned = 0;
        while planned < want && *visits < self.max_per_tick {
            let Some(id) = self.table.pop_due(now) else {
                break;
            };
            *visits += 1;
            if let Some(firing) = self.visit(id, now, later) {
                planned += 1;
                if self.starts_after_write(id) {
                    self.defer(firing, now);
                } else {
                    firings.push(firing);
                }
            }
        }
        (firings, planned)
    }

    /// Gives the firing buffer back for the next tick (keeping its capacity).
    fn recycle(&mut self, mut firings: Vec<Firing>) {
        firings.clear();
        self.firing_buf = firings;
    }

    /// Step 3: the start's consequence.
    fn record(&mut self, firing: &Firing, verdict: Verdict, now: u64, mono: Instant) {
        self.count_start(firing, &verdict, now);
        let id = firing.schedule.get();
        match verdict {
            Verdict::Started(run) => {
                let Some(e) = self.table.get_mut(id).filter(|e| e.is_live()) else {
                    // Stopped or retired while starting: the task runs, its result is ignored.
                    return;
                };
                e.extra_mut().running.push(Running {
                    run: Some(run),
                    nominal: firing.nominal_unix_nanos,
                    // Never 0: 0 marks a start a clean shutdown knows never happened.
                    started_unix: now.max(1),
                    waiting: false,
                });
                self.await_run(run, id, mono);
                self.mark_dirty(id);
            }
            Verdict::TargetGone => self.retire(id, RetireReason::InvalidTarget, now),
            Verdict::Failed(fault) => {
                if self.table.get(id).is_some_and(super::entry::Entry::is_live) {
                    self.fault(id, fault, now);
                    self.firing_ended(id, now);
                }
            }
        }
    }
}
