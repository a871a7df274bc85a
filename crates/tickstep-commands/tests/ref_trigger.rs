//! The reference suite's `TriggerTest`, ported (behaviour, not text): one test per reference
//! test, named after it.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::*;
use tickstep_commands::{Command, OpMode, Trigger, TriggerError};

/// A signal that reads true once after being set, then falls back to false by itself.
fn flickering(signal: &Rc<Cell<bool>>) -> impl Fn() -> bool + 'static {
    let signal = signal.clone();
    move || signal.replace(false)
}

#[test]
fn on_true() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).on_true(&command);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    signal.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&command),
        "a falling edge does not stop it"
    );
}

#[test]
fn on_false() {
    // The reference counts a first low poll as a falling edge; tickstep does so on request.
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when)
        .first_low_is_falling_edge()
        .on_false(&command);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&command),
        "scheduled when the signal starts low"
    );
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
}

#[test]
fn while_true() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).while_true(&command);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    signal.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn while_false() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).while_false(&command);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn toggle_on_true() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).toggle_on_true(&command);
    for (value, running) in [(false, false), (true, true), (false, true), (true, false)] {
        signal.set(value);
        cycles(&clock, &scheduler, 1);
        assert_eq!(scheduler.is_running(&command), running, "signal {value}");
    }
}

#[test]
fn toggle_on_false() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when)
        .first_low_is_falling_edge()
        .toggle_on_false(&command);
    for (value, running) in [(false, true), (true, true), (false, false)] {
        signal.set(value);
        cycles(&clock, &scheduler, 1);
        assert_eq!(scheduler.is_running(&command), running, "signal {value}");
    }
}

#[test]
fn command_scoping() {
    let (clock, scheduler) = setup();
    let ran = Rc::new(Cell::new(false));
    let (signal, when) = flag();
    let r = ran.clone();
    let inner = Command::no_requirements()
        .executing(move |co| {
            let r = r.clone();
            async move {
                r.set(true);
                co.park().await;
            }
        })
        .named("Inner");
    let sched = scheduler.clone();
    let inner_c = inner.clone();
    let outer = Command::no_requirements()
        .executing(move |co| {
            Trigger::new(&sched, when.clone()).on_true(&inner_c);
            async move {
                co.park().await;
            }
        })
        .named("Outer");
    scheduler.schedule(&outer);
    cycles(&clock, &scheduler, 1);
    assert!(!ran.get());
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(ran.get(), "the binding made inside Outer ran its command");
    assert_eq!(scheduler.parent_of(&inner), Some(outer.clone()));
    ran.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(!ran.get(), "no second rising edge");
}

#[test]
fn scope_going_inactive_cancels_bound_command() {
    // tickstep has no user-defined scope objects; the scopes that exist (a command here) end
    // the same way: the binding dies and its command is canceled.
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    let sched = scheduler.clone();
    let c = command.clone();
    let scope = Command::no_requirements()
        .executing(move |co| {
            Trigger::new(&sched, when.clone()).while_true(&c);
            async move {
                co.park().await;
            }
        })
        .named("Scope");
    scheduler.schedule(&scope);
    cycles(&clock, &scheduler, 1);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    scheduler.cancel(&scope);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn binding_scopes_to_opmode_if_available() {
    let (clock, scheduler) = setup();
    scheduler.set_opmode(Some(OpMode::new(12345)));
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).while_true(&command);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    scheduler.set_opmode(None);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn trigger_from_exiting_command_does_not_fire() {
    let (clock, scheduler) = setup();
    let (condition, when) = flag();
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    let inner = Command::no_requirements()
        .executing(move |co| {
            r.set(true);
            async move {
                co.park().await;
            }
        })
        .named("Inner");
    let cond = condition.clone();
    let awaited = Command::no_requirements()
        .executing(move |co| {
            let cond = cond.clone();
            async move {
                co.yield_now().await;
                cond.set(true);
            }
        })
        .named("Awaited");
    let (sched, inner_c, awaited_c) = (scheduler.clone(), inner.clone(), awaited.clone());
    let outer = Command::no_requirements()
        .executing_fallible(move |co| {
            Trigger::new(&sched, when.clone()).on_true(&inner_c);
            let awaited = awaited_c.clone();
            async move {
                co.await_cmd(&awaited).await?;
                Ok(())
            }
        })
        .named("Outer");
    scheduler.schedule(&outer);
    cycles(&clock, &scheduler, 1);
    assert_eq!(running_names(&scheduler), ["Outer", "Awaited"]);
    cycles(&clock, &scheduler, 1);
    assert!(running_names(&scheduler).is_empty());
    assert!(condition.get());
    assert!(!ran.get());
    cycles(&clock, &scheduler, 1);
    assert!(running_names(&scheduler).is_empty());
    assert!(
        !ran.get(),
        "the binding died with Outer before it could fire"
    );
}

#[test]
fn rising_edge() {
    // The reference inspects the trigger's cached and previous signals; the values are what
    // can be observed here.
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let base = Trigger::new(&scheduler, when);
    let rising = base.rising_edge();
    let mut seen = Vec::new();
    for value in [false, true, true] {
        signal.set(value);
        scheduler.run().unwrap();
        seen.push((base.get(), rising.get()));
        clock.advance(CYCLE);
    }
    assert_eq!(seen, [(false, false), (true, true), (true, false)]);
}

#[test]
fn falling_edge() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let base = Trigger::new(&scheduler, when);
    let falling = base.falling_edge();
    let mut seen = Vec::new();
    for value in [false, true, false, false] {
        signal.set(value);
        scheduler.run().unwrap();
        seen.push((base.get(), falling.get()));
        clock.advance(CYCLE);
    }
    assert_eq!(
        seen,
        [(false, false), (true, false), (false, true), (false, false)]
    );
}

#[test]
fn ensure_bound_binds_dependencies() {
    let (clock, scheduler) = setup();
    let (a, when_a) = flag();
    let (b, when_b) = flag();
    let composed =
        Trigger::new(&scheduler, when_a).and(&Trigger::new(&scheduler, when_b).rising_edge());
    let command = parked("Cmd");
    composed.on_true(&command);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
    a.set(true);
    b.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
}

#[test]
fn ensure_bound_deeply_nested_dependencies() {
    let (clock, scheduler) = setup();
    let (a, when_a) = flag();
    let (b, when_b) = flag();
    let (c, when_c) = flag();
    let nested = Trigger::new(&scheduler, when_a).and(
        &Trigger::new(&scheduler, when_b)
            .rising_edge()
            .and(&Trigger::new(&scheduler, when_c).rising_edge()),
    );
    let command = parked("Cmd");
    nested.on_true(&command);
    cycles(&clock, &scheduler, 1);
    a.set(true);
    b.set(true);
    c.set(true);
    scheduler.run().unwrap();
    assert!(nested.get());
    assert!(scheduler.is_running(&command));
}

/// Runs one cycle and reads `t`.
fn step(
    clock: &tickstep_kernel::clock::ManualClock,
    s: &tickstep_commands::CommandScheduler,
    t: &Trigger,
) -> bool {
    s.run().unwrap();
    clock.advance(CYCLE);
    t.get()
}

#[test]
fn composed_and() {
    let (clock, scheduler) = setup();
    let a = Rc::new(Cell::new(false));
    let b = Rc::new(Cell::new(false));
    let and =
        Trigger::new(&scheduler, flickering(&a)).and(&Trigger::new(&scheduler, flickering(&b)));
    assert!(!step(&clock, &scheduler, &and));
    a.set(true);
    assert!(!step(&clock, &scheduler, &and));
    a.set(true);
    b.set(true);
    assert!(step(&clock, &scheduler, &and));
    a.set(false);
    assert!(!step(&clock, &scheduler, &and));
}

#[test]
fn composed_and_with_supplier() {
    // The reference's `and(supplier)` is `and` with a trigger made from the supplier.
    let (clock, scheduler) = setup();
    let a = Rc::new(Cell::new(false));
    let b = Rc::new(Cell::new(false));
    let and =
        Trigger::new(&scheduler, flickering(&a)).and(&Trigger::new(&scheduler, flickering(&b)));
    assert!(!step(&clock, &scheduler, &and));
    a.set(true);
    b.set(true);
    assert!(step(&clock, &scheduler, &and));
    b.set(false);
    assert!(!step(&clock, &scheduler, &and));
}

#[test]
fn composed_or() {
    let (clock, scheduler) = setup();
    let a = Rc::new(Cell::new(false));
    let b = Rc::new(Cell::new(false));
    let or = Trigger::new(&scheduler, flickering(&a)).or(&Trigger::new(&scheduler, flickering(&b)));
    assert!(!step(&clock, &scheduler, &or));
    a.set(true);
    assert!(step(&clock, &scheduler, &or));
    a.set(false);
    assert!(!step(&clock, &scheduler, &or));
    b.set(true);
    assert!(step(&clock, &scheduler, &or));
}

#[test]
fn composed_or_with_supplier() {
    let (clock, scheduler) = setup();
    let a = Rc::new(Cell::new(false));
    let b = Rc::new(Cell::new(false));
    let or = Trigger::new(&scheduler, flickering(&a)).or(&Trigger::new(&scheduler, flickering(&b)));
    assert!(!step(&clock, &scheduler, &or));
    b.set(true);
    assert!(step(&clock, &scheduler, &or));
}

#[test]
fn composed_negate() {
    let (clock, scheduler) = setup();
    let a = Rc::new(Cell::new(false));
    let negated = Trigger::new(&scheduler, flickering(&a)).not();
    assert!(step(&clock, &scheduler, &negated));
    a.set(true);
    assert!(!step(&clock, &scheduler, &negated));
}

#[test]
fn self_composition() {
    let (clock, scheduler) = setup();
    let a = Rc::new(Cell::new(false));
    let t = Trigger::new(&scheduler, flickering(&a));
    let (self_and, self_or) = (t.and(&t), t.or(&t));
    assert!(!step(&clock, &scheduler, &self_and));
    assert!(!self_or.get());
    a.set(true);
    assert!(step(&clock, &scheduler, &self_and));
    assert!(
        self_or.get(),
        "the flickering signal was read once this cycle"
    );
}

#[test]
fn complex_composition() {
    let (clock, scheduler) = setup();
    let (a, b, c) = (
        Rc::new(Cell::new(false)),
        Rc::new(Cell::new(false)),
        Rc::new(Cell::new(false)),
    );
    let composed = Trigger::new(&scheduler, flickering(&a))
        .and(&Trigger::new(&scheduler, flickering(&b)))
        .or(&Trigger::new(&scheduler, flickering(&c)).not());
    assert!(step(&clock, &scheduler, &composed));
    a.set(true);
    b.set(true);
    c.set(true);
    assert!(step(&clock, &scheduler, &composed));
    a.set(false);
    c.set(true);
    assert!(!step(&clock, &scheduler, &composed));
}

#[test]
fn trigger_unbinds_when_command_scope_inactive() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let (runs, bump) = counter();
    let inner = Command::no_requirements()
        .executing(move |_co| {
            bump();
            async {}
        })
        .named("Inner");
    let sched = scheduler.clone();
    let outer = Command::no_requirements()
        .executing(move |co| {
            Trigger::new(&sched, when.clone()).on_true(&inner);
            async move {
                co.park().await;
            }
        })
        .named("Outer");
    scheduler.schedule(&outer);
    cycles(&clock, &scheduler, 1);
    assert_eq!(scheduler.telemetry().bindings, 1);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert_eq!(runs.get(), 1);
    scheduler.cancel(&outer);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&outer));
    assert_eq!(scheduler.telemetry().bindings, 0, "the binding is gone");
}

#[test]
fn multi_press() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let presses = Trigger::new(&scheduler, when)
        .multi_press(3, Duration::from_secs(1))
        .unwrap();
    // Bound so it is read every cycle, as every reference trigger is.
    presses.while_true(&parked("held"));
    let at = |ms: u64, value: bool| {
        clock.set(tickstep_kernel::clock::Instant::ZERO + Duration::from_millis(ms));
        signal.set(value);
        scheduler.run().unwrap();
        presses.get()
    };
    assert!(!at(1000, false), "nothing yet");
    assert!(!at(1100, true), "one press");
    assert!(!at(1100, false));
    assert!(!at(1200, true), "two presses");
    assert!(!at(1200, false));
    assert!(at(1300, true), "three presses");
    assert!(at(1300, false), "stays high after release");
    assert!(at(2000, true), "four presses in the last second");
    assert!(at(2000, false));
    assert!(at(2200, false), "1.1 s expired; 1.2, 1.3, 2.0 remain");
    assert!(!at(2400, false), "only 2.0 remains");
}

#[test]
fn multi_press_zero_duration() {
    // Decision: a typed error instead of the reference's always-false trigger.
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || true);
    assert_eq!(
        t.multi_press(1, Duration::ZERO).unwrap_err(),
        TriggerError::InvalidWindow {
            window: Duration::ZERO
        }
    );
}

#[test]
fn multi_press_negative_duration() {
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || true);
    assert_eq!(
        t.multi_press_seconds(1, -1.0).unwrap_err(),
        TriggerError::InvalidWindowSeconds { seconds: -1.0 }
    );
}

#[test]
fn multi_press_zero_press_count() {
    // Decision: a typed error instead of the reference's always-true trigger.
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || false);
    assert_eq!(
        t.multi_press(0, Duration::from_secs(1)).unwrap_err(),
        TriggerError::InvalidPressCount { count: 0 }
    );
}

#[test]
fn multi_press_negative_press_count() {
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || false);
    assert_eq!(
        t.multi_press(-1, Duration::from_secs(1)).unwrap_err(),
        TriggerError::InvalidPressCount { count: -1 }
    );
}

#[test]
fn retry_while_true_long_running_canceled() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    let command = parked("Command");
    Trigger::new(&scheduler, when).retry_while_true(&command);
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    signal.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn retry_while_true_long_running_restarted() {
    let (clock, scheduler) = setup();
    let command = parked("Command");
    Trigger::new(&scheduler, || true).retry_while_true(&command);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    scheduler.cancel(&command);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
}

#[test]
fn retry_while_true_one_shot_restarted() {
    let (clock, scheduler) = setup();
    let (runs, bump) = counter();
    let oneshot = Command::no_requirements()
        .executing(move |_co| {
            bump();
            async {}
        })
        .named("One Shot");
    Trigger::new(&scheduler, || true).retry_while_true(&oneshot);
    cycles(&clock, &scheduler, 1);
    assert_eq!(runs.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert_eq!(runs.get(), 2);
}

#[test]
fn retry_while_false_long_running_canceled() {
    let (clock, scheduler) = setup();
    let (signal, when) = flag();
    signal.set(true);
    let command = parked("Command");
    Trigger::new(&scheduler, when).retry_while_false(&command);
    signal.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    signal.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&command));
}

#[test]
fn retry_while_false_long_running_restarted() {
    let (clock, scheduler) = setup();
    let command = parked("Command");
    Trigger::new(&scheduler, || false).retry_while_false(&command);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
    scheduler.cancel(&command);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&command));
}

#[test]
fn retry_while_false_one_shot_restarted() {
    let (clock, scheduler) = setup();
    let (runs, bump) = counter();
    let oneshot = Command::no_requirements()
        .executing(move |_co| {
            bump();
            async {}
        })
        .named("One Shot");
    Trigger::new(&scheduler, || false).retry_while_false(&oneshot);
    cycles(&clock, &scheduler, 1);
    assert_eq!(runs.get(), 1);
    cycles(&clock, &scheduler, 1);
    assert_eq!(runs.get(), 2);
}
