//! What can go wrong configuring or installing the plugin.

use std::path::PathBuf;
use std::time::Duration;

use tickstep_kernel::{Role, ScheduleError};

/// A plugin setting that breaks a rule, or a store that cannot be opened.
///
/// ```
/// use std::time::Duration;
/// use tickstep_bevy::{PluginError, TickstepPlugin};
///
/// let err = TickstepPlugin::builder().frame_target(Duration::ZERO).build().unwrap_err();
/// assert!(matches!(err, PluginError::ZeroDuration { what: "frame target", .. }));
/// assert_eq!(err.to_string(), "frame target must be greater than zero (got 0ns)");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// A duration that must be positive was zero.
    #[error("{what} must be greater than zero (got {got:?})")]
    ZeroDuration {
        /// Which setting.
        what: &'static str,
        /// The value given.
        got: Duration,
    },
    /// The fixed budget (the frame-aware floor) exceeds the frame target.
    #[error("budget {budget:?} must not exceed the frame target {target:?}")]
    BudgetAboveTarget {
        /// The budget given.
        budget: Duration,
        /// The frame target given.
        target: Duration,
    },
    /// Overload diagnostics were asked for on a client (the kernel publishes them on servers only).
    #[error("overload diagnostics are server-only (role {role:?})")]
    DiagnosticsOnClient {
        /// The role configured.
        role: Role,
    },
    /// The kernel refused a setting.
    #[error(transparent)]
    Kernel(#[from] ScheduleError),
    /// The durable schedules' store could not be opened.
    #[error("schedule store {path} failed")]
    Store {
        /// The store file.
        path: PathBuf,
        /// Why.
        #[source]
        source: tickstep_schedules::Error,
    },
    /// The store's directory could not be created.
    #[error("cannot create the store directory {path}")]
    StoreDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
