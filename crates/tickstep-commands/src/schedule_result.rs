//! The answer to a `schedule` call. A leaf: it imports nothing of the crate, so errors can carry
//! it without depending on the scheduler.

use std::fmt;

/// What [`CommandScheduler::schedule`](crate::CommandScheduler::schedule) did with a command.
///
/// ```
/// use tickstep_commands::{Command, Mechanism, ScheduleResult, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let high = arm.run(|co| async move { co.park().await; }).with_priority(5).named("high");
/// let low = arm.run(|co| async move { co.park().await; }).named("low");
/// assert_eq!(scheduler.schedule(&high), ScheduleResult::Success);
/// assert_eq!(scheduler.schedule(&high), ScheduleResult::AlreadyRunning);
/// scheduler.run().unwrap();
/// assert_eq!(
///     scheduler.schedule(&low),
///     ScheduleResult::LowerPriorityThanRunning { running: "high".into(), running_priority: 5, priority: 0 }
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleResult {
    /// Queued (from outside a command) or started as a child (from inside one).
    Success,
    /// The same command is already queued or running; nothing changed.
    AlreadyRunning,
    /// A running command that owns a required mechanism has a higher priority.
    LowerPriorityThanRunning {
        /// The running command's name.
        running: String,
        /// Its effective priority.
        running_priority: i32,
        /// The rejected command's effective priority.
        priority: i32,
    },
    /// A queued (not yet running) command that needs a required mechanism has a higher priority.
    LowerPriorityThanQueued {
        /// The queued command's name.
        queued: String,
        /// Its priority.
        queued_priority: i32,
        /// The rejected command's priority.
        priority: i32,
    },
    /// Scheduled from inside a command that was already canceled or finished.
    ParentNotRunning {
        /// The would-be parent's name.
        parent: String,
    },
    /// The robot is disabled and the command requires a mechanism that is not controllable while
    /// disabled (docs/commands.md §12.2).
    RobotDisabled {
        /// The refused command's name.
        command: String,
        /// The first of its mechanisms not controllable while disabled.
        mechanism: String,
    },
    /// The scheduling command already started `limit` children in this `run()` (a loop that
    /// starts children that end at once without ever yielding would otherwise never return).
    TooManyStarts {
        /// The scheduling command's name.
        parent: String,
        /// The per-run limit.
        limit: u32,
    },
}

impl ScheduleResult {
    /// Whether the command was accepted.
    ///
    /// ```
    /// use tickstep_commands::ScheduleResult;
    /// assert!(ScheduleResult::Success.is_success());
    /// assert!(!ScheduleResult::AlreadyRunning.is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        matches!(self, ScheduleResult::Success)
    }
}

impl fmt::Display for ScheduleResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleResult::Success => f.write_str("scheduled"),
            ScheduleResult::AlreadyRunning => f.write_str("already scheduled or running"),
            ScheduleResult::LowerPriorityThanRunning {
                running,
                running_priority,
                priority,
            } => write!(
                f,
                "priority {priority} is lower than running command `{running}` (priority {running_priority})"
            ),
            ScheduleResult::LowerPriorityThanQueued {
                queued,
                queued_priority,
                priority,
            } => write!(
                f,
                "priority {priority} is lower than queued command `{queued}` (priority {queued_priority})"
            ),
            ScheduleResult::ParentNotRunning { parent } => {
                write!(f, "the scheduling command `{parent}` is no longer running")
            }
            ScheduleResult::RobotDisabled { command, mechanism } => write!(
                f,
                "the robot is disabled and command `{command}` requires `{mechanism}`, which is not controllable while disabled"
            ),
            ScheduleResult::TooManyStarts { parent, limit } => write!(
                f,
                "command `{parent}` started more than {limit} children in one run without yielding"
            ),
        }
    }
}
