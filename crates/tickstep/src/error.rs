//! What can go wrong building or running a [`Runtime`](crate::Runtime).

use std::path::PathBuf;

use std::time::Duration;
use tickstep_commands::RunError;

use tickstep_kernel::{FrameLoopError, Role, ScheduleError};

/// A typed runtime error. Each variant names the value and the rule it broke.
///
/// ```
/// use tickstep::{Runtime, RuntimeError};
/// use tickstep::kernel::{ManualClock, Role};
///
/// let err = Runtime::builder()
///     .manual_clock(ManualClock::new())
///     .in_memory_store()
///     .frame_rate(0)
///     .build()
///     .unwrap_err();
/// assert!(matches!(err, RuntimeError::FrameLoop(_)));
/// assert_eq!(err.to_string(), "FrameLoop target frame rate must be 1 to 1000 fps (got 0)");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The kernel refused a setting (diagnostics on a client).
    #[error(transparent)]
    Kernel(#[from] ScheduleError),
    /// The frame loop refused its settings (a frame rate out of range).
    #[error(transparent)]
    FrameLoop(#[from] FrameLoopError),
    /// A setting broke a rule (a zero period or tick, a budget above the frame target,
    /// diagnostics on a client).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The host core's engine was opened twice (docs/runtime.md §8.1).
    #[error("the schedules engine of this host is open already")]
    AlreadyOpen,
    /// The schedule store could not be opened or written.
    #[error("schedule store {path} failed")]
    Store {
        /// The store file or URL.
        path: PathBuf,
        /// What the schedule engine reported.
        #[source]
        source: tickstep_schedules::Error,
    },
    /// The store's directory could not be created.
    #[error("cannot create the store directory {path}")]
    StoreDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A command body failed: as in the command layer, the failure is not swallowed. The command
    /// cycle stops (no further `run()`), and the `run_*` call that saw it returns this.
    #[error(transparent)]
    Command(#[from] RunError),
    /// A command body panicked inside the command cycle. The kernel isolated the panic, the command
    /// cycle stops, and the `run_*` call that saw it returns this.
    #[error("command panicked: {message}")]
    CommandPanicked {
        /// The panic message.
        message: String,
    },
}

/// A host setting that breaks a rule (docs/runtime.md §8.3).
///
/// ```
/// use std::time::Duration;
/// use tickstep::SettingsError;
/// use tickstep::host::HostSettings;
/// let mut settings = HostSettings::default();
/// settings.schedules_tick = Duration::ZERO;
/// let err = settings.check().unwrap_err();
/// assert!(matches!(err, SettingsError::ZeroDuration { what: "schedules tick", .. }));
/// assert_eq!(err.to_string(), "schedules tick must be greater than zero (got 0ns)");
/// ```
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingsError {
    /// A duration that must be positive was zero.
    #[error("{what} must be greater than zero (got {got:?})")]
    ZeroDuration {
        /// Which setting.
        what: &'static str,
        /// The value given.
        got: Duration,
    },
    /// The budget (the frame-aware floor) exceeds the frame target.
    #[error("budget {budget:?} must not exceed the frame target {target:?}")]
    BudgetAboveTarget {
        /// The budget given.
        budget: Duration,
        /// The frame target given.
        target: Duration,
    },
    /// Overload diagnostics were asked for on a client (the kernel publishes them on servers
    /// only, kernel.md §11.6).
    #[error("overload diagnostics are server-only (role {role:?})")]
    DiagnosticsOnClient {
        /// The role configured.
        role: Role,
    },
}
