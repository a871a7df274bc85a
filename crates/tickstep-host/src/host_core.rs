//! [`HostCore`]: the schedules engine wired onto a kernel, shared by every host.
//!
//! The engine is ticked by one kernel timer at its earliest deadline (the [`KernelWake`]), never
//! sooner than one schedules tick after the previous tick, and re-armed after every tick, every
//! settled firing and whenever the host says a new deadline may have appeared (a `run_*` call, a
//! command cycle, a Bevy frame). Each firing is its own kernel task at the firing priority: a
//! sync verb one task, an async verb an async task, each under its limits and listed while it
//! runs (`firings.rs`). Outcomes go back to the engine by run id.
//!
//! # Ownership
//!
//! The host owns the core (`Rc`); everything that runs later — the wake, each firing's task, the
//! engine's runner — holds a `Weak`, so no cycle keeps the engine alive after the host is gone,
//! and the engine's last handle going away performs its final group commit.

use std::cell::{Cell, OnceCell};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use tickstep_kernel::clock::Clock;
use tickstep_kernel::{ErrorChain, FrameScheduler, Priority};
use tickstep_schedules::{
    KernelWake, Outcome, RunId, Runner, ScheduleId, Schedules, StoreWaker, World,
};

use crate::error::HostError;
use crate::firings::{FiringLimits, FiringState, Firings, RunningFiring};
use crate::host_settings::HostSettings;
use crate::open::open_engine;
use crate::store_news::StoreNews;
use crate::verbs::{HostContext, HostWorld, Verb, VerbCall, VerbFuture, VerbResult, VerbTable};

mod engine_runner;

use engine_runner::{EngineRunner, KernelRunner};

/// The kernel origin label of the schedules tick (its name in the profiler).
pub(crate) const SCHEDULES_TICK_ORIGIN: &str = "tickstep schedules tick";

/// What a host core has done ([`HostCore::counts`]).
///
/// ```
/// use tickstep_host::HostCounts;
/// assert_eq!(HostCounts::default().schedule_ticks, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostCounts {
    /// Schedules ticks.
    pub schedule_ticks: u64,
    /// Firings started.
    pub firings_started: u64,
    /// Firings that could not start (target gone, verb no longer callable).
    pub firings_not_started: u64,
    /// Firings whose verb returned.
    pub firings_returned: u64,
    /// Firings that ended in a fault (an error value, a panic, a limit, a kill).
    pub firings_faulted: u64,
    /// Store writes that failed (the engine retries them at its next tick).
    pub store_errors: u64,
}

/// The schedules engine on a kernel: the tick, verbs, firings as kernel tasks with limits and
/// kill, the running list, interrupted-firing settlement, opening the store, and the counters
/// (docs/runtime.md §8). The `Runtime` and the Bevy plugin each own one; what stays theirs is
/// driving frames and the clock, which the core takes as its type parameter `C` (the clock the
/// engine reads, so a wall-clock read costs what it costs the host).
///
/// ```
/// use std::{cell::Cell, rc::Rc, time::Duration};
/// use tickstep_host::{HostCore, HostSettings};
/// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
/// use tickstep_host::schedules::{ObjId, OpenWorld, Options, Value};
///
/// let clock = ManualClock::new();
/// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
/// let core = HostCore::new(clock.clone(), kernel.clone(), &HostSettings::default(), None);
/// core.open(None, Box::new(OpenWorld), None)?;
/// let rang = Rc::new(Cell::new(0));
/// let r = rang.clone();
/// core.verb("ring", move |_call| { r.set(r.get() + 1); Ok(Value::Int(0)) });
/// let mut txn = core.engine().begin(ObjId(1));
/// txn.schedule_at(ObjId(1), "ring", 0.0, vec![], Options::new()).unwrap();
/// txn.commit().unwrap();
/// core.rearm();
/// for _ in 0..3 {
///     clock.advance(Duration::from_millis(10));
///     kernel.step();
/// }
/// assert_eq!(rang.get(), 1);
/// # Ok::<(), tickstep_host::HostError>(())
/// ```
pub struct HostCore<C> {
    pub(crate) clock: C,
    pub(crate) kernel: FrameScheduler,
    engine: OnceCell<Schedules>,
    pub(crate) verbs: Rc<VerbTable>,
    pub(crate) firing_priority: Priority,
    pub(crate) firings: Firings,
    counts: Cell<HostCounts>,
    wake: KernelWake,
    /// The engine's settings, taken from the same `HostSettings` as the wake's tick.
    config: tickstep_schedules::Config,
    pub(crate) context: HostContext,
    /// What the store's own thread left for the next tick (docs/runtime.md §6.3).
    store_news: Arc<StoreNews>,
}

impl<C> std::fmt::Debug for HostCore<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCore")
            .field("firing_priority", &self.firing_priority)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl<C: Clock + Clone + 'static> HostCore<C> {
    /// A core on `kernel`, reading wall time from `clock`, with no engine yet
    /// ([`HostCore::open`] opens it). `context` is handed to every verb
    /// ([`VerbCall::host_context`]).
    ///
    /// ```
    /// use tickstep_host::{HostCore, HostSettings};
    /// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let _core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// ```
    pub fn new(
        clock: C,
        kernel: FrameScheduler,
        settings: &HostSettings,
        context: Option<Rc<dyn std::any::Any>>,
    ) -> Rc<Self> {
        Rc::new(HostCore {
            clock,
            kernel,
            engine: OnceCell::new(),
            verbs: Rc::default(),
            firing_priority: settings.firing_priority,
            firings: Firings::new(settings.firing_limits),
            counts: Cell::default(),
            wake: KernelWake::new(settings.schedules_tick),
            config: settings.schedules_config(),
            context,
            store_news: Arc::default(),
        })
    }

    /// Opens the engine once: on the `SQLite` file or `postgres://` URL at `store` (its
    /// directory created if missing), or in memory for `None`; firings start through `runner`,
    /// or, for `None`, as kernel tasks running the verbs registered here (then a verb is callable
    /// only when `world` allows it *and* code is registered for it). Firings that were in flight
    /// when the store was last saved are settled ([`HostCore::settle_interrupted`]), or, with
    /// `rerun_interrupted`, run again from the first tick (docs/runtime.md §6.7). Returns how
    /// many.
    ///
    /// # Errors
    ///
    /// [`HostError::StoreDir`] / [`HostError::Store`] when the store cannot be opened;
    /// [`HostError::AlreadyOpen`] when the engine is open already.
    ///
    /// ```
    /// use tickstep_host::{HostCore, HostSettings};
    /// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// use tickstep_host::schedules::OpenWorld;
    /// let clock = ManualClock::new();
    /// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert_eq!(core.open(None, Box::new(OpenWorld), None)?, 0);
    /// # Ok::<(), tickstep_host::HostError>(())
    /// ```
    pub fn open(
        self: &Rc<Self>,
        store: Option<&Path>,
        world: Box<dyn World>,
        runner: Option<Box<dyn Runner>>,
    ) -> Result<usize, HostError> {
        if self.engine.get().is_some() {
            return Err(HostError::AlreadyOpen);
        }
        let (callable, runner) = match runner {
            Some(host) => (None, EngineRunner::Host(host)),
            None => (
                Some(Rc::clone(&self.verbs)),
                EngineRunner::Kernel(KernelRunner {
                    core: Rc::downgrade(self),
                }),
            ),
        };
        let world = HostWorld {
            host: world,
            verbs: callable,
        };
        let engine = open_engine(store, &self.clock, world, runner, self.config)?;
        engine.set_store_waker(self.store_news.waker());
        if self.engine.set(engine).is_err() {
            return Err(HostError::AlreadyOpen);
        }
        if self.config.hand_back_taken_over {
            // Run again at the first tick, once the host has registered its verbs
            // (docs/runtime.md §6.7): the engine's next deadline is now while any wait.
            self.rearm();
            return Ok(0);
        }
        Ok(self.settle_interrupted())
    }

    /// Also calls `wake` whenever the store's own thread leaves work for the engine (claims,
    /// takeovers, operator stops: docs/runtime.md §6.3) — for a host that sleeps between frames,
    /// its own wake-up. The call comes from the store's thread.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// core.on_store_news(std::sync::Arc::new(|| { /* wake the host's thread */ }));
    /// ```
    pub fn on_store_news(&self, wake: StoreWaker) {
        self.store_news.set_host_wake(wake);
    }

    /// Settles every firing the engine restored from the store as in flight and awaiting a
    /// decision ([`Schedules::interrupted`]): none of them runs here, so each is abandoned (a
    /// fault of its schedule, so overlap and catch-up go on from there), and the wake is
    /// re-armed. Firings this host runs are not in that list, so it is safe to call at any time;
    /// opening the engine calls it, unless the core runs them again instead (docs/runtime.md
    /// §6.7). Rows claimed while the engine runs add to the list only then: otherwise the
    /// engine settles their firings itself, as taken over (docs/schedules.md §11.39).
    /// Returns how many it settled.
    ///
    /// ```
    /// use tickstep_host::{HostCore, HostSettings};
    /// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// use tickstep_host::schedules::OpenWorld;
    /// let clock = ManualClock::new();
    /// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// core.open(None, Box::new(OpenWorld), None)?;
    /// assert_eq!(core.settle_interrupted(), 0);
    /// # Ok::<(), tickstep_host::HostError>(())
    /// ```
    pub fn settle_interrupted(self: &Rc<Self>) -> usize {
        let engine = self.engine();
        let interrupted = engine.interrupted();
        for in_flight in &interrupted {
            engine.abandon(in_flight.run);
        }
        self.rearm();
        interrupted.len()
    }

    /// The engine.
    ///
    /// # Panics
    ///
    /// Before [`HostCore::open`].
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// core.open(None, Box::new(tickstep_host::schedules::OpenWorld), None)?;
    /// assert_eq!(core.engine().live_count(), 0);
    /// # Ok::<(), tickstep_host::HostError>(())
    /// ```
    #[track_caller]
    pub fn engine(&self) -> &Schedules {
        self.engine
            .get()
            .expect("HostCore::open opens the engine before it is used")
    }

    /// The clock the core reads wall time from.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{clock::Clock, FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert_eq!(core.clock().now().as_nanos(), 0);
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Registers a sync verb (replacing one of that name): one kernel task per firing.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// core.verb("ring", |_call| Ok(tickstep_host::schedules::Value::Int(0)));
    /// ```
    pub fn verb(&self, name: &str, f: impl Fn(&VerbCall) -> VerbResult + 'static) {
        self.verbs.insert(name, Verb::Sync(Rc::new(f)));
    }

    /// Registers an async verb: each firing runs `f(call)`'s future as an async kernel task,
    /// which may wait across frames.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// core.async_verb("patrol", |call| async move {
    ///     call.sleep(std::time::Duration::from_secs(1)).await;
    ///     Ok(tickstep_host::schedules::Value::Int(0))
    /// });
    /// ```
    pub fn async_verb<F, Fut>(&self, name: &str, f: F)
    where
        F: Fn(VerbCall) -> Fut + 'static,
        Fut: Future<Output = VerbResult> + 'static,
    {
        let boxed = move |call| -> VerbFuture { Box::pin(f(call)) };
        self.verbs.insert(name, Verb::Async(Rc::new(boxed)));
    }

    /// Drops every verb (and what its closure captured), with no borrow held: a host calls it when
    /// it goes away, so that a verb's closure holding the host's own handles does not keep them
    /// alive in a cycle.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let core = HostCore::new(clock.clone(), FrameScheduler::new(clock, SchedulerConfig::server()), &HostSettings::default(), None);
    /// core.verb("ring", |_call| Ok(tickstep_host::schedules::Value::Int(0)));
    /// core.clear_verbs();
    /// ```
    pub fn clear_verbs(&self) {
        self.verbs.clear();
    }

    /// Arms (or moves earlier) the kernel wake for the engine's next deadline. The common case
    /// — the armed wake is early enough — is one heap peek and a comparison, with no clock read.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// core.rearm(); // no engine yet: nothing to arm
    /// ```
    pub fn rearm(self: &Rc<Self>) {
        let mut next = self
            .engine
            .get()
            .and_then(Schedules::next_deadline_unix_nanos);
        let now = || self.clock.unix_nanos();
        if self.store_news.take() {
            let at = now();
            next = Some(next.map_or(at, |n| n.min(at)));
        }
        let armed = self.wake.rearm(
            next,
            now,
            &self.kernel,
            SCHEDULES_TICK_ORIGIN,
            self,
            HostCore::tick,
        );
        if let Err(error) = armed {
            // `after` refuses only a delay past the end of the clock: such a deadline never comes.
            tracing::warn!(target: "tickstep", "cannot arm the schedules tick: {error}");
        }
    }

    fn tick(self: &Rc<Self>) {
        self.wake.fired(self.clock.unix_nanos());
        self.count(|c| c.schedule_ticks += 1);
        match self.engine().tick() {
            Ok(report) => self.count(|c| {
                c.firings_started += report.started as u64;
                c.firings_not_started += report.not_started as u64;
            }),
            Err(error) => {
                // The engine keeps the updates pending and writes them at its next tick.
                self.count(|c| c.store_errors += 1);
                tracing::warn!(target: "tickstep", "schedules tick: {}", ErrorChain(&error));
            }
        }
        if self.config.hand_back_taken_over {
            self.rerun_interrupted();
        }
        self.rearm();
    }

    /// Runs again every firing the engine handed back as interrupted — restored at open, or
    /// brought by a row claimed from a dead node (docs/runtime.md §6.7, docs/schedules.md
    /// §11.57). Called after each tick, so never before the verbs are registered.
    fn rerun_interrupted(&self) {
        let engine = self.engine();
        let handed = engine.interrupted();
        for in_flight in &handed {
            engine.rerun(in_flight.run);
        }
        if !handed.is_empty() {
            tracing::info!(target: "tickstep", firings = handed.len(), "ran handed-back firings again");
        }
    }

    /// Reports a firing's outcome to the engine by run id (a host runner's firing, or a kill),
    /// counts it and re-arms the wake, since an adaptive verb may have moved its deadline.
    /// Returns whether the run was known and running.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// use tickstep_host::schedules::{Outcome, RunId, Value};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// # core.open(None, Box::new(tickstep_host::schedules::OpenWorld), None)?;
    /// assert!(!core.report(RunId(9), Outcome::Returned(Value::Int(0))), "no such run");
    /// # Ok::<(), tickstep_host::HostError>(())
    /// ```
    pub fn report(self: &Rc<Self>, run: RunId, outcome: Outcome) -> bool {
        self.firings.end(run);
        self.hand_over(run, outcome)
    }

    /// [`HostCore::report`] from the firing's own task, which knows its place in the list.
    pub(crate) fn report_tracked(
        self: &Rc<Self>,
        run: RunId,
        outcome: Outcome,
        state: &FiringState,
    ) {
        self.firings.end_at(state);
        self.hand_over(run, outcome);
    }

    fn hand_over(self: &Rc<Self>, run: RunId, outcome: Outcome) -> bool {
        let returned = matches!(outcome, Outcome::Returned(_));
        let known = self.engine().report(run, outcome);
        if known {
            self.count(|c| {
                if returned {
                    c.firings_returned += 1;
                } else {
                    c.firings_faulted += 1;
                }
            });
        }
        self.rearm();
        known
    }

    /// Kills a running firing: its kernel task is cancelled and fault `killed` reported (by a
    /// sync verb killing itself, when it returns). Returns whether `run` was running.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert!(!core.kill(tickstep_host::schedules::RunId(1)));
    /// ```
    pub fn kill(self: &Rc<Self>, run: RunId) -> bool {
        match self.firings.kill(run) {
            None => false,
            Some(report_now) => {
                if report_now {
                    self.report(run, Outcome::Killed);
                }
                true
            }
        }
    }

    /// Kills every running firing of `schedule`. Returns how many.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert_eq!(core.kill_firings_of(tickstep_host::schedules::ScheduleId::from_raw(1)), 0);
    /// ```
    pub fn kill_firings_of(self: &Rc<Self>, schedule: ScheduleId) -> usize {
        let runs = self.firings.runs_of(schedule);
        runs.into_iter().filter(|run| self.kill(*run)).count()
    }

    /// How many firings are running now: [`HostCore::running_firings`]'s length, without
    /// building the list (for telemetry read every frame).
    ///
    /// ```
    /// use tickstep_host::{HostCore, HostSettings};
    /// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert_eq!(core.running_count(), 0);
    /// ```
    pub fn running_count(&self) -> usize {
        self.firings.len()
    }

    /// The firings running now, oldest run first.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert!(core.running_firings().is_empty());
    /// ```
    pub fn running_firings(&self) -> Vec<RunningFiring> {
        self.firings.list()
    }

    /// Overrides `schedule`'s firing limits in memory (`None` removes the override).
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// let id = tickstep_host::schedules::ScheduleId::from_raw(1);
    /// core.set_firing_limits(id, Some(tickstep_host::FiringLimits::none().ticks(3)));
    /// ```
    pub fn set_firing_limits(&self, schedule: ScheduleId, limits: Option<FiringLimits>) {
        self.firings.set_limits(schedule, limits);
    }
}

impl<C> Drop for HostCore<C> {
    /// Cancels the core's own kernel tasks, the wake and every running firing, so that none keeps
    /// the engine alive through the kernel (a firing's task holds the kernel, which holds the
    /// task). The engine's last handle then goes, and its final commit saves the firings still in
    /// flight, which the next start settles (docs/runtime.md §8.2).
    fn drop(&mut self) {
        self.wake.cancel();
        self.firings.cancel_all();
    }
}

impl<C> HostCore<C> {
    /// A snapshot of the counters.
    ///
    /// ```
    /// # use tickstep_host::{HostCore, HostSettings};
    /// # use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
    /// # let clock = ManualClock::new();
    /// # let kernel = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// # let core = HostCore::new(clock, kernel, &HostSettings::default(), None);
    /// assert_eq!(core.counts().firings_started, 0);
    /// ```
    pub fn counts(&self) -> HostCounts {
        self.counts.get()
    }

    fn count(&self, update: impl FnOnce(&mut HostCounts)) {
        let mut counts = self.counts.get();
        update(&mut counts);
        self.counts.set(counts);
    }
}
