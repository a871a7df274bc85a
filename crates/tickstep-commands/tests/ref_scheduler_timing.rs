//! The reference suite's `SchedulerTimingTests`, ported (behaviour, not text): one test per
//! reference test, named after it.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use common::*;
use tickstep_commands::Command;
use tickstep_kernel::clock::Instant;

/// A slot for a command that is built after the body referring to it.
type Slot = Rc<RefCell<Option<Command>>>;

fn awaiting_slot(
    name: &str,
    slot: &Slot,
    yield_first: bool,
    done: Option<Rc<Cell<bool>>>,
) -> Command {
    let slot = slot.clone();
    Command::no_requirements()
        .executing(move |co| {
            let (slot, done) = (slot.clone(), done.clone());
            async move {
                if yield_first {
                    co.yield_now().await;
                }
                let target = slot.borrow().clone().expect("filled before the first run");
                let _ = co.await_cmd(&target).await;
                if let Some(done) = done {
                    done.set(true);
                }
            }
        })
        .named(name)
}

#[test]
fn command_awaiting_itself() {
    let (clock, scheduler) = setup();
    let slot: Slot = Rc::default();
    let command = awaiting_slot("Self Await", &slot, false, None);
    *slot.borrow_mut() = Some(command.clone());
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&command),
        "it waits on itself, harmlessly"
    );
}

#[test]
fn command_deadlock() {
    let (clock, scheduler) = setup();
    let (to_child, to_parent): (Slot, Slot) = (Rc::default(), Rc::default());
    let parent = awaiting_slot("Parent", &to_child, false, None);
    let child = awaiting_slot("Child", &to_parent, false, None);
    *to_child.borrow_mut() = Some(child.clone());
    *to_parent.borrow_mut() = Some(parent.clone());
    scheduler.schedule(&parent);
    for _ in 0..2 {
        cycles(&clock, &scheduler, 1);
        assert!(scheduler.is_running(&parent) && scheduler.is_running(&child));
    }
    scheduler.cancel(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&parent) && !scheduler.is_running(&child));
}

#[test]
fn delayed_command_deadlock() {
    let (clock, scheduler) = setup();
    let (r1, r2): (Slot, Slot) = (Rc::default(), Rc::default());
    let (done1, done2) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let command1 = awaiting_slot("Command 1", &r2, true, Some(done1.clone()));
    let command2 = awaiting_slot("Command 2", &r1, true, Some(done2.clone()));
    *r1.borrow_mut() = Some(command1.clone());
    *r2.borrow_mut() = Some(command2.clone());
    scheduler.schedule(&command1);
    scheduler.schedule(&command2);
    for _ in 0..2 {
        cycles(&clock, &scheduler, 1);
        assert!(scheduler.is_running(&command1) && scheduler.is_running(&command2));
    }
    scheduler.cancel(&command2);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command1) && !scheduler.is_running(&command2));
    assert!(done1.get(), "command 1 completed once command 2 stopped");
    assert!(!done2.get(), "command 2 was stopped before completing");
}

/// A command that bumps `runs`, yields, bumps again, yields.
fn twice(runs: &Rc<Cell<u32>>) -> Command {
    let runs = runs.clone();
    Command::no_requirements()
        .executing(move |co| {
            let runs = runs.clone();
            async move {
                runs.set(runs.get() + 1);
                co.yield_now().await;
                runs.set(runs.get() + 1);
                co.yield_now().await;
            }
        })
        .named("Inner")
}

fn awaiting(inner: &Command) -> Command {
    let inner = inner.clone();
    Command::no_requirements()
        .executing(move |co| {
            let inner = inner.clone();
            async move {
                let _ = co.await_cmd(&inner).await;
            }
        })
        .named("Outer")
}

#[test]
fn forked_child_runs_once() {
    let (clock, scheduler) = setup();
    let runs = Rc::new(Cell::new(0));
    let outer = awaiting(&twice(&runs));
    scheduler.schedule(&outer);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        runs.get(),
        1,
        "a child started in a cycle is not polled again in it"
    );
}

fn short_wait(done: &Rc<Cell<bool>>) -> Command {
    let done = done.clone();
    Command::no_requirements()
        .executing(move |co| {
            let done = done.clone();
            async move {
                co.wait(Duration::from_millis(1)).await;
                done.set(true);
            }
        })
        .named("Short Wait")
}

#[test]
fn short_wait_waits_one_loop() {
    let (clock, scheduler) = setup();
    let done = Rc::new(Cell::new(false));
    scheduler.schedule(&short_wait(&done));
    scheduler.run().unwrap();
    clock.set(Instant::ZERO + Duration::from_secs(1));
    scheduler.run().unwrap();
    assert!(done.get());
}

#[test]
fn short_wait_waits_one_loop_with_fast_period() {
    let (clock, scheduler) = setup();
    let done = Rc::new(Cell::new(false));
    scheduler.schedule(&short_wait(&done));
    scheduler.run().unwrap();
    clock.set(Instant::ZERO + Duration::from_micros(500));
    scheduler.run().unwrap();
    assert!(!done.get(), "half the wait has passed");
    clock.set(Instant::ZERO + Duration::from_millis(1));
    scheduler.run().unwrap();
    assert!(done.get());
}

#[test]
fn awaiting_exits_immediately_without_a_one_loop_delay() {
    let (clock, scheduler) = setup();
    let runs = Rc::new(Cell::new(0));
    let runs_c = runs.clone();
    let inner = Command::no_requirements()
        .executing(move |co| {
            let runs = runs_c.clone();
            async move {
                runs.set(runs.get() + 1);
                co.yield_now().await;
                runs.set(runs.get() + 1);
            }
        })
        .named("Inner");
    let outer = awaiting(&inner);
    scheduler.schedule(&outer);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&inner) && scheduler.is_running(&outer));
    assert_eq!(runs.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&inner) && !scheduler.is_running(&outer));
    assert_eq!(runs.get(), 2);
}
