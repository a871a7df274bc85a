//! Shared helpers: an app on a manual clock, driven one frame at a time.

#![allow(dead_code)]

/// The schedules crate's throwaway `PostgreSQL` server (included, not copied).
#[path = "../../../tickstep-schedules/tests/common/pg.rs"]
pub(crate) mod pg;

use std::time::Duration;

use bevy_app::App;
use bevy_time::{Fixed, Time};
use tickstep_bevy::{TickstepPlugin, TickstepPluginBuilder};
use tickstep_kernel::ManualClock;

pub(crate) const MS: Duration = Duration::from_millis(1);

/// An app with the plugin on a fresh manual clock and a fixed timestep of `fixed`.
pub(crate) fn app_with(builder: TickstepPluginBuilder, fixed: Duration) -> (App, ManualClock) {
    let clock = ManualClock::new();
    let plugin = builder
        .manual_clock(clock.clone())
        .build()
        .expect("valid settings");
    let mut app = App::new();
    app.add_plugins(plugin);
    app.world_mut()
        .resource_mut::<Time<Fixed>>()
        .set_timestep(fixed);
    (app, clock)
}

/// The default app: server role, diagnostics off (their every-second task would show in counts).
pub(crate) fn app() -> (App, ManualClock) {
    app_with(TickstepPlugin::builder().diagnostics(false), 20 * MS)
}

/// Moves the clock by `by`, then runs one Bevy frame.
pub(crate) fn frame(app: &mut App, clock: &ManualClock, by: Duration) {
    clock.advance(by);
    app.update();
}

/// Runs `n` frames of 20 ms each (one fixed step apiece at the default timestep).
pub(crate) fn frames(app: &mut App, clock: &ManualClock, n: usize) {
    for _ in 0..n {
        frame(app, clock, 20 * MS);
    }
}
