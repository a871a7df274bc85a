//! `Kernel`: the main scheduler on Heartbeat, cached phase schedulers, overload diagnostics.

use std::cell::{Cell, RefCell};

use std::time::Duration;

use crate::clock::Clock;
use crate::{
    FrameLoop, FramePhase, FrameScheduler, HotTask, Priority, Role, ScheduleError, SchedulerConfig,
    StepWindow, TaskHandle,
};

/// Length of one diagnostics window.
///
/// ```
/// assert_eq!(tickstep_kernel::DIAGNOSTICS_WINDOW.as_secs(), 1);
/// ```
pub const DIAGNOSTICS_WINDOW: Duration = Duration::from_secs(1);
/// Consecutive windows with deferred work before an [`Overload`] is published.
///
/// ```
/// assert_eq!(tickstep_kernel::OVERLOAD_WINDOWS, 3);
/// ```
pub const OVERLOAD_WINDOWS: u32 = 3;

/// Boot options for [`Kernel::boot`].
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::KernelConfig;
/// let cfg = KernelConfig::default().fps(30).budget(Duration::from_millis(2));
/// assert_eq!(cfg.frame_rate(), 30);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KernelConfig {
    fps: u32,
    /// The main scheduler's settings, held rather than repeated: each knob below is its setter
    /// (one setter per knob, docs/kernel.md §4.1); the role is the one `boot` is given.
    scheduler: SchedulerConfig,
}

impl Default for KernelConfig {
    /// 60 fps, role-default budgets, profiling on, staggering off.
    fn default() -> Self {
        KernelConfig {
            fps: 60,
            scheduler: SchedulerConfig::default(),
        }
    }
}

impl KernelConfig {
    /// Frame rate of the kernel's loop.
    ///
    /// ```
    /// assert_eq!(tickstep_kernel::KernelConfig::default().fps(20).frame_rate(), 20);
    /// ```
    #[must_use]
    pub fn fps(mut self, fps: u32) -> Self {
        self.fps = fps;
        self
    }

    /// The main scheduler's `BudgetSeconds` (fixed slice, or floor with a frame target):
    /// [`SchedulerConfig::budget`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _cfg = tickstep_kernel::KernelConfig::default().budget(Duration::from_millis(3));
    /// ```
    #[must_use]
    pub fn budget(self, budget: Duration) -> Self {
        self.with(|s| s.budget(budget))
    }

    /// The main scheduler's frame-aware target: [`SchedulerConfig::frame_target`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _cfg = tickstep_kernel::KernelConfig::default().frame_target(Duration::from_millis(30));
    /// ```
    #[must_use]
    pub fn frame_target(self, target: Duration) -> Self {
        self.with(|s| s.frame_target(target))
    }

    /// Whether schedulers start with the hot-task profiler on. **Default: on** (as the spec's
    /// `ProfileTasks`), for every role. Its cost per task is one array update (the budget check's
    /// clock read doubles as the task's end time); on an overloaded step, the deferral
    /// attribution looks at no more than 8 queued tasks, inside a step's budget. A
    /// lean boot turns it off: no origin lookups, while the aggregate step statistics stay.
    ///
    /// ```
    /// let _cfg = tickstep_kernel::KernelConfig::default().profile_tasks(false);
    /// ```
    #[must_use]
    pub fn profile_tasks(self, on: bool) -> Self {
        self.with(|s| s.profile_tasks(on))
    }

    /// Whether schedulers stagger recurring jobs: [`SchedulerConfig::stagger_recurring`].
    ///
    /// ```
    /// let _cfg = tickstep_kernel::KernelConfig::default().stagger_recurring(true);
    /// ```
    #[must_use]
    pub fn stagger_recurring(self, on: bool) -> Self {
        self.with(|s| s.stagger_recurring(on))
    }

    /// The configured frame rate.
    ///
    /// ```
    /// assert_eq!(tickstep_kernel::KernelConfig::default().frame_rate(), 60);
    /// ```
    pub fn frame_rate(&self) -> u32 {
        self.fps
    }

    /// One knob of the held scheduler settings changed.
    fn with(mut self, set: impl FnOnce(SchedulerConfig) -> SchedulerConfig) -> Self {
        self.scheduler = set(self.scheduler);
        self
    }
}

/// Published when deferred work showed up in [`OVERLOAD_WINDOWS`] consecutive one-second windows
/// (server only). Names the work: the hottest tasks of the last window, its longest task, and the
/// origins that did not fit.
///
/// ```
/// use tickstep_kernel::Overload;
/// fn report(o: &Overload) -> String {
///     format!("{} deferred; longest {:?} in {:?}", o.window.deferred, o.window.longest_task,
///             o.window.longest_task_origin)
/// }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Overload {
    /// Consecutive windows with deferred work.
    pub windows: u32,
    /// The last window (deferred count, step times, longest task, top deferred origins).
    pub window: StepWindow,
    /// The hottest origins of the last window, hottest first.
    pub hot_tasks: Vec<HotTask>,
}

/// The kernel: a frame loop, the main scheduler bound to Heartbeat, and one cached scheduler per
/// other phase.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, FramePhase, Priority, Role};
/// let kernel = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default());
/// let pre_sim = kernel.phase_scheduler(FramePhase::PreSimulation)?;
/// pre_sim.schedule(|| {}, Priority::Normal);
/// kernel.scheduler().schedule(|| {}, Priority::Normal);
/// kernel.frame_loop().run_frames(1);
/// assert_eq!(kernel.frame_loop().steps_taken(), 2);
/// # Ok::<(), tickstep_kernel::ScheduleError>(())
/// ```
pub struct Kernel {
    role: Role,
    frame_loop: FrameLoop,
    main: FrameScheduler,
    config: KernelConfig,
    /// Creates schedulers on the kernel's clock (keeps the clock's concrete type, so its reads
    /// stay statically dispatched).
    new_scheduler: Box<dyn Fn(SchedulerConfig) -> FrameScheduler>,
    phases: RefCell<Vec<FrameScheduler>>,
    diagnostics: RefCell<Option<TaskHandle>>,
}

impl Kernel {
    /// Boots a kernel: a frame loop at the configured rate and the main scheduler bound to its
    /// Heartbeat, with a `tracing` warning connected to task crashes.
    ///
    /// # Panics
    ///
    /// When the configured frame rate is 0 or above 1000.
    ///
    /// ```
    /// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, FramePhase, Role};
    /// let kernel = Kernel::boot(ManualClock::new(), Role::Client, KernelConfig::default());
    /// assert_eq!(kernel.scheduler().phase(), FramePhase::Heartbeat);
    /// ```
    #[track_caller]
    pub fn boot<C: Clock + Clone + 'static>(clock: C, role: Role, config: KernelConfig) -> Kernel {
        let frame_loop = FrameLoop::new(clock.clone(), role, config.fps);
        let new_scheduler = Box::new(move |config| FrameScheduler::new(clock.clone(), config));
        let main = new_scheduler(config.scheduler.clone().for_kernel_role(role));
        main.bind(&frame_loop)
            .expect("every role runs the Heartbeat phase");
        main.on_error(|err| tracing::warn!(target: "tickstep_kernel", "[tickstep] {err}"));
        Kernel {
            role,
            frame_loop,
            main,
            config,
            new_scheduler,
            phases: RefCell::new(Vec::new()),
            diagnostics: RefCell::new(None),
        }
    }

    /// The main scheduler (Heartbeat).
    ///
    /// ```
    /// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, Role};
    /// let kernel = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default());
    /// assert!(kernel.scheduler().is_bound());
    /// ```
    pub fn scheduler(&self) -> &FrameScheduler {
        &self.main
    }

    /// The kernel's frame loop.
    ///
    /// ```
    /// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, Role};
    /// let kernel = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default().fps(30));
    /// assert_eq!(kernel.frame_loop().period().as_millis(), 33);
    /// ```
    pub fn frame_loop(&self) -> &FrameLoop {
        &self.frame_loop
    }

    /// The kernel's role.
    ///
    /// ```
    /// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, Role};
    /// assert_eq!(Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default()).role(), Role::Server);
    /// ```
    pub fn role(&self) -> Role {
        self.role
    }

    /// The scheduler for `phase`, created and bound on first use and cached after. Heartbeat is
    /// the main scheduler. Other phase schedulers run a fixed budget equal to the main scheduler's
    /// floor, because a frame-aware phase scheduler would claim slack the Heartbeat scheduler
    /// already spent.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::PreRenderOnServer`] (`PreRender schedulers are client-only`) for
    /// PreRender on a server.
    ///
    /// ```
    /// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, FramePhase, Role};
    /// let kernel = Kernel::boot(ManualClock::new(), Role::Server, KernelConfig::default());
    /// let a = kernel.phase_scheduler(FramePhase::PostSimulation)?;
    /// assert!(a.same_as(&kernel.phase_scheduler(FramePhase::PostSimulation)?));
    /// assert_eq!(
    ///     kernel.phase_scheduler(FramePhase::PreRender).unwrap_err().to_string(),
    ///     "PreRender schedulers are client-only"
    /// );
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    pub fn phase_scheduler(&self, phase: FramePhase) -> Result<FrameScheduler, ScheduleError> {
        if phase == FramePhase::Heartbeat {
            return Ok(self.main.clone());
        }
        if !self.role.runs(phase) {
            return Err(ScheduleError::PreRenderOnServer);
        }
        if let Some(cached) = self.phases.borrow().iter().find(|s| s.phase() == phase) {
            return Ok(cached.clone());
        }
        let config = SchedulerConfig::for_role(self.role)
            .budget(self.main.budget_mode().floor())
            .phase(phase)
            .profile_tasks(self.config.scheduler.profiles_tasks())
            .stagger_recurring(self.config.scheduler.staggers_recurring());
        let scheduler = (self.new_scheduler)(config);
        scheduler.bind(&self.frame_loop)?;
        scheduler.on_error(move |err| {
            tracing::warn!(target: "tickstep_kernel", "[tickstep {phase:?}] {err}");
        });
        self.phases.borrow_mut().push(scheduler.clone());
        Ok(scheduler)
    }

    /// Turns on overload diagnostics (server only): profiling on for the main scheduler, and a
    /// Kernel-priority job every second that drains the step window and, after deferred work in
    /// three consecutive windows, calls `on_overload` and logs a `tracing` warning. The streak
    /// then starts over, so sustained overload reports every three seconds. Calling it again
    /// replaces the callback.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::DiagnosticsServerOnly`] on a client.
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc, time::Duration};
    /// use tickstep_kernel::{Kernel, KernelConfig, ManualClock, Priority, Role};
    /// let clock = ManualClock::new();
    /// let kernel = Kernel::boot(clock.clone(), Role::Server, KernelConfig::default());
    /// let overloads = Rc::new(Cell::new(0));
    /// let o = overloads.clone();
    /// kernel.enable_diagnostics(move |_| o.set(o.get() + 1))?;
    /// // A Low job that always leaves a backlog behind it.
    /// let (sched, c) = (kernel.scheduler().clone(), clock.clone());
    /// let _flood = kernel.scheduler().every(Duration::ZERO, move || {
    ///     c.advance(Duration::from_millis(20));
    ///     sched.schedule(|| {}, Priority::Background);
    /// }, Priority::Low)?;
    /// kernel.frame_loop().run_for(Duration::from_secs(4));
    /// assert_eq!(overloads.get(), 1);
    /// # Ok::<(), tickstep_kernel::ScheduleError>(())
    /// ```
    pub fn enable_diagnostics(
        &self,
        on_overload: impl Fn(&Overload) + 'static,
    ) -> Result<(), ScheduleError> {
        if self.role != Role::Server {
            return Err(ScheduleError::DiagnosticsServerOnly { role: self.role });
        }
        if let Some(previous) = self.diagnostics.borrow_mut().take() {
            previous.cancel();
        }
        self.main.set_task_profiling(true);
        self.main.reset_profile();
        let _ = self.main.take_step_window();
        let scheduler = self.main.downgrade();
        let streak = Cell::new(0u32);
        let handle = self.main.with_origin("Kernel diagnostics").every(
            DIAGNOSTICS_WINDOW,
            move || {
                let Some(sched) = scheduler.upgrade() else {
                    return;
                };
                let window = sched.take_step_window();
                let hot_tasks = sched.top_tasks(5);
                sched.reset_profile();
                if window.deferred == 0 {
                    streak.set(0);
                    return;
                }
                streak.set(streak.get() + 1);
                if streak.get() < OVERLOAD_WINDOWS {
                    return;
                }
                let overload = Overload {
                    windows: streak.replace(0),
                    window,
                    hot_tasks,
                };
                tracing::warn!(
                    target: "tickstep_kernel",
                    deferred = overload.window.deferred,
                    longest_task = ?overload.window.longest_task,
                    longest_task_origin = ?overload.window.longest_task_origin,
                    top_deferred = %overload.window.top_deferred_summary(),
                    "Kernel.Overload: deferred work in {} consecutive windows",
                    overload.windows
                );
                crate::metrics::overload();
                on_overload(&overload);
            },
            Priority::Kernel,
        )?;
        *self.diagnostics.borrow_mut() = Some(handle);
        Ok(())
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("role", &self.role)
            .field("frame_loop", &self.frame_loop)
            .field("main", &self.main)
            .finish_non_exhaustive()
    }
}
