//! What can go wrong in a host core: a setting that breaks a rule ([`SettingsError`]) or a store
//! that cannot be opened ([`HostError`]). Every host wraps both, so each failure has one type and
//! one text whichever host meets it (docs/runtime.md §9.21).

use std::path::PathBuf;
use std::time::Duration;

use tickstep_kernel::Role;

/// A host core could not open its schedules engine (docs/runtime.md §8.1).
///
/// ```
/// use tickstep_host::{HostCore, HostError, HostSettings};
/// use tickstep_host::kernel::{FrameScheduler, ManualClock, SchedulerConfig};
/// use tickstep_host::schedules::OpenWorld;
/// let clock = ManualClock::new();
/// let core = HostCore::new(clock.clone(), FrameScheduler::new(clock, SchedulerConfig::server()),
///     &HostSettings::default(), None);
/// core.open(None, Box::new(OpenWorld), None)?;
/// let again = core.open(None, Box::new(OpenWorld), None).unwrap_err();
/// assert!(matches!(again, HostError::AlreadyOpen));
/// # Ok::<(), HostError>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The host core's engine was opened twice (docs/runtime.md §8.1).
    #[error("the schedules engine of this host is open already")]
    AlreadyOpen,
    /// The schedule store could not be opened, or a host's final commit could not write it.
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
}

/// A host setting that breaks a rule (docs/runtime.md §8.3).
///
/// ```
/// use std::time::Duration;
/// use tickstep_host::{HostSettings, SettingsError};
/// let err = HostSettings::default().schedules_tick(Duration::ZERO).check().unwrap_err();
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
