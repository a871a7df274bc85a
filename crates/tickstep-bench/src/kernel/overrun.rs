//! `overrun_backlog_100k`: does a step keep its budget when a huge backlog waits?
//!
//! 100,000 Background jobs of ~20 µs each wait in the queue, and every job that runs queues a copy
//! of itself, so the backlog never shrinks. Each of 600 steps runs under a 2 ms budget and stops
//! at the first budget check past it. The measure is the worst step's overrun past the budget,
//! *not counting the last task's own cost* (the budget is checked between tasks, so a task that
//! started in time may end after the budget; that is the task's cost, not the scheduler's):
//!
//! ```text
//! overrun = step end - max(step start + budget, end of the last task that ran)
//! ```
//!
//! It is what the scheduler itself adds after the budget is spent: the deferral count, the
//! profiler's per-origin attribution of the backlog (capped at 8 samples), the step's
//! statistics. Before the cap, the attribution walked the whole backlog after the budget check.
//!
//! On a shared machine the OS may preempt the thread in the middle of a step, which adds a
//! whole time slice (~4 ms) that no scheduler can help. On Linux, a step during which the thread
//! was switched out involuntarily (`nonvoluntary_ctxt_switches` in `/proc/thread-self/status`
//! rose) is left out of the worst case and counted in the note; elsewhere every step counts.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::{Clock, Instant, SystemClock};
use tickstep_kernel::{FrameScheduler, Priority, SchedulerConfig};

use crate::harness::{Measure, Row};

const BACKLOG: usize = 100_000;
const FRAMES: usize = 600;
const BUDGET: Duration = Duration::from_millis(2);
const TASK: Duration = Duration::from_micros(20);
/// The goal the issue set: at most 10 µs past the budget, the last task excluded.
const GOAL_NS: f64 = 10_000.0;

pub(crate) fn rows() -> Vec<Row> {
    let on = worst_overrun(true);
    let off = worst_overrun(false);
    vec![
        row("overrun_backlog_100k", on, "on"),
        row("overrun_backlog_100k_off", off, "off"),
    ]
}

fn row(name: &'static str, (worst, preempted): (Duration, usize), profiler: &str) -> Row {
    Row {
        name,
        measure: Measure::Value {
            value: worst.as_nanos() as f64,
            unit: "ns",
            goal: GOAL_NS,
        },
        note: format!(
            "worst step overrun past a 2 ms budget, last task's cost excluded, over {FRAMES} \
             steps with {BACKLOG} Background jobs of 20 us waiting; profiler {profiler}; \
             {preempted} steps preempted by the OS left out"
        ),
    }
}

/// One job: spins for [`TASK`], notes when it ended, queues a copy of itself.
fn job(sched: &FrameScheduler, clock: &SystemClock, last_end: &Rc<Cell<Option<Instant>>>) {
    let (s, c, l) = (sched.clone(), clock.clone(), Rc::clone(last_end));
    sched.schedule_detached(
        move || {
            let start = c.now();
            while c.now() - start < TASK {
                std::hint::spin_loop();
            }
            l.set(Some(c.now()));
            job(&s, &c, &l);
        },
        Priority::Background,
    );
}

/// Involuntary context switches of this thread so far (Linux), or `None`.
fn preemptions() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/thread-self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.starts_with("nonvoluntary_ctxt_switches:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The worst overrun over the steps the OS did not preempt, and how many it did.
fn worst_overrun(profile: bool) -> (Duration, usize) {
    let clock = SystemClock::new();
    let sched = FrameScheduler::new(
        clock.clone(),
        SchedulerConfig::server().profile_tasks(profile),
    );
    let last_end = Rc::new(Cell::new(None));
    for _ in 0..BACKLOG {
        job(&sched, &clock, &last_end);
    }
    let mut worst = Duration::ZERO;
    let mut preempted = 0;
    for _ in 0..FRAMES {
        last_end.set(None);
        let before = preemptions();
        let start = clock.now();
        sched.step_with_budget(BUDGET);
        let end = clock.now();
        if before.is_some() && preemptions() != before {
            preempted += 1;
            continue;
        }
        let spent = start.saturating_add(BUDGET);
        let from = last_end.get().map_or(spent, |task_end| task_end.max(spent));
        worst = worst.max(end - from);
    }
    assert_eq!(
        sched.queue_depths().queues[4],
        BACKLOG,
        "the backlog stayed whole"
    );
    sched.destroy();
    (worst, preempted)
}
