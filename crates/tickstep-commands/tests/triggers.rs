//! Triggers, bindings and scopes.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{CYCLE, counter, cycles, parked, parked_on, record, setup, strs, take, yields};
use tickstep_commands::{Command, CommandScheduler, Mechanism, OpMode, Trigger, TriggerError};

/// A trigger on a shared boolean the test flips.
fn button(scheduler: &CommandScheduler) -> (Rc<Cell<bool>>, Trigger) {
    let level = Rc::new(Cell::new(false));
    let l = level.clone();
    (level, Trigger::new(scheduler, move || l.get()))
}

/// Counts how many times a command completed or started (by Mounted events of its first poll).
fn completions(scheduler: &CommandScheduler, name: &'static str) -> Rc<Cell<u32>> {
    let n = Rc::new(Cell::new(0));
    let m = n.clone();
    scheduler.on_event(move |e| {
        if e.kind.label() == "Scheduled" && &*e.name == name {
            m.set(m.get() + 1);
        }
    });
    n
}

#[test]
fn trigger_edges_on_the_first_poll() {
    let (clock, scheduler) = setup();
    let high = parked("high");
    let low = parked("low");
    let while_low = parked("while-low");
    Trigger::new(&scheduler, || true).on_true(&high);
    Trigger::new(&scheduler, || false).on_false(&low);
    Trigger::new(&scheduler, || false).while_false(&while_low);
    cycles(&clock, &scheduler, 1);
    assert!(
        scheduler.is_running(&high),
        "true on the first poll is a rising edge"
    );
    assert!(
        !scheduler.is_running(&low),
        "false on the first poll is not a falling edge"
    );
    assert!(
        scheduler.is_running(&while_low),
        "a level binding follows the level"
    );
}

#[test]
fn on_true_schedules_once_per_rising_edge() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "blip");
    let blip = yields("blip", 0);
    t.on_true(&blip);
    for pressed in [false, true, true, true, false, true] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
    }
    assert_eq!(starts.get(), 2);
}

#[test]
fn on_false_schedules_on_each_falling_edge() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "blip");
    t.on_false(&yields("blip", 0));
    for pressed in [true, false, false, true, false] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
    }
    assert_eq!(starts.get(), 2);
}

#[test]
fn while_true_runs_while_held_and_is_not_restarted_after_ending() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "short");
    let short = yields("short", 1);
    let long = parked("long");
    t.while_true(&short).while_true(&long);
    level.set(true);
    cycles(&clock, &scheduler, 4);
    assert_eq!(starts.get(), 1);
    assert!(scheduler.is_running(&long));
    level.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&long));
}

#[test]
fn while_false_cancels_on_the_rising_edge() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let c = parked("c");
    t.while_false(&c);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c));
    level.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c));
    level.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c));
}

#[test]
fn toggle_on_true_starts_then_cancels_on_successive_presses() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let c = parked("c");
    t.toggle_on_true(&c);
    let mut running = Vec::new();
    for pressed in [true, false, true, false, true] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
        running.push(scheduler.is_running(&c));
    }
    assert_eq!(running, [true, true, false, false, true]);
}

#[test]
fn toggle_on_false_toggles_on_releases() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let c = parked("c");
    t.toggle_on_false(&c);
    let mut running = Vec::new();
    for pressed in [false, true, false, true, false] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
        running.push(scheduler.is_running(&c));
    }
    assert_eq!(running, [false, false, true, true, false]);
}

#[test]
fn retry_while_true_retries_a_rejected_command_until_it_gets_in() {
    let (clock, scheduler) = setup();
    let arm = Mechanism::new(&scheduler, "arm");
    let owner = arm
        .run(|co| async move {
            co.wait(CYCLE * 2).await;
        })
        .with_priority(5)
        .named("owner");
    let wants = parked_on(&arm, "wants", 0);
    scheduler.schedule(&owner);
    cycles(&clock, &scheduler, 1);
    let (level, t) = button(&scheduler);
    t.retry_while_true(&wants);
    level.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(
        !scheduler.is_running(&wants),
        "rejected while the owner runs"
    );
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&owner));
    assert!(
        scheduler.is_running(&wants),
        "retried once the mechanism was free"
    );
    level.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&wants));
}

#[test]
fn retry_while_true_restarts_a_command_that_ends() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "blip");
    t.retry_while_true(&yields("blip", 0));
    level.set(true);
    cycles(&clock, &scheduler, 3);
    assert_eq!(starts.get(), 3);
}

#[test]
fn retry_while_false_mirrors_retry_while_true() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "blip");
    t.retry_while_false(&yields("blip", 0));
    cycles(&clock, &scheduler, 2);
    level.set(true);
    cycles(&clock, &scheduler, 2);
    assert_eq!(starts.get(), 2);
}

#[test]
fn and_or_not_combine_signals() {
    let (clock, scheduler) = setup();
    let (a, ta) = button(&scheduler);
    let (b, tb) = button(&scheduler);
    let both = parked("both");
    let either = parked("either");
    let neither = parked("neither");
    ta.and(&tb).while_true(&both);
    ta.or(&tb).while_true(&either);
    ta.or(&tb).not().while_true(&neither);
    let mut seen = Vec::new();
    for (x, y) in [(false, false), (true, false), (true, true), (false, true)] {
        a.set(x);
        b.set(y);
        cycles(&clock, &scheduler, 1);
        seen.push((
            scheduler.is_running(&both),
            scheduler.is_running(&either),
            scheduler.is_running(&neither),
        ));
    }
    assert_eq!(
        seen,
        [
            (false, false, true),
            (false, true, false),
            (true, true, false),
            (false, true, false)
        ]
    );
}

#[test]
fn a_shared_trigger_is_evaluated_once_per_cycle() {
    let (clock, scheduler) = setup();
    let (calls, bump) = counter();
    let t = Trigger::new(&scheduler, move || {
        bump();
        false
    });
    let derived = t.not().and(&t);
    t.on_true(&parked("a")).on_false(&parked("b"));
    derived.on_true(&parked("c"));
    cycles(&clock, &scheduler, 3);
    assert_eq!(calls.get(), 3);
}

#[test]
fn debounce_waits_for_a_steady_signal_on_the_clock() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let c = parked("c");
    t.debounce(Duration::from_millis(50)).while_true(&c);
    level.set(true);
    cycles(&clock, &scheduler, 2); // 0 ms, 20 ms
    level.set(false); // a bounce resets the timer
    cycles(&clock, &scheduler, 1);
    level.set(true);
    cycles(&clock, &scheduler, 3); // 60, 80, 100 ms: steady for 40 ms
    assert!(!scheduler.is_running(&c));
    cycles(&clock, &scheduler, 1); // 120 ms: steady for 60 ms
    assert!(scheduler.is_running(&c));
    level.set(false);
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c), "falling edges are not debounced");
}

#[test]
fn rising_and_falling_edges_last_one_cycle() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let up = parked("up");
    let down = parked("down");
    t.rising_edge().while_true(&up);
    t.falling_edge().while_true(&down);
    let mut seen = Vec::new();
    for pressed in [false, true, true, false, false] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
        seen.push((scheduler.is_running(&up), scheduler.is_running(&down)));
    }
    assert_eq!(
        seen,
        [
            (false, false),
            (true, false),
            (false, false),
            (false, true),
            (false, false)
        ]
    );
}

#[test]
fn multi_press_fires_on_the_nth_press_within_the_window() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "triple");
    t.multi_press(3, Duration::from_millis(150))
        .unwrap()
        .on_true(&yields("triple", 0));
    // Three presses 40 ms apart: fires on the third.
    for pressed in [true, false, true, false, true, true, false] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
    }
    assert_eq!(starts.get(), 1);
    // Presses 100 ms apart: never three inside one 150 ms window.
    for pressed in [
        true, false, false, false, false, true, false, false, false, false, true, false,
    ] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
    }
    assert_eq!(starts.get(), 1);
}

#[test]
fn multi_press_of_one_is_every_press() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let starts = completions(&scheduler, "tap");
    t.multi_press(1, Duration::from_millis(1))
        .unwrap()
        .on_true(&yields("tap", 0));
    for pressed in [true, false, true, false] {
        level.set(pressed);
        cycles(&clock, &scheduler, 1);
    }
    assert_eq!(starts.get(), 2);
}

#[test]
fn multi_press_rejects_zero_and_negative_counts_and_a_zero_window() {
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || true);
    let w = Duration::from_millis(300);
    assert_eq!(
        t.multi_press(0, w).unwrap_err(),
        TriggerError::InvalidPressCount { count: 0 }
    );
    let err = t.multi_press(-2, w).unwrap_err();
    assert_eq!(
        err.to_string(),
        "multi_press needs a press count of at least 1 (got -2)"
    );
    let err = t.multi_press(2, Duration::ZERO).unwrap_err();
    assert_eq!(
        err.to_string(),
        "multi_press needs a window longer than zero (got 0ns)"
    );
    assert_eq!(scheduler.telemetry().bindings, 0, "nothing bound on error");
}

#[test]
fn unbind_removes_the_bindings_and_cancels_their_commands() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    let c = parked("c");
    t.while_true(&c);
    level.set(true);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c));
    t.unbind();
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&c));
    assert_eq!(scheduler.telemetry().bindings, 0);
    level.set(false);
    level.set(true);
    cycles(&clock, &scheduler, 2);
    assert!(!scheduler.is_running(&c));
}

#[test]
fn bindings_made_inside_a_command_die_with_it_and_cancel_their_commands() {
    let (clock, scheduler) = setup();
    let log = record(&scheduler);
    let bound = parked("bound");
    let b = bound.clone();
    let owner = Command::no_requirements()
        .executing(move |co| {
            let b = b.clone();
            async move {
                Trigger::new(&co.scheduler(), || true).on_true(&b);
                co.wait(CYCLE * 2).await;
            }
        })
        .named("owner");
    scheduler.schedule(&owner);
    cycles(&clock, &scheduler, 2);
    assert!(scheduler.is_running(&bound), "the scoped binding fired");
    assert_eq!(scheduler.telemetry().bindings, 1);
    cycles(&clock, &scheduler, 1); // owner completes
    assert!(!scheduler.is_running(&owner));
    cycles(&clock, &scheduler, 1); // cleanup phase sweeps the dead scope
    assert!(!scheduler.is_running(&bound));
    assert_eq!(scheduler.telemetry().bindings, 0);
    let events = take(&log);
    assert_eq!(
        &events[events.len() - 2..],
        strs(&["Completed owner", "Canceled bound"])
    );
}

#[test]
fn sideloads_made_inside_a_command_die_with_it() {
    let (clock, scheduler) = setup();
    let (ticks, bump) = counter();
    let owner = Command::no_requirements()
        .executing(move |co| {
            let bump = bump.clone();
            async move {
                co.scheduler().add_periodic(bump);
                co.wait(CYCLE * 2).await;
            }
        })
        .named("owner");
    scheduler.schedule(&owner);
    cycles(&clock, &scheduler, 3); // sideload runs in cycles 2 and 3; owner ends in cycle 3
    assert_eq!(ticks.get(), 2);
    cycles(&clock, &scheduler, 3);
    assert_eq!(ticks.get(), 2);
    assert_eq!(scheduler.telemetry().sideloads, 0);
}

#[test]
fn opmode_bindings_die_when_the_opmode_changes() {
    let (clock, scheduler) = setup();
    let teleop = OpMode::new(2);
    let auto = OpMode::new(1);
    let global = parked("global");
    let scoped = parked("scoped");
    Trigger::new(&scheduler, || true).while_true(&global);
    scheduler.set_opmode(Some(teleop));
    Trigger::new(&scheduler, || true).while_true(&scoped);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&scoped) && scheduler.is_running(&global));
    scheduler.set_opmode(Some(auto));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&scoped));
    assert!(scheduler.is_running(&global));
    assert_eq!(scheduler.telemetry().bindings, 1);
}

#[test]
fn global_bindings_do_not_accumulate_an_entry_per_schedule() {
    let (clock, scheduler) = setup();
    let (level, t) = button(&scheduler);
    t.on_true(&yields("blip", 0));
    for i in 0..2_000 {
        level.set(i % 2 == 0);
        cycles(&clock, &scheduler, 1);
    }
    let telemetry = scheduler.telemetry();
    assert_eq!(telemetry.bindings, 1);
    assert!(telemetry.queued.is_empty() && telemetry.running.is_empty());
}

#[test]
fn a_bound_command_that_fails_names_the_binding_site() {
    let (clock, scheduler) = setup();
    let failing = Command::no_requirements()
        .executing_fallible(|_co| async { Err("jammed".into()) })
        .named("failing");
    let line = line!() + 1;
    Trigger::new(&scheduler, || true).on_true(&failing);
    let err = scheduler.run().unwrap_err();
    assert_eq!(err.scheduled_at.line(), line);
    clock.advance(CYCLE);
}

#[test]
fn a_trigger_signal_may_call_back_into_the_scheduler() {
    let (clock, scheduler) = setup();
    let other = parked("other");
    let s2 = scheduler.clone();
    let o = other.clone();
    let c = parked("c");
    Trigger::new(&scheduler, move || {
        s2.schedule(&o);
        !s2.queued().is_empty()
    })
    .on_true(&c);
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&c) && scheduler.is_running(&other));
}

#[test]
fn a_binding_made_during_the_trigger_phase_is_polled_next_cycle() {
    let (clock, scheduler) = setup();
    let late = parked("late");
    let s2 = scheduler.clone();
    let l = late.clone();
    let made = Rc::new(Cell::new(false));
    let m = made.clone();
    Trigger::new(&scheduler, move || {
        if !m.replace(true) {
            Trigger::new(&s2, || true).on_true(&l);
        }
        false
    })
    .on_true(&parked("unused"));
    cycles(&clock, &scheduler, 1);
    assert!(!scheduler.is_running(&late));
    cycles(&clock, &scheduler, 1);
    assert!(scheduler.is_running(&late));
}

#[test]
fn a_dying_binding_does_not_cancel_an_instance_it_did_not_schedule() {
    let (clock, scheduler) = setup();
    let shared = parked("shared");
    scheduler.schedule(&shared);
    cycles(&clock, &scheduler, 1);
    let s = shared.clone();
    let owner = Command::no_requirements()
        .executing(move |co| {
            let s = s.clone();
            async move {
                // Fires on its first poll, but `shared` is already running: AlreadyRunning.
                Trigger::new(&co.scheduler(), || true).on_true(&s);
                co.wait(CYCLE).await;
            }
        })
        .named("owner");
    scheduler.schedule(&owner);
    cycles(&clock, &scheduler, 4);
    assert!(!scheduler.is_running(&owner));
    assert!(scheduler.is_running(&shared));
}

#[test]
fn multi_press_in_seconds_rejects_negative_nan_infinite_and_zero_windows() {
    let (_clock, scheduler) = setup();
    let t = Trigger::new(&scheduler, || false);
    for bad in [
        -1.0,
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
    ] {
        assert!(
            matches!(
                t.multi_press_seconds(2, bad),
                Err(TriggerError::InvalidWindowSeconds { .. })
            ),
            "{bad} must be refused"
        );
    }
    assert_eq!(
        t.multi_press_seconds(-1, 0.5).unwrap_err(),
        TriggerError::InvalidPressCount { count: -1 }
    );
    assert!(t.multi_press_seconds(3, 0.25).is_ok());
}
