//! Runs (docs/commands.md §13): a command scheduled twice is two runs; awaiting or canceling a
//! run acts on that run only.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, EventKind, Run};

#[test]
fn a_command_scheduled_twice_is_two_runs() {
    let (clock, scheduler) = setup();
    let events = record_events(&scheduler);
    let c = parked("c");
    let first = scheduler.schedule_run(&c).unwrap();
    cycles(&clock, &scheduler, 1);
    scheduler.cancel(&c);
    let second = scheduler.schedule_run(&c).unwrap();
    assert_ne!(first, second);
    assert_ne!(first.id(), second.id());
    assert!(!scheduler.is_live(first) && scheduler.is_live(second));
    let ids: Vec<_> = events
        .borrow()
        .iter()
        .filter(|e| e.kind == EventKind::Scheduled)
        .map(|e| e.command)
        .collect();
    assert_eq!(ids, [first.id(), second.id()]);
}

#[test]
fn canceling_an_ended_run_leaves_the_next_run_alone() {
    let (clock, scheduler) = setup();
    let c = parked("c");
    let first = scheduler.schedule_run(&c).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.cancel_run(first));
    let second = scheduler.schedule_run(&c).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.cancel_run(first));
    assert!(scheduler.is_running(&c));
    assert_eq!(scheduler.run_of(&c), Some(second));
}

#[test]
fn awaiting_a_run_waits_for_that_run_not_a_later_one() {
    let (clock, scheduler) = setup();
    let resumed = Rc::new(Cell::new(false));
    let c = parked("c");
    let first = scheduler.schedule_run(&c).unwrap();
    let r = resumed.clone();
    let waiter = Command::no_requirements()
        .executing(move |co| {
            let r = r.clone();
            async move {
                co.await_run(first).await.unwrap();
                r.set(true);
            }
        })
        .named("waiter");
    scheduler.schedule(&waiter);
    cycles(&clock, &scheduler, 2);
    assert!(!resumed.get());
    // The first run ends and a second run of the same command starts before the waiter's
    // next poll: the waiter resumes, because what it awaits is the first run.
    scheduler.cancel(&c);
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 1);
    assert!(resumed.get());
    assert!(scheduler.is_running(&c));
}

#[test]
fn a_forked_run_that_ends_in_its_first_step_is_still_named_and_awaited_at_once() {
    let (clock, scheduler) = setup();
    let events = record_events(&scheduler);
    let seen: Rc<RefCell<Vec<Run>>> = Rc::default();
    let quick = instant("quick");
    let (q, s) = (quick.clone(), seen.clone());
    let parent = Command::no_requirements()
        .executing_fallible(move |co| {
            let (q, s) = (q.clone(), s.clone());
            async move {
                let a = co.fork_run(&q)?;
                co.await_run(a).await?;
                let b = co.fork_run(&q)?;
                s.borrow_mut().extend([a, b]);
                Ok(())
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&parent),
        "both awaits resolved in one cycle"
    );
    let runs = seen.borrow();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0], runs[1]);
    let completed: Vec<_> = events
        .borrow()
        .iter()
        .filter(|e| e.kind == EventKind::Completed && &*e.name == "quick")
        .map(|e| e.command)
        .collect();
    assert_eq!(completed, [runs[0].id(), runs[1].id()]);
}

#[test]
fn canceling_a_forked_run_from_its_parent() {
    let (clock, scheduler) = setup();
    let child = parked("child");
    let c = child.clone();
    let parent = Command::no_requirements()
        .executing_fallible(move |co| {
            let c = c.clone();
            async move {
                let run = co.fork_run(&c)?;
                co.yield_now().await;
                assert!(co.scheduler().cancel_run(run));
                co.await_run(run).await?;
                co.park().await;
                Ok(())
            }
        })
        .named("parent");
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&child));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&child));
    assert!(scheduler.is_running(&parent));
}
