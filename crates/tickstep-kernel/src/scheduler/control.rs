//! The handle's own methods: construction, stepping (whose drain is `drain.rs`), destroy,
//! statistics, profiler, error hooks. Binding to a frame loop is `FrameLoop`'s side
//! (`frame_loop.rs`), and every call that creates work is in `submit.rs`.

use std::any::Any;
use std::cell::RefCell;
use std::panic::Location;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, Instant};
use crate::clock_dispatch::AnyClock;
use crate::{
    BudgetMode, FramePhase, FrameScheduler, FrameStats, HotTask, QueueDepths, Role,
    SchedulerConfig, Stats, StepWindow, TaskError,
};

use super::budget::FrameSource;
use super::places::Core;
use super::wake::WakeQueue;
use super::{Shared, WeakScheduler, panics};

impl FrameScheduler {
    /// A new, unbound scheduler reading time from `clock`.
    ///
    /// It runs only when [`FrameScheduler::step`] is called, until [`FrameScheduler::bind`] attaches it to a
    /// [`FrameLoop`](crate::FrameLoop).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::client());
    /// assert!(!sched.is_bound());
    /// ```
    #[allow(clippy::needless_pass_by_value)] // the config is consumed by value in spirit: a builder's end
    pub fn new(clock: impl Clock + 'static, config: SchedulerConfig) -> Self {
        panics::install_hook();
        FrameScheduler {
            shared: Rc::new(Shared {
                clock: AnyClock::new(clock),
                core: RefCell::new(Core::new(&config)),
                wakes: Arc::new(WakeQueue::default()),
                hooks: RefCell::new(Vec::new()),
                pools: RefCell::default(),
            }),
        }
    }

    pub(crate) fn downgrade(&self) -> WeakScheduler {
        WeakScheduler(Rc::downgrade(&self.shared))
    }

    /// Whether two handles drive the same scheduler.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let a = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert!(a.same_as(&a.clone()));
    /// ```
    pub fn same_as(&self, other: &FrameScheduler) -> bool {
        Rc::ptr_eq(&self.shared, &other.shared)
    }

    /// Runs one step under the configured budget mode.
    ///
    /// A step after [`FrameScheduler::destroy`] does nothing, and so does a step called from inside a
    /// running task of the same scheduler (the running step already owns the queues).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.schedule(|| {}, Priority::Kernel);
    /// sched.step();
    /// assert_eq!(sched.stats().steps, 1);
    /// ```
    pub fn step(&self) {
        self.shared.run_step(None);
    }

    /// Runs one step under an explicit budget, which always wins over the mode. `Duration::ZERO`
    /// is the starvation test: due timers and every(0) jobs still move into their queues, but only
    /// Kernel-priority work runs.
    ///
    /// A host passes its own budget when it knows its slack each frame better than the
    /// frame-aware rule, whose StepEma correction zig-zags for a few dozen frames after a
    /// sustained load arrives (see the crate docs, "The budget").
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.schedule(|| {}, Priority::Kernel);
    /// sched.schedule(|| {}, Priority::High);
    /// sched.step_with_budget(Duration::ZERO);
    /// assert_eq!((sched.stats().tasks_run, sched.stats().tasks_deferred), (1, 1));
    /// ```
    pub fn step_with_budget(&self, budget: Duration) {
        self.shared.run_step(Some(budget));
    }

    /// Takes the opaque link to a frame loop out of a bound scheduler and stops its attachment
    /// (the frame loop's `unbind` unregisters it from the loop the link points at).
    pub(crate) fn take_loop_link(&self) -> Option<Weak<dyn Any>> {
        let mut core = self.shared.core.borrow_mut();
        let bound = core.attach.bound.take();
        core.attach.attached = false;
        core.attach.wake_at = None;
        bound
    }

    /// Links the scheduler to a frame loop (opaque here) whose frames feed its frame-aware
    /// budget, and attaches it if it has runnable work.
    pub(crate) fn set_loop_link(&self, link: Weak<dyn Any>, frames: Rc<dyn FrameStats>) {
        let mut core = self.shared.core.borrow_mut();
        core.frame_source = Some(FrameSource::new(frames));
        core.attach.bound = Some(link);
        let now = self.shared.clock.now();
        core.refresh_attachment(now, self.shared.wakes.is_pending());
    }

    /// The scheduler's phase, asserting it is not destroyed (binding a destroyed one is a bug).
    #[track_caller]
    pub(crate) fn live_phase(&self) -> FramePhase {
        let core = self.shared.core.borrow();
        assert!(!core.destroyed, "scheduler is destroyed");
        core.phase
    }

    /// Unbinds, drops every error handler, cancels every handle it owns and clears every queue.
    /// Later `schedule`, `after`, `every`, `spawn` and `bind` calls panic with
    /// `scheduler is destroyed`; `step` does nothing. Safe to call from inside a task: the running
    /// step stops after that task.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let h = sched.schedule(|| unreachable!(), Priority::Normal);
    /// sched.destroy();
    /// sched.step();
    /// assert!(h.is_cancelled() && sched.is_destroyed());
    /// ```
    pub fn destroy(&self) {
        self.unbind();
        let bodies = self.shared.core.borrow_mut().destroy();
        let hooks = std::mem::take(&mut *self.shared.hooks.borrow_mut());
        // User destructors run with nothing borrowed.
        drop(bodies);
        drop(hooks);
    }

    /// Whether [`FrameScheduler::destroy`] was called.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert!(!sched.is_destroyed());
    /// ```
    pub fn is_destroyed(&self) -> bool {
        self.shared.core.borrow().destroyed
    }

    /// Whether the scheduler is bound to a frame loop.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// assert!(!FrameScheduler::new(ManualClock::new(), SchedulerConfig::server()).is_bound());
    /// ```
    pub fn is_bound(&self) -> bool {
        self.shared.core.borrow().attach.bound.is_some()
    }

    /// Whether a bound scheduler is currently attached (stepped every frame). An idle one is not.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{FrameLoop, ManualClock, Priority, Role, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    /// let sched = FrameScheduler::new(clock, SchedulerConfig::server());
    /// sched.bind(&fl).unwrap();
    /// assert!(!sched.is_attached());
    /// let _t = sched.after(Duration::from_millis(10), || {}, Priority::Low).unwrap();
    /// assert!(sched.is_attached()); // a deadline within 34 ms
    /// ```
    pub fn is_attached(&self) -> bool {
        self.shared.core.borrow().attach.attached
    }

    /// When a detached scheduler will reattach: its earliest deadline minus
    /// [`WAKE_WINDOW`](crate::WAKE_WINDOW). `None` when attached, unbound, or without timers.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{FrameLoop, Instant, ManualClock, Priority, Role, FrameScheduler, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    /// let sched = FrameScheduler::new(clock, SchedulerConfig::server());
    /// sched.bind(&fl).unwrap();
    /// let _t = sched.after(Duration::from_secs(1), || {}, Priority::Low).unwrap();
    /// assert_eq!(sched.wake_at(), Some(Instant::from_nanos(966_000_000)));
    /// ```
    pub fn wake_at(&self) -> Option<Instant> {
        self.shared.core.borrow().attach.wake_at
    }

    /// The earliest pending deadline on the heap.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{Instant, ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert_eq!(sched.next_deadline(), None);
    /// let _t = sched.after(Duration::from_nanos(50), || {}, Priority::Low).unwrap();
    /// assert_eq!(sched.next_deadline(), Some(Instant::from_nanos(50)));
    /// ```
    pub fn next_deadline(&self) -> Option<Instant> {
        self.shared.core.borrow().timers.peek_deadline()
    }

    /// Whether the next step has something to do: a queued task, an every(0) job, a woken
    /// future, or a deadline at most 34 ms away.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert!(!sched.has_runnable_work());
    /// sched.schedule(|| {}, Priority::Low);
    /// assert!(sched.has_runnable_work());
    /// ```
    pub fn has_runnable_work(&self) -> bool {
        self.has_runnable_work_at(self.shared.clock.now())
    }

    /// [`FrameScheduler::has_runnable_work`] as of `now`, a reading of this scheduler's clock the
    /// caller already has: a host that reads the clock once per frame asks without a second
    /// read (the Bevy plugin's idle frame does).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::clock::{Clock, Instant};
    /// use tickstep_kernel::{ManualClock, FrameScheduler, Priority, SchedulerConfig};
    /// let clock = ManualClock::new();
    /// let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    /// let _t = sched.after(Duration::from_secs(1), || {}, Priority::Low).unwrap();
    /// assert!(!sched.has_runnable_work_at(clock.now()));
    /// assert!(sched.has_runnable_work_at(Instant::from_nanos(1_000_000_000)));
    /// ```
    pub fn has_runnable_work_at(&self, now: Instant) -> bool {
        self.shared
            .core
            .borrow()
            .has_runnable_work(now, self.shared.wakes.is_pending())
    }

    /// Connects a handler for task panics. Every handler gets every [`TaskError`]; with none
    /// connected, panics are logged as `tracing` errors. A handler may use the scheduler.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let crashes = Rc::new(Cell::new(0));
    /// let c = crashes.clone();
    /// sched.on_error(move |_| c.set(c.get() + 1));
    /// sched.schedule(|| panic!("one"), Priority::High);
    /// sched.schedule(|| {}, Priority::High);
    /// sched.step();
    /// assert_eq!((crashes.get(), sched.stats().tasks_run), (1, 2));
    /// ```
    pub fn on_error(&self, handler: impl Fn(&TaskError) + 'static) {
        if self.is_destroyed() {
            return;
        }
        self.shared.hooks.borrow_mut().push(Rc::new(handler));
    }

    /// A snapshot of the statistics (updated at the end of every step).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert_eq!(sched.stats().steps, 0);
    /// ```
    pub fn stats(&self) -> Stats {
        // What the statistics report includes the last step's pending sampled attribution.
        if let Ok(mut core) = self.shared.core.try_borrow_mut() {
            core.attribute_pending();
        }
        let core = self.shared.core.borrow();
        let c = &core.counters;
        let (window_task_max, window_task_key) = core.profiler.window_task();
        Stats {
            last_step: c.last_step,
            last_budget: c.last_budget,
            last_frame_busy: c.last_frame.heartbeat,
            last_physics: c.last_frame.physics,
            tasks_run: c.tasks_run,
            tasks_deferred: c.tasks_deferred,
            pending: std::array::from_fn(|q| core.queues.live(q)),
            attribution_visits: c.attribution_visits,
            step_ema: core.budget.ema(),
            steps: c.steps,
            window_time: c.window_time,
            window_steps: c.window_steps,
            window_max: c.window_max,
            window_deferred: c.window_deferred,
            window_task_max,
            window_task_key,
            window_deferred_keys: core.profiler.window_deferred(usize::MAX),
        }
    }

    /// Drains the diagnostics window: total and longest step, step count, deferred count,
    /// longest task and its origin, and the five most deferred origins.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.step();
    /// assert_eq!(sched.take_step_window().steps, 1);
    /// ```
    pub fn take_step_window(&self) -> StepWindow {
        self.shared.core.borrow_mut().take_window()
    }

    /// Live tasks per queue plus pending `every()`/`after()` entries (debugging aid).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.schedule(|| {}, Priority::Kernel);
    /// assert_eq!(sched.queue_depths().queues[0], 1);
    /// ```
    pub fn queue_depths(&self) -> QueueDepths {
        let core = self.shared.core.borrow();
        QueueDepths {
            queues: std::array::from_fn(|q| core.queues.live(q)),
            timers: core.timers.len() + core.frame.len(),
        }
    }

    /// The `count` hottest origins by total time since the last [`FrameScheduler::reset_profile`].
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.schedule(|| {}, Priority::Kernel);
    /// sched.step();
    /// assert_eq!(sched.top_tasks(5)[0].calls, 1);
    /// ```
    pub fn top_tasks(&self, count: usize) -> Vec<HotTask> {
        self.shared.core.borrow().profiler.top(count)
    }

    /// Clears the profiler (pair with [`FrameScheduler::top_tasks`] over a fixed window).
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.schedule(|| {}, Priority::Kernel);
    /// sched.step();
    /// sched.reset_profile();
    /// assert!(sched.top_tasks(5).is_empty());
    /// ```
    pub fn reset_profile(&self) {
        self.shared.core.borrow_mut().profiler.reset();
    }

    /// Turns per-task profiling on or off at runtime. Off clears the profile and the window's
    /// task and deferral attribution; it then costs no clock read per task beyond the budget
    /// check, no origin lookup and no scan of the deferred backlog. Aggregate stats stay.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.set_task_profiling(false);
    /// sched.schedule(|| {}, Priority::Kernel);
    /// sched.step();
    /// assert!(sched.top_tasks(5).is_empty());
    /// assert_eq!(sched.stats().tasks_run, 1);
    /// ```
    pub fn set_task_profiling(&self, on: bool) {
        let mut core = self.shared.core.borrow_mut();
        if !on {
            core.profiler.reset();
            core.profiler.clear_window();
            core.counters.pending_attribution = None;
        }
        core.profiling = on;
    }

    /// Whether per-task profiling is on.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FrameScheduler, SchedulerConfig};
    /// assert!(FrameScheduler::new(ManualClock::new(), SchedulerConfig::server()).profiles_tasks());
    /// ```
    pub fn profiles_tasks(&self) -> bool {
        self.shared.core.borrow().profiling
    }

    /// Names every task created at `location` with `label` in the profiler and error reports
    /// (docs/kernel.md §2.4; Rust functions are identified by their call site). For a
    /// per-task label use [`FrameScheduler::with_origin`].
    ///
    /// ```
    /// use std::panic::Location;
    /// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
    ///
    /// #[track_caller]
    /// fn queue_sweep(sched: &FrameScheduler) -> &'static Location<'static> {
    ///     let _ = sched.schedule(|| {}, Priority::Kernel);
    ///     Location::caller() // the same site the task was attributed to
    /// }
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// let site = queue_sweep(&sched);
    /// sched.set_task_origin(site, "World sweep");
    /// sched.step();
    /// assert_eq!(sched.top_tasks(1)[0].key, "World sweep");
    /// ```
    pub fn set_task_origin(&self, location: &'static Location<'static>, label: &str) {
        self.shared
            .core
            .borrow_mut()
            .profiler
            .rename(location, label);
    }

    /// Installs the engine frame-stats source the frame-aware budget reads (binding to a
    /// [`FrameLoop`](crate::FrameLoop) installs the loop's own). Whether it reports seconds or legacy milliseconds
    /// is read once, here.
    ///
    /// ```
    /// use std::{rc::Rc, time::Duration};
    /// use tickstep_kernel::{FrameStats, ManualClock, FrameScheduler, SchedulerConfig};
    /// struct Busy;
    /// impl FrameStats for Busy { fn heartbeat_time(&self) -> f64 { 0.004 } }
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// sched.set_frame_stats(Rc::new(Busy));
    /// sched.step();
    /// assert_eq!(sched.stats().last_frame_busy, Duration::from_millis(4));
    /// ```
    pub fn set_frame_stats(&self, source: Rc<dyn FrameStats>) {
        self.shared.core.borrow_mut().frame_source = Some(FrameSource::new(source));
    }

    /// The budget rule of undriven steps.
    ///
    /// ```
    /// use tickstep_kernel::{BudgetMode, ManualClock, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::client());
    /// assert!(matches!(sched.budget_mode(), BudgetMode::Fixed(_)));
    /// ```
    pub fn budget_mode(&self) -> BudgetMode {
        self.shared.core.borrow().budget.mode
    }

    /// The phase [`FrameScheduler::bind`] attaches to.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, FramePhase, FrameScheduler, SchedulerConfig};
    /// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
    /// assert_eq!(sched.phase(), FramePhase::Heartbeat);
    /// ```
    pub fn phase(&self) -> FramePhase {
        self.shared.core.borrow().phase
    }

    /// The role the scheduler was configured for.
    ///
    /// ```
    /// use tickstep_kernel::{ManualClock, Role, FrameScheduler, SchedulerConfig};
    /// assert_eq!(FrameScheduler::new(ManualClock::new(), SchedulerConfig::client()).role(), Role::Client);
    /// ```
    pub fn role(&self) -> Role {
        self.shared.core.borrow().role
    }

    /// The scheduler's current time on its clock.
    ///
    /// ```
    /// use tickstep_kernel::{Instant, ManualClock, FrameScheduler, SchedulerConfig};
    /// assert_eq!(FrameScheduler::new(ManualClock::new(), SchedulerConfig::server()).now(), Instant::ZERO);
    /// ```
    pub fn now(&self) -> Instant {
        self.shared.clock.now()
    }

    /// Steps the loop would take for a bound scheduler: attach if its wake is due (the frame loop
    /// calls this at the start of each frame). Returns whether it is attached.
    pub(crate) fn poll_attachment(&self, now: Instant) -> bool {
        let mut core = self.shared.core.borrow_mut();
        if !core.attach.attached {
            core.refresh_attachment(now, self.shared.wakes.is_pending());
        }
        core.attach.attached
    }
}
