//! The `arena` example, run on a manual clock for a bounded number of frames: the example's own
//! code, so `cargo test` covers it.

#[allow(dead_code, unreachable_pub)]
#[path = "../examples/arena.rs"]
mod arena;

use std::time::Duration;

use arena::{BUDGET, FRAMES, PATH_COST, PATHS, Report};
use tickstep_bevy::KernelStats;
use tickstep_kernel::ManualClock;

fn run(store: &std::path::Path, clock: &ManualClock) -> Report {
    let mut app = arena::build_app(store, Some(clock.clone()));
    for _ in 0..FRAMES {
        clock.advance(Duration::from_micros(16_667));
        app.update();
    }
    let world = app.world();
    arena::print(world.resource::<Report>(), world.resource::<KernelStats>());
    app.world().resource::<Report>().clone()
}

#[test]
fn the_arena_spreads_pathfinding_over_frames_interrupts_walks_and_keeps_regen_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("arena.db");
    let clock = ManualClock::new();

    let first = run(&store, &clock);
    let per_frame_cap = (BUDGET.as_nanos() / PATH_COST.as_nanos()) as usize;
    assert!(
        first.paths_per_frame.iter().all(|n| *n <= per_frame_cap),
        "{first:?}"
    );
    assert_eq!(first.paths_per_frame.iter().sum::<usize>(), PATHS);
    let busy = first.paths_per_frame.iter().filter(|n| **n > 0).count();
    assert!(busy >= PATHS / per_frame_cap, "spread over {busy} frames");
    assert_eq!(first.interrupts.len(), 2, "{first:?}");
    assert!(first.interrupts.iter().all(|i| i == "walk by stunned"));
    assert!(first.regen_runs >= 3, "{first:?}");

    let second = run(&store, &clock);
    assert_eq!(
        second.regen_schedule, first.regen_schedule,
        "the same schedule, reloaded"
    );
    assert!(
        second.regen_runs > first.regen_runs,
        "its run count carried on"
    );
}
