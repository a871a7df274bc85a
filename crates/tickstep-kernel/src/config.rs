//! How a scheduler is configured: budget mode, phase, profiling, staggering.

use std::time::Duration;

use crate::{FramePhase, Role};

/// The server's default frame-aware target: slightly under 1/60 s to leave the engine headroom.
///
/// ```
/// assert_eq!(tickstep_kernel::DEFAULT_FRAME_TARGET.as_micros(), 16_500);
/// ```
pub const DEFAULT_FRAME_TARGET: Duration = Duration::from_micros(16_500);
/// The default fixed slice (client) and frame-aware floor (server): 1.5 ms.
///
/// ```
/// assert_eq!(tickstep_kernel::DEFAULT_BUDGET.as_micros(), 1_500);
/// ```
pub const DEFAULT_BUDGET: Duration = Duration::from_micros(1_500);

/// Settings for [`FrameScheduler::new`](crate::FrameScheduler::new). Start from a role preset and adjust.
///
/// Budget selection follows docs/kernel.md §4.1: a `frame_target` selects frame-aware mode (with
/// `budget` as its floor, default 1.5 ms); a `budget` alone selects fixed mode on either role;
/// with neither, the server is frame-aware against 16.5 ms and the client gets a fixed 1.5 ms.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{BudgetMode, SchedulerConfig};
///
/// let server = SchedulerConfig::server();
/// assert_eq!(server.budget_mode(), BudgetMode::FrameAware {
///     target: Duration::from_micros(16_500), floor: Duration::from_micros(1_500) });
/// let fixed = SchedulerConfig::server().budget(Duration::from_millis(3));
/// assert_eq!(fixed.budget_mode(), BudgetMode::Fixed(Duration::from_millis(3)));
/// assert_eq!(SchedulerConfig::client().budget_mode(), BudgetMode::Fixed(Duration::from_micros(1_500)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerConfig {
    role: Role,
    budget: Option<Duration>,
    frame_target: Option<Duration>,
    phase: FramePhase,
    profile_tasks: bool,
    stagger_recurring: bool,
}

/// The budget rule a scheduler's steps run under when [`FrameScheduler::step`](crate::FrameScheduler::step)
/// gets no explicit budget.
///
/// ```
/// use std::time::Duration;
/// use tickstep_kernel::{BudgetMode, SchedulerConfig};
/// let cfg = SchedulerConfig::client().frame_target(Duration::from_millis(8));
/// assert!(matches!(cfg.budget_mode(), BudgetMode::FrameAware { .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetMode {
    /// The same slice every step.
    Fixed(Duration),
    /// Fill the frame up to `target`, never below `floor` (see the crate docs for the formulas).
    FrameAware {
        /// The frame time the scheduler aims to fill up to.
        target: Duration,
        /// The least budget a step ever gets.
        floor: Duration,
    },
}

impl BudgetMode {
    /// The fixed slice, or the floor in frame-aware mode (docs/kernel.md §4.1).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::BudgetMode;
    /// assert_eq!(BudgetMode::Fixed(Duration::from_millis(2)).floor(), Duration::from_millis(2));
    /// ```
    pub fn floor(self) -> Duration {
        match self {
            BudgetMode::Fixed(b) | BudgetMode::FrameAware { floor: b, .. } => b,
        }
    }

    /// The frame-aware target (docs/kernel.md §4.1), `None` in fixed mode.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::BudgetMode;
    /// assert_eq!(BudgetMode::Fixed(Duration::from_millis(2)).target(), None);
    /// ```
    pub fn target(self) -> Option<Duration> {
        match self {
            BudgetMode::Fixed(_) => None,
            BudgetMode::FrameAware { target, .. } => Some(target),
        }
    }
}

impl SchedulerConfig {
    /// Server defaults: frame-aware against 16.5 ms with a 1.5 ms floor, Heartbeat phase,
    /// profiling on, staggering off.
    ///
    /// ```
    /// use tickstep_kernel::{Role, SchedulerConfig};
    /// assert_eq!(SchedulerConfig::server().role(), Role::Server);
    /// ```
    pub fn server() -> Self {
        Self::for_role(Role::Server)
    }

    /// Client defaults: a fixed 1.5 ms slice, Heartbeat phase, profiling on, staggering off.
    ///
    /// ```
    /// use tickstep_kernel::{Role, SchedulerConfig};
    /// assert_eq!(SchedulerConfig::client().role(), Role::Client);
    /// ```
    pub fn client() -> Self {
        Self::for_role(Role::Client)
    }

    /// The defaults for `role`.
    ///
    /// ```
    /// use tickstep_kernel::{Role, SchedulerConfig};
    /// assert_eq!(SchedulerConfig::for_role(Role::Client), SchedulerConfig::client());
    /// ```
    pub fn for_role(role: Role) -> Self {
        SchedulerConfig {
            role,
            budget: None,
            frame_target: None,
            phase: FramePhase::Heartbeat,
            profile_tasks: true,
            stagger_recurring: false,
        }
    }

    /// Sets the fixed slice, or the floor when a frame target is also set. Alone it selects
    /// fixed mode on either role.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{BudgetMode, SchedulerConfig};
    /// let cfg = SchedulerConfig::server().budget(Duration::from_millis(2));
    /// assert_eq!(cfg.budget_mode(), BudgetMode::Fixed(Duration::from_millis(2)));
    /// ```
    #[must_use]
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Sets the frame-aware target, selecting frame-aware mode on either role.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::SchedulerConfig;
    /// let cfg = SchedulerConfig::client().frame_target(Duration::from_millis(10));
    /// assert_eq!(cfg.budget_mode().target(), Some(Duration::from_millis(10)));
    /// ```
    #[must_use]
    pub fn frame_target(mut self, target: Duration) -> Self {
        self.frame_target = Some(target);
        self
    }

    /// These settings for the scheduler of a kernel booted in `role`: a `KernelConfig` holds one
    /// without knowing the role, which `Kernel::boot` is given.
    pub(crate) fn for_kernel_role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// The phase [`FrameScheduler::bind`](crate::FrameScheduler::bind) attaches to (default Heartbeat).
    ///
    /// ```
    /// use tickstep_kernel::{FramePhase, SchedulerConfig};
    /// assert_eq!(SchedulerConfig::server().phase(FramePhase::PreSimulation).phase_of(), FramePhase::PreSimulation);
    /// ```
    #[must_use]
    pub fn phase(mut self, phase: FramePhase) -> Self {
        self.phase = phase;
        self
    }

    /// Turns the hot-task profiler on (default) or off. Off means no clock read per task beyond the
    /// budget check, no origin lookups and no scan of the deferred backlog.
    ///
    /// ```
    /// use tickstep_kernel::SchedulerConfig;
    /// assert!(!SchedulerConfig::server().profile_tasks(false).profiles_tasks());
    /// ```
    #[must_use]
    pub fn profile_tasks(mut self, on: bool) -> Self {
        self.profile_tasks = on;
        self
    }

    /// Spreads the first deadline of each positive-interval `every()` by the golden-ratio offset.
    ///
    /// ```
    /// use tickstep_kernel::SchedulerConfig;
    /// assert!(SchedulerConfig::server().stagger_recurring(true).staggers_recurring());
    /// ```
    #[must_use]
    pub fn stagger_recurring(mut self, on: bool) -> Self {
        self.stagger_recurring = on;
        self
    }

    /// The role whose defaults this started from.
    ///
    /// ```
    /// use tickstep_kernel::{Role, SchedulerConfig};
    /// assert_eq!(SchedulerConfig::server().role(), Role::Server);
    /// ```
    pub fn role(&self) -> Role {
        self.role
    }

    /// The configured phase.
    ///
    /// ```
    /// use tickstep_kernel::{FramePhase, SchedulerConfig};
    /// assert_eq!(SchedulerConfig::client().phase_of(), FramePhase::Heartbeat);
    /// ```
    pub fn phase_of(&self) -> FramePhase {
        self.phase
    }

    /// Whether the profiler starts on.
    ///
    /// ```
    /// assert!(tickstep_kernel::SchedulerConfig::server().profiles_tasks());
    /// ```
    pub fn profiles_tasks(&self) -> bool {
        self.profile_tasks
    }

    /// Whether recurring jobs are staggered.
    ///
    /// ```
    /// assert!(!tickstep_kernel::SchedulerConfig::server().staggers_recurring());
    /// ```
    pub fn staggers_recurring(&self) -> bool {
        self.stagger_recurring
    }

    /// The budget rule these settings select (explicit target > explicit budget > role default).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tickstep_kernel::{BudgetMode, SchedulerConfig};
    /// let cfg = SchedulerConfig::server()
    ///     .frame_target(Duration::from_millis(20))
    ///     .budget(Duration::from_millis(2));
    /// assert_eq!(cfg.budget_mode(), BudgetMode::FrameAware {
    ///     target: Duration::from_millis(20), floor: Duration::from_millis(2) });
    /// ```
    pub fn budget_mode(&self) -> BudgetMode {
        match (self.frame_target, self.budget, self.role) {
            (Some(target), floor, _) => BudgetMode::FrameAware {
                target,
                floor: floor.unwrap_or(DEFAULT_BUDGET),
            },
            (None, Some(budget), _) => BudgetMode::Fixed(budget),
            (None, None, Role::Server) => BudgetMode::FrameAware {
                target: DEFAULT_FRAME_TARGET,
                floor: DEFAULT_BUDGET,
            },
            (None, None, Role::Client) => BudgetMode::Fixed(DEFAULT_BUDGET),
        }
    }
}

impl Default for SchedulerConfig {
    /// The server defaults.
    fn default() -> Self {
        Self::server()
    }
}
