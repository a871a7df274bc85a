//! The reference suite's `BindingScopeTest`, ported (behaviour, not text). The reference asks its
//! internal scope factory which scope a binding made here and now would get; tickstep keeps
//! scopes internal, so each test checks what that scope does: when the binding dies.

mod common;

use common::*;
use tickstep_commands::{Command, CommandScheduler, OpMode, Trigger};

/// A trigger that is always true, bound while-true to a fresh parked command.
fn bind_always(scheduler: &CommandScheduler, name: &str) -> Command {
    let command = parked(name);
    Trigger::new(scheduler, || true).while_true(&command);
    command
}

/// A command that binds `bound` while-true inside its body, then runs once more and ends.
fn binding_command(scheduler: &CommandScheduler, name: &str, bound: &Command) -> Command {
    let (sched, bound) = (scheduler.clone(), bound.clone());
    Command::no_requirements()
        .executing(move |co| {
            Trigger::new(&sched, || true).while_true(&bound);
            async move {
                co.wait(CYCLE * 3).await;
            }
        })
        .named(name)
}

#[test]
fn narrowest_scope_in_opmode() {
    let (clock, scheduler) = setup();
    scheduler.set_opmode(Some(OpMode::new(1)));
    let bound = bind_always(&scheduler, "bound");
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&bound));
    scheduler.set_opmode(Some(OpMode::new(2)));
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&bound),
        "opmode scope: dies with the opmode"
    );
    assert_eq!(scheduler.telemetry().bindings, 0);
}

#[test]
fn narrowest_scope_in_command() {
    let (clock, scheduler) = setup();
    let bound = parked("bound");
    let command = binding_command(&scheduler, "Command 1", &bound);
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 2);
    assert!(scheduler.is_running(&bound));
    assert_eq!(scheduler.parent_of(&bound), Some(command.clone()));
    cycles(&clock, &scheduler, 3);
    assert!(!scheduler.is_running(&command));
    assert!(
        !scheduler.is_running(&bound),
        "command scope: dies with the command"
    );
    assert_eq!(scheduler.telemetry().bindings, 0);
}

#[test]
fn narrowest_scope_in_opmode_and_command() {
    let (clock, scheduler) = setup();
    scheduler.set_opmode(Some(OpMode::new(314)));
    let bound = parked("bound");
    let command = binding_command(&scheduler, "Command pi", &bound);
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 2);
    assert_eq!(
        scheduler.parent_of(&bound),
        Some(command.clone()),
        "the command scope wins over the opmode"
    );
    cycles(&clock, &scheduler, 3);
    assert!(!scheduler.is_running(&bound));
    assert_eq!(scheduler.opmode(), Some(OpMode::new(314)));
}

#[test]
fn narrowest_scope_without_opmode_or_command() {
    let (clock, scheduler) = setup();
    let bound = bind_always(&scheduler, "bound");
    cycles(&clock, &scheduler, 1);
    scheduler.set_opmode(Some(OpMode::new(1)));
    scheduler.set_opmode(None);
    cycles(&clock, &scheduler, 5);
    assert!(scheduler.is_running(&bound), "global scope: lives on");
    assert_eq!(scheduler.telemetry().bindings, 1);
}
