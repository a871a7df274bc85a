//! [`HostSettings`]: the one builder core. `RuntimeBuilder` and the Bevy plugin's builder each
//! fill one in and check it the same way, so every knob of the kernel and the schedules engine
//! exists on both (docs/runtime.md §8.3). Its error, [`SettingsError`], is a leaf of
//! `error.rs`.

use std::time::Duration;

use tickstep_kernel::{KernelConfig, Priority, Role};
use tickstep_schedules::{Config, Namespace};

use super::firings::FiringLimits;
use crate::error::SettingsError;

/// The schedules engine's default tick: 10 ms.
///
/// ```
/// assert_eq!(tickstep::DEFAULT_SCHEDULES_TICK.as_millis(), 10);
/// ```
pub const DEFAULT_SCHEDULES_TICK: Duration = tickstep_schedules::DEFAULT_TICK;

/// The most time one schedules tick spends starting firings by default: the kernel's floor
/// budget, 1.5 ms, the slice of work a server step is sure to get (docs/runtime.md §3.4).
///
/// ```
/// assert_eq!(tickstep::DEFAULT_SCHEDULES_TICK_TIME, tickstep::kernel::DEFAULT_BUDGET);
/// ```
pub const DEFAULT_SCHEDULES_TICK_TIME: Duration = tickstep_kernel::DEFAULT_BUDGET;

/// The settings every host shares: the kernel's role, budget and frame target, diagnostics, the
/// schedules tick and its time slice, the firing priority and limits, and the jitter seed.
///
/// ```
/// use std::time::Duration;
/// use tickstep::host::HostSettings;
/// let mut settings = HostSettings::default();
/// settings.budget = Some(Duration::from_millis(2));
/// settings.frame_target = Some(Duration::from_millis(16));
/// assert!(settings.check().is_ok());
/// assert!(settings.diagnostics_on()); // a server's default
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct HostSettings {
    /// Server (frame-aware budget, diagnostics) or client (a fixed slice). Default server.
    pub role: Role,
    /// The main scheduler's fixed slice, or the floor of the frame-aware budget when a frame
    /// target is set (kernel.md §4). `None`: the role's default, 1.5 ms.
    pub budget: Option<Duration>,
    /// The frame-aware budget's target frame time. `None`: the role's default.
    pub frame_target: Option<Duration>,
    /// Overload diagnostics; `None` is on for a server and off for a client.
    pub diagnostics: Option<bool>,
    /// The schedules tick: interval floor, and the most often the engine is ticked. Default
    /// [`DEFAULT_SCHEDULES_TICK`].
    pub schedules_tick: Duration,
    /// The most time one tick spends starting firings. Default [`DEFAULT_SCHEDULES_TICK_TIME`].
    pub schedules_tick_time: Option<Duration>,
    /// The kernel priority firings run at. Default Normal.
    pub firing_priority: Priority,
    /// The limits every firing runs under unless its schedule has its own. Default none.
    pub firing_limits: FiringLimits,
    /// The schedules' jitter seed (deterministic tests). Default: from the clock.
    pub rng_seed: Option<u64>,
    /// How long a node's claims on a shared `PostgreSQL` store outlive its last heartbeat
    /// (docs/schedules.md §11.25). `None`: the engine's default, 10 s.
    pub lease: Option<Duration>,
    /// The application's namespace in its store (docs/schedules.md §15, docs/runtime.md §6.6).
    /// `None`: named after the program ([`program_namespace`]).
    pub namespace: Option<Namespace>,
}

impl Default for HostSettings {
    fn default() -> Self {
        HostSettings {
            role: Role::Server,
            budget: None,
            frame_target: None,
            diagnostics: None,
            schedules_tick: DEFAULT_SCHEDULES_TICK,
            schedules_tick_time: Some(DEFAULT_SCHEDULES_TICK_TIME),
            firing_priority: Priority::Normal,
            firing_limits: FiringLimits::none(),
            rng_seed: None,
            lease: None,
            namespace: None,
        }
    }
}

impl HostSettings {
    /// Checks every rule: positive durations, a budget no larger than the frame target, no
    /// diagnostics on a client.
    ///
    /// # Errors
    ///
    /// The first [`SettingsError`] found.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut settings = tickstep::host::HostSettings::default();
    /// settings.budget = Some(Duration::from_millis(20));
    /// settings.frame_target = Some(Duration::from_millis(16));
    /// assert!(settings.check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), SettingsError> {
        for (what, value) in [
            ("frame target", self.frame_target),
            ("budget", self.budget),
            ("schedules tick", Some(self.schedules_tick)),
            ("lease", self.lease),
        ] {
            if let Some(got) = value.filter(Duration::is_zero) {
                return Err(SettingsError::ZeroDuration { what, got });
            }
        }
        if let (Some(target), Some(budget)) = (self.frame_target, self.budget)
            && budget > target
        {
            return Err(SettingsError::BudgetAboveTarget { budget, target });
        }
        if self.diagnostics == Some(true) && self.role != Role::Server {
            return Err(SettingsError::DiagnosticsOnClient { role: self.role });
        }
        Ok(())
    }

    /// Whether overload diagnostics are on: as set, else on for a server.
    ///
    /// ```
    /// let mut settings = tickstep::host::HostSettings::default();
    /// settings.role = tickstep::kernel::Role::Client;
    /// assert!(!settings.diagnostics_on());
    /// ```
    pub fn diagnostics_on(&self) -> bool {
        self.diagnostics.unwrap_or(self.role == Role::Server)
    }

    /// The kernel's configuration: `base` (the host's frame rate and the like) with this budget
    /// and frame target.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep::kernel::KernelConfig;
    /// let mut settings = tickstep::host::HostSettings::default();
    /// settings.budget = Some(Duration::from_millis(3));
    /// let config = settings.kernel_config(KernelConfig::default().fps(30));
    /// assert_eq!(config, KernelConfig::default().fps(30).budget(Duration::from_millis(3)));
    /// ```
    pub fn kernel_config(&self, base: KernelConfig) -> KernelConfig {
        let mut config = base;
        if let Some(target) = self.frame_target {
            config = config.frame_target(target);
        }
        if let Some(budget) = self.budget {
            config = config.budget(budget);
        }
        config
    }

    /// The schedules engine's configuration: tick, tick time, seed, lease and namespace.
    ///
    /// ```
    /// let config = tickstep::host::HostSettings::default().schedules_config();
    /// assert_eq!(config.tick, tickstep::DEFAULT_SCHEDULES_TICK);
    /// assert_eq!(config.namespace, tickstep::host::program_namespace());
    /// ```
    pub fn schedules_config(&self) -> Config {
        let mut config = Config::default();
        config.tick = self.schedules_tick;
        config.max_tick_time = self.schedules_tick_time;
        config.rng_seed = self.rng_seed;
        if let Some(lease) = self.lease {
            config.lease = lease;
        }
        config.namespace = self.namespace.unwrap_or_else(program_namespace);
        config
    }
}

/// The namespace a host names after its program when its builder sets none (docs/runtime.md
/// §6.6): the running executable's file stem, each character the namespace rule does not allow
/// made `-` (docs/schedules.md §15.1); `default` when the executable cannot be named.
///
/// ```
/// let name = tickstep::host::program_namespace();
/// assert!(!name.as_str().is_empty());
/// ```
pub fn program_namespace() -> Namespace {
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
        })
        .map_or(Namespace::DEFAULT, |stem| Namespace::lossy(&stem))
}
