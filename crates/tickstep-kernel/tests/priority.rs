//! Priorities: the drain order, FIFO within a level, and the numeric conversion.

mod common;

use common::{Log, SECOND, server};
use tickstep_kernel::{Priority, ScheduleError};

#[test]
fn queues_drain_kernel_first_whatever_the_schedule_order() {
    let (_clock, sched) = server();
    let log = Log::new();
    for (name, p) in [
        ("background", Priority::Background),
        ("low", Priority::Low),
        ("normal", Priority::Normal),
        ("high", Priority::High),
        ("kernel", Priority::Kernel),
    ] {
        let _ = sched.schedule(log.task(name), p);
    }
    sched.step_with_budget(SECOND);
    assert_eq!(
        log.take(),
        ["kernel", "high", "normal", "low", "background"]
    );
}

#[test]
fn each_queue_is_fifo_within_its_priority() {
    let (_clock, sched) = server();
    let log = Log::new();
    for i in 0..5 {
        let _ = sched.schedule(log.task(format!("n{i}")), Priority::Normal);
    }
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["n0", "n1", "n2", "n3", "n4"]);
}

#[test]
fn fractional_priorities_are_floored_so_2_5_runs_at_high() {
    assert_eq!(Priority::from_number(2.5), Ok(Priority::High));
    assert_eq!(Priority::from_number(4.99), Ok(Priority::Low));
    assert_eq!(Priority::try_from(1.0), Ok(Priority::Kernel));
}

#[test]
fn out_of_range_priorities_are_clamped_to_1_through_5() {
    assert_eq!(Priority::from_number(0.0), Ok(Priority::Kernel));
    assert_eq!(Priority::from_number(-7.5), Ok(Priority::Kernel));
    assert_eq!(Priority::from_number(9.0), Ok(Priority::Background));
    assert_eq!(
        Priority::from_number(f64::INFINITY),
        Ok(Priority::Background)
    );
    assert_eq!(
        Priority::from_number(f64::NEG_INFINITY),
        Ok(Priority::Kernel)
    );
    assert_eq!(Priority::from_level(i64::MAX), Priority::Background);
}

#[test]
fn a_nan_priority_is_an_error_naming_the_value() {
    let err = Priority::from_number(f64::NAN).unwrap_err();
    assert!(matches!(err, ScheduleError::InvalidPriority { value } if value.is_nan()));
    assert!(err.to_string().contains("(got NaN)"), "{err}");
}

#[test]
fn a_fractional_priority_schedules_into_the_floored_queue() {
    let (_clock, sched) = server();
    let log = Log::new();
    let _ = sched.schedule(log.task("normal"), Priority::Normal);
    let _ = sched.schedule(
        log.task("two and a half"),
        Priority::from_number(2.5).unwrap(),
    );
    assert_eq!(sched.queue_depths().queues, [0, 1, 1, 0, 0]);
    sched.step_with_budget(SECOND);
    assert_eq!(log.take(), ["two and a half", "normal"]);
}
