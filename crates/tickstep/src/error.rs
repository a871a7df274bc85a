//! What can go wrong building or running a [`Runtime`](crate::Runtime).

use std::path::PathBuf;

use tickstep_commands::RunError;
use tickstep_kernel::ScheduleError;

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
/// assert!(matches!(err, RuntimeError::Kernel(_)));
/// assert_eq!(err.to_string(), "FrameLoop target frame rate must be 1 to 1000 fps (got 0)");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The kernel refused a setting (a frame rate out of range, diagnostics on a client).
    #[error(transparent)]
    Kernel(#[from] ScheduleError),
    /// A period that must be positive was zero.
    #[error("{what} must be greater than zero (got {got:?})")]
    ZeroPeriod {
        /// Which setting.
        what: &'static str,
        /// The value given.
        got: std::time::Duration,
    },
    /// The schedule store could not be opened or written.
    #[error("schedule store {path}: {source}")]
    Store {
        /// The store file.
        path: PathBuf,
        /// What the schedule engine reported.
        #[source]
        source: tickstep_schedules::Error,
    },
    /// The store's directory could not be created.
    #[error("cannot create the store directory {path}: {source}")]
    StoreDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A command body failed: as in the command layer, the failure is not swallowed. The command
    /// cycle stops (no further `run()`), and the `run_*` call that saw it returns this.
    #[error("command failed: {0}")]
    Command(#[from] RunError),
    /// A command body panicked inside the command cycle. The kernel isolated the panic, the command
    /// cycle stops, and the `run_*` call that saw it returns this.
    #[error("command panicked: {message}")]
    CommandPanicked {
        /// The panic message.
        message: String,
    },
}
