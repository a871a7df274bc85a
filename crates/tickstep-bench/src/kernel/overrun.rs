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
//! exact attribution of a small backlog (a large one is sampled at the next step's start,
//! inside its budget), the step's statistics. Before the cap, the attribution walked the whole
//! backlog after the budget check; after it, its 8 cold samples (~2 µs) still ran there.
//!
//! On a shared machine the OS may preempt the thread in the middle of a step, which adds a
//! whole time slice (~4 ms) that no scheduler can help. On Linux, a step during which the thread
//! was switched out involuntarily (`nonvoluntary_ctxt_switches` in `/proc/thread-self/status`
//! rose) is left out of the worst case and counted in the note; elsewhere every step counts.
//!
//! Shorter stalls are not context switches of the thread and cannot be told apart: interrupts,
//! and on a virtual machine the host taking the virtual CPU away. The row's `noise_floor_ns`,
//! measured in the same run, is their size: over the same number of 2 ms windows of an empty
//! loop reading the clock (the same preempted windows left out), the median window's longest gap
//! between two consecutive reads; the note adds the longest gap of all windows.
//! The note gives the median step's overrun beside the worst, which a single stall decides.

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
    let noise = noise_floor();
    let on = overruns(true);
    let off = overruns(false);
    vec![
        row("overrun_backlog_100k", &on, noise, "on"),
        row("overrun_backlog_100k_off", &off, noise, "off"),
    ]
}

/// What one run of [`FRAMES`] steps saw.
struct Overruns {
    worst: Duration,
    median: Duration,
    preempted: usize,
}

fn row(name: &'static str, seen: &Overruns, noise: (Duration, Duration), profiler: &str) -> Row {
    Row {
        name,
        measure: Measure::ValueBesideNoise {
            value: seen.worst.as_nanos() as f64,
            unit: "ns",
            goal: GOAL_NS,
            noise_floor_ns: noise.0.as_nanos() as f64,
        },
        note: format!(
            "worst step overrun past a 2 ms budget, last task's cost excluded, over {FRAMES} \
             steps with {BACKLOG} Background jobs of 20 us waiting; profiler {profiler}; \
             median step {} ns; {} steps preempted by the OS left out; noise floor: an empty \
             clock-reading loop's longest stall per 2 ms window, median {} ns, worst {} ns",
            seen.median.as_nanos(),
            seen.preempted,
            noise.0.as_nanos(),
            noise.1.as_nanos()
        ),
    }
}

/// The machine's own stalls: over [`FRAMES`] windows of [`BUDGET`], each window's longest gap
/// between two consecutive clock reads of an empty loop, windows with an involuntary context
/// switch left out as in [`overruns`]. Returns the median window's and the worst window's.
fn noise_floor() -> (Duration, Duration) {
    let clock = SystemClock::new();
    let mut gaps = Vec::with_capacity(FRAMES);
    for _ in 0..FRAMES {
        let before = preemptions();
        let start = clock.now();
        let (mut last, mut gap) = (start, Duration::ZERO);
        while last - start < BUDGET {
            let now = clock.now();
            gap = gap.max(now - last);
            last = now;
        }
        if before.is_none() || preemptions() == before {
            gaps.push(gap);
        }
    }
    gaps.sort();
    (
        gaps.get(gaps.len() / 2).copied().unwrap_or_default(),
        gaps.last().copied().unwrap_or_default(),
    )
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

/// The worst and median overrun over the steps the OS did not preempt, and how many it did.
fn overruns(profile: bool) -> Overruns {
    let clock = SystemClock::new();
    let sched = FrameScheduler::new(
        clock.clone(),
        SchedulerConfig::server().profile_tasks(profile),
    );
    let last_end = Rc::new(Cell::new(None));
    for _ in 0..BACKLOG {
        job(&sched, &clock, &last_end);
    }
    let mut seen = Vec::with_capacity(FRAMES);
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
        seen.push(end - from);
    }
    assert_eq!(
        sched.queue_depths().queues[4],
        BACKLOG,
        "the backlog stayed whole"
    );
    sched.destroy();
    seen.sort();
    Overruns {
        worst: seen.last().copied().unwrap_or_default(),
        median: seen.get(seen.len() / 2).copied().unwrap_or_default(),
        preempted,
    }
}
