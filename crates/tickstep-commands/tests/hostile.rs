//! What a hostile or careless user might do: extremes, recursion, deep nesting, odd payloads.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{cycles, parked, parked_on, record, setup, take, yields};
use tickstep_commands::{Command, EventKind, Mechanism, ScheduleResult, Trigger};

#[test]
fn extreme_priorities_follow_the_same_rules() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let max1 = parked_on(&arm, "max1", i32::MAX);
    let max2 = parked_on(&arm, "max2", i32::MAX);
    let min = parked_on(&arm, "min", i32::MIN);
    scheduler.schedule(&max1);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        scheduler.schedule(&max2),
        ScheduleResult::Success,
        "a tie at the top"
    );
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&max2));
    assert_eq!(
        scheduler.schedule(&min),
        ScheduleResult::LowerPriorityThanRunning {
            running: "max2".into(),
            running_priority: i32::MAX,
            priority: i32::MIN
        }
    );
}

#[test]
fn a_command_scheduling_itself_gets_already_running() {
    let (clock, scheduler) = setup();
    let me: Rc<RefCell<Option<Command>>> = Rc::new(RefCell::new(None));
    let seen = Rc::new(RefCell::new(None));
    let (slot, out) = (me.clone(), seen.clone());
    let narcissus = Command::no_requirements()
        .executing(move |co| {
            let (slot, out) = (slot.clone(), out.clone());
            async move {
                let me = slot.borrow().clone().unwrap();
                *out.borrow_mut() = Some(co.scheduler().schedule(&me));
                co.yield_now().await;
            }
        })
        .named("narcissus");
    *me.borrow_mut() = Some(narcissus.clone());
    scheduler.schedule(&narcissus);
    cycles(&clock, &scheduler, 2);
    assert_eq!(seen.borrow().clone(), Some(ScheduleResult::AlreadyRunning));
    assert!(!scheduler.is_running(&narcissus));
}

/// A chain of `depth` commands, each awaiting the next; the last parks.
fn chain(depth: usize) -> Vec<Command> {
    let mut commands = vec![parked(&format!("level {depth}"))];
    for level in (0..depth).rev() {
        let next = commands.last().unwrap().clone();
        commands.push(
            Command::no_requirements()
                .executing_fallible(move |co| {
                    let next = next.clone();
                    async move { Ok(co.await_cmd(&next).await?) }
                })
                .named(format!("level {level}")),
        );
    }
    commands.reverse();
    commands
}

#[test]
fn deep_nesting_starts_in_one_cycle_and_cancels_root_first() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let levels = chain(200);
    scheduler.schedule(&levels[0]);
    cycles(&clock, &scheduler, 1);
    assert_eq!(
        scheduler.running().len(),
        201,
        "every level started within the first cycle"
    );
    cycles(&clock, &scheduler, 3);
    take(&log);
    scheduler.cancel(&levels[0]);
    let events = take(&log);
    assert_eq!(events.len(), 201);
    // Top-down, as the reference reports endings.
    assert_eq!(events[0], "Canceled level 0");
    assert_eq!(events[200], "Canceled level 200");
    assert!(scheduler.running().is_empty());
}

#[test]
fn empty_forks_and_joins_finish_at_once() {
    let (clock, scheduler) = setup();
    let c = Command::no_requirements()
        .executing_fallible(|co| async move {
            co.fork([])?;
            co.await_all([]).await?;
            co.await_any([]).await?;
            Ok(())
        })
        .named("c");
    scheduler.schedule(&c);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c));
}

#[test]
fn a_panic_with_a_non_string_payload_is_reported_and_resumed_unchanged() {
    let (_clock, scheduler) = setup();
    let events = common::record_events(&scheduler);
    let c = Command::no_requirements()
        .executing(|_co| async { std::panic::panic_any(42_u32) })
        .named("c");
    scheduler.schedule(&c);
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scheduler.run())).unwrap_err();
    assert_eq!(payload.downcast_ref::<u32>(), Some(&42));
    assert_eq!(
        events.borrow().last().unwrap().kind,
        EventKind::CompletedWithError {
            message: "Box<dyn Any>".into()
        }
    );
}

#[test]
fn a_panicking_listener_leaves_the_scheduler_consistent() {
    let (clock, scheduler) = setup();
    let armed = Rc::new(std::cell::Cell::new(true));
    let a = armed.clone();
    scheduler.on_event(move |e| {
        if a.get() && e.kind == EventKind::Scheduled {
            a.set(false);
            panic!("listener bug");
        }
    });
    let c = yields("c", 1);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scheduler.schedule(&c)));
    assert!(result.is_err());
    assert!(scheduler.is_scheduled(&c), "the schedule itself happened");
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&c));
}

#[test]
fn a_trigger_of_a_dropped_scheduler_panics_clearly() {
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || true);
    drop(scheduler);
    let c = parked("c");
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        t.on_true(&c);
    }))
    .unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    assert_eq!(message, Some("the scheduler of this trigger was dropped"));
}

#[test]
fn the_same_command_bound_to_many_triggers_runs_once() {
    let (clock, scheduler) = setup();
    let c = parked("c");
    for _ in 0..10 {
        Trigger::new(&scheduler, || true).on_true(&c);
    }
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.running().len(), 1);
}

#[test]
fn thousands_of_short_commands_reuse_their_slots() {
    let (clock, scheduler) = setup();
    let blip = yields("blip", 0);
    for _ in 0..5_000 {
        assert_eq!(scheduler.schedule(&blip), ScheduleResult::Success);
        cycles(&clock, &scheduler, 1);
    }
    let t = scheduler.telemetry();
    assert!(t.running.is_empty() && t.queued.is_empty());
    // Ids keep growing even though slots are reused.
    scheduler.schedule(&blip);
    assert_eq!(scheduler.queued()[0].id.get(), 5_001);
}

#[test]
fn a_command_live_in_a_dropped_scheduler_can_run_in_another() {
    let (clock, first) = setup();
    let c = parked("c");
    first.schedule(&c);
    cycles(&clock, &first, 1);
    drop(first);
    let (clock2, second) = setup();
    assert_eq!(second.schedule(&c), ScheduleResult::Success);
    cycles(&clock2, &second, 1);
    assert!(second.is_running(&c));
}

#[test]
fn a_command_live_in_one_scheduler_is_already_running_for_another() {
    let (clock, first) = setup();
    let (_clock2, second) = setup();
    let c = parked("c");
    first.schedule(&c);
    cycles(&clock, &first, 1);
    assert_eq!(second.schedule(&c), ScheduleResult::AlreadyRunning);
    first.cancel(&c);
    assert_eq!(second.schedule(&c), ScheduleResult::Success);
}

#[test]
fn a_body_starting_children_that_end_at_once_in_a_loop_is_stopped_by_a_typed_error() {
    use tickstep_commands::{ForkError, ScheduleResult};
    let (_clock, scheduler) = setup();
    let quick = Command::no_requirements()
        .executing(|_co| async {})
        .named("quick");
    let spinner = Command::no_requirements()
        .executing_fallible(move |co| {
            let quick = quick.clone();
            async move {
                // Never yields: without the per-run start limit this run() would not return.
                loop {
                    co.await_cmd(&quick).await?;
                }
            }
        })
        .named("spinner");
    scheduler.schedule(&spinner);
    let error = scheduler.run().unwrap_err();
    assert_eq!(error.command.as_ref(), "spinner");
    match error.source.downcast_ref::<ForkError>() {
        Some(ForkError::Rejected {
            command,
            reason: ScheduleResult::TooManyStarts { parent, limit },
        }) => {
            assert_eq!((command.as_str(), parent.as_str()), ("quick", "spinner"));
            assert_eq!(*limit, 10_000);
        }
        other => panic!("expected the start limit, got {other:?}"),
    }
    assert!(!scheduler.is_running(&spinner));
    scheduler.run().unwrap();
}
