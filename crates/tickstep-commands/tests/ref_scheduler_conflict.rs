//! The reference suite's `SchedulerConflictTests`, ported (behaviour, not text): one test per
//! reference test, named after it.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::*;
use tickstep_commands::{Command, ForkError, Mechanism};

#[test]
fn compositions_cannot_await_conflicting_commands() {
    // The reference throws from run(); here the refused await is an error the body propagates,
    // and run() returns it.
    let (_clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "The Mechanism");
    let (first, second) = (parked_on(&mech, "First", 0), parked_on(&mech, "Second", 0));
    let group = Command::no_requirements()
        .executing_fallible(move |co| {
            let (a, b) = (first.clone(), second.clone());
            async move {
                co.await_all([&a, &b]).await?;
                Ok(())
            }
        })
        .named("Group");
    scheduler.schedule(&group);
    let error = scheduler.run().unwrap_err();
    assert_eq!(error.command.as_ref(), "Group");
    let source = error
        .source
        .downcast_ref::<ForkError>()
        .expect("a ForkError");
    assert!(matches!(source, ForkError::Conflicting { .. }));
    assert_eq!(
        source.to_string(),
        "cannot fork mutually conflicting commands: `First` and `Second` (both require The Mechanism)"
    );
}

/// A command on `mech` that records that it ran, then parks.
fn marking(mech: &Mechanism, name: &str) -> (Command, Rc<Cell<bool>>) {
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let cmd = mech
        .run(move |co| {
            r.set(true);
            async move {
                co.park().await;
            }
        })
        .named(name);
    (cmd, ran)
}

#[test]
fn inner_command_may_interrupt_other_inner_command() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "The mechanism");
    let (first, first_ran) = marking(&mech, "First");
    let (second, second_ran) = marking(&mech, "Second");
    let (f, s) = (first.clone(), second.clone());
    let group = Command::no_requirements()
        .executing(move |co| {
            let (f, s) = (f.clone(), s.clone());
            async move {
                co.fork([&f]).unwrap();
                co.fork([&s]).unwrap();
                co.park().await;
            }
        })
        .named("Group");
    scheduler.schedule(&group);
    cycles(&clock, &scheduler, 1);
    assert!(first_ran.get() && second_ran.get());
    assert!(!scheduler.is_running(&first) && !scheduler.is_scheduled(&first));
    assert!(scheduler.is_running(&second));
    assert!(scheduler.is_running(&group));
}

#[test]
fn nested_one_shot_compositions_all_run_in_one_cycle() {
    let (clock, scheduler) = setup();
    let (runs, bump) = counter();
    let one_shot = move || {
        let bump = bump.clone();
        Command::no_requirements()
            .executing(move |_co| {
                bump();
                async {}
            })
            .named("One Shot")
    };
    let forking = |name: &str, children: Vec<Command>| {
        Command::no_requirements()
            .executing(move |co| {
                for c in &children {
                    co.fork([c]).unwrap();
                }
                async {}
            })
            .named(name)
    };
    let three = forking("3", vec![one_shot()]);
    let two = forking("2", vec![one_shot(), three]);
    let inner = forking("Inner", vec![one_shot()]);
    let command = forking("Command", vec![one_shot(), one_shot(), inner, two]);
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    assert_eq!(runs.get(), 5);
    assert!(!scheduler.is_running(&command));
}

/// A parent awaiting `child` (ignoring a refusal, as the reference's parent simply ends).
fn awaiting(child: &Command) -> Command {
    let child = child.clone();
    Command::no_requirements()
        .executing(move |co| {
            let child = child.clone();
            async move {
                let _ = co.await_cmd(&child).await;
            }
        })
        .named("Parent")
}

#[test]
fn child_conflicts_with_higher_priority_top_level() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "mechanism");
    let top = parked_on(&mech, "Top", 10);
    let child = parked_on(&mech, "Child", 0);
    let parent = awaiting(&child);
    scheduler.schedule(&top);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&top));
    assert!(!scheduler.is_running(&child));
    assert!(!scheduler.is_running(&parent));
}

#[test]
fn child_conflicts_with_lower_priority_top_level() {
    let (clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "mechanism");
    let top = parked_on(&mech, "Top", -10);
    let child = parked_on(&mech, "Child", 0);
    let parent = awaiting(&child);
    scheduler.schedule(&top);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&top));
    assert!(scheduler.is_running(&child));
    assert!(scheduler.is_running(&parent));
}
