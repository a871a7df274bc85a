//! The wiring between the three layers: what the runtime's kernel tasks share.
//!
//! # Ownership (why nothing leaks and a clean shutdown commits)
//!
//! The [`Hub`] is owned by the `Runtime` alone. Everything that runs later — the command cycle,
//! the schedules wake, each firing's task, the engine's runner — holds a `Weak<Hub>`, so no
//! reference cycle keeps the engine alive after the runtime is dropped, and the engine's last
//! handle going away performs its final group commit.
//!
//! # The schedules wake
//!
//! The engine is not ticked on a blind 10 ms timer: the hub arms one kernel `after()` for the
//! engine's earliest deadline (never sooner than one schedules tick after the previous tick), and
//! re-arms it after every tick, every settled firing, every command cycle and at the start of
//! every `run_*` call — the places where a new, earlier deadline can appear. An idle runtime is
//! therefore an idle kernel: the frame loop sleeps straight to the next deadline, which is what
//! makes a simulated day take milliseconds.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use tickstep_kernel::clock::Clock;
use tickstep_kernel::{ErrorChain, FrameScheduler, Overload, Priority, TaskHandle};
use tickstep_schedules::{Firing, KernelWake, Outcome, Refused, RunId, Runner, Schedules};

use crate::RuntimeClock;
use crate::error::RuntimeError;
use crate::firings::{self, FiringLimits, Firings};
use crate::store_news::StoreNews;
use crate::verbs::{CatchUnwind, Verb, VerbCall, VerbTable, call_sync, outcome_of};

/// The kernel origin label of the command cycle job (its name in the profiler).
pub(crate) const COMMAND_CYCLE_ORIGIN: &str = "tickstep commands run()";
/// The kernel origin label of the schedules tick.
pub(crate) const SCHEDULES_TICK_ORIGIN: &str = "tickstep schedules tick";

/// Counters the runtime reports in [`RuntimeStats`](crate::RuntimeStats).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) command_cycles: Cell<u64>,
    pub(crate) schedule_ticks: Cell<u64>,
    pub(crate) firings_started: Cell<u64>,
    pub(crate) firings_not_started: Cell<u64>,
    pub(crate) firings_returned: Cell<u64>,
    pub(crate) firings_faulted: Cell<u64>,
    pub(crate) store_errors: Cell<u64>,
    pub(crate) task_panics: Cell<u64>,
    pub(crate) overloads: Cell<u64>,
}

fn bump(cell: &Cell<u64>, by: u64) {
    cell.set(cell.get() + by);
}

type OverloadListener = Rc<dyn Fn(&Overload)>;

pub(crate) struct Hub {
    pub(crate) clock: RuntimeClock,
    pub(crate) kernel: FrameScheduler,
    pub(crate) commands: tickstep_commands::CommandScheduler,
    pub(crate) engine: Schedules,
    pub(crate) verbs: Rc<VerbTable>,
    pub(crate) firing_priority: Priority,
    pub(crate) firings: Firings,
    pub(crate) counters: Counters,
    /// The first failure a `run_*` call has not returned yet.
    failure: RefCell<Option<RuntimeError>>,
    command_job: RefCell<Option<TaskHandle>>,
    /// The command cycle's period (`None`: built without commands).
    command_period: Cell<Option<Duration>>,
    /// The schedules wake: one kernel timer at the engine's next deadline.
    wake: KernelWake,
    next_run: Cell<u64>,
    overload_listeners: RefCell<Vec<OverloadListener>>,
    last_overload: RefCell<Option<Overload>>,
    /// Work a store's own thread left for the next tick (docs/runtime.md §6.3).
    pub(crate) store_news: std::sync::Arc<StoreNews>,
}

/// The runtime's settings the hub keeps.
#[derive(Clone, Copy)]
pub(crate) struct HubSettings {
    pub(crate) firing_priority: Priority,
    pub(crate) schedules_tick: Duration,
    pub(crate) limits: FiringLimits,
}

impl Hub {
    /// The whole hub, engine included. The engine's runner reaches the hub through the
    /// [`RunnerLink`] the caller made it with, which the caller points here next: the engine is
    /// opened (fallibly) before the hub exists, and the runner is only called by ticks, which
    /// start after the link is set.
    pub(crate) fn new(
        clock: RuntimeClock,
        kernel: FrameScheduler,
        commands: tickstep_commands::CommandScheduler,
        engine: Schedules,
        verbs: Rc<VerbTable>,
        settings: HubSettings,
    ) -> Rc<Hub> {
        let HubSettings {
            firing_priority,
            schedules_tick,
            limits,
        } = settings;
        let store_news = std::sync::Arc::new(StoreNews::default());
        engine.set_store_waker(store_news.waker());
        Rc::new(Hub {
            clock,
            kernel,
            commands,
            engine,
            verbs,
            firing_priority,
            firings: Firings::new(limits),
            counters: Counters::default(),
            failure: RefCell::new(None),
            command_job: RefCell::new(None),
            command_period: Cell::new(None),
            wake: KernelWake::new(schedules_tick),
            next_run: Cell::new(0),
            overload_listeners: RefCell::new(Vec::new()),
            last_overload: RefCell::new(None),
            store_news,
        })
    }

    pub(crate) fn engine(&self) -> &Schedules {
        &self.engine
    }

    /// Records a failure for the next `run_*` return and stops the command cycle (a failed
    /// command crashes the robot program in the command layer's model; here it stops the cycle).
    pub(crate) fn fail(&self, error: RuntimeError) {
        tracing::error!(target: "tickstep", "{error}");
        if let Some(job) = self.command_job.borrow_mut().take() {
            job.cancel();
        }
        self.failure.borrow_mut().get_or_insert(error);
    }

    pub(crate) fn take_failure(&self) -> Option<RuntimeError> {
        self.failure.borrow_mut().take()
    }

    /// Starts the per-cycle command job.
    pub(crate) fn start_command_cycle(
        self: &Rc<Self>,
        period: Duration,
    ) -> Result<(), RuntimeError> {
        let hub = Rc::downgrade(self);
        let job = self.kernel.with_origin(COMMAND_CYCLE_ORIGIN).every(
            period,
            move || {
                if let Some(hub) = hub.upgrade() {
                    hub.run_command_cycle();
                }
            },
            Priority::High,
        )?;
        *self.command_job.borrow_mut() = Some(job);
        self.command_period.set(Some(period));
        Ok(())
    }

    /// Starts the command cycle again after a failure stopped it. Returns whether it was
    /// restarted (false: it is running, or the runtime was built without commands).
    pub(crate) fn restart_command_cycle(self: &Rc<Self>) -> Result<bool, RuntimeError> {
        match self.command_period.get() {
            Some(period) if !self.command_cycle_running() => {
                self.start_command_cycle(period)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// One command cycle. Its failure is recognised by type here, at the call, not afterwards by
    /// the kernel's error hook: a command's panic is caught around `run()` (and resumed nowhere:
    /// it becomes [`RuntimeError::CommandPanicked`]), so no user task, whatever its origin label,
    /// can be mistaken for the command cycle.
    fn run_command_cycle(self: &Rc<Self>) {
        bump(&self.counters.command_cycles, 1);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commands.run()));
        match run {
            Ok(Ok(())) => {}
            Ok(Err(error)) => self.fail(RuntimeError::Command(error)),
            Err(payload) => self.fail(RuntimeError::CommandPanicked {
                message: tickstep_kernel::panic_message(payload.as_ref()),
            }),
        }
        self.rearm_schedules();
    }

    pub(crate) fn command_cycle_running(&self) -> bool {
        self.command_job.borrow().is_some()
    }

    /// Arms (or moves earlier) the kernel wake for the engine's next deadline.
    ///
    /// Runs after every settled firing, so the common case — the armed wake is already early
    /// enough — is one heap peek and a comparison in Unix nanoseconds, with no clock read.
    /// News from the store's thread (claims, takeovers, operator stops) arms it for now.
    pub(crate) fn rearm_schedules(self: &Rc<Self>) {
        let mut next = self.engine.next_deadline_unix_nanos();
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
            Hub::tick_schedules,
        );
        if let Err(error) = armed {
            tracing::warn!(target: "tickstep", "cannot arm the schedules tick: {error}");
        }
    }

    fn tick_schedules(self: &Rc<Self>) {
        self.wake.fired(self.clock.unix_nanos());
        bump(&self.counters.schedule_ticks, 1);
        let engine = self.engine().clone();
        match engine.tick() {
            Ok(report) => {
                bump(&self.counters.firings_started, report.started as u64);
                bump(
                    &self.counters.firings_not_started,
                    report.not_started as u64,
                );
            }
            Err(error) => {
                // The engine keeps the updates pending and writes them at its next tick.
                bump(&self.counters.store_errors, 1);
                tracing::warn!(target: "tickstep", "schedules tick: {}", ErrorChain(&error));
            }
        }
        self.rearm_schedules();
    }

    /// Reports a finished firing to the engine (no borrow held) and re-arms the wake, since an
    /// adaptive verb may just have moved its schedule's deadline.
    pub(crate) fn settle(self: &Rc<Self>, run: RunId, outcome: Outcome) -> bool {
        self.firings.end(run);
        self.report(run, outcome)
    }

    /// [`Hub::settle`] from the firing's own task, which knows its place in the running list.
    fn settle_tracked(
        self: &Rc<Self>,
        run: RunId,
        outcome: Outcome,
        state: &firings::FiringState,
    ) -> bool {
        self.firings.end_at(state);
        self.report(run, outcome)
    }

    /// Hands an outcome to the engine, counts it and re-arms the wake.
    fn report(self: &Rc<Self>, run: RunId, outcome: Outcome) -> bool {
        let counter = match outcome {
            Outcome::Returned(_) => &self.counters.firings_returned,
            _ => &self.counters.firings_faulted,
        };
        let known = self.engine().report(run, outcome);
        if known {
            bump(counter, 1);
        }
        self.rearm_schedules();
        known
    }

    /// Kills a running firing: `killed` is reported now, or by a sync verb killing itself when it
    /// returns. Returns whether `run` was running.
    pub(crate) fn kill(self: &Rc<Self>, run: RunId) -> bool {
        match self.firings.kill(run) {
            None => false,
            Some(report_now) => {
                if report_now {
                    self.settle(run, Outcome::Killed);
                }
                true
            }
        }
    }

    pub(crate) fn on_overload(&self, listener: OverloadListener) {
        self.overload_listeners.borrow_mut().push(listener);
    }

    pub(crate) fn publish_overload(&self, overload: &Overload) {
        bump(&self.counters.overloads, 1);
        *self.last_overload.borrow_mut() = Some(overload.clone());
        let listeners = self.overload_listeners.borrow().clone();
        for listener in listeners {
            listener(overload);
        }
    }

    pub(crate) fn last_overload(&self) -> Option<Overload> {
        self.last_overload.borrow().clone()
    }

    pub(crate) fn note_task_panic(&self) {
        bump(&self.counters.task_panics, 1);
    }
}

/// The runner the engine starts firings through: the runtime's own (verbs as kernel tasks), or
/// the host's ([`RuntimeBuilder::runner`](crate::RuntimeBuilder::runner)).
pub(crate) enum EngineRunner {
    Kernel(KernelRunner),
    Host(Box<dyn Runner>),
}

impl Runner for EngineRunner {
    fn start(&self, firing: &Firing) -> Result<RunId, Refused> {
        match self {
            EngineRunner::Kernel(runner) => runner.start(firing),
            EngineRunner::Host(runner) => runner.start(firing),
        }
    }
}

/// The engine's [`Runner`]: each firing becomes a kernel task (sync verb) or an async kernel task
/// (async verb) at the runtime's firing priority, isolated by `catch_unwind`, and its outcome is
/// reported by run id when it ends.
pub(crate) struct KernelRunner {
    pub(crate) hub: RunnerLink,
}

/// How the engine's runner reaches the hub: empty until the hub exists (the engine is built
/// first, since opening it can fail), then pointed at it once.
#[derive(Clone, Default)]
pub(crate) struct RunnerLink(Rc<RefCell<Weak<Hub>>>);

impl RunnerLink {
    pub(crate) fn point_at(&self, hub: &Rc<Hub>) {
        *self.0.borrow_mut() = Rc::downgrade(hub);
    }

    fn get(&self) -> Weak<Hub> {
        self.0.borrow().clone()
    }
}

impl Runner for KernelRunner {
    fn start(&self, firing: &Firing) -> Result<RunId, Refused> {
        let weak = self.hub.get();
        let hub = weak
            .upgrade()
            .ok_or_else(|| Refused("the runtime has shut down".into()))?;
        let verb = hub.verbs.get(&firing.verb).ok_or_else(|| {
            Refused(format!(
                "no code is registered for verb {:?}",
                &*firing.verb
            ))
        })?;
        let run = RunId(hub.next_run.get() + 1);
        hub.next_run.set(run.0);
        let call = VerbCall::new(
            firing.clone(),
            run,
            hub.engine().clone(),
            hub.kernel.clone(),
        );
        let origin = format!("verb {}", firing.verb);
        let tasks = hub.kernel.with_origin(origin);
        let tracker = hub.firings.tracker(firing);
        let state = Rc::clone(&tracker.state);
        let task = match verb {
            Verb::Sync(f) => {
                let kernel = hub.kernel.clone();
                tasks.schedule(
                    move || {
                        tracker.state.polls.set(1);
                        // Measured only under a time limit: a clock read is not free.
                        let timed = tracker.limits.time_limit().map(|_| kernel.now());
                        let result = call_sync(&*f, &call);
                        let ran = timed.map_or(Duration::ZERO, |started| kernel.now() - started);
                        let verdict = firings::sync_verdict(&tracker, ran);
                        if let Some(hub) = weak.upgrade() {
                            let outcome = verdict.unwrap_or_else(|| outcome_of(result));
                            hub.settle_tracked(run, outcome, &tracker.state);
                        }
                    },
                    hub.firing_priority,
                )
            }
            Verb::Async(f) => {
                let kernel = hub.kernel.clone();
                tasks.spawn(
                    async move {
                        let verb = async move {
                            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(call)))
                            {
                                Ok(future) => CatchUnwind(future).await,
                                Err(payload) => Err(payload),
                            }
                        };
                        let outcome = match firings::Limited::new(verb, &tracker, &kernel).await {
                            Ok(result) => outcome_of(result),
                            Err(limit) => limit,
                        };
                        if let Some(hub) = weak.upgrade() {
                            hub.settle_tracked(run, outcome, &tracker.state);
                        }
                    },
                    hub.firing_priority,
                )
            }
        };
        // Recorded once its task exists; it runs at the earliest in the next drain.
        hub.firings
            .register(run, firing, hub.clock.unix_nanos(), state, task);
        Ok(run)
    }
}
