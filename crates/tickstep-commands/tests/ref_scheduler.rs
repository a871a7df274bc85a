//! The reference suite's `SchedulerTest`, ported (behaviour, not text): one test per reference
//! test, named after it.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, CommandScheduler, Mechanism};

#[test]
fn basic() {
    let (clock, scheduler) = setup();
    let (enabled, when) = flag();
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let command = Command::no_requirements()
        .executing(move |co| {
            let (r, when) = (r.clone(), when.clone());
            async move {
                loop {
                    co.yield_now().await;
                    if when() {
                        break;
                    }
                }
                r.set(true);
            }
        })
        .named("Basic Command");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    enabled.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
    assert!(ran.get());
}

#[test]
fn atomicity() {
    let (clock, scheduler) = setup();
    let x = Rc::new(Cell::new(0_u32));
    for n in 0..100 {
        let x = x.clone();
        let command = Command::no_requirements()
            .executing(move |co| {
                let x = x.clone();
                async move {
                    for _ in 0..500 {
                        x.set(x.get() + 1);
                        co.yield_now().await;
                    }
                }
            })
            .named(format!("CountCommand[{n}]"));
        scheduler.schedule(&command);
    }
    cycles(&clock, &scheduler, 500);
    assert_eq!(x.get(), 100 * 500);
}

#[test]
fn run_mechanism() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "Counting");
    let x = Rc::new(Cell::new(0));
    let xc = x.clone();
    let count_to_ten = mech
        .run(move |co| {
            let x = xc.clone();
            async move {
                x.set(0);
                for _ in 0..10 {
                    co.yield_now().await;
                    x.set(x.get() + 1);
                }
            }
        })
        .named("Count To Ten");
    scheduler.schedule(&count_to_ten);
    cycles(&clock, &scheduler, 11);
    assert_eq!(x.get(), 10);
}

#[test]
fn compositions_do_not_need_requirements() {
    let (clock, scheduler) = setup();
    let m1 = Mechanism::new(&scheduler, "M1");
    let m2 = Mechanism::new(&scheduler, "m2");
    let (a, b) = (
        parked_on(&m1, "M1 Command", 0),
        parked_on(&m2, "M2 Command", 0),
    );
    let group = Command::no_requirements()
        .executing(move |co| {
            let (a, b) = (a.clone(), b.clone());
            async move {
                let _ = co.await_all([&a, &b]).await;
            }
        })
        .named("Composition");
    scheduler.schedule(&group);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.running().len(), 3);
}

fn running_on(scheduler: &CommandScheduler, mech: &Mechanism) -> Vec<String> {
    scheduler
        .running()
        .into_iter()
        .filter(|i| i.requirements.iter().any(|r| r == mech.name()))
        .map(|i| i.name)
        .collect()
}

#[test]
fn nested_mechanisms() {
    let (clock, scheduler) = setup();
    let superstructure = Mechanism::new(&scheduler, "Superstructure");
    let elevator = Mechanism::new(&scheduler, "Elevator");
    let arm = Mechanism::new(&scheduler, "Arm");
    for m in [&arm, &elevator, &superstructure] {
        m.set_default_command(&m.idle()).unwrap();
    }
    let (e, a) = (
        parked_on(&elevator, "Elevator Subcommand", 0),
        parked_on(&arm, "Arm Subcommand", 0),
    );
    let super_command = superstructure
        .run(move |co| {
            let (e, a) = (e.clone(), a.clone());
            async move {
                let _ = co.await_cmd(&e).await;
                let _ = co.await_cmd(&a).await;
            }
        })
        .named("Super Command");
    scheduler.schedule(&super_command);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_on(&scheduler, &arm), ["Arm idle"]);
    // Taking an inner mechanism from the composition cancels the whole composition.
    scheduler.schedule(&parked_on(&elevator, "Conflict", 0));
    cycles(&clock, &scheduler, 2);
    assert_eq!(
        running_on(&scheduler, &superstructure),
        ["Superstructure idle"]
    );
}
