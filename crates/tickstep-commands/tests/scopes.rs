//! Scopes of commands, bindings and listeners, as issues 10 and 14 asked for them.

mod common;

use common::*;
use tickstep_commands::{Command, Mechanism, OpMode, Trigger};

#[test]
fn a_command_scheduled_in_an_opmode_ends_when_the_opmode_changes() {
    let (clock, scheduler) = setup();
    scheduler.set_opmode(Some(OpMode::new(1)));
    let (queued, running) = (parked("queued"), parked("running"));
    scheduler.schedule(&running);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&queued);
    scheduler.set_opmode(Some(OpMode::new(2)));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&running));
    assert!(!scheduler.is_running(&queued) && !scheduler.is_scheduled(&queued));
}

#[test]
fn a_command_scheduled_outside_any_opmode_survives_opmode_changes() {
    let (clock, scheduler) = setup();
    let global = parked("global");
    scheduler.schedule(&global);
    cycles(&clock, &scheduler, 1);
    scheduler.set_opmode(Some(OpMode::new(1)));
    cycles(&clock, &scheduler, 1);
    scheduler.set_opmode(None);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&global));
}

#[test]
fn a_binding_made_inside_a_command_runs_its_command_as_the_binders_child_at_its_priority() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let holder = parked_on(&arm, "holder", 5);
    let bound = parked_on(&arm, "bound", 0);
    let (sched, b) = (scheduler.clone(), bound.clone());
    let binder = Command::no_requirements()
        .executing(move |co| {
            Trigger::new(&sched, || true).on_true(&b);
            async move {
                co.park().await;
            }
        })
        .with_priority(9)
        .named("binder");
    scheduler.schedule(&holder);
    scheduler.schedule(&binder);
    cycles(&clock, &scheduler, 2);
    assert_eq!(scheduler.parent_of(&bound), Some(binder.clone()));
    assert!(
        scheduler.is_running(&bound),
        "priority 9 through its parent beats 5"
    );
    assert!(!scheduler.is_running(&holder));
    let info = scheduler
        .running()
        .into_iter()
        .find(|i| i.name == "bound")
        .unwrap();
    assert_eq!(info.priority, 9);
}

#[test]
fn a_lifecycle_listener_sees_no_per_cycle_events() {
    let (clock, scheduler) = setup();
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = log.clone();
    scheduler.on_lifecycle_event(move |e| sink.borrow_mut().push(e.to_string()));
    let arm = Mechanism::new(&scheduler, "arm");
    scheduler.schedule(&parked_on(&arm, "low", 0));
    cycles(&clock, &scheduler, 3);
    scheduler.schedule(&parked_on(&arm, "high", 1));
    cycles(&clock, &scheduler, 3);
    assert_eq!(
        *log.borrow(),
        [
            "Scheduled low",
            "Scheduled high",
            "Interrupted low by high",
            "Canceled low"
        ]
    );
}

#[test]
fn a_renamed_composition_is_a_new_command_under_the_new_name() {
    let (clock, scheduler) = setup();
    let (a, b) = (yield_once("A"), yield_once("B"));
    let auto = a.and_then(&b);
    let score = auto.named("score");
    assert_eq!((auto.name(), score.name()), ("A -> B", "score"));
    scheduler.schedule(&score);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&score) && !scheduler.is_running(&auto));
    assert_eq!(scheduler.parent_of(&a), Some(score.clone()));
}
