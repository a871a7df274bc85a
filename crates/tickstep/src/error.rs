//! What can go wrong building or running a [`Runtime`](crate::Runtime).

use tickstep_commands::RunError;
use tickstep_host::{HostError, SettingsError};
use tickstep_kernel::{FrameLoopError, ScheduleError};

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
    /// The schedule store could not be opened (its directory not created, the engine opened
    /// twice) or, at shutdown, written: the host core's error, the one the Bevy plugin returns
    /// too (docs/runtime.md §9.31).
    #[error(transparent)]
    Host(#[from] HostError),
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
