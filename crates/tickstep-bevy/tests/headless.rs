//! The `headless` example's game, stepped on a manual clock (docs/bevy.md §9.17): the poison
//! schedule fires on time, the trigger on ECS state heals the hero while wounded and lets go once
//! healed, and a second run on the same store finds the schedule instead of making a second.
//! CI also runs the example itself, on Bevy's runner and the real clock (`.ci/run`).

#[allow(dead_code, unreachable_pub)]
#[path = "../examples/headless.rs"]
mod headless;

use std::path::Path;
use std::time::Duration;

use bevy_app::{App, AppExit};
use bevy_ecs::message::Messages;
use headless::{FRAMES, Health, Tally};
use tickstep_bevy::kernel::ManualClock;
use tickstep_bevy::{TickstepPlugin, TickstepSchedules};

/// Runs the game for its frames on `clock` and returns it.
fn run(store: &Path, clock: &ManualClock) -> App {
    let mut app = headless::game(
        TickstepPlugin::builder()
            .store_path(store)
            .manual_clock(clock.clone()),
    );
    for _ in 0..FRAMES {
        clock.advance(Duration::from_micros(16_667));
        app.update();
    }
    app
}

fn exited(app: &App) -> bool {
    app.world()
        .resource::<Messages<AppExit>>()
        .iter_current_update_messages()
        .any(|e| *e == AppExit::Success)
}

#[test]
fn the_headless_game_poisons_heals_on_its_trigger_exits_and_keeps_one_schedule_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("headless.db");
    let clock = ManualClock::new();

    let mut first = run(&store, &clock);
    let tally = first.world().resource::<Tally>().clone();
    // Two seconds of a schedule every 0.25 s (its first point one interval after it is made).
    assert!((7..=8).contains(&tally.poisoned), "{tally:?}");
    assert!(tally.made_schedule);
    // 100 - 3 × 20 = 40 < 50 at the third poison: healed from then on, while wounded only.
    assert!(
        tally.healed > 0,
        "the trigger on ECS state scheduled heal: {tally:?}"
    );
    let health = first
        .world_mut()
        .query::<&Health>()
        .iter(first.world())
        .map(|h| h.0)
        .collect::<Vec<_>>();
    assert_eq!(health.len(), 1);
    // Healing stops once the hero is back at 50: 2 a step never carries it past 51, and a poison
    // takes 20 off, so the level stays below 52 once it has dipped.
    assert!(
        health[0] < 52,
        "heal let go once healed: {health:?} {tally:?}"
    );
    assert!(exited(&first), "it asked to exit after its frames");
    drop(first); // a clean stop commits the store

    let second = run(&store, &clock);
    let tally = second.world().resource::<Tally>();
    assert!(!tally.made_schedule, "found the first run's schedule");
    assert!(tally.poisoned > 0, "{tally:?}");
    let live = second
        .world()
        .non_send::<TickstepSchedules>()
        .engine()
        .live_count();
    assert_eq!(live, 1, "one poison schedule, not two");
}
