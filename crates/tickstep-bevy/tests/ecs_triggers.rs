//! Triggers on ECS state (docs/bevy.md §6.7–§6.10): a command trigger whose condition is a Bevy
//! system with a `Query`, run with the world before each commands cycle, in virtual time.

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bevy_app::App;
use bevy_ecs::error::{BevyError, ErrorContext, FallbackErrorHandler};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SystemCondition;
use common::{app, frames};
use tickstep_bevy::TickstepCommands;
use tickstep_commands::Command;

#[derive(Component)]
struct Health(u32);

#[derive(Component)]
struct Hero;

/// The condition under test: a system with a `Query`.
fn wounded(heroes: Query<'_, '_, &Health, With<Hero>>) -> bool {
    heroes.iter().any(|h| h.0 < 30)
}

/// A command that parks until canceled.
fn parked(name: &str) -> Command {
    Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named(name)
}

fn is_running(app: &App, command: &Command) -> bool {
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .is_running(command)
}

/// An app past its first frame, which moves no time and so runs no fixed step: from here on each
/// 20 ms frame is one commands cycle.
fn started_app() -> (App, tickstep_kernel::ManualClock) {
    let (mut app, clock) = app();
    frames(&mut app, &clock, 1);
    (app, clock)
}

fn set_health(app: &mut App, hero: Entity, health: u32) {
    app.world_mut().get_mut::<Health>(hero).unwrap().0 = health;
}

#[test]
fn while_true_on_a_query_schedules_the_command_when_the_state_holds_and_cancels_it_when_not() {
    let (mut app, clock) = app();
    let hero = app.world_mut().spawn((Hero, Health(100))).id();
    // A wounded entity that is not a hero: the query's filter leaves it out.
    app.world_mut().spawn(Health(5));
    let heal = parked("heal");
    app.world()
        .non_send::<TickstepCommands>()
        .trigger(wounded)
        .while_true(&heal);

    frames(&mut app, &clock, 3);
    assert!(!is_running(&app, &heal), "healthy: nothing scheduled");

    set_health(&mut app, hero, 10);
    frames(&mut app, &clock, 1);
    assert!(is_running(&app, &heal), "wounded: heal scheduled");
    frames(&mut app, &clock, 3);
    assert!(is_running(&app, &heal), "still wounded: heal goes on");

    set_health(&mut app, hero, 90);
    frames(&mut app, &clock, 1);
    assert!(!is_running(&app, &heal), "healed: heal canceled");

    // The entity leaving the query is a change of state too.
    set_health(&mut app, hero, 10);
    frames(&mut app, &clock, 1);
    assert!(is_running(&app, &heal));
    app.world_mut().despawn(hero);
    frames(&mut app, &clock, 1);
    assert!(!is_running(&app, &heal), "no wounded hero left");
}

#[test]
fn the_condition_reads_the_world_before_the_commands_run_in_the_same_cycle() {
    let (mut app, clock) = app();
    let hero = app.world_mut().spawn((Hero, Health(100))).id();
    let started = Rc::new(Cell::new(0));
    let s = started.clone();
    let alarm = Command::no_requirements()
        .executing(move |co| {
            let s = s.clone();
            async move {
                s.set(s.get() + 1);
                co.park().await;
            }
        })
        .named("alarm");
    app.world()
        .non_send::<TickstepCommands>()
        .trigger(wounded)
        .on_true(&alarm);
    frames(&mut app, &clock, 2);
    assert_eq!(started.get(), 0);
    // Changed between frames; the next frame's one fixed step sees it and the command's body
    // runs in that same cycle, not one cycle later on a stale value.
    set_health(&mut app, hero, 1);
    frames(&mut app, &clock, 1);
    assert_eq!(started.get(), 1, "started in the cycle that saw the change");
    frames(&mut app, &clock, 3);
    assert_eq!(started.get(), 1, "on_true: once per rising edge");
}

#[test]
fn bevy_run_conditions_and_their_combinators_are_conditions_too() {
    #[derive(Resource)]
    struct Alarm;
    let (mut app, clock) = app();
    app.world_mut().spawn((Hero, Health(10)));
    let lockdown = parked("lockdown");
    app.world()
        .non_send::<TickstepCommands>()
        .trigger(resource_exists::<Alarm>.and_then(wounded))
        .while_true(&lockdown);
    frames(&mut app, &clock, 2);
    assert!(!is_running(&app, &lockdown));
    app.world_mut().insert_resource(Alarm);
    frames(&mut app, &clock, 1);
    assert!(is_running(&app, &lockdown));
    app.world_mut().remove_resource::<Alarm>();
    frames(&mut app, &clock, 1);
    assert!(!is_running(&app, &lockdown));
}

static HANDLED: AtomicUsize = AtomicUsize::new(0);

fn count_failure(_: BevyError, context: ErrorContext) {
    assert_eq!(context.kind(), "run condition");
    HANDLED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn a_condition_that_cannot_run_is_false_and_a_failed_one_goes_to_the_worlds_error_handler() {
    #[derive(Resource)]
    struct Missing;
    let (mut app, clock) = started_app();
    app.world_mut()
        .insert_resource(FallbackErrorHandler(count_failure));
    let (on_single, on_missing) = (parked("on_single"), parked("on_missing"));
    {
        let commands = app.world().non_send::<TickstepCommands>();
        // No hero: `Single` skips the system, as it skips a run condition.
        commands
            .trigger(|_: Single<'_, '_, &Hero>| true)
            .while_true(&on_single);
        // No resource: the system fails; Bevy hands that to the world's fallback handler.
        commands
            .trigger(|_: Res<'_, Missing>| true)
            .while_true(&on_missing);
    }
    frames(&mut app, &clock, 2);
    assert!(!is_running(&app, &on_single));
    assert!(!is_running(&app, &on_missing));
    assert_eq!(HANDLED.load(Ordering::SeqCst), 2, "one failure per cycle");

    app.world_mut().spawn((Hero, Health(50)));
    app.world_mut().insert_resource(Missing);
    frames(&mut app, &clock, 1);
    assert!(is_running(&app, &on_single));
    assert!(is_running(&app, &on_missing));
    assert_eq!(HANDLED.load(Ordering::SeqCst), 2);
}

#[test]
fn a_condition_no_trigger_reads_any_more_is_dropped() {
    let (mut app, clock) = started_app();
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let counted = move |heroes: Query<'_, '_, &Health>| {
        r.fetch_add(1, Ordering::SeqCst);
        heroes.is_empty()
    };
    // Something keeps the commands cycle running throughout.
    let busy = parked("busy");
    let watch = parked("watch");
    let trigger = {
        let commands = app.world().non_send::<TickstepCommands>();
        commands.scheduler().schedule(&busy);
        commands.trigger(counted)
    };
    trigger.while_true(&watch);
    let derived = trigger.not();
    frames(&mut app, &clock, 3);
    assert_eq!(runs.load(Ordering::SeqCst), 3, "once per cycle");
    assert!(is_running(&app, &watch));

    // The binding and every handle gone but a derived trigger: still read, still run.
    trigger.unbind();
    drop(trigger);
    frames(&mut app, &clock, 2);
    assert_eq!(runs.load(Ordering::SeqCst), 5, "a derived trigger keeps it");

    // Nothing can read its value any more: the condition runs no more.
    drop(derived);
    frames(&mut app, &clock, 3);
    assert_eq!(runs.load(Ordering::SeqCst), 5, "dropped");
    assert!(is_running(&app, &busy), "the cycle went on");
}

#[test]
fn a_condition_on_changed_sees_each_change_once_since_its_previous_run() {
    let (mut app, clock) = started_app();
    let hero = app.world_mut().spawn((Hero, Health(100))).id();
    let alerts = Rc::new(Cell::new(0));
    let a = alerts.clone();
    // Each alert runs one cycle, so every rising edge of the condition starts a new one.
    let alert = Command::no_requirements()
        .executing(move |co| {
            let a = a.clone();
            async move {
                a.set(a.get() + 1);
                co.yield_now().await;
            }
        })
        .named("alert");
    let busy = parked("busy");
    {
        let commands = app.world().non_send::<TickstepCommands>();
        commands.scheduler().schedule(&busy);
        commands
            .trigger(|changed: Query<'_, '_, (), Changed<Health>>| !changed.is_empty())
            .on_true(&alert);
    }
    // The hero's spawn is a change its first run sees; then nothing changes.
    frames(&mut app, &clock, 4);
    assert_eq!(alerts.get(), 1, "the spawn, seen once");
    set_health(&mut app, hero, 90);
    frames(&mut app, &clock, 3);
    assert_eq!(alerts.get(), 2, "one change, seen once");
    // A change, a cycle with none (the condition falls), another change: two rising edges.
    set_health(&mut app, hero, 80);
    frames(&mut app, &clock, 2);
    set_health(&mut app, hero, 70);
    frames(&mut app, &clock, 2);
    assert_eq!(alerts.get(), 4, "each change seen in its own cycle");
}
