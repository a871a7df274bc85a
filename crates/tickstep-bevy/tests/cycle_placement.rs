//! Where the commands cycle runs (docs/bevy.md §6.5, §6.6): in `FixedUpdate` while the commands
//! layer has work; out of the fixed main loop, with the `FixedUpdate` the plugin made for it,
//! while it is idle. Driven frame by frame on the manual clock (one fixed step per frame).

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

mod common;

use std::cell::Cell;
use std::rc::Rc;

use bevy_app::{App, FixedPostUpdate, FixedUpdate};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::Schedules;
use common::{MS, app, frame, frames};
use tickstep_bevy::{CommandsCycleSystems, TickstepCommands};
use tickstep_commands::{Command, Trigger};
use tickstep_kernel::ManualClock;

fn has_fixed_update(app: &App) -> bool {
    app.world().resource::<Schedules>().contains(FixedUpdate)
}

/// A command that counts its runs into `ran` and ends.
fn counting(name: &str, ran: &Rc<Cell<u32>>) -> Command {
    let ran = ran.clone();
    Command::no_requirements()
        .executing(move |_co| {
            let ran = ran.clone();
            async move { ran.set(ran.get() + 1) }
        })
        .named(name)
}

fn schedule(app: &App, cmd: &Command) {
    let commands = app.world().non_send::<TickstepCommands>();
    assert!(commands.scheduler().schedule(cmd).is_success());
}

fn cycles(app: &App) -> u64 {
    let commands = app.world().non_send::<TickstepCommands>();
    commands.scheduler().telemetry().cycle
}

#[derive(Resource, Default)]
struct Steps(u32);

fn count_steps(mut steps: ResMut<'_, Steps>) {
    steps.0 += 1;
}

/// The app after its first frame (which has no fixed step: Bevy's time starts there).
fn started() -> (App, ManualClock) {
    let (mut app, clock) = app();
    frame(&mut app, &clock, 20 * MS);
    (app, clock)
}

#[test]
fn the_cycle_is_in_fixed_update_only_while_the_commands_layer_has_work() {
    let (mut app, clock) = app();
    frames(&mut app, &clock, 5);
    assert!(
        !has_fixed_update(&app),
        "never used: no FixedUpdate (docs/bevy.md §6.5)"
    );
    assert_eq!(cycles(&app), 0);

    // Scheduled between frames: the command's first cycle is the next frame's fixed step, as
    // it would be with the cycle always there; it ends there, and the cycle leaves
    // (docs/bevy.md §6.6).
    let ran = Rc::new(Cell::new(0));
    schedule(&app, &counting("once", &ran));
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(ran.get(), 1, "ran in this frame's fixed step");
    assert!(
        !has_fixed_update(&app),
        "idle again: the plugin's FixedUpdate is parked"
    );
    frames(&mut app, &clock, 3);
    assert_eq!(cycles(&app), 1, "parked cycles do not run");

    // A long-running command keeps it in for as long as it runs.
    let parked = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named("parked");
    schedule(&app, &parked);
    frames(&mut app, &clock, 4);
    assert!(has_fixed_update(&app));
    assert_eq!(cycles(&app), 5, "one cycle per fixed step while busy");
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .cancel(&parked);
    frame(&mut app, &clock, 20 * MS); // this cycle frees it; then idle
    assert!(!has_fixed_update(&app));
    assert_eq!(cycles(&app), 6);

    // Parked and unparked again: the same command runs again at the next fixed step.
    schedule(&app, &counting("again", &ran));
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(ran.get(), 2);
}

#[test]
fn a_fixed_update_the_app_made_keeps_the_cycle_and_the_game_systems_run_every_step() {
    let (mut app, clock) = started();
    app.init_resource::<Steps>()
        .add_systems(FixedUpdate, count_steps);
    let ran = Rc::new(Cell::new(0));
    schedule(&app, &counting("once", &ran));
    frames(&mut app, &clock, 4);
    assert_eq!(ran.get(), 1);
    assert!(
        has_fixed_update(&app),
        "the app's schedule is never taken out"
    );
    assert_eq!(app.world().resource::<Steps>().0, 4);
    assert_eq!(
        cycles(&app),
        1,
        "in the app's FixedUpdate too, idle cycles are left out (docs/bevy.md §6.6)"
    );
    schedule(&app, &counting("twice", &ran));
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(ran.get(), 2);
}

#[test]
fn a_fixed_update_the_app_adds_while_the_cycle_is_parked_takes_the_cycle_in() {
    let (mut app, clock) = started();
    let ran = Rc::new(Cell::new(0));
    schedule(&app, &counting("first", &ran));
    frame(&mut app, &clock, 20 * MS);
    assert!(!has_fixed_update(&app), "parked");

    app.init_resource::<Steps>()
        .add_systems(FixedUpdate, count_steps);
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(
        app.world().resource::<Steps>().0,
        1,
        "the app's new FixedUpdate runs"
    );

    schedule(&app, &counting("second", &ran));
    frames(&mut app, &clock, 3);
    assert_eq!(ran.get(), 2, "the cycle joined the app's FixedUpdate");
    assert_eq!(
        app.world().resource::<Steps>().0,
        4,
        "beside the game's system"
    );
    assert!(
        has_fixed_update(&app),
        "the app's schedule stays after the command ended"
    );
}

#[test]
fn the_plugins_fixed_update_that_the_app_added_to_is_never_parked() {
    let (mut app, clock) = started();
    let parked = Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named("parked");
    schedule(&app, &parked);
    frame(&mut app, &clock, 20 * MS); // the plugin made FixedUpdate for the cycle
    app.init_resource::<Steps>()
        .add_systems(FixedUpdate, count_steps);
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .cancel(&parked);
    frames(&mut app, &clock, 3);
    assert!(has_fixed_update(&app), "it holds the game's system now");
    assert_eq!(app.world().resource::<Steps>().0, 3);
}

#[test]
fn a_bound_trigger_keeps_the_cycle_in_and_fires_at_the_step_after_its_edge() {
    let (mut app, clock) = started();
    let ran = Rc::new(Cell::new(0));
    let armed = Rc::new(Cell::new(false));
    let a = armed.clone();
    let commands = app.world().non_send::<TickstepCommands>();
    let _trigger =
        Trigger::new(commands.scheduler(), move || a.get()).on_true(&counting("on edge", &ran));
    frames(&mut app, &clock, 3);
    assert!(has_fixed_update(&app), "a trigger is polled every cycle");
    assert_eq!(cycles(&app), 3);
    armed.set(true);
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(ran.get(), 1);
}

#[test]
fn work_scheduled_inside_the_fixed_loop_while_parked_starts_at_the_next_frames_fixed_step() {
    #[derive(Resource)]
    struct Go(bool);
    struct Later(Command);
    let (mut app, clock) = started();
    let ran = Rc::new(Cell::new(0));
    app.insert_resource(Go(false))
        .insert_non_send(Later(counting("later", &ran)))
        .add_systems(
            FixedPostUpdate,
            |commands: NonSend<'_, TickstepCommands>,
             later: NonSend<'_, Later>,
             mut go: ResMut<'_, Go>| {
                if std::mem::replace(&mut go.0, false) {
                    commands.scheduler().schedule(&later.0);
                }
            },
        );
    frames(&mut app, &clock, 2);
    app.world_mut().resource_mut::<Go>().0 = true;
    frame(&mut app, &clock, 20 * MS); // FixedPostUpdate schedules it: the cycle is not in
    assert_eq!(ran.get(), 0);
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(
        ran.get(),
        1,
        "docs/bevy.md §6.6: the next frame's first fixed step"
    );
}

#[test]
fn in_the_apps_fixed_update_work_scheduled_by_a_game_system_runs_in_the_same_step() {
    struct Later(Command);
    let (mut app, clock) = started();
    let ran = Rc::new(Cell::new(0));
    schedule(&app, &counting("first", &ran));
    app.insert_non_send(Later(counting("later", &ran)))
        .init_resource::<Steps>()
        .add_systems(
            FixedUpdate,
            (|commands: NonSend<'_, TickstepCommands>,
              later: NonSend<'_, Later>,
              steps: Res<'_, Steps>| {
                if steps.0 == 3 {
                    commands.scheduler().schedule(&later.0);
                }
            })
            .before(count_steps)
            .before(CommandsCycleSystems),
        )
        .add_systems(FixedUpdate, count_steps);
    frames(&mut app, &clock, 3);
    assert_eq!(ran.get(), 1, "first ran; the layer is idle since");
    frame(&mut app, &clock, 20 * MS); // the fourth step: the game system schedules `later`
    let same_step = ran.get();
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(
        (same_step, ran.get()),
        (2, 2),
        "the cycle's run condition saw the work in the same step"
    );
}
