//! The futures async kernel tasks await: yield, sleep, wait until, timeout — all in virtual time.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use common::{MS, SECOND, server};
use tickstep_kernel::clock::{Clock, Instant};
use tickstep_kernel::{
    FrameLoop, FrameScheduler, ManualClock, Priority, Role, SchedulerConfig, TimedOut, wait_until,
    yield_now,
};

fn bound() -> (ManualClock, FrameLoop, FrameScheduler) {
    let clock = ManualClock::new();
    let frames = FrameLoop::new(clock.clone(), Role::Server, 60);
    let sched = FrameScheduler::new(clock.clone(), SchedulerConfig::server());
    sched.bind(&frames).unwrap();
    (clock, frames, sched)
}

#[test]
fn yield_now_resumes_the_task_on_the_next_step() {
    let (_clock, sched) = server();
    let steps = Rc::new(RefCell::new(Vec::new()));
    let (s, log) = (sched.clone(), steps.clone());
    sched.spawn_detached(
        async move {
            for _ in 0..3 {
                log.borrow_mut().push(s.stats().steps);
                yield_now().await;
            }
        },
        Priority::Normal,
    );
    for _ in 0..4 {
        sched.step();
    }
    assert_eq!(*steps.borrow(), [0, 1, 2]);
}

#[test]
fn sleep_wakes_the_task_at_its_deadline_in_virtual_time_and_idles_in_between() {
    let (clock, frames, sched) = bound();
    let woke_at = Rc::new(Cell::new(None));
    let (s, w, c) = (sched.clone(), woke_at.clone(), clock.clone());
    sched.spawn_detached(
        async move {
            s.sleep(Duration::from_secs(3600)).await;
            w.set(Some(c.now()));
        },
        Priority::Low,
    );
    frames.run_for(Duration::from_secs(3601));
    let woke = woke_at.get().expect("woke within the hour and a second");
    assert!(woke >= Instant::ZERO + Duration::from_secs(3600));
    assert!(woke <= Instant::ZERO + Duration::from_secs(3600) + 3 * frames.period());
    assert!(sched.stats().steps < 10, "an idle hour took no steps");
    assert_eq!(sched.queue_depths().timers, 0);
}

#[test]
fn sleep_until_a_past_instant_is_ready_at_once() {
    let (clock, sched) = server();
    clock.advance(SECOND);
    let done = Rc::new(Cell::new(false));
    let (s, d) = (sched.clone(), done.clone());
    sched.spawn_detached(
        async move {
            s.sleep_until(Instant::ZERO).await;
            d.set(true);
        },
        Priority::Normal,
    );
    sched.step();
    assert!(done.get());
    assert_eq!(sched.queue_depths().timers, 0, "no timer armed");
}

#[test]
fn dropping_a_sleep_cancels_its_timer() {
    let (_clock, sched) = server();
    let s = sched.clone();
    let handle = sched.spawn(
        async move {
            s.sleep(SECOND).await;
        },
        Priority::Normal,
    );
    sched.step();
    assert_eq!(sched.queue_depths().timers, 1);
    handle.cancel(); // drops the task's future, and with it the sleep
    assert_eq!(sched.queue_depths().timers, 0);
}

#[test]
fn a_sleep_past_the_end_of_the_clock_never_ends_and_arms_nothing() {
    let (clock, sched) = server();
    let done = Rc::new(Cell::new(false));
    let (s, d) = (sched.clone(), done.clone());
    sched.spawn_detached(
        async move {
            s.sleep(Duration::MAX).await;
            d.set(true);
        },
        Priority::Normal,
    );
    sched.step();
    clock.advance(Duration::from_secs(1_000_000));
    sched.step();
    assert!(!done.get());
    assert_eq!(sched.queue_depths().timers, 0);
}

#[test]
fn wait_until_polls_once_per_step_until_true() {
    let (_clock, sched) = server();
    let checks = Rc::new(Cell::new(0));
    let open = Rc::new(Cell::new(false));
    let (c, o) = (checks.clone(), open.clone());
    let done = Rc::new(Cell::new(false));
    let d = done.clone();
    sched.spawn_detached(
        async move {
            wait_until(move || {
                c.set(c.get() + 1);
                o.get()
            })
            .await;
            d.set(true);
        },
        Priority::Normal,
    );
    for _ in 0..5 {
        sched.step();
    }
    assert_eq!((checks.get(), done.get()), (5, false));
    open.set(true);
    sched.step();
    assert_eq!((checks.get(), done.get()), (6, true));
}

#[test]
fn wait_until_timeout_reports_which_came_first() {
    let (clock, sched) = server();
    let results = Rc::new(RefCell::new(Vec::new()));
    let flag = Rc::new(Cell::new(false));
    for limit in [50 * MS, 500 * MS] {
        let (s, r, f) = (sched.clone(), results.clone(), flag.clone());
        sched.spawn_detached(
            async move {
                let waited = s.wait_until_timeout(move || f.get(), limit).await;
                r.borrow_mut().push((limit, waited));
            },
            Priority::Normal,
        );
    }
    for frame in 0..20 {
        if frame == 10 {
            flag.set(true); // at 200 ms: after the short limit, before the long one
        }
        sched.step();
        clock.advance(20 * MS);
    }
    assert_eq!(
        *results.borrow(),
        [(50 * MS, Err(TimedOut)), (500 * MS, Ok(()))]
    );
    assert_eq!(
        sched.queue_depths().timers,
        0,
        "the long limit's timer was cancelled"
    );
}

#[test]
fn timeout_passes_the_inner_output_through() {
    let (clock, sched) = server();
    let out = Rc::new(Cell::new(None));
    let (s, o) = (sched.clone(), out.clone());
    sched.spawn_detached(
        async move {
            let inner = {
                let s = s.clone();
                async move {
                    s.sleep(10 * MS).await;
                    7
                }
            };
            o.set(Some(s.timeout(SECOND, inner).await));
        },
        Priority::Normal,
    );
    for _ in 0..5 {
        sched.step();
        clock.advance(10 * MS);
    }
    assert_eq!(out.get(), Some(Ok(7)));
}
