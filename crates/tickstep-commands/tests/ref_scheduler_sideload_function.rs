//! The reference suite's `SchedulerSideloadFunctionTests`, ported (behaviour, not text): one test
//! per reference test, named after it.

mod common;

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, ForkError, Mechanism, ScheduleResult, Trigger};

#[test]
fn sideload_throwing_exception() {
    let (_clock, scheduler) = setup();
    scheduler.sideload(|_co| async { panic!("Bang!") });
    let panic = catch_unwind(AssertUnwindSafe(|| scheduler.run())).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>().copied(), Some("Bang!"));
}

#[test]
fn periodic_sideload() {
    let (clock, scheduler) = setup();
    let (count, bump) = counter();
    scheduler.add_periodic(bump);
    assert_eq!(count.get(), 0);
    cycles(&clock, &scheduler, 1);
    assert_eq!(count.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert_eq!(count.get(), 2);
}

#[test]
fn multiple_periodic_sideloads() {
    let (clock, scheduler) = setup();
    let (count, bump) = counter();
    for _ in 0..4 {
        scheduler.add_periodic(bump.clone());
    }
    cycles(&clock, &scheduler, 1);
    assert_eq!(count.get(), 4);
    cycles(&clock, &scheduler, 1);
    assert_eq!(count.get(), 8);
}

#[test]
fn sideload_scheduling_command() {
    let (clock, scheduler) = setup();
    let command = parked("Command");
    let c = command.clone();
    scheduler.sideload(move |co| async move {
        co.fork([&c]).unwrap();
    });
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&command),
        "started and outlasted the sideload"
    );
}

#[test]
fn child_command_cannot_escape_via_sideload() {
    let (clock, scheduler) = setup();
    let ran = Rc::new(Cell::new(false));
    let child = parked("Child");
    let (sched, r, c) = (scheduler.clone(), ran.clone(), child.clone());
    let parent = Command::no_requirements()
        .executing(move |_co| {
            let (r, c) = (r.clone(), c.clone());
            sched.sideload(move |co| {
                let (r, c) = (r.clone(), c.clone());
                async move {
                    r.set(true);
                    let _ = co.fork([&c]);
                }
            });
            async {}
        })
        .named("Parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&parent) && !scheduler.is_scheduled(&parent));
    assert!(!scheduler.is_running(&child) && !scheduler.is_scheduled(&child));
    assert!(!ran.get());
    cycles(&clock, &scheduler, 1);
    assert!(
        !ran.get(),
        "the sideload died with its command before it ever ran"
    );
    assert!(!scheduler.is_running(&child));
}

#[test]
fn sideload_canceling_command() {
    let (clock, scheduler) = setup();
    let command = parked("Command");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    let (sched, c) = (scheduler.clone(), command.clone());
    scheduler.sideload(move |_co| {
        let (sched, c) = (sched.clone(), c.clone());
        async move { sched.cancel(&c) }
    });
    assert!(scheduler.is_running(&command));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn sideload_affects_state_for_trigger_in_same_cycle() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).on_true(&command);
    let s = signal.clone();
    scheduler.sideload(move |_co| {
        let s = s.clone();
        async move { s.set(true) }
    });
    cycles(&clock, &scheduler, 1);
    assert!(signal.get());
    assert!(scheduler.is_running(&command));
}

#[test]
fn sideload_failing_to_fork_does_not_cancel() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Mech");
    let high = parked_on(&mech, "High", 100);
    let low = parked_on(&mech, "Low", 0);
    let seen: Rc<RefCell<Option<Result<(), ForkError>>>> = Rc::new(RefCell::new(None));
    let (s, l) = (seen.clone(), low.clone());
    scheduler.sideload(move |co| {
        let (s, l) = (s.clone(), l.clone());
        async move {
            *s.borrow_mut() = Some(co.fork([&l]));
        }
    });
    scheduler.schedule(&high);
    cycles(&clock, &scheduler, 1);
    match seen.borrow_mut().take() {
        Some(Err(ForkError::Rejected { command, reason })) => {
            assert_eq!(command, "Low");
            assert!(matches!(
                reason,
                ScheduleResult::LowerPriorityThanQueued { .. }
            ));
        }
        other => panic!("expected a refusal the sideload could see, got {other:?}"),
    }
}
