//! Lifecycle events: what the scheduler did to which command instance, and when.

use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use tickstep_kernel::clock::Instant;

/// One scheduled instance of a command. Every `schedule` (or fork) of a command gets a new id;
/// ids are never reused by a scheduler.
///
/// ```
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let cmd = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
/// scheduler.schedule(&cmd);
/// let id = scheduler.queued()[0].id;
/// assert_eq!(id.to_string(), format!("#{}", id.get()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct CommandId(pub(crate) u64);

impl CommandId {
    /// The raw number (1 for the first instance a scheduler creates).
    ///
    /// ```
    /// # use tickstep_commands::{Command, CommandScheduler};
    /// # use tickstep_commands::kernel::clock::ManualClock;
    /// # let scheduler = CommandScheduler::new(ManualClock::new());
    /// # let cmd = Command::no_requirements().executing(|co| async move { co.park().await; }).named("c");
    /// scheduler.schedule(&cmd);
    /// assert_eq!(scheduler.queued()[0].id.get(), 1);
    /// ```
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for CommandId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What happened to a command.
///
/// ```
/// use tickstep_commands::EventKind;
/// assert_eq!(EventKind::Mounted.label(), "Mounted");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum EventKind {
    /// Queued (top level) or started as a child; not yet polled.
    Scheduled,
    /// About to be polled (once per cycle while it runs).
    Mounted,
    /// Polled and returned at a yield point; it stays running.
    Yielded,
    /// The body returned `Ok` (or `()`); its requirements are released.
    Completed,
    /// Displaced by a conflicting command; always directly followed by [`EventKind::Canceled`].
    Interrupted {
        /// The command that took over.
        by: CommandId,
        /// Its name.
        by_name: Rc<str>,
    },
    /// Canceled: by `cancel`, by an interruption, by its parent ending, by its scope ending, or
    /// because the robot is disabled.
    Canceled,
    /// The robot is disabled and this command (the root of a composition) requires, or has a
    /// descendant that requires, a mechanism not controllable while disabled; always directly
    /// followed by [`EventKind::Canceled`] (docs/commands.md §12.3, §12.4).
    Disabled {
        /// The mechanism's name.
        mechanism: Rc<str>,
    },
    /// The body returned `Err` or panicked.
    CompletedWithError {
        /// The error's or panic's message.
        message: String,
    },
    /// A single mount ran longer than the watchdog limit without yielding (a greedy loop).
    Overran {
        /// How long the mount took.
        elapsed: Duration,
        /// The configured limit.
        limit: Duration,
    },
}

impl EventKind {
    /// The variant's name, for logs and compact test assertions.
    ///
    /// ```
    /// use tickstep_commands::EventKind;
    /// assert_eq!(EventKind::CompletedWithError { message: "x".into() }.label(), "CompletedWithError");
    /// ```
    pub fn label(&self) -> &'static str {
        match self {
            EventKind::Scheduled => "Scheduled",
            EventKind::Mounted => "Mounted",
            EventKind::Yielded => "Yielded",
            EventKind::Completed => "Completed",
            EventKind::Interrupted { .. } => "Interrupted",
            EventKind::Canceled => "Canceled",
            EventKind::Disabled { .. } => "Disabled",
            EventKind::CompletedWithError { .. } => "CompletedWithError",
            EventKind::Overran { .. } => "Overran",
        }
    }
}

/// A lifecycle event delivered to listeners added with
/// [`CommandScheduler::on_event`](crate::CommandScheduler::on_event).
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let sink = log.clone();
/// scheduler.on_event(move |e| sink.borrow_mut().push(e.to_string()));
/// let cmd = Command::no_requirements().executing(|_co| async move {}).named("blink");
/// scheduler.schedule(&cmd);
/// scheduler.run().unwrap();
/// assert_eq!(*log.borrow(), ["Scheduled blink", "Mounted blink", "Completed blink"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// Which command instance.
    pub command: CommandId,
    /// The command's name.
    pub name: Rc<str>,
    /// When, on the scheduler's clock.
    pub at: Instant,
}

/// `"Kind name"`; an interruption also says by whom: `"Interrupted name by other"`, and a
/// cancellation for a disabled robot which mechanism: `"Disabled name (requires arm)"`.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            EventKind::Interrupted { by_name, .. } => {
                write!(f, "Interrupted {} by {by_name}", self.name)
            }
            EventKind::Disabled { mechanism } => {
                write!(f, "Disabled {} (requires {mechanism})", self.name)
            }
            kind => write!(f, "{} {}", kind.label(), self.name),
        }
    }
}
