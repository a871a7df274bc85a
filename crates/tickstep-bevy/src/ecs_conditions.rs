//! The conditions behind the triggers on ECS state (docs/bevy.md §6.7–§6.10): each a boxed Bevy
//! run condition and the value its trigger reads, run with the world right before each commands
//! cycle. A leaf the commands resource holds; `ecs_triggers` makes the triggers.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use bevy_ecs::change_detection::CheckChangeTicks;
use bevy_ecs::error::ErrorContext;
use bevy_ecs::prelude::World;
use bevy_ecs::schedule::BoxedCondition;
use bevy_ecs::system::RunSystemError;
use bevy_ecs::utils::prelude::DebugName;

/// One condition and the value its trigger reads.
struct EcsCondition {
    system: BoxedCondition,
    /// Whether `system` was initialized with the app's world (it is made without one).
    initialized: bool,
    /// The trigger's value; gone once nothing can read it.
    value: Weak<Cell<bool>>,
}

/// The conditions of the triggers made by `TickstepCommands::trigger`, in the order made.
#[derive(Default)]
pub(crate) struct EcsConditions {
    list: RefCell<Vec<EcsCondition>>,
}

impl EcsConditions {
    /// Keeps `system` and returns the value its trigger reads, false until it first runs; the
    /// condition lives as long as that value is held (docs/bevy.md §6.8).
    pub(crate) fn add(&self, system: BoxedCondition) -> Rc<Cell<bool>> {
        let value = Rc::new(Cell::new(false));
        self.list.borrow_mut().push(EcsCondition {
            system,
            initialized: false,
            value: Rc::downgrade(&value),
        });
        value
    }

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
    pub(crate) fn check_change_ticks(&self, check: CheckChangeTicks) {
        for condition in self.list.borrow_mut().iter_mut() {
            condition.system.check_change_tick(check);
        }
    }
}
