//! Error isolation: a panicking task reaches `on_error` and the step goes on.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::{Log, MS, SECOND, server};
use tickstep_kernel::Priority;

#[derive(Debug, Clone)]
struct Seen {
    message: String,
    origin: String,
    location: Option<String>,
    priority: Priority,
}

fn collect(sched: &tickstep_kernel::FrameScheduler) -> Rc<RefCell<Vec<Seen>>> {
    let seen: Rc<RefCell<Vec<Seen>>> = Rc::default();
    let sink = seen.clone();
    sched.on_error(move |err| {
        sink.borrow_mut().push(Seen {
            message: err.message().to_owned(),
            origin: err.origin().to_owned(),
            location: err.panic_location().map(str::to_owned),
            priority: err.priority(),
        });
    });
    seen
}

#[test]
fn a_crash_fires_on_error_and_the_step_continues_with_the_next_task() {
    let (_clock, sched) = server();
    let log = Log::new();
    let seen = collect(&sched);
    let _a = sched.schedule(log.task("before"), Priority::Normal);
    let _b = sched.schedule(|| panic!("task exploded"), Priority::Normal);
    let _c = sched.schedule(log.task("after"), Priority::Normal);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["before", "after"]);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].message, "task exploded");
    assert_eq!(seen[0].priority, Priority::Normal);
    assert_eq!(sched.stats().tasks_run, 3);
}

#[test]
fn on_error_names_the_origin_and_the_panic_location() {
    let (_clock, sched) = server();
    let seen = collect(&sched);
    let line = line!() + 1;
    let _h = sched.schedule(|| panic!("x"), Priority::High);
    sched.step();
    let seen = seen.borrow();
    assert!(
        seen[0].origin.ends_with(&format!("errors.rs:{line}:20")),
        "{}",
        seen[0].origin
    );
    assert!(
        seen[0].location.as_deref().unwrap().contains("errors.rs"),
        "{:?}",
        seen[0].location
    );
}

#[test]
fn on_error_receives_formatted_and_non_string_payloads() {
    let (_clock, sched) = server();
    let seen = collect(&sched);
    let _a = sched.schedule(|| panic!("value {}", 42), Priority::High);
    let _b = sched.schedule(|| std::panic::panic_any(7_u32), Priority::High);
    sched.step();
    let messages: Vec<String> = seen.borrow().iter().map(|s| s.message.clone()).collect();
    assert_eq!(messages, ["value 42", "Box<dyn Any>"]);
}

#[test]
fn a_recurring_job_that_panics_keeps_its_cadence() {
    let (clock, sched) = server();
    let seen = collect(&sched);
    let _h = sched
        .every(100 * MS, || panic!("again"), Priority::Normal)
        .unwrap();
    for _ in 0..3 {
        clock.advance(100 * MS);
        sched.step_with_budget(SECOND);
    }
    assert_eq!(seen.borrow().len(), 3);
    assert_eq!(sched.queue_depths().timers, 1);
}

#[test]
fn every_connected_handler_sees_every_crash_and_may_use_the_scheduler() {
    let (_clock, sched) = server();
    let log = Log::new();
    let (s, l) = (sched.clone(), log.clone());
    sched.on_error(move |_| {
        let _ = s.schedule(l.task("recovery"), Priority::Normal);
    });
    let second = collect(&sched);
    let _h = sched.schedule(|| panic!("boom"), Priority::High);
    sched.step_with_budget(SECOND);
    assert_eq!(second.borrow().len(), 1);
    // The recovery task was scheduled at a lower priority than High, so it ran this step.
    assert_eq!(log.take(), ["recovery"]);
}

#[test]
fn a_panicking_error_handler_does_not_stop_the_step() {
    let (_clock, sched) = server();
    let log = Log::new();
    sched.on_error(|_| panic!("handler broke too"));
    let _a = sched.schedule(|| panic!("first"), Priority::High);
    let _b = sched.schedule(log.task("still runs"), Priority::High);
    sched.step();
    assert_eq!(log.take(), ["still runs"]);
}

#[test]
fn without_a_handler_a_crash_is_logged_and_isolated() {
    let (_clock, sched) = server();
    let log = Log::new();
    let _a = sched.schedule(|| panic!("nobody listens"), Priority::High);
    let _b = sched.schedule(log.task("next"), Priority::High);
    sched.step();
    assert_eq!(log.take(), ["next"]);
}

#[test]
fn a_panic_outside_tasks_still_propagates_normally() {
    let (_clock, sched) = server();
    let _h = sched.schedule(|| panic!("inside"), Priority::High);
    sched.step();
    let outside = std::panic::catch_unwind(|| panic!("outside"));
    assert!(outside.is_err());
    let _ = Duration::ZERO;
}
