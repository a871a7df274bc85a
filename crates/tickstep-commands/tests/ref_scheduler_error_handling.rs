//! The reference suite's `SchedulerErrorHandlingTests`, ported (behaviour, not text): one test per
//! reference test, named after it. The reference rewrites the exception's stack trace to show
//! where the command was bound; here [`RunError::scheduled_at`] names that place (for a body
//! returning `Err`), and a panic is resumed as it was.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::*;
use tickstep_commands::{Command, Mechanism, Trigger};

#[test]
fn error_detection() {
    let (_clock, scheduler) = setup();
    let mech = Mechanism::new(&scheduler, "X");
    let command = Command::requiring(&mech)
        .executing_fallible(|_co| async { Err("The exception".into()) })
        .named("Bad Behavior");
    let line = line!() + 1;
    Trigger::new(&scheduler, || true).on_true(&command);
    let error = scheduler.run().unwrap_err();
    assert_eq!(error.source.to_string(), "The exception");
    assert_eq!(error.command.as_ref(), "Bad Behavior");
    assert_eq!(error.scheduled_at.file(), file!());
    assert_eq!(
        error.scheduled_at.line(),
        line,
        "where the command was bound"
    );
}

#[test]
fn nested_error_detection() {
    let (clock, scheduler) = setup();
    let sched = scheduler.clone();
    let throws = Command::no_requirements()
        .executing(|_co| async {
            let empty: Vec<u8> = Vec::new();
            let index = std::hint::black_box(usize::MAX);
            let _ = empty[index];
        })
        .named("Throws IndexOutOfBounds");
    let with_trigger = Command::no_requirements()
        .executing(move |co| {
            Trigger::new(&sched, || true).on_true(&throws);
            async move {
                co.park().await;
            }
        })
        .named("Schedules With Trigger");
    let command = Command::no_requirements()
        .executing(move |co| {
            let w = with_trigger.clone();
            async move {
                let _ = co.await_cmd(&w).await;
            }
        })
        .named("Schedules Directly");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    let panic = catch_unwind(AssertUnwindSafe(|| scheduler.run())).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("index out of bounds"), "{message}");
    assert!(
        !scheduler.is_running(&command),
        "the whole composition was canceled"
    );
}

#[test]
fn command_encountering_error_cancels_children() {
    let (_clock, scheduler) = setup();
    let child = parked("Child 1");
    let c = child.clone();
    let command = Command::no_requirements()
        .executing_fallible(move |co| {
            let c = c.clone();
            async move {
                co.fork([&c])?;
                Err("The exception".into())
            }
        })
        .named("Bad Behavior");
    scheduler.schedule(&command);
    assert!(scheduler.run().is_err());
    assert!(!scheduler.is_running(&command) && !scheduler.is_scheduled(&command));
    assert!(!scheduler.is_running(&child) && !scheduler.is_scheduled(&child));
}

#[test]
fn child_command_encountering_error_cancels_parent() {
    let (_clock, scheduler) = setup();
    let child = Command::no_requirements()
        .executing_fallible(|_co| async { Err("The exception".into()) })
        .named("Child 1");
    let c = child.clone();
    let command = Command::no_requirements()
        .executing(move |co| {
            let c = c.clone();
            async move {
                let _ = co.await_cmd(&c).await;
                co.park().await;
            }
        })
        .named("Parent");
    scheduler.schedule(&command);
    let error = scheduler.run().unwrap_err();
    assert_eq!(error.command.as_ref(), "Child 1");
    assert!(!scheduler.is_running(&command));
    assert!(!scheduler.is_running(&child));
}

#[test]
fn child_command_encountering_error_after_remount_cancels_parent() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let child = Command::no_requirements()
        .executing_fallible(|co| async move {
            co.yield_now().await;
            Err("The exception".into())
        })
        .named("Child 1");
    let c = child.clone();
    let command = Command::no_requirements()
        .executing(move |co| {
            let c = c.clone();
            async move {
                let _ = co.await_cmd(&c).await;
                co.park().await;
            }
        })
        .named("Parent");
    scheduler.schedule(&command);
    cycles(&clock, &scheduler, 1);
    let error = scheduler.run().unwrap_err();
    assert_eq!(error.source.to_string(), "The exception");
    assert!(!scheduler.is_running(&command));
    assert!(!scheduler.is_running(&child));
    assert_eq!(
        take(&log),
        strs(&[
            "Scheduled Parent",
            "Mounted Parent",
            "Scheduled Child 1",
            "Mounted Child 1",
            "Yielded Child 1",
            "Yielded Parent",
            "Mounted Child 1",
            "CompletedWithError Child 1",
            "Canceled Parent",
        ])
    );
}
