//! Mechanisms, priorities and default commands: who gets a mechanism, and when.

mod common;

use common::{cycles, parked_on, record, setup, strs, take};
use tickstep_commands::{Command, Mechanism, ScheduleResult};

#[test]
fn completion_releases_requirements() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let quick = arm.run(|_co| async {}).with_priority(9).named("quick");
    let low = parked_on(&arm, "low", -5);
    scheduler.schedule(&quick);
    assert!(matches!(
        scheduler.schedule(&low),
        ScheduleResult::LowerPriorityThanQueued { .. }
    ));
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.schedule(&low), ScheduleResult::Success);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&low));
}

#[test]
fn higher_priority_pending_command_interrupts_the_running_one() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let low = parked_on(&arm, "low", 0);
    let high = parked_on(&arm, "high", 1);
    scheduler.schedule(&low);
    cycles(&clock, &scheduler, 1);
    take(&log);
    assert_eq!(scheduler.schedule(&high), ScheduleResult::Success);
    // Scheduled, not yet started: the running one keeps running until promotion.
    assert!(scheduler.is_running(&low));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&low));
    assert!(scheduler.is_running(&high));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled high",
            "Interrupted low by high",
            "Canceled low",
            "Mounted high",
            "Yielded high"
        ])
    );
}

#[test]
fn equal_priority_newly_scheduled_command_wins_the_tie() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let first = parked_on(&arm, "first", 3);
    let second = parked_on(&arm, "second", 3);
    scheduler.schedule(&first);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.schedule(&second), ScheduleResult::Success);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&second));
    assert!(!scheduler.is_running(&first));
}

#[test]
fn equal_priority_tie_among_queued_commands_goes_to_the_newest() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let first = parked_on(&arm, "first", 0);
    let second = parked_on(&arm, "second", 0);
    scheduler.schedule(&first);
    scheduler.schedule(&second);
    assert!(!scheduler.is_scheduled(&first));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&second));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled first",
            "Scheduled second",
            "Interrupted first by second",
            "Canceled first",
            "Mounted second",
            "Yielded second"
        ])
    );
}

#[test]
fn lower_priority_command_is_rejected_with_lower_priority_than_running() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let high = parked_on(&arm, "high", 10);
    let low = parked_on(&arm, "low", 2);
    scheduler.schedule(&high);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        scheduler.schedule(&low),
        ScheduleResult::LowerPriorityThanRunning {
            running: "high".into(),
            running_priority: 10,
            priority: 2
        }
    );
    assert!(!scheduler.is_scheduled(&low));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&high));
}

#[test]
fn lower_priority_command_is_rejected_with_lower_priority_than_queued() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let high = parked_on(&arm, "high", 10);
    let low = parked_on(&arm, "low", i32::MIN);
    scheduler.schedule(&high);
    assert_eq!(
        scheduler.schedule(&low),
        ScheduleResult::LowerPriorityThanQueued {
            queued: "high".into(),
            queued_priority: 10,
            priority: i32::MIN
        }
    );
    assert_eq!(scheduler.queued().len(), 1);
}

#[test]
fn commands_on_disjoint_mechanisms_run_side_by_side() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 0);
    let b = parked_on(&wrist, "b", 0);
    scheduler.schedule(&a);
    scheduler.schedule(&b);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&a) && scheduler.is_running(&b));
}

#[test]
fn a_multi_mechanism_command_interrupts_every_owner_it_conflicts_with() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let a = parked_on(&arm, "a", 0);
    let b = parked_on(&wrist, "b", 0);
    let both = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|co| async move {
            co.park().await;
        })
        .named("both");
    scheduler.schedule(&a);
    scheduler.schedule(&b);
    cycles(&clock, &scheduler, 1);
    scheduler.schedule(&both);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&a) && !scheduler.is_running(&b));
    assert!(scheduler.is_running(&both));
}

#[test]
fn default_command_runs_when_the_mechanism_is_idle() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    arm.set_default_command(&hold).unwrap();
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&hold));
}

#[test]
fn default_command_returns_after_an_interruption() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    arm.set_default_command(&hold).unwrap();
    cycles(&clock, &scheduler, 1);
    let raise = arm
        .run(|co| async move {
            co.yield_now().await;
        })
        .named("raise");
    scheduler.schedule(&raise);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&raise) && !scheduler.is_running(&hold));
    cycles(&clock, &scheduler, 1); // raise completes
    assert!(!scheduler.is_running(&raise));
    cycles(&clock, &scheduler, 1); // the mechanism is idle at the start of this cycle
    assert!(scheduler.is_running(&hold));
    let events = take(&log);
    let tail: Vec<&str> = events.iter().map(String::as_str).skip(3).collect();
    assert_eq!(
        tail,
        [
            "Scheduled raise",
            "Interrupted hold by raise",
            "Canceled hold",
            "Mounted raise",
            "Yielded raise",
            "Mounted raise",
            "Completed raise",
            "Scheduled hold",
            "Mounted hold",
            "Yielded hold"
        ]
    );
}

#[test]
fn default_command_is_not_queued_over_a_queued_command() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let hold = parked_on(&arm, "hold", 0);
    let user = parked_on(&arm, "user", 0);
    arm.set_default_command(&hold).unwrap();
    scheduler.schedule(&user);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&user));
    assert!(!scheduler.is_running(&hold));
}

#[test]
fn default_command_must_require_exactly_its_mechanism() {
    let (_clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let wrist = Mechanism::new(&scheduler, "wrist");
    let both = Command::requiring(&arm)
        .requiring(&wrist)
        .executing(|_co| async {})
        .named("both");
    let err = arm.set_default_command(&both).unwrap_err();
    assert_eq!(
        err.to_string(),
        "default command `both` for mechanism `arm` must require exactly that mechanism (it requires [arm, wrist])"
    );
    let other = wrist.run(|_co| async {}).named("w");
    assert!(arm.set_default_command(&other).is_err());
    assert!(
        arm.default_command().is_none(),
        "a rejected default leaves none set"
    );
}

#[test]
fn idle_parks_at_the_lowest_priority() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let idle = arm.idle();
    scheduler.schedule(&idle);
    cycles(&clock, &scheduler, 3);
    assert!(scheduler.is_running(&idle));
    let anything = parked_on(&arm, "anything", i32::MIN);
    assert_eq!(scheduler.schedule(&anything), ScheduleResult::Success);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&anything));
}

#[test]
fn a_mechanism_of_another_scheduler_is_refused_with_a_clear_panic() {
    let (_clock, scheduler) = setup();
    let (_c2, other) = setup();
    let foreign = Mechanism::new(&other, "foreign arm");
    let c = parked_on(&foreign, "c", 0);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scheduler.schedule(&c)))
        .unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("requires mechanism `foreign arm`, which belongs to another scheduler")
    );
    assert!(scheduler.queued().is_empty(), "nothing half-created");
}
