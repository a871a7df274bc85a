//! What can go wrong configuring or installing the plugin.

use tickstep_host::{HostError, SettingsError};
use tickstep_kernel::ScheduleError;

/// A plugin setting that breaks a rule, or a store that cannot be opened.
///
/// ```
/// use std::time::Duration;
/// use tickstep_bevy::{PluginError, SettingsError, TickstepPlugin};
///
/// let err = TickstepPlugin::builder().frame_target(Duration::ZERO).build().unwrap_err();
/// assert!(matches!(err, PluginError::Settings(SettingsError::ZeroDuration { what: "frame target", .. })));
/// assert_eq!(err.to_string(), "frame target must be greater than zero (got 0ns)");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// A setting every host shares broke a rule (a zero duration, a budget above the frame
    /// target, diagnostics on a client).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The kernel refused a setting.
    #[error(transparent)]
    Kernel(#[from] ScheduleError),
    /// The host core could not open the durable schedules' store
    /// ([`HostError::Store`] or [`HostError::StoreDir`]).
    #[error(transparent)]
    Host(#[from] HostError),
}
