//! What a host's driver loop calls: one scheduler tick, the next deadline, a run's outcome, the
//! restart hand-back, the store's news (operator stops, the waker, cluster counts) and flushing.
//!
//! # One scheduler tick
//!
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

use std::time::Duration;

use tickstep_kernel::clock::Instant;

use super::handle::Schedules;
use super::outcome::Verdict;
use super::store_side::Committed;
use crate::{Error, Fault, FaultKind, Firing, InFlight, Outcome, RunId, Value};

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
            let durable = core.store.durable_through();
            if let Err(error) = core.apply_operator_stops(mono, now) {
                // The next tick polls again; firing goes on meanwhile.
                tracing::warn!(%error, "could not poll the store for operator stops");
            }
            if let Err(error) = core.apply_claims(now) {
                tracing::error!(%error, "a schedule claimed from another node could not be applied");
            }
            core.sweep_retired(now);
            core.runs.tick_mono = Some(mono);
            let later = core.starts.take_later();
            (
                later,
                core.settings
                    .max_tick_time
                    .map(|slice| mono.saturating_add(slice)),
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
            core.starts.recycle(firings);
            out_of_time = slice_end.is_some_and(|end| shared.clock.now() >= end);
            if planned < chunk || visits >= core.settings.max_per_tick {
                break;
            }
        }
        let committed = {
            let mut core = shared.core.borrow_mut();
            // Re-armed only now, so one tick visits an entry once (docs/schedules.md §10.2).
            for (id, at) in later.drain(..) {
                core.table.arm(id, at);
            }
            core.starts.put_later(later);
            core.group_commit()?
        };
        report.waited_for_store = committed == Committed::InPlace;
        // What this tick planned starts now if its update is already durable: written before
        // the commit returned (counted 0), or, under a virtual clock, once the tick has waited
        // for the store (docs/schedules.md §11.42). On a real clock a later tick starts it.
        let durable = if committed == Committed::Behind && virtual_time {
            let mut core = shared.core.borrow_mut();
            if let Some(Err(error)) = core.store.backend.as_mut().map(|store| store.flush()) {
                // As on real time: the write stays queued and is retried, the firings wait
                // for it, and `flush` / `wait_for_writes` report the failure.
                tracing::warn!(%error, "firings wait for a cadence update the store could not write");
            }
            report.waited_for_store = true;
            core.store.durable_through()
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
        report.starts_waiting = core.starts.len();
        let live = core.table.len() - core.retention.len();
        core.metrics.tick(live, core.runs.awaited.len());
        let durable_now = core.store.durable_through();
        report.more_due = core.table.next_deadline().is_some_and(|at| at <= now)
            || core.starts.startable(durable_now);
        Ok(report)
    }

    /// Hands the runs the plan killed under overlap `"cancel_other"` to the runner to stop,
    /// with no engine borrow held (docs/schedules.md §16.7, §10.3).
    fn hand_over_cancels(&self) {
        let shared = &*self.shared;
        let runs = {
            let mut core = shared.core.borrow_mut();
            if core.runs.cancelled.is_empty() {
                return;
            }
            std::mem::take(&mut core.runs.cancelled)
        };
        for run in runs {
            shared.runner.cancel(run);
        }
    }

    /// Asks the world and the runner, with no engine borrow held.
    pub(super) fn try_start(&self, firing: &Firing) -> Verdict {
        self.checked_start(firing, |runner, firing| runner.start(firing))
    }

    /// [`Schedules::try_start`] with the runner's call given: `start`, or `rerun` for a point
    /// handed back (docs/schedules.md §11.57).
    #[inline]
    fn checked_start(
        &self,
        firing: &Firing,
        start: impl FnOnce(&dyn crate::Runner, &Firing) -> Result<(), crate::Refused>,
    ) -> Verdict {
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
        match start(&*shared.runner, firing) {
            Ok(()) => Verdict::Started(firing.run),
            Err(refused) => Verdict::Failed(Fault {
                kind: FaultKind::StartFailed,
                value: Value::Str(refused.0),
            }),
        }
    }

    /// Starts the waiting firings whose update is durable by `durable`, oldest first, until
    /// `slice_end` (if any) has passed after a start (docs/schedules.md §10.5); counts them in
    /// `report`. Returns whether the slice ran out.
    pub(super) fn start_durable(
        &self,
        durable: u64,
        (now, mono): (u64, Instant),
        slice_end: Option<Instant>,
        report: &mut TickReport,
    ) -> bool {
        let shared = &*self.shared;
        loop {
            let Some(firing) = shared.core.borrow_mut().next_durable(durable) else {
                return false;
            };
            let verdict = self.try_start(&firing);
            report.count(&verdict);
            shared
                .core
                .borrow_mut()
                .record_waited(&firing, verdict, (now, mono));
            if slice_end.is_some_and(|end| shared.clock.now() >= end) {
                return true;
            }
        }
    }

    /// Reports how run `run` ended. Returns `false` (and changes nothing) when the engine is not
    /// waiting for that run: unknown, already reported, or its schedule was stopped or retired
    /// (docs/schedules.md §3.4 and §11.5).
    ///
    /// A conflict retry is not an outcome: report once per firing, after the last attempt.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_schedules::kernel::clock::ManualClock;
    /// use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// use tickstep_schedules::{Outcome, Options, Schedules, Value};
    ///
    /// let clock = ManualClock::new();
    /// let world = TestWorld::new();
    /// let wiz = world.add_wizard();
    /// world.add_verb(wiz, "lockup");
    /// let runner = TestRunner::new();
    /// let engine = Schedules::in_memory(clock.clone(), world, runner.clone(), Default::default());
    /// let mut txn = engine.begin(wiz);
    /// let now = engine.now_unix_seconds();
    /// let id = txn.schedule_at(wiz, "lockup", now, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// engine.tick().unwrap();
    /// let run = runner.started()[0].0;
    /// // Adaptive (the default for schedule_at): returning 30 fires again in 30 s.
    /// assert!(engine.report(run, Outcome::Returned(Value::Int(30))));
    /// assert!(!engine.report(run, Outcome::Returned(Value::Int(0))), "reported twice");
    /// clock.advance(Duration::from_secs(30));
    /// engine.tick().unwrap();
    /// assert_eq!(runner.started().len(), 2);
    /// ```
    pub fn report(&self, run: RunId, outcome: Outcome) -> bool {
        let shared = &*self.shared;
        let now = shared.clock.unix_nanos();
        let mono = shared.clock.now();
        shared.core.borrow_mut().settle(run, outcome, now, mono)
    }

    /// The earliest deadline, as an instant on the engine's clock, so a driver can
    /// `sleep_until` it; `None` when nothing is armed. A deadline already past is now. Firings
    /// waiting for their cadence update to be durable make it one engine tick after the tick
    /// that planned them (docs/schedules.md §11.42), so a driver ticks again to start them.
    /// Runs handed back under [`Config::hand_back_taken_over`](crate::Config) make it now
    /// until the host has decided on each (docs/schedules.md §11.57).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.next_deadline(), None);
    /// ```
    pub fn next_deadline(&self) -> Option<Instant> {
        let at = self.next_deadline_unix_nanos()?;
        let clock = &self.shared.clock;
        let (now, wall) = (clock.now(), clock.unix_nanos());
        Some(now + Duration::from_nanos(at.saturating_sub(wall)))
    }

    /// The earliest deadline in Unix nanoseconds, or `None` when nothing is armed (or waits to
    /// start, as [`Schedules::next_deadline`] says).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.next_deadline_unix_nanos(), None);
    /// ```
    pub fn next_deadline_unix_nanos(&self) -> Option<u64> {
        let mut core = self.shared.core.borrow_mut();
        // Starts waiting for their update to be durable want a tick soon (docs/schedules.md §11.42).
        let waiting = core.starts.deadline(core.settings.tick_ns);
        // A trigger or backfill wants the next tick too (docs/schedules.md §9.6, §9.7).
        let operator = core.operator.deadline();
        // Runs handed back to a host that opted in want its decision at the next tick
        // (docs/schedules.md §11.57): due now, so a host arms its tick for now.
        let handed_back =
            (core.settings.hand_back_taken_over && !core.runs.interrupted.is_empty()).then_some(0);
        [core.table.next_deadline(), waiting, operator, handed_back]
            .into_iter()
            .flatten()
            .min()
    }

    /// Firings that were in flight when the store was last saved — and, with
    /// [`Config::hand_back_taken_over`](crate::Config::hand_back_taken_over), those a row
    /// claimed from another node brought (docs/schedules.md §11.57) — that the host has not
    /// reattached, rerun or abandoned yet.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// let engine = tickstep_schedules::Schedules::in_memory(
    ///     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(engine.interrupted().is_empty());
    /// ```
    pub fn interrupted(&self) -> Vec<InFlight> {
        self.shared.core.borrow().runs.interrupted.clone()
    }

    /// Keeps a restored in-flight firing as its schedule's running firing; its outcome is reported
    /// with [`Schedules::report`] as usual. Returns whether `run` was awaiting a decision.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(!engine.reattach(tickstep_schedules::RunId(1)));
    /// ```
    pub fn reattach(&self, run: RunId) -> bool {
        self.shared.core.borrow_mut().runs.reattach(run)
    }

    /// Runs a handed-back in-flight firing again (docs/schedules.md §11.57): under the same run
    /// id and for the same point, through [`Runner::rerun`](crate::Runner::rerun); it stays the
    /// schedule's running firing and its outcome is reported with [`Schedules::report`] as
    /// usual. It adds nothing to `run_count` (the first run counted). If the target is gone or
    /// the runner refuses, the run settles at once as that fault, as a first start would.
    /// Returns whether `run` was awaiting a decision.
    ///
    /// At least once, by the host's choice: what the first run did before its process died may
    /// have happened, so code that reruns checks first (an id in its own table, an idempotency
    /// key).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// for in_flight in engine.interrupted() {
    ///     engine.rerun(in_flight.run);
    /// }
    /// assert!(!engine.rerun(tickstep_schedules::RunId(1)), "nothing awaits a decision");
    /// ```
    pub fn rerun(&self, run: RunId) -> bool {
        let shared = &*self.shared;
        let now = shared.now_unix_nanos();
        let firing = {
            let mut core = shared.core.borrow_mut();
            let Some(at) = core.runs.interrupted.iter().position(|f| f.run == run) else {
                return false;
            };
            let in_flight = core.runs.interrupted.remove(at);
            core.firing(
                in_flight.schedule.get(),
                in_flight.nominal_unix_nanos,
                now,
                run,
            )
        };
        let Some(firing) = firing else {
            // Its schedule is gone: nothing to run, and the run is forgotten as abandoned.
            self.report(run, interrupted_by_restart());
            return true;
        };
        let (kind, value) = match self.checked_start(&firing, |runner, f| runner.rerun(f)) {
            Verdict::Started(_) => {
                let mono = shared.clock.now();
                if let Some(record) = shared.core.borrow_mut().runs.awaited.get_mut(&run) {
                    record.started = Some(mono);
                }
                return true;
            }
            Verdict::Failed(fault) => (fault.kind, fault.value),
            Verdict::TargetGone => {
                // As a first start finds it: the schedule retires `invalid_target`, and the
                // run is forgotten.
                let id = firing.schedule.get();
                let mut core = shared.core.borrow_mut();
                core.retire(id, crate::RetireReason::InvalidTarget, now);
                drop(core);
                self.report(run, interrupted_by_restart());
                return true;
            }
        };
        self.report(run, Outcome::Fault { kind, value });
        true
    }

    /// Gives up on a restored in-flight firing: it settles as a fault of kind
    /// [`Interrupted`](crate::FaultKind::Interrupted), value `"interrupted by restart"`.
    /// Returns whether `run` was awaiting a decision.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert!(!engine.abandon(tickstep_schedules::RunId(1)));
    /// ```
    pub fn abandon(&self, run: RunId) -> bool {
        if !self.reattach(run) {
            return false;
        }
        self.report(run, interrupted_by_restart());
        true
    }

    /// The schedules an operator stopped from outside the engine (with
    /// [`Inspector::stop`](crate::Inspector::stop), e.g. `tickstep schedules stop`) that this
    /// engine has dropped since the last call, oldest first. A tick polls the store for such stops
    /// before it fires anything, so a stopped schedule never fires after the tick that noticed it;
    /// this list lets a host say so.
    ///
    /// ```
    /// # use tickstep_schedules::kernel::clock::ManualClock;
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # use tickstep_schedules::{Inspector, Options, Schedules};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("s.db");
    /// # let world = TestWorld::new();
    /// # let wiz = world.add_wizard();
    /// # world.add_verb(wiz, "upkeep");
    /// let engine = Schedules::open(&path, ManualClock::new(), world, TestRunner::new(),
    ///     Default::default()).unwrap();
    /// let mut txn = engine.begin(wiz);
    /// let id = txn.schedule_every(wiz, "upkeep", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    ///
    /// Inspector::stop(&path, id).unwrap(); // as `tickstep schedules stop` does, from anywhere
    /// engine.tick().unwrap();
    /// assert_eq!(engine.take_operator_stops(), vec![id]);
    /// assert!(!engine.begin(wiz).schedule_valid(id));
    /// ```
    pub fn take_operator_stops(&self) -> Vec<crate::ScheduleId> {
        let mut core = self.shared.core.borrow_mut();
        core.operator
            .stopped
            .drain(..)
            .map(crate::ScheduleId::from_raw)
            .collect()
    }

    /// Registers `waker`, which the store calls from its own thread whenever it has left work
    /// for the engine's next tick: rows it claimed from another node (with the firings they
    /// bring, settled at that tick), schedules another node took over, operator stops
    /// (docs/schedules.md §11.40). A host whose engine has nothing due — and so no deadline to
    /// tick at — uses it to tick the engine soon after (the `tickstep` runtime does). Only a
    /// store that claims and polls on a thread of its own (`PostgreSQL`) calls it; with the
    /// `SQLite` store or none it is kept and never called. A later call replaces the waker.
    ///
    /// The waker must be cheap and must not call into the engine (it runs on the store's
    /// thread): set a flag, notify a task, wake a loop.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// let (tell, news) = std::sync::mpsc::channel::<()>();
    /// let tell = std::sync::Mutex::new(tell);
    /// engine.set_store_waker(std::sync::Arc::new(move || {
    ///     let _ = tell.lock().unwrap().send(());
    /// }));
    /// assert!(news.try_recv().is_err()); // an engine with no store never calls it
    /// ```
    pub fn set_store_waker(&self, waker: crate::StoreWaker) {
        let mut core = self.shared.core.borrow_mut();
        if let Some(store) = core.store.backend.as_mut() {
            store.set_waker(waker);
        }
    }

    /// What this engine's store counted of claims and fencing since it opened: schedules
    /// claimed, late writes refused because another node took the row over, schedules dropped
    /// for that (docs/schedules.md §11.27). All zero without a shared `PostgreSQL` store.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// assert_eq!(engine.cluster_stats().refused_writes, 0);
    /// ```
    pub fn cluster_stats(&self) -> crate::ClusterStats {
        let core = self.shared.core.borrow();
        core.store
            .backend
            .as_ref()
            .map_or_else(crate::ClusterStats::default, |store| store.cluster_stats())
    }

    /// Writes every pending cadence update to the store now (a tick does this itself), and waits
    /// until the store has written everything handed to it — with a store that writes behind
    /// (both stores do: docs/schedules.md §11.35, §11.15), past ticks' updates included.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] or [`Error::Database`] when the store fails; the updates stay pending for
    /// the next attempt.
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// engine.flush().unwrap();
    /// ```
    pub fn flush(&self) -> Result<(), Error> {
        let mut core = self.shared.core.borrow_mut();
        core.group_commit()?;
        core.store
            .backend
            .as_mut()
            .map_or(Ok(()), |store| store.flush())
    }

    /// Waits until the store has written everything already handed to it, committing nothing
    /// new (unlike [`flush`](Schedules::flush), outcomes reported since the last tick stay
    /// pending). Both stores write past ticks' updates behind the tick (docs/schedules.md
    /// §11.35, §11.15) and this waits for them — what a reader of the database (an operator
    /// tool, a test) needs before it looks.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] for a write the store could not make (it stays queued and is retried).
    ///
    /// ```
    /// # use tickstep_schedules::testkit::{TestRunner, TestWorld};
    /// # let engine = tickstep_schedules::Schedules::in_memory(
    /// #     tickstep_schedules::kernel::clock::ManualClock::new(), TestWorld::new(), TestRunner::new(), Default::default());
    /// engine.tick().unwrap();
    /// engine.wait_for_writes().unwrap();
    /// ```
    pub fn wait_for_writes(&self) -> Result<(), Error> {
        let mut core = self.shared.core.borrow_mut();
        core.store
            .backend
            .as_mut()
            .map_or(Ok(()), |store| store.flush())
    }
}

/// The outcome of a handed-back run the host gave up on (docs/schedules.md §11.5).
fn interrupted_by_restart() -> Outcome {
    Outcome::Fault {
        kind: FaultKind::Interrupted,
        value: Value::from("interrupted by restart"),
    }
}
