//! `after()` and `every()`: deadlines, cadence, staggering, and bad input.

mod common;

use std::time::Duration;

use common::{Log, MS, SECOND, server, with_config};
use tickstep_kernel::{Instant, Priority, ScheduleError, SchedulerConfig};

#[test]
fn after_runs_once_when_the_deadline_passes_and_not_before() {
    let (clock, sched) = server();
    let log = Log::new();
    let _h = sched
        .after(5 * SECOND, log.task("reminder"), Priority::Normal)
        .unwrap();
    clock.advance(4 * SECOND + 999 * MS);
    sched.step_with_budget(SECOND);
    assert_eq!(log.len(), 0);
    clock.advance(MS);
    sched.step_with_budget(SECOND);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["reminder"]);
}

#[test]
fn timers_due_at_the_same_instant_fire_in_arming_order() {
    let (clock, sched) = server();
    let log = Log::new();
    let _a = sched
        .after(SECOND, log.task("a"), Priority::Normal)
        .unwrap();
    let _b = sched
        .after(SECOND, log.task("b"), Priority::Normal)
        .unwrap();
    let _c = sched.after(MS, log.task("c"), Priority::Normal).unwrap();
    clock.advance(SECOND);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["c", "a", "b"]);
}

#[test]
fn every_zero_runs_every_step() {
    let (_clock, sched) = server();
    let log = Log::new();
    let _h = sched
        .every(Duration::ZERO, log.every("tick"), Priority::Normal)
        .unwrap();
    for _ in 0..4 {
        sched.step_with_budget(SECOND);
    }
    assert_eq!(log.count("tick"), 4);
}

#[test]
fn a_positive_interval_is_drift_free() {
    let (clock, sched) = server();
    let log = Log::new();
    let h = sched
        .every(100 * MS, log.every("tick"), Priority::Normal)
        .unwrap();
    // Steps land 30 ms after each deadline; the cadence stays on the 100 ms grid.
    for n in 1..=5u32 {
        clock.set(Instant::ZERO + 100 * MS * n + 30 * MS);
        sched.step_with_budget(SECOND);
        assert_eq!(
            sched.next_deadline(),
            Some(Instant::ZERO + 100 * MS * (n + 1))
        );
    }
    assert_eq!(log.count("tick"), 5);
    h.cancel();
}

#[test]
fn a_job_behind_by_a_whole_interval_snaps_forward_and_never_bursts() {
    let (clock, sched) = server();
    let log = Log::new();
    let _h = sched
        .every(100 * MS, log.every("tick"), Priority::Normal)
        .unwrap();
    clock.advance(SECOND + 50 * MS); // ten ticks missed
    sched.step_with_budget(SECOND);
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("tick"), 1, "missed ticks never fire back to back");
    assert_eq!(
        sched.next_deadline(),
        Some(Instant::ZERO + SECOND + 150 * MS)
    );
}

#[test]
fn a_recurring_entry_is_in_exactly_one_place_at_a_time() {
    let (clock, sched) = server();
    let log = Log::new();
    let _h = sched
        .every(100 * MS, log.every("tick"), Priority::Low)
        .unwrap();
    assert_eq!(sched.queue_depths().timers, 1);
    clock.advance(100 * MS);
    sched.step_with_budget(Duration::ZERO); // moved to its queue, starved there
    let depths = sched.queue_depths();
    assert_eq!((depths.timers, depths.queues[3]), (0, 1));
    clock.advance(SECOND);
    sched.step_with_budget(Duration::ZERO); // still queued: not pushed twice
    assert_eq!(sched.queue_depths().queues[3], 1);
    sched.step_with_budget(SECOND);
    let depths = sched.queue_depths();
    assert_eq!((depths.timers, depths.queues[3]), (1, 0));
    assert_eq!(log.count("tick"), 1);
}

#[test]
fn a_starved_100_ms_job_runs_once_when_budget_frees_then_resumes_its_cadence() {
    let (clock, sched) = server();
    let log = Log::new();
    let _h = sched
        .every(100 * MS, log.every("tick"), Priority::Low)
        .unwrap();
    for _ in 0..10 {
        clock.advance(100 * MS);
        sched.step_with_budget(Duration::ZERO);
    }
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("tick"), 1);
    clock.advance(100 * MS);
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("tick"), 2);
}

#[test]
fn a_mid_run_every_zero_job_is_not_queued_again() {
    let (_clock, sched) = server();
    let log = Log::new();
    let (s, l) = (sched.clone(), log.clone());
    let _h = sched
        .every(
            Duration::ZERO,
            move || {
                l.push("tick");
                // A nested step is a no-op, and the job is not in the frame list while it runs.
                assert_eq!(s.queue_depths().timers, 0);
                s.step();
            },
            Priority::Normal,
        )
        .unwrap();
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("tick"), 1);
    assert_eq!(sched.queue_depths().timers, 1);
}

fn golden_offset(n: u32, interval: Duration) -> Duration {
    interval.mul_f64((f64::from(n) * 0.618_033_988_749_894_9).fract())
}

#[test]
fn staggering_delays_the_nth_first_deadline_by_the_golden_ratio_offset() {
    let (_clock, sched) = with_config(SchedulerConfig::server().stagger_recurring(true));
    for n in 1..=6u32 {
        let h = sched.every(SECOND, || {}, Priority::Normal).unwrap();
        let want = Instant::ZERO + SECOND + golden_offset(n, SECOND);
        let got = sched.next_deadline().unwrap();
        assert!(
            got.as_nanos().abs_diff(want.as_nanos()) <= 1,
            "n={n}: {got:?} vs {want:?}"
        );
        h.cancel();
    }
}

#[test]
fn staggered_jobs_keep_their_cadence_after_the_first_run() {
    let (clock, sched) = with_config(SchedulerConfig::server().stagger_recurring(true));
    let log = Log::new();
    let _h = sched
        .every(SECOND, log.every("tick"), Priority::Normal)
        .unwrap();
    let first = sched.next_deadline().unwrap();
    clock.set(first);
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("tick"), 1);
    assert_eq!(sched.next_deadline(), Some(first + SECOND));
}

#[test]
fn after_deadlines_are_never_staggered() {
    let (_clock, sched) = with_config(SchedulerConfig::server().stagger_recurring(true));
    let _e = sched
        .every(Duration::ZERO, || {}, Priority::Normal)
        .unwrap();
    let _a = sched.after(SECOND, || {}, Priority::Normal).unwrap();
    assert_eq!(sched.next_deadline(), Some(Instant::ZERO + SECOND));
}

#[test]
fn without_staggering_jobs_created_together_fire_together() {
    let (clock, sched) = server();
    let log = Log::new();
    let _a = sched
        .every(SECOND, log.every("a"), Priority::Normal)
        .unwrap();
    let _b = sched
        .every(SECOND, log.every("b"), Priority::Normal)
        .unwrap();
    clock.advance(SECOND);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["a", "b"]);
}

#[test]
fn every_and_after_reject_nan_negative_and_infinite_seconds_at_the_call_site() {
    let (_clock, sched) = server();
    let cases = [
        (f64::NAN, "NaN"),
        (-1.0, "-1"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ];
    for (value, shown) in cases {
        let err = sched
            .every_secs(value, || {}, Priority::Normal)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Scheduler.every interval must be a finite number >= 0 (got {shown})")
        );
        let err = sched
            .after_secs(value, || {}, Priority::Normal)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Scheduler.after delay must be a finite number >= 0 (got {shown})")
        );
    }
    // Nothing was created.
    assert_eq!(sched.queue_depths().timers, 0);
}

#[test]
fn checked_seconds_accept_zero_and_fractions() {
    let (clock, sched) = server();
    let log = Log::new();
    let _a = sched
        .after_secs(0.25, log.task("quarter"), Priority::Normal)
        .unwrap();
    let _e = sched
        .every_secs(0.0, log.every("frame"), Priority::Normal)
        .unwrap();
    clock.advance(250 * MS);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["quarter", "frame"]);
}

#[test]
fn a_deadline_that_would_overflow_the_clock_is_an_error_not_a_panic() {
    let (clock, sched) = server();
    clock.advance(SECOND);
    let err = sched
        .after(Duration::MAX, || {}, Priority::Normal)
        .unwrap_err();
    assert!(
        matches!(err, ScheduleError::DeadlineOverflow { api: "after", .. }),
        "{err:?}"
    );
    let err = sched
        .every(Duration::from_secs(u64::MAX), || {}, Priority::Normal)
        .unwrap_err();
    assert!(
        matches!(err, ScheduleError::DeadlineOverflow { api: "every", .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("Scheduler.every interval must be a finite number >= 0")
    );
    let err = sched.after_secs(1e30, || {}, Priority::Normal).unwrap_err();
    assert!(
        matches!(err, ScheduleError::DeadlineOverflow { .. }),
        "{err:?}"
    );
    assert_eq!(sched.queue_depths().timers, 0);
}

#[test]
fn a_refused_every_does_not_move_the_stagger_count() {
    let (_clock, sched) = with_config(SchedulerConfig::server().stagger_recurring(true));
    assert!(sched.every(Duration::MAX, || {}, Priority::Normal).is_err());
    let _h = sched.every(SECOND, || {}, Priority::Normal).unwrap();
    let want = Instant::ZERO + SECOND + golden_offset(1, SECOND);
    assert!(
        sched
            .next_deadline()
            .unwrap()
            .as_nanos()
            .abs_diff(want.as_nanos())
            <= 1
    );
}

#[test]
fn a_burst_of_timers_fires_in_deadline_then_arming_order_and_cancelled_ones_never_run() {
    use std::{cell::RefCell, rc::Rc};
    // Thousands due in one step take the bulk path (radix split, cache warm-up), with pooled,
    // boxed and zero-sized closures mixed; cancels land both on the heap and, from inside the
    // first task, on timers already queued.
    let (clock, sched) = server();
    let fired = Rc::new(RefCell::new(Vec::new()));
    let deadline = |i: u64| Duration::from_micros((i * 7_919) % 5_003) + MS;
    let handles = Rc::new(RefCell::new(Vec::new()));
    for i in 0..6_000_u64 {
        let f = Rc::clone(&fired);
        let handle = if i % 3 == 0 {
            let padding = [i; 12]; // over the pooled size: boxed
            sched.after(
                deadline(i),
                move || f.borrow_mut().push(padding[0]),
                Priority::Normal,
            )
        } else {
            sched.after(
                deadline(i),
                move || f.borrow_mut().push(i),
                Priority::Normal,
            )
        };
        handles.borrow_mut().push(handle.unwrap());
    }
    let _zst = sched
        .after(Duration::ZERO, || {}, Priority::Normal)
        .unwrap();
    let hs = Rc::clone(&handles);
    let _first = sched
        .after(
            Duration::ZERO,
            move || {
                for h in hs.borrow().iter().skip(1).step_by(7) {
                    h.cancel();
                }
            },
            Priority::High,
        )
        .unwrap();
    for h in handles.borrow().iter().skip(2).step_by(7) {
        h.cancel();
    }
    clock.advance(SECOND);
    sched.step_with_budget(SECOND);
    let mut want: Vec<u64> = (0..6_000).filter(|i| i % 7 != 1 && i % 7 != 2).collect();
    want.sort_by_key(|&i| (deadline(i), i));
    assert_eq!(*fired.borrow(), want);
    assert_eq!(sched.queue_depths().timers, 0);
}
