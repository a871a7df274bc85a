//! What the kernel records through the `metrics` facade (docs/observability.md §2).
//!
//! Handles are registered once, when a scheduler or frame loop is built, so a step's updates are
//! plain calls on handles: no key hashing, no lock and no allocation on the frame's thread. With
//! no recorder installed the handles are no-ops (one branch each). The application installs its
//! recorder *before* it builds the kernel (docs/observability.md §6.1).

use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Unit};

use crate::Priority;

/// The label value of each priority queue, Kernel first (the order of the queues).
const PRIORITY_LABELS: [&str; 5] = ["kernel", "high", "normal", "low", "background"];

/// A scheduler's handles (docs/observability.md §2.1–§2.5).
pub(crate) struct SchedulerMetrics {
    steps: Counter,
    step_seconds: Histogram,
    budget_seconds: Gauge,
    deferred: Counter,
    pending: [Gauge; 5],
}

impl Default for SchedulerMetrics {
    /// Registers the handles with the recorder installed now.
    fn default() -> Self {
        debug_assert_eq!(Priority::ALL.len(), PRIORITY_LABELS.len());
        describe();
        SchedulerMetrics {
            steps: metrics::counter!("tickstep_kernel_steps_total"),
            step_seconds: metrics::histogram!("tickstep_kernel_step_seconds"),
            budget_seconds: metrics::gauge!("tickstep_kernel_budget_seconds"),
            deferred: metrics::counter!("tickstep_kernel_deferred_tasks_total"),
            pending: PRIORITY_LABELS.map(
                |priority| metrics::gauge!("tickstep_kernel_pending_tasks", "priority" => priority),
            ),
        }
    }
}

impl SchedulerMetrics {
    /// One completed step: its time, its budget, the tasks it deferred and the backlog per queue.
    pub(crate) fn step(
        &self,
        elapsed: Duration,
        budget: Duration,
        deferred: u64,
        pending: [usize; 5],
    ) {
        self.steps.increment(1);
        self.step_seconds.record(elapsed.as_secs_f64());
        self.budget_seconds.set(budget.as_secs_f64());
        if deferred > 0 {
            self.deferred.increment(deferred);
        }
        for (gauge, live) in self.pending.iter().zip(pending) {
            gauge.set(live as f64);
        }
    }
}

/// A frame loop's handles (docs/observability.md §2.6–§2.7).
pub(crate) struct LoopMetrics {
    frames: Counter,
    idle_frames: Counter,
}

impl LoopMetrics {
    pub(crate) fn register() -> Self {
        describe();
        LoopMetrics {
            frames: metrics::counter!("tickstep_kernel_frames_total"),
            idle_frames: metrics::counter!("tickstep_kernel_idle_frames_total"),
        }
    }

    /// `count` frames passed, all of them idle (slept through) or all run.
    pub(crate) fn frames(&self, count: u64, idle: bool) {
        self.frames.increment(count);
        if idle {
            self.idle_frames.increment(count);
        }
    }
}

/// One published Overload (docs/observability.md §2.8). Rare: registered at the call.
pub(crate) fn overload() {
    metrics::counter!("tickstep_kernel_overloads_total").increment(1);
}

/// Tells the recorder installed now what each kernel metric means and its unit: the exporter's
/// `# HELP` lines (docs/observability.md §2, §4.6). Called wherever handles are registered, so a
/// recorder sees the descriptions of whatever it records.
fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        "tickstep_kernel_steps_total",
        Unit::Count,
        "Completed frame-scheduler steps."
    );
    describe_histogram!(
        "tickstep_kernel_step_seconds",
        Unit::Seconds,
        "Each frame-scheduler step's time, on the scheduler's clock."
    );
    describe_gauge!(
        "tickstep_kernel_budget_seconds",
        Unit::Seconds,
        "The time budget the last step ran under."
    );
    describe_counter!(
        "tickstep_kernel_deferred_tasks_total",
        Unit::Count,
        "Tasks pushed past a step's budget, counted once per step they wait."
    );
    describe_gauge!(
        "tickstep_kernel_pending_tasks",
        Unit::Count,
        "Live tasks waiting in each priority queue after the last step."
    );
    describe_counter!(
        "tickstep_kernel_frames_total",
        Unit::Count,
        "Frames of every frame loop, run or slept through."
    );
    describe_counter!(
        "tickstep_kernel_idle_frames_total",
        Unit::Count,
        "Frames slept through because nothing was due."
    );
    describe_counter!(
        "tickstep_kernel_overloads_total",
        Unit::Count,
        "Overload events: windows of steps that ran past their budget."
    );
}
