//! [`HostSettings`]: the one settings type. `RuntimeBuilder` and the Bevy plugin's builder each
//! hold one, delegate every shared knob's setter to it and check it the same way, so every knob of
//! the kernel and the schedules engine exists on both with one name and one meaning
//! (docs/runtime.md §8.3). Its error, [`SettingsError`], is a leaf of `error.rs`.

use std::time::Duration;

use tickstep_kernel::{KernelConfig, Priority, Role};
use tickstep_schedules::{Config, Namespace};

use crate::error::SettingsError;
use crate::firings::FiringLimits;

/// The schedules engine's default tick: 10 ms.
///
/// ```
/// assert_eq!(tickstep_host::DEFAULT_SCHEDULES_TICK.as_millis(), 10);
/// ```
pub const DEFAULT_SCHEDULES_TICK: Duration = tickstep_schedules::DEFAULT_TICK;

/// The most time one schedules tick spends starting firings by default: the kernel's floor
/// budget, 1.5 ms, the slice of work a server step is sure to get (docs/runtime.md §3.4).
///
/// ```
/// assert_eq!(tickstep_host::DEFAULT_SCHEDULES_TICK_TIME, tickstep_host::kernel::DEFAULT_BUDGET);
/// ```
pub const DEFAULT_SCHEDULES_TICK_TIME: Duration = tickstep_kernel::DEFAULT_BUDGET;

/// The settings every host shares: the kernel's role, budget and frame target, diagnostics, the
/// schedules tick and its time slice, the firing priority and limits, the jitter seed, the lease
/// and the namespace. Each knob has one setter, here; a host's builder holds one `HostSettings`
/// and each of its setters for these knobs is a one-line delegation to the setter of the same
/// name (docs/runtime.md §8.3).
///
/// ```
/// use std::time::Duration;
/// use tickstep_host::HostSettings;
/// let settings = HostSettings::default()
///     .budget(Duration::from_millis(2))
///     .frame_target(Duration::from_millis(16));
/// assert!(settings.check().is_ok());
/// assert!(settings.diagnostics_on()); // a server's default
/// ```
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub struct HostSettings {
    role: Role,
    budget: Option<Duration>,
    frame_target: Option<Duration>,
    diagnostics: Option<bool>,
    // The core reads these three when it is made (`HostCore::new`); the rest reach the kernel and
    // the engine through `kernel_config` and `schedules_config`.
    pub(crate) schedules_tick: Duration,
    schedules_tick_time: Option<Duration>,
    pub(crate) firing_priority: Priority,
    pub(crate) firing_limits: FiringLimits,
    rng_seed: Option<u64>,
    lease: Option<Duration>,
    namespace: Option<Namespace>,
    rerun_interrupted: bool,
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
            rerun_interrupted: false,
        }
    }
}

impl HostSettings {
    /// Server (frame-aware budget, overload diagnostics) or client (a fixed slice). Default
    /// server.
    ///
    /// ```
    /// use tickstep_host::kernel::Role;
    /// assert_eq!(tickstep_host::HostSettings::default().role(Role::Client).role_of(), Role::Client);
    /// ```
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// The main scheduler's fixed slice, or the floor of the frame-aware budget when a frame
    /// target is set (docs/kernel.md §4.1). Default: the role's, 1.5 ms.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _s = tickstep_host::HostSettings::default().budget(Duration::from_millis(3));
    /// ```
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The frame-aware budget's frame target: the main scheduler spends what the target leaves
    /// after the rest of the frame (docs/kernel.md §4.1). Default: the role's.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _s = tickstep_host::HostSettings::default().frame_target(Duration::from_millis(30));
    /// ```
    pub fn frame_target(mut self, target: Duration) -> Self {
        self.frame_target = Some(target);
        self
    }

    /// Overload diagnostics on or off; unset, on for a server and off for a client (which
    /// cannot have them).
    ///
    /// ```
    /// assert!(!tickstep_host::HostSettings::default().diagnostics(false).diagnostics_on());
    /// ```
    pub fn diagnostics(mut self, on: bool) -> Self {
        self.diagnostics = Some(on);
        self
    }

    /// The schedules tick: interval floor, and the most often the engine is ticked. Default
    /// [`DEFAULT_SCHEDULES_TICK`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _s = tickstep_host::HostSettings::default().schedules_tick(Duration::from_millis(50));
    /// ```
    pub fn schedules_tick(mut self, tick: Duration) -> Self {
        self.schedules_tick = tick;
        self
    }

    /// The most time one schedules tick spends starting firings (docs/runtime.md §3.4). Default
    /// [`DEFAULT_SCHEDULES_TICK_TIME`]; `None` bounds a tick by count alone.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let _s = tickstep_host::HostSettings::default().schedules_tick_time(Some(Duration::from_millis(4)));
    /// ```
    pub fn schedules_tick_time(mut self, slice: Option<Duration>) -> Self {
        self.schedules_tick_time = slice;
        self
    }

    /// The kernel priority firings run at. Default Normal.
    ///
    /// ```
    /// let _s = tickstep_host::HostSettings::default().firing_priority(tickstep_host::kernel::Priority::Low);
    /// ```
    pub fn firing_priority(mut self, priority: Priority) -> Self {
        self.firing_priority = priority;
        self
    }

    /// The limits every firing runs under unless its schedule has its own. Default none.
    ///
    /// ```
    /// use tickstep_host::{FiringLimits, HostSettings};
    /// let _s = HostSettings::default().firing_limits(FiringLimits::none().ticks(100));
    /// ```
    pub fn firing_limits(mut self, limits: FiringLimits) -> Self {
        self.firing_limits = limits;
        self
    }

    /// Seeds the schedules' jitter generator (deterministic tests). Default: from the clock.
    ///
    /// ```
    /// assert_eq!(tickstep_host::HostSettings::default().rng_seed(7).schedules_config().rng_seed, Some(7));
    /// ```
    pub fn rng_seed(mut self, seed: u64) -> Self {
        self.rng_seed = Some(seed);
        self
    }

    /// How long a node's claims on a shared `PostgreSQL` store outlive its last heartbeat
    /// (docs/schedules.md §11.25). Default: the engine's, 10 s.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let config = tickstep_host::HostSettings::default().lease(Duration::from_secs(2)).schedules_config();
    /// assert_eq!(config.lease, Duration::from_secs(2));
    /// ```
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// The application's namespace in its store (docs/schedules.md §15, docs/runtime.md §6.6).
    /// Default: named after the program ([`program_namespace`]).
    ///
    /// ```
    /// let ns = tickstep_host::schedules::Namespace::new("billing").unwrap();
    /// let config = tickstep_host::HostSettings::default().namespace(ns).schedules_config();
    /// assert_eq!(config.namespace, ns);
    /// ```
    pub fn namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(namespace);
        self
    }

    /// Runs again every firing handed back as interrupted — in flight when the store was last
    /// saved, or running on a node whose schedules this one takes over — instead of abandoning
    /// it or settling it as taken over (docs/runtime.md §6.7, docs/schedules.md §11.57): at
    /// least once, for verbs that check what an earlier run did (`VerbCall::is_rerun`). Default
    /// off: at most once.
    ///
    /// ```
    /// let config = tickstep_host::HostSettings::default().rerun_interrupted(true).schedules_config();
    /// assert!(config.hand_back_taken_over);
    /// ```
    pub fn rerun_interrupted(mut self, on: bool) -> Self {
        self.rerun_interrupted = on;
        self
    }

    /// The role set (the kernel a host boots runs in it).
    ///
    /// ```
    /// use tickstep_host::kernel::Role;
    /// assert_eq!(tickstep_host::HostSettings::default().role_of(), Role::Server);
    /// ```
    pub fn role_of(&self) -> Role {
        self.role
    }

    /// Checks every rule: positive durations, a budget no larger than the frame target, no
    /// diagnostics on a client.
    ///
    /// # Errors
    ///
    /// The first [`SettingsError`] found.
    ///
    /// ```
    /// use std::time::Duration;
    /// let settings = tickstep_host::HostSettings::default()
    ///     .budget(Duration::from_millis(20))
    ///     .frame_target(Duration::from_millis(16));
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
    /// let settings = tickstep_host::HostSettings::default().role(tickstep_host::kernel::Role::Client);
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
    /// use tickstep_host::kernel::KernelConfig;
    /// let settings = tickstep_host::HostSettings::default().budget(Duration::from_millis(3));
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

    /// The schedules engine's configuration: tick, tick time, seed, lease, namespace and the
    /// hand-back of taken-over firings.
    ///
    /// ```
    /// let config = tickstep_host::HostSettings::default().schedules_config();
    /// assert_eq!(config.tick, tickstep_host::DEFAULT_SCHEDULES_TICK);
    /// assert_eq!(config.namespace, tickstep_host::program_namespace());
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
        config.hand_back_taken_over = self.rerun_interrupted;
        config
    }
}

/// The namespace a host names after its program when its builder sets none (docs/runtime.md
/// §6.6): the running executable's file stem, each character the namespace rule does not allow
/// made `-` (docs/schedules.md §15.1); `default` when the executable cannot be named.
///
/// ```
/// let name = tickstep_host::program_namespace();
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
