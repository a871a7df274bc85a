//! What a scheduler reports about itself: step statistics, the diagnostics window, queue depths
//! and the hot-task profile.

use std::time::Duration;

/// A snapshot of a scheduler's statistics ([`FrameScheduler::stats`](crate::FrameScheduler::stats)), updated
/// at the end of every step. The fields are those of docs/kernel.md §11.1.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// sched.schedule(|| {}, Priority::Normal);
/// sched.step_with_budget(Duration::from_secs(1));
/// let stats = sched.stats();
/// assert_eq!((stats.tasks_run, stats.steps, stats.tasks_deferred), (1, 1, 0));
/// assert_eq!(stats.last_budget, Duration::from_secs(1));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Wall time of the last completed step (poll time only for async tasks).
    pub last_step: Duration,
    /// The budget the last step ran under.
    pub last_budget: Duration,
    /// The engine's heartbeat time read at the last step's start.
    pub last_frame_busy: Duration,
    /// The engine's physics time read at the last step's start.
    pub last_physics: Duration,
    /// Tasks run since creation (each poll of a future counts as one run).
    pub tasks_run: u64,
    /// Distinct tasks pushed past the deadline in the last completed step (each counted once).
    /// Mid-step reads see the previous step's value, so overload never reads as zero. Compare
    /// [`Stats::window_deferred`], which sums this over steps, and [`Stats::pending`], the
    /// distinct tasks waiting now.
    pub tasks_deferred: u64,
    /// Distinct live tasks waiting in each priority queue now, Kernel first: the backlog, each
    /// task counted once however many steps it has waited.
    pub pending: [usize; 5],
    /// Queued entries the last step's deferral attribution looked at: every deferred task up to
    /// 8, then 8 evenly spaced samples, whatever the backlog (0 with the profiler off or
    /// nothing deferred). The attribution's cost is bounded by this; the sampled one is made at
    /// the next step's start, inside its budget, or by the first read of the statistics.
    pub attribution_visits: u64,
    /// Smoothed step cost (exponential average, alpha 0.1): the frame-aware correction term.
    pub step_ema: Duration,
    /// Steps completed since creation.
    pub steps: u64,
    /// Total step time accumulated in the current diagnostics window.
    pub window_time: Duration,
    /// Steps in the current window.
    pub window_steps: u64,
    /// Longest step in the current window.
    pub window_max: Duration,
    /// Deferrals summed over the window's steps: a task that waits through `n` steps counts `n`
    /// times (task-steps, a measure of how long the backlog waited), so 5,000 tasks drained over
    /// 15 steps may read 40,000. For distinct tasks, read [`Stats::pending`].
    pub window_deferred: u64,
    /// Longest single task in the window (profiling only).
    pub window_task_max: Duration,
    /// Origin of that task (profiling only).
    pub window_task_key: Option<String>,
    /// Deferrals per origin in the window (task-steps, as [`Stats::window_deferred`]), most
    /// first (profiling only). Exact while a step defers at most 8 tasks; beyond that an
    /// estimate from 8 evenly spaced samples per step whose counts sum to the exact total.
    pub window_deferred_keys: Vec<(String, u64)>,
}

/// One drained diagnostics window ([`FrameScheduler::take_step_window`](crate::FrameScheduler::take_step_window)).
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// sched.schedule(|| {}, Priority::Normal);
/// sched.step_with_budget(Duration::ZERO);
/// let window = sched.take_step_window();
/// assert_eq!((window.steps, window.deferred), (1, 1));
/// assert_eq!(sched.take_step_window().steps, 0); // drained
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct StepWindow {
    /// Total step time.
    pub total_time: Duration,
    /// Number of steps.
    pub steps: u64,
    /// Longest step.
    pub longest_step: Duration,
    /// Deferrals summed over the steps (task-steps: a task waiting through `n` steps counts `n`
    /// times). For distinct tasks waiting, see [`StepWindow::pending`].
    pub deferred: u64,
    /// Longest single task (profiling only).
    pub longest_task: Duration,
    /// That task's origin (profiling only).
    pub longest_task_origin: Option<String>,
    /// The five most deferred origins with their counts, most first (profiling only; sampled
    /// beyond 8 deferred tasks a step, see [`Stats::window_deferred_keys`]).
    pub top_deferred: Vec<(String, u64)>,
    /// Distinct live tasks waiting per priority queue when the window was taken, Kernel first.
    pub pending: [usize; 5],
}

impl StepWindow {
    /// The top deferred origins as one string, `"origin x3, other x1"` (docs/kernel.md §11.2).
    ///
    /// ```
    /// let w = tickstep_kernel::StepWindow::default();
    /// assert_eq!(w.top_deferred_summary(), "");
    /// ```
    pub fn top_deferred_summary(&self) -> String {
        self.top_deferred
            .iter()
            .map(|(origin, n)| format!("{origin} x{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Pending work by place ([`FrameScheduler::queue_depths`](crate::FrameScheduler::queue_depths)).
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// sched.schedule(|| {}, Priority::Low);
/// let _t = sched.after(Duration::from_secs(1), || {}, Priority::Low).unwrap();
/// let depths = sched.queue_depths();
/// assert_eq!(depths.queues, [0, 0, 0, 1, 0]);
/// assert_eq!(depths.timers, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueDepths {
    /// Live tasks per priority queue, Kernel first.
    pub queues: [usize; 5],
    /// Pending `every()` and `after()` entries (deadline heap plus frame list).
    pub timers: usize,
}

/// One origin in the profiler readout ([`FrameScheduler::top_tasks`](crate::FrameScheduler::top_tasks)).
///
/// ```
/// use tickstep_kernel::{ManualClock, Priority, FrameScheduler, SchedulerConfig};
/// let sched = FrameScheduler::new(ManualClock::new(), SchedulerConfig::server());
/// sched.with_origin("tick").schedule(|| {}, Priority::Kernel);
/// sched.step();
/// let hot = &sched.top_tasks(1)[0];
/// assert_eq!((hot.key.as_str(), hot.calls), ("tick", 1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HotTask {
    /// The origin: a label, or the `file:line:column` that scheduled the task.
    pub key: String,
    /// Total time since the last reset.
    pub time: Duration,
    /// Runs since the last reset.
    pub calls: u64,
    /// Longest single run.
    pub max: Duration,
}
