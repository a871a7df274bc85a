//! What the plugin tells Bevy systems: kernel statistics (a resource) and buffered messages for
//! overloads, command lifecycle events and command failures.
//!
//! tickstep's own event types hold `Rc`s (they live on one thread); Bevy messages must be
//! `Send + Sync`, so each is copied into an owned form here, once, when it is published.

use std::sync::Arc;

use bevy_ecs::message::Message;
use bevy_ecs::resource::Resource;
use tickstep_commands::{CommandId, Event, EventKind};
use tickstep_kernel::clock::Instant;
use tickstep_kernel::{Overload, Stats};

/// The main kernel scheduler's statistics, refreshed after every frame in which it stepped.
///
/// ```
/// use bevy_app::App;
/// use tickstep_bevy::{KernelStats, TickstepKernel, TickstepPlugin};
/// use tickstep_bevy::kernel::{ManualClock, Priority};
///
/// let mut app = App::new();
/// app.add_plugins(TickstepPlugin::builder().manual_clock(ManualClock::new()).build()?);
/// let _t = app.world().non_send::<TickstepKernel>().scheduler().schedule(|| {}, Priority::Normal);
/// app.update();
/// assert_eq!(app.world().resource::<KernelStats>().tasks_run, 1);
/// # Ok::<(), tickstep_bevy::PluginError>(())
/// ```
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct KernelStats(pub Stats);

impl std::ops::Deref for KernelStats {
    type Target = Stats;
    fn deref(&self) -> &Stats {
        &self.0
    }
}

/// `Kernel.Overload`: deferred work in [`OVERLOAD_WINDOWS`](tickstep_kernel::OVERLOAD_WINDOWS)
/// consecutive one-second windows (server role with diagnostics on).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::KernelOverload;
///
/// fn report(mut overloads: MessageReader<KernelOverload>) {
///     for o in overloads.read() {
///         eprintln!("overloaded: {} deferred, top: {}", o.0.window.deferred,
///             o.0.window.top_deferred_summary());
///     }
/// }
/// # let _ = IntoSystem::into_system(report);
/// ```
#[derive(Message, Clone, Debug, PartialEq)]
pub struct KernelOverload(pub Overload);

/// A command lifecycle event (tickstep's [`Event`] in `Send` form).
///
/// ```
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::{CommandEvent, CommandEventKind};
///
/// fn log_interrupts(mut events: MessageReader<CommandEvent>) {
///     for e in events.read() {
///         if let CommandEventKind::Interrupted { by_name, .. } = &e.kind {
///             eprintln!("{} interrupted by {by_name}", e.name);
///         }
///     }
/// }
/// # let _ = IntoSystem::into_system(log_interrupts);
/// ```
#[derive(Message, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CommandEvent {
    /// What happened.
    pub kind: CommandEventKind,
    /// The command instance.
    pub command: CommandId,
    /// The command's name.
    pub name: Arc<str>,
    /// When, on the commands' [`GameClock`](crate::GameClock).
    pub at: Instant,
}

/// What happened to a command (tickstep's [`EventKind`] in `Send` form).
///
/// ```
/// use tickstep_bevy::CommandEventKind;
/// assert_eq!(CommandEventKind::Completed.label(), "Completed");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CommandEventKind {
    /// Queued for consideration.
    Scheduled,
    /// About to be polled, once per cycle while it runs (published only when asked for, see
    /// [`TickstepPluginBuilder::per_cycle_events`](crate::TickstepPluginBuilder::per_cycle_events)).
    Mounted,
    /// Returned at a yield point, once per cycle while it runs (published only when asked for).
    Yielded,
    /// Finished its body.
    Completed,
    /// Lost a mechanism to another command (always directly before `Canceled`).
    Interrupted {
        /// The interrupting instance.
        by: CommandId,
        /// Its name.
        by_name: Arc<str>,
    },
    /// Stopped before finishing.
    Canceled,
    /// Its body returned an error or panicked.
    CompletedWithError {
        /// The error or panic message.
        message: String,
    },
    /// A mount ran longer than the watchdog limit without yielding.
    Overran {
        /// How long the mount took.
        elapsed: std::time::Duration,
        /// The limit.
        limit: std::time::Duration,
    },
    /// An event kind this version of the plugin does not know by name.
    Other {
        /// Its label.
        label: &'static str,
    },
}

impl CommandEventKind {
    /// The event's name, as tickstep-commands spells it.
    ///
    /// ```
    /// use tickstep_bevy::CommandEventKind;
    /// assert_eq!(CommandEventKind::Canceled.label(), "Canceled");
    /// ```
    pub fn label(&self) -> &'static str {
        match self {
            CommandEventKind::Scheduled => "Scheduled",
            CommandEventKind::Mounted => "Mounted",
            CommandEventKind::Yielded => "Yielded",
            CommandEventKind::Completed => "Completed",
            CommandEventKind::Interrupted { .. } => "Interrupted",
            CommandEventKind::Canceled => "Canceled",
            CommandEventKind::CompletedWithError { .. } => "CompletedWithError",
            CommandEventKind::Overran { .. } => "Overran",
            CommandEventKind::Other { label } => label,
        }
    }
}

impl From<&Event> for CommandEvent {
    fn from(event: &Event) -> Self {
        let kind = match &event.kind {
            EventKind::Scheduled => CommandEventKind::Scheduled,
            EventKind::Mounted => CommandEventKind::Mounted,
            EventKind::Yielded => CommandEventKind::Yielded,
            EventKind::Completed => CommandEventKind::Completed,
            EventKind::Interrupted { by, by_name } => CommandEventKind::Interrupted {
                by: *by,
                by_name: Arc::from(&**by_name),
            },
            EventKind::Canceled => CommandEventKind::Canceled,
            EventKind::CompletedWithError { message } => CommandEventKind::CompletedWithError {
                message: message.clone(),
            },
            EventKind::Overran { elapsed, limit } => CommandEventKind::Overran {
                elapsed: *elapsed,
                limit: *limit,
            },
            other => CommandEventKind::Other {
                label: other.label(),
            },
        };
        CommandEvent {
            kind,
            command: event.command,
            name: Arc::from(&*event.name),
            at: event.at,
        }
    }
}

/// The commands cycle failed: a command body returned an error. The cycle stays stopped (a robot
/// program would have crashed) until [`TickstepCommands::resume`](crate::TickstepCommands::resume);
/// the kernel and the schedules go on.
///
/// ```
/// use bevy_ecs::prelude::*;
/// use tickstep_bevy::CommandsFailed;
/// fn watch(mut failures: MessageReader<CommandsFailed>) {
///     for f in failures.read() { eprintln!("{}", f.message); }
/// }
/// # let _ = IntoSystem::into_system(watch);
/// ```
#[derive(Message, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandsFailed {
    /// The error, naming the command and where it was scheduled, then its cause (the error's
    /// whole chain, docs/README.md "Errors").
    pub message: String,
}
