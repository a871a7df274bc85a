//! Idle cycles (docs/commands.md §2.4): what makes the next cycle busy, and what an idle `run()`
//! still does. Time from the `ManualClock`.

mod common;

use common::{CYCLE, cycles, parked, record, setup, take};
use tickstep_commands::{Command, Mechanism, OpMode, Trigger};

#[test]
fn a_fresh_scheduler_is_idle_and_an_idle_run_still_counts_the_cycle() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    assert!(scheduler.is_idle());
    cycles(&clock, &scheduler, 3);
    let t = scheduler.telemetry();
    assert_eq!(
        t.cycle, 3,
        "docs/commands.md §2.4: an idle run() counts itself"
    );
    assert_eq!(t.last_run_time, std::time::Duration::ZERO);
    assert!(scheduler.is_idle());
    assert!(take(&log).is_empty(), "an idle cycle emits nothing");
}

#[test]
fn a_command_keeps_the_scheduler_busy_from_schedule_to_its_end() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let once = Command::no_requirements()
        .executing(|_co| async {})
        .named("once");
    scheduler.schedule(&once);
    assert!(!scheduler.is_idle(), "queued");
    scheduler.run().unwrap();
    assert_eq!(
        take(&log),
        ["Scheduled once", "Mounted once", "Completed once"]
    );
    assert!(scheduler.is_idle(), "ended and freed within the cycle");

    let p = parked("p");
    scheduler.schedule(&p);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_idle(), "running");
    scheduler.cancel(&p);
    assert!(
        !scheduler.is_idle(),
        "canceled outside run(): freed by the next cycle"
    );
    scheduler.run().unwrap();
    assert!(scheduler.is_idle());
    assert_eq!(scheduler.telemetry().cycle, 4);
}

#[test]
fn a_binding_a_sideload_and_a_default_command_each_keep_every_cycle_busy() {
    let (clock, scheduler) = setup();
    let c = parked("c");
    let _trigger = Trigger::new(&scheduler, || false).on_true(&c);
    assert!(
        !scheduler.is_idle(),
        "a bound trigger is polled every cycle"
    );

    let (clock2, sideloaded) = setup();
    sideloaded.add_periodic(|| {});
    cycles(&clock2, &sideloaded, 1);
    assert!(!sideloaded.is_idle(), "a sideload is polled every cycle");

    let (_clock3, with_default) = setup();
    let arm = Mechanism::new(&with_default, "arm");
    let rest = arm.idle();
    arm.set_default_command(&rest).unwrap();
    assert!(
        !with_default.is_idle(),
        "the default is queued by the next cycle"
    );
    with_default.run().unwrap();
    assert!(with_default.is_running(&rest));
    assert!(!with_default.is_idle());

    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_idle());
}

#[test]
fn an_opmode_change_is_swept_by_the_next_cycle_then_the_scheduler_is_idle_again() {
    let (clock, scheduler) = setup();
    scheduler.set_opmode(Some(OpMode::new(1)));
    assert!(
        !scheduler.is_idle(),
        "the opmode change waits for its sweep"
    );
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_idle());
    clock.advance(CYCLE);
}
