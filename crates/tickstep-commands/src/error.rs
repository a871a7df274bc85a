//! Typed errors: every message names the value that was wrong and the rule it broke.

use std::fmt;
use std::panic::Location;
use std::rc::Rc;
use std::time::Duration;

use crate::event::CommandId;
use crate::schedule_result::ScheduleResult;

/// The error type a command body may return: any error, boxed.
///
/// ```
/// use tickstep_commands::BoxError;
/// let e: BoxError = "sensor unplugged".into();
/// assert_eq!(e.to_string(), "sensor unplugged");
/// ```
pub type BoxError = Box<dyn std::error::Error + 'static>;

/// A command body failed: `run()` returns this after emitting `CompletedWithError` and cancelling
/// the failed command's root composition.
///
/// It names the command and where it was scheduled (or bound, for a trigger binding).
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let failing = Command::no_requirements()
///     .executing_fallible(|_co| async move { Err("motor stalled".into()) })
///     .named("intake");
/// scheduler.schedule(&failing);
/// let err = scheduler.run().unwrap_err();
/// assert_eq!(&*err.command, "intake");
/// // The cause is the source, not part of the message (docs/README.md, "Errors").
/// assert_eq!(std::error::Error::source(&err).unwrap().to_string(), "motor stalled");
/// assert!(!err.to_string().contains("motor stalled"));
/// assert!(err.to_string().contains("scheduled at"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[error("command `{command}` ({id}, scheduled at {scheduled_at}) failed")]
pub struct RunError {
    /// The failed command's name.
    pub command: Rc<str>,
    /// The failed command instance.
    pub id: CommandId,
    /// Where the command was scheduled, forked, awaited or bound.
    pub scheduled_at: &'static Location<'static>,
    /// What the body returned.
    #[source]
    pub source: BoxError,
}

/// Two commands that cannot run side by side, and the mechanisms they both require.
///
/// ```
/// use tickstep_commands::ConflictPair;
/// let pair = ConflictPair { first: "raise".into(), second: "lower".into(), mechanisms: vec!["arm".into()] };
/// assert_eq!(pair.to_string(), "`raise` and `lower` (both require arm)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictPair {
    /// The earlier command of the pair.
    pub first: String,
    /// The later command of the pair.
    pub second: String,
    /// Names of the mechanisms both require.
    pub mechanisms: Vec<String>,
}

impl fmt::Display for ConflictPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` and `{}` (both require {})",
            self.first,
            self.second,
            self.mechanisms.join(", ")
        )
    }
}

pub(crate) fn list_pairs(pairs: &[ConflictPair]) -> String {
    pairs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A fork or await could not start its children. Nothing was started (all-or-nothing).
///
/// ```
/// use tickstep_commands::{Command, ForkError, Mechanism, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
/// use std::{cell::RefCell, rc::Rc};
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let a = arm.run(|co| async move { co.park().await; }).named("a");
/// let b = arm.run(|co| async move { co.park().await; }).named("b");
/// let seen = Rc::new(RefCell::new(None));
/// let out = seen.clone();
/// let parent = Command::no_requirements()
///     .executing(move |co| {
///         let (a, b, out) = (a.clone(), b.clone(), out.clone());
///         async move { *out.borrow_mut() = Some(co.fork([&a, &b])); }
///     })
///     .named("parent");
/// scheduler.schedule(&parent);
/// scheduler.run().unwrap();
/// let err = seen.borrow_mut().take().unwrap().unwrap_err();
/// assert!(matches!(err, ForkError::Conflicting { .. }));
/// assert!(err.to_string().contains("`a` and `b` (both require arm)"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    /// Some of the commands forked together require the same mechanism.
    #[error("cannot fork mutually conflicting commands: {}", list_pairs(.pairs))]
    Conflicting {
        /// Every conflicting pair.
        pairs: Vec<ConflictPair>,
    },
    /// A command to fork is already scheduled or running elsewhere.
    #[error("cannot fork `{command}`: it is already scheduled or running")]
    AlreadyRunning {
        /// The command's name.
        command: String,
    },
    /// A command lost a priority conflict against a running command.
    #[error("cannot fork `{command}`: {reason}")]
    Rejected {
        /// The command's name.
        command: String,
        /// Why the scheduler refused it.
        reason: ScheduleResult,
    },
    /// The forking command was already canceled or finished.
    #[error("cannot fork `{command}`: the forking command `{parent}` is no longer running")]
    ParentFinished {
        /// The command that could not be forked.
        command: String,
        /// The command that tried to fork it.
        parent: String,
    },
}

/// A composition could not be built from the given commands.
///
/// ```
/// use tickstep_commands::{compose, CompositionError, Mechanism, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let a = arm.run(|co| async move { co.yield_now().await; }).named("a");
/// let b = arm.run(|co| async move { co.yield_now().await; }).named("b");
/// let err = compose::parallel([&a, &b]).unwrap_err();
/// assert!(matches!(err, CompositionError::ConflictingChildren { .. }));
/// assert_eq!(
///     err.to_string(),
///     "parallel children must not share mechanisms: `a` and `b` (both require arm)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CompositionError {
    /// Children meant to run at the same time require the same mechanism.
    #[error("{kind} children must not share mechanisms: {}", list_pairs(.pairs))]
    ConflictingChildren {
        /// `parallel`, `race` or `deadline`.
        kind: &'static str,
        /// Every conflicting pair.
        pairs: Vec<ConflictPair>,
    },
    /// The composition was given no commands (or a deadline no required command).
    #[error("a {kind} needs at least one command")]
    Empty {
        /// The composition kind.
        kind: &'static str,
    },
    /// The same command appears twice among children that run at the same time.
    #[error("`{command}` appears more than once in a {kind}; a command runs once at a time")]
    Duplicate {
        /// The composition kind.
        kind: &'static str,
        /// The repeated command's name.
        command: String,
    },
}

/// `set_default_command` was given a command that does not fit the mechanism.
///
/// ```
/// use tickstep_commands::{Command, DefaultCommandError, Mechanism, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let arm = Mechanism::new(&scheduler, "arm");
/// let free = Command::no_requirements().executing(|co| async move { co.park().await; }).named("free");
/// let err = arm.set_default_command(&free).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "default command `free` for mechanism `arm` must require exactly that mechanism (it requires [])"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefaultCommandError {
    /// The command requires other mechanisms, or not this one.
    #[error(
        "default command `{command}` for mechanism `{mechanism}` must require exactly that mechanism (it requires [{}])",
        .requirements.join(", ")
    )]
    WrongRequirements {
        /// The mechanism's name.
        mechanism: String,
        /// The command's name.
        command: String,
        /// The names of what the command requires.
        requirements: Vec<String>,
    },
}

/// A trigger combinator was given an impossible parameter.
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::{CommandScheduler, Trigger, TriggerError};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let button = Trigger::new(&scheduler, || false);
/// let err = button.multi_press(0, Duration::from_millis(500)).unwrap_err();
/// assert_eq!(err, TriggerError::InvalidPressCount { count: 0 });
/// assert_eq!(err.to_string(), "multi_press needs a press count of at least 1 (got 0)");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TriggerError {
    /// A press count of zero or less.
    #[error("multi_press needs a press count of at least 1 (got {count})")]
    InvalidPressCount {
        /// The count given.
        count: i64,
    },
    /// A zero-length window.
    #[error("multi_press needs a window longer than zero (got {window:?})")]
    InvalidWindow {
        /// The window given.
        window: Duration,
    },
    /// A window in seconds that is not a finite number above zero (negative, zero, NaN, ∞).
    #[error("multi_press window must be a finite number of seconds > 0 (got {seconds})")]
    InvalidWindowSeconds {
        /// The seconds given.
        seconds: f64,
    },
}

/// A state machine could not be built.
///
/// ```
/// use tickstep_commands::compose::StateMachine;
/// use tickstep_commands::StateMachineError;
///
/// let machine = StateMachine::new("empty");
/// assert_eq!(machine.build().unwrap_err(), StateMachineError::NoStates { machine: "empty".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateMachineError {
    /// No state was added.
    #[error("state machine `{machine}` has no states")]
    NoStates {
        /// The machine's name.
        machine: String,
    },
    /// A state id from a different machine was used.
    #[error("state machine `{machine}` was given state {state} of another machine")]
    ForeignState {
        /// The machine's name.
        machine: String,
        /// The foreign state's index.
        state: usize,
    },
    /// The machine entered more than `limit` states within one `run()` without yielding: its
    /// transition conditions keep changing every time they are read, so it would never return.
    #[error(
        "state machine `{machine}` entered more than {limit} states in one run without yielding (conditions that flip every read?)"
    )]
    TooManyEntries {
        /// The machine's name.
        machine: String,
        /// The per-run limit.
        limit: u32,
    },
}
