//! Commands inside Bevy: abilities as commands on entity mechanisms, priorities, game time.

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

mod common;

use std::time::Duration;

use bevy_app::{App, PostUpdate};
use bevy_ecs::prelude::*;
use bevy_time::{Time, Virtual};
use common::{MS, app, frame};
use tickstep_bevy::{
    CommandEvent, CommandEventKind, CommandsFailed, MechanismComponent, TickstepAppExt,
    TickstepCommands, TickstepKernel,
};
use tickstep_commands::{BoxError, Command};
use tickstep_kernel::Priority;

#[derive(Component)]
struct Legs;
impl MechanismComponent for Legs {
    const NAME: &'static str = "legs";
}

#[derive(Component, Default, Debug, PartialEq)]
struct Position(i32);

#[derive(Resource, Default)]
struct Seen(Vec<String>);

fn collect(mut events: MessageReader<'_, '_, CommandEvent>, mut seen: ResMut<'_, Seen>) {
    for e in events.read() {
        seen.0.push(format!("{} {}", e.kind.label(), e.name));
    }
}

fn with_collector(app: &mut App) {
    app.init_resource::<Seen>()
        .add_systems(PostUpdate, collect)
        .add_mechanism::<Legs>();
}

/// Walk (priority 1) moves the hero one step per fixed step; Stunned (priority 10) holds the legs
/// for 60 ms of game time.
fn walk_and_stun(app: &mut App, hero: Entity) -> (Command, Command) {
    let commands = app.world().non_send::<TickstepCommands>();
    let legs = commands.mechanism::<Legs>(hero);
    let world = commands.world().clone();
    let walk = legs
        .run(move |co| {
            let world = world.clone();
            async move {
                loop {
                    world.push(move |w| w.get_mut::<Position>(hero).unwrap().0 += 1);
                    co.yield_now().await;
                }
            }
        })
        .with_priority(1)
        .named("walk");
    let stunned = legs
        .run(|co| async move { co.wait(Duration::from_millis(60)).await })
        .with_priority(10)
        .named("stunned");
    (walk, stunned)
}

#[test]
fn a_stun_at_priority_10_interrupts_walk_at_1_and_walk_resumes_as_the_default() {
    let (mut app, clock) = app();
    with_collector(&mut app);
    let hero = app.world_mut().spawn((Legs, Position(0))).id();
    let (walk, stunned) = walk_and_stun(&mut app, hero);
    app.world()
        .non_send::<TickstepCommands>()
        .mechanism::<Legs>(hero)
        .set_default_command(&walk)
        .unwrap();

    frame(&mut app, &clock, 20 * MS); // first frame: Bevy's real time starts, no fixed step
    for _ in 0..3 {
        frame(&mut app, &clock, 20 * MS); // one fixed step (20 ms) per frame
    }
    assert_eq!(app.world().get::<Position>(hero), Some(&Position(3)));

    let commands = app.world().non_send::<TickstepCommands>();
    assert!(commands.scheduler().schedule(&stunned).is_success());
    for _ in 0..3 {
        frame(&mut app, &clock, 20 * MS); // stunned: 0, 20, 40 ms of its 60
    }
    assert_eq!(app.world().get::<Position>(hero), Some(&Position(3)));
    frame(&mut app, &clock, 20 * MS); // 60 ms: stun completes, walk is queued again
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(app.world().get::<Position>(hero), Some(&Position(4)));

    let seen = &app.world().resource::<Seen>().0;
    let of_interest: Vec<&str> = seen
        .iter()
        .map(String::as_str)
        .filter(|s| !s.starts_with("Scheduled"))
        .collect();
    assert_eq!(
        of_interest,
        ["Interrupted walk", "Canceled walk", "Completed stunned"]
    );
}

#[test]
fn the_interrupt_names_the_interrupter() {
    let (mut app, clock) = app();
    with_collector(&mut app);
    let hero = app.world_mut().spawn((Legs, Position(0))).id();
    let (walk, stunned) = walk_and_stun(&mut app, hero);
    let mut cursor = app
        .world()
        .resource::<Messages<CommandEvent>>()
        .get_cursor();
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .schedule(&walk);
    frame(&mut app, &clock, 20 * MS);
    frame(&mut app, &clock, 20 * MS);
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .schedule(&stunned);
    frame(&mut app, &clock, 20 * MS);
    let messages = app.world().resource::<Messages<CommandEvent>>();
    let interrupted: Vec<_> = cursor
        .read(messages)
        .filter_map(|e| match &e.kind {
            CommandEventKind::Interrupted { by_name, .. } => {
                Some((e.name.clone(), by_name.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(interrupted, [("walk".into(), "stunned".into())]);
}

#[test]
fn pausing_virtual_time_pauses_the_commands_but_not_the_kernel() {
    let (mut app, clock) = app();
    with_collector(&mut app);
    let hero = app.world_mut().spawn((Legs, Position(0))).id();
    let (_walk, stunned) = walk_and_stun(&mut app, hero);
    app.world()
        .non_send::<TickstepCommands>()
        .scheduler()
        .schedule(&stunned);
    frame(&mut app, &clock, 20 * MS);
    frame(&mut app, &clock, 20 * MS); // the stun starts (game time 20 ms)
    app.world_mut().resource_mut::<Time<Virtual>>().pause();
    let ran = std::rc::Rc::new(std::cell::Cell::new(false));
    let r = ran.clone();
    let _t = app
        .world()
        .non_send::<TickstepKernel>()
        .scheduler()
        .after(
            Duration::from_millis(200),
            move || r.set(true),
            Priority::Normal,
        )
        .unwrap();
    for _ in 0..50 {
        frame(&mut app, &clock, 20 * MS); // a real second passes, paused
    }
    assert!(ran.get(), "kernel timers run on real time");
    let commands = app.world().non_send::<TickstepCommands>();
    assert!(
        commands.scheduler().is_running(&stunned),
        "game time stood still"
    );
    app.world_mut().resource_mut::<Time<Virtual>>().unpause();
    for _ in 0..4 {
        frame(&mut app, &clock, 20 * MS);
    }
    let commands = app.world().non_send::<TickstepCommands>();
    assert!(!commands.scheduler().is_running(&stunned));
    assert!(
        app.world()
            .resource::<Seen>()
            .0
            .contains(&"Completed stunned".to_owned())
    );
}

#[test]
fn a_failing_command_stops_the_cycle_with_a_message_until_resumed() {
    let (mut app, clock) = app();
    let mut failures = app
        .world()
        .resource::<Messages<CommandsFailed>>()
        .get_cursor();
    let broken = Command::no_requirements()
        .executing_fallible(|_co| async move { Err::<(), BoxError>("out of mana".into()) })
        .named("fireball");
    let ticks = std::rc::Rc::new(std::cell::Cell::new(0));
    let t = ticks.clone();
    let counter = Command::no_requirements()
        .executing(move |co| {
            let t = t.clone();
            async move {
                loop {
                    t.set(t.get() + 1);
                    co.yield_now().await;
                }
            }
        })
        .named("counter");
    {
        let commands = app.world().non_send::<TickstepCommands>();
        commands.scheduler().schedule(&counter);
        commands.scheduler().schedule(&broken);
    }
    let mut failed = Vec::new();
    for _ in 0..4 {
        frame(&mut app, &clock, 20 * MS);
        let messages = app.world().resource::<Messages<CommandsFailed>>();
        failed.extend(failures.read(messages).map(|f| f.message.clone()));
    }
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].contains("fireball") && failed[0].contains("out of mana"),
        "{failed:?}"
    );
    let stopped_at = ticks.get();
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(ticks.get(), stopped_at, "the cycle stays stopped");
    assert!(
        app.world()
            .non_send::<TickstepCommands>()
            .resume()
            .is_some()
    );
    frame(&mut app, &clock, 20 * MS);
    assert_eq!(ticks.get(), stopped_at + 1);
}

#[test]
fn a_command_scheduled_by_an_update_system_runs_at_the_next_fixed_step() {
    struct Wave(Command);
    let (mut app, clock) = app();
    let ran = std::rc::Rc::new(std::cell::Cell::new(false));
    let r = ran.clone();
    let wave = Command::no_requirements()
        .executing(move |_co| {
            let r = r.clone();
            async move { r.set(true) }
        })
        .named("wave");
    app.insert_non_send(Wave(wave)).add_systems(
        bevy_app::Update,
        |commands: NonSend<'_, TickstepCommands>,
         wave: NonSend<'_, Wave>,
         mut done: Local<'_, bool>| {
            if !std::mem::replace(&mut *done, true) {
                commands.scheduler().schedule(&wave.0);
            }
        },
    );
    frame(&mut app, &clock, 20 * MS); // Update schedules it, after this frame's fixed loop
    assert!(!ran.get());
    frame(&mut app, &clock, 20 * MS);
    assert!(ran.get(), "the next frame's fixed step ran it");
}

#[test]
fn the_game_clock_follows_fixed_time_without_a_commands_cycle() {
    use bevy_time::Fixed;
    use tickstep_kernel::clock::{Clock, Instant};
    let (mut app, clock) = app();
    for _ in 0..6 {
        frame(&mut app, &clock, 20 * MS);
    }
    assert!(
        !app.world()
            .resource::<bevy_ecs::schedule::Schedules>()
            .contains(bevy_app::FixedUpdate)
    );
    let fixed = app.world().resource::<Time<Fixed>>().elapsed();
    assert!(fixed >= 80 * MS, "fixed steps ran: {fixed:?}");
    let game = app.world().non_send::<TickstepCommands>().clock().now();
    assert_eq!(game, Instant::ZERO + fixed);
}
