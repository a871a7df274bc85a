//! Sleeping while idle: attach only with runnable work, one wake 34 ms early.

mod common;

use std::time::Duration;

use common::{Log, MS, SECOND};
use tickstep_kernel::{
    Clock, FrameLoop, FrameScheduler, Instant, ManualClock, Priority, Role, SchedulerConfig,
    WAKE_WINDOW,
};

fn bound() -> (ManualClock, FrameLoop, FrameScheduler) {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&fl).unwrap();
    (clock, fl, sched)
}

#[test]
fn a_bound_scheduler_with_nothing_to_do_is_detached() {
    let (_clock, fl, sched) = bound();
    assert!(!sched.is_attached());
    fl.run_frames(10);
    assert_eq!(sched.stats().steps, 0);
}

#[test]
fn scheduling_work_attaches_and_an_empty_step_detaches_again() {
    let (_clock, fl, sched) = bound();
    let log = Log::new();
    let _ = sched.schedule(log.task("work"), Priority::Normal);
    assert!(sched.is_attached());
    fl.run_frames(5);
    assert_eq!(log.take(), ["work"]);
    assert_eq!(
        sched.stats().steps,
        1,
        "detached right after the step that emptied it"
    );
    assert!(!sched.is_attached());
}

#[test]
fn without_runnable_work_one_wake_is_armed_34_ms_before_the_earliest_deadline() {
    let (_clock, _fl, sched) = bound();
    let _late = sched.after(2 * SECOND, || {}, Priority::Normal).unwrap();
    let _early = sched.after(SECOND, || {}, Priority::Normal).unwrap();
    assert!(!sched.is_attached());
    assert_eq!(sched.wake_at(), Some(Instant::ZERO + SECOND - WAKE_WINDOW));
}

#[test]
fn scheduling_earlier_work_replaces_the_pending_wake() {
    let (_clock, _fl, sched) = bound();
    let _a = sched.after(10 * SECOND, || {}, Priority::Normal).unwrap();
    assert_eq!(
        sched.wake_at(),
        Some(Instant::ZERO + 10 * SECOND - WAKE_WINDOW)
    );
    let _b = sched.after(SECOND, || {}, Priority::Normal).unwrap();
    assert_eq!(sched.wake_at(), Some(Instant::ZERO + SECOND - WAKE_WINDOW));
}

#[test]
fn cancelling_the_last_timer_cancels_the_wake() {
    let (_clock, _fl, sched) = bound();
    let a = sched.after(SECOND, || {}, Priority::Normal).unwrap();
    let b = sched.after(2 * SECOND, || {}, Priority::Normal).unwrap();
    a.cancel();
    assert_eq!(
        sched.wake_at(),
        Some(Instant::ZERO + 2 * SECOND - WAKE_WINDOW)
    );
    b.cancel();
    assert_eq!(sched.wake_at(), None);
}

#[test]
fn the_wake_reattaches_one_window_early_and_the_deadline_is_served_by_a_normal_step() {
    let (clock, fl, sched) = bound();
    let log = Log::new();
    let _h = sched
        .after(SECOND, log.task("due"), Priority::Normal)
        .unwrap();
    fl.run_for(SECOND + 100 * MS);
    assert_eq!(log.take(), ["due"]);
    // Attached from the wake (966 ms) until the step that ran it: a handful of frames, not 66.
    let steps = sched.stats().steps;
    assert!((2..=4).contains(&steps), "steps = {steps}");
    assert!(clock.now() >= Instant::ZERO + SECOND);
}

#[test]
fn a_thousand_future_timers_cost_zero_steps_over_120_frames() {
    let (clock, fl, sched) = bound();
    let log = Log::new();
    for i in 0..1000u64 {
        let _ = sched
            .after(
                10 * SECOND + Duration::from_millis(i),
                log.task("t"),
                Priority::Low,
            )
            .unwrap();
    }
    fl.run_frames(120);
    assert_eq!(sched.stats().steps, 0);
    assert_eq!(fl.steps_taken(), 0);
    assert_eq!(fl.frame_count(), 120);
    assert_eq!(fl.frames_run(), 0);
    assert_eq!(clock.now(), Instant::ZERO + fl.period() * 120);
    assert_eq!(log.len(), 0);
}

#[test]
fn a_short_interval_job_keeps_the_scheduler_attached() {
    let (_clock, fl, sched) = bound();
    let log = Log::new();
    let _h = sched
        .every(20 * MS, log.every("tick"), Priority::Normal)
        .unwrap();
    assert!(
        sched.is_attached(),
        "a 20 ms deadline is inside the 34 ms window"
    );
    for _ in 0..60 {
        fl.run_frames(1);
        assert!(sched.is_attached());
        assert_eq!(sched.wake_at(), None);
    }
    let ticks = log.count("tick");
    assert!((49..=51).contains(&ticks), "ticks = {ticks}");
}

#[test]
fn an_every_zero_job_is_a_permanent_per_frame_cost() {
    let (_clock, fl, sched) = bound();
    let _h = sched
        .every(Duration::ZERO, || {}, Priority::Normal)
        .unwrap();
    fl.run_frames(30);
    assert_eq!(sched.stats().steps, 30);
}

#[test]
fn a_longer_interval_detaches_between_runs() {
    let (_clock, fl, sched) = bound();
    let log = Log::new();
    let _h = sched
        .every(SECOND, log.every("tick"), Priority::Normal)
        .unwrap();
    fl.run_for(5 * SECOND + 100 * MS);
    assert_eq!(log.count("tick"), 5);
    let steps = sched.stats().steps;
    assert!(
        steps <= 5 * 4,
        "about three frames per wake, not 300: {steps}"
    );
}

#[test]
fn the_first_step_after_reattaching_gets_the_idle_wake_budget_not_the_late_floor() {
    let (_clock, fl, sched) = bound();
    let _ = sched.schedule(|| {}, Priority::Normal);
    fl.run_frames(1);
    assert_eq!(
        sched.stats().last_budget,
        Duration::from_micros(1_500),
        "first step ever: floor"
    );
    let _h = sched.after(SECOND, || {}, Priority::Normal).unwrap();
    while sched.stats().steps < 2 {
        fl.run_frames(1);
    }
    // The previous step was a second ago, so the late-frame rule would say floor; the reattach
    // rule trusts the idle engine instead: Target - HeartbeatTime - Physics.
    assert_eq!(sched.stats().last_budget, Duration::from_micros(16_500));
}

#[test]
fn the_reattach_budget_subtracts_the_engines_heartbeat_and_physics() {
    let (clock, fl, sched) = bound();
    let c = clock.clone();
    fl.set_simulation(move |_| c.advance(3 * MS));
    let _ = sched.schedule(|| {}, Priority::Normal);
    fl.run_frames(1);
    let _h = sched.after(5 * SECOND, || {}, Priority::Normal).unwrap();
    while sched.stats().steps < 2 {
        fl.run_frames(1);
    }
    let stats = sched.stats();
    assert_eq!(stats.last_physics, 3 * MS);
    assert_eq!(stats.last_budget, Duration::from_micros(13_500));
}

#[test]
fn unbind_disconnects_and_cancels_the_wake_but_step_still_works() {
    let (_clock, fl, sched) = bound();
    let log = Log::new();
    let _h = sched
        .after(SECOND, log.task("due"), Priority::Normal)
        .unwrap();
    sched.unbind();
    assert_eq!(sched.wake_at(), None);
    fl.run_for(2 * SECOND);
    assert_eq!(log.len(), 0, "an unbound scheduler never wakes by itself");
    sched.step();
    assert_eq!(log.take(), ["due"]);
}

#[test]
fn an_unbound_scheduler_never_steps_by_itself() {
    let clock = ManualClock::new();
    let fl = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(clock, SchedulerConfig::server());
    let _ = sched.schedule(|| {}, Priority::Normal);
    fl.run_frames(10);
    assert_eq!(sched.stats().steps, 0);
}
