//! Mechanisms as components: an entity's `Legs` and `Arms` (docs/bevy.md §6.2).
//!
//! A tickstep [`Mechanism`](tickstep_commands::Mechanism) is an `Rc` handle (`!Send`), so it
//! cannot itself be a Bevy component. The component is a marker type the game defines
//! (`#[derive(Component)] struct Legs;`) and names with [`MechanismComponent`]; the mechanism
//! lives in [`TickstepCommands`], keyed by (component type, entity), made on first use by
//! [`TickstepCommands::mechanism`]. Registering the kind with [`TickstepAppExt::add_mechanism`]
//! adds one system that releases the mechanism — cancelling the commands that require it — when
//! the component is removed or the entity despawned.

use std::any::TypeId;

use bevy_app::{App, PreUpdate};
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::lifecycle::RemovedComponents;
use bevy_ecs::system::NonSend;
use tickstep_commands::{Command, Mechanism};

use crate::{TickstepCommands, TickstepSchedules, VerbCall, VerbResult};

/// A component that stands for a mechanism of its entity.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::MechanismComponent;
///
/// #[derive(Component)]
/// struct Arms;
/// impl MechanismComponent for Arms {
///     const NAME: &'static str = "arms";
/// }
/// assert_eq!(Arms::NAME, "arms");
/// ```
pub trait MechanismComponent: Component {
    /// The mechanism's name (after the entity's) in command telemetry.
    const NAME: &'static str;
}

/// Bevy-side registration helpers for the plugin.
pub trait TickstepAppExt {
    /// Registers mechanism kind `M`: when an entity loses `M` (or is despawned), its mechanism is
    /// dropped and every command requiring it is canceled, before `Update` runs.
    ///
    /// # Panics
    ///
    /// When the mechanism's cleanup runs without [`TickstepPlugin`](crate::TickstepPlugin)
    /// installed (its resource is missing).
    ///
    /// ```
    /// use bevy_app::App;
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::{MechanismComponent, TickstepAppExt, TickstepCommands, TickstepPlugin};
    /// use tickstep_bevy::commands::Command;
    /// use tickstep_bevy::kernel::ManualClock;
    ///
    /// #[derive(Component)]
    /// struct Legs;
    /// impl MechanismComponent for Legs { const NAME: &'static str = "legs"; }
    ///
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?)
    ///     .add_mechanism::<Legs>();
    /// let hero = app.world_mut().spawn(Legs).id();
    /// let walk = {
    ///     let commands = app.world().non_send::<TickstepCommands>();
    ///     let walk = commands.mechanism::<Legs>(hero)
    ///         .run(|co| async move { loop { co.yield_now().await } })
    ///         .named("walk");
    ///     commands.scheduler().schedule(&walk);
    ///     walk
    /// };
    /// app.world_mut().despawn(hero);
    /// app.update();
    /// assert!(!app.world().non_send::<TickstepCommands>().scheduler().is_scheduled(&walk));
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    fn add_mechanism<M: MechanismComponent>(&mut self) -> &mut Self;

    /// Registers a verb for the durable schedules (see [`TickstepSchedules::verb`]).
    ///
    /// # Panics
    ///
    /// Without [`TickstepPlugin`](crate::TickstepPlugin) installed first.
    ///
    /// ```
    /// use bevy_app::App;
    /// use tickstep_bevy::{TickstepAppExt, TickstepPlugin};
    /// use tickstep_bevy::schedules::Value;
    ///
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().build()?)
    ///     .add_verb("heal", |_call| Ok(Value::Int(0)));
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    fn add_verb(
        &mut self,
        name: &str,
        verb: impl Fn(&VerbCall) -> VerbResult + 'static,
    ) -> &mut Self;
}

impl TickstepAppExt for App {
    fn add_mechanism<M: MechanismComponent>(&mut self) -> &mut Self {
        self.add_systems(PreUpdate, release_removed::<M>)
    }

    fn add_verb(
        &mut self,
        name: &str,
        verb: impl Fn(&VerbCall) -> VerbResult + 'static,
    ) -> &mut Self {
        self.world()
            .get_non_send::<TickstepSchedules>()
            .expect("add TickstepPlugin before registering verbs")
            .verb(name, verb);
        self
    }
}

// Bevy hands system parameters over by value.
#[allow(clippy::needless_pass_by_value)]
fn release_removed<M: MechanismComponent>(
    mut removed: RemovedComponents<'_, '_, M>,
    commands: NonSend<'_, TickstepCommands>,
) {
    for entity in removed.read() {
        commands.release::<M>(entity);
    }
}

/// Mechanisms per entity live here, beside the component trait they are keyed by.
impl TickstepCommands {
    /// The mechanism `M` of `entity` (an entity's `Legs`, its `Arms`), made on first use and named
    /// `"<entity> <M::NAME>"`. When the entity loses the component (or is despawned) the
    /// mechanism is dropped and the commands requiring it are canceled, if the kind was registered
    /// with [`TickstepAppExt::add_mechanism`](crate::TickstepAppExt::add_mechanism).
    ///
    /// ```
    /// use bevy_app::App;
    /// use bevy_ecs::prelude::*;
    /// use tickstep_bevy::{MechanismComponent, TickstepAppExt, TickstepCommands, TickstepPlugin};
    ///
    /// #[derive(Component)]
    /// struct Legs;
    /// impl MechanismComponent for Legs { const NAME: &'static str = "legs"; }
    ///
    /// let mut app = App::new();
    /// app.add_plugins(TickstepPlugin::builder().build()?).add_mechanism::<Legs>();
    /// let hero = app.world_mut().spawn(Legs).id();
    /// let commands = app.world().non_send::<TickstepCommands>();
    /// let legs = commands.mechanism::<Legs>(hero);
    /// assert!(legs.name().ends_with("legs"));
    /// assert_eq!(legs, commands.mechanism::<Legs>(hero));
    /// # Ok::<(), tickstep_bevy::PluginError>(())
    /// ```
    pub fn mechanism<M: MechanismComponent>(&self, entity: Entity) -> Mechanism {
        self.mechanisms
            .borrow_mut()
            .entry((TypeId::of::<M>(), entity))
            .or_insert_with(|| {
                Mechanism::new(&self.cycle.scheduler, format!("{entity} {}", M::NAME))
            })
            .clone()
    }

    /// Drops the mechanism `M` of `entity` and cancels every command that requires it.
    pub(crate) fn release<M: MechanismComponent>(&self, entity: Entity) {
        let Some(mechanism) = self
            .mechanisms
            .borrow_mut()
            .remove(&(TypeId::of::<M>(), entity))
        else {
            return;
        };
        let scheduler = &self.cycle.scheduler;
        let doomed: Vec<Command> = scheduler
            .running()
            .into_iter()
            .chain(scheduler.queued())
            .map(|info| info.command)
            .filter(|cmd| cmd.requires(&mechanism))
            .collect();
        for cmd in &doomed {
            scheduler.cancel(cmd);
        }
    }
}
