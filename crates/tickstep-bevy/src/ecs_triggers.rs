//! Triggers on ECS state (docs/bevy.md §6.7–§6.10): a command trigger whose condition is a Bevy
//! run condition — any read-only system returning `bool`, so a `Query`, a `Res`, Bevy's own
//! conditions and their combinators.
//!
//! A trigger's signal is polled inside the commands cycle, which holds no `World`. So the plugin
//! keeps each condition as a boxed Bevy system (`ecs_conditions`) and runs it with the world
//! right before each commands cycle, as Bevy runs a run condition before its system; the trigger
//! reads the value that run left. The plugin holds the value weakly: once the trigger, its
//! bindings and every trigger derived from it are gone, the condition is dropped at the next
//! cycle.

use bevy_ecs::change_detection::CheckChangeTicks;
use bevy_ecs::observer::On;
use bevy_ecs::schedule::SystemCondition;
use bevy_ecs::system::{IntoSystem, NonSend};
use tickstep_commands::Trigger;

use crate::TickstepCommands;

/// The observer that hands the world's change-tick check to the conditions.
#[allow(clippy::needless_pass_by_value)] // Bevy hands system parameters over by value.
pub(crate) fn check_condition_ticks(
    check: On<'_, '_, CheckChangeTicks>,
    commands: NonSend<'_, TickstepCommands>,
) {
    commands.cycle.conditions.check_change_ticks(*check);
}

impl TickstepCommands {
    /// A trigger on ECS state: `condition` is a Bevy run condition — any read-only system that
    /// returns `bool`, with `Query`, `Res` and the other read-only parameters, or Bevy's own
    /// conditions and their combinators (`resource_exists::<T>.and_then(...)`). The plugin runs it
    /// with the world right before each commands cycle, in the order the triggers were made, and
    /// the trigger reads that value for the whole cycle (docs/bevy.md §6.7). Bind commands to it
    /// as to any trigger (`on_true`, `while_true`, ...). Between cycles [`Trigger::get`] reads
    /// the last value (false before the first cycle).
    ///
    /// A condition that cannot run is false, as a Bevy run condition is: skipped silently, or
    /// failed after its error went to the world's `FallbackErrorHandler` (docs/bevy.md §6.9).
    /// It is dropped once the trigger, every trigger derived from it and their bindings are gone
    /// (docs/bevy.md §6.8).
    ///
    /// ```
    /// use std::time::Duration;
    /// use bevy_app::App;
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::commands::Command;
    /// use tickstep_bevy::kernel::ManualClock;
    /// use tickstep_bevy::{TickstepCommands, TickstepPlugin};
    ///
    /// #[derive(Component)]
    /// struct Health(u32);
    ///
    /// // The condition: any hero below 30 health.
    /// fn wounded(heroes: Query<&Health>) -> bool {
    ///     heroes.iter().any(|h| h.0 < 30)
    /// }
    ///
    /// let clock = ManualClock::new();
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().manual_clock(clock.clone()).build()?);
    /// let hero = app.world_mut().spawn(Health(100)).id();
    /// let heal = Command::no_requirements()
    ///     .executing(|co| async move { co.park().await; })
    ///     .named("heal");
    /// app.world().non_send::<TickstepCommands>().trigger(wounded).while_true(&heal);
    ///
    /// let mut frame = |app: &mut App| { clock.advance(Duration::from_millis(20)); app.update() };
    /// frame(&mut app);
    /// assert!(!app.world().non_send::<TickstepCommands>().scheduler().is_running(&heal));
    /// app.world_mut().get_mut::<Health>(hero).unwrap().0 = 10;
    /// frame(&mut app);
    /// assert!(app.world().non_send::<TickstepCommands>().scheduler().is_running(&heal));
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn trigger<M>(&self, condition: impl SystemCondition<M>) -> Trigger {
        let system = Box::new(IntoSystem::into_system(condition));
        let value = self.cycle.conditions.add(system);
        Trigger::new(&self.cycle.scheduler, move || value.get())
    }
}
