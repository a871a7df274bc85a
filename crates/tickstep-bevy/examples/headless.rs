//! The smallest tickstep game: a Bevy app with no window, a hero poisoned by a durable schedule
//! and healed by a command whose trigger reads the ECS (docs/bevy.md §6.7, §9.17).
//!
//! ```text
//! cargo run -p tickstep-bevy --example headless     # two seconds, then it exits
//! cargo run -p tickstep-bevy --example headless     # again: the poison schedule is found, not made twice
//! ```
//!
//! Its dependencies are the README's: `tickstep-bevy`, and Bevy's `bevy_app`, `bevy_ecs` and
//! `bevy_time` with their default features off (`features = ["std"]`). The crate's test
//! `tests/headless.rs` runs the same game on a manual clock.

// Bevy systems take their parameters by value.
#![allow(clippy::needless_pass_by_value)]

use std::time::Duration;

use bevy_app::{App, AppExit, ScheduleRunnerPlugin, Startup, Update};
use bevy_ecs::prelude::*;
use tickstep_bevy::commands::Command;
use tickstep_bevy::schedules::{ObjId, Options, Value};
use tickstep_bevy::{
    TickstepAppExt, TickstepCommands, TickstepPlugin, TickstepPluginBuilder, TickstepSchedules,
    VerbWorld,
};

/// How long a frame lasts: Bevy's runner sleeps out the rest of it.
const FRAME: Duration = Duration::from_micros(16_667);
/// How many frames the game runs before it exits (two seconds).
pub const FRAMES: u32 = 120;

/// The hero's health.
#[derive(Component)]
pub struct Health(pub u32);

/// What happened, printed at the end (and read by the test).
#[derive(Resource, Default, Debug, Clone)]
pub struct Tally {
    /// Times the poison schedule fired.
    pub poisoned: u32,
    /// Fixed steps the heal command ran.
    pub healed: u32,
    /// Whether this run made the poison schedule (false: a previous run's was found).
    pub made_schedule: bool,
}

fn main() -> AppExit {
    // No window: Bevy's runner calls `App::update` once per frame. Without a manual clock the
    // plugin runs on the machine's; the store file keeps the schedule across runs.
    let mut app = game(TickstepPlugin::builder().store_path("headless.db"));
    app.add_plugins(ScheduleRunnerPlugin::run_loop(FRAME));
    app.run()
}

/// The game without its runner, so a test can step it on a manual clock.
///
/// # Panics
///
/// If the store cannot be opened.
pub fn game(tickstep: TickstepPluginBuilder) -> App {
    let mut app = App::new();
    // The plugin adds Bevy's `TimePlugin` (frame time, `Time<Fixed>` for the commands).
    app.add_plugins(tickstep.build().expect("valid settings"))
        .init_resource::<Tally>()
        // A verb is Rust code a durable schedule fires; it reaches the ECS through a queue
        // applied right after it runs.
        .add_verb("poison", |call| {
            call.world().push(|world| {
                for mut health in world.query::<&mut Health>().iter_mut(world) {
                    health.0 = health.0.saturating_sub(20);
                }
                world.resource_mut::<Tally>().poisoned += 1;
            });
            Ok(Value::Int(0))
        })
        .add_systems(
            Startup,
            (spawn_hero, bind_heal, poison_every_quarter_second),
        )
        .add_systems(Update, exit_after_frames);
    app
}

fn spawn_hero(mut commands: Commands<'_, '_>) {
    commands.spawn(Health(100));
}

/// The trigger's condition: an ordinary Bevy system reading the ECS.
fn wounded(heroes: Query<'_, '_, &Health>) -> bool {
    heroes.iter().any(|h| h.0 < 50)
}

/// While a hero is wounded, a command heals it a little every fixed step; once none is, the
/// command is canceled.
fn bind_heal(commands: NonSend<'_, TickstepCommands>) {
    let world = commands.world().clone();
    let heal = Command::no_requirements()
        .executing(move |co| {
            let world = world.clone();
            async move {
                loop {
                    world.push(|w| {
                        for mut health in w.query::<&mut Health>().iter_mut(w) {
                            health.0 += 2;
                        }
                        w.resource_mut::<Tally>().healed += 1;
                    });
                    co.yield_now().await; // until the next fixed step
                }
            }
        })
        .named("heal");
    commands.trigger(wounded).while_true(&heal);
}

/// A durable schedule, made once: its key finds the one a previous run (or another process on
/// the same store) made, instead of making a second.
fn poison_every_quarter_second(
    schedules: NonSend<'_, TickstepSchedules>,
    mut tally: ResMut<'_, Tally>,
) {
    let mut txn = schedules.engine().begin(ObjId(0));
    let id = txn
        .schedule_every(
            ObjId(0),
            "poison",
            0.25,
            vec![],
            Options::new().key("poison"),
        )
        .expect("a valid schedule");
    tally.made_schedule = txn.is_new(id);
    txn.commit().expect("the store takes it");
    let how = if tally.made_schedule {
        "made"
    } else {
        "found in the store"
    };
    println!("poison schedule #{}: {how}", id.get());
}

fn exit_after_frames(
    mut frame: Local<'_, u32>,
    tally: Res<'_, Tally>,
    heroes: Query<'_, '_, &Health>,
    mut exit: MessageWriter<'_, AppExit>,
) {
    *frame += 1;
    if *frame == FRAMES {
        let health: Vec<u32> = heroes.iter().map(|h| h.0).collect();
        println!(
            "after {FRAMES} frames: poisoned {} times, healed for {} fixed steps, health {health:?}",
            tally.poisoned, tally.healed
        );
        exit.write(AppExit::Success);
    }
}
