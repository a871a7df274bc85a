//! The profiler's deferral attribution keeps the budget honest: its work is capped whatever the
//! backlog, its counts still add up to the exact deferred total, and the sampled attribution is
//! made at the next step's start, inside that step's budget, not past the budget that ran out.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{MS, server};
use tickstep_kernel::clock::{Clock, Instant};
use tickstep_kernel::{FrameScheduler, ManualClock, Priority, SchedulerConfig};

const TASK_COST: Duration = Duration::from_micros(50);

/// A backlog of `n` Background jobs of 50 µs (virtual) each, half from origin "even" and half
/// from "odd"; each job re-queues a copy of itself, so the backlog never shrinks.
fn backlog(clock: &ManualClock, sched: &FrameScheduler, n: usize) {
    fn job(clock: &ManualClock, sched: &FrameScheduler, label: &'static str) {
        let (c, s) = (clock.clone(), sched.clone());
        sched.with_origin(label).schedule_detached(
            move || {
                c.advance(TASK_COST);
                job(&c, &s, label);
            },
            Priority::Background,
        );
    }
    for i in 0..n {
        job(clock, sched, if i % 2 == 0 { "even" } else { "odd" });
    }
}

#[test]
fn attribution_work_does_not_grow_with_the_backlog() {
    let mut visits = Vec::new();
    for n in [100, 1_000, 10_000, 100_000] {
        let (clock, sched) = server();
        backlog(&clock, &sched, n);
        for _ in 0..3 {
            sched.step_with_budget(MS);
            let stats = sched.stats();
            // The step stops at the first check past the budget: at most one task's cost over.
            assert!(stats.last_step <= MS + TASK_COST, "{:?}", stats.last_step);
            // 20 ran and queued their copies: n wait, counted exactly (never sampled).
            assert_eq!(stats.tasks_deferred as usize, n);
            assert_eq!(
                stats.pending[4], n,
                "distinct tasks waiting (re-queued ones included)"
            );
            visits.push(stats.attribution_visits);
        }
    }
    assert!(
        visits.iter().all(|&v| v == 8),
        "the same bounded work at every backlog size: {visits:?}"
    );
}

#[test]
fn a_small_backlog_is_attributed_exactly() {
    let (clock, sched) = server();
    backlog(&clock, &sched, 8);
    sched.step_with_budget(3 * TASK_COST); // 3 ran (and queued copies of themselves): 8 wait
    let stats = sched.stats();
    assert_eq!(stats.attribution_visits, 8);
    assert_eq!(
        stats.window_deferred_keys,
        [("even".to_owned(), 4), ("odd".to_owned(), 4)]
    );
}

#[test]
fn sampled_counts_add_up_to_the_exact_deferred_total() {
    let (clock, sched) = server();
    backlog(&clock, &sched, 10_000);
    for _ in 0..60 {
        sched.step_with_budget(MS);
    }
    let window = sched.take_step_window();
    let attributed: u64 = window.top_deferred.iter().map(|(_, n)| n).sum();
    assert_eq!(attributed, window.deferred, "{:?}", window.top_deferred);
    assert_eq!(window.deferred, 60 * 10_000);
    // Half the backlog came from each origin, alternating; samples at a moving phase see that.
    for (origin, count) in &window.top_deferred {
        let share = *count as f64 / window.deferred as f64;
        assert!((0.4..=0.6).contains(&share), "{origin}: {share}");
    }
    assert_eq!(window.pending, [0, 0, 0, 0, 10_000]);
}

/// A cost model: every clock read costs `per_read` of virtual time (the attribution's one read
/// is then its measured cost).
struct CostClock {
    inner: ManualClock,
    per_read: Duration,
}

impl Clock for CostClock {
    fn now(&self) -> Instant {
        self.inner.advance(self.per_read);
        self.inner.now()
    }
    fn unix_nanos(&self) -> u64 {
        self.inner.unix_nanos()
    }
    fn sleep_until(&self, deadline: Instant) {
        self.inner.sleep_until(deadline);
    }
}

/// Steps of a 1,000-task Low backlog (90 µs tasks) on the cost-model clock, profiler `on` or off:
/// tasks run per step and each step's length.
fn profiled_steps(on: bool) -> Vec<(usize, Duration)> {
    let clock = ManualClock::new();
    let sched = FrameScheduler::new(
        Rc::new(CostClock {
            inner: clock.clone(),
            per_read: Duration::from_micros(10),
        }),
        SchedulerConfig::server().profile_tasks(on),
    );
    let ran = Rc::new(Cell::new(0));
    for _ in 0..1_000 {
        let (c, r) = (clock.clone(), ran.clone());
        sched.schedule_detached(
            move || {
                c.advance(Duration::from_micros(90));
                r.set(r.get() + 1);
            },
            Priority::Low,
        );
    }
    (0..3)
        .map(|_| {
            sched.step_with_budget(Duration::from_micros(1_005));
            (ran.replace(0), sched.stats().last_step)
        })
        .collect()
}

#[test]
fn the_sampled_attribution_adds_nothing_past_the_budget() {
    // Each task costs 90 µs plus the 10 µs read that ends it: the check at 1,010 µs < 1,015 µs
    // (the start read cost 10 µs) lets an eleventh run, then the budget is spent with 989 or more
    // tasks waiting, which are sampled. The sampling is made at the next step's start (or when
    // the statistics are read), so every step ends at the read that ended its last task, and no
    // step stops earlier to make room for it (the reserve this replaced cost a task a step).
    let on = profiled_steps(true);
    assert_eq!(on, [(11, Duration::from_micros(1_110)); 3]);
    // Off, the budget check reads the clock before each task instead: one task fewer, same rule.
    assert_eq!(
        profiled_steps(false),
        [(10, Duration::from_micros(1_020)); 3]
    );
}

#[test]
fn a_pending_attribution_is_made_by_the_next_step_or_the_window() {
    let (clock, sched) = server();
    backlog(&clock, &sched, 1_000);
    sched.step_with_budget(MS);
    sched.step_with_budget(MS); // makes the first step's attribution at its start
    let window = sched.take_step_window(); // makes the second's
    let attributed: u64 = window.top_deferred.iter().map(|(_, n)| n).sum();
    assert_eq!((attributed, window.deferred), (2_000, 2_000));
    assert!(
        sched.take_step_window().top_deferred.is_empty(),
        "nothing left pending"
    );
}

#[test]
fn with_the_profiler_off_nothing_is_visited() {
    let clock = ManualClock::new();
    let sched = FrameScheduler::new(
        clock.clone(),
        SchedulerConfig::server().profile_tasks(false),
    );
    backlog(&clock, &sched, 1_000);
    sched.step_with_budget(MS);
    let stats = sched.stats();
    assert_eq!((stats.attribution_visits, stats.tasks_deferred), (0, 1_000));
}

/// The second program: a 60 fps server with 5,000 Background jobs of 50 µs queued at
/// once, the profiler on (its default), stepped by the frame loop. Every step keeps its budget
/// to within the one job that started before the budget ran out, and the backlog drains.
#[test]
fn a_60_fps_server_drains_a_5000_job_backlog_within_its_budget_with_the_profiler_on() {
    use tickstep_kernel::{Kernel, KernelConfig, Role};
    let clock = ManualClock::new();
    let kernel = Kernel::boot(clock.clone(), Role::Server, KernelConfig::default());
    let sched = kernel.scheduler();
    assert!(sched.profiles_tasks(), "on by default");
    let done = Rc::new(Cell::new(0));
    for _ in 0..5_000 {
        let (c, d) = (clock.clone(), done.clone());
        sched.schedule_detached(
            move || {
                c.advance(TASK_COST);
                d.set(d.get() + 1);
            },
            Priority::Background,
        );
    }
    let mut frames = 0;
    while done.get() < 5_000 {
        kernel.frame_loop().run_frames(1);
        frames += 1;
        let stats = sched.stats();
        assert!(
            stats.last_step <= stats.last_budget + TASK_COST,
            "frame {frames}: {:?} > {:?}",
            stats.last_step,
            stats.last_budget
        );
        assert!(stats.attribution_visits <= 8);
        assert!(frames < 100, "the backlog drains");
    }
    assert_eq!(sched.stats().pending, [0; 5]);
}
