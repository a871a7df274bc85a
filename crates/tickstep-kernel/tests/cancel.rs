//! Handles: cancelling in every place a task can be.

mod common;

use std::time::Duration;

use common::{Log, MS, SECOND, server};
use tickstep_kernel::{Priority, TaskHandle};

#[test]
fn cancelling_an_after_handle_removes_it_from_the_heap_at_once() {
    let (clock, sched) = server();
    let log = Log::new();
    let h = sched
        .after(5 * SECOND, log.task("reminder"), Priority::Normal)
        .unwrap();
    h.cancel();
    assert_eq!(sched.queue_depths().timers, 0);
    assert_eq!(sched.next_deadline(), None);
    clock.advance(10 * SECOND);
    sched.step_with_budget(SECOND);
    assert_eq!(log.len(), 0);
    assert!(h.is_cancelled());
}

#[test]
fn heap_cancellation_works_at_every_position() {
    for n in 1..=24usize {
        for victim in 0..n {
            let (clock, sched) = server();
            let log = Log::new();
            // Deadlines in a scrambled order so the victim sits at varied heap positions.
            let handles: Vec<TaskHandle> = (0..n)
                .map(|i| {
                    let at = Duration::from_millis(((i * 7) % n) as u64 + 1);
                    sched
                        .after(at, log.task(i.to_string()), Priority::Normal)
                        .unwrap()
                })
                .collect();
            handles[victim].cancel();
            assert_eq!(sched.queue_depths().timers, n - 1);
            clock.advance(SECOND);
            sched.step_with_budget(SECOND);
            let ran = log.take();
            assert_eq!(ran.len(), n - 1, "n={n} victim={victim}");
            assert!(!ran.contains(&victim.to_string()));
            // The rest fired in deadline order.
            let keys: Vec<usize> = ran
                .iter()
                .map(|s| (s.parse::<usize>().unwrap() * 7) % n)
                .collect();
            assert!(
                keys.windows(2).all(|w| w[0] <= w[1]),
                "n={n} victim={victim}: {keys:?}"
            );
        }
    }
}

#[test]
fn cancelling_a_queued_task_skips_it_when_its_turn_comes() {
    let (_clock, sched) = server();
    let log = Log::new();
    let _a = sched.schedule(log.task("a"), Priority::Normal);
    let b = sched.schedule(log.task("b"), Priority::Normal);
    let _c = sched.schedule(log.task("c"), Priority::Normal);
    b.cancel();
    assert_eq!(sched.queue_depths().queues[2], 2);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["a", "c"]);
    assert_eq!(sched.stats().tasks_run, 2);
}

#[test]
fn a_cancelled_queued_task_is_not_counted_as_deferred() {
    let (_clock, sched) = server();
    let log = Log::new();
    let a = sched.schedule(log.task("a"), Priority::Normal);
    let _b = sched.schedule(log.task("b"), Priority::Normal);
    a.cancel();
    sched.step_with_budget(Duration::ZERO);
    assert_eq!(sched.stats().tasks_deferred, 1);
}

#[test]
fn cancelling_a_handle_whose_task_already_ran_does_nothing() {
    let (_clock, sched) = server();
    let log = Log::new();
    let h = sched.schedule(log.task("a"), Priority::Normal);
    sched.step_with_budget(SECOND);
    // The slot is reused by a new task; the old handle must not touch it.
    let _other = sched.schedule(log.task("b"), Priority::Normal);
    h.cancel();
    assert!(!h.is_cancelled());
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["a", "b"]);
}

#[test]
fn cancelling_every_zero_removes_it_from_the_frame_list() {
    let (_clock, sched) = server();
    let log = Log::new();
    let h = sched
        .every(Duration::ZERO, log.every("tick"), Priority::Normal)
        .unwrap();
    sched.step_with_budget(SECOND);
    h.cancel();
    assert_eq!(sched.queue_depths().timers, 0);
    sched.step_with_budget(SECOND);
    assert_eq!(log.count("tick"), 1);
}

#[test]
fn cancelling_a_recurring_job_while_it_runs_stops_future_runs_only() {
    let (clock, sched) = server();
    let log = Log::new();
    let slot: std::rc::Rc<std::cell::RefCell<Option<TaskHandle>>> = std::rc::Rc::default();
    let (l, s) = (log.clone(), slot.clone());
    let h = sched
        .every(
            100 * MS,
            move || {
                l.push("tick");
                if let Some(h) = s.borrow().as_ref() {
                    h.cancel();
                }
            },
            Priority::Normal,
        )
        .unwrap();
    *slot.borrow_mut() = Some(h);
    for _ in 0..3 {
        clock.advance(100 * MS);
        sched.step_with_budget(SECOND);
    }
    assert_eq!(log.count("tick"), 1);
    assert_eq!(sched.queue_depths().timers, 0);
    assert!(slot.borrow().as_ref().unwrap().is_cancelled());
}

#[test]
fn a_task_can_cancel_a_later_task_in_the_same_step() {
    let (_clock, sched) = server();
    let log = Log::new();
    let later = std::rc::Rc::new(sched.schedule(log.task("later"), Priority::Low));
    let (l, h) = (log.clone(), later.clone());
    let _first = sched.schedule(
        move || {
            l.push("first");
            h.cancel();
        },
        Priority::High,
    );
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["first"]);
    assert!(later.is_cancelled());
}

#[test]
fn cancelling_twice_is_harmless_and_a_dropped_handle_does_not_cancel() {
    let (_clock, sched) = server();
    let log = Log::new();
    let h = sched.schedule(log.task("kept"), Priority::Normal);
    drop(sched.schedule(log.task("dropped handle"), Priority::Normal));
    h.cancel();
    h.cancel();
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["dropped handle"]);
}

#[test]
fn cancelling_a_handle_that_outlived_its_scheduler_is_a_quiet_no_op() {
    let (_clock, sched) = server();
    let h = sched.after(SECOND, || {}, Priority::Normal).unwrap();
    drop(sched);
    h.cancel(); // must not panic
    assert!(!h.is_cancelled(), "there was nothing left to cancel");
}
