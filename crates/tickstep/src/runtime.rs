//! [`Runtime`]: the three layers on one clock and one frame loop, and the calls that drive it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::Clock;
use tickstep_kernel::{FrameLoop, FrameScheduler, Kernel, Overload, Stats};
use tickstep_schedules::{Outcome, RunId, ScheduleId, Schedules};

use crate::host::HostError;
use crate::host::{VerbCall, VerbResult};
use crate::wiring::Wiring;
use crate::{FiringLimits, RunningFiring, RuntimeClock, RuntimeError};

/// How much virtual or real time one slice of [`Runtime::run_for`] covers: failures are noticed
/// at the end of the slice they happened in.
const RUN_SLICE: Duration = Duration::from_secs(1);

/// The kernel, the command scheduler and the durable schedules engine on one clock.
///
/// * one [`FrameLoop`] (server or client role) with the kernel's main scheduler on Heartbeat;
/// * the command scheduler's `run()` as a kernel job every command period (20 ms by default);
/// * the schedules engine ticked when its next deadline comes due (at most once per schedules
///   tick, 10 ms by default), each firing run as its own kernel task — a sync [verb](Runtime::verb)
///   as one task, an [async verb](Runtime::async_verb) as an async task — with its outcome
///   reported back to the engine.
///
/// It is single-threaded: every handle is `Rc`-based, so a `Runtime` cannot leave its thread.
///
/// ```compile_fail
/// fn needs_send<T: Send>(_: T) {}
/// let rt = tickstep::Runtime::builder().in_memory_store().build().unwrap();
/// needs_send(rt);
/// ```
///
/// ```
/// use std::time::Duration;
/// use tickstep::Runtime;
/// use tickstep::kernel::{ManualClock, Priority};
///
/// let rt = Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
/// let _h = rt.scheduler().after(Duration::from_secs(5), || println!("five seconds"), Priority::Normal)?;
/// rt.run_for(Duration::from_secs(6))?; // virtual time: returns at once
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Runtime {
    wiring: Rc<Wiring>,
    kernel: Kernel,
    store_path: Option<PathBuf>,
    abandoned: usize,
}

/// Reports firing outcomes to a runtime from the host's own task system
/// ([`Runtime::reporter`]).
#[derive(Clone)]
pub struct Reporter {
    wiring: std::rc::Weak<Wiring>,
}

impl Reporter {
    /// [`Runtime::report`] through this handle; false once the runtime is gone.
    ///
    /// ```
    /// use tickstep::schedules::{Outcome, RunId, Value};
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert!(!rt.reporter().report(RunId(1), Outcome::Returned(Value::Int(0))));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn report(&self, run: RunId, outcome: Outcome) -> bool {
        self.wiring
            .upgrade()
            .is_some_and(|wiring| wiring.core.report(run, outcome))
    }
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter")
            .field("runtime_alive", &(self.wiring.strong_count() > 0))
            .finish()
    }
}

/// A snapshot of what a runtime has done ([`Runtime::stats`]).
///
/// ```
/// use tickstep::Runtime;
/// use tickstep::kernel::ManualClock;
/// let rt = Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
/// rt.step_frame()?;
/// let stats = rt.stats();
/// assert_eq!(stats.frames, 1);
/// assert_eq!(stats.firings_started, 0);
/// # Ok::<(), tickstep::RuntimeError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RuntimeStats {
    /// Frames elapsed (run or slept through while idle).
    pub frames: u64,
    /// Frames actually run.
    pub frames_run: u64,
    /// The main kernel scheduler's statistics (budget, tasks run and deferred).
    pub kernel: Stats,
    /// Command cycles run.
    pub command_cycles: u64,
    /// Commands running now.
    pub commands_running: usize,
    /// Schedules ticks.
    pub schedule_ticks: u64,
    /// Live schedules in the engine.
    pub schedules_live: usize,
    /// Firings started as kernel tasks.
    pub firings_started: u64,
    /// Firings that could not start (target gone, verb no longer callable).
    pub firings_not_started: u64,
    /// Firings whose verb returned.
    pub firings_returned: u64,
    /// Firings whose verb returned an error or panicked.
    pub firings_faulted: u64,
    /// Store writes that failed (the engine retries them at its next tick).
    pub store_errors: u64,
    /// Kernel tasks outside the command cycle that panicked (isolated by the kernel).
    pub task_panics: u64,
    /// Kernel overload events published.
    pub overloads: u64,
}

impl Runtime {
    pub(crate) fn assemble(
        wiring: Rc<Wiring>,
        kernel: Kernel,
        store_path: Option<PathBuf>,
        abandoned: usize,
    ) -> Runtime {
        Runtime {
            wiring,
            kernel,
            store_path,
            abandoned,
        }
    }

    /// The clock every layer reads.
    ///
    /// ```
    /// use tickstep::kernel::{clock::Clock, ManualClock};
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// assert_eq!(rt.clock().now().as_nanos(), 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn clock(&self) -> &RuntimeClock {
        self.wiring.core.clock()
    }

    /// The kernel (frame loop, main scheduler, phase schedulers).
    ///
    /// ```
    /// use tickstep::kernel::FramePhase;
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert_eq!(rt.kernel().scheduler().phase(), FramePhase::Heartbeat);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The kernel's main scheduler (Heartbeat).
    ///
    /// ```
    /// use tickstep::kernel::Priority;
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// rt.scheduler().schedule(|| {}, Priority::Low);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn scheduler(&self) -> &FrameScheduler {
        self.kernel.scheduler()
    }

    /// The frame loop.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().frame_rate(50).in_memory_store().build()?;
    /// assert_eq!(rt.frame_loop().period().as_millis(), 20);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn frame_loop(&self) -> &FrameLoop {
        self.kernel.frame_loop()
    }

    /// The command scheduler, run once per command period.
    ///
    /// ```
    /// use tickstep::commands::Command;
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// let hello = Command::no_requirements().executing(|_co| async {}).named("hello");
    /// rt.commands().schedule(&hello);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn commands(&self) -> &tickstep_commands::CommandScheduler {
        &self.wiring.commands
    }

    /// The durable schedules engine.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert_eq!(rt.schedules().live_count(), 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn schedules(&self) -> &Schedules {
        self.wiring.core.engine()
    }

    /// The store file, or `None` for an in-memory store.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert!(rt.store_path().is_none());
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn store_path(&self) -> Option<&Path> {
        self.store_path.as_deref()
    }

    /// How many in-flight firings found in the store at build time were abandoned.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert_eq!(rt.abandoned_firings(), 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn abandoned_firings(&self) -> usize {
        self.abandoned
    }

    /// Registers a sync verb: schedules whose verb is `name` run `f` as one kernel task per firing.
    /// Replaces an earlier verb of that name. A panic in `f` is that firing's fault.
    ///
    /// ```
    /// use tickstep::Runtime;
    /// use tickstep::kernel::ManualClock;
    /// use tickstep::schedules::{ObjId, Options, Value};
    /// let rt = Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// rt.verb("ring", |_call| Ok(Value::Int(0)));
    /// let mut txn = rt.schedules().begin(ObjId(1));
    /// txn.schedule_every(ObjId(1), "ring", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn verb(&self, name: &str, f: impl Fn(&VerbCall) -> VerbResult + 'static) {
        self.wiring.core.verb(name, f);
    }

    /// Registers an async verb: each firing runs `f(call)`'s future as an async kernel task (it may
    /// wait across frames, e.g. for a command it scheduled), and the schedule's `overlap` policy
    /// sees the firing as running until the future ends.
    ///
    /// ```
    /// use tickstep::Runtime;
    /// use tickstep::schedules::Value;
    /// let rt = Runtime::builder().in_memory_store().build()?;
    /// rt.async_verb("patrol", |call| async move {
    ///     let _where = call.target();
    ///     Ok(Value::Int(0))
    /// });
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn async_verb<F, Fut>(&self, name: &str, f: F)
    where
        F: Fn(VerbCall) -> Fut + 'static,
        Fut: Future<Output = VerbResult> + 'static,
    {
        self.wiring.core.async_verb(name, f);
    }

    /// Reports the outcome of a firing the host ran itself (with
    /// [`RuntimeBuilder::runner`](crate::RuntimeBuilder::runner)): the engine records it by run
    /// id (an adaptive schedule reads its next delay from a returned number), the runtime counts
    /// it, and the engine's wake is re-armed, since the schedule's next deadline may have moved.
    /// Returns whether the run was known and running (false for an unknown or already reported
    /// run, which changes nothing). Not for firings the runtime runs itself (verbs report their
    /// own outcome), and never from inside the runner's `start`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::kernel::ManualClock;
    /// use tickstep::schedules::{ObjId, Options, Outcome, QueueRunner, Value};
    /// let jobs = QueueRunner::new();
    /// let rt = tickstep::Runtime::builder()
    ///     .manual_clock(ManualClock::new())
    ///     .runner(jobs.clone())
    ///     .in_memory_store()
    ///     .build()?;
    /// let mut txn = rt.schedules().begin(ObjId(1));
    /// txn.schedule_every(ObjId(1), "sweep", 1.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// rt.run_for(Duration::from_secs(1))?;
    /// let (run, _firing) = jobs.take_started().remove(0);
    /// assert!(rt.report(run, Outcome::Returned(Value::Int(0))));
    /// assert!(!rt.report(run, Outcome::Returned(Value::Int(0))), "reported twice");
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn report(&self, run: RunId, outcome: Outcome) -> bool {
        self.wiring.core.report(run, outcome)
    }

    /// A cheap handle that does [`Runtime::report`] from anywhere the host's task system runs —
    /// a kernel job, a callback — without a reference to the runtime. It does not keep the
    /// runtime alive: once the runtime is gone, reports return false.
    ///
    /// ```
    /// use tickstep::schedules::{Outcome, RunId, Value, QueueRunner};
    /// let rt = tickstep::Runtime::builder().runner(QueueRunner::new()).in_memory_store().build()?;
    /// let reporter = rt.reporter();
    /// assert!(!reporter.report(RunId(9), Outcome::Returned(Value::Int(0))), "no such run");
    /// drop(rt);
    /// assert!(!reporter.report(RunId(1), Outcome::Returned(Value::Int(0))));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn reporter(&self) -> Reporter {
        Reporter {
            wiring: Rc::downgrade(&self.wiring),
        }
    }

    /// The firings running now, oldest run first: schedule id, run id, `target:verb`, when it
    /// started and how many times its verb was polled. Firings the runtime runs itself (verbs);
    /// a host runner's are the host's to list.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::kernel::ManualClock;
    /// use tickstep::schedules::{ObjId, Options, Value};
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// rt.async_verb("patrol", |call| async move {
    ///     call.sleep(Duration::from_secs(60)).await;
    ///     Ok(Value::Int(0))
    /// });
    /// let mut txn = rt.schedules().begin(ObjId(1));
    /// let id = txn.schedule_every(ObjId(7), "patrol", 10.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// rt.run_for(Duration::from_secs(10))?;
    /// let running = rt.running_firings();
    /// assert_eq!((running.len(), running[0].schedule), (1, id));
    /// assert_eq!(running[0].target_verb(), "#7:patrol");
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn running_firings(&self) -> Vec<RunningFiring> {
        self.wiring.core.running_firings()
    }

    /// Kills a running firing: its kernel task is cancelled (an async verb's future is dropped
    /// at once, a sync verb not yet run never runs) and the schedule records fault `killed`,
    /// counted toward `max_faults`. A sync verb that kills its own firing is reported `killed`
    /// when it returns. Returns whether `run` was running.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::kernel::ManualClock;
    /// use tickstep::schedules::{FaultKind, ObjId, Options, Value};
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// rt.async_verb("stuck", |call| async move {
    ///     call.wait_until(|| false).await;
    ///     Ok(Value::Int(0))
    /// });
    /// let mut txn = rt.schedules().begin(ObjId(1));
    /// let id = txn.schedule_every(ObjId(1), "stuck", 60.0, vec![], Options::new()).unwrap();
    /// txn.commit().unwrap();
    /// rt.run_for(Duration::from_secs(60))?;
    /// let run = rt.running_firings()[0].run;
    /// assert!(rt.kill_firing(run));
    /// assert!(rt.running_firings().is_empty());
    /// let info = rt.schedules().begin(ObjId(1)).schedule_info(id).unwrap();
    /// assert_eq!(info.last_fault.unwrap().kind, FaultKind::Killed);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn kill_firing(&self, run: RunId) -> bool {
        self.wiring.core.kill(run)
    }

    /// Kills every running firing of `schedule` ([`Runtime::kill_firing`]). Returns how many.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert_eq!(rt.kill_firings_of(tickstep::schedules::ScheduleId::from_raw(1)), 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn kill_firings_of(&self, schedule: ScheduleId) -> usize {
        self.wiring.core.kill_firings_of(schedule)
    }

    /// Overrides `schedule`'s firing limits in memory: each limit set here replaces the one the
    /// schedule was created with (its `seconds` and `ticks` options, stored with it) and the
    /// runtime's default ([`RuntimeBuilder::firing_limits`](crate::RuntimeBuilder::firing_limits));
    /// `None` removes the override. The override is not stored and is gone after a restart; the
    /// schedule's own options are not (docs/runtime.md §4.5).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::FiringLimits;
    /// use tickstep::schedules::ScheduleId;
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// rt.set_firing_limits(ScheduleId::from_raw(1), Some(FiringLimits::none().ticks(10)));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn set_firing_limits(&self, schedule: ScheduleId, limits: Option<FiringLimits>) {
        self.wiring.core.set_firing_limits(schedule, limits);
    }

    /// Calls `listener` with every kernel overload event (server with diagnostics on).
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// rt.on_overload(|o| eprintln!("overload: {} deferred", o.window.deferred));
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn on_overload(&self, listener: impl Fn(&Overload) + 'static) {
        self.wiring.on_overload(Rc::new(listener));
    }

    /// Calls `observer` right after every command cycle (the command scheduler's `run()`, once
    /// per command period), with a [`CycleView`](crate::CycleView) of the commands, the
    /// kernel's statistics and the durable schedules' counts: where a host publishes
    /// telemetry each frame without a loop of its own. It runs inside the kernel's step, in the
    /// command cycle's job, under every driver of the runtime (`run_for`, `step_frame`, the
    /// tokio driver) (docs/runtime.md §2.6).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep::kernel::ManualClock;
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).frame_rate(50).in_memory_store().build()?;
    /// let cycles = Rc::new(Cell::new(0));
    /// let c = cycles.clone();
    /// rt.after_command_cycle(move |view| c.set(view.commands().telemetry().cycle));
    /// rt.run_for(Duration::from_secs(1))?;
    /// assert_eq!(cycles.get(), rt.stats().command_cycles);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn after_command_cycle(&self, observer: impl Fn(&crate::CycleView<'_>) + 'static) {
        self.wiring.after_command_cycle(Rc::new(observer));
    }

    /// The most recent overload event.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert!(rt.last_overload().is_none());
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn last_overload(&self) -> Option<Overload> {
        self.wiring.last_overload()
    }

    /// Whether the command cycle is still running (it stops when a command fails).
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert!(rt.command_cycle_running());
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn command_cycle_running(&self) -> bool {
        self.wiring.command_cycle_running()
    }

    /// Starts the command cycle again after a command failure stopped it (the recovery the
    /// command layer leaves to the host: a robot program would have crashed and been restarted).
    /// The failed command is gone, its children were cancelled; other scheduled commands,
    /// default commands and trigger bindings are polled again from the next command period.
    /// Returns `Ok(true)` when it restarted, `Ok(false)` when there was nothing to restart (the
    /// cycle is running, or the runtime was built [without
    /// commands](crate::RuntimeBuilder::without_commands)).
    ///
    /// # Errors
    ///
    /// [`RuntimeError::Kernel`] if the kernel refuses the job (it was destroyed by shutdown).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::commands::Command;
    /// use tickstep::kernel::ManualClock;
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// let flaky = Command::no_requirements()
    ///     .executing_fallible(|_co| async { Err("sensor unplugged".into()) })
    ///     .named("read_sensor");
    /// rt.commands().schedule(&flaky);
    /// assert!(rt.run_for(Duration::from_secs(1)).is_err()); // the failure is returned...
    /// assert!(!rt.command_cycle_running());
    /// assert!(rt.restart_commands()?); // ...and the host decides to carry on
    /// assert!(rt.command_cycle_running());
    /// rt.run_for(Duration::from_secs(1))?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn restart_commands(&self) -> Result<bool, RuntimeError> {
        self.wiring.restart_command_cycle()
    }

    /// Runs frames until `duration` has passed on the runtime's clock. Idle stretches are slept
    /// through (with a manual clock: skipped at once).
    ///
    /// The end is inclusive: every deadline at or before `now + duration` — a kernel timer, a
    /// schedule's firing, one due exactly at the end included — has run when this returns, as
    /// with a manual clock advanced to the end and stepped. The call ends on a frame, at most
    /// one frame past the end when frames do not land on it (60 fps frames are 16.67 ms).
    ///
    /// # Errors
    ///
    /// [`RuntimeError::Command`] / [`RuntimeError::CommandPanicked`] when a command failed; the
    /// call returns at the end of the one-second slice in which it happened, and the command
    /// cycle has stopped.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::kernel::{clock::Clock, ManualClock};
    /// let clock = ManualClock::new();
    /// let rt = tickstep::Runtime::builder()
    ///     .manual_clock(clock.clone())
    ///     .frame_rate(50) // 20 ms frames: an hour ends on a frame boundary
    ///     .in_memory_store()
    ///     .build()?;
    /// rt.run_for(Duration::from_secs(3600))?;
    /// assert_eq!(clock.now().as_nanos(), 3_600_000_000_000);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn run_for(&self, duration: Duration) -> Result<(), RuntimeError> {
        self.before_run()?;
        let clock = self.clock();
        let end = clock.now().saturating_add(duration);
        loop {
            let now = clock.now();
            if now >= end {
                break;
            }
            self.frame_loop()
                .run_to(now.saturating_add(RUN_SLICE).min(end));
            self.after_frames()?;
        }
        // A slice may end on a frame just past the end: serve what is due by the end itself.
        self.frame_loop().run_to(end);
        self.after_frames()
    }

    /// Runs frames until `done()` is true (checked before every frame, so no frame runs once it
    /// holds: work due in the frame that made it true has run, nothing after it). With a real clock this is
    /// the service loop (`done` reads a shutdown flag); with a manual clock make sure `done`
    /// becomes true, or it runs forever.
    ///
    /// # Errors
    ///
    /// As [`Runtime::run_for`], checked after every frame.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep::kernel::{ManualClock, Priority};
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// let done = Rc::new(Cell::new(false));
    /// let d = done.clone();
    /// let _h = rt.scheduler().after(Duration::from_millis(500), move || d.set(true), Priority::Normal)?;
    /// rt.run_until(|| done.get())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_until(&self, mut done: impl FnMut() -> bool) -> Result<(), RuntimeError> {
        self.before_run()?;
        while !done() {
            self.frame_loop().run_frames(1);
            self.after_frames()?;
        }
        Ok(())
    }

    /// Runs exactly one frame (or sleeps through one idle frame). For tests.
    ///
    /// # Errors
    ///
    /// As [`Runtime::run_for`].
    ///
    /// ```
    /// use tickstep::kernel::ManualClock;
    /// let rt = tickstep::Runtime::builder().manual_clock(ManualClock::new()).in_memory_store().build()?;
    /// rt.step_frame()?; // with a system clock this waits for the frame's end, as a game loop does
    /// assert_eq!(rt.frame_loop().frame_count(), 1);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn step_frame(&self) -> Result<(), RuntimeError> {
        self.before_run()?;
        self.frame_loop().run_frames(1);
        self.after_frames()
    }

    /// A snapshot of the runtime's counters.
    ///
    /// ```
    /// let rt = tickstep::Runtime::builder().in_memory_store().build()?;
    /// assert_eq!(rt.stats().command_cycles, 0);
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn stats(&self) -> RuntimeStats {
        let c = &self.wiring.counters;
        let core = self.wiring.core.counts();
        RuntimeStats {
            frames: self.frame_loop().frame_count(),
            frames_run: self.frame_loop().frames_run(),
            kernel: self.scheduler().stats(),
            command_cycles: c.command_cycles.get(),
            commands_running: self.commands().running().len(),
            schedule_ticks: core.schedule_ticks,
            schedules_live: self.schedules().live_count(),
            firings_started: core.firings_started,
            firings_not_started: core.firings_not_started,
            firings_returned: core.firings_returned,
            firings_faulted: core.firings_faulted,
            store_errors: core.store_errors,
            task_panics: c.task_panics.get(),
            overloads: c.overloads.get(),
        }
    }

    /// The host core's counters alone: what [`Runtime::stats`] reads without the passes over
    /// commands and schedules, for a reader that wants them every second (the dashboard's
    /// minutes, docs/serve.md §13.18).
    #[cfg(feature = "dashboard")]
    pub(crate) fn host_counts(&self) -> crate::host::HostCounts {
        self.wiring.core.counts()
    }

    /// Stops everything and writes the store's last cadence updates, returning a failure
    /// instead of only logging it (as a plain drop would).
    ///
    /// # Errors
    ///
    /// [`RuntimeError::Host`] with [`HostError::Store`](crate::host::HostError::Store) when the
    /// final write fails.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let rt = tickstep::Runtime::builder().store_path(dir.path().join("t.db")).build()?;
    /// rt.shutdown()?;
    /// # Ok::<(), tickstep::RuntimeError>(())
    /// ```
    pub fn shutdown(self) -> Result<(), RuntimeError> {
        self.stop_tasks();
        let result = self.schedules().flush();
        result.map_err(|source| {
            RuntimeError::Host(HostError::Store {
                path: self.store_path.clone().unwrap_or_default(),
                source,
            })
        })
    }

    /// Has `wake` called, from the store's thread, whenever the store leaves work for the
    /// engine's next tick (docs/runtime.md §6.3): how a host that waits on something other than
    /// the frame loop's own sleep (the tokio driver) runs a frame for it.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn on_store_news(&self, wake: tickstep_schedules::StoreWaker) {
        self.wiring.core.on_store_news(wake);
    }

    /// A failure left over from before, and a wake for schedules created from outside any task.
    fn before_run(&self) -> Result<(), RuntimeError> {
        self.wiring.core.rearm();
        self.after_frames()
    }

    fn after_frames(&self) -> Result<(), RuntimeError> {
        self.wiring.take_failure().map_or(Ok(()), Err)
    }

    /// Drops every queued task (firings in progress, the command cycle, the schedules wake) and
    /// every verb, so nothing runs during teardown and nothing keeps the engine alive.
    fn stop_tasks(&self) {
        self.kernel.scheduler().destroy();
        self.wiring.core.clear_verbs();
    }
}

impl Drop for Runtime {
    /// A clean stop: tasks and verbs are dropped first, then the engine's last handle, which
    /// writes its pending cadence updates.
    fn drop(&mut self) {
        self.stop_tasks();
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("kernel", &self.kernel)
            .field("store_path", &self.store_path)
            .finish_non_exhaustive()
    }
}
