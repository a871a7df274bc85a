//! Where the commands cycle's system is: not added yet, in `FixedUpdate`, or parked out of the
//! fixed main loop with the `FixedUpdate` schedule the plugin made for it (docs/bevy.md §6.5,
//! §6.6).
//!
//! Bevy runs every schedule that exists, empty or not: in an app with no fixed-step systems of
//! its own, a `FixedUpdate` holding only the commands cycle costs more per frame than everything
//! else the idle plugin does. So that schedule is in Bevy's map only while the commands layer has
//! work; moving a built schedule in and out of the map rebuilds nothing. A `FixedUpdate` the app
//! made (or added to) is never taken out; there the cycle's run condition leaves idle cycles out
//! (docs/bevy.md §6.6).

use bevy_app::FixedUpdate;
use bevy_ecs::schedule::{IntoScheduleConfigs, Schedule, Schedules, SystemSet};
use bevy_ecs::system::ScheduleSystem;

/// The system set of the commands cycle in `FixedUpdate`, to order a game's fixed-step systems
/// before or after it (docs/bevy.md §6.1). Without an order, a `FixedUpdate` system and the cycle
/// run in either order, as any two unordered Bevy systems do.
///
/// ```
/// use bevy_app::{App, FixedUpdate};
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::{CommandsCycleSystems, TickstepPlugin};
///
/// fn read_input() {}
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().build()?)
///     // Commands scheduled by `read_input` run in the same fixed step.
///     .add_systems(FixedUpdate, read_input.before(CommandsCycleSystems));
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommandsCycleSystems;

/// The commands cycle's place in the app's schedules.
pub(crate) enum CyclePlacement {
    /// Never added: the commands layer has not had work yet.
    Absent,
    /// In `FixedUpdate`; `sole` while that schedule is the plugin's own and holds nothing else.
    Installed { sole: bool },
    /// Out of the fixed main loop, with the `FixedUpdate` schedule made for it.
    Parked(Box<Schedule>),
}

impl CyclePlacement {
    /// Whether the cycle must join the fixed main loop: the commands layer has work and the
    /// cycle is not in.
    #[inline]
    pub(crate) fn must_join(&self, idle: bool) -> bool {
        !idle && !matches!(self, CyclePlacement::Installed { .. })
    }

    /// Puts the cycle's system (`cycle`, used on first use only) in `FixedUpdate`; call it only
    /// while `FixedUpdate` is not running.
    pub(crate) fn join<M>(
        &mut self,
        schedules: &mut Schedules,
        cycle: impl IntoScheduleConfigs<ScheduleSystem, M>,
    ) {
        let previous = std::mem::replace(self, CyclePlacement::Installed { sole: false });
        if let CyclePlacement::Parked(own) = previous
            && !schedules.contains(FixedUpdate)
        {
            schedules.insert(*own);
            *self = CyclePlacement::Installed { sole: true };
            return;
        }
        // First use, or parked while the app made a `FixedUpdate` of its own: the cycle joins
        // the schedule that is there (the parked one, holding only the cycle, is dropped).
        let sole = !schedules.contains(FixedUpdate);
        schedules.add_systems(FixedUpdate, cycle);
        *self = CyclePlacement::Installed { sole };
    }

    /// Whether the cycle may leave the fixed main loop: it is in a `FixedUpdate` the plugin made
    /// for it, and the commands layer is idle.
    #[inline]
    pub(crate) fn may_park(&self, idle: bool) -> bool {
        idle && matches!(self, CyclePlacement::Installed { sole: true })
    }

    /// Takes the plugin's `FixedUpdate` out of the schedules if it still holds nothing but the
    /// cycle; call it only outside the fixed main loop.
    pub(crate) fn park(&mut self, schedules: &mut Schedules) {
        match schedules.get(FixedUpdate).map(|s| s.graph().systems.len()) {
            Some(1) => {
                if let Some(own) = schedules.remove(FixedUpdate) {
                    *self = CyclePlacement::Parked(Box::new(own));
                }
            }
            // The app added to it: it is the app's schedule now, and stays.
            Some(_) => *self = CyclePlacement::Installed { sole: false },
            // Someone removed `FixedUpdate`: the cycle comes back with the next work.
            None => *self = CyclePlacement::Absent,
        }
    }
}
