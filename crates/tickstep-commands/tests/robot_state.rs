//! The robot's state in the scheduler beyond the reference's tests (docs/commands.md §12):
//! compositions built with `compose`, awaits, default commands, bindings pressed while disabled,
//! `on_cancel`, and robot modes with their own defaults and bindings.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::*;
use tickstep_commands::{
    Command, CommandScheduler, ForkError, Mechanism, OpMode, RobotStateCell, ScheduleResult,
    Trigger, compose,
};

fn robot(scheduler: &CommandScheduler, enabled: bool, mode: OpMode) -> RobotStateCell {
    let robot = RobotStateCell::new();
    robot.set(enabled, mode);
    scheduler.set_robot_state(robot.clone());
    robot
}

/// docs/commands.md §12.3: a `compose::sequence` whose running step needs the arm is canceled
/// whole, also when the step that needs it has not started yet (the composition requires it).
#[test]
fn a_sequence_is_canceled_whole_when_disabled() {
    let (clock, scheduler) = setup();
    let robot = robot(&scheduler, true, OpMode::AUTONOMOUS);
    let arm = Mechanism::new(&scheduler, "arm");
    let first = yields("first", 5);
    let raise = parked_on(&arm, "raise", 0);
    let auto = compose::sequence([&first, &raise]).unwrap();
    scheduler.schedule(&auto);
    cycles(&clock, &scheduler, 2);
    assert!(scheduler.is_running(&first));
    let log = record(&scheduler);
    robot.set(false, OpMode::AUTONOMOUS);
    cycles(&clock, &scheduler, 1);
    assert!(running_names(&scheduler).is_empty());
    assert_eq!(
        take(&log),
        strs(&[
            "Disabled first -> raise (requires arm)",
            "Canceled first -> raise",
            "Canceled first",
        ])
    );
}

/// docs/commands.md §12.3: `on_cancel` runs for what the sweep cancels, so a motor is stopped.
#[test]
fn the_sweep_runs_cancel_hooks() {
    let (clock, scheduler) = setup();
    let robot = robot(&scheduler, true, OpMode::TELEOP);
    let arm = Mechanism::new(&scheduler, "arm");
    let (stopped, stop) = counter();
    let hold = arm
        .run(|co| async move {
            co.park().await;
        })
        .on_cancel(stop)
        .named("hold");
    scheduler.schedule(&hold);
    cycles(&clock, &scheduler, 1);
    robot.set(false, OpMode::TELEOP);
    cycles(&clock, &scheduler, 1);
    assert_eq!(stopped.get(), 1);
}

/// docs/commands.md §12.4: `await_cmd` of a command the disabled robot may not run returns the
/// refusal and cancels the awaiting composition.
#[test]
fn awaiting_a_refused_child_cancels_the_parent() {
    let (clock, scheduler) = setup();
    robot(&scheduler, false, OpMode::DISABLED);
    let arm = Mechanism::new(&scheduler, "arm");
    let raise = parked_on(&arm, "raise", 0);
    let seen = Rc::new(RefCell::new(None));
    let after = Rc::new(Cell::new(false));
    let (r, s, a) = (raise.clone(), seen.clone(), after.clone());
    let parent = Command::no_requirements()
        .executing(move |co| {
            let (r, s, a) = (r.clone(), s.clone(), a.clone());
            async move {
                let joined = co.await_cmd(&r);
                let result = joined.await;
                *s.borrow_mut() = Some(result);
                co.yield_now().await;
                a.set(true);
            }
        })
        .named("parent");
    let log = record(&scheduler);
    scheduler.schedule(&parent);
    cycles(&clock, &scheduler, 3);
    assert!(!scheduler.is_running(&parent));
    assert!(!after.get(), "the parent never runs past its next yield");
    assert!(matches!(
        seen.borrow().as_ref(),
        Some(Err(ForkError::Rejected {
            reason: ScheduleResult::RobotDisabled { .. },
            ..
        }))
    ));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled parent",
            "Mounted parent",
            "Disabled parent (requires arm)",
            "Canceled parent",
        ])
    );
}

/// docs/commands.md §12.7: a default command waits while disabled and starts once enabled;
/// a running one is canceled by the disable sweep and comes back after.
#[test]
fn default_commands_stop_while_disabled_and_come_back() {
    let (clock, scheduler) = setup();
    let robot = robot(&scheduler, true, OpMode::TELEOP);
    let drive = Mechanism::new(&scheduler, "drive");
    let cruise = parked_on(&drive, "cruise", 0);
    drive.set_default_command(&cruise).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cruise));
    let log = record(&scheduler);
    robot.set(false, OpMode::TELEOP);
    cycles(&clock, &scheduler, 5);
    assert!(!scheduler.is_running(&cruise));
    assert_eq!(
        take(&log),
        strs(&["Disabled cruise (requires drive)", "Canceled cruise"]),
        "no event per disabled cycle"
    );
    robot.set(true, OpMode::TELEOP);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&cruise));
}

/// The case of allwpilib issue #9336: a button pressed while disabled must not move the
/// elevator the moment the robot is enabled (docs/commands.md §12.2).
#[test]
fn a_press_while_disabled_does_not_move_anything_later() {
    let (clock, scheduler) = setup();
    let robot = robot(&scheduler, false, OpMode::DISABLED);
    let elevator = Mechanism::new(&scheduler, "elevator");
    let (moved, step) = counter();
    let to_top = elevator.run_repeatedly(step).named("to top");
    let (button, pressed) = flag();
    Trigger::new(&scheduler, pressed).on_true(&to_top);
    button.set(true);
    cycles(&clock, &scheduler, 3);
    button.set(false);
    cycles(&clock, &scheduler, 1);
    robot.set(true, OpMode::TELEOP);
    cycles(&clock, &scheduler, 5);
    assert_eq!(moved.get(), 0);
    assert!(!scheduler.is_running(&to_top));
}

/// docs/commands.md §12.3: the sweep happens once; a controllable command started while
/// disabled keeps running, and enabling again starts nothing by itself.
#[test]
fn re_enabling_restarts_nothing() {
    let (clock, scheduler) = setup();
    let robot = robot(&scheduler, true, OpMode::TELEOP);
    let arm = Mechanism::new(&scheduler, "arm");
    let leds = Mechanism::new(&scheduler, "leds");
    leds.set_controllable_while_disabled(true);
    let hold = parked_on(&arm, "hold", 0);
    let blink = parked_on(&leds, "blink", 0);
    scheduler.schedule(&hold);
    cycles(&clock, &scheduler, 1);
    // Disabled in the same mode, so what is scheduled now does not end with a mode (docs/commands.md §8.5).
    robot.set(false, OpMode::TELEOP);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.schedule(&blink), ScheduleResult::Success);
    cycles(&clock, &scheduler, 2);
    robot.set(true, OpMode::TELEOP);
    cycles(&clock, &scheduler, 2);
    assert_eq!(running_names(&scheduler), strs(&["blink"]));
}

/// docs/commands.md §12.5, §12.6: following the robot's mode, each mode's setup installs its own
/// default and binding, torn down when the mode ends; disabled falls back to the global default.
#[test]
fn each_mode_sets_up_its_own_defaults_and_bindings() {
    let (clock, scheduler) = setup();
    let robot = robot(&scheduler, false, OpMode::DISABLED);
    let drive = Mechanism::new(&scheduler, "drive");
    drive.set_controllable_while_disabled(true);
    let coast = parked_on(&drive, "coast", 0);
    drive.set_default_command(&coast).unwrap();
    let path = parked_on(&drive, "path", 0);
    let sticks = parked_on(&drive, "sticks", 0);
    let boost = parked("boost");
    let (button, pressed) = flag();
    let (d, p) = (drive.clone(), path.clone());
    scheduler.on_mode(OpMode::AUTONOMOUS, move |_| {
        d.set_default_command(&p).unwrap();
    });
    let (d, s, b) = (drive.clone(), sticks.clone(), boost.clone());
    scheduler.on_mode(OpMode::TELEOP, move |scheduler| {
        d.set_default_command(&s).unwrap();
        Trigger::new(scheduler, pressed.clone()).while_true(&b);
    });
    let on_drive = |s: &CommandScheduler| -> Vec<String> {
        s.running()
            .into_iter()
            .filter(|i| i.requirements.iter().any(|r| r == "drive"))
            .map(|i| i.name)
            .collect()
    };

    cycles(&clock, &scheduler, 1);
    assert_eq!(on_drive(&scheduler), strs(&["coast"]));
    robot.set(true, OpMode::AUTONOMOUS);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.opmode(), Some(OpMode::AUTONOMOUS));
    assert_eq!(on_drive(&scheduler), strs(&["path"]));
    button.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&boost),
        "teleop's binding is not live in autonomous"
    );

    robot.set(true, OpMode::TELEOP);
    cycles(&clock, &scheduler, 1);
    assert_eq!(on_drive(&scheduler), strs(&["sticks"]));
    assert!(
        scheduler.is_running(&boost),
        "held button seen by teleop's binding"
    );

    robot.set(false, OpMode::DISABLED);
    cycles(&clock, &scheduler, 1);
    assert_eq!(on_drive(&scheduler), strs(&["coast"]));
    assert!(
        !scheduler.is_running(&boost),
        "teleop's binding died with teleop"
    );

    robot.set(true, OpMode::TELEOP);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        on_drive(&scheduler),
        strs(&["sticks"]),
        "set up again each time the mode starts"
    );
}

/// docs/commands.md §12.8: a host that skips idle cycles still enters the robot's mode, and a
/// cycle after the robot is disabled is not idle until it was swept.
#[test]
fn a_pending_mode_or_disable_keeps_the_scheduler_busy() {
    let (clock, scheduler) = setup();
    let (entered, enter) = counter();
    scheduler.on_mode(OpMode::TELEOP, move |_| enter());
    let robot = robot(&scheduler, false, OpMode::DISABLED);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_idle());
    robot.set(true, OpMode::TELEOP);
    assert!(!scheduler.is_idle(), "teleop not entered yet");
    cycles(&clock, &scheduler, 1);
    assert_eq!(entered.get(), 1);
    assert!(scheduler.is_idle(), "the setup made nothing");
    robot.set(false, OpMode::TELEOP);
    assert!(!scheduler.is_idle(), "the disable is swept first");
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_idle());
}

/// docs/commands.md §12.7: a default set inside a command's body runs as its child, so while the
/// robot is disabled its refusal cancels that command's composition.
#[test]
fn a_command_scoped_default_refused_while_disabled_cancels_its_command() {
    let (clock, scheduler) = setup();
    robot(&scheduler, false, OpMode::DISABLED);
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    let (a, h) = (arm.clone(), hold.clone());
    let setter = Command::no_requirements()
        .executing(move |co| {
            let (a, h) = (a.clone(), h.clone());
            async move {
                a.set_default_command(&h).unwrap();
                co.park().await;
            }
        })
        .named("setter");
    let log = record(&scheduler);
    scheduler.schedule(&setter);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&setter) && !scheduler.is_running(&hold));
    assert!(
        take(&log).contains(&"Disabled setter (requires arm)".to_owned()),
        "the refusal is reported on the composition"
    );
}
