//! Telemetry snapshots of the scheduler.

use std::time::Duration;

use crate::event::CommandId;
use crate::scheduler::command::Command;

/// One queued or running command instance.
///
/// ```
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).with_priority(3).named("c");
/// scheduler.schedule(&c);
/// scheduler.run().unwrap();
/// let info = &scheduler.running()[0];
/// assert_eq!((info.name.as_str(), info.priority, info.parent), ("c", 3, None));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CommandInfo {
    /// The instance id.
    pub id: CommandId,
    /// The parent instance, for a child.
    pub parent: Option<CommandId>,
    /// The command.
    pub command: Command,
    /// Its name.
    pub name: String,
    /// Its effective priority (the maximum over it and its ancestors).
    pub priority: i32,
    /// Names of the mechanisms it requires.
    pub requirements: Vec<String>,
    /// How long its last mount took.
    pub last_run_time: Duration,
    /// How long all its mounts took together.
    pub total_run_time: Duration,
}

/// A snapshot from [`CommandScheduler::telemetry`](crate::CommandScheduler::telemetry).
///
/// ```
/// # use tickstep_commands::CommandScheduler;
/// # use tickstep_commands::kernel::clock::ManualClock;
/// let t = CommandScheduler::new(ManualClock::new()).telemetry();
/// assert_eq!((t.cycle, t.bindings, t.sideloads), (0, 0, 0));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Telemetry {
    /// Queued commands, oldest first.
    pub queued: Vec<CommandInfo>,
    /// Running commands, in start order.
    pub running: Vec<CommandInfo>,
    /// How long the last whole `run()` took.
    pub last_run_time: Duration,
    /// How many `run()` cycles have started.
    pub cycle: u64,
    /// Live trigger bindings.
    pub bindings: usize,
    /// Live sideloads.
    pub sideloads: usize,
}
