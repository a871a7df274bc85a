//! Runs: one scheduled instance of a command, as a handle to await or cancel
//! (docs/commands.md §13). A leaf over the identity types: a [`Run`] is the instance's id and
//! its slab key, two integers, so tracking a run stores nothing anywhere.

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::event::CommandId;
use crate::id::Key;

/// One run of a command: what [`CommandScheduler::schedule_run`](crate::CommandScheduler::schedule_run)
/// and [`Coroutine::fork_run`](crate::Coroutine::fork_run) return. A command scheduled twice
/// is two runs, with two ids; awaiting or canceling a run acts on that run only, never on a
/// later run of the same command (docs/commands.md §13.1–§13.3). Its id is the
/// [`CommandId`] its events and telemetry carry.
///
/// ```
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let blink = Command::no_requirements().executing(|co| async move { co.park().await; }).named("blink");
/// let first = scheduler.schedule_run(&blink).unwrap();
/// scheduler.cancel(&blink);
/// let second = scheduler.schedule_run(&blink).unwrap();
/// assert_ne!(first, second);
/// assert!(!scheduler.cancel_run(first), "the first run already ended");
/// assert!(scheduler.is_live(second));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub(crate) id: CommandId,
    pub(crate) key: Key,
}

impl Run {
    /// The run's id: the [`CommandId`] of the instance, unique within its scheduler.
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// let scheduler = CommandScheduler::new(ManualClock::new());
    /// let c = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// let run = scheduler.schedule_run(&c).unwrap();
    /// assert_eq!(scheduler.queued()[0].id, run.id());
    /// ```
    pub fn id(self) -> CommandId {
        self.id
    }
}

/// Runs are equal when their ids are (ids are never reused by a scheduler).
impl PartialEq for Run {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Run {}

impl Hash for Run {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

/// Prints as its id: `#7`.
impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.id.fmt(f)
    }
}
