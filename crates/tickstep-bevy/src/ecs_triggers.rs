//! Triggers on ECS state (docs/bevy.md §6.7–§6.10): a command trigger whose condition is a Bevy
//! run condition — any read-only system returning `bool`, so a `Query`, a `Res`, Bevy's own
//! conditions and their combinators.
//!
//! A trigger's signal is polled inside the commands cycle, which holds no `World`. So the plugin
//! keeps each condition as a boxed Bevy system and runs it with the world right before each
//! commands cycle, as Bevy runs a run condition before its system; the trigger reads the value
//! that run left. The plugin holds the value weakly: once the trigger, its bindings and every
//! trigger derived from it are gone, the condition is dropped at the next cycle.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use bevy_ecs::change_detection::CheckChangeTicks;
use bevy_ecs::error::ErrorContext;
use bevy_ecs::observer::On;
use bevy_ecs::prelude::World;
use bevy_ecs::schedule::{BoxedCondition, SystemCondition};
use bevy_ecs::system::{IntoSystem, NonSend, RunSystemError};
use bevy_ecs::utils::prelude::DebugName;
use tickstep_commands::Trigger;

use crate::TickstepCommands;

/// One condition and the value its trigger reads.
struct EcsCondition {
    system: BoxedCondition,
    /// Whether `system` was initialized with the app's world (it is made without one).
    initialized: bool,
    /// The trigger's value; gone once nothing can read it.
    value: Weak<Cell<bool>>,
}

/// The conditions of the triggers made by [`TickstepCommands::trigger`], in the order made.
#[derive(Default)]
pub(crate) struct EcsConditions {
    list: RefCell<Vec<EcsCondition>>,
}

impl EcsConditions {
    /// Runs every live condition with `world` and leaves its value for its trigger; drops the
    /// conditions nothing reads any more (docs/bevy.md §6.8). A condition that cannot run is
    /// false, as Bevy has it for run conditions: skipped silently, failed through the world's
    /// fallback error handler (docs/bevy.md §6.9).
    pub(crate) fn evaluate(&self, world: &mut World) {
        if self.list.borrow().is_empty() {
            return;
        }
        // Taken out while they run: a condition may reach the commands resource, and a trigger
        // made meanwhile joins the list after them.
        let mut running = std::mem::take(&mut *self.list.borrow_mut());
        running.retain_mut(|condition| {
            let Some(value) = condition.value.upgrade() else {
                return false;
            };
            if !condition.initialized {
                condition.system.initialize(world);
                condition.initialized = true;
            }
            let result = condition.system.run((), world).unwrap_or_else(|error| {
                if let RunSystemError::Failed(error) = error {
                    let context = ErrorContext::RunCondition {
                        name: condition.system.name(),
                        last_run: condition.system.get_last_run(),
                        system: DebugName::borrowed("tickstep commands cycle"),
                        on_set: false,
                    };
                    (world.fallback_error_handler())(error, context);
                }
                false
            });
            value.set(result);
            true
        });
        let mut list = self.list.borrow_mut();
        let made_meanwhile = std::mem::replace(&mut *list, running);
        list.extend(made_meanwhile);
    }

    /// Keeps the conditions' change ticks from wrapping, as Bevy does for the systems in its
    /// schedules (an observer of [`CheckChangeTicks`]).
    fn check_change_ticks(&self, check: CheckChangeTicks) {
        for condition in self.list.borrow_mut().iter_mut() {
            condition.system.check_change_tick(check);
        }
    }
}

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
        let value = Rc::new(Cell::new(false));
        self.cycle.conditions.list.borrow_mut().push(EcsCondition {
            system: Box::new(IntoSystem::into_system(condition)),
            initialized: false,
            value: Rc::downgrade(&value),
        });
        Trigger::new(&self.cycle.scheduler, move || value.get())
    }
}
